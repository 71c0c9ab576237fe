#!/usr/bin/env python3
"""`retry-run summarize` on a generated 1 GB log against `grep -E` with the
same marker set, in the same run: throughput (median of --runs), peak memory,
and whether every planted failure is named in the digest.

    cargo build --release && python3 bench/summarize_throughput.py [--gb 1] [--runs 3]

Targets: at least half of grep's throughput, peak memory < 50 MB.
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
# The markers of src/summarize/classify.rs, as one extended regex.
PATTERN = "FAIL|ERROR|rror|panicked at|panic: |Traceback \\(most recent call last\\)|test result: | passed| failed|Tests:|Tests  |●|❯ |_test.go:|ok  \t|--> |E   |___|---- |fatal|Exception|: in "

FILLER = [
    "tests/api/test_endpoints.py::test_get_item[{i}] PASSED                       [ 42%]",
    "test storage::tests::round_trip_{i} ... ok",
    "2026-11-22T10:{m:02}:{s:02}.{i:03}Z INFO  worker-{w} processed batch {i} in {w}ms",
    "=== RUN   TestLedger/case_{i}",
    "--- PASS: TestLedger/case_{i} (0.00s)",
    "    ✓ renders row {i} ({w} ms)",
    "2026-11-22T10:{m:02}:{s:02}.{i:03}Z DEBUG cache hit for key user:{i} (size {w}kb)",
]


def block(seed, size=1 << 20):
    lines, n, i = [], 0, seed
    while n < size:
        i += 1
        t = FILLER[i % len(FILLER)].format(i=i % 1000, m=i % 60, s=(i // 60) % 60, w=i % 7)
        if i % 997 == 0:
            t = f"2026-11-22T10:00:00Z WARN  retrying after transient error: connection reset (attempt {i % 3})"
        lines.append(t)
        n += len(t) + 1
    return ("\n".join(lines) + "\n").encode()


FAILURES = [
    (b"test storage::tests::early_failure ... FAILED\n", "storage::tests::early_failure"),
    (b"FAILED tests/api/test_endpoints.py::test_delete_item - AssertionError: assert 404 == 204\n",
     "tests/api/test_endpoints.py::test_delete_item"),
    (b"    ledger_test.go:41: balance = 7, want 9\n--- FAIL: TestLedger/overdraft (0.00s)\n", "TestLedger/overdraft"),
    (b"error[E0308]: mismatched types\n  --> src/ledger.rs:88:17\n", "src/ledger.rs:88:17"),
    (b"  \xe2\x97\x8f cart \xe2\x80\xba applies coupon\n\n    expect(received).toBe(expected)\n\n      at Object.toBe (cart.test.js:12:5)\n",
     "cart.test.js:12:5"),
    (b"---- tests::late_panic stdout ----\nthread 'tests::late_panic' panicked at src/late.rs:120:9:\nindex out of bounds\n\n",
     "src/late.rs:120:9"),
]


def generate(path, gb):
    blocks = [block(k * 100_000) for k in range(8)]
    total_blocks = int(gb * 1024)
    at = {int(total_blocks * k / (len(FAILURES) - 1)) for k in range(len(FAILURES))}
    at = sorted(min(a, total_blocks - 1) for a in at)
    failures = iter(FAILURES)
    with open(path, "wb") as f:
        for b in range(total_blocks):
            if b in at:
                f.write(next(failures)[0])
            f.write(blocks[b % len(blocks)])
        f.write(b"test result: FAILED. 41200 passed; 6 failed; 0 ignored; 0 measured; 0 filtered out\n")


def timed(cmd):
    """(seconds, peak RSS in KB, stdout) of one run."""
    t = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], capture_output=True)
    elapsed = time.perf_counter() - t
    peak = int(p.stderr.decode().strip().splitlines()[-1])
    return elapsed, peak, p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gb", type=float, default=1.0)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "big.log")
        generate(log, args.gb)
        size = os.path.getsize(log)
        subprocess.run(["cat", log], stdout=subprocess.DEVNULL, check=True)  # warm the page cache
        grep, ours, peaks, digest = [], [], [], b""
        for _ in range(args.runs):
            g, _, _ = timed(["grep", "-E", "-c", PATTERN, log])
            s, peak, digest = timed([str(BIN), "summarize", "--input", log])
            grep.append(g)
            ours.append(s)
            peaks.append(peak)
        mb = size / 1e6
        g, s = statistics.median(grep), statistics.median(ours)
        print(f"log: {mb:.0f} MB, {len(FAILURES)} failures planted from start to end; medians of {args.runs} runs")
        print(f"grep -E -c (same markers): {g:.2f} s  {mb / g:.0f} MB/s")
        print(f"retry-run summarize:       {s:.2f} s  {mb / s:.0f} MB/s")
        print(f"throughput ratio summarize/grep: {g / s:.2f} (target >= 0.5)")
        print(f"peak memory: {max(peaks) / 1024:.1f} MB (target < 50 MB)")
        missing = [name for _, name in FAILURES if name.encode() not in digest]
        print(f"failures named in the digest: {len(FAILURES) - len(missing)}/{len(FAILURES)}" + (f" missing {missing}" if missing else ""))
        print(digest.decode(errors="replace"))


if __name__ == "__main__":
    main()
