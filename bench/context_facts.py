#!/usr/bin/env python3
"""Key facts in the retry context: how many of the facts a fixer
needs (failing test ids, error locations, codes) survive in the prompt that
`retry-run context` renders at the default budget, against a naive context
that keeps the head of the raw check output at the same size.

Corpus: 26 real failures, the output of real tools captured on small
projects of our own (tests/diagnostics/captured/, tests/summarize/captured/,
re-captured by the capture.sh beside them), with their key facts in
tests/summarize/facts/<name>.txt (the runner logs `summarize` is tested on)
or else tests/context/facts/<name>.txt (the others): one file per failure.

For each failure: a git repository with the project's sources, a check that
prints the captured output (paths as they were, in the attempt's worktree),
an agent that adds a file, `retry-run run` (one attempt, CHECK_FAILURE),
then `retry-run context`. The facts are looked up in the prompt without its
original task, and in the same number of bytes of the raw output's head.

    cargo build --release && python3 bench/context_facts.py [--max-tokens 4000]
"""
import argparse
import os
import pathlib
import shutil
import subprocess
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
BIN = str(ROOT / "target/release/retry-run")
DIAG = ROOT / "tests/diagnostics"
SUMM = ROOT / "tests/summarize"

# name: (captured file, source directory, check kind, input format)
CORPUS = {
    "ruff-concise": (DIAG / "captured/ruff-concise.txt", DIAG / "python", "lint", "ruff"),
    "ruff-full": (DIAG / "captured/ruff-full.txt", DIAG / "python", "lint", "ruff"),
    "flake8": (DIAG / "captured/flake8.txt", DIAG / "python", "lint", "flake8"),
    "pylint": (DIAG / "captured/pylint.txt", DIAG / "python", "lint", "pylint"),
    "mypy": (DIAG / "captured/mypy.txt", DIAG / "python", "lint", "mypy"),
    "mypy-columns": (DIAG / "captured/mypy-columns.txt", DIAG / "python", "lint", "mypy"),
    "pyright": (DIAG / "captured/pyright.txt", DIAG / "python", "lint", "pyright"),
    "pytest": (DIAG / "captured/pytest.txt", DIAG / "python", "test", "pytest"),
    "pytest-tb-short": (DIAG / "captured/pytest-tb-short.txt", DIAG / "python", "test", "pytest"),
    "pytest-tb-line": (DIAG / "captured/pytest-tb-line.txt", DIAG / "python", "test", "pytest"),
    "pytest-summary": (DIAG / "captured/pytest-summary.txt", DIAG / "python", "test", "pytest"),
    "python-traceback": (DIAG / "captured/python-traceback.txt", DIAG / "python", "custom", "python-traceback"),
    "rustc-human": (DIAG / "captured/rustc-human.txt", DIAG / "rust/broken", "build", "rustc"),
    "rustc-short": (DIAG / "captured/rustc-short.txt", DIAG / "rust/broken", "build", "rustc"),
    "cargo-json": (DIAG / "captured/cargo-json.txt", DIAG / "rust/broken", "build", "cargo-json"),
    "clippy-human": (DIAG / "captured/clippy-human.txt", DIAG / "rust/lints", "lint", "rustc"),
    "clippy-json": (DIAG / "captured/clippy-json.txt", DIAG / "rust/lints", "lint", "cargo-json"),
    "cargo-test": (DIAG / "captured/cargo-test.txt", DIAG / "rust/lints", "test", "cargo-test"),
    "cargo-test-backtrace": (DIAG / "captured/cargo-test-backtrace.txt", DIAG / "rust/lints", "test", "cargo-test"),
    "generic-gcc": (DIAG / "captured/generic-gcc.txt", DIAG / "c", "build", "generic"),
    "cargo-test-many": (SUMM / "captured/cargo-test-many.txt", SUMM / "rust-many", "test", "cargo-test"),
    "pytest-many-v": (SUMM / "captured/pytest-many-v.txt", SUMM / "py-many", "test", "pytest"),
    "go-test": (SUMM / "captured/go-test.txt", SUMM / "go", "test", "generic"),
    "go-test-v": (SUMM / "captured/go-test-v.txt", SUMM / "go", "test", "generic"),
    "jest": (SUMM / "captured/jest.txt", SUMM / "js", "test", "generic"),
    "vitest": (SUMM / "captured/vitest.txt", SUMM / "js", "test", "generic"),
}

