#!/usr/bin/env bash
# Writes a large verbose runner log (e.g. ~1 GiB) for the streaming readers:
# generates FILES test files of TESTS tests each (every 50th fails, with a
# long name and a matcher diff) and runs the runner with its verbose reporter
# again and again, appending to LOG until it holds SIZE bytes. Not run by
# capture.sh; its output is not kept in the repository.
#
#   RUNNER=vitest|jest MODULES=/dir/with/node_modules SIZE=1073741824 \
#   FILES=200 TESTS=500 LOG=/tmp/big.log bash tests/runners/big-log.sh
set -u
runner="${RUNNER:-vitest}" modules="${MODULES:?set MODULES to a directory with node_modules/$runner}"
size="${SIZE:-1073741824}" files="${FILES:-200}" tests="${TESTS:-500}" log="${LOG:-/tmp/$runner-big.log}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
ln -s "$modules/node_modules" "$dir/node_modules"
printf '{"name":"big","private":true}\n' >"$dir/package.json"
for f in $(seq 1 "$files"); do
    {
        [ "$runner" = vitest ] && echo 'import { describe, test, expect } from "vitest";'
        echo "describe(\"suite $f\", () => {"
        for t in $(seq 1 "$tests"); do
            if [ $((t % 50)) -eq 0 ]; then
                echo "  test(\"case $t with a rather long name: \\\"quoted\\\" [x] > y\", () => { expect({ a: $t, b: [1, 2, 3] }).toEqual({ a: 0, b: [1, 2] }); });"
            else
                echo "  test(\"case $t\", () => { expect($t).toBe($t); });"
            fi
        done
        echo "});"
    } >"$dir/big$f.test.js"
done
: >"$log"
cd "$dir" || exit 2
while [ "$(stat -c %s "$log")" -lt "$size" ]; do
    if [ "$runner" = vitest ]; then
        NO_COLOR=1 npx vitest run --reporter=verbose >>"$log" 2>&1
    else
        NO_COLOR=1 npx jest --ci --verbose >>"$log" 2>&1
    fi
    echo "$(stat -c %s "$log") bytes in $log"
done
