#!/usr/bin/env bash
# Re-captures the runner outputs of captured/ that the verdict tests read
# (runner-level failures, test ids, totals): it writes small projects into
# a scratch directory and runs the real runners on them. Each output is
# kept as printed (stdout and stderr); its exit status goes to
# captured/exit-codes.txt. Absolute paths of this machine become @ROOT@.
#
#   needs: pytest (python3 -m pytest), cargo, go (apt-get install golang-go),
#   jest and vitest (npm install jest@30.5.2 vitest@4.1.12 in $JS_MODULES)
#   JS_MODULES=/path/with/node_modules bash tests/runners/capture.sh
#
#   The last section (JS runners: vitest 3 and 4, jest 29 and 30, mocha,
#   node --test; versions in captured/VERSIONS-js) needs one directory with
#   node_modules per runner, e.g. `npm install vitest@3.2.7 typescript` in
#   $VITEST3_MODULES, vitest@4.1.12 typescript in $VITEST4_MODULES,
#   jest@29.7.0 in $JEST29_MODULES, jest@30.5.2 in $JEST30_MODULES and
#   mocha@12.0.3 in $MOCHA_MODULES; ONLY=js-runners runs that section alone
#   (its exit codes replace their own lines of exit-codes.txt).
set -u
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/captured"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
PYTHON="${PYTHON:-python3}"
export CARGO_TARGET_DIR="$scratch/target" NO_COLOR=1 TERM=dumb RUST_BACKTRACE=0 CI=1
export GOCACHE="$scratch/gocache" GOFLAGS=-count=1 PYTHONDONTWRITEBYTECODE=1 GO111MODULE=on GOPROXY=off
codes="$out/exit-codes.txt"
: >"$codes.new"

capture() {
    local name="$1" dir="$2"
    shift 2
    (cd "$dir" && "$@" >"$scratch/out" 2>&1; echo $? >"$scratch/code")
    sed -e "s#$scratch#@ROOT@#g" -e '/^npm warn/d' -e 's/^\( *Start at \).*/\1(time)/' "$scratch/out" >"$out/$name.txt"
    echo "$name $(cat "$scratch/code")" >>"$codes.new"
    echo "captured $name.txt (exit $(cat "$scratch/code"), $(wc -l <"$out/$name.txt") lines)"
}

if [ "${ONLY:-all}" = all ]; then
# pytest: ids with spaces, brackets, unicode, `::` and ` - ` in parameters.
py="$scratch/py" && mkdir -p "$py/tests"
cat >"$py/tests/test_ids.py" <<'PY'
import pytest


@pytest.mark.parametrize("m", ["m x", "é[1]", "a::b", "a - b", "[x]"])
def test_x(m):
    assert m


@pytest.mark.parametrize("n", [1, 2])
def test_n(n):
    assert n == 1


def test_key():
    assert {"a": 1}["b"] == 1


@pytest.mark.skip(reason="not today")
def test_skipped():
    pass


@pytest.mark.xfail
def test_xfail():
    assert False


@pytest.fixture
def broken():
    raise RuntimeError("fixture broke")


def test_setup_error(broken):
    pass
PY
capture pytest-ids-q "$py" env PYTEST_ADDOPTS=-rfEp "$PYTHON" -m pytest -p no:cacheprovider -q tests
capture pytest-ids-v "$py" env PYTEST_ADDOPTS=-rfEp "$PYTHON" -m pytest -p no:cacheprovider -v tests
capture pytest-ids-rA "$py" "$PYTHON" -m pytest -p no:cacheprovider -rA tests
capture pytest-no-tests "$py" "$PYTHON" -m pytest -p no:cacheprovider -q -k nothing_matches tests
capture pytest-usage "$py" "$PYTHON" -m pytest -p no:cacheprovider --no-such-option tests