ENV = dict(os.environ, GIT_AUTHOR_NAME="b", GIT_AUTHOR_EMAIL="b@x", GIT_COMMITTER_NAME="b",
           GIT_COMMITTER_EMAIL="b@x", GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null", CI="1")


def facts_file(name):
    """The key facts of failure `name`: those of the runner logs are shared
    with the summarize test (tests/summarize/facts/), the others are here."""
    shared = ROOT / "tests/summarize/facts" / f"{name}.txt"
    return shared if shared.exists() else ROOT / "tests/context/facts" / f"{name}.txt"


def sh(cmd, cwd, check=True):
    return subprocess.run(cmd, cwd=cwd, env=ENV, check=check, capture_output=True)


def one(name, tmp, max_tokens):
    captured, src, kind, fmt = CORPUS[name]
    repo = tmp / name
    shutil.copytree(src, repo, ignore=shutil.ignore_patterns("target", "node_modules", "__pycache__", ".pytest_cache"))
    task = "fix-" + name
    wt = repo / ".git/retry-run/worktrees" / task
    out = tmp / f"{name}.out"
    raw = captured.read_text()
    out.write_text(raw.replace("@ROOT@", str(wt)))
    (repo / "retry-run.toml").write_text(
        f'max_attempts = 1\n[context]\nmax_tokens = {max_tokens}\n[retry]\nbaseline = false\n'
        f'[[check]]\nname = "{name}"\nrun = "cat {out}; exit 1"\nkind = "{kind}"\nformat = "{fmt}"\n')
    sh(["git", "init", "-q", "-b", "main"], repo)
    sh(["git", "add", "-A"], repo)
    sh(["git", "commit", "-qm", "base"], repo)
    r = sh([BIN, "run", "--quiet", "--task", f"Fix {name}", "--", "sh", "-c", "echo note > NOTES.txt"], repo, check=False)
    assert r.returncode == 1, (name, r.stderr)
    prompt = sh([BIN, "context", task], repo).stdout.decode()
    context = prompt.split("\n## Task\n")[0]
    head = raw.replace("@ROOT@/", "").replace("@ROOT@", ".")[: len(context.encode())]
    facts = [f for f in facts_file(name).read_text().splitlines() if f]
    return facts, [f for f in facts if f in context], [f for f in facts if f in head], len(context.encode())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-tokens", type=int, default=4000)
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    total = in_ctx = in_head = 0
    print(f"budget {args.max_tokens} tokens ({args.max_tokens * 4} bytes, the original task not counted)")
    print(f"{'failure':22} {'facts':>5} {'context':>7} {'head':>5} {'bytes':>6}")
    with tempfile.TemporaryDirectory() as t:
        for name in CORPUS:
            facts, c, h, size = one(name, pathlib.Path(t), args.max_tokens)
            total += len(facts)
            in_ctx += len(c)
            in_head += len(h)
            print(f"{name:22} {len(facts):5} {len(c):7} {len(h):5} {size:6}")
            if args.verbose:
                for f in facts:
                    if f not in c:
                        print(f"    missing from the context: {f}")
    print(f"\n{len(CORPUS)} failures, {total} key facts: context {in_ctx}/{total} ({100 * in_ctx / total:.0f}%), "
          f"head of the raw output at the same size {in_head}/{total} ({100 * in_head / total:.0f}%)")


if __name__ == "__main__":
    main()
