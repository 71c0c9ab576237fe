//! Detect mode (`[sandbox] mode = "detect"`): nothing confines the agent,
//! so retry-run compares the repository's internals before and after it.
//! An agent (a script) deletes an object, adds an alternate object store,
//! moves a branch or rewrites its worktree's git link: each change is named
//! in the record; after a rewritten link no unconfined step runs (the
//! check, the next attempt and its `worktree.setup`). A legit commit in the
//! worktree is no violation.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::record::{events, of_type, outcomes};
use crate::support::{FakeAgent, Run, TestEnv};

/// A repository in detect mode whose check and `worktree.setup` each add a
/// line to a marker file outside it: `check-ran` (only once the agent's
/// change is there) and `setup-ran`.
fn repo(env: &TestEnv, max_attempts: u32) -> PathBuf {
    let check = env.path("check-ran");
    let setup = env.path("setup-ran");
    let toml = format!(
        "max_attempts = {max_attempts}\n\
         [sandbox]\nmode = \"detect\"\n\
         [retry]\nbaseline = \"off\"\n\
         [worktree]\nsetup = \"echo setup >> {}\"\n\
         [[check]]\nname = \"marker\"\nkind = \"test\"\nrun = \"grep -q agent src/app.txt && echo ran >> {}\"\n",
        setup.display(),
        check.display()
    );
    env.repo("repo")
        .file("src/app.txt", "value = 1\n")
        .file("notes.txt", "the user's notes\n")
        .file("retry-run.toml", toml)
        .commit()
}

fn run(env: &TestEnv, r: &Path, task: &str, agent: FakeAgent) -> Run {
    let agent = env.agent(agent);
    Run::of(env.retry_run(r).args(agent.after(&["run", "--quiet", "--task", task])))
}

/// The `ScopeChecked` events of attempt `n` of `task`, as `retry-run inspect --json` shows them.
fn scope_checked(env: &TestEnv, r: &Path, task: &str, n: u32) -> Vec<Value> {
    let doc = env.run(r, &["inspect", &format!("{task}/{n}"), "--json"]).assert_code(0).json();
    doc["events"]
        .as_array()
        .map(|e| e.iter().filter(|e| e["type"] == "ScopeChecked").cloned().collect())
        .unwrap_or_default()
}

/// (path, reason) of every violation of `checked`.
fn violations(checked: &[Value]) -> Vec<(String, String)> {
    checked
        .iter()
        .flat_map(|e| e["violations"].as_array().cloned().unwrap_or_default())
        .map(|v| (v["path"].as_str().unwrap_or("").to_string(), v["reason"].as_str().unwrap_or("").to_string()))
        .collect()
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map(|t| t.lines().count()).unwrap_or(0)
}

/// `objects/xx/yyyy...`: where a loose object of the repository at `r` is.
fn loose(env: &TestEnv, r: &Path, rev: &str) -> String {
    let oid = env.git(r, &["rev-parse", rev]);
    format!("objects/{}/{}", &oid[..2], &oid[2..])
}

#[test]
fn a_deleted_object_of_the_users_head_is_named() {
    let env = TestEnv::new();
    let r = repo(&env, 1);
    let part = loose(&env, &r, "HEAD:notes.txt");
    assert!(r.join(".git").join(&part).is_file(), "the blob is a loose object");
    let out = run(
        &env,
        &r,
        "Delete",
        FakeAgent::new()
            .append("src/app.txt", "agent\n")
            .sh(&format!("rm -f \"$(git rev-parse --git-common-dir)/{part}\"")),
    );
    out.assert_code(1);
    assert_eq!(outcomes(&r, "delete"), ["SCOPE_VIOLATION"]);
    let found = violations(&scope_checked(&env, &r, "delete", 1));
    assert_eq!(found, [(part, "git-internal".to_string())]);
    assert_eq!(lines(&env.path("check-ran")), 0, "no check runs after a scope violation");
}

#[test]
fn an_alternate_object_store_is_named() {
    let env = TestEnv::new();
    let r = repo(&env, 1);
    let alt = env.path("alt");
    std::fs::create_dir(&alt).expect("mkdir");
    let out = run(
        &env,
        &r,
        "Alternates",
        FakeAgent::new()
            .append("src/app.txt", "agent\n")
            .sh(&format!("echo {} > \"$(git rev-parse --git-common-dir)/objects/info/alternates\"", alt.display())),
    );
    out.assert_code(1);
    let found = violations(&scope_checked(&env, &r, "alternates", 1));
    assert_eq!(found, [("objects/info/alternates".to_string(), "git-internal".to_string())]);
}

#[test]
fn a_moved_branch_and_a_new_ref_are_named() {
    let env = TestEnv::new();
    let r = repo(&env, 1);
    let main = env.git(&r, &["rev-parse", "refs/heads/main"]);
    let out = run(
        &env,
        &r,
        "Move",
        FakeAgent::new()
            .append("src/app.txt", "agent\n")
            .sh("git add -A && git -c user.name=a -c user.email=a@b commit -qm agent")
            .sh("git update-ref refs/heads/main HEAD && git update-ref refs/keep/mine HEAD"),
    );
    out.assert_code(1);
    assert_ne!(env.git(&r, &["rev-parse", "refs/heads/main"]), main, "detect mode only detects");
    let found = violations(&scope_checked(&env, &r, "move", 1));
    // The branch is the checkout's (its watch names it); the other ref is
    // named by the repository's internals, each once.
    assert_eq!(
        found,
        [
            ("refs/heads/main".to_string(), "outside-worktree".to_string()),
            ("refs/keep/mine".to_string(), "git-internal".to_string())
        ]
    );
}

