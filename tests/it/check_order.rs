//! The order of an attempt's checks, for real (docs/honest-success.md,
//! "Order and fail-fast"): with the default `fail_fast = "targets"` the
//! task's target runs alone (pytest's node id) beside ruff, and a failing
//! target leaves the full suite not run, which the record and the next
//! prompt say;
//! `fail_fast = "none"` runs every check in full. Checks of one stage run
//! side by side (their recorded time windows overlap) while the record's
//! order stays that of the plan. No timing is asserted.
//!
//! pytest and ruff come from `TestEnv::with_python_tools`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::record::{check_event, events, of_type, outcomes, prompt};
use crate::support::{Agent, FakeAgent, Run, TestEnv};

fn run(env: &TestEnv, r: &Path, agent: &Agent, args: &[&str]) -> Run {
    let mut all = vec!["run", "--quiet"];
    all.extend_from_slice(args);
    env.run_agent(r, &all, agent)
}

const BUGGY: &str = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n";
const FIXED: &str = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n";
const TESTS: &str = "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n";
const TARGET: &str = "tests/test_calc.py::test_add";

/// `calc.py` with `add` wrong, its tests (`test_add` fails on the base),
/// and the checks ruff and pytest after `retry`.
fn python_repo(env: &TestEnv, retry: &str) -> PathBuf {
    let toml = format!(
        "max_attempts = 2\n{retry}\n[[check]]\nname = \"pytest\"\nrun = \"python3 -m pytest -q tests\"\nkind = \"test\"\n\n[[check]]\nname = \"ruff\"\nrun = \"ruff check .\"\nkind = \"lint\"\n"
    );
    env.repo("repo")
        .file("calc.py", BUGGY)
        .file("tests/__init__.py", "")
        .file("tests/test_calc.py", TESTS)
        .file(".gitignore", "__pycache__/\n.pytest_cache/\n.ruff_cache/\n")
        .file("retry-run.toml", &toml)
        .commit()
}

/// The attempt's `CheckFinished` (of configured checks) and `CheckNotRun`
/// events, each as `type check part`.
fn check_events(r: &Path, task: &str, n: u64) -> Vec<String> {
    events(r, task)
        .iter()
        .filter(|e| e["attempt"] == n && e.get("builtin").is_none())
        .filter(|e| e["type"] == "CheckFinished" || e["type"] == "CheckNotRun")
        .map(|e| {
            let part = e["part"].as_str().unwrap_or("");
            format!("{} {} {part}", e["type"].as_str().unwrap_or(""), e["check"].as_str().unwrap_or(""))
                .trim()
                .to_string()
        })
        .collect()
}

/// `events` with its first two (the first stage, ordered by what the base's
/// runs took) sorted.
fn first_stage_sorted(mut events: Vec<String>) -> Vec<String> {
    let n = events.len().min(2);
    events[..n].sort();
    events
}

fn read(r: &Path, task: &str, n: u32, file: &str) -> String {
    std::fs::read_to_string(r.join(format!(".git/retry-run/tasks/{task}/attempts/{n}/checks/{file}")))
        .unwrap_or_else(|e| panic!("{file}: {e}"))
}

