#!/usr/bin/env python3
"""`retry-run land` against `git rebase` + `git merge --ff-only` of the same
change, in the same run (issue 41).

The workload is the shared 20,000-file repository (../shared/bench/gen_repo.sh,
tag B: 20,000 Python files in 400 directories). A seed is made once from it:
a clone at B on `main` with a retry-run.toml without checks, a task run to
its success by a scripted agent that changes one file, then `main` moved by
one commit touching another file. Each rep copies the seed afresh (outside
the timing) for each side, which then lands the task's change on the
checked-out `main`:

  retry-run:  retry-run land TASK
              (the change replayed onto main's tip, the scope gate, the
              squashed commit, `main` moved in the checkout as
              `git merge --ff-only` moves it, TaskLanded, the task's branch
              removed)
  git:        git rebase -q main retry-run/TASK && git checkout -q main &&
              git merge -q --ff-only retry-run/TASK

Which side goes first alternates by rep. Every rep checks both sides made
the same tree. Prints the median times and the median of the per-rep
ratios retry-run / git (target: at most 1.2).

    cargo build --profile quick && python3 bench/land.py [--reps 10] [--bin PATH]
"""
import argparse
import os
import pathlib
import shutil
import statistics
import subprocess
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
# ../shared/bench/gen_repo.sh, from the checkout or any directory above it.
GEN = next((p / "shared/bench/gen_repo.sh" for p in ROOT.parents if (p / "shared/bench/gen_repo.sh").exists()),
           ROOT.parent / "shared/bench/gen_repo.sh")
TASK = "change-one-file"
ENV = dict(
    os.environ,
    GIT_AUTHOR_NAME="p", GIT_AUTHOR_EMAIL="p@p", GIT_COMMITTER_NAME="p", GIT_COMMITTER_EMAIL="p@p",
    GIT_AUTHOR_DATE="2026-01-01T00:00:00Z", GIT_COMMITTER_DATE="2026-01-01T00:00:00Z",
    GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null",
    GIT_CONFIG_COUNT="1", GIT_CONFIG_KEY_0="gc.auto", GIT_CONFIG_VALUE_0="0",
)


def binary(given):
    if given:
        return given
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    # The newer of the two optimised builds: an old release binary may
    # predate `land`.
    built = [target / p / "retry-run" for p in ["release", "quick"] if (target / p / "retry-run").exists()]
    if built:
        return str(max(built, key=lambda b: b.stat().st_mtime))
    raise SystemExit("no optimised retry-run binary: cargo build --profile quick")


def sh(cmd, cwd, **kw):
    return subprocess.run(cmd, cwd=cwd, env=ENV, check=True, shell=isinstance(cmd, str), capture_output=True,
                          text=True, **kw).stdout.strip()


def seed(tmp, bin_):
    """The clone at B with the task succeeded and main moved by one commit."""
    shared = subprocess.run(["bash", str(GEN)], check=True, capture_output=True, text=True).stdout.strip()
    repo = os.path.join(tmp, "seed")
    sh(["git", "clone", "-q", "--no-local", "-b", "main", os.path.join(shared, "repo"), repo], tmp)
    sh(["git", "reset", "-q", "--hard", "B"], repo)
    with open(os.path.join(repo, "retry-run.toml"), "w") as f:
        f.write('max_attempts = 1\n[sandbox]\nmode = "off"\n')
    sh("git add retry-run.toml && git commit -qm config", repo)
    agent = os.path.join(tmp, "agent.sh")
    with open(agent, "w") as f:
        f.write("#!/bin/sh\nprintf 'def changed(x):\\n    return x - 1\\n' >> src/m03/s04/f05.py\n")
    os.chmod(agent, 0o755)
    sh([bin_, "run", "--quiet", "--task", "Change one file", "--", agent], repo)
    with open(os.path.join(repo, "src/m10/s10/f10.py"), "a") as f:
        f.write("def moved(x):\n    return x\n")
    sh("git commit -qam 'main moves'", repo)
    sh(["git", "gc", "-q"], repo)
    return repo


def timed(cmd, cwd):
    t = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, env=ENV, check=True, shell=isinstance(cmd, str), stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - t


def fresh(seed_dir, tmp, name):
    d = os.path.join(tmp, name)
    shutil.rmtree(d, ignore_errors=True)
    subprocess.run(["cp", "-a", seed_dir, d], check=True)
    # The copy's files are read once, as the seed's were, so neither side
    # pays for a cold page cache the other did not.
    sh(["git", "status", "--porcelain"], d)
    return d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--bin")
    args = ap.parse_args()
    bin_ = binary(args.bin)
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        s = seed(tmp, bin_)
        ours, theirs, ratios = [], [], []
        for i in range(args.reps):
            a = fresh(s, tmp, "a")
            b = fresh(s, tmp, "b")

            def land():
                return timed([bin_, "land", TASK], a)

            def git():
                return timed(f"git rebase -q main retry-run/{TASK} && git checkout -q main && "
                             f"git merge -q --ff-only retry-run/{TASK}", b)

            if i % 2 == 0:
                o, g = land(), git()
            else:
                g, o = git(), land()
            tree_a = sh(["git", "rev-parse", "main^{tree}"], a)
            tree_b = sh(["git", "rev-parse", "main^{tree}"], b)
            assert tree_a == tree_b, f"rep {i}: the trees differ ({tree_a} vs {tree_b})"
            assert sh(["git", "status", "--porcelain"], a) == "", "the land left the checkout dirty"
            ours.append(o)
            theirs.append(g)
            ratios.append(o / g)
        print(f"20,000 files; a one-file change landed after main moved by one commit; {args.reps} reps, "
              f"first side alternating; binary {bin_}")
        print(f"  retry-run land                        median {statistics.median(ours) * 1000:7.1f} ms  "
              f"(min {min(ours) * 1000:.1f}, max {max(ours) * 1000:.1f})")
        print(f"  git rebase + checkout + merge --ff-only median {statistics.median(theirs) * 1000:7.1f} ms  "
              f"(min {min(theirs) * 1000:.1f}, max {max(theirs) * 1000:.1f})")
        print(f"  ratio retry-run / git (median of the per-rep ratios): {statistics.median(ratios):.2f}  (target <= 1.2)")


if __name__ == "__main__":
    main()
