#!/usr/bin/env python3
"""Incremental build after a one-line change, before and after the sandbox
became a crate of its own (issue 61): the same edit made in two trees, each
rebuilt with `cargo build`, sides alternating, medians.

    python3 bench/incremental_build.py BEFORE_TREE AFTER_TREE [--profile quick] [--runs 2]

Each tree is a checkout with its own target directory, built once first.
The edits: a comment line added to `src/run/task_run.rs` (the loop) and one
added to the sandbox's launch (`src/sandbox/exec.rs` before the crate,
`crates/sandbox/src/exec.rs` in its first step, `crates/sandbox/src/launch/mod.rs`
once regrouped); each timed rebuild is followed by the
edit undone and an untimed rebuild, so every timed build starts from the
same state. Printed: the median seconds per tree and edit, and which
packages each rebuild compiled.
"""
import argparse
import os
import statistics
import subprocess
import time


def sandbox_exec(tree):
    for path in ["crates/sandbox/src/launch/mod.rs", "crates/sandbox/src/exec.rs", "src/sandbox/exec.rs"]:
        if os.path.exists(os.path.join(tree, path)):
            return os.path.join(tree, path)
    raise SystemExit(f"no sandbox launch in {tree}")


def build(tree, profile):
    t = time.perf_counter()
    p = subprocess.run(["cargo", "build", "--profile", profile], cwd=tree, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"cargo build failed in {tree}:\n{p.stderr[-2000:]}")
    compiled = sorted({l.split()[1] for l in p.stderr.splitlines() if l.strip().startswith("Compiling")})
    return time.perf_counter() - t, compiled


def timed_edit(tree, path, profile):
    with open(path) as f:
        original = f.read()
    try:
        with open(path, "a") as f:
            f.write("\n// a one-line change\n")
        seconds, compiled = build(tree, profile)
    finally:
        with open(path, "w") as f:
            f.write(original)
    build(tree, profile)
    return seconds, compiled


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--profile", default="quick")
    ap.add_argument("--runs", type=int, default=2)
    args = ap.parse_args()
    trees = {"before": args.before, "after": args.after}
    for tree in trees.values():
        build(tree, args.profile)
    edits = {"src/run/task_run.rs": lambda t: os.path.join(t, "src/run/task_run.rs"), "the sandbox's launch": sandbox_exec}
    for edit, path_of in edits.items():
        times = {name: [] for name in trees}
        compiled = {}
        for r in range(args.runs):
            order = list(trees.items()) if r % 2 == 0 else list(trees.items())[::-1]
            for name, tree in order:
                s, c = timed_edit(tree, path_of(tree), args.profile)
                times[name].append(s)
                compiled[name] = c
        for name in trees:
            print(f"{edit:24} {name:6} {statistics.median(times[name]):7.1f} s  compiled: {', '.join(compiled[name])}")


if __name__ == "__main__":
    main()
