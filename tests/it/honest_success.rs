//! Honest success, on a real Python repository checked by the real pytest:
//! a failure already on the base still fails by default, targets must
//! pass, and tests removed, skipped or de-asserted are caught and fed back.
//!
//! pytest comes from `TestEnv::with_python_tools`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::record::{check_event, events, outcomes, prompt};
use crate::support::{Agent, FakeAgent, Run, TestEnv};

const CALC: &str = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n";

const TESTS: &str = "from calc import add, mul\n\n\ndef test_add():\n    result = add(2, 3)\n    assert result == 5\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n    assert mul(0, 5) == 0\n";

const PYTEST: &str =
    "[[check]]\nname = \"pytest\"\nrun = \"python3 -m pytest -p no:cacheprovider -rA tests\"\nkind = \"test\"\n";

/// `calc.py` with a bug, `tests/test_calc.py` whose `test_add` fails on
/// the base, and `retry-run.toml` = `toml` + a pytest check.
fn python_repo(env: &TestEnv, toml: &str) -> PathBuf {
    env.repo("repo")
        .file("calc.py", CALC)
        .file("tests/test_calc.py", TESTS)
        .file(".gitignore", "__pycache__/\n")
        .file("retry-run.toml", format!("{toml}\n{PYTEST}"))
        .commit()
}

/// `text` with `old` replaced by `new`; `old` must be in it.
fn edit(text: &str, old: &str, new: &str) -> String {
    assert!(text.contains(old), "{old:?} is not in {text:?}");
    text.replace(old, new)
}

/// `calc.py` with `add` fixed.
fn fixed_calc() -> String {
    edit(CALC, "a - b", "a + b")
}

/// An agent that, on the base's files, writes `path` as `content`.
fn rewrites(agent: FakeAgent, path: &str, base: &str, content: &str) -> FakeAgent {
    agent.expect(path, base).write(path, content)
}

/// Its first call does `wrong`; the next fix `add`, when the prompt says
/// this is attempt 2 (else they stop).
fn fix_when_told(wrong: FakeAgent) -> FakeAgent {
    rewrites(wrong.next_call().expect_prompt("Attempt 2 of"), "calc.py", CALC, &fixed_calc())
}

fn run(env: &TestEnv, r: &Path, agent: &Agent, args: &[&str]) -> Run {
    let mut all = vec!["run", "--quiet"];
    all.extend_from_slice(args);
    env.run_agent(r, &all, agent)
}

/// `tests/test_calc.py` without `test_add`.
fn without_test_add() -> String {
    edit(TESTS, "def test_add():\n    result = add(2, 3)\n    assert result == 5\n", "")
}

#[test]
fn by_default_a_wrong_fix_of_a_test_failing_on_the_base_fails_and_is_labelled() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let r = python_repo(&env, "max_attempts = 2\n");
    let wrong = rewrites(FakeAgent::new(), "calc.py", CALC, &edit(CALC, "a - b", "a * b"));
    let a = env.agent(fix_when_told(wrong));
    let out = run(&env, &r, &a, &["--task", "Fix add so that the tests pass"]);
    out.assert_code(0);
    assert_eq!(outcomes(&r, "fix-add-so-that-the-tests-pass"), ["CHECK_FAILURE", "SUCCESS"]);
    let check = check_event(&r, "fix-add-so-that-the-tests-pass", 1, "pytest");
    assert_eq!(check["passed"], false, "{check}");
    assert_eq!(check["pre_existing_failures"], serde_json::json!(["tests/test_calc.py::test_add"]), "{check}");
    let p = prompt(&r, "fix-add-so-that-the-tests-pass", 2);
    assert!(
        p.contains("**Required change:** Make the failing test pass (already failing on the base): `tests/test_calc.py::test_add`."),
        "{p}"
    );
    assert!(p.contains("tests/test_calc.py::test_add - assert 6 == 5 (already failing on the base)"), "{p}");
}

