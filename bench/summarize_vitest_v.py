#!/usr/bin/env python3
"""`retry-run summarize` of a verbose vitest log, the kind a TypeScript
project's CI keeps: 1 GiB of `vitest run --reporter=verbose` lines (one
`✓ file > suite > case 1ms` line per test, as vitest 4 prints them,
tests/runners/captured/vitest-4.1.12-verbose.txt), 6 failures (`×` with
their `→` reason) spread through it, then vitest's failure blocks and
totals; against `grep -E` for its failure lines in the same run. Which
side runs first alternates; medians; the digest must name every failure.

    cargo build --release && python3 bench/summarize_vitest_v.py [--gb 1] [--runs 3]

Target (issue 60): at least as fast as grep (ratio >= 1.0), in bounded
memory (the peak is printed).
"""
import argparse
import os
import pathlib
import resource
import statistics
import subprocess
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
BIN = ROOT / "target/release/retry-run"
GREP = ["grep", "-E", "×|FAIL|AssertionError|Tests  "]

DIRS = ["api", "models", "utils", "storage", "auth", "billing", "search", "cache", "views", "forms"]
VERBS = ["gets", "creates", "updates", "deletes", "lists", "parses", "renders", "validates", "handles", "loads"]
NOUNS = ["an item", "the user", "an order", "the invoice", "a token", "the session", "a query", "the page"]


def generate(path, gb):
    target = int(gb * (1 << 30))
    fails = [int(target * k / 6) + 1000 for k in range(6)]
    written, i, f_at, out = 0, 0, 0, []
    with open(path, "wb") as f:
        while written < target:
            i += 1
            file = f"src/{DIRS[i % 10]}/{DIRS[(i // 10) % 10]}.test.ts"
            line = f" ✓ {file} > {DIRS[(i // 7) % 10]} > {VERBS[i % 10]} {NOUNS[(i // 10) % 8]} #{i % 997} {i % 9}ms\n"
            if f_at < 6 and written >= fails[f_at]:
                line += f" × src/api/cart.test.ts > cart > totals case {f_at} 4ms\n   → expected {f_at} to be 9 // Object.is equality\n"
                f_at += 1
            out.append(line.encode())
            written += len(out[-1])
            if len(out) >= 10000:
                f.write(b"".join(out))
                out = []
        f.write(b"".join(out))
        f.write("\n⎯⎯⎯⎯⎯⎯⎯ Failed Tests 6 ⎯⎯⎯⎯⎯⎯⎯\n\n".encode())
        for k in range(6):
            f.write(f" FAIL  src/api/cart.test.ts > cart > totals case {k}\nAssertionError: expected {k} to be 9 // Object.is equality\n\n"
                    f"- Expected\n+ Received\n\n- 9\n+ {k}\n\n ❯ src/api/cart.test.ts:{10 + k}:20\n\n⎯⎯⎯[{k + 1}/6]⎯\n\n".encode())
        f.write(f" Test Files  1 failed | 99 passed (100)\n      Tests  6 failed | {i} passed ({i + 6})\n".encode())


def timed(cmd):
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True)
    return time.perf_counter() - t, p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gb", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir="/var/tmp") as tmp:
        log = os.path.join(tmp, "vitest-verbose.log")
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
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        mb = size / 1e6
        g, s = statistics.median(grep), statistics.median(ours)
        print(f"log: {mb:.0f} MB of vitest --reporter=verbose, 6 failures spread through it; medians of {args.runs} runs, sides alternating")
        print(f"grep -E '{GREP[2]}': {g:.2f} s  {mb / g:.0f} MB/s")
        print(f"retry-run summarize: {s:.2f} s  {mb / s:.0f} MB/s (peak resident of the children: {peak:.0f} MB)")
        print(f"throughput ratio summarize/grep: {g / s:.2f} (target >= 1.0)")
        named = sum(f"cart > totals case {k}".encode() in digest for k in range(6))
        print(f"failures named in the digest: {named}/6")
        print(digest.decode(errors="replace")[:600])


if __name__ == "__main__":
    main()
