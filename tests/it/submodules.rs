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

// `run`: task worktrees get the submodules the checkout has initialised.

use crate::support::record::{first, outcomes, prompt};
use crate::support::{FakeAgent, Run};

/// A repository whose submodule `sub` (`lib.txt` = `v1`) the checkout has
/// initialised, with `toml` as its config; the submodule's origin is then
/// removed, so that nothing can fetch it.
fn initialised(env: &TestEnv, toml: &str) -> std::path::PathBuf {
    let sub = env.repo("origin-sub").file("lib.txt", "v1\n").commit();
    let repo = env.repo("repo").file("src/a.txt", "a\n").file("retry-run.toml", toml).init();
    env.git(&repo, &["submodule", "add", "-q", sub.to_str().expect("utf-8"), "sub"]);
    env.git(&repo, &["add", "-A"]);
    env.git(&repo, &["commit", "-q", "-m", "base with submodule"]);
    std::fs::remove_dir_all(&sub).expect("remove the submodule's origin");
    repo
}

/// A repository with submodule `sub` that the checkout has not initialised.
fn uninitialised(env: &TestEnv, toml: &str) -> std::path::PathBuf {
    let sub = env.repo("origin-sub").file("lib.txt", "v1\n").commit();
    let sha = env.git(&sub, &["rev-parse", "HEAD"]);
    let gitmodules = format!("[submodule \"sub\"]\n\tpath = sub\n\turl = {}\n", sub.display());
    env.repo("repo")
        .file("src/a.txt", "a\n")
        .file(".gitmodules", gitmodules)
        .file("retry-run.toml", toml)
        .gitlink("sub", &sha)
        .commit()
}

fn run(env: &TestEnv, repo: &Path, task: &str, agent: FakeAgent) -> Run {
    env.run_agent(repo, &["run", "--quiet", "--task", task], &env.agent(agent))
}

const NEEDS_SUB: &str =
    "max_attempts = 1\n[retry]\nbaseline = false\n[[check]]\nname = \"needs-sub\"\nrun = \"grep -q v1 sub/lib.txt\"\n";

#[test]
fn an_initialised_submodule_is_in_the_worktree_at_the_base_without_network() {
    let env = TestEnv::new();
    let repo = initialised(&env, NEEDS_SUB);
    crate::support::keep_worktrees(&env, &repo);
    // The checkout's submodule moves on; the worktree gets the base's commit.
    let inner = repo.join("sub");
    std::fs::write(inner.join("lib.txt"), "v2\n").expect("write");
    env.git(&inner, &["commit", "-q", "-am", "v2 in the checkout"]);
    let recorded = env.git(&repo, &["rev-parse", "HEAD:sub"]);
    run(&env, &repo, "Edit a", FakeAgent::new().expect("sub/lib.txt", "v1\n").append("src/a.txt", "b\n"))
        .assert_code(0);
    assert_eq!(outcomes(&repo, "edit-a"), ["SUCCESS"]);
    let wt = repo.join(".git/retry-run/worktrees/edit-a");
    assert_eq!(env.git(&wt.join("sub"), &["rev-parse", "HEAD"]), recorded);
    assert_eq!(std::fs::read_to_string(wt.join("sub/lib.txt")).expect("read"), "v1\n");
}

#[test]
fn an_edit_inside_an_initialised_submodule_is_a_violation_and_the_reset_clears_it() {
    let env = TestEnv::new();
    let repo = initialised(&env, "max_attempts = 2\n");
    // Each call finds the submodule as the base records it.
    let agent = FakeAgent::new()
        .expect("sub/lib.txt", "v1\n")
        .sh("test ! -e sub/new.txt")
        .append("sub/lib.txt", "fixed\n")
        .write("sub/new.txt", "new\n");
    run(&env, &repo, "Fix sub", agent).assert_code(1);
    assert_eq!(outcomes(&repo, "fix-sub"), ["SCOPE_VIOLATION", "SCOPE_VIOLATION"]);
    let scope = first(&repo, "fix-sub", "ScopeChecked")["violations"].clone();
    assert_eq!(scope[0]["path"], "sub", "{scope}");
    assert_eq!(scope[0]["reason"], "submodule", "{scope}");
    let p = prompt(&repo, "fix-sub", 2);
    assert!(p.contains("Revert every change inside `sub/`"), "{p}");
    assert!(p.contains("`[scope] submodules = \"allow\"`"), "{p}");
    assert!(!p.contains("exactly as the base"), "{p}");
    // The checkout's submodule is untouched.
    assert_eq!(std::fs::read_to_string(repo.join("sub/lib.txt")).expect("read"), "v1\n");
    assert_eq!(env.git(&repo.join("sub"), &["status", "--porcelain"]), "");
}

#[test]
fn an_edit_inside_an_uninitialised_submodule_is_a_violation_and_the_reset_empties_it() {
    let env = TestEnv::new();
    let repo = uninitialised(&env, "max_attempts = 2\n");
    let agent = FakeAgent::new().sh("test -z \"$(ls -A sub)\"").append("sub/lib.txt", "fixed\n");
    run(&env, &repo, "Fix sub", agent).assert_code(1);
    assert_eq!(outcomes(&repo, "fix-sub"), ["SCOPE_VIOLATION", "SCOPE_VIOLATION"]);
    let scope = first(&repo, "fix-sub", "ScopeChecked")["violations"].clone();
    assert_eq!((scope[0]["path"].as_str(), scope[0]["reason"].as_str()), (Some("sub"), Some("submodule")), "{scope}");
}

#[test]
fn a_check_failing_without_an_uninitialised_submodule_says_so() {
    let env = TestEnv::new();
    let repo = uninitialised(&env, NEEDS_SUB);
    run(&env, &repo, "Edit a", FakeAgent::new().append("src/a.txt", "b\n")).assert_code(1);
    assert_eq!(outcomes(&repo, "edit-a"), ["CHECK_FAILURE"]);
    let ctx = env.run(&repo, &["context", "edit-a"]).stdout;
    assert!(
        ctx.contains("submodule `sub` is not initialised in the worktree (it is not in your checkout either): run `git submodule update --init` in your checkout, or set worktree.setup"),
        "{ctx}"
    );
}

#[test]
fn with_submodules_allowed_a_commit_inside_one_is_the_change() {
    let env = TestEnv::new();
    let repo = initialised(&env, "max_attempts = 1\n[scope]\nsubmodules = \"allow\"\n");
    let agent = FakeAgent::new().sh("cd sub && echo v2 > lib.txt && git commit -q -am v2");
    run(&env, &repo, "Bump sub", agent).assert_code(0);
    assert_eq!(outcomes(&repo, "bump-sub"), ["SUCCESS"]);
    let snap = first(&repo, "bump-sub", "SnapshotTaken");
    assert_eq!(snap["paths"], serde_json::json!(["sub"]), "{snap}");
    let diff = env.git(&repo, &["diff", "--raw", "main", "refs/retry-run/bump-sub/1"]);
    assert!(diff.starts_with(":160000 160000 ") && diff.ends_with("M\tsub"), "{diff}");
}
