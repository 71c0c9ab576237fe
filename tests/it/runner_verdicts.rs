//! Verdicts from what the runner actually did, with the real runners: a
//! pytest session interrupted by a collection error (the project's
//! `filterwarnings = error`) is never `ok`, on the base or in an attempt;
//! targets whose ids hold spaces, brackets or unicode pass when the runner
//! says PASSED; a base failure whose cause changes stays the base's; a Rust
//! target named by its module path passes under `cargo test`.
//!
//! pytest comes from `TestEnv::with_python_tools`; cargo is the toolchain
//! that builds this project.

use std::path::{Path, PathBuf};

use crate::support::record::{check_event, outcomes};
use crate::support::{Agent, FakeAgent, Run, TestEnv};

const PYPROJECT_STRICT: &str = "[tool.pytest.ini_options]\nfilterwarnings = [\"error\"]\n";

/// `calc.py` warns at import: with `filterwarnings = error`, pytest cannot
/// collect the tests that import it.
const CALC_WARNS: &str =
    "import warnings\n\nwarnings.warn(\"old api\", DeprecationWarning)\n\n\ndef add(a, b):\n    return a - b\n";

const CALC_TESTS: &str = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_zero():\n    assert add(0, 0) == 0\n";

const PYTEST: &str = "[[check]]\nname = \"pytest\"\nrun = \"python3 -m pytest -q tests\"\nkind = \"test\"\n";

fn run(env: &TestEnv, r: &Path, agent: &Agent, args: &[&str]) -> Run {
    let mut all = vec!["run", "--quiet"];
    all.extend_from_slice(args);
    env.run_agent(r, &all, agent)
}

/// The digest of check `check` in attempt `n`'s record, one string.
fn digest(r: &Path, task: &str, n: u32, check: &str) -> String {
    let file = r.join(format!(".git/retry-run/tasks/{task}/attempts/{n}/attempt.json"));
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let v: serde_json::Value = serde_json::from_str(&text).expect("attempt.json is JSON");
    let checks = v["checks"].as_array().cloned().unwrap_or_default();
    let c = checks.iter().find(|c| c["name"] == check).unwrap_or_else(|| panic!("no check {check} in {text}"));
    c["digest"].to_string()
}

fn strict_repo(env: &TestEnv, calc: &str) -> PathBuf {
    env.repo("repo")
        .file("pyproject.toml", PYPROJECT_STRICT)
        .file("calc.py", calc)
        .file("tests/test_calc.py", CALC_TESTS)
        .file(".gitignore", "__pycache__/\n.pytest_cache/\n")
        .file("retry-run.toml", format!("max_attempts = 1\n{PYTEST}"))
        .commit()
}

#[test]
fn a_collection_error_on_the_base_does_not_make_a_wrong_fix_a_success() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let r = strict_repo(&env, CALC_WARNS);
    // A wrong fix: `add` still wrong, the warning still there.
    let wrong = CALC_WARNS.replace("a - b", "a * b");
    let a = env.agent(FakeAgent::new().expect("calc.py", CALC_WARNS).write("calc.py", &wrong));
    let out = run(&env, &r, &a, &["--task", "Fix add"]);
    assert_eq!(outcomes(&r, "fix-add"), ["CHECK_FAILURE"], "{}", out.stderr);
    let check = check_event(&r, "fix-add", 1, "pytest");
    assert_eq!(check["passed"], false, "{check}");
    let digest = digest(&r, "fix-add", 1, "pytest");
    assert!(digest.contains("Interrupted: 1 error during collection"), "{digest}");
    assert!(digest.contains("pytest was interrupted"), "{digest}");
}

#[test]
fn a_collection_error_in_an_attempt_fails_even_when_the_base_had_it_too_and_a_real_fix_passes() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let r = strict_repo(&env, CALC_WARNS);
    // The attempt removes the warning and fixes add: the runner runs normally.
    let fixed = "def add(a, b):\n    return a + b\n";
    let a = env.agent(FakeAgent::new().expect("calc.py", CALC_WARNS).write("calc.py", fixed));
    let out = run(&env, &r, &a, &["--task", "Fix add", "--target", "tests/test_calc.py::test_add"]);
    assert_eq!(outcomes(&r, "fix-add"), ["SUCCESS"], "{}", out.stderr);
    let check = check_event(&r, "fix-add", 1, "pytest");
    assert_eq!(check["passed"], true, "{check}");
}

