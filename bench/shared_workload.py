#!/usr/bin/env python3
"""scope, diff, reset and `--version` against git, as whole processes, on a
repository of the shape users have (issue 25):

- 20,000 Python files of 30 functions each, in 400 directories, committed
  and packed (`git gc`): the base, tag B;
- a head, tag H, committed on top and left loose: 700 files modified, 100
  added, 100 deleted, 100 renamed;
- a linked worktree at B holding the same changes uncommitted, with 100
  untracked files (the working-tree rows);
- for the reset, a retry-run worktree and a git worktree at B, each given
  the same agent writes before every reset (1,000 files appended to, 50
  deleted, 100 untracked files, an ignored 600-file build tree).

Each row runs retry-run (A) and git (B) in turn, A B A B ... with the first
side alternating, takes the ratio A/B pair by pair, and prints the median
ratio and both sides' median times.

    cargo build --release && python3 bench/shared_workload.py [--pairs 30] [--root DIR]

The repository is built once under --root (default /var/tmp/rr-shared-20k)
and reused. Target: every ratio at most 1.0.
"""
import argparse
import os
import pathlib
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from reset_after_agent import agent_writes  # noqa: E402
from scope_diff import ENV, git  # noqa: E402

BIN = str(pathlib.Path(os.environ.get("CARGO_TARGET_DIR", pathlib.Path(__file__).resolve().parent.parent / "target"))
          / "release/retry-run")
# Fixed dates, and no automatic gc: the base is packed once, by hand.
FIXED = dict(ENV, GIT_AUTHOR_DATE="2026-01-01T00:00:00Z", GIT_COMMITTER_DATE="2026-01-01T00:00:00Z",
             GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0="gc.auto", GIT_CONFIG_VALUE_0="0")


def g(repo, *args, **kw):
    subprocess.run(["git", *args], cwd=repo, env=FIXED, check=True, stdout=subprocess.DEVNULL, **kw)


def out(repo, *args):
    return subprocess.run(["git", *args], cwd=repo, env=FIXED, check=True, capture_output=True,
                          text=True).stdout


def generate(root, files=20000):
    """The base, the head and the dirty worktree; once. `files` scales the
    shape (bench/scale.py): 50 files a directory, 20 directories under each
    `src/mNN`, and every change set in proportion (20,000 files: 690
    modified, 100 deleted, 100 renamed, 100 added, 100 untracked)."""
    done = os.path.join(root, ".done")
    if os.path.exists(done):
        return
    k = files // 20000
    subprocess.run(["rm", "-rf", root], check=True)
    repo = os.path.join(root, "repo")
    os.makedirs(repo)
    g(repo, "init", "-q", "-b", "main")
    n = 0
    for a in range(20 * k):
        for b in range(20):
            d = os.path.join(repo, f"src/m{a:02d}/s{b:02d}")
            os.makedirs(d)
            for c in range(50):
                with open(os.path.join(d, f"f{c:02d}.py"), "w") as f:
                    f.write(f"# file {n}\n")
                    for i in range(30):
                        f.write(f"def fn_{n}_{i}(x):\n    return x + {i}\n\n")
                n += 1
    g(repo, "add", "-A")
    g(repo, "commit", "-qm", "base")
    g(repo, "tag", "B")
    g(repo, "gc", "-q")
    files = sorted(out(repo, "ls-files").split())
    modified = files[0:20000 * k:29][:700 * k]
    chosen = set(modified)
    rest = [f for f in files if f not in chosen]
    deleted = rest[5:5000 * k:49][:100 * k]
    gone = set(deleted)
    renamed = [f for f in rest[7:9000 * k:83] if f not in gone][:100 * k]
    for f in modified:
        with open(os.path.join(repo, f), "a") as h:
            h.write("def added(x):\n    return x * 2\n")
    for f in deleted:
        os.remove(os.path.join(repo, f))
    os.makedirs(os.path.join(repo, "tests/moved"))
    for i, f in enumerate(renamed):
        os.rename(os.path.join(repo, f), os.path.join(repo, f"tests/moved/r{i:03d}_{os.path.basename(f)}"))
    os.makedirs(os.path.join(repo, "docs/new"))
    for i in range(100 * k):
        with open(os.path.join(repo, f"docs/new/n{i:03d}.md"), "w") as h:
            h.write(f"new {i}\n")
    g(repo, "add", "-A")
    g(repo, "commit", "-qm", "head")
    g(repo, "tag", "H")
    dirty = os.path.join(root, "dirty")
    g(repo, "worktree", "add", "-q", "--detach", dirty, "B")
    patch = subprocess.run(["git", "diff", "B", "H", "--binary"], cwd=repo, env=FIXED, check=True,
                           capture_output=True).stdout
    subprocess.run(["git", "apply"], cwd=dirty, env=FIXED, input=patch, check=True)
    os.makedirs(os.path.join(dirty, "untracked"))
    for i in range(1, 100 * k + 1):
        with open(os.path.join(dirty, f"untracked/u{i}.txt"), "w") as h:
            h.write(f"u{i}\n")
    with open(done, "w"):
        pass