#[test]
fn tolerate_fails_on_a_target_left_failing_and_otherwise_names_what_it_tolerated() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let r = python_repo(&env, "max_attempts = 1\n[retry]\nbaseline = \"tolerate\"\n");
    let a = env.agent(rewrites(FakeAgent::new(), "calc.py", CALC, &edit(CALC, "return a * b", "return b * a")));
    // With a target: the target still fails, so the attempt does.
    let out = run(&env, &r, &a, &["--task", "With target", "--target", "tests/test_calc.py::test_add"]);
    out.assert_code(1);
    assert_eq!(outcomes(&r, "with-target"), ["CHECK_FAILURE"]);
    let pytest = check_event(&r, "with-target", 1, "pytest");
    assert_eq!(pytest["passed"], true, "tolerated: {pytest}");
    let targets = check_event(&r, "with-target", 1, "targets");
    assert_eq!(targets["new_failures"], serde_json::json!(["tests/test_calc.py::test_add"]), "{targets}");
    let ctx = env.run(&r, &["context", "with-target"]).stdout;
    assert!(ctx.contains("Make the task's target test pass: `tests/test_calc.py::test_add`."), "{ctx}");
    // A target no check reports on the base (it does not exist) stops the
    // run before any attempt, naming the ids nearest to it; with
    // --allow-new-target it fails the attempt, named so.
    let out = run(&env, &r, &a, &["--task", "Ghost", "--target", "tests/test_calc.py::test_ghost"]);
    out.assert_code(2);
    assert!(out.stderr.contains("nearest ids that exist: `tests/test_calc.py::"), "{}", out.stderr);
    let out =
        run(&env, &r, &a, &["--task", "Ghost", "--target", "tests/test_calc.py::test_ghost", "--allow-new-target"]);
    out.assert_code(1);
    let ctx = env.run(&r, &["context", "ghost"]).stdout;
    assert!(ctx.contains("`tests/test_calc.py::test_ghost` was not reported by any check"), "{ctx}");
    // Without targets: success, and the tolerated failure is named.
    let out = run(&env, &r, &a, &["--task", "No target"]);
    out.assert_code(0);
    assert!(out.stdout.contains("still failing, as on the base"), "{}", out.stdout);
    assert!(out.stdout.contains("pytest: tests/test_calc.py::test_add"), "{}", out.stdout);
    let ok = events(&r, "no-target").into_iter().find(|e| e["type"] == "TaskSucceeded").expect("TaskSucceeded");
    assert_eq!(ok["tolerated"], serde_json::json!(["pytest: tests/test_calc.py::test_add"]));
    let report = env.run(&r, &["report", "no-target"]).stdout;
    assert!(report.contains("tolerated by `retry.baseline = \"tolerate\"`"), "{report}");
}

#[test]
fn a_target_in_the_front_matter_must_pass() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let r = python_repo(&env, "max_attempts = 2\n[retry]\nbaseline = \"off\"\n");
    let task = env.write("task.md", "+++\ntargets = [\"tests/test_calc.py::test_add\"]\n+++\n# Fix add\n");
    let wrong = rewrites(FakeAgent::new(), "calc.py", CALC, &edit(CALC, "a - b", "a * b"));
    let a = env.agent(fix_when_told(wrong));
    let out = run(&env, &r, &a, &["--task-file", &task.display().to_string()]);
    out.assert_code(0);
    assert_eq!(outcomes(&r, "fix-add"), ["CHECK_FAILURE", "SUCCESS"]);
    assert_eq!(check_event(&r, "fix-add", 2, "targets")["passed"], true);
}

/// Each way of weakening `test_add` is caught (pytest itself passes), fed
/// back, and the next attempt, fixing the code instead, succeeds.
#[test]
fn deleting_skipping_or_de_asserting_a_failing_test_is_caught_then_fixed() {
    let skipped = edit(
        &edit(TESTS, "from calc", "import pytest\nfrom calc"),
        "def test_add",
        "@pytest.mark.skip(reason=\"later\")\ndef test_add",
    );
    let cases: &[(&str, String, &str)] = &[
        ("delete", without_test_add(), "removed or renamed"),
        ("skip", skipped, "skipped now (`pytest.mark.skip`)"),
        (
            "de-assert",
            edit(TESTS, "    assert result == 5", "    # assert result == 5"),
            "1 assertion on the base, 0 now",
        ),
    ];
    for (name, weakened, finding) in cases {
        let Some(env) = TestEnv::with_python_tools() else { return };
        let r = python_repo(&env, "max_attempts = 2\n[retry]\nbaseline = \"off\"\n");
        let a = env.agent(fix_when_told(rewrites(FakeAgent::new(), "tests/test_calc.py", TESTS, weakened)));
        let task = format!("Weaken by {name}");
        let id = format!("weaken-by-{name}");
        run(&env, &r, &a, &["--task", &task]).assert_code(0);
        assert_eq!(outcomes(&r, &id), ["CHECK_FAILURE", "SUCCESS"], "{name}");
        let pytest = check_event(&r, &id, 1, "pytest");
        assert_eq!(pytest["passed"], true, "{name}: pytest is green after weakening: {pytest}");
        let integrity = check_event(&r, &id, 1, "test-integrity");
        assert_eq!(integrity["passed"], false, "{name}: {integrity}");
        let p = prompt(&r, &id, 2);
        assert!(
            p.contains("**Required change:** Restore the test you removed, skipped or weakened (`tests/test_calc.py::test_add`) and make the code pass it instead."),
            "{name}: {p}"
        );
        assert!(p.contains(finding), "{name}: {p}");
        assert_eq!(check_event(&r, &id, 2, "test-integrity")["passed"], Value::Null, "attempt 2 touched no test");
    }
}

