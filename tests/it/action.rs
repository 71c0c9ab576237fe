//! The GitHub Action (`action.yml`): valid YAML of a composite action whose
//! scope and diff steps, run as the action runs them, annotate a pull
//! request's violations and write its summary; and the example workflow
//! uses only inputs the action has.

use std::path::{Path, PathBuf};

use yaml_rust2::{Yaml as Value, YamlLoader};

use crate::support::TestEnv;

fn yaml(rel: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    let text = std::fs::read_to_string(&path).expect("read yaml");
    let docs = YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{rel} is not valid YAML: {e}"));
    docs.into_iter().next().unwrap_or_else(|| panic!("{rel} holds no YAML document"))
}

fn step<'a>(action: &'a Value, name: &str) -> &'a Value {
    action["runs"]["steps"]
        .as_vec()
        .expect("steps")
        .iter()
        .find(|s| s["name"].as_str() == Some(name))
        .unwrap_or_else(|| panic!("no step {name:?}"))
}

#[test]
fn the_action_runs_scope_and_diff_on_a_pull_request() {
    let action = yaml("action.yml");
    assert_eq!(action["runs"]["using"].as_str(), Some("composite"));
    for s in action["runs"]["steps"].as_vec().expect("steps") {
        assert_eq!(s["shell"].as_str(), Some("bash"), "every composite run step names its shell");
    }
    // A pull request: the base, then a head that writes an allowed file and a denied one.
    let env = TestEnv::new();
    let r = env.repo("repo").file("src/app.py", "def f():\n    return 1\n").commit();
    let base = env.git(&r, &["rev-parse", "HEAD"]);
    std::fs::write(r.join("src/app.py"), "def f():\n    return 2\n").expect("write");
    std::fs::write(r.join("secret.lock"), "x\n").expect("write");
    env.git(&r, &["add", "-A"]);
    env.git(&r, &["commit", "-qm", "pr"]);
    let head = env.git(&r, &["rev-parse", "HEAD"]);
    let summary = env.path("summary.md");
    let bin_dir: PathBuf = Path::new(env!("CARGO_BIN_EXE_retry-run")).parent().expect("bin dir").to_path_buf();
    let run_step = |name: &str| {
        let script = step(&action, name)["run"].as_str().expect("run script").to_string();
        let mut path = bin_dir.as_os_str().to_owned();
        path.push(":");
        path.push(env.path_var());
        env.command("bash", &r)
            .env("PATH", path)
            .env("RR_BASE", &base)
            .env("RR_HEAD", &head)
            .env("RR_ALLOW", "src/**\ntests/**\n")
            .env("RR_DENY", "**/*.lock\n")
            .env("RR_MAX_LINES", "300")
            .env("GITHUB_STEP_SUMMARY", &summary)
            .args(["-e", "-c", &script])
            .output()
            .expect("bash runs")
    };
    let scope = run_step("Scope");
    assert_eq!(scope.status.code(), Some(1), "violations fail the step");
    let out = String::from_utf8_lossy(&scope.stdout);
    assert!(out.contains("::error file=secret.lock,title=scope violation::"), "{out}");
    assert!(!out.contains("src/app.py"), "{out}");
    // A pull request that adds a workflow: a violation of its own, or a
    // warning with the action's `acts-after-land: flag`.
    std::fs::remove_file(r.join("secret.lock")).expect("rm");
    std::fs::create_dir_all(r.join(".github/workflows")).expect("mkdir");
    std::fs::write(r.join(".github/workflows/x.yml"), "on: push\n").expect("write");
    env.git(&r, &["add", "-A"]);
    env.git(&r, &["commit", "-qm", "ci"]);
    let ci_head = env.git(&r, &["rev-parse", "HEAD"]);
    let script = step(&action, "Scope")["run"].as_str().expect("run script").to_string();
    let scope_with = |mode: &str| {
        let mut path = bin_dir.as_os_str().to_owned();
        path.push(":");
        path.push(env.path_var());
        env.command("bash", &r)
            .env("PATH", path)
            .env("RR_BASE", &base)
            .env("RR_HEAD", &ci_head)
            .env("RR_ALLOW", "src/**\n.github/**\n")
            .env("RR_DENY", "")
            .env("RR_ACTS_AFTER_LAND", mode)
            .args(["-e", "-c", &script])
            .output()
            .expect("bash runs")
    };
    let fail = scope_with("");
    assert_eq!(fail.status.code(), Some(1), "{}", String::from_utf8_lossy(&fail.stderr));
    let out = String::from_utf8_lossy(&fail.stdout);
    assert!(out.contains("::error file=.github/workflows/x.yml,title=scope violation::acts-after-land"), "{out}");
    let flag = scope_with("flag");
    assert_eq!(flag.status.code(), Some(0), "{}", String::from_utf8_lossy(&flag.stderr));
    assert!(String::from_utf8_lossy(&flag.stdout).contains("::warning file=.github/workflows/x.yml"));
    let diff = run_step("Diff summary");
    assert_eq!(diff.status.code(), Some(0), "{}", String::from_utf8_lossy(&diff.stderr));
    let md = std::fs::read_to_string(&summary).expect("the job summary");
    assert!(md.contains("src/app.py") && md.contains("secret.lock"), "{md}");
}

#[test]
fn the_example_workflow_uses_the_actions_own_inputs() {
    let action = yaml("action.yml");
    let workflow = yaml("examples/pull-request.yml");
    let steps = workflow["jobs"]["scope-and-diff"]["steps"].as_vec().expect("steps");
    let uses =
        steps.iter().find(|s| s["uses"].as_str().is_some_and(|u| u.ends_with("/retry-run@main"))).expect("the action");
    let inputs = action["inputs"].as_hash().expect("inputs");
    for (k, _) in uses["with"].as_hash().expect("with") {
        assert!(inputs.contains_key(k), "the example passes {k:?}, which the action does not take");
    }
    assert_eq!(steps[0]["with"]["fetch-depth"].as_i64(), Some(0), "both sides and their merge base are fetched");
}
