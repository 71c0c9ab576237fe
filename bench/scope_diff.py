#!/usr/bin/env python3
"""Benchmark `retry-run scope` and `retry-run diff` against git, same run.

Builds a repository of N files (default 20,000) in nested directories,
changes 1,000 of them (modify, add, delete, rename), and times, as medians
of several runs, with peak memory (max RSS) of each command:

  commit mode:   retry-run scope --base B --head H --format json
                   vs  git diff --name-status -M B...H
                 retry-run diff  --base B --head H --format json
                   vs  git diff --numstat -M B...H
  worktree mode: retry-run scope / diff (the same 1,000 changes uncommitted)
                   vs  git status --porcelain  +  git diff --numstat

Prints each ratio retry-run / git (below 1.0: retry-run is faster).
Usage: bench/scope_diff.py [--files N] [--changes N] [--runs N] [--bin PATH]
"""

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ENV = dict(os.environ, GIT_CONFIG_GLOBAL="/dev/null", GIT_CONFIG_NOSYSTEM="1",
           GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@b", GIT_COMMITTER_NAME="b",
           GIT_COMMITTER_EMAIL="b@b", LC_ALL="C")


def git(repo, *args):
    subprocess.run(["git", *args], cwd=repo, env=ENV, check=True,
                   stdout=subprocess.DEVNULL)


def content(rng, i, lines=30):
    return "".join(f"line {j} of file {i}: {rng.randrange(10**9)}\n" for j in range(lines))


def build(root, n_files, n_changes, seed=7):
    rng = random.Random(seed)
    repo = os.path.join(root, "repo")
    os.makedirs(repo)
    git(repo, "init", "-q", "-b", "main")
    paths = []
    for i in range(n_files):
        # nested: d0..d19 / s0..s19 / t0..t4 / f<i>.txt  (~50 files a leaf dir)
        p = f"d{i % 20}/s{(i // 20) % 20}/t{(i // 400) % 5}/f{i}.txt"
        full = os.path.join(repo, p)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(content(rng, i))
        paths.append(p)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    chosen = rng.sample(paths, n_changes)
    k = n_changes // 10
    plan = {"modify": chosen[:6 * k], "delete": chosen[6 * k:7 * k],
            "rename": chosen[7 * k:8 * k], "add": [f"new/n{j % 7}/a{j}.txt" for j in range(n_changes - 8 * k)]}
    return repo, plan


def apply(repo, plan, seed=11):
    rng = random.Random(seed)
    for p in plan["modify"]:
        with open(os.path.join(repo, p), "a") as f:
            f.write(f"changed {rng.randrange(10**9)}\n")
    for p in plan["delete"]:
        os.remove(os.path.join(repo, p))
    for p in plan["rename"]:
        dst = os.path.join(repo, "moved", p)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        os.rename(os.path.join(repo, p), dst)
    for i, p in enumerate(plan["add"]):
        full = os.path.join(repo, p)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(content(rng, 10**6 + i, 20))


def timed(cmds, cwd):
    """Runs a list of commands in sequence; returns (seconds, max peak RSS in MB)."""
    t0 = time.perf_counter()
    peak = 0
    for cmd in cmds:
        proc = subprocess.Popen(cmd, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1):
            sys.exit(f"{cmd} failed with {code}: {proc.stderr.read().decode()}")
        peak = max(peak, usage.ru_maxrss / 1024)
    return time.perf_counter() - t0, peak


def compare(name, ours, theirs, cwd, runs):
    timed(ours, cwd), timed(theirs, cwd)  # warm the page cache
    o, t, mem = [], [], 0
    for _ in range(runs):  # interleaved, so drift hits both alike
        s, m = timed(ours, cwd)
        o.append(s)
        mem = max(mem, m)
        t.append(timed(theirs, cwd)[0])
    mo, mt = statistics.median(o), statistics.median(t)
    print(f"{name:<34} retry-run {mo*1000:8.1f} ms   git {mt*1000:8.1f} ms   ratio {mo/mt:5.2f}x   peak {mem:6.1f} MB")
    return mo / mt, mem


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--changes", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "retry-run"))
    a = ap.parse_args()
    rr = os.path.abspath(a.bin)
    if not os.access(rr, os.X_OK):
        sys.exit(f"{rr}: not built; run cargo build --release first")
    root = tempfile.mkdtemp(prefix="retry-run-bench-")
    try:
        print(f"building {a.files} files, {a.changes} changes in {root} ...", flush=True)
        if os.environ.get("KEEP"): print("keeping", root)
        repo, plan = build(root, a.files, a.changes)
        # Worktree copy: same base, changes left uncommitted.
        wt = os.path.join(root, "wt")
        subprocess.run(["git", "clone", "-q", repo, wt], env=ENV, check=True)
        # Commit mode: changes committed on a branch.
        git(repo, "checkout", "-q", "-b", "feature")
        apply(repo, plan)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "feature")
        apply(wt, plan)
        git(wt, "status", "--porcelain")  # refresh the index stat cache once, for both tools
        results = []
        print(f"medians of {a.runs} runs; ratio = retry-run / git\n")
        results.append(compare("scope --head (vs name-status -M)",
                               [[rr, "scope", "--base", "main", "--head", "feature", "--format", "json"]],
                               [["git", "diff", "--name-status", "-M", "main...feature"]], repo, a.runs))
        results.append(compare("diff --head (vs numstat -M)",
                               [[rr, "diff", "--base", "main", "--head", "feature", "--format", "json"]],
                               [["git", "diff", "--numstat", "-M", "main...feature"]], repo, a.runs))
        git_wt = [["git", "status", "--porcelain"], ["git", "diff", "--numstat"]]
        results.append(compare("scope worktree (vs status+numstat)",
                               [[rr, "scope", "--base", "main", "--format", "json"]], git_wt, wt, a.runs))
        results.append(compare("diff worktree (vs status+numstat)",
                               [[rr, "diff", "--base", "main", "--format", "json"]], git_wt, wt, a.runs))
        worst = max(r for r, _ in results)
        peak = max(m for _, m in results)
        print(f"\nworst ratio {worst:.2f}x (target <= 1.0x), peak memory {peak:.1f} MB (target < 100 MB)")
    finally:
        if not os.environ.get("KEEP"): shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
