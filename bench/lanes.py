#!/usr/bin/env python3
"""Lanes run at once: three lanes of an agent that takes 2 seconds, -j 3.

A small repository with one check; each lane's agent sleeps 2 s and then
writes the fix, so each lane's first attempt passes. With `--choose all`
every lane runs to its end (first-wins would stop the others as soon as
one passes, which would flatter the figure). The same three lanes with
-j 1 run one after another: the baseline, in the same run, sides
alternating.

    cargo build --release && python3 bench/lanes.py [--runs 3]

Prints the wall time of each side, median of the runs; target for -j 3:
under 4 s (issue 27).
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
from scope_diff import ENV  # noqa: E402
from worktree import BIN  # noqa: E402


def repo(tmp, name):
    r = os.path.join(tmp, name)
    os.makedirs(os.path.join(r, "src"))
    with open(os.path.join(r, "src/app.txt"), "w") as f:
        f.write("value = 1\n")
    with open(os.path.join(r, "retry-run.toml"), "w") as f:
        f.write('max_attempts = 3\n[retry]\nbaseline = false\n'
                '[[check]]\nname = "value"\nkind = "test"\nrun = "grep -q \'value = 2\' src/app.txt"\n')
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"], ["git", "commit", "-qm", "base"]):
        subprocess.run(cmd, cwd=r, env=ENV, check=True)
    return r


def timed(tmp, name, jobs):
    r = repo(tmp, name)
    agent = ["sh", "-c", "sleep 2; echo 'value = 2' > src/app.txt"]
    t = time.perf_counter()
    out = subprocess.run([BIN, "run", "--quiet", "--task", "Make the value 2", "--lanes", "3", "--choose", "all",
                          "-j", str(jobs), "--"] + agent, cwd=r, env=ENV, capture_output=True, text=True)
    took = time.perf_counter() - t
    assert out.returncode == 0, out.stderr[-2000:]
    shutil.rmtree(r)
    return took


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    at_once, one_by_one = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs):
            sides = [(at_once, 3), (one_by_one, 1)]
            for out, jobs in (sides if i % 2 == 0 else sides[::-1]):
                out.append(timed(tmp, f"r{i}-{jobs}", jobs))
    a, b = statistics.median(at_once), statistics.median(one_by_one)
    print(f"three lanes, agent 2 s each, --choose all; medians of {args.runs} runs, sides alternating")
    print(f"  -j 3 {a:6.2f} s (target under 4 s)   -j 1 {b:6.2f} s   ratio {a / b:.2f}")


if __name__ == "__main__":
    main()