#[test]
fn a_failing_target_leaves_the_full_suite_not_run_and_the_prompt_says_so() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let r = python_repo(&env, "");
    let a = env.agent(
        FakeAgent::new()
            .write("calc.py", &BUGGY.replace("a * b", "b * a"))
            .next_call()
            .expect_prompt("not run: pytest (full suite)")
            .write("calc.py", FIXED),
    );
    let out = run(&env, &r, &a, &["--task", "Fix add", "--target", TARGET]);
    assert_eq!(outcomes(&r, "fix-add"), ["CHECK_FAILURE", "SUCCESS"], "{}", out.stderr);
    // Attempt 1: the target alone and ruff (the cheaper on the base first),
    // then nothing more.
    assert_eq!(
        first_stage_sorted(check_events(&r, "fix-add", 1)),
        ["CheckFinished pytest targets", "CheckFinished ruff", "CheckNotRun pytest full"],
        "{}",
        out.stderr
    );
    let targets_out = read(&r, "fix-add", 1, "pytest.targets.out");
    assert!(targets_out.contains("1 failed") && !targets_out.contains("test_mul"), "{targets_out}");
    let ev = events(&r, "fix-add");
    let not_run = of_type(&ev, "CheckNotRun");
    assert_eq!(
        not_run[0]["reason"], "the targets (in `pytest`) failed first; fail_fast = \"targets\"",
        "{}",
        not_run[0]
    );
    // The next prompt says what was not run and why, beside the target's failure.
    let p = prompt(&r, "fix-add", 2);
    assert!(
        p.contains("- not run: pytest (full suite) — the targets (in `pytest`) failed first; fail_fast = \"targets\""),
        "{p}"
    );
    assert!(p.contains(TARGET), "{p}");
    // Attempt 2: the target passes, so the full suite runs and is the check's result.
    assert_eq!(
        first_stage_sorted(check_events(&r, "fix-add", 2)),
        ["CheckFinished pytest targets", "CheckFinished ruff", "CheckFinished pytest"],
    );
    assert!(read(&r, "fix-add", 2, "pytest.out").contains("2 passed"));
    // The report shows the check not run as such, never as passed.
    let report = env.run(&r, &["report", "fix-add"]).stdout;
    assert!(report.contains("- Check `pytest (full suite)`: not run — the targets"), "{report}");
    assert!(report.contains("- Check `pytest` (targets only): "), "{report}");
}

#[test]
fn fail_fast_none_runs_every_check_in_full() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let r = python_repo(&env, "[retry]\nfail_fast = \"none\"\njobs = 1\n");
    let a = env
        .agent(FakeAgent::new().write("calc.py", &BUGGY.replace("a * b", "b * a")).next_call().write("calc.py", FIXED));
    let out = run(&env, &r, &a, &["--task", "Fix add", "--target", TARGET]);
    assert_eq!(outcomes(&r, "fix-add"), ["CHECK_FAILURE", "SUCCESS"], "{}", out.stderr);
    assert_eq!(check_events(&r, "fix-add", 1), ["CheckFinished pytest", "CheckFinished ruff"], "{}", out.stderr);
    assert!(of_type(&events(&r, "fix-add"), "CheckNotRun").is_empty());
    let full = read(&r, "fix-add", 1, "pytest.out");
    assert!(full.contains("1 failed, 1 passed"), "{full}");
    assert!(!prompt(&r, "fix-add", 2).contains("not run:"));
}

/// Two checks that pass only when each sees the other started: they pass
/// only side by side. Their flags are ignored files of the worktree.
const MEET: &str = "[retry]\nbaseline = \"off\"\nfail_fast = \"none\"\njobs = 2\n\n[[check]]\nname = \"left\"\nrun = \"touch left.flag; i=0; while [ ! -f right.flag ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; ls -a; test -f right.flag\"\n\n[[check]]\nname = \"right\"\nrun = \"touch right.flag; i=0; while [ ! -f left.flag ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done; ls -a; test -f left.flag\"\n";

fn window(e: &Value) -> (u64, u64) {
    (e["started_at_ms"].as_u64().expect("started_at_ms"), e["ended_at_ms"].as_u64().expect("ended_at_ms"))
}

#[test]
fn two_checks_run_at_once_and_the_record_keeps_the_plans_order() {
    let env = TestEnv::new();
    let r = env
        .repo("repo")
        .file("a.txt", "a\n")
        .file(".gitignore", "*.flag\n")
        .file("retry-run.toml", format!("max_attempts = 1\n{MEET}"))
        .commit();
    let mut orders = Vec::new();
    for task in ["One", "Two"] {
        let a = env.agent(FakeAgent::new().write("a.txt", &format!("{task}\n")));
        let out = run(&env, &r, &a, &["--task", task]);
        let id = task.to_lowercase();
        let outs = format!("{}\n{}", read(&r, &id, 1, "left.out"), read(&r, &id, 1, "right.out"));
        assert_eq!(outcomes(&r, &id), ["SUCCESS"], "{}\n{outs}", out.stderr);
        let ev = events(&r, &id);
        let finished = of_type(&ev, "CheckFinished");
        let (left, right) = (window(finished[0]), window(finished[1]));
        assert!(left.0 <= right.1 && right.0 <= left.1, "the windows overlap: {left:?} {right:?}");
        orders.push(check_events(&r, &id, 1));
    }
    assert_eq!(orders[0], ["CheckFinished left", "CheckFinished right"]);
    assert_eq!(orders[0], orders[1], "the same inputs, the same order");
}

