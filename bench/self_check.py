#!/usr/bin/env python3
"""A self-check (`run_checks`, docs/mcp.md) against the agent running the
same check itself, on the shared 20,000-file repository (issue 28).

The agent is a script that speaks MCP to the server retry-run gives it. It
appends a function to 50 files, then, --runs times with the first side
alternating, times:

- A, the self-check: a `tools/call` of `run_checks` to its answer (the
  worktree compared with the base, the check run confined as the real gate runs it,
  its output parsed and judged against the base, the answer rendered);
- B, the baseline: the same check run by the agent itself in its shell,
  in the worktree (what an agent does without the tools).

The check parses the 1,000 Python files of `src/m00` (`ast.parse`), about
half a second of real work, printing one line per directory.

    cargo build --release && python3 bench/self_check.py [--runs 10] [--root DIR]

Prints both sides' medians and the median of the paired ratios A/B.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(__file__))
from scope_diff import ENV  # noqa: E402
from shared_workload import BIN, generate  # noqa: E402

CHECK = ("python3 -c \"import ast, pathlib; "
         "[print(d, len([ast.parse(p.read_text()) for p in d.glob('*.py')])) "
         "for d in sorted(pathlib.Path('src/m00').iterdir())]\"")

AGENT = r'''
import json, os, subprocess, sys, time
check, out, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
files = sorted(p for p in (os.path.join(d, f) for d, _, fs in os.walk("src/m01") for f in fs))[:50]
for f in files:
    with open(f, "a") as h:
        h.write("def added(x):\n    return x * 2\n")
server = subprocess.Popen(json.loads(os.environ["RETRY_RUN_MCP_COMMAND"]), stdin=subprocess.PIPE,
                          stdout=subprocess.PIPE, text=True)
n = [0]
def ask(method, params=None):
    n[0] += 1
    server.stdin.write(json.dumps({"jsonrpc": "2.0", "id": n[0], "method": method, "params": params or {}}) + "\n")
    server.stdin.flush()
    while True:
        msg = json.loads(server.stdout.readline())
        if msg.get("id") == n[0]:
            return msg
ask("initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}})
times = {"a": [], "b": [], "answers": []}
def self_check():
    r = ask("tools/call", {"name": "run_checks", "arguments": {}})
    times["answers"].append(r["result"]["content"][0]["text"].splitlines()[0])
def direct():
    subprocess.run(check, shell=True, check=True, capture_output=True)
for i in range(runs):
    for side, f in ([("a", self_check), ("b", direct)] if i % 2 == 0 else [("b", direct), ("a", self_check)]):
        t = time.perf_counter()
        f()
        times[side].append(time.perf_counter() - t)
server.stdin.close()
server.wait()
json.dump(times, open(out, "w"))
'''


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--root", default="/var/tmp/rr-shared-20k")
    a = ap.parse_args()
    generate(a.root)
    # Not beneath /tmp: the sandbox gives the agent a private one.
    tmp = tempfile.mkdtemp(prefix="rr-bench-self-check-", dir="/var/tmp")
    try:
        repo = os.path.join(tmp, "repo")
        subprocess.run(["git", "clone", "-q", "--no-checkout", os.path.join(a.root, "repo"), repo], env=ENV,
                       check=True)
        subprocess.run(["git", "checkout", "-q", "B"], cwd=repo, env=ENV, check=True)
        agent = os.path.join(tmp, "agent.py")
        with open(agent, "w") as f:
            f.write(AGENT)
        out_dir = os.path.join(tmp, "out")
        os.makedirs(out_dir)
        config = os.path.join(tmp, "config.toml")
        with open(config, "w") as f:
            f.write(f"max_attempts = 1\n[agent]\nmax_self_checks = {a.runs}\ntimeout = \"30m\"\n"
                    f"[sandbox]\nwritable = [\"{out_dir}\"]\n"
                    f"[[check]]\nname = \"parse\"\nkind = \"lint\"\nrun = {json.dumps(CHECK)}\n")
        out = os.path.join(out_dir, "times.json")
        run = subprocess.run([BIN, "run", "--quiet", "--config", config, "--base", "B", "--task", "bench",
                              "--", "python3", agent, CHECK, out, str(a.runs)],
                             cwd=repo, env=ENV, capture_output=True, text=True)
        if not os.path.exists(out):
            sys.exit(f"the agent wrote no times:\n{run.stderr[-3000:]}")
        t = json.load(open(out))
        assert all("every gate passed" in x for x in t["answers"]), t["answers"]
        ratios = [x / y for x, y in zip(t["a"], t["b"])]
        print(f"{a.runs} pairs, sides alternating, in one attempt on the 20,000-file repository (50 files changed)")
        print(f"self-check (run_checks) {statistics.median(t['a']) * 1000:7.1f} ms   "
              f"the check run directly {statistics.median(t['b']) * 1000:7.1f} ms   "
              f"ratio {statistics.median(ratios):5.2f}x")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
