//! The base's checks once per base: a second task on the same base reuses
//! the first one's results; a change of the base, the check, the program it
//! starts or its `PATH`, and `--fresh-baseline`, run them again; a corrupt
//! cache entry is run again and replaced.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::record::first;
use crate::support::{FakeAgent, TestEnv};

/// A repository whose check runs `tool.sh`, a program outside it (its
/// absolute path in the config), failing on the base as a lint does.
fn project(env: &TestEnv) -> (PathBuf, PathBuf) {
    let tool = env.write("bin/tool.sh", "#!/bin/sh\necho 'src/app.py:1:1: F401 `os` imported but unused'\nexit 1\n");
    let mut perm = std::fs::metadata(&tool).expect("tool").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
    std::fs::set_permissions(&tool, perm).expect("chmod");
    let r = env.repo("repo").file("src/app.py", "import os\n").file("retry-run.toml", config(&tool, "lint")).commit();
    (r, tool)
}

fn config(tool: &Path, name: &str) -> String {
    format!("max_attempts = 1\n[[check]]\nname = \"{name}\"\nrun = \"{}\"\nkind = \"lint\"\n", tool.display())
}

/// Runs task `task` (an agent that appends a line) with `extra` flags and
/// returns its `BaselineChecked` event's `cache`.
fn task(env: &TestEnv, r: &Path, task: &str, extra: &[&str]) -> Value {
    let agent = env.agent(FakeAgent::new().append("src/app.py", "x = 1\n"));
    let mut args = vec!["run", "--quiet", "--task", task];
    args.extend_from_slice(extra);
    env.run_agent(r, &args, &agent).assert_code(0);
    let id = task.to_lowercase().replace(' ', "-");
    first(r, &id, "BaselineChecked")["cache"].clone()
}

fn hit(cache: &Value) -> bool {
    cache["hit"].as_bool().expect("cache.hit")
}

#[test]
fn a_second_task_on_the_same_base_reuses_the_first_ones_checks() {
    let env = TestEnv::new();
    let (r, _) = project(&env);
    let one = task(&env, &r, "One", &[]);
    assert!(!hit(&one), "{one}");
    let two = task(&env, &r, "Two", &[]);
    assert!(hit(&two), "{two}");
    assert_eq!(two["from"], "one");
    assert_eq!(two["key"], one["key"]);
    // The check did not run on the base for task two: no output of it.
    let base = env.git(&r, &["rev-parse", "HEAD"]).trim().to_string();
    let tasks = r.join(".git/retry-run/tasks");
    assert!(tasks.join(format!("one/baseline/{base}/lint.out")).is_file());
    assert!(!tasks.join(format!("two/baseline/{base}/lint.out")).exists());
    // Its failure is still the base's: the attempt passes the lint.
    let checked = first(&r, "two", "BaselineChecked");
    assert_eq!(checked["passed"], false, "{checked}");
    // --fresh-baseline runs it again.
    assert!(!hit(&task(&env, &r, "Three", &["--fresh-baseline"])));
}

#[test]
fn each_part_of_the_key_runs_the_checks_again() {
    let env = TestEnv::new();
    let (r, tool) = project(&env);
    assert!(!hit(&task(&env, &r, "Seed", &[])));
    assert!(hit(&task(&env, &r, "Same", &[])));
    // The program it starts changed (its modification time).
    let later = std::time::SystemTime::now() + std::time::Duration::from_secs(5);
    std::fs::File::options().write(true).open(&tool).expect("tool").set_modified(later).expect("touch");
    assert!(!hit(&task(&env, &r, "Tool", &[])));
    assert!(hit(&task(&env, &r, "Tool again", &[])));
    // The check's definition changed.
    std::fs::write(r.join("retry-run.toml"), config(&tool, "lint") + "timeout = \"9m\"\n").expect("config");
    assert!(!hit(&task(&env, &r, "Timeout", &[])));
    // Another base.
    env.git(&r, &["commit", "-qam", "another base"]);
    assert!(!hit(&task(&env, &r, "Base", &[])));
    // Another PATH.
    let agent = env.agent(FakeAgent::new().append("src/app.py", "x = 1\n"));
    let path = format!("{}:{}", env.path("bin").display(), env.path_var().to_string_lossy());
    let out = env.retry_run(&r).env("PATH", path).args(agent.after(&["run", "--quiet", "--task", "Path"])).output();
    assert!(out.expect("run").status.success());
    assert!(!hit(&first(&r, "path", "BaselineChecked")["cache"]));
}

#[test]
fn a_corrupt_cache_entry_is_run_again_and_replaced() {
    let env = TestEnv::new();
    let (r, _) = project(&env);
    let one = task(&env, &r, "One", &[]);
    let entry = r.join(".git/retry-run/baselines").join(format!("{}.json", one["key"].as_str().expect("key")));
    std::fs::write(&entry, "{ not json").expect("corrupt");
    assert!(!hit(&task(&env, &r, "Two", &[])));
    let again: Value = serde_json::from_slice(&std::fs::read(&entry).expect("entry")).expect("replaced");
    assert_eq!(again["task"], "two");
    assert!(hit(&task(&env, &r, "Three", &[])));
}
