#!/usr/bin/env python3
"""`retry-run summarize` of a verbose CI log, the kind users have: a 1 GiB
`pytest -v` log (one PASSED line per test, 6 failures spread through it,
then pytest's failure blocks and summary), against
`grep -E 'FAILED|failed|panicked|^E |error'` in the same run. Which side
runs first alternates; medians; the digest must name every failure.

    cargo build --release && python3 bench/summarize_pytest_v.py [--gb 1] [--runs 5]

Target: at least 0.5x grep's throughput.
"""
import argparse
import os
import pathlib
import statistics
import subprocess
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
BIN = ROOT / "target/release/retry-run"
GREP = ["grep", "-E", "FAILED|failed|panicked|^E |error"]

MODULES = ["api", "models", "utils", "storage", "auth", "billing", "search", "cache", "views", "forms"]
VERBS = ["get", "create", "update", "delete", "list", "parse", "render", "validate", "handle", "compute", "load", "save"]
NOUNS = ["item", "user", "order", "invoice", "token", "session", "query", "page", "record", "config"]


def generate(path, gb):
    target = int(gb * (1 << 30))
    fails = [int(target * k / 6) + 1000 for k in range(6)]
    written, i, f_at, out = 0, 0, 0, []
    with open(path, "wb") as f:
        while written < target:
            i += 1
            pct = min(99, 100 * written // target)
            name = f"test_{VERBS[i % 12]}_{NOUNS[(i // 12) % 10]}_{i % 997}[param{i % 13}]"
            line = f"tests/{MODULES[i % 10]}/test_{MODULES[(i // 10) % 10]}.py::{name} PASSED".ljust(78) + f"[{pct:3d}%]\n"
            if f_at < 6 and written >= fails[f_at]:
                line += f"tests/api/test_cart.py::test_broken_{f_at} FAILED".ljust(78) + f"[{pct:3d}%]\n"
                f_at += 1
            out.append(line.encode())
            written += len(out[-1])
            if len(out) >= 10000:
                f.write(b"".join(out))
                out = []
        f.write(b"".join(out))
        f.write(b"=" * 35 + b" FAILURES " + b"=" * 35 + b"\n")
        for k in range(6):
            f.write(f"{'_' * 27} test_broken_{k} {'_' * 27}\n\n    def test_broken_{k}():\n>       assert add(2, {k}) == 9\n"
                    f"E       assert {2 + k} == 9\n\ntests/api/test_cart.py:{10 + k}: AssertionError\n".encode())
        f.write(b"=" * 27 + b" short test summary info " + b"=" * 28 + b"\n")
        for k in range(6):
            f.write(f"FAILED tests/api/test_cart.py::test_broken_{k} - assert {2 + k} == 9\n".encode())
        f.write(f"{'=' * 17} 6 failed, {i} passed in 812.31s (0:13:32) {'=' * 17}\n".encode())


def timed(cmd):
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True)
    return time.perf_counter() - t, p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gb", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "pytest-v.log")
        generate(log, args.gb)
        size = os.path.getsize(log)
        subprocess.run(["cat", log], stdout=subprocess.DEVNULL, check=True)  # warm the page cache
        grep, ours, digest = [], [], b""
        for r in range(args.runs):
            sides = [("grep", GREP + [log]), ("ours", [str(BIN), "summarize", "--input", log])]
            for name, cmd in sides if r % 2 == 0 else sides[::-1]:
                s, out = timed(cmd)
                (grep if name == "grep" else ours).append(s)
                if name == "ours":
                    digest = out
        mb = size / 1e6
        g, s = statistics.median(grep), statistics.median(ours)
        print(f"log: {mb:.0f} MB of pytest -v, 6 failures spread through it; medians of {args.runs} runs, sides alternating")
        print(f"grep -E 'FAILED|failed|panicked|^E |error': {g:.2f} s  {mb / g:.0f} MB/s")
        print(f"retry-run summarize:                        {s:.2f} s  {mb / s:.0f} MB/s")
        print(f"throughput ratio summarize/grep: {g / s:.2f} (target >= 0.5)")
        named = sum(f"test_cart.py::test_broken_{k}".encode() in digest for k in range(6))
        print(f"failures named in the digest: {named}/6")


if __name__ == "__main__":
    main()
