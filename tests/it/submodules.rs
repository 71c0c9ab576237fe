//! Real submodules: a moved pointer and uncommitted changes inside one.

use std::path::Path;

use crate::support::TestEnv;

fn setup(env: &TestEnv) -> std::path::PathBuf {
    let sub = env.repo("sub").file("lib.txt", "v1\n").commit();
    let repo = env.repo("repo").file("src/a.txt", "a\n").init();
    env.git(&repo, &["add", "-A"]);
    env.git(&repo, &["submodule", "add", "-q", sub.to_str().expect("utf-8"), "vendor/sub"]);
    env.git(&repo, &["commit", "-q", "-m", "base with submodule"]);
    repo
}

fn scope(env: &TestEnv, repo: &Path, allow: &str) -> serde_json::Value {
    env.run(repo, &["scope", "--base", "main", "--allow", allow, "--allow", ".gitmodules", "--format", "json"]).json()
}

#[test]
fn uncommitted_changes_inside_a_submodule() {
    let env = TestEnv::new();
    let repo = setup(&env);
    assert_eq!(scope(&env, &repo, "src/**")["checked"], 0, "a clean submodule is no write");

    std::fs::write(repo.join("vendor/sub/lib.txt"), "edited in place\n").expect("write");
    let json = scope(&env, &repo, "src/**");
    assert_eq!(json["violations"][0]["path"], "vendor/sub");
    assert_eq!(json["violations"][0]["reason"], "submodule");
    assert_eq!(json["violations"][0]["status"], "M");
    assert_eq!(scope(&env, &repo, "vendor/**")["violations"].as_array().map(Vec::len), Some(0));

    // Untracked files inside the submodule count too.
    env.git(&repo.join("vendor/sub"), &["checkout", "-q", "--", "lib.txt"]);
    std::fs::write(repo.join("vendor/sub/new.txt"), "new\n").expect("write");
    assert_eq!(scope(&env, &repo, "src/**")["violations"][0]["reason"], "submodule");
}

#[test]
fn a_moved_pointer_committed_or_not() {
    let env = TestEnv::new();
    let repo = setup(&env);
    let inner = repo.join("vendor/sub");
    std::fs::write(inner.join("lib.txt"), "v2\n").expect("write");
    env.git(&inner, &["commit", "-q", "-am", "sub v2"]);

    // Working tree: the submodule's HEAD moved, nothing staged.
    let json = scope(&env, &repo, "src/**");
    assert_eq!(json["violations"][0]["path"], "vendor/sub");
    assert_eq!(json["violations"][0]["reason"], "submodule");
    let diff = env.run(&repo, &["diff", "--base", "main", "--format", "json"]).json();
    assert_eq!(diff["files"][0]["path"], "vendor/sub");
    assert_eq!(diff["files"][0]["status"], "M");

    // Committed on a branch: compared by --head.
    env.git(&repo, &["checkout", "-q", "-b", "bump"]);
    env.git(&repo, &["commit", "-q", "-am", "bump sub"]);
    let run = env.run(&repo, &["scope", "--base", "main", "--head", "bump", "--allow", "src/**", "--format", "json"]);
    run.assert_code(1);
    assert_eq!(run.json()["violations"][0]["reason"], "submodule");
    env.run(&repo, &["scope", "--base", "main", "--head", "bump", "--allow", "vendor/sub"]).assert_code(0);
}
