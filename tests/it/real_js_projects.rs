//! Two real TypeScript projects as their maintainers keep them
//! (`tests/real-projects/`, its README says what was kept): yaml, tested
//! with vitest, and cron, tested with jest, each with its own tsc and
//! ESLint config, each at one of its own bug fixes with the fix's source
//! change reverted and the fix's test kept (failing on the base). Their
//! dependencies are installed by `npm ci` from their own lock files (into
//! the CI cache, once) and linked in as `node_modules`; the config is the
//! one `init` wrote. A scripted agent first makes the change a hurried
//! agent makes (the test still fails, and ESLint finds one new error inside
//! the function it changed), then the upstream fix, which it writes only
//! when its prompt names the failing test, its assertion and the ESLint
//! error. The second attempt succeeds; its prompt carried the ESLint error
//! inside its enclosing function.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::support::record::{check_event, outcomes, prompt};
use crate::support::tools::{link_node_modules, npm_ci, skipped};
use crate::support::{FakeAgent, TestEnv};

/// `tests/real-projects/`.
fn real_projects() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/real-projects")
}

/// Every file under `dir` (dot files too), relative to it, sorted.
fn files(dir: &Path) -> Vec<PathBuf> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).flatten() {
            let path = e.path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                out.push(path.strip_prefix(root).expect("under the root").to_path_buf());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// The text of `rel` in the directory `dir` of tests/real-projects (a
/// project's `<name>.wrong` or `<name>.right` change).
fn change(dir: &str, rel: &str) -> String {
    let p = real_projects().join(dir).join(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// A repository of the project `name` of tests/real-projects, every file
/// of it committed (yaml's `.gitignore`, `.*`, ignores itself: it is
/// committed as upstream commits it), its dependencies installed by `npm
/// ci` (until `programs` run) and linked in as `node_modules`; then the
/// config `init` wrote, committed. Returns the repository, what `init`
/// said and the config; `None` when the npm registry cannot be reached
/// (said SKIPPED).
fn project(env: &TestEnv, name: &str, programs: &[&str]) -> Option<(PathBuf, String, String)> {
    let src = real_projects().join(name);
    let modules = match npm_ci(&format!("real-{name}"), &src, programs) {
        Ok(m) => m,
        Err(why) => {
            skipped(&why);
            return None;
        }
    };
    let mut repo = env.repo(name);
    for rel in files(&src) {
        let from = src.join(&rel);
        let text = std::fs::read(&from).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
        let mode = std::fs::metadata(&from).expect("metadata").permissions().mode();
        repo = if mode & 0o111 != 0 { repo.executable(&rel, text) } else { repo.file(&rel, text) };
    }
    let r = repo.init();
    env.git(&r, &["add", "-A", "-f"]);
    env.git(&r, &["commit", "-qm", "base"]);
    // The linked node_modules is never the repository's, whatever its
    // .gitignore says.
    std::fs::create_dir_all(r.join(".git/info")).expect("mkdir .git/info");
    std::fs::write(r.join(".git/info/exclude"), "node_modules/\n").expect("write .git/info/exclude");
    link_node_modules(&r, &[modules.as_path()]);
    let init = env.run(&r, &["init"]);
    init.assert_code(0);
    let config = std::fs::read_to_string(r.join("retry-run.toml")).expect("init wrote the config");
    env.git(&r, &["add", "retry-run.toml"]);
    env.git(&r, &["commit", "-qm", "retry-run init"]);
    Some((r, init.stdout, config))
}

/// The line of `prompt` that names `test` as already failing on the base
/// and no target, if one does.
fn said_not_a_target<'a>(prompt: &'a str, test: &str) -> Option<&'a str> {
    prompt.lines().find(|l| l.contains(test) && l.contains("not a target"))
}

const YAML_TARGET: &str =
    "tests/doc/stringify.ts > YAML 1.2 > number > minFractionDigits > number (1e+32) with trailing zeros";
const YAML_FILE: &str = "src/stringify/stringifyNumber.ts";
/// vitest's assertion of the target, on the base and after the wrong change.
const YAML_ASSERTION: &str = "expected '1e+32.00\\n' to be '1e+32\\n'";

/// yaml (eemeli/yaml, "Apply minFractionDigits only to decimal strings"):
/// vitest 4 with its own `vitest.config.js`, ESLint 9 with typescript-eslint's
/// type-checked rules, tsc. The wrong change fixes negative numbers but not
/// exponents (the target still fails) and writes `==` (eqeqeq).
#[test]
fn yaml_on_vitest_fails_on_its_test_and_new_eslint_error_then_takes_the_upstream_fix() {
    let env = TestEnv::new();
    let Some((r, said, config)) = project(&env, "yaml", &["vitest", "eslint", "tsc"]) else { return };
    assert!(config.contains("run = \"npm run --silent test -- --reporter=verbose --configLoader=runner\""), "{config}");
    assert!(config.contains("run = \"npm run --silent lint\""), "{config}");
    assert!(config.contains("run = \"npm exec -- tsc --noEmit --pretty false\""), "{config}");
    // init's preview read the base as run judges it: the fix's tests fail
    // there, the rest pass; ESLint and tsc find nothing.
    assert!(said.contains("npm-test: 237 passed, 6 failing"), "{said}");
    assert!(said.contains("npm-lint: no diagnostic on the base"), "{said}");
    assert!(said.contains("tsc: no diagnostic on the base"), "{said}");

    let agent = env.agent(
        FakeAgent::new()
            .write(YAML_FILE, &change("yaml.wrong", YAML_FILE))
            .next_call()
            .expect_prompt(YAML_TARGET)
            .expect_prompt(YAML_ASSERTION)
            .expect_prompt("eqeqeq")
            .write(YAML_FILE, &change("yaml.right", YAML_FILE)),
    );
    let task = "apply-minfractiondigits-only-to-decimal-strings";
    let out = env.run_agent(
        &r,
        &["run", "--quiet", "--task", "Apply minFractionDigits only to decimal strings", "--target", YAML_TARGET],
        &agent,
    );
    assert_eq!(outcomes(&r, task), ["CHECK_FAILURE", "SUCCESS"], "{}\n{}", out.stderr, prompt(&r, task, 2));
    out.assert_code(0);

    // Attempt 1: exactly the one ESLint error the change added, inside
    // stringifyNumber; tsc clean; the target still failing.
    let lint = check_event(&r, task, 1, "npm-lint");
    let new = lint["new_failures"].as_array().expect("new failures");
    assert_eq!(new.len(), 1, "exactly the new error: {lint}");
    assert!(new[0].as_str().is_some_and(|k| k.contains("eqeqeq") && k.contains("stringifyNumber")), "{lint}");
    assert_eq!(check_event(&r, task, 1, "tsc")["passed"], true);
    let targets = check_event(&r, task, 1, "targets");
    assert_eq!(targets["new_failures"], serde_json::json!([YAML_TARGET]), "{targets}");

    // Attempt 2's prompt: the failing test, its assertion, the ESLint
    // error inside its enclosing function.
    let p = prompt(&r, task, 2);
    assert!(p.contains(&format!("`{YAML_TARGET}` failed")), "{p}");
    assert!(p.contains(&format!("AssertionError: {YAML_ASSERTION}")), "{p}");
    assert!(p.contains("eqeqeq: Expected '===' and instead saw '==' (in `stringifyNumber`)"), "{p}");
    assert!(p.contains("if (i == -1) {"), "the line, in its snippet: {p}");
    assert_eq!(said_not_a_target(&p, YAML_TARGET), None, "{p}");

    // Attempt 2: every check passes, the target among them.
    for check in ["npm-lint", "npm-test", "tsc", "targets"] {
        let e = check_event(&r, task, 2, check);
        assert_eq!(e["passed"], true, "{check}: {e}");
    }
}

const CRON_TARGET: &str =
    "tests/cron.test.ts > cron > should catch errors in async onTick, if errorHandler is provided";
const CRON_TEST: &str = "should catch errors in async onTick, if errorHandler is provided";
const CRON_FILE: &str = "src/job.ts";

/// cron (kelektiv/node-cron, "catch errors in async onTick functions"):
/// jest 30 through @swc/jest, with coverage thresholds; ESLint 8.57 with a
/// flat config (typescript-eslint, eslint-plugin-jest, Prettier as a rule);
/// tsc. `init` places the worktrees beside the checkout and shares
/// `node_modules`. The wrong change catches the async callback's rejection
/// but only logs it (the job's errorHandler is still never called) under a
/// comment that starts with a capital (capitalized-comments).
#[test]
fn cron_on_jest_fails_on_its_test_and_new_eslint_error_then_takes_the_upstream_fix() {
    let env = TestEnv::new();
    let Some((r, said, config)) = project(&env, "cron", &["jest", "eslint", "tsc", "prettier"]) else { return };
    assert!(config.contains("root = \"../cron.retry-run-worktrees\""), "{config}");
    assert!(config.contains("share = [\"node_modules\"]"), "{config}");
    assert!(config.contains("run = \"npm run --silent test -- --verbose\""), "{config}");
    assert!(config.contains("run = \"npm run --silent lint\""), "{config}");
    assert!(config.contains("run = \"npm exec -- tsc --noEmit --pretty false\""), "{config}");
    assert!(said.contains(&format!("npm-test: 160 passed, 1 failing: {CRON_TARGET}")), "{said}");
    assert!(said.contains("npm-lint: no diagnostic on the base"), "{said}");
    assert!(said.contains("tsc: no diagnostic on the base"), "{said}");

    let agent = env.agent(
        FakeAgent::new()
            .write(CRON_FILE, &change("cron.wrong", CRON_FILE))
            .next_call()
            .expect_prompt(CRON_TARGET)
            .expect_prompt("Received number of calls: 0")
            .expect_prompt("capitalized-comments")
            .write(CRON_FILE, &change("cron.right", CRON_FILE)),
    );
    let task = "catch-errors-in-async-ontick-functions";
    let out = env.run_agent(
        &r,
        &["run", "--quiet", "--task", "Catch errors in async onTick functions", "--target", CRON_TARGET],
        &agent,
    );
    assert_eq!(outcomes(&r, task), ["CHECK_FAILURE", "SUCCESS"], "{}\n{}", out.stderr, prompt(&r, task, 2));
    out.assert_code(0);

    let lint = check_event(&r, task, 1, "npm-lint");
    let new = lint["new_failures"].as_array().expect("new failures");
    assert_eq!(new.len(), 1, "exactly the new error: {lint}");
    assert!(
        new[0].as_str().is_some_and(|k| k.contains("capitalized-comments") && k.contains("CronJob.fireOnTick")),
        "{lint}"
    );
    // tsc waits behind the failing lint and targets (fail_fast = "targets").
    let targets = check_event(&r, task, 1, "targets");
    assert_eq!(targets["new_failures"], serde_json::json!([CRON_TARGET]), "{targets}");

    let p = prompt(&r, task, 2);
    assert!(p.contains(&format!("`{CRON_TARGET}` failed")), "{p}");
    assert!(p.contains("Expected number of calls: 1") && p.contains("Received number of calls: 0"), "{p}");
    assert!(
        p.contains(
            "capitalized-comments: Comments should not begin with an uppercase character (in `CronJob.fireOnTick`)"
        ),
        "{p}"
    );
    assert!(p.contains("// Log rejections of async callbacks"), "the line, in its snippet: {p}");
    // ESLint's row, joined with its file header in the lint check's digest.
    assert!(p.contains("src/job.ts:261:"), "the digest's error entry: {p}");
    // The base's failure jest names `cron › ...` is the target, not
    // another test.
    assert_eq!(said_not_a_target(&p, CRON_TEST), None, "{p}");

    for check in ["npm-lint", "npm-test", "tsc", "targets"] {
        let e = check_event(&r, task, 2, check);
        assert_eq!(e["passed"], true, "{check}: {e}");
    }
}
