#!/usr/bin/env python3
"""The sandbox's own cost, same run, medians, sides alternating.

1. Per confined process: `retry-run sandbox -- true` against `true`
   (target: under 5 ms more per process).
2. Per attempt, on the 20,000-file repository of bench/scope_diff.py, agent
   `true`, no checks: one attempt with `[sandbox] mode = "landlock"`
   against one with `mode = "off"`, and the time the attempt waited for
   watching the user's checkout and the git machinery (`watch_ms` of
   AttemptCompleted, in every mode) as a share of the attempt's overhead
   (target: under 10%); and the inotify watch's setup (`watch_setup_ms`),
   done once per run on another thread while the worktree is reset.

    cargo build --release && python3 bench/sandbox.py [--files 20000] [--runs 7] [--procs 41]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from scope_diff import ENV, build  # noqa: E402
from worktree import BIN  # noqa: E402


def timed(cmd, cwd, ok=(0,)):
    t = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert r.returncode in ok, (cmd, r.returncode, r.stderr[-2000:])
    return time.perf_counter() - t


def last_attempt(repo, task):
    path = os.path.join(repo, ".git/retry-run/tasks", task, "events.jsonl")
    with open(path) as f:
        events = [json.loads(line) for line in f]
    return [e for e in events if e["type"] == "AttemptCompleted"][-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=20000)
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--procs", type=int, default=41)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        # 1. One confined process.
        work = os.path.join(tmp, "work")
        os.mkdir(work)
        confined, bare = [], []
        for i in range(args.procs):
            pair = [(confined, [BIN, "sandbox", "--", "true"]), (bare, ["true"])]
            for out, cmd in pair if i % 2 == 0 else reversed(pair):
                out.append(timed(cmd, work))
        mc, mb = statistics.median(confined), statistics.median(bare)
        print(f"one process, medians of {args.procs}:")
        print(f"  retry-run sandbox -- true {mc * 1000:6.2f} ms   true {mb * 1000:6.2f} ms"
              f"   the sandbox's cost {1000 * (mc - mb):5.2f} ms (target < 5)")

        # 2. One attempt, confined and not.
        repo, _ = build(tmp, args.files, 1000)
        configs = {}
        for mode in ("landlock", "off"):
            configs[mode] = os.path.join(tmp, f"{mode}.toml")
            with open(configs[mode], "w") as f:
                f.write(f'[sandbox]\nmode = "{mode}"\n')
        run = [BIN, "run", "--quiet", "--max-attempts", "1"]
        for mode in configs:  # the first run of a task creates its worktree
            timed(run + ["--config", configs[mode], "--task", mode, "--", "true"], repo, ok=(1,))
        times = {m: [] for m in configs}
        watch = {m: [] for m in configs}
        setup = []
        for i in range(args.runs):
            order = list(configs) if i % 2 == 0 else list(reversed(configs))
            for mode in order:
                cmd = run + ["--config", configs[mode], "--task", mode, "--again", "--", "true"]
                times[mode].append(timed(cmd, repo, ok=(1,)))
                done = last_attempt(repo, mode)
                watch[mode].append(done["watch_ms"] / 1000)
                setup.append(done["watch_setup_ms"] / 1000)
        ml, mo = statistics.median(times["landlock"]), statistics.median(times["off"])
        wl = statistics.median(watch["landlock"])
        print(f"{args.files} files, agent `true`, no checks; medians of {args.runs} attempts:")
        print(f"  landlock {ml:6.3f} s   off {mo:6.3f} s   ratio {ml / mo:.3f}   difference {1000 * (ml - mo):6.1f} ms")
        print(f"  watching the checkout and the git machinery: {1000 * wl:6.1f} ms,"
              f" {100 * wl / ml:4.1f}% of the attempt (target < 10%)")
        ms = statistics.median(setup)
        print(f"  setting up the inotify watch, once per run on another thread while the worktree is reset:"
              f" {1000 * ms:6.1f} ms ({100 * ms / ml:4.1f}% of the attempt if it were not overlapped)")


if __name__ == "__main__":
    main()
