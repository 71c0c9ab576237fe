#!/usr/bin/env python3
"""How many key facts (failing test ids, error locations) survive in
`retry-run summarize`'s digest at a token budget, against naive truncation of
the raw log to its first budget*4 bytes.

Corpus: the real runner logs in tests/summarize/captured/ and
tests/diagnostics/captured/, with their facts in tests/summarize/facts/.

    cargo build --release && python3 bench/summarize_facts.py [--max-tokens 500]
"""
import argparse
import pathlib
import subprocess

ROOT = pathlib.Path(__file__).resolve().parent.parent
BIN = ROOT / "target/release/retry-run"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-tokens", type=int, nargs="+", default=[500, 200, 100])
    args = ap.parse_args()
    facts_dir = ROOT / "tests/summarize/facts"
    logs = {}
    for d in (ROOT / "tests/summarize/captured", ROOT / "tests/diagnostics/captured"):
        for p in d.glob("*.txt"):
            logs[p.stem] = p
    for budget in args.max_tokens:
        total = kept_digest = kept_head = 0
        print(f"\nbudget {budget} tokens ({budget * 4} bytes)")
        print(f"{'log':24} {'bytes':>7} {'facts':>5} {'digest':>7} {'head':>5} {'digest bytes':>12}")
        for facts_file in sorted(facts_dir.glob("*.txt")):
            name = facts_file.stem
            log = logs[name]
            facts = [f for f in facts_file.read_text().splitlines() if f]
            raw = log.read_bytes()
            digest = subprocess.run(
                [BIN, "summarize", "--input", log, "--max-tokens", str(budget)],
                check=True, capture_output=True,
            ).stdout
            head = raw[: budget * 4]
            d = sum(f.encode() in digest for f in facts)
            h = sum(f.encode() in head for f in facts)
            total += len(facts)
            kept_digest += d
            kept_head += h
            print(f"{name:24} {len(raw):7} {len(facts):5} {d:7} {h:5} {len(digest):12}")
        print(f"{'all':24} {'':7} {total:5} {kept_digest:7} {kept_head:5}")
        print(f"key facts kept: digest {100 * kept_digest / total:.0f}%, head truncation {100 * kept_head / total:.0f}%")


if __name__ == "__main__":
    main()
