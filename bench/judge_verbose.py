#!/usr/bin/env python3
"""Judging a check against the runner's own time (issue 39): a pytest
project of 5,000 tests (100 files of 50; 40 fail on the base, among them
the target and parametrized ids with spaces and brackets; the attempt fixes
the target and 9 others and breaks one that passed), run by the real
`pytest -v` with the `PYTEST_ADDOPTS=-rfEp` that retry-run adds, on the
base and on the attempt. Judging is what retry-run does with the check's
output: `retry-run judge-output` runs exactly the gate's code (parsing,
failure keys, the targets, the comparison with the base's output) over the
saved outputs and reports its own time; the process's wall time is printed
too.

Each round runs the attempt's pytest and the judging in the same round,
which goes first alternating; the figure is the median of `--runs` rounds
(default 2). pytest is the CI cache's (~/.cache/retry-run-ci/venv), else
python3's.

    cargo build --profile quick && python3 bench/judge_verbose.py [--runs 2] [--bin PATH]

Target: judging under 2% of the runner's own time.
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
FILES, PER_FILE = 100, 50
TARGET = "tests/test_m000.py::test_case[m x-0]"


def python():
    venv = pathlib.Path.home() / ".cache/retry-run-ci/venv/bin/python"
    return str(venv) if venv.exists() else "python3"


def binary(given):
    if given:
        return given
    target = pathlib.Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    for profile in ["release", "quick", "debug"]:
        b = target / profile / "retry-run"
        if b.exists():
            return str(b)
    raise SystemExit("no retry-run binary: cargo build --profile quick")


def failing_on_base(f, i):
    # 40 failures on the base: the first 8 tests of files 0..4.
    return f < 5 and i < 8


def failing_in_attempt(f, i):
    # The attempt fixes 10 of them (file 0 and two of file 1), breaks one that passed.
    if f == 0 or (f == 1 and i < 2):
        return False
    return failing_on_base(f, i) or (f == 99 and i == 49)


def write_project(root, failing):
    tests = root / "tests"
    tests.mkdir(parents=True, exist_ok=True)
    for f in range(FILES):
        cases = ", ".join(f'("m x" if {i} == 0 else "[p{i}]", {i})' for i in range(PER_FILE))
        bad = [i for i in range(PER_FILE) if failing(f, i)]
        (tests / f"test_m{f:03d}.py").write_text(
            "import pytest\n\n\n"
            f"@pytest.mark.parametrize(('label', 'n'), [{cases}], ids=lambda v: str(v))\n"
            "def test_case(label, n):\n"
            f"    assert n not in {bad!r}, f'case {{n}} of {f}'\n"
        )


def run_pytest(root, out):
    env = dict(os.environ, PYTEST_ADDOPTS="-rfEp", PYTHONDONTWRITEBYTECODE="1")
    started = time.perf_counter()
    with open(out, "wb") as f:
        code = subprocess.run([python(), "-m", "pytest", "-p", "no:cacheprovider", "-v", "tests"],
                              cwd=root, env=env, stdout=f, stderr=subprocess.STDOUT).returncode
    return time.perf_counter() - started, code


def judge(binary_path, out, base_out, code):
    cmd = [binary_path, "judge-output", "--run", "python -m pytest -v tests", "--output", str(out),
           "--exit", str(code), "--base-output", str(base_out), "--base-exit", "1", "--target", TARGET]
    started = time.perf_counter()
    res = subprocess.run(cmd, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - started
    return json.loads(res.stdout), wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--bin")
    args = ap.parse_args()
    bin_path = binary(args.bin)
    with tempfile.TemporaryDirectory(prefix="judge-verbose-") as tmp:
        tmp = pathlib.Path(tmp)
        base, attempt = tmp / "base", tmp / "attempt"
        write_project(base, failing_on_base)
        write_project(attempt, failing_in_attempt)
        base_out = tmp / "base.out"
        _, base_code = run_pytest(base, base_out)
        assert base_code == 1, f"pytest on the base exited {base_code}"
        rounds = []
        for r in range(args.runs):
            out = tmp / f"attempt-{r}.out"
            steps = ["pytest", "judge"] if r % 2 == 0 else ["judge", "pytest"]
            if steps[0] == "judge":
                # Judging needs an output: the previous round's (identical runs), or a fresh one.
                prev = tmp / "attempt-prime.out"
                if not prev.exists():
                    run_pytest(attempt, prev)
                verdict, judge_wall = judge(bin_path, prev, base_out, 1)
                runner, code = run_pytest(attempt, out)
            else:
                runner, code = run_pytest(attempt, out)
                verdict, judge_wall = judge(bin_path, out, base_out, code)
            assert verdict["tests_ran"] == FILES * PER_FILE, verdict
            assert verdict["targets_passed"] is True, verdict
            assert verdict["new_failures"] == 1 and verdict["pre_existing"] == 30, verdict
            ms = verdict["judge_ms_median"]
            rounds.append((runner * 1000, ms, judge_wall * 1000))
            print(f"round {r + 1} ({' then '.join(steps)}): pytest -v {runner * 1000:.0f} ms, "
                  f"judging {ms:.1f} ms ({judge_wall * 1000:.1f} ms as a whole process), "
                  f"output {verdict['output_bytes'] / 1024:.0f} KiB")
        runner = statistics.median(r[0] for r in rounds)
        ms = statistics.median(r[1] for r in rounds)
        wall = statistics.median(r[2] for r in rounds)
        print(f"binary: {bin_path}")
        print(f"median: pytest -v of {FILES * PER_FILE} tests {runner:.0f} ms; judging {ms:.1f} ms "
              f"= {100 * ms / runner:.2f}% of the runner's time (whole process {wall:.1f} ms = {100 * wall / runner:.2f}%)")
        print("target: under 2%:", "met" if ms / runner < 0.02 else "MISSED")


if __name__ == "__main__":
    main()