/// `TESTS` with a test that fails on the base and stays failing.
const TESTS_OLD: &str = "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n\n\ndef test_old():\n    assert mul(2, 2) == 5\n";

#[test]
fn the_bases_full_suite_waits_for_the_first_attempt_that_reaches_it() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let r = python_repo(&env, "");
    std::fs::write(r.join("tests/test_calc.py"), TESTS_OLD).unwrap();
    env.git(&r, &["commit", "-qam", "a test failing on the base"]);
    let a = env
        .agent(FakeAgent::new().write("calc.py", &BUGGY.replace("a * b", "b * a")).next_call().write("calc.py", FIXED));
    let out = run(&env, &r, &a, &["--task", "Fix add", "--target", TARGET]);
    assert_eq!(outcomes(&r, "fix-add"), ["CHECK_FAILURE", "SUCCESS"], "{}", out.stderr);
    let ev = events(&r, "fix-add");
    let base: Vec<&Value> = of_type(&ev, "BaselineChecked").into_iter().filter(|e| e["check"] == "pytest").collect();
    // Before the first agent: the target alone on the base.
    assert_eq!(base.len(), 2, "{base:?}");
    assert_eq!((base[0]["attempt"].as_u64(), base[0]["part"].as_str()), (Some(1), Some("targets")), "{}", base[0]);
    assert_eq!(base[0]["failures"], serde_json::json!([TARGET]), "{}", base[0]);
    // The full suite on the base when attempt 2 first reached it, run on
    // the base's code (its `test_add` fails there, not in attempt 2).
    assert_eq!((base[1]["attempt"].as_u64(), base[1].get("part")), (Some(2), None), "{}", base[1]);
    let mut failures: Vec<&str> = base[1]["failures"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    failures.sort();
    assert_eq!(failures, [TARGET, "tests/test_calc.py::test_old"], "{}", base[1]);
    // In attempt 2, between its targets and its full suite.
    let order: Vec<String> = ev
        .iter()
        .filter(|e| e["attempt"] == 2 && e.get("builtin").is_none())
        .filter(|e| e["type"] == "CheckFinished" || (e["type"] == "BaselineChecked" && e["check"] == "pytest"))
        .map(|e| {
            format!(
                "{} {} {}",
                e["type"].as_str().unwrap(),
                e["check"].as_str().unwrap(),
                e["part"].as_str().unwrap_or("")
            )
        })
        .collect();
    let at = |s: &str| order.iter().position(|x| x.trim() == s).unwrap_or_else(|| panic!("{s}: {order:?}"));
    assert!(at("CheckFinished pytest targets") < at("BaselineChecked pytest"), "{order:?}");
    assert!(at("BaselineChecked pytest") < at("CheckFinished pytest"), "{order:?}");
    // The full suite ran on attempt 2's files, put back after the base's run:
    // only the base's own failure is left, and tolerated.
    let full = read(&r, "fix-add", 2, "pytest.out");
    assert!(full.contains("1 failed, 2 passed"), "{full}");
    // Attempt 1 never waited for it.
    assert!(!ev.iter().any(|e| e["attempt"] == 1
        && e["type"] == "BaselineChecked"
        && e.get("part").is_none()
        && e["check"] == "pytest"));
}

/// `python_repo` with `max_attempts` and a suite that would take ten
/// minutes on the base: a run must not wait for it.
fn slow_repo(env: &TestEnv, max_attempts: u32) -> PathBuf {
    let r = python_repo(env, "");
    let slow = format!("{TESTS}\n\ndef test_slow():\n    import time\n    time.sleep(600)\n");
    std::fs::write(r.join("tests/test_calc.py"), slow).unwrap();
    let toml = std::fs::read_to_string(r.join("retry-run.toml")).unwrap();
    std::fs::write(
        r.join("retry-run.toml"),
        toml.replace("max_attempts = 2", &format!("max_attempts = {max_attempts}")),
    )
    .unwrap();
    env.git(&r, &["commit", "-qam", "a slow suite"]);
    r
}

