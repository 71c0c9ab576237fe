#!/usr/bin/env python3
"""The web view's pages: the task list of 1,000 recorded tasks and an
attempt's page with a 5,000-line diff, server time.

The tasks: `retry-run demo --keep` records one real run (its scripted agent
fails once, then fixes), and its task directory is copied under 1,000 new
ids (the log's chain verifies as it is; only the directory name differs).
The diff: a real `retry-run run` whose agent writes a Python file of 5,000
lines (highlighted) in the same repository, one attempt (its outcome does
not matter: its snapshot is what the page shows).

Each page is rendered by `retry-run ui-page --repeat N` (hidden: the
page function the server calls, without the socket), which prints the
median and slowest of N renders in the process, and the first one's (the
summaries of the logs are kept across renders as the server keeps them
across requests: the first render reads every log). Then over HTTP: `retry-run ui --no-open`
started on the same record, each page asked for N times with the token's
cookie (Python's http.client on one kept connection), the time from the
request sent to the whole answer read; the first list request after the
start is shown apart. Targets: the list under 200 ms, the attempt under
300 ms (issue 42).

    cargo build --release && python3 bench/ui.py [--runs 20] [--tasks 1000]
"""
import argparse
import http.client
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
from scope_diff import ENV  # noqa: E402
from worktree import BIN  # noqa: E402

BIN = os.environ.get("RETRY_RUN_BIN", BIN)


def run(args, cwd, ok=(0,)):
    out = subprocess.run(args, cwd=cwd, env=ENV, capture_output=True, text=True)
    assert out.returncode in ok, (args[:3], out.stdout[-2000:], out.stderr[-2000:])
    return out.stdout


def timed(repo, runs, *args):
    out = run([BIN, "ui-page", "--repeat", str(runs), *args], repo)
    # A build before the summaries were kept prints no first render: each
    # render reads every log, so the slowest stands for it.
    m = re.match(r"median_ms ([\d.]+) max_ms ([\d.]+)(?: first_ms ([\d.]+))?", out)
    return float(m.group(1)), float(m.group(2)), float(m.group(3) or m.group(2))


def served(repo, runs, paths):
    """Starts `retry-run ui --no-open` in `repo`; for each path, the
    milliseconds of each GET (the first list request apart: the first)."""
    server = subprocess.Popen([BIN, "ui", "--no-open"], cwd=repo, env=ENV, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        said = server.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/\?token=(\S+)", said)
        assert m, said
        port, token = int(m.group(1)), m.group(2)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.request("GET", f"/?token={token}")
        answer = conn.getresponse()
        answer.read()
        cookie = answer.getheader("Set-Cookie").split(";")[0]
        assert answer.status == 303, answer.status
        out = {}
        for path in paths:
            ms = []
            for _ in range(runs):
                t = time.perf_counter()
                conn.request("GET", path, headers={"Cookie": cookie})
                answer = conn.getresponse()
                body = answer.read()
                ms.append((time.perf_counter() - t) * 1000)
                assert answer.status == 200 and len(body) > 1000, (path, answer.status, body[:200])
            out[path] = ms
        conn.close()
        return out
    finally:
        server.terminate()
        server.wait(timeout=30)


def med(ms):
    s = sorted(ms)
    return s[len(s) // 2], s[-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--tasks", type=int, default=1000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        said = run([BIN, "demo", "--keep"], tmp)
        kept = re.search(r"files are kept in (\S+)", said)
        assert kept, said[-2000:]
        repo = os.path.join(kept.group(1), "calc")
        tasks = os.path.join(repo, ".git/retry-run/tasks")
        (first,) = os.listdir(tasks)
        # A 5,000-line diff from a real run, highlighted (Python).
        lines = "".join(f"def f{i}(x):  # {i}\n    return x + {i}\n" for i in range(2500))
        agent = ["python3", "-c", f"open('src/big.py', 'w').write({lines!r})"]
        run([BIN, "run", "--quiet", "--id", "big-diff", "--max-attempts", "1", "--task", "Add big.py", "--"] + agent,
            repo, ok=(0, 1))
        for i in range(args.tasks - 2):
            shutil.copytree(os.path.join(tasks, first), os.path.join(tasks, f"copy-{i:04d}"))
        n = len(os.listdir(tasks))
        listed = timed(repo, args.runs)
        attempt = timed(repo, args.runs, "--task", "big-diff", "--attempt", "1")
        split = timed(repo, args.runs, "--task", "big-diff", "--attempt", "1", "--split")
        http = served(repo, args.runs, ["/", "/tasks/big-diff/attempts/1", "/tasks/big-diff/attempts/1?layout=split"])
        shutil.rmtree(kept.group(1))
    print(f"retry-run ui pages, render time in the process; median (slowest) of {args.runs}, then the first render")
    print(f"  task list, {n} tasks            {listed[0]:7.1f} ms ({listed[1]:.1f})  first {listed[2]:.1f} ms"
          "  target under 200 ms")
    print(f"  attempt, 5,000-line diff       {attempt[0]:7.1f} ms ({attempt[1]:.1f})  target under 300 ms")
    print(f"  the same, side by side         {split[0]:7.1f} ms ({split[1]:.1f})")
    print(f"over HTTP (retry-run ui, a GET with the cookie to the whole answer read); median (slowest) of {args.runs}")
    lst, att, spl = http.values()
    print(f"  task list, {n} tasks            {med(lst[1:])[0]:7.1f} ms ({med(lst[1:])[1]:.1f})"
          f"  first after the start {lst[0]:.1f} ms")
    print(f"  attempt, 5,000-line diff       {med(att)[0]:7.1f} ms ({med(att)[1]:.1f})")
    print(f"  the same, side by side         {med(spl)[0]:7.1f} ms ({med(spl)[1]:.1f})")


if __name__ == "__main__":
    main()