#[test]
fn a_target_whose_id_holds_spaces_brackets_and_dashes_passes() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let tests = "import pytest\nfrom calc import add\n\n\n@pytest.mark.parametrize(\"m\", [\"m x\", \"a - b\", \"k::v\"])\ndef test_x(m):\n    assert add(1, 1) == 2\n";
    let calc = "def add(a, b):\n    return a - b\n";
    let r = env
        .repo("repo")
        .file("calc.py", calc)
        .file("tests/test_t.py", tests)
        .file(".gitignore", "__pycache__/\n.pytest_cache/\n")
        .file("retry-run.toml", format!("max_attempts = 1\n{}", PYTEST.replace("-q", "-v")))
        .commit();
    let a = env.agent(FakeAgent::new().expect("calc.py", calc).write("calc.py", &calc.replace("a - b", "a + b")));
    let out = run(
        &env,
        &r,
        &a,
        &[
            "--task",
            "Fix add",
            "--target",
            "tests/test_t.py::test_x[m x]",
            "--target",
            "tests/test_t.py::test_x[a - b]",
            "--target",
            "tests/test_t.py::test_x[k::v]",
        ],
    );
    assert_eq!(outcomes(&r, "fix-add"), ["SUCCESS"], "{}", out.stderr);
    assert_eq!(check_event(&r, "fix-add", 1, "targets")["passed"], true);
}

#[test]
fn a_base_failure_whose_error_changes_stays_the_bases() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let calc = "def get(d):\n    return d[\"a\"] + 1\n\n\ndef add(a, b):\n    return a - b\n";
    let tests = "from calc import add, get\n\n\ndef test_get():\n    assert get({\"a\": 1}) == 1\n\n\ndef test_add():\n    assert add(2, 3) == 5\n";
    let r = env
        .repo("repo")
        .file("calc.py", calc)
        .file("tests/test_calc.py", tests)
        .file(".gitignore", "__pycache__/\n.pytest_cache/\n")
        .file("retry-run.toml", format!("max_attempts = 1\n{PYTEST}"))
        .commit();
    // Fixes add (the target) and turns test_get's AssertionError into a KeyError.
    let attempt = calc.replace("a - b", "a + b").replace("d[\"a\"]", "d[\"b\"]");
    let a = env.agent(FakeAgent::new().expect("calc.py", calc).write("calc.py", &attempt));
    let out = run(&env, &r, &a, &["--task", "Fix add", "--target", "tests/test_calc.py::test_add"]);
    let check = check_event(&r, "fix-add", 1, "pytest");
    assert_eq!(check["new_failures"], serde_json::json!([]), "{check}");
    assert_eq!(check["pre_existing_failures"], serde_json::json!(["tests/test_calc.py::test_get"]), "{check}");
    assert_eq!(check["passed"], true, "{check}");
    assert_eq!(outcomes(&r, "fix-add"), ["SUCCESS"], "{}", out.stderr);
}

const CRATE_LIB: &str = "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n#[cfg(test)]\nmod tests {\n    mod parse {\n        #[test]\n        fn works() {\n            assert_eq!(super::super::add(1, 1), 2);\n        }\n    }\n}\n";

/// `cargo test` as the check runs it: the toolchain of this machine's rustup
/// (the test's HOME is its own), the crate's target directory in the worktree.
fn cargo_test() -> String {
    let rustup = std::env::var("RUSTUP_HOME")
        .unwrap_or_else(|_| format!("{}/.rustup", std::env::var("HOME").unwrap_or_default()));
    format!("RUSTUP_HOME={rustup} cargo test --offline --no-fail-fast")
}

