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

# TypeScript/JavaScript: tsc, eslint 9 and 10 (typescript-eslint, flat config),
# biome and oxlint on the project in ts/. Node tools are not installed
# globally: JS_DIAG_MODULES is a directory whose node_modules holds
#   npm install typescript@6.0.3 eslint@10 typescript-eslint@8 globals \
#     eslint-formatter-unix eslint-formatter-compact @biomejs/biome oxlint
# and JS_DIAG_ESLINT9 (default $JS_DIAG_MODULES/eslint9) one with
#   npm install typescript@6.0.3 eslint@9 typescript-eslint@8 globals \
#     eslint-formatter-unix eslint-formatter-compact
# and, optional, JS_DIAG_TS7 (default $JS_DIAG_MODULES/ts7) one with
# typescript@7 (the native tsc). ts/ is copied to a scratch directory beside
# a symlink to those node_modules (the config files import typescript-eslint);
# that directory becomes @ROOT@. ESLint 9 and 10 have no unix/compact
# formatters in core: `-f unix` and `-f compact` load eslint-formatter-unix
# and eslint-formatter-compact. tsc ignores NO_COLOR: `--pretty true` prints
# ANSI colours either way. `bash capture.sh js` recaptures only this part.
capture_js() {
    local mods="${JS_DIAG_MODULES:-}"
    if [ -z "$mods" ] || ! command -v node >/dev/null || [ ! -d "$mods/node_modules" ]; then
        echo "skipped TypeScript/JavaScript: set JS_DIAG_MODULES to a directory with node_modules (see capture.sh)"
        return 0
    fi
    local mods9="${JS_DIAG_ESLINT9:-$mods/eslint9}" mods7="${JS_DIAG_TS7:-$mods/ts7}"
    local scratch bin
    scratch="$(mktemp -d)"
    mkdir "$scratch/ts" "$scratch/ts9"
    cp -r "$here/ts/." "$scratch/ts/"
    cp -r "$here/ts/." "$scratch/ts9/"
    ln -s "$mods/node_modules" "$scratch/ts/node_modules"
    ln -s "$mods9/node_modules" "$scratch/ts9/node_modules"
    local ts="$scratch/ts" ts9="$scratch/ts9"
    bin="$ts/node_modules/.bin"
    capture tsc-plain "$ts" "$bin/tsc" --noEmit --pretty false
    capture tsc-pretty "$ts" "$bin/tsc" --noEmit --pretty true
    capture tsc-pretty-color "$ts" env -u NO_COLOR FORCE_COLOR=1 "$bin/tsc" --noEmit --pretty true
    if [ -x "$mods7/node_modules/.bin/tsc" ]; then
        capture tsc7-plain "$ts" "$mods7/node_modules/.bin/tsc" --noEmit --pretty false
        capture tsc7-pretty "$ts" "$mods7/node_modules/.bin/tsc" --noEmit --pretty true
    fi
    local major dir
    for dir in "$ts" "$ts9"; do
        major="$("$dir/node_modules/.bin/eslint" --version | sed 's/^v\([0-9]*\).*/\1/')"
        capture "eslint$major-stylish" "$dir" "$dir/node_modules/.bin/eslint" src
        capture "eslint$major-json" "$dir" "$dir/node_modules/.bin/eslint" -f json src
        capture "eslint$major-unix" "$dir" "$dir/node_modules/.bin/eslint" -f unix src
        capture "eslint$major-compact" "$dir" "$dir/node_modules/.bin/eslint" -f compact src
    done
    major="$("$bin/eslint" --version | sed 's/^v\([0-9]*\).*/\1/')"
    capture "eslint$major-stylish-color" "$ts" env -u NO_COLOR FORCE_COLOR=1 "$bin/eslint" --color src
    capture biome-lint "$ts" "$bin/biome" lint --colors=off src
    capture biome-check "$ts" "$bin/biome" check --colors=off src
    capture biome-json "$ts" "$bin/biome" lint --colors=off --reporter=json src
    capture biome-concise "$ts" "$bin/biome" lint --colors=off --reporter=concise src
    capture oxlint "$ts" "$bin/oxlint" --threads=1 src
    capture oxlint-json "$ts" "$bin/oxlint" --threads=1 -f json src
    capture oxlint-unix "$ts" "$bin/oxlint" --threads=1 -f unix src
    sed -i -e '/^\(node\|tsc\|tsc7\|eslint\|eslint9\|eslint10\|eslint-formatter-unix\|typescript-eslint\|biome\|oxlint\) /d' "$out/VERSIONS"
    {
        echo "node $(node --version)"
        echo "tsc $("$bin/tsc" --version)"
        [ -x "$mods7/node_modules/.bin/tsc" ] && echo "tsc7 $("$mods7/node_modules/.bin/tsc" --version)"
        echo "eslint $("$bin/eslint" --version)"
        echo "eslint9 $("$ts9/node_modules/.bin/eslint" --version)"
        echo "typescript-eslint $(node -p 'require(process.argv[1]).version' "$mods/node_modules/typescript-eslint/package.json") (eslint9: $(node -p 'require(process.argv[1]).version' "$mods9/node_modules/typescript-eslint/package.json"))"
        echo "eslint-formatter-unix $(node -p 'require(process.argv[1]).version' "$mods/node_modules/eslint-formatter-unix/package.json"), eslint-formatter-compact $(node -p 'require(process.argv[1]).version' "$mods/node_modules/eslint-formatter-compact/package.json")"
        echo "biome $("$bin/biome" --version)"
        echo "oxlint $("$bin/oxlint" --version)"
    } >>"$out/VERSIONS" 2>&1
    rm -rf "$scratch"
}
if [ "${1:-}" = js ]; then
    capture_js
    exit 0
fi

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

capture_js