def rows(exe, repo, dirty):
    """The whole-process rows: (name, directory, retry-run's command, git's)."""
    return [
        ("scope --head", repo, [exe, "scope", "--base", "B", "--head", "H", "--format", "json", "--allow", "src/**"],
         ["git", "diff", "--name-status", "-M", "B...H"]),
        ("diff --head", repo, [exe, "diff", "--base", "B", "--head", "H", "--format", "json"],
         ["git", "diff", "--numstat", "-M", "B...H"]),
        ("scope (working tree)", dirty, [exe, "scope", "--base", "B", "--format", "json"],
         ["sh", "-c", "git status --porcelain && git diff --name-status -M B"]),
        ("diff (working tree)", dirty, [exe, "diff", "--base", "B", "--format", "json"],
         ["sh", "-c", "git status --porcelain && git diff --numstat -M B"]),
        ("--version", repo, [exe, "--version"], ["git", "--version"]),
    ]


def run(cmd, cwd):
    t = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=ENV, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def paired(pairs, ours, theirs, before=None):
    """Medians of A, of B and of the ratio A/B, pair by pair."""
    a, b, r = [], [], []
    for i in range(pairs + 1):
        order = [("a", ours), ("b", theirs)]
        if i % 2:
            order.reverse()
        got = {}
        for side, fn in order:
            if before:
                before(side, i)
            got[side] = fn()
        if i == 0:
            continue  # the warm-up pair
        a.append(got["a"])
        b.append(got["b"])
        r.append(got["a"] / got["b"])
    return statistics.median(a), statistics.median(b), statistics.median(r)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=30)
    ap.add_argument("--reset-pairs", type=int, default=9)
    ap.add_argument("--root", default="/var/tmp/rr-shared-20k")
    ap.add_argument("--only", help="run the rows whose name holds this")
    a = ap.parse_args()
    generate(a.root)
    repo, dirty = os.path.join(a.root, "repo"), os.path.join(a.root, "dirty")
    rows_ = rows(BIN, repo, dirty)
    print(f"{a.pairs} pairs a row after one warm-up pair, sides alternating; ratio = retry-run / git, "
          f"median of the pairs' ratios")
    for name, cwd, ours, theirs in rows_:
        if a.only and a.only not in name:
            continue
        ma, mb, ratio = paired(a.pairs, lambda: run(ours, cwd), lambda: run(theirs, cwd))
        print(f"{name:<22} retry-run {ma * 1000:7.1f} ms   git {mb * 1000:7.1f} ms   ratio {ratio:5.2f}x")
    if a.only and a.only not in "reset":
        return
    # The reset: each side's worktree gets the agent's writes, then resets.
    ours_wt = os.path.join(a.root, "ours-wt")
    git_wt = os.path.join(a.root, "git-wt")
    if not os.path.isdir(git_wt):
        with open(os.path.join(repo, ".git/info/exclude"), "a") as f:
            f.write("build/\n")
        git(repo, "worktree", "add", "-q", "--detach", git_wt, "B")
        subprocess.run([BIN, "worktree", "create", "shared-bench", "--base", "B"], cwd=repo, env=ENV, check=True,
                       stdout=subprocess.DEVNULL)
        path = subprocess.run([BIN, "worktree", "path", "shared-bench"], cwd=repo, env=ENV, capture_output=True,
                              text=True, check=True).stdout.strip()
        os.symlink(path, ours_wt)
    files = [f for f in out(repo, "ls-tree", "-r", "--name-only", "B").split()]
    wts = {"a": ours_wt, "b": git_wt}
    ma, mb, ratio = paired(
        a.reset_pairs,
        lambda: run([BIN, "worktree", "reset", "shared-bench", "--base", "B"], repo),
        lambda: run(["sh", "-c", "git reset -q --hard B && git clean -fdxq"], git_wt),
        before=lambda side, i: agent_writes(wts[side], files, i),
    )
    for wt in wts.values():
        left = subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=wt, env=ENV, capture_output=True,
                              text=True).stdout
        assert left == "", f"{wt}: the reset left {left[:300]}"
    print(f"{'reset after writes':<22} retry-run {ma * 1000:7.1f} ms   git {mb * 1000:7.1f} ms   ratio {ratio:5.2f}x "
          f"({a.reset_pairs} pairs)")


if __name__ == "__main__":
    main()
