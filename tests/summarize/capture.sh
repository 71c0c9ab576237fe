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
    (cd "$dir" && "$@" 2>&1) | sed -e "s#$dir#@ROOT@#g" -e '/^npm warn/d' -e 's/^\( *Start at \).*/\1(time)/' >"$out/$name.txt"
    echo "captured $name.txt ($(wc -l <"$out/$name.txt") lines)"
}

capture jest "$here/js" npx jest --ci
capture vitest "$here/js" npx vitest run
capture go-test "$here/go" go test ./...
capture go-test-v "$here/go" go test -v ./...
capture pytest-many-v "$here/py-many" python3 -m pytest -p no:cacheprovider -v
capture cargo-test-many "$here/rust-many" cargo test
{ (cd "$here/js" && npx jest --version && npx vitest --version); go version; python3 -m pytest --version; cargo --version; } >"$out/VERSIONS" 2>&1
sed -i '/^npm warn/d' "$out/VERSIONS"
