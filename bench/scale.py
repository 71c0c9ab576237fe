#!/usr/bin/env python3
"""retry-run against git at 20,000, 100,000 and 200,000 files (issue 43).

The repository is the shared workload's (bench/shared_workload.py, its
`generate` with a size): the same Python files of 30 functions, 50 a
directory, more directories (400, 2,000, 4,000), and every change set
scaled in proportion. Each row runs retry-run (A) and git (B) on the same
repository, the first side alternating pair by pair after one warm-up pair;
it prints both sides' medians and the median of the pairs' ratios A/B.

Rows, and what the git side runs:

- the rows of bench/shared_workload.py, unchanged: `scope`/`diff` of two
  commits (`git diff --name-status|--numstat -M B...H`), of a dirty
  working tree (`git status --porcelain && git diff --name-status|--numstat
  -M B`), `--version` (`git --version`);
- create: `retry-run worktree create` vs `git worktree add --detach P B`
  (the disk synced before each, the worktree removed after, untimed);
- snapshot: the snapshot of a task's worktree after the agent's writes
  (examples/snapshot, as in bench/worktree.py) vs `git add -A && git
  write-tree` on a copy of a git worktree's index after the same writes;
- reset after writes: `retry-run worktree reset` vs `git reset --hard B &&
  git clean -fdxq`, right after the snapshot (the writes of
  bench/reset_after_agent.py, scaled);
- attempt: one attempt of `retry-run run --again -- true` (agent `true`, no
  checks, the task's worktree kept and reset: bench/run_overhead.py) vs
  `git reset --hard && git clean -fdxq && git add -A && git write-tree &&
  git diff --numstat HEAD` in a git worktree;
- attempt, less the agent: the same attempt less the confined agent's own
  duration as the record gives it (`AgentFinished.duration_ms`: bubblewrap,
  the inner supervisor and `true`, which the git side does not run), vs
  the same git side: retry-run's own work an attempt;
- watch setup, and watch per attempt: from that attempt's record
  (`watch_setup_ms`: listing and watching the checkout's directories;
  `watch_ms`: marking and reading the watch around the agent) vs `git
  status --porcelain` in the checkout (git's way to tell whether it
  changed), timed alongside;
- attempt, by stat data, and watch by stat data: the same attempt where
  inotify cannot watch the checkout (`RETRY_RUN_WATCH=stat`: the fallback,
  three reads of the checkout's stat data an attempt), against the same
  git sides.

    cargo build --release --bins --example snapshot
    python3 bench/scale.py [--sizes 20000,100000,200000] [--pairs 3] [--slow-pairs 2] [--only head]
        [--slow-only reset,attempt] [--fresh-task]

The attempt rows reuse one task, `scale-run`, whose record grows by about
ten attempts a run, and a run reads it whole at its start: the attempts
recorded before are printed; `--fresh-task` starts it afresh.

The repositories are built once under /var/tmp/rr-scale-<N>k and reused
(about 2 GB a 100,000 files, with the worktrees and snapshots; remove them
when done). Target: every ratio at most 1.0, and retry-run's growth from
the smallest size to the largest no more than git's.
"""
import argparse
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(__file__))
from reset_after_agent import agent_writes  # noqa: E402
from scope_diff import ENV  # noqa: E402
from shared_workload import generate, out, paired, rows, run  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parent.parent
TARGET = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))


def timed(cmd, cwd, env=ENV, shell=False, ok=(0,)):
    t = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, env=env, shell=shell, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    took = time.perf_counter() - t
    assert r.returncode in ok, (cmd, r.returncode, r.stderr[-2000:])
    return took