fn crate_repo(env: &TestEnv, run_line: &str) -> PathBuf {
    env.repo("repo")
        .file("Cargo.toml", "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n")
        .file("Cargo.lock", "# This file is automatically @generated by Cargo.\n# It is not intended for manual editing.\nversion = 4\n\n[[package]]\nname = \"tiny\"\nversion = \"0.1.0\"\n")
        .file("src/lib.rs", CRATE_LIB)
        .file(".gitignore", "target/\n")
        .file(
            "retry-run.toml",
            format!("max_attempts = 1\n[[check]]\nname = \"cargo-test\"\nrun = \"{run_line}\"\nkind = \"test\"\ntimeout = \"5m\"\n"),
        )
        .commit()
}

#[test]
fn a_rust_target_named_by_its_module_path_passes() {
    let env = TestEnv::new();
    let r = crate_repo(&env, &cargo_test());
    let a = env.agent(
        FakeAgent::new().expect("src/lib.rs", CRATE_LIB).write("src/lib.rs", &CRATE_LIB.replace("a - b", "a + b")),
    );
    let out = run(&env, &r, &a, &["--task", "Fix add", "--target", "tests::parse::works"]);
    assert_eq!(outcomes(&r, "fix-add"), ["SUCCESS"], "{}", out.stderr);
}

#[test]
fn a_crate_that_does_not_compile_on_the_base_is_never_ok() {
    let env = TestEnv::new();
    let broken = CRATE_LIB.replace("a - b", "a - ");
    let r = env
        .repo("repo")
        .file("Cargo.toml", "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n")
        .file("src/lib.rs", &broken)
        .file(".gitignore", "target/\nCargo.lock\n")
        .file(
            "retry-run.toml",
            format!(
                "max_attempts = 1\n[[check]]\nname = \"cargo-test\"\nrun = \"{}\"\nkind = \"test\"\n",
                cargo_test()
            ),
        )
        .commit();
    // The attempt changes something else and leaves the build broken.
    let a = env.agent(FakeAgent::new().write("README.md", "tiny\n"));
    let out = run(&env, &r, &a, &["--task", "Fix the build"]);
    assert_eq!(outcomes(&r, "fix-the-build"), ["CHECK_FAILURE"], "{}", out.stderr);
    let check = check_event(&r, "fix-the-build", 1, "cargo-test");
    assert_eq!(check["passed"], false, "{check}");
    assert_eq!(check["pre_existing"], 0, "a runner failure is never the base's: {check}");
    let digest = digest(&r, "fix-the-build", 1, "cargo-test");
    assert!(digest.contains("cargo test did not build or start the tests"), "{digest}");
    assert!(digest.contains("could not compile `tiny`"), "{digest}");
}

const GO_TEST: &str = "package calc\n\nimport \"testing\"\n\nfunc TestX(t *testing.T) {\n\tt.Run(\"case one\", func(t *testing.T) {\n\t\tif Add(1, 1) != 2 {\n\t\t\tt.Fatal(\"add\")\n\t\t}\n\t})\n}\n";

/// A Go module whose `calc.go` is `calc`, with a subtest `TestX/case_one`.
fn go_repo(env: &TestEnv, calc: &str) -> Option<PathBuf> {
    if std::process::Command::new("go").arg("version").output().is_err() {
        crate::support::tools::skipped("go is not installed (apt-get install golang-go)");
        return None;
    }
    // Go's caches in the worktree: the sandbox lets a check write nowhere else.
    let run = "GOCACHE=$PWD/.gocache GOPATH=$PWD/.gopath GOPROXY=off go test ./...";
    Some(
        env.repo("repo")
            .file("go.mod", "module example.com/calc\n\ngo 1.19\n")
            .file("calc/calc.go", calc)
            .file("calc/calc_test.go", GO_TEST)
            .file(".gitignore", ".gocache/\n.gopath/\n")
            .file(
                "retry-run.toml",
                format!("max_attempts = 1\n[[check]]\nname = \"go\"\nrun = \"{run}\"\nkind = \"test\"\n"),
            )
            .commit(),
    )
}