# pytest: one test failing on the base with an AssertionError, then (as an
# attempt may leave it) with a KeyError; another test passing, then failing.
pc="$scratch/pc" && mkdir -p "$pc/tests"
printf 'def get(d):\n    return d["a"] + 1\n\n\ndef one():\n    return 1\n' >"$pc/calc.py"
printf 'from calc import get, one\n\n\ndef test_get():\n    assert get({"a": 1}) == 1\n\n\ndef test_one():\n    assert one() == 1\n' >"$pc/tests/test_calc.py"
capture pytest-cause-base "$pc" env PYTEST_ADDOPTS=-rfEp PYTHONPATH=. "$PYTHON" -m pytest -p no:cacheprovider -q tests
printf 'def get(d):\n    return d["b"] + 1\n\n\ndef one():\n    return 2\n' >"$pc/calc.py"
capture pytest-cause-attempt "$pc" env PYTEST_ADDOPTS=-rfEp PYTHONPATH=. "$PYTHON" -m pytest -p no:cacheprovider -q tests

# pytest: a deprecation turned into an error by the project's filterwarnings.
pw="$scratch/pw" && mkdir -p "$pw/tests"
printf '[tool.pytest.ini_options]\nfilterwarnings = ["error"]\n' >"$pw/pyproject.toml"
printf 'import warnings\n\nwarnings.warn("old api", DeprecationWarning)\n\n\ndef add(a, b):\n    return a + b\n' >"$pw/calc.py"
printf 'from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n' >"$pw/tests/test_calc.py"
capture pytest-collection-error "$pw" env PYTEST_ADDOPTS=-rfEp PYTHONPATH=. "$PYTHON" -m pytest -p no:cacheprovider -q tests

# cargo test: module paths, an integration test binary, a doc test.
rs="$scratch/rs" && mkdir -p "$rs/src" "$rs/tests"
printf '[package]\nname = "ids"\nversion = "0.1.0"\nedition = "2021"\n' >"$rs/Cargo.toml"
cat >"$rs/src/lib.rs" <<'RS'
/// Adds.
///
/// ```
/// assert_eq!(ids::add(1, 2), 3);
/// ```
pub fn add(a: i32, b: i32) -> i32 {
    a + b
}

#[cfg(test)]
mod tests {
    mod parse {
        #[test]
        fn works() {
            assert_eq!(super::super::add(1, 1), 2);
        }

        #[test]
        fn fails() {
            assert_eq!(super::super::add(1, 1), 3);
        }
    }

    #[test]
    #[ignore]
    fn slow() {}
}
RS
printf '#[test]\nfn from_outside() {\n    assert_eq!(ids::add(2, 2), 4);\n}\n' >"$rs/tests/outside.rs"
capture cargo-test-ids "$rs" cargo test --no-fail-fast
sed -i 's/a + b$/a + b +/' "$rs/src/lib.rs"
capture cargo-test-compile-error "$rs" cargo test --no-fail-fast

# go test: subtests, then a package that does not build.
gm="$scratch/gm" && mkdir -p "$gm/calc"
printf 'module example.com/gm\n\ngo 1.19\n' >"$gm/go.mod"
printf 'package calc\n\nfunc Add(a, b int) int { return a + b }\n' >"$gm/calc/calc.go"
cat >"$gm/calc/calc_test.go" <<'GO'
package calc

import "testing"

func TestX(t *testing.T) {
	t.Run("case_one", func(t *testing.T) {})
	t.Run("case two", func(t *testing.T) { t.Fatal("no") })
}

func TestAdd(t *testing.T) {
	if Add(1, 2) != 3 {
		t.Fatal("add")
	}
}
GO
capture go-test-v-subtests "$gm" env GOFLAGS="-v -count=1" go test ./...
printf 'package calc\n\nfunc Add(a, b int) int { return a + }\n' >"$gm/calc/calc.go"
capture go-test-build-failed "$gm" env GOFLAGS="-v -count=1" go test ./...
printf 'package calc\n\nimport "example.com/nowhere"\n\nfunc Add(a, b int) int { return nowhere.X + a + b }\n' >"$gm/calc/calc.go"
capture go-test-setup-failed "$gm" env GOFLAGS="-v -count=1" go test ./...

