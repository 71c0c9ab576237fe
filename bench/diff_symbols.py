#!/usr/bin/env python3
"""`retry-run diff` and `scope` on the repository users have: 20,000 Python
files of about 30 functions each, 1,000 of them changed (700 modified,
100 added, 100 deleted, 100 renamed), against git in the same run. Which
side runs first alternates run by run; medians.

  diff --base B --head H --format json    vs  git diff -M -p B...H
  diff --base B --format json (worktree)  vs  git status --porcelain && git diff --numstat -M B
  scope --base B --head H                 vs  git diff --name-status -M B...H

Targets: diff at most 1.5x, scope at most 1.0x. `diff` keeps
each blob's scopes in ~/.cache/retry-run/scopes: the first (warm-up) run
fills it, so the medians are of runs that find every blob's scopes there;
the `--no-cache` row shows the cost of parsing every blob (a first sight).
Usage: cargo build --release && python3 bench/diff_symbols.py [--runs 9] [--files 20000]
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from scope_diff import ENV, git  # noqa: E402

BIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target", "release", "retry-run")


def module(rng, i, functions=30):
    """A Python module: a few imports, a class with methods, functions."""
    out = [f'"""Module {i}."""\nimport os\nimport json\n\nLIMIT = {rng.randrange(100)}\n\n\nclass Store{i}:\n']
    for m in range(5):
        out.append(f"    def method_{m}(self, key, value=None):\n"
                   f"        data = self.load(key)\n        if value is None:\n            return data.get({m})\n"
                   f"        data[{m}] = value * {rng.randrange(1000)}\n        return data\n\n")
    for f in range(functions - 5):
        out.append(f"\ndef compute_{f}(items, factor={rng.randrange(9) + 1}):\n"
                   f"    total = 0\n    for item in items:\n        if item > LIMIT:\n"
                   f"            total += item * factor\n        else:\n            total -= {rng.randrange(100)}\n"
                   f"    return total\n\n")
    return "".join(out)


def modify(text, rng):
    """Changes two function bodies, as an agent's fix does."""
    lines = text.split("\n")
    for _ in range(2):
        at = [n for n, l in enumerate(lines) if l.startswith("            total += ")]
        k = rng.choice(at)
        lines[k] = f"            total += item * factor + {rng.randrange(10**6)}"
    return "\n".join(lines)


def build(root, n_files, n_changes, seed=7):
    rng = random.Random(seed)
    repo = os.path.join(root, "repo")
    os.makedirs(repo)
    git(repo, "init", "-q", "-b", "main")
    paths = []
    for i in range(n_files):
        p = f"pkg{i % 20}/sub{(i // 20) % 20}/part{(i // 400) % 5}/mod_{i}.py"
        full = os.path.join(repo, p)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w") as f:
            f.write(module(rng, i))
        paths.append(p)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    chosen = rng.sample(paths, n_changes)
    k = n_changes // 10
    plan = {"modify": chosen[:7 * k], "delete": chosen[7 * k:8 * k], "rename": chosen[8 * k:9 * k],
            "add": [f"new/n{j % 7}/added_{j}.py" for j in range(n_changes - 9 * k)]}
    return repo, plan


def apply(repo, plan, seed=11):
    rng = random.Random(seed)
    for p in plan["modify"]:
        full = os.path.join(repo, p)
        with open(full) as f:
            text = f.read()
        with open(full, "w") as f:
            f.write(modify(text, rng))
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
            f.write(module(rng, 10**6 + i))


def timed(cmds, cwd):
    t0 = time.perf_counter()
    for cmd in cmds:
        p = subprocess.run(cmd, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if p.returncode not in (0, 1):
            sys.exit(f"{cmd} failed with {p.returncode}: {p.stderr.decode()}")
    return time.perf_counter() - t0


def compare(name, ours, theirs, cwd, runs, target):
    timed(ours, cwd), timed(theirs, cwd)  # warm the page cache
    o, t = [], []
    for r in range(runs):
        if r % 2 == 0:
            o.append(timed(ours, cwd))
            t.append(timed(theirs, cwd))
        else:
            t.append(timed(theirs, cwd))
            o.append(timed(ours, cwd))
    mo, mt = statistics.median(o), statistics.median(t)
    ratio = mo / mt
    print(f"{name:<44} retry-run {mo * 1000:7.1f} ms   git {mt * 1000:7.1f} ms   ratio {ratio:5.2f}x"
          f"   target <= {target}x {'ok' if ratio <= target else 'MISSED'}")
    return ratio


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--changes", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--bin", default=BIN)
    a = ap.parse_args()
    rr = os.path.abspath(a.bin)
    if not os.access(rr, os.X_OK):
        sys.exit(f"{rr}: not built; run cargo build --release first")
    root = tempfile.mkdtemp(prefix="retry-run-bench-")
    try:
        print(f"building {a.files} Python files (30 functions each), {a.changes} changes ...", flush=True)
        repo, plan = build(root, a.files, a.changes)
        wt = os.path.join(root, "wt")
        subprocess.run(["git", "clone", "-q", repo, wt], env=ENV, check=True)
        git(repo, "checkout", "-q", "-b", "feature")
        apply(repo, plan)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "feature")
        apply(wt, plan)
        git(wt, "status", "--porcelain")  # refresh the index's stat data once, for both
        print(f"medians of {a.runs} runs, sides alternating; ratio = retry-run / git\n")
        compare("diff --head --format json (vs diff -M -p)",
                [[rr, "diff", "--base", "main", "--head", "feature", "--format", "json"]],
                [["git", "diff", "-M", "-p", "main...feature"]], repo, a.runs, 1.5)
        compare("  the same, --no-cache (every blob parsed)",
                [[rr, "diff", "--base", "main", "--head", "feature", "--format", "json", "--no-cache"]],
                [["git", "diff", "-M", "-p", "main...feature"]], repo, a.runs, 1.5)
        compare("diff worktree --format json (vs status+numstat)",
                [[rr, "diff", "--base", "main", "--format", "json"]],
                [["git", "status", "--porcelain"], ["git", "diff", "--numstat", "-M", "main"]], wt, a.runs, 1.5)
        compare("scope --head (vs diff --name-status -M)",
                [[rr, "scope", "--base", "main", "--head", "feature"]],
                [["git", "diff", "--name-status", "-M", "main...feature"]], repo, a.runs, 1.0)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
