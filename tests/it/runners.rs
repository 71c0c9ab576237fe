//! The test runners under retry-run's checks, for real: a quiet pytest
//! still names its passing tests (the variables retry-run adds), a failed
//! check runs again only its failing tests where the runner can select them
//! and not at all otherwise, a flaky test is still found flaky, and a check
//! that times out says TIMEOUT and runs once.
//!
//! pytest comes from `TestEnv::with_python_tools`.

use std::path::{Path, PathBuf};

use crate::support::record::{check_event, outcomes, prompt};
use crate::support::{Agent, FakeAgent, Run, TestEnv};

const CALC: &str = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n";

const TESTS: &str = "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n";

/// Fails on its first run in a worktree, passes after (it leaves an ignored
/// marker file beside itself).
const FLAKY: &str = "import os\n\n\ndef test_flaky():\n    if not os.path.exists(\".flaky-marker\"):\n        open(\".flaky-marker\", \"w\").close()\n        assert False, \"first run\"\n";

/// pytest as it is usually run: quiet, its cache on.
const QUIET_PYTEST: &str = "[[check]]\nname = \"pytest\"\nrun = \"python3 -m pytest -q tests\"\nkind = \"test\"\n";

/// `calc.py` with `add` wrong, its tests (`test_add` fails), and
/// `retry-run.toml` = `toml`.
fn python_repo(env: &TestEnv, toml: &str) -> PathBuf {
    env.repo("repo")
        .file("calc.py", CALC)
        .file("tests/test_calc.py", TESTS)
        .file(".gitignore", "__pycache__/\n.pytest_cache/\n.flaky-marker\n")
        .file("retry-run.toml", toml)
        .commit()
}

fn run(env: &TestEnv, r: &Path, agent: &Agent, args: &[&str]) -> Run {
    let mut all = vec!["run", "--quiet"];
    all.extend_from_slice(args);
    env.run_agent(r, &all, agent)
}

/// The output files of attempt `n`'s check `check`: its run and reruns.
fn check_outputs(r: &Path, task: &str, n: u32, check: &str) -> Vec<String> {
    let dir = r.join(format!(".git/retry-run/tasks/{task}/attempts/{n}/checks"));
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(&format!("{check}.")) && n.ends_with(".out"))
        .collect();
    names.sort();
    names
}

fn check_output(r: &Path, task: &str, n: u32, file: &str) -> String {
    std::fs::read_to_string(r.join(format!(".git/retry-run/tasks/{task}/attempts/{n}/checks/{file}")))
        .unwrap_or_else(|e| panic!("{file}: {e}"))
}

#[test]
fn a_target_passes_under_a_quiet_pytest() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let r = python_repo(&env, &format!("max_attempts = 1\n{QUIET_PYTEST}"));
    let a = env.agent(FakeAgent::new().expect("calc.py", CALC).write("calc.py", &CALC.replace("a - b", "a + b")));
    run(&env, &r, &a, &["--task", "Fix add", "--target", "tests/test_calc.py::test_add"]).assert_code(0);
    assert_eq!(outcomes(&r, "fix-add"), ["SUCCESS"]);
    let targets = check_event(&r, "fix-add", 1, "targets");
    assert_eq!(targets["passed"], true, "{targets}");
    // The check's command line is as configured; retry-run added, and recorded, the report chars.
    let pytest = check_event(&r, "fix-add", 1, "pytest");
    assert_eq!(pytest["env"]["PYTEST_ADDOPTS"], "-rfEp", "{pytest}");
    assert_eq!(pytest["env"]["GOFLAGS"], "-v", "{pytest}");
    let out = check_output(&r, "fix-add", 1, "pytest.out");
    assert!(out.contains("PASSED tests/test_calc.py::test_add"), "{out}");
}

#[test]
fn a_failing_check_that_names_no_test_runs_once() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let toml = "max_attempts = 1\n[retry]\nbaseline = \"off\"\n[[check]]\nname = \"lint\"\nrun = \"echo 'calc.py is not formatted'; exit 1\"\n";
    let r = python_repo(&env, toml);
    let a = env.agent(FakeAgent::new().write("notes.txt", "n\n"));
    run(&env, &r, &a, &["--task", "Lint"]).assert_code(1);
    assert_eq!(outcomes(&r, "lint"), ["CHECK_FAILURE"]);
    let lint = check_event(&r, "lint", 1, "lint");
    assert_eq!((lint["runs"].as_u64(), lint["flaky"].as_bool()), (Some(1), Some(false)), "{lint}");
    assert_eq!(lint["rerun"], serde_json::json!({"none": "no failing test named"}), "{lint}");
    assert_eq!(check_outputs(&r, "lint", 1, "lint"), ["lint.out"]);
}