# go test: TestGet fails on the base with one message and in the attempt
# with another, at another line; TestOne passes, then fails.
gc="$scratch/gc" && mkdir -p "$gc/calc"
printf 'module example.com/gc\n\ngo 1.19\n' >"$gc/go.mod"
printf 'package calc\n\nfunc Get(m map[string]int) int { return m["a"] + 1 }\n\nfunc One() int { return 1 }\n' >"$gc/calc/calc.go"
cat >"$gc/calc/calc_test.go" <<'GO'
package calc

import "testing"

func TestGet(t *testing.T) {
	m := map[string]int{"a": 1}
	if _, ok := m["b"]; ok {
		t.Fatalf("unexpected key b")
	}
	if got := Get(m); got != 1 {
		t.Fatalf("Get = %d, want 1", got)
	}
}

func TestOne(t *testing.T) {
	if One() != 1 {
		t.Fatal("One != 1")
	}
}
GO
capture go-cause-base "$gc" env GOFLAGS="-v -count=1" go test ./...
printf 'package calc\n\nfunc Get(m map[string]int) int { return m["a"] + 1 }\n\nfunc One() int { return 2 }\n' >"$gc/calc/calc.go"
sed -i 's/map\[string\]int{"a": 1}/map[string]int{"a": 1, "b": 2}/' "$gc/calc/calc_test.go"
capture go-cause-attempt "$gc" env GOFLAGS="-v -count=1" go test ./...

# jest and vitest: `describe > it` names, and a selection that finds nothing.
js="$scratch/js" && mkdir -p "$js"
ln -s "${JS_MODULES:?set JS_MODULES to a directory with node_modules}/node_modules" "$js/node_modules"
printf '{"name":"cart","private":true}\n' >"$js/package.json"
printf 'module.exports = { testMatch: ["**/*.test.js"] };\n' >"$js/jest.config.js"
printf 'export default { test: { include: ["**/*.vi.test.mjs"] } };\n' >"$js/vitest.config.mjs"
cat >"$js/cart.test.js" <<'JS'
describe("cart", () => {
  test("adds an item", () => {
    expect(1 + 1).toBe(2);
  });
  describe("when empty", () => {
    test("totals zero", () => {
      expect(0).toBe(1);
    });
  });
});
test("top level", () => {
  expect(true).toBe(true);
});
JS
cat >"$js/cart.vi.test.mjs" <<'JS'
import { describe, test, expect } from "vitest";
describe("cart", () => {
  test("adds an item", () => {
    expect(1 + 1).toBe(2);
  });
  describe("when empty", () => {
    test("totals zero", () => {
      expect(0).toBe(1);
    });
  });
});
test("top level", () => {
  expect(true).toBe(true);
});
JS
capture jest-verbose "$js" npx jest --ci --verbose
capture jest-default "$js" npx jest --ci
capture jest-no-tests "$js" npx jest --ci nothing_matches
capture vitest-verbose "$js" npx vitest run --reporter=verbose
capture vitest-default "$js" npx vitest run
capture vitest-no-tests "$js" npx vitest run nothing_matches
# jest: `totals zero` fails with a matcher error on the base, with a TypeError in the attempt.
cp "$js/cart.test.js" "$js/cart.test.js.base"
capture jest-cause-base "$js" npx jest --ci --verbose cart.test.js
sed -i 's/expect(0).toBe(1);/expect(null.total).toBe(1);/; s/expect(true).toBe(true);/expect(true).toBe(false);/' "$js/cart.test.js"
capture jest-cause-attempt "$js" npx jest --ci --verbose cart.test.js

{ "$PYTHON" -m pytest --version; cargo --version; go version; (cd "$js" && npx jest --version && npx vitest --version); } >"$out/VERSIONS-verdict" 2>&1
fi