#[test]
fn warn_mode_succeeds_and_reports_to_the_human_the_verifier_and_stats() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    // The verifier writes only where sandbox.writable lets it.
    let state = env.path("verifier-state");
    std::fs::create_dir_all(&state).expect("mkdir");
    let seen = state.join("verifier-stdin.md");
    let verifier = env.write(
        "verifier.sh",
        format!("cat > '{}'\necho '{{\"verdict\": \"approved\", \"confidence\": 0.9}}'\n", seen.display()),
    );
    let r = python_repo(
        &env,
        &format!(
            "max_attempts = 1\n[retry]\nbaseline = \"off\"\ntest_weakening = \"warn\"\n[verifier]\nrun = \"sh {}\"\n[sandbox]\nwritable = [\"{}\"]\n",
            verifier.display(),
            state.display()
        ),
    );
    let a = env.agent(rewrites(FakeAgent::new(), "tests/test_calc.py", TESTS, &without_test_add()));
    let out = run(&env, &r, &a, &["--task", "Drop it"]);
    out.assert_code(0);
    assert!(
        out.stdout.contains("test-integrity warning: `tests/test_calc.py::test_add`: removed or renamed"),
        "{}",
        out.stdout
    );
    let integrity = check_event(&r, "drop-it", 1, "test-integrity");
    assert_eq!(integrity["passed"], true);
    assert_eq!(integrity["warnings"][0], "test-integrity|removed|tests/test_calc.py::test_add", "{integrity}");
    let stdin = std::fs::read_to_string(&seen).expect("the verifier ran");
    assert!(stdin.contains("Test integrity warnings") && stdin.contains("tests/test_calc.py::test_add"), "{stdin}");
    let report = env.run(&r, &["report", "drop-it"]).stdout;
    assert!(report.contains("warning: `tests/test_calc.py::test_add`: removed or renamed"), "{report}");
    let stats = env.run(&r, &["stats"]).stdout;
    assert!(stats.contains("test-integrity warnings: 1 attempt"), "{stats}");
}

#[test]
fn a_real_fix_that_adds_a_test_or_moves_one_succeeds_at_once() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let r = python_repo(&env, "max_attempts = 1\n");
    // Fixes add, moves test_mul to a file of its own, adds a test.
    let moved = "def test_mul():\n    assert mul(2, 3) == 6\n    assert mul(0, 5) == 0\n";
    let tests = edit(TESTS, moved, "") + "\n\ndef test_add_negative():\n    assert add(-1, -1) == -2\n";
    let agent = rewrites(FakeAgent::new(), "calc.py", CALC, &fixed_calc());
    let agent = rewrites(agent, "tests/test_calc.py", TESTS, &tests);
    let a = env.agent(agent.write("tests/test_mul.py", &format!("from calc import mul\n\n\n{moved}")));
    let out = run(&env, &r, &a, &["--task", "Fix add for real", "--target", "tests/test_calc.py::test_add"]);
    out.assert_code(0);
    assert_eq!(outcomes(&r, "fix-add-for-real"), ["SUCCESS"]);
    let integrity = check_event(&r, "fix-add-for-real", 1, "test-integrity");
    assert_eq!((integrity["passed"].as_bool(), integrity["warnings"].as_array().map(Vec::len)), (Some(true), Some(0)));
}

#[test]
fn with_the_baseline_a_deleted_test_is_also_fewer_tests_run() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let r = python_repo(&env, "max_attempts = 1\n");
    let a = env.agent(rewrites(FakeAgent::new(), "tests/test_calc.py", TESTS, &without_test_add()));
    run(&env, &r, &a, &["--task", "Delete it"]).assert_code(1);
    let integrity = check_event(&r, "delete-it", 1, "test-integrity");
    assert_eq!(
        integrity["new_failures"],
        serde_json::json!(["test-integrity|removed|tests/test_calc.py::test_add", "test-integrity|fewer-run|pytest"]),
        "{integrity}"
    );
    let report = env.run(&r, &["report", "delete-it"]).stdout;
    assert!(report.contains("`pytest`: the check ran 1 test where the base ran 2"), "{report}");
}