#[test]
fn after_a_rewritten_git_link_no_check_no_setup_and_no_further_attempt_runs() {
    let env = TestEnv::new();
    let r = repo(&env, 3);
    crate::support::keep_worktrees(&env, &r);
    let head = env.git(&r, &["rev-parse", "HEAD"]);
    let out = run(
        &env,
        &r,
        "Relink",
        FakeAgent::new()
            .append("src/app.txt", "agent\n")
            .sh(&format!("printf 'gitdir: {}/.git\\n' > .git", r.display())),
    );
    out.assert_code(1);
    assert_eq!(lines(&env.path("check-ran")), 0, "the check ran after the link changed");
    assert_eq!(lines(&env.path("setup-ran")), 1, "worktree.setup ran again after the link changed");
    assert_eq!(outcomes(&r, "relink"), ["SCOPE_VIOLATION"], "one attempt, no further one");
    let ev = events(&r, "relink");
    assert!(of_type(&ev, "CheckFinished").is_empty() && of_type(&ev, "VerifierFinished").is_empty());
    let done = of_type(&ev, "AttemptCompleted")[0].clone();
    assert_eq!(done["halted"], serde_json::json!({"after": "agent", "parts": ["worktree/.git"]}), "{done}");
    assert!(done["reason"].as_str().is_some_and(|r| r.contains("worktree/.git")), "{done}");
    let escalated = of_type(&ev, "TaskEscalated")[0].clone();
    assert!(escalated["reason"].as_str().is_some_and(|r| r.contains("no further attempt")), "{escalated}");
    let checked = scope_checked(&env, &r, "relink", 1);
    assert!(violations(&checked).contains(&("worktree/.git".to_string(), "git-internal".to_string())), "{checked:?}");
    assert!(checked[0]["restored"].as_array().is_some_and(|r| r.iter().any(|x| x == "worktree/.git")), "{checked:?}");
    assert!(
        out.stderr.contains("retry-run runs none of its checks or verifier and no further attempt"),
        "{}",
        out.stderr
    );
    assert_eq!(env.git(&r, &["rev-parse", "HEAD"]), head, "the user's HEAD moved");
    let link = std::fs::read_to_string(r.join(".git/retry-run/worktrees/relink/.git")).expect(".git file");
    assert!(link.contains("/worktrees/retry-run-relink"), "the link is put back: {link}");
}

#[test]
fn a_commit_in_the_worktree_is_reported_and_no_violation() {
    let env = TestEnv::new();
    let r = repo(&env, 1);
    let out = run(
        &env,
        &r,
        "Commit",
        FakeAgent::new()
            .append("src/app.txt", "agent\n")
            .sh("git add -A && git -c user.name=a -c user.email=a@b commit -qm agent"),
    );
    out.assert_code(0);
    assert_eq!(outcomes(&r, "commit"), ["SUCCESS"]);
    assert_eq!(lines(&env.path("check-ran")), 1, "the check ran");
    let checked = scope_checked(&env, &r, "commit", 1);
    assert!(violations(&checked).is_empty(), "{checked:?}");
    // Its objects (a blob, a tree for `src`, the root tree and the commit)
    // went to the attempt's quarantine, not the repository's store, and
    // retry-run imported them after the comparison.
    let added = checked[0]["objects_added"]["loose"].as_u64().unwrap_or(0);
    assert_eq!(added, 0, "{checked:?}");
    let quarantine = r.join(".git/retry-run/tasks/commit/attempts/1/objects");
    let fanout =
        std::fs::read_dir(&quarantine).map(|rd| rd.flatten().filter(|e| e.file_name().len() == 2).count()).unwrap_or(0);
    assert!(fanout >= 1, "no object in {}", quarantine.display());
    let head = env.git(&r, &["rev-parse", "retry-run/commit"]);
    assert!(!head.is_empty());
}

#[test]
fn a_check_that_rewrites_the_git_link_stops_the_verifier() {
    let env = TestEnv::new();
    let verified = env.path("verifier-ran");
    let toml = format!(
        "max_attempts = 2\n[sandbox]\nmode = \"detect\"\n[retry]\nbaseline = \"off\"\n\
         [[check]]\nname = \"relink\"\nkind = \"lint\"\nrun = \"printf 'gitdir: %s/.git\\\\n' \\\"$HOME\\\" > .git\"\n\
         [verifier]\nretries = 0\nrun = \"echo ran >> {}; echo '{{\\\"verdict\\\": \\\"approved\\\"}}'\"\n",
        verified.display()
    );
    let r = env.repo("repo").file("src/app.txt", "value = 1\n").file("retry-run.toml", toml).commit();
    let out = run(&env, &r, "Check relink", FakeAgent::new().append("src/app.txt", "agent\n"));
    out.assert_code(1);
    assert!(!verified.exists(), "the verifier ran after a check changed the link");
    assert_eq!(outcomes(&r, "check-relink"), ["SCOPE_VIOLATION"]);
    let ev = events(&r, "check-relink");
    assert_eq!(of_type(&ev, "CheckFinished").len(), 1, "the check ran");
    let done = of_type(&ev, "AttemptCompleted")[0].clone();
    assert_eq!(done["halted"], serde_json::json!({"after": "checks", "parts": ["worktree/.git"]}), "{done}");
    let after_checks: Vec<&Value> =
        of_type(&ev, "ScopeChecked").into_iter().filter(|e| e["after"] == "checks").collect();
    assert_eq!(
        violations(&after_checks.into_iter().cloned().collect::<Vec<_>>()),
        [("worktree/.git".to_string(), "git-internal".to_string())]
    );
}