#[test]
fn a_go_subtest_target_passes_and_a_package_that_does_not_build_on_the_base_is_never_ok() {
    let env = TestEnv::new();
    let calc = "package calc\n\nfunc Add(a, b int) int { return a - b }\n";
    let Some(r) = go_repo(&env, calc) else { return };
    let fixed = calc.replace("a - b", "a + b");
    let a = env.agent(FakeAgent::new().expect("calc/calc.go", calc).write("calc/calc.go", &fixed));
    let out = run(&env, &r, &a, &["--task", "Fix add", "--target", "TestX/case_one"]);
    assert_eq!(outcomes(&r, "fix-add"), ["SUCCESS"], "{}", out.stderr);

    let env = TestEnv::new();
    let broken = "package calc\n\nfunc Add(a, b int) int { return a - }\n";
    let Some(r) = go_repo(&env, broken) else { return };
    let a = env.agent(FakeAgent::new().write("README.md", "calc\n"));
    let out = run(&env, &r, &a, &["--task", "Fix the build"]);
    assert_eq!(outcomes(&r, "fix-the-build"), ["CHECK_FAILURE"], "{}", out.stderr);
    let digest = digest(&r, "fix-the-build", 1, "go");
    assert!(digest.contains("go test did not build or start the tests"), "{digest}");
    assert!(digest.contains("[build failed]"), "{digest}");
}

const CART: &str = "exports.add = (items, item) => items.concat([]);\n";

const CART_TEST: &str = "const { add } = require(\"./cart\");\n\ndescribe(\"cart\", () => {\n  test(\"adds an item\", () => {\n    expect(add([], 1)).toEqual([1]);\n  });\n  describe(\"when empty\", () => {\n    test(\"totals zero\", () => {\n      expect(add([], 1).length).toBeGreaterThan(0);\n    });\n  });\n});\n";

/// A JavaScript project whose `cart > adds an item` fails on the base,
/// checked by `check` (a command line of the real jest or vitest). Its
/// worktrees live outside the git directory: jest finds no test under a
/// path holding `/.git/`.
fn js_repo(env: &TestEnv, check: &str) -> PathBuf {
    let worktrees = env.root().join("worktrees");
    env.repo("repo")
        .file("package.json", "{\"name\": \"cart\", \"private\": true}\n")
        .file("cart.js", CART)
        .file("cart.test.js", CART_TEST)
        .file("jest.config.js", "module.exports = { testMatch: [\"**/*.test.js\"] };\n")
        .file("vitest.config.mjs", "export default { test: { globals: true, include: [\"**/*.test.js\"] } };\n")
        .file(".gitignore", "node_modules/\n")
        .file(
            "retry-run.toml",
            format!(
                "max_attempts = 1\n[worktree]\nroot = \"{}\"\n[[check]]\nname = \"js\"\nrun = \"{check}\"\nkind = \"test\"\n",
                worktrees.display()
            ),
        )
        .commit()
}

#[test]
fn jest_and_vitest_targets_named_by_their_describe_blocks_pass() {
    let bin = match crate::support::tools::js_test_runners() {
        Ok(bin) => bin,
        Err(why) => return crate::support::tools::skipped(&why),
    };
    for check in [
        format!("{} --ci --verbose", bin.join("jest").display()),
        format!("{} run --reporter=verbose", bin.join("vitest").display()),
    ] {
        let env = TestEnv::new();
        let r = js_repo(&env, &check);
        let fixed = "exports.add = (items, item) => items.concat([item]);\n";
        let a = env.agent(FakeAgent::new().expect("cart.js", CART).write("cart.js", fixed));
        let out = run(&env, &r, &a, &["--task", "Fix add", "--target", "cart > adds an item"]);
        assert_eq!(outcomes(&r, "fix-add"), ["SUCCESS"], "{check}: {}", out.stderr);
        assert_eq!(check_event(&r, "fix-add", 1, "targets")["passed"], true, "{check}");
    }
}