# JS runners: the reporters of vitest 3 and 4, jest 29 and 30, mocha and
# node --test on one small project each: `cart` > `adds an item` passes,
# `cart` > `totals zero` fails an assertion, `cart` > `when empty` >
# `rejects "bad" input #1: a > b [x] é` fails with a TypeError, a skipped
# test, a todo, and `top level` passes; vitest's copy is TypeScript, and a
# second file (`math`) passes whole. Colour is off (NO_COLOR=1) unless the
# name says `color` (FORCE_COLOR=1) or `pipe` (neither variable set).
if [ "${ONLY:-all}" = all ] || [ "${ONLY:-}" = js-runners ]; then
jsr="$scratch/jsr" && mkdir -p "$jsr"
jsversion() { node -p "require('$1/node_modules/$2/package.json').version"; }
# capture, then the `Start at` line of a coloured run, which is timed too,
# and the runner's own node_modules (absolute or relative) become @MODULES@.
capture_js() {
    capture "$@"
    js_clean "$out/$1.txt" "$2"
}
js_clean() {
    local real rel
    real="$(cd "$2/node_modules/.." 2>/dev/null && cd "$(dirname "$(readlink -f node_modules)")" && pwd)"
    sed -i -e 's/^\(\x1b\[[0-9;]*m *Start at \x1b\[[0-9;]*m\).*/\1(time)/' "$1"
    if [ -n "$real" ] && [ "$real" != / ]; then
        rel="$(realpath --relative-to="$2" "$real")"
        sed -i -e "s#$real/node_modules#@MODULES@#g" -e "s#$rel/node_modules#@MODULES@#g" "$1"
    fi
}
# stdout alone into NAME.txt (a JSON reporter's report), stderr into NAME-stderr.txt.
capture_js_stdout() {
    local name="$1" dir="$2"
    shift 2
    (cd "$dir" && "$@" >"$scratch/out" 2>"$scratch/err"; echo $? >"$scratch/code")
    sed -e "s#$scratch#@ROOT@#g" "$scratch/out" >"$out/$name.txt"
    sed -e "s#$scratch#@ROOT@#g" -e '/^npm warn/d' "$scratch/err" >"$out/$name-stderr.txt"
    js_clean "$out/$name.txt" "$dir" && js_clean "$out/$name-stderr.txt" "$dir"
    echo "$name $(cat "$scratch/code")" >>"$codes.new"
    echo "captured $name.txt and $name-stderr.txt (exit $(cat "$scratch/code"))"
}
jsproject() {
    local dir="$1" modules="$2"
    mkdir -p "$dir"
    ln -sfn "$modules/node_modules" "$dir/node_modules"
    printf '{"name":"cart","private":true}\n' >"$dir/package.json"
}

# vitest 3 and 4 (TypeScript).
for modules in "${VITEST3_MODULES:?set VITEST3_MODULES to a directory with node_modules/vitest 3}" \
    "${VITEST4_MODULES:-${JS_MODULES:?set VITEST4_MODULES}}"; do
    v="$(jsversion "$modules" vitest)"
    vt="$jsr/vitest-$v" && jsproject "$vt" "$modules"
    cat >"$vt/cart.test.ts" <<'TS'
import { describe, test, expect } from "vitest";

interface Cart {
  items: string[];
  total: number;
}

function total(cart: Cart | null): number {
  return (cart as Cart).total;
}

describe("cart", () => {
  test("adds an item", () => {
    const cart: Cart = { items: ["apple"], total: 1 };
    expect(cart.items.length).toBe(1);
  });
  test("totals zero", () => {
    expect(total({ items: [], total: 2 })).toBe(0);
  });
  describe("when empty", () => {
    test('rejects "bad" input #1: a > b [x] é', () => {
      expect(total(null)).toBe(0);
    });
    test.skip("is skipped", () => {
      expect(1).toBe(1);
    });
    test.todo("is todo");
  });
});

test("top level", () => {
  expect(true).toBe(true);
});
TS
    cat >"$vt/math.test.ts" <<'TS'
import { test, expect } from "vitest";

