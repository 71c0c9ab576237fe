#!/usr/bin/env python3
"""`retry-run worktree reset` where the loop runs it: right after an agent's
writes (1,000 files appended to, 50 deleted, 100 untracked files, an
ignored build tree of 600 files), with no `sync` in between, and in a quiet
state (the same writes, then `sync` and a pause), against
`git reset --hard B && git clean -fdxq` on a worktree of the same
repository, same run. Which side goes first alternates; medians.

    cargo build --release && python3 bench/reset_after_agent.py [--files 20000] [--runs 9]

Target: at most 1.0x in both states.
"""
import argparse
import os
import pathlib
import random
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from scope_diff import ENV, build, git  # noqa: E402

BIN = str(pathlib.Path(__file__).resolve().parent.parent / "target/release/retry-run")


def agent_writes(wt, files, seed, k=1):
    """The agent's writes; `k` scales every count (bench/scale.py)."""
    rng = random.Random(seed)
    chosen = rng.sample(files, 1050 * k)
    for p in chosen[:1000 * k]:
        with open(os.path.join(wt, p), "a") as f:
            f.write(f"agent {seed}\n" * 3)
    for p in chosen[1000 * k:]:
        os.remove(os.path.join(wt, p))
    for j in range(100 * k):
        with open(os.path.join(wt, f"notes_{j}.txt"), "w") as f:
            f.write(f"untracked {seed} {j}\n")
    for j in range(600 * k):
        d = os.path.join(wt, "build", f"obj{j % (12 * k)}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"unit{j}.o"), "wb") as f:
            f.write(os.urandom(2048))


def timed(cmd, cwd, shell=False):
    t = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=ENV, check=True, shell=shell, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=9)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo, _ = build(tmp, a.files, 1000)
        with open(os.path.join(repo, ".gitignore"), "w") as f:
            f.write("build/\n")
        git(repo, "add", ".gitignore")
        git(repo, "commit", "-q", "-m", "ignore build/")
        files = subprocess.run(["git", "ls-files"], cwd=repo, env=ENV, check=True, capture_output=True,
                               text=True).stdout.split()
        files = [f for f in files if f != ".gitignore"]
        base = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, env=ENV, check=True, capture_output=True,
                              text=True).stdout.strip()
        subprocess.run([BIN, "worktree", "create", "bench", "--base", base], cwd=repo, env=ENV, check=True,
                       stdout=subprocess.DEVNULL)
        ours_wt = subprocess.run([BIN, "worktree", "path", "bench"], cwd=repo, env=ENV, capture_output=True,
                                 text=True).stdout.strip()
        git_wt = os.path.join(tmp, "gitwt")
        git(repo, "worktree", "add", "-q", "--detach", git_wt, base)
        ours = lambda: timed([BIN, "worktree", "reset", "bench", "--base", base], repo)  # noqa: E731
        theirs = lambda: timed(f"git reset -q --hard {base} && git clean -fdxq", git_wt, shell=True)  # noqa: E731
        results = {}
        for state in ("busy", "quiet"):
            o, g = [], []
            for r in range(a.runs):
                sides = [("ours", ours_wt, ours), ("git", git_wt, theirs)]
                if r % 2:
                    sides.reverse()
                for name, wt, reset in sides:
                    agent_writes(wt, files, r)
                    if state == "quiet":
                        os.sync()
                        time.sleep(1)
                    (o if name == "ours" else g).append(reset())
                for wt in (ours_wt, git_wt):
                    left = subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=wt, env=ENV,
                                          capture_output=True, text=True).stdout
                    assert left == "", f"{wt}: reset left {left[:300]}"
            results[state] = (statistics.median(o), statistics.median(g))
        print(f"{a.files} files; medians of {a.runs} runs, sides alternating; ratio = retry-run / git")
        for state, (mo, mg) in results.items():
            print(f"reset, {state:<5} disk: retry-run {mo * 1000:7.1f} ms   git {mg * 1000:7.1f} ms   "
                  f"ratio {mo / mg:5.2f}x (target <= 1.0)")


if __name__ == "__main__":
    main()
