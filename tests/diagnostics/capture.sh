#!/usr/bin/env bash
# Re-captures every fixture in captured/ by running the real tools on the
# sources beside this script. Absolute paths of this machine are replaced by
# @ROOT@ (the directory the tool ran in); tests put their own root back.
#
#   pip install ruff flake8 pylint mypy pytest && npm install -g pyright
#   bash tests/diagnostics/capture.sh
#
# Tool versions go to captured/VERSIONS. Exit codes of the tools are ignored:
# they all fail, on purpose.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/captured"
mkdir -p "$out"
export CARGO_TARGET_DIR="${TMPDIR:-/tmp}/retry-run-capture-target"
export NO_COLOR=1 TERM=dumb COLUMNS=100 RUST_BACKTRACE=0 PYTHONDONTWRITEBYTECODE=1

# capture NAME DIR COMMAND...: runs COMMAND in DIR, stdout and stderr merged.
capture() {
    local name="$1" dir="$2"
    shift 2
    (cd "$dir" && "$@" 2>&1) | sed -e "s#$dir#@ROOT@#g" -e 's/ ([0-9][0-9]*) panicked at/ panicked at/' >"$out/$name.txt"
    echo "captured $name.txt ($(wc -l <"$out/$name.txt") lines)"
}

py="$here/python"
capture ruff-concise "$py" ruff check --no-cache --output-format=concise .
capture ruff-full "$py" ruff check --no-cache --output-format=full .
capture flake8 "$py" flake8 .
capture pylint "$py" pylint --persistent=n shop broken.py
capture mypy "$py" mypy --no-incremental shop
capture mypy-columns "$py" mypy --no-incremental --show-column-numbers --show-error-codes shop
capture pyright "$py" pyright shop
capture pytest "$py" python3 -m pytest -p no:cacheprovider
capture pytest-tb-short "$py" python3 -m pytest -p no:cacheprovider --tb=short
capture pytest-tb-line "$py" python3 -m pytest -p no:cacheprovider --tb=line
capture pytest-summary "$py" python3 -m pytest -p no:cacheprovider --tb=no -q
capture python-traceback "$py" python3 crash.py

rs="$here/rust"
rm -rf "$CARGO_TARGET_DIR"
capture rustc-human "$rs/broken" cargo build
capture rustc-short "$rs/broken" cargo build --message-format=short
capture cargo-json "$rs/broken" cargo build --message-format=json
capture clippy-human "$rs/lints" cargo clippy
capture clippy-json "$rs/lints" cargo clippy --message-format=json
capture cargo-test "$rs/lints" cargo test
RUST_BACKTRACE=1 capture cargo-test-backtrace "$rs/lints" cargo test

# generic: gcc's `path:line:col: message`
capture generic-gcc "$here/c" gcc -Wall -Wextra -fsyntax-only -fno-diagnostics-color -fno-diagnostics-show-caret ledger.c

{
    ruff --version; flake8 --version | head -1; pylint --version | head -1; mypy --version
    pyright --version; python3 -m pytest --version 2>&1; python3 --version
    rustc --version; cargo --version; cargo clippy --version; gcc --version | head -1
} >"$out/VERSIONS" 2>&1

# Mixed output (issue: honest success): several tools, several tracebacks
# and chained ones in one output; a SyntaxError trace without its header.
mx="$here/mixed"
capture mixed-ruff-then-pytest "$mx" sh -c 'ruff check --no-cache .; python3 -m pytest -p no:cacheprovider tests'
capture mixed-ruff-default "$mx" ruff check --no-cache inventory.py scripts/nightly.py
capture mixed-tracebacks "$mx" python3 scripts/nightly.py
capture mixed-syntax-error "$mx" python3 scripts/broken.py
