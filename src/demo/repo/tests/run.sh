# A tiny test runner: prints one line per test and a pytest-style summary.
. ./src/calc.sh
failed=0
passed=0
check() {
	name=$1 want=$2 got=$3
	if [ "$got" = "$want" ]; then
		passed=$((passed + 1))
		echo "tests/run.sh::$name PASSED"
	else
		failed=$((failed + 1))
		echo "FAILED tests/run.sh::$name - expected $want, got $got"
	fi
}
check test_add 5 "$(add 2 3)"
check test_mul 6 "$(mul 2 3)"
echo "== $failed failed, $passed passed =="
[ "$failed" -eq 0 ]
