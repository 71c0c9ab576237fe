//! A JavaScript project set up by `init`, as a new user would: vitest for
//! its tests, ESLint with lint debt on the base. `init`'s config as
//! written; a scripted agent whose first fix adds one ESLint error and
//! whose second is right. The first attempt fails on exactly that error,
//! the second succeeds with the task's target passing (vitest's verbose
//! reporter, which init asks for, names it). The real vitest and ESLint
//! (installed from npm into the CI cache) are the project's
//! `node_modules`, linked.

use crate::support::record::{check_event, outcomes, prompt};
use crate::support::tools::{js_lint_tools, js_test_runners, link_node_modules, skipped};
use crate::support::{FakeAgent, TestEnv};

const CONFIG: &str = "export default [\n  {\n    files: [\"src/**/*.js\"],\n    languageOptions: { sourceType: \"module\" },\n    rules: { \"no-unused-vars\": \"error\", eqeqeq: \"error\" },\n  },\n];\n";
const TESTS: &str = "import { describe, it, expect } from 'vitest';\nimport { total } from '../src/cart.js';\n\ndescribe('cart', () => {\n  it('sums quantities', () => {\n    expect(total([{ qty: 2 }, { qty: 3 }])).toBe(5);\n  });\n\n  it('is zero when empty', () => {\n    expect(total([])).toBe(0);\n  });\n});\n";

#[test]
fn a_vitest_project_set_up_by_init_fails_on_the_new_lint_error_then_succeeds() {
    let (runners, lint) = match (js_test_runners(), js_lint_tools()) {
        (Ok(r), Ok(l)) => (r, l),
        (Err(why), _) | (_, Err(why)) => return skipped(&why),
    };
    let env = TestEnv::new();
    let r = env
        .repo("shop")
        .file(
            "package.json",
            "{\"name\":\"shop\",\"version\":\"1.0.0\",\"type\":\"module\",\"private\":true,\"scripts\":{\"lint\":\"eslint src\",\"test\":\"vitest run\"}}\n",
        )
        .file("eslint.config.mjs", CONFIG)
        .file(".gitignore", "node_modules/\n")
        .file("src/cart.js", "export function total(items) {\n  return items.length;\n}\n")
        .file("src/legacy.js", "export function same(a, b) {\n  return a == b;\n}\n")
        .file("test/cart.test.js", TESTS)
        .commit();
    link_node_modules(&r, &[runners.parent().expect("node_modules"), lint.parent().expect("node_modules")]);
    let init = env.run(&r, &["init"]);
    init.assert_code(0);
    let config = std::fs::read_to_string(r.join("retry-run.toml")).expect("init wrote the config");
    assert!(config.contains("run = \"npm run --silent test -- --reporter=verbose\""), "{config}");
    assert!(config.contains("run = \"npm run --silent lint\""), "{config}");
    env.git(&r, &["add", "retry-run.toml"]);
    env.git(&r, &["commit", "-qm", "retry-run init"]);
    let agent = env.agent(
        FakeAgent::new()
            .write("src/cart.js", "export function total(items) {\n  const unused = 1;\n  return items.reduce((n, i) => n + i.qty, 0);\n}\n")
            .next_call()
            .write("src/cart.js", "export function total(items) {\n  return items.reduce((n, i) => n + i.qty, 0);\n}\n"),
    );
    let target = "test/cart.test.js > cart > sums quantities";
    let out = env.run_agent(&r, &["run", "--quiet", "--task", "Sum the quantities", "--target", target], &agent);
    let task = "sum-the-quantities";
    assert_eq!(outcomes(&r, task), ["CHECK_FAILURE", "SUCCESS"], "{}\n{}", out.stderr, prompt(&r, task, 2));
    let lint1 = check_event(&r, task, 1, "npm-lint");
    let new = lint1["new_failures"].as_array().expect("new failures");
    assert_eq!(new.len(), 1, "exactly the new error: {lint1}");
    assert!(new[0].to_string().contains("no-unused-vars"), "{lint1}");
    let p = prompt(&r, task, 2);
    assert!(p.contains("'unused' is assigned a value but never used") && p.contains("total"), "{p}");
    assert_eq!(check_event(&r, task, 2, "targets")["passed"], true);
}

