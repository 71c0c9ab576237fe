#!/usr/bin/env python3
"""Task worktrees against git, same run, medians.

On a 20,000-file repository (the generator of bench/scope_diff.py):
  create:   retry-run worktree create        vs  git worktree add --detach P HEAD
            (also against git asked to write on two workers: checkout.workers=2)
  reset:    retry-run worktree reset         vs  git reset --hard B && git clean -fdxq
            after 1,000 modified files, 100 untracked files and an untracked tree
  snapshot: the snapshot of a task worktree  vs  git add -A && git write-tree on a
            scratch index (a copy of the worktree's index), same changes.
            Each side's changes have content of its own (same sizes), so each
            has to store its new objects: neither finds the other's already
            stored.
Which side goes first alternates by run, for every operation.
  snapshot again: the same state snapshotted a second time (a new ref; every
            object already stored) vs git add -A && git write-tree again on a
            fresh copy of the index: the cost of reading the working tree alone.

    cargo build --release --example snapshot && cargo build --release
    python3 bench/worktree.py [--files 20000] [--runs 5]

Prints each ratio retry-run / git (target: at most 1.0).
"""
import argparse
import os
import pathlib
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from scope_diff import ENV, build, git  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
BIN = str(ROOT / "target/release/retry-run")
SNAP = str(ROOT / "target/release/examples/snapshot")


def run(cmd, cwd, shell=False):
    t = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=ENV, check=True, shell=shell, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def mutate(wt, files, seed, side):
    """The same paths and sizes for both sides; `side` ("o" or "g") makes
    each side's content its own."""
    rng = random.Random(seed)
    for p in rng.sample(files, 1000):
        with open(os.path.join(wt, p), "a") as f:
            f.write(f"changed {side}{seed}\n")
    for j in range(100):
        with open(os.path.join(wt, f"untracked{j}.txt"), "w") as f:
            f.write(f"u {side}{seed} {j:03}\n")
    for j in range(200):
        d = os.path.join(wt, "scratch", f"a{j % 10}", f"b{j % 7}")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"f{j}.txt"), "w") as f:
            f.write(f"t {side}{seed} {j:03}\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        repo, _ = build(tmp, args.files, 1000)
        files = subprocess.run(["git", "ls-files"], cwd=repo, env=ENV, check=True, capture_output=True, text=True).stdout.split()
        base = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, env=ENV, check=True, capture_output=True, text=True).stdout.strip()
        gitwt = os.path.join(tmp, "gitwt")
        res = {"create": ([], []), "create vs git -c checkout.workers=2": ([], []), "reset": ([], []), "snapshot": ([], []),
               "snapshot again": ([], [])}
        for i in range(args.runs):
            # Which side goes first alternates by run, for every operation:
            # the disk's write-back of one side's files slows whatever runs next.
            def make_ours():
                return run([BIN, "worktree", "create", "bench", "--base", base], repo)

            def make_git():
                return run(["git", "worktree", "add", "-q", "--detach", gitwt, base], repo)

            if i % 2 == 0:
                made, made_git = make_ours(), make_git()
            else:
                made_git, made = make_git(), make_ours()
            res["create"][0].append(made)
            res["create"][1].append(made_git)
            # git can write in parallel too, when asked (checkout.workers).
            par = os.path.join(tmp, "gitwt-par")
            res["create vs git -c checkout.workers=2"][0].append(made)
            res["create vs git -c checkout.workers=2"][1].append(
                run(["git", "-c", "checkout.workers=2", "-c", "checkout.thresholdForParallelism=1", "worktree", "add",
                     "-q", "--detach", par, base], repo))
            run(["git", "worktree", "remove", "--force", par], repo)
            wt = subprocess.run([BIN, "worktree", "path", "bench"], cwd=repo, env=ENV, capture_output=True, text=True).stdout.strip()

            mutate(wt, files, i, "o")
            mutate(gitwt, files, i, "g")
            gitindex = os.path.join(repo, ".git/worktrees/gitwt/index")
            scratch = os.path.join(tmp, "scratch-index")

            def ours(n):
                return run([SNAP, repo, wt, base, f"refs/retry-run/bench/{i + 1}-{n}"], repo)

            def theirs():
                shutil.copyfile(gitindex, scratch)
                env = dict(ENV, GIT_INDEX_FILE=scratch)
                t = time.perf_counter()
                subprocess.run("git add -A && git write-tree", shell=True, cwd=gitwt, env=env, check=True,
                               stdout=subprocess.DEVNULL)
                return time.perf_counter() - t

            if i % 2 == 0:
                o, g = ours(1), theirs()
            else:
                g, o = theirs(), ours(1)
            res["snapshot"][0].append(o)
            res["snapshot"][1].append(g)
            res["snapshot again"][0].append(ours(2))
            res["snapshot again"][1].append(theirs())

            def reset_ours():
                return run([BIN, "worktree", "reset", "bench", "--base", base], repo)

            def reset_git():
                return run(f"git reset -q --hard {base} && git clean -fdxq", gitwt, shell=True)

            if i % 2 == 0:
                r_o, r_g = reset_ours(), reset_git()
            else:
                r_g, r_o = reset_git(), reset_ours()
            res["reset"][0].append(r_o)
            res["reset"][1].append(r_g)
            out = subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=wt, env=ENV, capture_output=True, text=True).stdout
            assert out == "", f"reset left: {out[:300]}"

            run([BIN, "worktree", "remove", "bench"], repo)
            run(["git", "worktree", "remove", "--force", gitwt], repo)
        print(f"{args.files} files; 1,000 modified, 100 untracked files and a 200-file untracked tree; medians of {args.runs} runs")
        for name, (o, t) in res.items():
            mo, mt = statistics.median(o), statistics.median(t)
            print(f"  {name:38} retry-run {mo:6.3f} s   git {mt:6.3f} s   ratio {mo / mt:.2f}")


if __name__ == "__main__":
    main()
