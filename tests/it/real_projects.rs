//! A real project as a new user has it: a `src/` layout package installed
//! editable into the project's `.venv` (by the real pip), lint debt on the
//! base (the real ruff), a test failing on the base that is not the task's
//! target, and the config `retry-run init` wrote. Scripted agents make the
//! mistakes real ones make.

use std::path::PathBuf;

use crate::support::record::{check_event, events, outcomes, prompt};
use crate::support::{FakeAgent, TestEnv, tools};

const PYPROJECT: &str = "[build-system]\nrequires = [\"setuptools>=61\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"calc\"\nversion = \"0.1\"\n\n[tool.setuptools.packages.find]\nwhere = [\"src\"]\n\n[tool.ruff]\nline-length = 100\n";

/// `add` is wrong; `os` and `sys` are imported for nothing (lint debt).
const CALC: &str =
    "import os\nimport sys\n\n\ndef add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n";

/// More lint debt: an unused import and an ambiguous name; `scale` is
/// wrong too, but that is not the task.
const LEGACY: &str = "import json\n\n\ndef scale(x):\n    l = 3\n    return x * l\n";

/// A module nobody imports, with an unused import of its own.
const SPARE: &str = "import re\n\n\ndef spare():\n    return 1\n";

const TESTS: &str = "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n";

const LEGACY_TESTS: &str = "from calc.legacy import scale\n\n\ndef test_scale():\n    assert scale(2) == 4\n";

const TARGET: &str = "tests/test_calc.py::test_add";

/// The project, committed, its `.venv` holding it editable, and the
/// config `init` wrote. `None` when PyPI cannot be reached (said SKIPPED).
fn project(env: &TestEnv) -> Option<PathBuf> {
    let r = env
        .repo("repo")
        .file("pyproject.toml", PYPROJECT)
        .file("src/calc/__init__.py", CALC)
        .file("src/calc/legacy.py", LEGACY)
        .file("src/calc/unused_mod.py", SPARE)
        .file("tests/test_calc.py", TESTS)
        .file("tests/test_legacy.py", LEGACY_TESTS)
        .file(".gitignore", ".venv/\n*.egg-info/\n__pycache__/\n.pytest_cache/\n.ruff_cache/\nretry-run.toml\n")
        .commit();
    if let Err(why) = tools::editable_venv(&r.join(".venv"), &r) {
        if why.contains("cannot be reached") {
            tools::skipped(&why);
            return None;
        }
        panic!("{why}");
    }
    // The checkout's code is what the venv imports.
    let out = env
        .command(r.join(".venv/bin/python3"), env.root())
        .args(["-c", "import calc; print(calc.__file__)"])
        .output()
        .expect("python");
    assert!(String::from_utf8_lossy(&out.stdout).starts_with(&r.join("src").display().to_string()), "{out:?}");
    let init = env.run(&r, &["init"]);
    init.assert_code(0);
    assert!(init.stdout.contains("ruff: 5 diagnostics already on the base"), "{}", init.stdout);
    let config = std::fs::read_to_string(r.join("retry-run.toml")).expect("init wrote it");
    assert!(config.contains(".venv/bin/python") && config.contains("ruff check"), "{config}");
    Some(r)
}

fn calc(add: &str, extra_import: &str) -> String {
    CALC.replace("import os\n", &format!("import os\n{extra_import}")).replace("return a - b", add)
}

#[test]
fn the_right_fix_succeeds_at_attempt_2_with_the_config_init_wrote_under_an_editable_install() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let Some(r) = project(&env) else { return };
    // Attempt 1 gets add wrong; attempt 2 fixes it once the prompt names
    // the target and the attempt's own error (1, not the checkout's -1).
    let agent = env.agent(
        FakeAgent::new()
            .write("src/calc/__init__.py", &calc("return b - a", ""))
            .next_call()
            .expect_prompt(TARGET)
            .expect_prompt("assert 1 == 5")
            .write("src/calc/__init__.py", &calc("return a + b", "")),
    );
    let out = env.run_agent(&r, &["run", "--quiet", "--task", "Fix add", "--target", TARGET], &agent);
    out.assert_code(0);
    assert_eq!(outcomes(&r, "fix-add"), ["CHECK_FAILURE", "SUCCESS"]);
    // Attempt 1 failed on its own error, in the worktree, on the target alone.
    let targets = check_event(&r, "fix-add", 1, "targets");
    assert_eq!(targets["new_failures"], serde_json::json!([TARGET]), "{targets}");
    let pytest = check_event(&r, "fix-add", 1, "pytest");
    assert_eq!(pytest["passed"], true, "the base's own failures are not the attempt's: {pytest}");
    let p2 = prompt(&r, "fix-add", 2);
    assert!(p2.contains("Make the task's target test pass: `tests/test_calc.py::test_add`."), "{p2}");
    assert!(!p2.contains("-1 == 5"), "the checkout's code was tested: {p2}");
    assert!(!p2.contains(&r.join("src").display().to_string()), "a traceback into the checkout: {p2}");
    assert!(!p2.contains("fix it too") && !p2.contains("Fix the 5 lint"), "{p2}");
    // The full suite waited for the target (`fail_fast = "targets"`, the
    // default), and the prompt says it was not run; attempt 2's full run
    // names the base's own failure (below), not blamed.
    assert!(p2.contains("not run: pytest (full suite)") && p2.contains("fail_fast"), "{p2}");
    // Attempt 2: pytest passes with test_scale still failing, ruff with its 5 old diagnostics.
    let ruff = check_event(&r, "fix-add", 2, "ruff");
    assert_eq!((ruff["passed"].as_bool(), ruff["pre_existing"].as_u64()), (Some(true), Some(5)), "{ruff}");
    assert!(out.stdout.contains("ruff: 5 already on the base, 0 new"), "{}", out.stdout);
    assert!(out.stdout.contains("pytest: tests/test_legacy.py::test_scale"), "{}", out.stdout);
    let report = env.run(&r, &["report", "fix-add"]).stdout;
    assert!(report.contains("already on the base, 0 new"), "{report}");
}

