#!/usr/bin/env bash
# Re-captures the test-runner logs of captured/ by running the real runners on
# the sources beside this script; the logs of pytest, cargo test and rustc in
# ../diagnostics/captured/ are part of the same corpus. Absolute paths of
# this machine become @ROOT@.
#
#   npm install jest vitest (node_modules linked into js/); apt-get install golang-go
#   pip install pytest; bash tests/summarize/capture.sh
set -u
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/captured"
mkdir -p "$out"
export CARGO_TARGET_DIR="${TMPDIR:-/tmp}/retry-run-capture-target" NO_COLOR=1 TERM=dumb RUST_BACKTRACE=0
export GOCACHE="${TMPDIR:-/tmp}/retry-run-capture-gocache" GOFLAGS=-count=1 PYTHONDONTWRITEBYTECODE=1

capture() {
    local name="$1" dir="$2"
    shift 2
    (cd "$dir" && "$@" 2>&1) | sed -e "s#$dir#@ROOT@#g" -e '/^npm warn/d' -e 's/^\( *Start at \).*/\1(time)/' \
        -e 's/ ([0-9][0-9]*) panicked at/ panicked at/' >"$out/$name.txt"
    echo "captured $name.txt ($(wc -l <"$out/$name.txt") lines)"
}

capture jest "$here/js" npx jest --ci
capture vitest "$here/js" npx vitest run
capture go-test "$here/go" go test ./...
capture go-test-v "$here/go" go test -v ./...
capture pytest-many-v "$here/py-many" python3 -m pytest -p no:cacheprovider -v
capture cargo-test-many "$here/rust-many" cargo test

# The counting corpus: every runner's own totals, on quiet and verbose
# output, with passing tests whose names say error, failed or panic.
capture pytest-counts-q "$here/py-counts" python3 -m pytest -p no:cacheprovider -q
capture pytest-counts-v "$here/py-counts" python3 -m pytest -p no:cacheprovider -v
capture pytest-counts-ra "$here/py-counts" python3 -m pytest -p no:cacheprovider -rA
capture cargo-test-counts "$here/rust-counts" cargo test --no-fail-fast
capture cargo-test-counts-q "$here/rust-counts" cargo test --no-fail-fast -q
# Each warning of code that the library and its unit tests both compile is
# printed twice (targets lib and lib test): enrich reports it once.
capture clippy-all-targets-json "$here/rust-counts" cargo clippy --all-targets --message-format=json
capture go-counts "$here/go-counts" go test ./...
capture go-counts-v "$here/go-counts" go test -v ./...
# go prints no totals: its -json events are what the tests count against.
capture go-counts-json "$here/go-counts" go test -json ./...
capture jest-counts "$here/js" npx jest --ci --config jest.counts.config.js
capture jest-counts-verbose "$here/js" npx jest --ci --verbose --config jest.counts.config.js
capture vitest-counts "$here/js" npx vitest run --config vitest.counts.config.mjs
capture vitest-counts-verbose "$here/js" npx vitest run --reporter=verbose --config vitest.counts.config.mjs
{ (cd "$here/js" && npx jest --version && npx vitest --version); go version; python3 -m pytest --version; cargo --version; } >"$out/VERSIONS" 2>&1
sed -i '/^npm warn/d' "$out/VERSIONS"