#[test]
fn a_deterministic_pytest_failure_reruns_only_the_failing_test() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let r = python_repo(&env, &format!("max_attempts = 1\n{QUIET_PYTEST}"));
    let a = env.agent(FakeAgent::new().write("notes.txt", "n\n"));
    run(&env, &r, &a, &["--task", "Leave it"]).assert_code(1);
    assert_eq!(outcomes(&r, "leave-it"), ["CHECK_FAILURE"]);
    let pytest = check_event(&r, "leave-it", 1, "pytest");
    assert_eq!((pytest["runs"].as_u64(), pytest["flaky"].as_bool()), (Some(2), Some(false)), "{pytest}");
    assert_eq!(
        pytest["rerun"],
        serde_json::json!({"tests": ["tests/test_calc.py::test_add"], "env": {"PYTEST_ADDOPTS": "-rfEp --lf --lfnf=none"}}),
        "{pytest}"
    );
    assert_eq!(check_outputs(&r, "leave-it", 1, "pytest"), ["pytest.out", "pytest.rerun-1.out"]);
    let first = check_output(&r, "leave-it", 1, "pytest.out");
    assert!(first.contains("PASSED tests/test_calc.py::test_mul") && first.contains("1 failed, 1 passed"), "{first}");
    // The rerun ran test_add alone.
    let rerun = check_output(&r, "leave-it", 1, "pytest.rerun-1.out");
    assert!(rerun.contains("FAILED tests/test_calc.py::test_add"), "{rerun}");
    assert!(rerun.contains("\n1 failed in ") && !rerun.contains("test_mul"), "{rerun}");
}

#[test]
fn a_test_that_fails_then_passes_is_still_flaky() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    // No run on the base: it would leave the marker.
    let r = python_repo(&env, &format!("max_attempts = 1\n[retry]\nbaseline = \"off\"\n{QUIET_PYTEST}"));
    let fix = FakeAgent::new().write("calc.py", &CALC.replace("a - b", "a + b")).write("tests/test_flaky.py", FLAKY);
    run(&env, &r, &env.agent(fix), &["--task", "Flaky"]).assert_code(0);
    assert_eq!(outcomes(&r, "flaky"), ["SUCCESS"]);
    let pytest = check_event(&r, "flaky", 1, "pytest");
    assert_eq!(
        (pytest["passed"].as_bool(), pytest["flaky"].as_bool(), pytest["runs"].as_u64()),
        (Some(true), Some(true), Some(2)),
        "{pytest}"
    );
    assert_eq!(pytest["rerun"]["tests"], serde_json::json!(["tests/test_flaky.py::test_flaky"]), "{pytest}");
    let rerun = check_output(&r, "flaky", 1, "pytest.rerun-1.out");
    assert!(rerun.contains("PASSED tests/test_flaky.py::test_flaky") && !rerun.contains("test_add"), "{rerun}");
}

#[test]
fn a_check_that_times_out_says_timeout_and_runs_once() {
    let env = TestEnv::new();
    let toml = "max_attempts = 2\n[retry]\nbaseline = \"off\"\n[[check]]\nname = \"slow\"\nrun = \"echo 'FAILED tests/t.py::test_slow'; sleep 30\"\ntimeout = \"1s\"\n";
    let r = python_repo(&env, toml);
    let agent = FakeAgent::new().write("notes.txt", "n\n").next_call().write("notes.txt", "m\n");
    let out = run(&env, &r, &env.agent(agent), &["--task", "Slow"]);
    out.assert_code(1);
    assert!(out.stderr.contains("slow TIMEOUT"), "{}", out.stderr);
    let slow = check_event(&r, "slow", 1, "slow");
    assert_eq!((slow["timed_out"].as_bool(), slow["runs"].as_u64()), (Some(true), Some(1)), "{slow}");
    assert_eq!(slow["rerun"], serde_json::json!({"none": "timed out"}), "{slow}");
    assert_eq!(check_outputs(&r, "slow", 1, "slow"), ["slow.out"]);
    let report = env.run(&r, &["report", "slow"]).stdout;
    assert!(report.contains("Check `slow`: TIMEOUT"), "{report}");
    // The next attempt's prompt says so too.
    let p = prompt(&r, "slow", 2);
    assert!(p.contains("Check `slow` TIMEOUT: it was stopped at its time limit"), "{p}");
    assert!(p.contains("slow TIMEOUT"), "{p}");
}
