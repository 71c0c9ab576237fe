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

mv "$codes.new" "$codes"
{ "$PYTHON" -m pytest --version; cargo --version; go version; (cd "$js" && npx jest --version && npx vitest --version); } >"$out/VERSIONS-verdict" 2>&1