def size_rows(n, a):
    """Every row at `n` files: {row: (retry-run median, git median, median ratio)}."""
    k = n // 20000
    root = f"{a.root_prefix}{n // 1000}k"
    t = time.perf_counter()
    generate(root, n)
    print(f"# {n} files under {root} (ready in {time.perf_counter() - t:.0f} s)", flush=True)
    repo, dirty = os.path.join(root, "repo"), os.path.join(root, "dirty")
    res = {}

    def slow(*names):
        """Whether `--slow-only` leaves any of these rows (by the start of their names) to run."""
        return not a.slow_only or any(w.strip() and n.startswith(w.strip()) for w in a.slow_only.split(",")
                                      for n in names)

    for name, cwd, ours, theirs in rows(a.bin, repo, dirty):
        if a.slow_only or (a.only and a.only not in name):
            continue
        res[name] = paired(a.pairs, lambda: run(ours, cwd), lambda: run(theirs, cwd))
        show(name, res[name])
    if a.only:
        return res
    files = out(repo, "ls-tree", "-r", "--name-only", "B").split()
    exclude = os.path.join(repo, ".git/info/exclude")
    if "build/" not in open(exclude).read():
        with open(exclude, "a") as f:
            f.write("build/\n")
    ours_wt, git_wt = os.path.join(root, "ours-wt"), os.path.join(root, "git-wt")
    if not os.path.isdir(git_wt):
        timed(["git", "worktree", "add", "-q", "--detach", git_wt, "B"], repo)
    if not os.path.lexists(ours_wt):
        timed([a.bin, "worktree", "create", "scale-bench", "--base", "B"], repo)
        path = subprocess.run([a.bin, "worktree", "path", "scale-bench"], cwd=repo, env=ENV, capture_output=True,
                              text=True, check=True).stdout.strip()
        os.symlink(path, ours_wt)
    scratch = os.path.join(root, "scratch-index")
    git_index = subprocess.run(["git", "rev-parse", "--git-path", "index"], cwd=git_wt, env=ENV, capture_output=True,
                               text=True, check=True).stdout.strip()
    git_index = os.path.join(git_wt, git_index)

    def ours_writes(i):
        agent_writes(ours_wt, files, i, k)
        snap = timed([a.snap, repo, ours_wt, "B", f"refs/retry-run/scale-bench/{i + 1}"], repo)
        reset = timed([a.bin, "worktree", "reset", "scale-bench", "--base", "B"], repo)
        return {"snapshot": snap, "reset after writes": reset}

    def git_writes(i):
        agent_writes(git_wt, files, i, k)
        shutil.copyfile(git_index, scratch)
        snap = timed("git add -A && git write-tree", git_wt, env=dict(ENV, GIT_INDEX_FILE=scratch), shell=True)
        reset = timed("git reset -q --hard B && git clean -fdxq", git_wt, shell=True)
        return {"snapshot": snap, "reset after writes": reset}

    if slow("snapshot", "reset"):
        res.update(split(alternate_pairs(a.slow_pairs, ours_writes, git_writes)))
        for wt in (ours_wt, git_wt):
            left = subprocess.run(["git", "status", "--porcelain", "--ignored"], cwd=wt, env=ENV,
                                  capture_output=True, text=True).stdout
            assert left == "", f"{wt}: the reset left {left[:300]}"
        for row in ("snapshot", "reset after writes"):
            show(row, res[row])

    place = os.path.join(root, "git-create")

    def ours_create(_):
        os.sync()
        took = timed([a.bin, "worktree", "create", "scale-create", "--base", "B"], repo)
        timed([a.bin, "worktree", "remove", "scale-create"], repo)
        return {"create": took}

    def git_create(_):
        os.sync()
        took = timed(["git", "worktree", "add", "-q", "--detach", place, "B"], repo)
        timed(["git", "worktree", "remove", "--force", place], repo)
        return {"create": took}

    if slow("create"):
        res.update(split(alternate_pairs(a.slow_pairs, ours_create, git_create, warm=False)))
        show("create", res["create"])
    if not slow("attempt", "watch"):
        return res

    with open(os.path.join(repo, "retry-run.toml"), "w") as f:
        f.write('[worktree]\nkeep = "all"\n')
    attempt = [a.bin, "run", "--quiet", "--task", "scale-run", "--max-attempts", "1"]
    made = os.path.join(root, ".run-made")
    if a.fresh_task and os.path.exists(made):
        timed([a.bin, "clean", "scale-run", "--state"], repo)
        os.remove(made)
    if not os.path.exists(made):
        timed(attempt + ["--", "true"], repo, ok=(0, 1))
        open(made, "w").close()
    # A run reads its task's whole record at its start: how long it is.
    print(f"  (task scale-run: {last_attempt(repo)['attempt']} attempts recorded before these)", flush=True)

    def ours_attempt(_):
        took = timed(attempt + ["--again", "--", "true"], repo, ok=(0, 1))
        done = last_attempt(repo)
        assert done["watch"] == "inotify", done
        agent = last_attempt(repo, "AgentFinished")["duration_ms"] / 1000
        # The fallback where inotify cannot watch: the same attempt, by stat data.
        by_stat = timed(attempt + ["--again", "--", "true"], repo, env=dict(ENV, RETRY_RUN_WATCH="stat"), ok=(0, 1))
        fallback = last_attempt(repo)
        assert fallback["watch"] == "stat", fallback
        return {"attempt": took, "attempt, less the agent": took - agent, "watch setup": done["watch_setup_ms"] / 1000,
                "watch per attempt": done["watch_ms"] / 1000, "attempt, by stat data": by_stat,
                "watch by stat data": fallback["watch_ms"] / 1000}

    def git_attempt(_):
        shutil.copyfile(git_index, scratch)
        took = timed("git reset -q --hard && git clean -fdxq && git add -A && git write-tree"
                     " && git diff --numstat HEAD", git_wt, env=dict(ENV, GIT_INDEX_FILE=scratch), shell=True)
        status = timed(["git", "status", "--porcelain"], repo)
        return {"attempt": took, "status": status}

    a_side, b_side = alternate_pairs(a.slow_pairs, ours_attempt, git_attempt)
    res.update(split((a_side, b_side), only=["attempt"]))
    show("attempt", res["attempt"])
    res["attempt, less the agent"] = ratio_of(a_side["attempt, less the agent"], b_side["attempt"])
    show("attempt, less the agent", res["attempt, less the agent"])
    res["attempt, by stat data"] = ratio_of(a_side["attempt, by stat data"], b_side["attempt"])
    show("attempt, by stat data", res["attempt, by stat data"])
    for row in ("watch setup", "watch per attempt", "watch by stat data"):
        res[row] = ratio_of(a_side[row], b_side["status"])
        show(row, res[row])
    return res


