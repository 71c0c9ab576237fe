#!/usr/bin/env bash
# Re-captures the CI logs beside this script from a real pytest run on
# project/ (a cart whose discount and price parsing are wrong: two tests
# fail), as a CI machine would print them:
#
#   python3 -m venv /tmp/venv && /tmp/venv/bin/pip install pytest
#   PATH=/tmp/venv/bin:$PATH bash tests/review/ci-log/capture.sh
#
# - pytest.log: `python -m pytest -rA`, plain, the checkout's path replaced
#   by a GitLab runner's (/builds/acme/shop);
# - actions.log: the same run with colours (`--color=yes`, as CI setups
#   force them), wrapped the way GitHub Actions writes a job's raw log: a
#   byte-order mark, a timestamp before every line, the step's `##[group]`
#   header, and `##[error]Process completed with exit code N.` at the end;
#   the checkout's path replaced by a GitHub runner's
#   (/home/runner/work/shop/shop). The wrapping is done by `actions_log`
#   below, never by hand;
# - gh-run-log.log: actions.log as `gh run view --log-failed` prints it,
#   each line after `JOB<TAB>STEP<TAB>` (made from actions.log below);
# - passed.log: a run of the passing tests only (nothing failed in it).
set -u
here="$(cd "$(dirname "$0")" && pwd)"
project="$here/project"
export PYTHONDONTWRITEBYTECODE=1 COLUMNS=80 TERM=dumb
unset NO_COLOR FORCE_COLOR PY_COLORS

# run ARGS...: pytest in project/, stdout and stderr merged; its exit code
# in $code.
run() {
    out="$(cd "$project" && python3 -m pytest -p no:cacheprovider "$@" 2>&1)"
    code=$?
}

# actions_log CODE STEP: stdin as GitHub Actions logs step STEP that
# exited with CODE: each line prefixed with a timestamp (100 ns ticks, 1.5 ms
# apart from 2026-05-01T12:00:00Z), the step's header grouped first.
actions_log() {
    {
        printf '##[group]Run %s\n%s\nshell: /usr/bin/bash -e {0}\nenv:\n  pythonLocation: /opt/hostedtoolcache/Python/3.11.7/x64\n##[endgroup]\n' "$2" "$2"
        cat
        [ "$1" -ne 0 ] && printf '##[error]Process completed with exit code %s.\n' "$1"
    } | awk 'BEGIN { t = 0 } {
        s = int(t / 10000000); f = t % 10000000
        printf "%s2026-05-01T12:%02d:%02d.%07dZ %s\n", (NR == 1 ? "\357\273\277" : ""), int(s / 60), s % 60, f, $0
        t += 15000
    }'
}

run -rA
printf '%s\n' "$out" | sed -e "s#$project#/builds/acme/shop#g" >"$here/pytest.log"
echo "captured pytest.log (exit $code, $(wc -l <"$here/pytest.log") lines)"

run --color=yes
printf '%s\n' "$out" | sed -e "s#$project#/home/runner/work/shop/shop#g" | actions_log "$code" "python -m pytest" >"$here/actions.log"
echo "captured actions.log (exit $code, $(wc -l <"$here/actions.log") lines)"

sed -e 's/^/test\tRun python -m pytest\t/' "$here/actions.log" >"$here/gh-run-log.log"
echo "made gh-run-log.log from actions.log"

run -k "not whole_numbers and not discount"
printf '%s\n' "$out" | sed -e "s#$project#/builds/acme/shop#g" >"$here/passed.log"
echo "captured passed.log (exit $code, $(wc -l <"$here/passed.log") lines)"

{ python3 -m pytest --version 2>&1; python3 --version; } >"$here/VERSIONS"
