#!/usr/bin/env python3
"""What ended tasks leave on disk, and the start of an attempt with a large
shared dependency directory (issue: worktrees that cost little).

1. `--tasks` (default 100) one-attempt tasks on a 20,000-file repository
   (the generator of bench/scope_diff.py), each agent appending a line to
   one file, no checks, under the default `[worktree] keep = "none"`: the
   growth of `.git` (records, refs, the attempts' objects) against what the
   same tasks would keep with `keep = "all"` (the worktree of one task,
   measured, times the number of tasks). Target: under 50 MB of growth.

2. A small repository whose checkout holds a `node_modules` of `--mb`
   (default 500) MB in 40,000 files, shared with `[worktree] share`: the
   wall time of the first attempt of a task (worktree created, agent
   `true`... the whole `retry-run run`) with the directory mounted read-only
   (`sandbox.mode = "namespaces"`) and copied (`"landlock"`), against
   `cp -a node_modules` alone and against the same run without `share`.
   Target: the attempt's start with it shared under 1 s.

    cargo build --release && python3 bench/worktree_disk.py [--tasks 100] [--mb 500] [--runs 3]
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
from scope_diff import ENV, build, git  # noqa: E402
from worktree import BIN  # noqa: E402


def du(path):
    out = subprocess.run(["du", "-sb", path], capture_output=True, text=True, check=True).stdout
    return int(out.split()[0])


def mib(n):
    return f"{n / (1 << 20):7.1f} MiB"


# No automatic gc: the growth measured is what the tasks wrote.
NOGC = dict(ENV, GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0="gc.auto", GIT_CONFIG_VALUE_0="0")


def run(repo, task, agent, ok=(0,)):
    t = time.perf_counter()
    r = subprocess.run([BIN, "run", "--quiet", "--task", task, "--max-attempts", "1", "--", "sh", "-c", agent],
                       cwd=repo, env=NOGC, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert r.returncode in ok, (task, r.returncode, r.stderr[-2000:])
    return time.perf_counter() - t


def disk(tmp, tasks):
    repo, _ = build(tmp, 20000, 10)
    # The commit of 20,000 files starts git's automatic gc in the
    # background: wait for it (a gc of our own fails while it runs), so that
    # the growth measured is the tasks' alone.
    while subprocess.run(["git", "gc", "-q"], cwd=repo, env=ENV, capture_output=True).returncode != 0:
        time.sleep(1)
    before = du(os.path.join(repo, ".git"))
    started = time.perf_counter()
    for i in range(tasks):
        run(repo, f"t{i}", f"echo change {i} >> d{i % 20}/s0/t0/f{i % 20}.txt")
    took = time.perf_counter() - started
    after = du(os.path.join(repo, ".git"))
    left = os.listdir(os.path.join(repo, ".git/retry-run/worktrees")) if os.path.isdir(
        os.path.join(repo, ".git/retry-run/worktrees")) else []
    # What one kept worktree takes: the same task with keep = "all".
    with open(os.path.join(repo, "retry-run.toml"), "w") as f:
        f.write('[worktree]\nkeep = "all"\n')
    run(repo, "kept", "echo kept >> d0/s0/t0/f0.txt")
    one = du(os.path.join(repo, ".git/retry-run/worktrees/kept"))
    print(f"{tasks} one-attempt tasks on 20,000 files ({took:.0f} s in all), keep = \"none\":")
    print(f"  .git grew {mib(after - before)} (target under 50 MiB); worktrees left: {len(left)}")
    print(f"  with keep = \"all\" they would keep {tasks} x {mib(one).strip()} = {mib(tasks * one).strip()}")


def node_modules(root, mb, files=40000):
    size = mb * 1_000_000 // files
    chunk = os.urandom(size)
    for i in range(files):
        d = os.path.join(root, "node_modules", f"pkg{i // 100}", "lib")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, f"m{i % 100}.js"), "wb") as f:
            f.write(chunk[: size - (i % 7)])


def shared(tmp, mb, runs):
    repo = os.path.join(tmp, "small")
    os.makedirs(repo)
    git(repo, "init", "-q", "-b", "main")
    for i in range(200):
        with open(os.path.join(repo, f"f{i}.js"), "w") as f:
            f.write(f"module.exports = {i};\n")
    with open(os.path.join(repo, ".gitignore"), "w") as f:
        f.write("node_modules/\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    node_modules(repo, mb)
    total = du(os.path.join(repo, "node_modules"))

    def toml(mode, share):
        with open(os.path.join(repo, "retry-run.toml"), "w") as f:
            f.write(f'[sandbox]\nmode = "{mode}"\n[worktree]\n' + ('share = ["node_modules"]\n' if share else ""))

    rows = {}
    for k in range(runs):
        sides = [("mounted (namespaces)", "namespaces", True), ("copied (landlock)", "landlock", True),
                 ("not shared (namespaces)", "namespaces", False)]
        for name, mode, share in (sides if k % 2 == 0 else sides[::-1]):
            toml(mode, share)
            # A new task each time: its worktree is created, the directory
            # shared into it for the first time.
            t = run(repo, f"{mode}-{share}-{k}", "ls node_modules > /dev/null 2>&1; echo x >> f0.js")
            rows.setdefault(name, []).append(t)
        dst = os.path.join(tmp, "cp-target")
        t = time.perf_counter()
        subprocess.run(["cp", "-a", os.path.join(repo, "node_modules"), dst], check=True)
        subprocess.run(["sync"], check=True)
        rows.setdefault("cp -a node_modules (and sync)", []).append(time.perf_counter() - t)
        shutil.rmtree(dst)
    print(f"\nthe first attempt of a task with a {mib(total).strip()} node_modules in 40,000 files, "
          f"whole `retry-run run` (agent edits one file), medians of {runs}:")
    for name, ts in rows.items():
        print(f"  {name:32s} {statistics.median(ts):6.2f} s")
    base = statistics.median(rows["not shared (namespaces)"])
    mounted = statistics.median(rows["mounted (namespaces)"])
    print(f"  the share's own cost when mounted: {mounted - base:+.2f} s (target: the attempt's start under 1 s)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=100)
    ap.add_argument("--mb", type=int, default=500)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        disk(tmp, args.tasks)
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        shared(tmp, args.mb, args.runs)


if __name__ == "__main__":
    main()
