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

/// The repository of [`repo`] with its objects packed (as a real one's are).
fn packed_repo(env: &TestEnv) -> PathBuf {
    let r = repo(env, 1);
    env.git(&r, &["repack", "-adq"]);
    env.git(&r, &["prune-packed"]);
    r
}

/// Another clone of the repository hard-links its packs (their link
/// count and ctime move), made by the agent itself: no violation.
#[test]
fn a_local_clone_that_hard_links_the_packs_is_no_violation() {
    let env = TestEnv::new();
    let r = packed_repo(&env);
    let clone = env.path("clone");
    let out = run(
        &env,
        &r,
        "Clone",
        FakeAgent::new()
            .append("src/app.txt", "agent\n")
            .sh(&format!("git clone -q --local \"$(git rev-parse --git-common-dir)\" {}", clone.display())),
    );
    out.assert_code(0);
    assert!(clone.join("src/app.txt").is_file(), "the clone was made");
    assert_eq!(outcomes(&r, "clone"), ["SUCCESS"]);
    assert_eq!(violations(&scope_checked(&env, &r, "clone", 1)), Vec::<(String, String)>::new());
}

/// The user's own git repacks (`git repack -ad`) and clones the repository
/// while the agent runs: the attempt is not charged for it, and the
/// repack is recorded as such.
#[test]
fn a_repack_and_a_clone_by_the_user_during_the_attempt_are_not_charged_to_it() {
    let env = TestEnv::new();
    let r = packed_repo(&env);
    // A loose object and a second pack, for the repack to fold together.
    env.write("extra.txt", "more\n");
    std::fs::copy(env.path("extra.txt"), r.join("extra.txt")).expect("copy");
    env.git(&r, &["add", "extra.txt"]);
    env.git(&r, &["commit", "-qm", "extra"]);
    env.git(&r, &["repack", "-dq"]);
    std::fs::write(r.join("loose.txt"), "loose\n").expect("write");
    env.git(&r, &["add", "loose.txt"]);
    env.git(&r, &["commit", "-qm", "loose"]);
    let (started, go) = (env.path("started"), env.path("go"));
    let agent = env.agent(FakeAgent::new().append("src/app.txt", "agent\n").sh(&format!(
        "touch {}; i=0; while [ ! -f {} ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done",
        started.display(),
        go.display()
    )));
    let child = env
        .retry_run(&r)
        .args(agent.after(&["run", "--quiet", "--task", "Repack"]))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("retry-run starts");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !started.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(started.exists(), "the agent started");
    let packs_before = std::fs::read_dir(r.join(".git/objects/pack")).expect("packs").count();
    env.git(&r, &["repack", "-adq"]);
    env.git(&r, &["clone", "-q", "--local", ".", &env.path("clone").display().to_string()]);
    let packs_after = std::fs::read_dir(r.join(".git/objects/pack")).expect("packs").count();
    assert!(packs_after < packs_before, "the repack removed packs: {packs_before} -> {packs_after}");
    std::fs::write(&go, "").expect("go");
    let out = child.wait_with_output().expect("retry-run ends");
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(outcomes(&r, "repack"), ["SUCCESS"]);
    let checked = scope_checked(&env, &r, "repack", 1);
    assert_eq!(violations(&checked), Vec::<(String, String)>::new(), "{checked:?}");
    let repacked: Vec<String> = checked
        .iter()
        .flat_map(|e| e["objects_added"]["repacked"].as_array().cloned().unwrap_or_default())
        .filter_map(|p| p.as_str().map(String::from))
        .collect();
    assert!(repacked.iter().any(|p| p.ends_with(".pack")), "{checked:?}");
    assert!(
        repacked.iter().any(|p| p.starts_with("objects/") && !p.starts_with("objects/pack/")),
        "the loose object packed: {checked:?}"
    );
}

/// An agent that truncates a pack, or replaces one by another of the same
/// size, is still caught.
#[test]
fn a_truncated_or_replaced_pack_is_named() {
    let env = TestEnv::new();
    let r = packed_repo(&env);
    let packs = |r: &Path| -> Vec<String> {
        std::fs::read_dir(r.join(".git/objects/pack"))
            .expect("packs")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".pack"))
            .collect()
    };
    // A second pack, of an object nothing needs, for the agent to break
    // (breaking the one with HEAD's objects would stop the run itself).
    let first = packs(&r);
    env.git(&r, &["checkout", "-qb", "side"]);
    std::fs::write(r.join("junk.txt"), "junk\n").expect("write");
    env.git(&r, &["add", "junk.txt"]);
    env.git(&r, &["commit", "-qm", "side"]);
    env.git(&r, &["checkout", "-q", "main"]);
    env.git(&r, &["repack", "-dq"]);
    let pack = packs(&r).into_iter().find(|p| !first.contains(p)).expect("a second pack");
    let idx = pack.replace(".pack", ".idx");
    let out = run(
        &env,
        &r,
        "Truncate",
        FakeAgent::new().append("src/app.txt", "agent\n").sh(&format!(
            "d=\"$(git rev-parse --git-common-dir)/objects/pack\"; chmod u+w \"$d\"/*; truncate -s 100 \"$d/{pack}\"; \
             s=$(stat -c %s \"$d/{idx}\"); head -c $s /dev/zero > \"$d/{idx}.new\"; mv \"$d/{idx}.new\" \"$d/{idx}\""
        )),
    );
    out.assert_code(1);
    assert_eq!(outcomes(&r, "truncate"), ["SCOPE_VIOLATION"]);
    let mut found = violations(&scope_checked(&env, &r, "truncate", 1));
    found.sort();
    assert_eq!(
        found,
        [
            (format!("objects/pack/{idx}"), "git-internal".to_string()),
            (format!("objects/pack/{pack}"), "git-internal".to_string())
        ]
    );
}
