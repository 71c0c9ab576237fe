#!/usr/bin/env python3
"""`retry-run enrich` on real lint output: `ruff check --select ALL` over
the requests sdist and `cargo clippy -W clippy::pedantic` over the
regex-syntax and memchr crates, against Aider's grep-ast (one TreeContext
per file with all its lines of interest, add_context(), format(), as its
repo map does) and a bare one-thread tree-sitter parse of the same files,
in the same run. Order rotates run by run; medians.

    python3 -m venv /tmp/bench-venv && /tmp/bench-venv/bin/pip install grep-ast 'tree-sitter-language-pack==0.13.*'
    cargo build --release && /tmp/bench-venv/bin/python bench/enrich_real_lint.py [--runs 5]

Needs ruff, cargo with clippy, and the registries (pip download, cargo fetch).
Targets: enrich >= 4x faster than grep-ast, <= 1.2x the bare parse.
"""
import argparse
import collections
import os
import pathlib
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
BIN = ROOT / "target/release/retry-run"
CRATES = {"memchr": "2.8.3", "regex-syntax": "0.8.11"}
REQUESTS = "2.34.2"
LOCATION = re.compile(r"^([^:\s][^:]*\.(?:py|rs)):(\d+):\d+: ")


def crate_sources(tmp):
    """The crates' sources, through `cargo fetch` of a scratch project."""
    scratch = pathlib.Path(tmp, "scratch")
    (scratch / "src").mkdir(parents=True)
    deps = "\n".join(f'{name} = "={v}"' for name, v in CRATES.items())
    (scratch / "Cargo.toml").write_text(f'[package]\nname = "scratch"\nversion = "0.0.0"\nedition = "2021"\n\n[dependencies]\n{deps}\n')
    (scratch / "src/lib.rs").write_text("")
    subprocess.run(["cargo", "fetch", "-q"], cwd=scratch, check=True)
    home = pathlib.Path(os.environ.get("CARGO_HOME", pathlib.Path.home() / ".cargo"))
    for name, v in CRATES.items():
        src = next((home / "registry/src").glob(f"*/{name}-{v}"))
        shutil.copytree(src, pathlib.Path(tmp, name))


def lint(tmp):
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
                    f"requests=={REQUESTS}", "-d", tmp], check=True)
    with tarfile.open(pathlib.Path(tmp, f"requests-{REQUESTS}.tar.gz")) as t:
        t.extractall(tmp, filter="data")
    crate_sources(tmp)
    members = ", ".join(f'"{n}"' for n in CRATES)
    pathlib.Path(tmp, "Cargo.toml").write_text(f"[workspace]\nmembers = [{members}]\nresolver = \"2\"\n")
    ruff = subprocess.run(["ruff", "check", "--select", "ALL", "--output-format", "concise", "--no-cache",
                           f"requests-{REQUESTS}"], cwd=tmp, capture_output=True, text=True).stdout
    clippy = subprocess.run(["cargo", "clippy", "-q", "--message-format", "short", "--", "-W", "clippy::pedantic"],
                            cwd=tmp, capture_output=True, text=True).stderr
    return ruff + clippy


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    try:
        from grep_ast import TreeContext
        from tree_sitter_language_pack import get_parser
    except ImportError:
        sys.exit("run with a python that has grep-ast and tree-sitter-language-pack==0.13.* (see the docstring)")
    with tempfile.TemporaryDirectory() as tmp:
        output = lint(tmp)
        diags = pathlib.Path(tmp, "lint.txt")
        diags.write_text(output)
        lois = collections.defaultdict(set)
        for line in output.splitlines():
            m = LOCATION.match(line)
            if m:
                lois[m.group(1)].add(int(m.group(2)))
        files = sorted(lois)
        n_diag = sum(1 for l in output.splitlines() if LOCATION.match(l))
        size = sum(pathlib.Path(tmp, f).stat().st_size for f in files)
        parsers = {"py": get_parser("python"), "rs": get_parser("rust")}

        def grep_ast():
            for rel in files:
                code = pathlib.Path(tmp, rel).read_text(errors="replace")
                tc = TreeContext(rel, code, color=False, line_number=True, child_context=False, last_line=False,
                                 margin=0, mark_lois=True, loi_pad=3, show_top_of_file_parent_scope=False)
                tc.add_lines_of_interest([l - 1 for l in sorted(lois[rel])])
                tc.add_context()
                tc.format()

        def bare_parse():
            for rel in files:
                parsers[rel.rsplit(".", 1)[1]].parse(pathlib.Path(tmp, rel).read_bytes())

        def enrich():
            subprocess.run([BIN, "enrich", "--input", diags, "--root", tmp, "--format", "json"], check=True,
                           stdout=subprocess.DEVNULL)

        sides = [("grep-ast", grep_ast), ("bare parse", bare_parse), ("retry-run enrich", enrich)]
        times = {name: [] for name, _ in sides}
        for r in range(args.runs):
            k = r % len(sides)
            for name, fn in sides[k:] + sides[:k]:
                t = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t)
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"{n_diag} diagnostics (ruff --select ALL on requests {REQUESTS}, clippy pedantic on "
              f"{', '.join(CRATES)}) in {len(files)} files ({size / 1e6:.1f} MB); medians of {args.runs} runs")
        for k, v in med.items():
            print(f"  {k:18} {v:7.3f} s")
        e = med["retry-run enrich"]
        print(f"grep-ast / enrich:   {med['grep-ast'] / e:.1f}x faster (target >= 4x)")
        print(f"enrich / bare parse: {e / med['bare parse']:.2f} (target <= 1.2)")


if __name__ == "__main__":
    main()
