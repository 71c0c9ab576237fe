#!/usr/bin/env python3
"""retry-run's own cost per attempt, same run, medians.

On a 20,000-file repository (the generator of bench/scope_diff.py), with
agent `true` and no checks, one attempt of `retry-run run` (lock, log,
worktree reset, context, prompt and manifest, agent, snapshot, diff, scope,
events) against the equivalent git commands in a linked worktree:
`git reset --hard && git clean -fdxq`, `git add -A && git write-tree` on a
scratch index, and `git diff --numstat`.

    cargo build --release && python3 bench/run_overhead.py [--files 20000] [--runs 15]

Prints the ratio retry-run / git (target: at most 1.0, issue 25).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from scope_diff import ENV, build  # noqa: E402
from worktree import BIN  # noqa: E402


def timed(cmd, cwd, shell=False, env=ENV, ok=(0,)):
    t = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, env=env, shell=shell, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert r.returncode in ok, (cmd, r.returncode, r.stderr[-2000:])
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo, _ = build(tmp, args.files, 1000)
        # An attempt that resets its worktree (a task's attempt 2 and later):
        # the task's worktree is kept between these one-attempt runs, which
        # would otherwise each create it anew ([worktree] keep = "none").
        with open(os.path.join(repo, "retry-run.toml"), "w") as f:
            f.write('[worktree]\nkeep = "all"\n')
        gitwt = os.path.join(tmp, "gitwt")
        subprocess.run(["git", "worktree", "add", "-q", "--detach", gitwt, "HEAD"], cwd=repo, env=ENV, check=True)
        scratch = os.path.join(tmp, "scratch-index")
        run = [BIN, "run", "--quiet", "--task", "bench", "--max-attempts", "1"]
        # The first run creates the worktree; attempts after it reset it.
        timed(run + ["--", "true"], repo, ok=(1,))
        ours, theirs = [], []
        def ours_once():
            ours.append(timed(run + ["--again", "--", "true"], repo, ok=(1,)))

        def theirs_once():
            shutil.copyfile(os.path.join(repo, ".git/worktrees/gitwt/index"), scratch)
            env = dict(ENV, GIT_INDEX_FILE=scratch)
            theirs.append(timed("git reset -q --hard && git clean -fdxq && git add -A && git write-tree"
                                " && git diff --numstat HEAD", gitwt, shell=True, env=env))

        # A and B alternate which runs first, pair by pair.
        for i in range(args.runs):
            for side in ((ours_once, theirs_once) if i % 2 == 0 else (theirs_once, ours_once)):
                side()
        mo, mt = statistics.median(ours), statistics.median(theirs)
        paired = statistics.median(a / b for a, b in zip(ours, theirs))
        print(f"{args.files} files, agent `true`, no checks; medians of {args.runs} attempts, sides alternating")
        print(f"  retry-run attempt {mo:6.3f} s   git commands {mt:6.3f} s   ratio {mo / mt:.2f}"
              f"   (median of paired ratios {paired:.2f})")


if __name__ == "__main__":
    main()