test("adds", () => {
  const sum: number = 1 + 1;
  expect(sum).toBe(2);
});
TS
    capture_js "vitest-$v-default" "$vt" npx vitest run
    capture_js "vitest-$v-verbose" "$vt" npx vitest run --reporter=verbose
    capture_js "vitest-$v-json" "$vt" npx vitest run --reporter=json
    capture_js_stdout "vitest-$v-json-stdout" "$vt" npx vitest run --reporter=json
    capture_js "vitest-$v-json-outputfile" "$vt" npx vitest run --reporter=json --outputFile=report.json
    sed -e "s#$scratch#@ROOT@#g" "$vt/report.json" >"$out/vitest-$v-json-outputfile-report.txt"
    js_clean "$out/vitest-$v-json-outputfile-report.txt" "$vt"
    capture_js "vitest-$v-junit" "$vt" npx vitest run --reporter=junit
    capture_js "vitest-$v-tap" "$vt" npx vitest run --reporter=tap
    capture_js "vitest-$v-tap-flat" "$vt" npx vitest run --reporter=tap-flat
    capture_js "vitest-$v-t" "$vt" npx vitest run -t "totals zero"
    capture_js "vitest-$v-default-color" "$vt" env -u NO_COLOR FORCE_COLOR=1 npx vitest run
    # a pipe as retry-run reads it: no colour variable, not CI, a real terminal type.
    capture_js "vitest-$v-default-pipe" "$vt" env -u NO_COLOR -u FORCE_COLOR -u CI TERM=xterm-256color npx vitest run
    # a TypeScript syntax error, and an import of a module that is not there.
    printf 'import { test, expect } from "vitest";\n\ntest("parses", () => {\n  const n: number = ;\n  expect(n).toBe(1);\n});\n' >"$vt/syntax.test.ts"
    printf 'import { test, expect } from "vitest";\nimport { parse } from "./parser";\n\ntest("parses", () => {\n  expect(parse("1")).toBe(1);\n});\n' >"$vt/import.test.ts"
    capture_js "vitest-$v-import-failed" "$vt" npx vitest run
    rm -f "$vt/syntax.test.ts" "$vt/import.test.ts"
done

# jest 29 and 30.
for modules in "${JEST29_MODULES:?set JEST29_MODULES to a directory with node_modules/jest 29}" \
    "${JEST30_MODULES:-${JS_MODULES:?set JEST30_MODULES}}"; do
    v="$(jsversion "$modules" jest)"
    jt="$jsr/jest-$v" && jsproject "$jt" "$modules"
    cat >"$jt/cart.test.js" <<'JS'
function total(cart) {
  return cart.total;
}

describe("cart", () => {
  test("adds an item", () => {
    const cart = { items: ["apple"], total: 1 };
    expect(cart.items.length).toBe(1);
  });
  test("totals zero", () => {
    expect(total({ items: [], total: 2 })).toBe(0);
  });
  describe("when empty", () => {
    test('rejects "bad" input #1: a > b [x] é', () => {
      expect(total(null)).toBe(0);
    });
    test.skip("is skipped", () => {
      expect(1).toBe(1);
    });
    test.todo("is todo");
  });
});

test("top level", () => {
  expect(true).toBe(true);
});
JS
    printf 'test("adds", () => {\n  expect(1 + 1).toBe(2);\n});\n' >"$jt/math.test.js"
    capture_js "jest-$v-default" "$jt" npx jest
    capture_js "jest-$v-verbose" "$jt" npx jest --verbose
    capture_js "jest-$v-json" "$jt" npx jest --json
    capture_js_stdout "jest-$v-json-stdout" "$jt" npx jest --json
    capture_js "jest-$v-ci" "$jt" npx jest --ci
    capture_js "jest-$v-t" "$jt" npx jest -t "cart totals zero"
    # a test file that throws at import, and one that requires a missing module.
    printf 'throw new Error("DATABASE_URL is not set");\n\ntest("connects", () => {\n  expect(1).toBe(1);\n});\n' >"$jt/env.test.js"
    printf 'const { parse } = require("./parser");\n\ntest("parses", () => {\n  expect(parse("1")).toBe(1);\n});\n' >"$jt/import.test.js"
    capture_js "jest-$v-suite-failed" "$jt" npx jest
    rm -f "$jt/env.test.js" "$jt/import.test.js"
