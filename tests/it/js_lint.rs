//! A JavaScript project's ESLint check judged by what the attempt added,
//! as ruff's are: lint debt on the base never blocks a right fix, a new
//! error fails the attempt on exactly that error, and `baseline =
//! "tolerate"` never hides it. The real ESLint (installed from npm into
//! the CI cache) reads the project's own flat config; its default
//! (stylish) output is what retry-run reads.

use std::path::{Path, PathBuf};

use crate::support::record::{check_event, outcomes, prompt};
use crate::support::tools::{js_lint_tools, skipped};
use crate::support::{FakeAgent, TestEnv};

const CONFIG: &str = "export default [\n  {\n    files: [\"src/**/*.js\"],\n    languageOptions: { sourceType: \"module\" },\n    rules: { \"no-unused-vars\": \"error\", eqeqeq: \"error\" },\n  },\n];\n";
const CART: &str = "export function total(items) {\n  return items.length;\n}\n";
/// The base's lint debt: an `==` in another file.
const LEGACY: &str = "export function same(a, b) {\n  return a == b;\n}\n";

fn project(env: &TestEnv, baseline: &str) -> PathBuf {
    env.repo("repo")
        .file("eslint.config.mjs", CONFIG)
        .file("package.json", "{\"name\":\"shop\",\"version\":\"1.0.0\",\"type\":\"module\",\"private\":true}\n")
        .file("src/cart.js", CART)
        .file("src/legacy.js", LEGACY)
        .file(
            "retry-run.toml",
            format!("max_attempts = 2\n\n[retry]\nbaseline = \"{baseline}\"\n\n[[check]]\nname = \"eslint\"\nrun = \"eslint src\"\nkind = \"lint\"\n"),
        )
        .commit()
}

fn run(env: &TestEnv, r: &Path, bin: &Path, agent: FakeAgent) -> crate::support::Run {
    let mut path = bin.as_os_str().to_owned();
    path.push(":");
    path.push(env.path_var());
    let agent = env.agent(agent);
    crate::support::Run::of(env.retry_run(r).env("PATH", path).args(agent.after(&[
        "run",
        "--quiet",
        "--task",
        "Sum the quantities",
    ])))
}

/// A wrong fix that adds an unused variable, then the right one.
fn wrong_then_right() -> FakeAgent {
    FakeAgent::new()
        .write(
            "src/cart.js",
            "export function total(items) {\n  const unused = 1;\n  return items.reduce((n, i) => n + i.qty, 0);\n}\n",
        )
        .next_call()
        .write("src/cart.js", "export function total(items) {\n  return items.reduce((n, i) => n + i.qty, 0);\n}\n")
}

#[test]
fn lint_debt_on_the_base_never_blocks_a_right_fix_and_a_new_error_fails_on_exactly_it() {
    let bin = match js_lint_tools() {
        Ok(b) => b,
        Err(why) => return skipped(&why),
    };
    for baseline in ["auto", "tolerate"] {
        let env = TestEnv::new();
        let r = project(&env, baseline);
        let out = run(&env, &r, &bin, wrong_then_right());
        let task = "sum-the-quantities";
        assert_eq!(outcomes(&r, task), ["CHECK_FAILURE", "SUCCESS"], "{baseline}: {}", out.stderr);
        let first = check_event(&r, task, 1, "eslint");
        let new: Vec<String> =
            first["new_failures"].as_array().expect("new failures").iter().map(|f| f.to_string()).collect();
        assert_eq!(new.len(), 1, "{baseline}: exactly the new error: {first}");
        assert!(new[0].contains("no-unused-vars") && new[0].contains("src/cart.js"), "{baseline}: {new:?}");
        let p = prompt(&r, task, 2);
        assert!(p.contains("'unused' is assigned a value but never used"), "{baseline}: {p}");
        assert!(p.contains("total"), "{baseline}: the error's enclosing function: {p}");
        assert!(!p.contains("0 new failures"), "{baseline}: {p}");
    }
}