def alternate_pairs(pairs, ours, theirs, warm=True):
    """Both sides' results, pair by pair: ({row: [s]}, {row: [s]})."""
    a, b = {}, {}
    for i in range(pairs + (1 if warm else 0)):
        order = [(a, ours), (b, theirs)] if i % 2 == 0 else [(b, theirs), (a, ours)]
        for into, fn in order:
            for row, s in fn(i).items():
                if not (warm and i == 0):
                    into.setdefault(row, []).append(s)
    return a, b


def ratio_of(ours, theirs):
    return (statistics.median(ours), statistics.median(theirs),
            statistics.median(x / y for x, y in zip(ours, theirs)))


def split(sides, only=None):
    a, b = sides
    return {row: ratio_of(a[row], b[row]) for row in (only or a) if row in b}


def last_attempt(repo, kind="AttemptCompleted"):
    """The last event of type `kind` of task scale-run's record."""
    common = out(repo, "rev-parse", "--git-common-dir").strip()
    events = os.path.join(repo, common, "retry-run/tasks/scale-run/events.jsonl")
    for line in reversed(open(events).read().splitlines()):
        ev = json.loads(line)
        if ev.get("type") == kind:
            return ev
    raise SystemExit(f"no {kind} in {events}")


def show(name, r):
    ma, mb, ratio = r
    print(f"  {name:<22} retry-run {ma * 1000:9.1f} ms   git {mb * 1000:9.1f} ms   ratio {ratio:5.2f}x", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="20000,100000,200000")
    ap.add_argument("--pairs", type=int, default=3, help="pairs of the whole-process rows, after a warm-up pair")
    ap.add_argument("--slow-pairs", type=int, default=2, help="pairs of create, snapshot, reset and attempt")
    ap.add_argument("--root-prefix", default="/var/tmp/rr-scale-")
    ap.add_argument("--bin", default=str(TARGET / "release/retry-run"))
    ap.add_argument("--snap", default=str(TARGET / "release/examples/snapshot"))
    ap.add_argument("--json", help="write the figures here too")
    ap.add_argument("--only", help="only the whole-process rows whose name holds this (`head`: scope and diff "
                                   "of two commits); create, snapshot, reset and attempt are skipped")
    ap.add_argument("--slow-only", help="only these of the slow rows, by the start of their names, comma-separated "
                                        "(`reset,attempt`: the writes' rows, snapshot and reset, and the attempt's "
                                        "rows, attempt and watch); the whole-process rows are skipped")
    ap.add_argument("--fresh-task", action="store_true",
                    help="start the attempt rows' task afresh (`retry-run clean scale-run --state`, then one "
                         "attempt): its record then holds this run's attempts alone, where it otherwise grows "
                         "by about ten attempts a run")
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    print(f"ratio = retry-run / git, median of the pairs' ratios; sides alternating; "
          f"{a.pairs} pairs (whole-process rows), {a.slow_pairs} (the rest)", flush=True)
    all_ = {n: size_rows(n, a) for n in sizes}
    lo, hi = sizes[0], sizes[-1]
    if lo != hi:
        print(f"# growth from {lo} to {hi} files (median at {hi} / median at {lo})")
        for row, (ma, mb, _) in all_[hi].items():
            la, lb, _ = all_[lo][row]
            print(f"  {row:<22} retry-run {ma / la:6.2f}x   git {mb / lb:6.2f}x")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({str(n): r for n, r in all_.items()}, f, indent=1)


if __name__ == "__main__":
    main()