done

# mocha (describe/it, node:assert; the todo is an `it` without a function: pending).
mo="$jsr/mocha" && jsproject "$mo" "${MOCHA_MODULES:?set MOCHA_MODULES to a directory with node_modules/mocha}"
mv_version="$(jsversion "$MOCHA_MODULES" mocha)"
cat >"$mo/cart.spec.js" <<'JS'
const assert = require("node:assert");

function total(cart) {
  return cart.total;
}

describe("cart", () => {
  it("adds an item", () => {
    const cart = { items: ["apple"], total: 1 };
    assert.strictEqual(cart.items.length, 1);
  });
  it("totals zero", () => {
    assert.strictEqual(total({ items: [], total: 2 }), 0);
  });
  describe("when empty", () => {
    it('rejects "bad" input #1: a > b [x] é', () => {
      assert.strictEqual(total(null), 0);
    });
    it.skip("is skipped", () => {
      assert.strictEqual(1, 1);
    });
    it("is todo");
  });
});

it("top level", () => {
  assert.strictEqual(true, true);
});
JS
capture_js "mocha-$mv_version-default" "$mo" npx mocha cart.spec.js
capture_js "mocha-$mv_version-tap" "$mo" npx mocha --reporter tap cart.spec.js
capture_js "mocha-$mv_version-json" "$mo" npx mocha --reporter json cart.spec.js
capture_js_stdout "mocha-$mv_version-json-stdout" "$mo" npx mocha --reporter json cart.spec.js
capture_js "mocha-$mv_version-grep" "$mo" npx mocha --grep "totals zero" cart.spec.js

# node --test (node:test, node:assert).
nv="$(node --version | sed 's/^v//')"
nt="$jsr/node" && mkdir -p "$nt"
cat >"$nt/cart.test.mjs" <<'JS'
import { describe, it } from "node:test";
import assert from "node:assert";

function total(cart) {
  return cart.total;
}

describe("cart", () => {
  it("adds an item", () => {
    const cart = { items: ["apple"], total: 1 };
    assert.strictEqual(cart.items.length, 1);
  });
  it("totals zero", () => {
    assert.strictEqual(total({ items: [], total: 2 }), 0);
  });
  describe("when empty", () => {
    it('rejects "bad" input #1: a > b [x] é', () => {
      assert.strictEqual(total(null), 0);
    });
    it.skip("is skipped", () => {
      assert.strictEqual(1, 1);
    });
    it.todo("is todo");
  });
});

it("top level", () => {
  assert.strictEqual(true, true);
});
JS
capture_js "node-$nv-test" "$nt" node --test cart.test.mjs
capture_js "node-$nv-test-tap" "$nt" node --test --test-reporter=tap cart.test.mjs
capture_js "node-$nv-test-spec" "$nt" node --test --test-reporter=spec cart.test.mjs
capture_js "node-$nv-test-name-pattern" "$nt" node --test --test-name-pattern="totals zero" cart.test.mjs

{ for d in "$jsr"/vitest-*; do (cd "$d" && npx vitest --version); done
  for d in "$jsr"/jest-*; do echo "jest $(cd "$d" && npx jest --version)"; done
  echo "mocha $mv_version"; echo "node $(node --version)"; } >"$out/VERSIONS-js" 2>&1
fi

# The exit codes of this run replace their own lines (all of them on a full run).
touch "$codes"
{ awk 'NR == FNR { seen[$1] = 1; next } !($1 in seen)' "$codes.new" "$codes"; cat "$codes.new"; } >"$codes.tmp"
mv "$codes.tmp" "$codes" && rm -f "$codes.new"