#[test]
fn jest_and_vitest_that_find_no_tests_are_never_ok() {
    let bin = match crate::support::tools::js_test_runners() {
        Ok(bin) => bin,
        Err(why) => return crate::support::tools::skipped(&why),
    };
    for (check, said) in [
        (format!("{} --ci nothing_matches", bin.join("jest").display()), "jest found no tests"),
        (format!("{} run nothing_matches", bin.join("vitest").display()), "vitest found no tests"),
    ] {
        let env = TestEnv::new();
        let r = js_repo(&env, &check);
        let a = env.agent(FakeAgent::new().write("README.md", "cart\n"));
        let out = run(&env, &r, &a, &["--task", "Tidy"]);
        assert_eq!(outcomes(&r, "tidy"), ["CHECK_FAILURE"], "{check}: {}", out.stderr);
        let digest = digest(&r, "tidy", 1, "js");
        assert!(digest.contains(said), "{check}: {digest}");
    }
}

/// jest skips every file under a path that holds `/.git/`, where task
/// worktrees live by default: with the default a jest check finds nothing
/// on the base and in every attempt; `init` gives a jest project a
/// worktree root beside the checkout, where the same target passes.
#[test]
fn init_puts_a_jest_projects_worktrees_where_jest_finds_its_tests() {
    let bin = match crate::support::tools::js_test_runners() {
        Ok(bin) => bin,
        Err(why) => return crate::support::tools::skipped(&why),
    };
    let jest = format!("{} --ci --verbose", bin.join("jest").display());
    let package = "{\"name\": \"cart\", \"private\": true, \"scripts\": {\"test\": \"jest --ci\"}, \"devDependencies\": {\"jest\": \"30.5.2\"}}\n";
    let fixed = "exports.add = (items, item) => items.concat([item]);\n";
    let check = |root: Option<&str>| {
        let worktree = root.map(|r| format!("[worktree]\nroot = {r:?}\n")).unwrap_or_default();
        format!("max_attempts = 1\n{worktree}[[check]]\nname = \"js\"\nrun = \"{jest}\"\nkind = \"test\"\n")
    };

    // The default: the worktree is in the git directory, jest finds nothing.
    let env = TestEnv::new();
    let r = env
        .repo("shop")
        .file("package.json", package)
        .file("cart.js", CART)
        .file("cart.test.js", CART_TEST)
        .file(".gitignore", "node_modules/\n")
        .file("retry-run.toml", check(None))
        .commit();
    let a = env.agent(FakeAgent::new().write("cart.js", fixed));
    let out = run(&env, &r, &a, &["--task", "Fix add", "--allow-new-target", "--target", "cart > adds an item"]);
    assert_eq!(outcomes(&r, "fix-add"), ["CHECK_FAILURE"], "{}", out.stderr);
    assert!(digest(&r, "fix-add", 1, "js").contains("jest found no tests"));

    // init writes a root beside the checkout, and says why.
    let env = TestEnv::new();
    let r = env
        .repo("shop")
        .file("package.json", package)
        .file("cart.js", CART)
        .file("cart.test.js", CART_TEST)
        .file(".gitignore", "node_modules/\n")
        .commit();
    let out = env.run(&r, &["init", "--no-run"]);
    out.assert_code(0);
    assert!(out.stdout.contains("worktrees: beside the checkout (../shop.retry-run-worktrees)"), "{}", out.stdout);
    let written = std::fs::read_to_string(r.join("retry-run.toml")).unwrap();
    let config: toml::Value = toml::from_str(&written).unwrap();
    let root = config["worktree"]["root"].as_str().unwrap().to_string();
    assert_eq!(root, "../shop.retry-run-worktrees");
    std::fs::write(r.join("retry-run.toml"), check(Some(&root))).unwrap();
    env.git(&r, &["add", "retry-run.toml"]);
    env.git(&r, &["commit", "-qm", "the jest check"]);
    let a = env.agent(FakeAgent::new().expect("cart.js", CART).write("cart.js", fixed));
    let out = run(&env, &r, &a, &["--task", "Fix add", "--target", "cart > adds an item"]);
    assert_eq!(outcomes(&r, "fix-add"), ["SUCCESS"], "{}", out.stderr);
    assert!(r.parent().unwrap().join("shop.retry-run-worktrees").is_dir());
}
