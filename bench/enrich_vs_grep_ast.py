#!/usr/bin/env python3
"""`retry-run enrich` against Aider's grep-ast and a bare tree-sitter parse,
in the same run, on ~10,000 diagnostics over 1,000 real Python files (the
standard library of the running Python, copied to a temporary directory).

    pip install grep-ast 'tree-sitter-language-pack==0.13.*'
    cargo build --release && python3 bench/enrich_vs_grep_ast.py [--files 1000] [--runs 3]

grep-ast: one TreeContext per file with all its lines of interest, then
add_context() and format(), as Aider's repo map does. Bare parse: read and
parse every file with the same tree-sitter grammar, nothing else, one core.
Targets: enrich >= 3x faster than grep-ast, and within 1.5x of the
bare parse.
"""
import argparse
import os
import pathlib
import random
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
BIN = ROOT / "target/release/retry-run"


def pick_files(n):
    stdlib = pathlib.Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in stdlib.rglob("*.py") if "site-packages" not in p.parts and p.stat().st_size > 2000)
    random.Random(7).shuffle(files)
    return stdlib, files[:n]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--per-file", type=int, default=10)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    try:
        from grep_ast import TreeContext
        from tree_sitter_language_pack import get_parser
    except ImportError:
        sys.exit("pip install grep-ast 'tree-sitter-language-pack==0.13.*' first")
    stdlib, files = pick_files(args.files)
    rng = random.Random(11)
    with tempfile.TemporaryDirectory() as tmp:
        sources, lines = {}, []
        for i, src in enumerate(files):
            rel = f"f{i:04}/{src.name}"
            dst = pathlib.Path(tmp, rel)
            dst.parent.mkdir(parents=True)
            shutil.copyfile(src, dst)
            code = dst.read_text(errors="replace")
            n = code.count("\n") or 1
            lois = sorted({rng.randrange(1, n + 1) for _ in range(args.per_file)})
            sources[rel] = lois
            lines += [f"{rel}:{l}:1: F821 undefined name `x{l}`" for l in lois]
        diags = pathlib.Path(tmp, "diagnostics.txt")
        diags.write_text("\n".join(lines) + "\n")
        total_bytes = sum(pathlib.Path(tmp, r).stat().st_size for r in sources)
        parser = get_parser("python")

        def grep_ast():
            for rel, lois in sources.items():
                code = pathlib.Path(tmp, rel).read_text(errors="replace")
                tc = TreeContext(rel, code, color=False, line_number=True, child_context=False,
                                 last_line=False, margin=0, mark_lois=True, loi_pad=3,
                                 show_top_of_file_parent_scope=False)
                tc.add_lines_of_interest([l - 1 for l in lois])
                tc.add_context()
                tc.format()

        def bare_parse():
            for rel in sources:
                parser.parse(pathlib.Path(tmp, rel).read_bytes())

        def enrich():
            subprocess.run([BIN, "enrich", "--input", diags, "--root", tmp, "--format", "json"],
                           check=True, stdout=subprocess.DEVNULL)

        times = {"grep-ast": [], "bare parse": [], "retry-run enrich": []}
        for _ in range(args.runs):
            for name, fn in (("grep-ast", grep_ast), ("bare parse", bare_parse), ("retry-run enrich", enrich)):
                t = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t)
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"{len(sources)} files ({total_bytes / 1e6:.1f} MB), {len(lines)} diagnostics; medians of {args.runs} runs")
        for k, v in med.items():
            print(f"  {k:18} {v:7.3f} s")
        e = med["retry-run enrich"]
        print(f"grep-ast / enrich:   {med['grep-ast'] / e:.1f}x faster (target >= 3x)")
        print(f"enrich / bare parse: {e / med['bare parse']:.2f} (target <= 1.5)")


if __name__ == "__main__":
    main()
