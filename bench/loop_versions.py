#!/usr/bin/env python3
"""The attempt loop of two retry-run builds, side by side, same run, medians.

For a change that should not move the loop's cost (a restructuring): on a
20,000-file repository (the generator of bench/scope_diff.py) with one
configured check (`true`) and a scope, each build runs whole attempts of
`retry-run run --again` (lock, log, worktree reset, the check on the base,
context, prompt and manifest, the confined agent, snapshot, scope, the check,
events) with an agent that appends a function to 10 files. The two builds
alternate, each on its own task, and which goes first alternates too.

    cargo build --release
    git worktree add /tmp/rr-before <commit> && (cd /tmp/rr-before && cargo build --release)
    python3 bench/loop_versions.py /tmp/rr-before/target/release/retry-run [--runs 11]

Prints each build's median and the ratio this build / the other.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from scope_diff import ENV, build, git  # noqa: E402
from worktree import BIN  # noqa: E402

AGENT = "for f in $(ls d0/s0/t0 | head -10); do printf 'def extra():\\n    return 1\\n' >> d0/s0/t0/$f; done"
CONFIG = '[scope]\nallow = ["d*/**"]\n\n[[check]]\nname = "lint"\nrun = "true"\nkind = "lint"\n'


def attempt(binary, task, repo):
    cmd = [binary, "run", "--quiet", "--again", "--id", task, "--task", "Add a helper", "--", "sh", "-c", AGENT]
    t = time.perf_counter()
    r = subprocess.run(cmd, cwd=repo, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert r.returncode == 0, (cmd, r.returncode, r.stderr[-2000:])
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("other", help="the other build's retry-run binary")
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=11)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo, _ = build(tmp, args.files, 1000)
        with open(os.path.join(repo, "retry-run.toml"), "w") as f:
            f.write(CONFIG)
        git(repo, "add", "retry-run.toml")
        git(repo, "commit", "-qm", "config")
        sides = {"this": (BIN, "this"), "other": (args.other, "other")}
        times = {"this": [], "other": []}
        for name, (binary, task) in sides.items():
            attempt(binary, task, repo)  # creates the task's worktree
        for i in range(args.runs):
            order = ["this", "other"] if i % 2 == 0 else ["other", "this"]
            for name in order:
                times[name].append(attempt(*sides[name], repo))
        mine, theirs = statistics.median(times["this"]), statistics.median(times["other"])
        print(f"{args.files} files, one check, agent appends to 10 files; medians of {args.runs} attempts")
        print(f"  this build {mine:6.3f} s   other build {theirs:6.3f} s   ratio {mine / theirs:.2f}")


if __name__ == "__main__":
    main()