#[test]
fn new_lint_fails_old_lint_does_not_and_a_renamed_file_keeps_its_old_diagnostics() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let Some(r) = project(&env) else { return };
    // Every check runs: a near miss is told only when the full suite ran
    // (by default a new lint error leaves it not run).
    let config = std::fs::read_to_string(r.join("retry-run.toml")).expect("init wrote it");
    std::fs::write(r.join("retry-run.toml"), format!("{config}\n[retry]\nfail_fast = \"none\"\n")).expect("config");
    // Right fix plus one new unused import: a near miss on ruff alone.
    let agent = env.agent(
        FakeAgent::new()
            .write("src/calc/__init__.py", &calc("return a + b", "import json\n"))
            .next_call()
            .expect_prompt("passed every test and target and failed only on 1 new diagnostic of `ruff`")
            .write("src/calc/__init__.py", &calc("return a + b", "")),
    );
    let out = env.run_agent(&r, &["run", "--quiet", "--task", "Fix add", "--target", TARGET], &agent);
    out.assert_code(0);
    assert_eq!(outcomes(&r, "fix-add"), ["CHECK_FAILURE", "SUCCESS"]);
    let ruff = check_event(&r, "fix-add", 1, "ruff");
    assert_eq!(ruff["passed"], false, "{ruff}");
    assert_eq!(ruff["new_failures"].as_array().map(Vec::len), Some(1), "{ruff}");
    assert!(ruff["new_failures"][0].as_str().is_some_and(|k| k.contains("`json`")), "{ruff}");
    assert_eq!(ruff["pre_existing"], 5, "{ruff}");
    let p2 = prompt(&r, "fix-add", 2);
    assert!(p2.contains("F401"), "{p2}");
    assert!(
        !p2.contains("src/calc/legacy.py") && !p2.contains("E741"),
        "the base's diagnostics crowd the prompt: {p2}"
    );
    assert!(p2.contains("You may start from its diff") && p2.contains("+import json"), "{p2}");

    // A renamed file's diagnostics are the base's, under its new name.
    let agent = env.agent(
        FakeAgent::new()
            .write("src/calc/__init__.py", &calc("return a + b", ""))
            .sh("mv src/calc/unused_mod.py src/calc/spare.py"),
    );
    let out = env.run_agent(&r, &["run", "--quiet", "--task", "Rename", "--target", TARGET], &agent);
    out.assert_code(0);
    let ruff = check_event(&r, "rename", 1, "ruff");
    assert_eq!((ruff["passed"].as_bool(), ruff["pre_existing"].as_u64()), (Some(true), Some(5)), "{ruff}");
}

#[test]
fn a_check_that_runs_the_checkouts_code_is_flagged_and_judges_nothing() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let r = env.repo("repo").file("app.py", "X = 1\n").file("tool.py", "raise SystemExit(check())\n").commit();
    // The check names the checkout's copy of the tool by its absolute path.
    let tool = r.join("tool.py");
    std::fs::write(
        r.join("retry-run.toml"),
        format!(
            "max_attempts = 2\n[[check]]\nname = \"tool\"\nrun = \"python3 {}\"\nkind = \"test\"\n",
            tool.display()
        ),
    )
    .expect("config");
    let agent = env.agent(FakeAgent::new().append("app.py", "Y = 2\n"));
    let out = env.run_agent(&r, &["run", "--quiet", "--task", "Touch"], &agent);
    out.assert_code(1);
    assert_eq!(outcomes(&r, "touch"), ["UNVERIFIED"], "not counted as a failure, so not retried");
    let done = events(&r, "touch").into_iter().find(|e| e["type"] == "AttemptCompleted").expect("completed");
    assert!(done["reason"].as_str().is_some_and(|s| s.contains("tested your checkout")), "{done}");
    let report = env.run(&r, &["report", "touch"]).stdout;
    assert!(report.contains("tested your checkout, not the attempt") && report.contains("tool.py"), "{report}");
    assert!(report.contains("python -m TOOL"), "{report}");
}