#[test]
fn a_run_that_ends_first_stops_the_bases_runs_aside_and_removes_their_worktree() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let r = slow_repo(&env, 1);
    let a = env.agent(FakeAgent::new().write("calc.py", &BUGGY.replace("a * b", "b * a")));
    let out = run(&env, &r, &a, &["--task", "Fix add", "--target", TARGET]);
    assert_eq!(outcomes(&r, "fix-add"), ["CHECK_FAILURE"], "{}", out.stderr);
    let ev = events(&r, "fix-add");
    let base: Vec<&Value> = of_type(&ev, "BaselineChecked");
    assert!(base.iter().all(|e| e["part"] == "targets" || e["check"] == "ruff"), "{base:?}");
    // Its worktree is gone with the run, and nothing of it was cached.
    let listed = env.git(&r, &["worktree", "list", "--porcelain"]);
    assert!(!listed.contains("+base"), "{listed}");
    let cache = r.join(".git/retry-run/baselines");
    let cached: Vec<String> = std::fs::read_dir(&cache)
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    assert!(cached.len() <= 1, "only ruff's base run is cached: {cached:?}");
}

#[test]
fn a_run_killed_while_the_base_runs_aside_leaves_a_worktree_clean_removes() {
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let Some(env) = TestEnv::with_python_tools() else { return };
    let r = slow_repo(&env, 2);
    let a = env.agent(FakeAgent::new().sleep("600"));
    let args = ["run", "--quiet", "--task", "Fix add", "--target", TARGET];
    let mut child =
        env.retry_run(&r).args(a.after(&args)).stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("run");
    let wt_root = r.join(".git/retry-run/worktrees");
    let deadline = Instant::now() + Duration::from_secs(120);
    // The base's full suite under way aside, beside the agent.
    while crate::support::processes_in(&wt_root.join("fix-add+base")).is_empty() {
        assert!(Instant::now() < deadline, "the base's run aside never started");
        assert!(child.try_wait().expect("status").is_none(), "the run ended before the base's run aside started");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    for p in crate::support::processes_in(&wt_root) {
        if let Some(pid) = p.split_whitespace().next().and_then(|p| p.parse::<i32>().ok()) {
            // SAFETY: kill(2) on a process this test's run started.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
    let left = wt_root.join("fix-add+base");
    assert!(left.exists());
    env.run(&r, &["clean", "fix-add"]).assert_code(0);
    assert!(!left.exists(), "clean removes the worktree of the base's runs aside");
    assert!(!env.git(&r, &["worktree", "list", "--porcelain"]).contains("+base"));
}

/// A target whose suite was not run because a check before it failed
/// (its runner cannot be narrowed to the target: a script runs it) is
/// said to be not run, with the check that stopped it: never deleted,
/// and never "the same test failed" (the test is not blamed).
#[test]
fn a_target_left_not_run_by_an_earlier_failure_is_said_not_run_never_deleted() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let toml = "max_attempts = 2\n\n[[check]]\nname = \"ruff\"\nrun = \"ruff check .\"\nkind = \"lint\"\n\n[[check]]\nname = \"tests\"\nrun = \"sh run-tests.sh\"\nkind = \"test\"\n";
    let r = env
        .repo("repo")
        .file("calc.py", BUGGY)
        .file("tests/__init__.py", "")
        .file("tests/test_calc.py", TESTS)
        .file("run-tests.sh", "python3 -m pytest -q -rA tests\n")
        .file(".gitignore", "__pycache__/\n.pytest_cache/\n.ruff_cache/\n")
        .file("retry-run.toml", toml)
        .commit();
    // Each attempt adds an unused import: ruff fails first, every time.
    let a = env.agent(FakeAgent::new().write("calc.py", &format!("import os\n{FIXED}")));
    let out = run(&env, &r, &a, &["--task", "Fix add", "--target", TARGET]);
    assert_eq!(outcomes(&r, "fix-add"), ["CHECK_FAILURE", "CHECK_FAILURE"], "{}", out.stderr);
    assert_eq!(check_event(&r, "fix-add", 1, "targets")["passed"], false);
    let p = prompt(&r, "fix-add", 2);
    assert!(p.contains(&format!("`{TARGET}` was not run: check")) && !p.contains("deleted, renamed"), "{p}");
    let report = env.run(&r, &["report", "fix-add"]).stdout;
    assert!(!report.contains("may be wrong") && !report.contains("deleted, renamed"), "{report}");
}