/// The same with jest: `init` places the worktrees beside the checkout
/// (jest skips paths that hold `/.git/`) and shares `node_modules` with
/// them, so that the test check starts.
#[test]
fn a_jest_project_set_up_by_init_reaches_its_node_modules_and_succeeds() {
    let (runners, lint) = match (js_test_runners(), js_lint_tools()) {
        (Ok(r), Ok(l)) => (r, l),
        (Err(why), _) | (_, Err(why)) => return skipped(&why),
    };
    let env = TestEnv::new();
    let tests = "const { total } = require('../src/cart');\n\ndescribe('cart', () => {\n  test('sums quantities', () => {\n    expect(total([{ qty: 2 }, { qty: 3 }])).toBe(5);\n  });\n});\n";
    let r = env
        .repo("store")
        .file(
            "package.json",
            "{\"name\":\"store\",\"version\":\"1.0.0\",\"private\":true,\"scripts\":{\"lint\":\"eslint src\",\"test\":\"jest\"}}\n",
        )
        .file("eslint.config.mjs", CONFIG.replace("sourceType: \"module\"", "sourceType: \"commonjs\", globals: { module: \"readonly\" }"))
        .file(".gitignore", "node_modules/\n")
        .file("src/cart.js", "function total(items) {\n  return items.length;\n}\nmodule.exports = { total };\n")
        .file("test/cart.test.js", tests)
        .commit();
    link_node_modules(&r, &[runners.parent().expect("node_modules"), lint.parent().expect("node_modules")]);
    env.run(&r, &["init"]).assert_code(0);
    let config = std::fs::read_to_string(r.join("retry-run.toml")).expect("config");
    assert!(config.contains("share = [\"node_modules\"]") && config.contains("retry-run-worktrees"), "{config}");
    assert!(config.contains("run = \"npm run --silent test -- --verbose\""), "{config}");
    env.git(&r, &["add", "retry-run.toml"]);
    env.git(&r, &["commit", "-qm", "retry-run init"]);
    let agent = env.agent(FakeAgent::new().write(
        "src/cart.js",
        "function total(items) {\n  return items.reduce((n, i) => n + i.qty, 0);\n}\nmodule.exports = { total };\n",
    ));
    // The full name, as vitest's (jest's own `cart › sums quantities`
    // names it too).
    let target = "test/cart.test.js > cart > sums quantities";
    let out = env.run_agent(&r, &["run", "--quiet", "--task", "Sum them", "--target", target], &agent);
    assert_eq!(outcomes(&r, "sum-them"), ["SUCCESS"], "{}", out.stderr);
    assert_eq!(check_event(&r, "sum-them", 1, "npm-test")["passed"], true);
}

/// A test check the user wrote, at the runners' default reporters, which
/// name no passing test of a file that passes whole: retry-run adds the
/// option that names every test (vitest's `--reporter=verbose` as the
/// script's argument, jest's `--verbose`), so a passing target is seen
/// passing, not "not reported".
#[test]
fn a_users_own_vitest_or_jest_command_at_its_default_reporter_sees_the_passing_target() {
    let runners = match js_test_runners() {
        Ok(r) => r,
        Err(why) => return skipped(&why),
    };
    let vitest_tests = "import { describe, it, expect } from 'vitest';\nimport { total } from '../src/cart.js';\n\ndescribe('cart', () => {\n  it('sums quantities', () => {\n    expect(total([{ qty: 2 }, { qty: 3 }])).toBe(5);\n  });\n});\n";
    let jest_tests = "const { total } = require('../src/cart');\n\ndescribe('cart', () => {\n  test('sums quantities', () => {\n    expect(total([{ qty: 2 }, { qty: 3 }])).toBe(5);\n  });\n});\n";
    let jest_other = "test('is true', () => {\n  expect(true).toBe(true);\n});\n";
    let cases = [
        (
            "vitest",
            "{\"name\":\"v\",\"type\":\"module\",\"private\":true,\"scripts\":{\"test\":\"vitest run\"}}\n",
            "export function total(items) {\n  return items.length;\n}\n",
            "export function total(items) {\n  return items.reduce((n, i) => n + i.qty, 0);\n}\n",
            vec![("test/cart.test.js", vitest_tests)],
            "[[check]]\nname = \"tests\"\nrun = \"npm test\"\nkind = \"test\"\n",
        ),
        (
            "jest",
            "{\"name\":\"j\",\"private\":true}\n",
            "function total(items) {\n  return items.length;\n}\nmodule.exports = { total };\n",
            "function total(items) {\n  return items.reduce((n, i) => n + i.qty, 0);\n}\nmodule.exports = { total };\n",
            vec![("test/cart.test.js", jest_tests), ("test/other.test.js", jest_other)],
            "[worktree]\nroot = \"../j.worktrees\"\nshare = [\"node_modules\"]\n[[check]]\nname = \"tests\"\nrun = \"npx jest\"\nkind = \"test\"\n",
        ),
    ];
    for (runner, package, wrong, right, tests, toml) in cases {
        let env = TestEnv::new();
        let mut repo = env
            .repo(runner)
            .file("package.json", package)
            .file(".gitignore", "node_modules/\n")
            .file("src/cart.js", wrong)
            .file("retry-run.toml", toml);
        for (path, text) in tests {
            repo = repo.file(path, text);
        }
        let r = repo.commit();
        link_node_modules(&r, &[runners.parent().expect("node_modules")]);
        let agent = env.agent(FakeAgent::new().write("src/cart.js", right));
        let target = "test/cart.test.js > cart > sums quantities";
        let out = env.run_agent(&r, &["run", "--quiet", "--task", "Sum them", "--target", target], &agent);
        assert_eq!(outcomes(&r, "sum-them"), ["SUCCESS"], "{runner}: {}", out.stderr);
        assert_eq!(check_event(&r, "sum-them", 1, "targets")["passed"], true, "{runner}");
    }
}
