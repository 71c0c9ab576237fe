//! What an ended task leaves on disk (docs/worktrees.md): no worktree by
//! default, any attempt's files back on request, the disk budget over all
//! worktrees, and `clean --ended` / `--older-than`.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::child::LockHolder;
use crate::support::record::events;
use crate::support::{FakeAgent, Run, TestEnv, files_under};

fn repo(env: &TestEnv, toml: &str) -> PathBuf {
    env.repo("repo")
        .file("a.txt", "a\n")
        .file("src/lib.py", "def f():\n    return 1\n")
        .executable("run.sh", "#!/bin/sh\n")
        .symlink("link", "a.txt")
        .file("retry-run.toml", toml)
        .commit()
}

fn worktree(r: &Path, task: &str) -> PathBuf {
    r.join(".git/retry-run/worktrees").join(task)
}

/// A run of task `task` whose agent writes `a.txt` and a new file (it
/// succeeds: no checks), or writes nothing (`EMPTY_DIFF`: it escalates).
fn run_task(env: &TestEnv, r: &Path, task: &str, writes: bool) -> Run {
    let agent = if writes {
        FakeAgent::new().write("a.txt", &format!("{task} was here\n")).write("new/deep.txt", "new\n").exit(0)
    } else {
        FakeAgent::new().exit(0)
    };
    let agent = env.agent(agent);
    Run::of(env.retry_run(r).args(agent.after(&["run", "--task", task, "--max-attempts", "1"])))
}

/// Every file below `dir` but git's link file `.git`.
fn files(dir: &Path) -> std::collections::BTreeMap<Vec<u8>, (u32, Vec<u8>)> {
    let mut all = files_under(dir);
    all.remove(b".git".as_slice());
    all
}

fn removed_events(r: &Path, task: &str) -> Vec<Value> {
    events(r, task).into_iter().filter(|e| e["type"] == "WorktreeRemoved").collect()
}

#[test]
fn ended_tasks_leave_no_worktree_and_any_attempt_comes_back_byte_identical() {
    let env = TestEnv::new();
    let r = repo(&env, "");
    let out = run_task(&env, &r, "ok", true);
    out.assert_code(0);
    assert!(out.stdout.contains("worktree: removed ([worktree] keep)"), "{}", out.stdout);
    assert!(out.stdout.contains("retry-run worktree create ok --attempt 1"), "{}", out.stdout);
    assert!(!worktree(&r, "ok").exists() && !r.join(".git/worktrees/ok").exists());
    let gone = removed_events(&r, "ok");
    assert_eq!(gone.len(), 1, "{gone:?}");
    assert!(gone[0]["bytes"].as_u64().is_some_and(|b| b > 0), "{gone:?}");
    // Still ended as it was: not run again, not "stopped".
    assert!(
        env.run(&r, &["status"]).assert_code(0).stdout.lines().nth(1).is_some_and(|l| l.starts_with("ok\tsucceeded"))
    );
    assert_eq!(env.git(&r, &["rev-parse", "retry-run/ok"]), env.git(&r, &["rev-parse", "refs/retry-run/ok/1"]));

    run_task(&env, &r, "empty", false).assert_code(1);
    assert!(!worktree(&r, "empty").exists(), "an escalated task leaves none either");

    // The attempt's files, byte for byte, as git checks the attempt out.
    let path = env.run(&r, &["worktree", "create", "ok", "--attempt", "1"]).assert_code(0).stdout.trim().to_string();
    assert_eq!(Path::new(&path), worktree(&r, "ok"));
    let oracle = env.path("oracle");
    env.git(&r, &["worktree", "add", "-q", "--detach", oracle.to_str().expect("utf-8"), "refs/retry-run/ok/1"]);
    assert_eq!(files(Path::new(&path)), files(&oracle));
    assert_eq!(std::fs::read_to_string(Path::new(&path).join("a.txt")).expect("a.txt"), "ok was here\n");
    let none = env.run(&r, &["worktree", "create", "empty", "--attempt", "7"]);
    none.assert_code(2);
    assert!(none.stderr.contains("no recorded attempt 7"), "{}", none.stderr);
    // A later run of the task starts from the base again.
    run_task(&env, &r, "ok", true).assert_code(0);
}

#[test]
fn keep_failed_keeps_only_escalated_tasks_and_clean_ended_removes_them_saying_what_it_freed() {
    let env = TestEnv::new();
    let r = repo(&env, "[worktree]\nkeep = \"failed\"\n");
    run_task(&env, &r, "ok", true).assert_code(0);
    run_task(&env, &r, "empty", false).assert_code(1);
    assert!(!worktree(&r, "ok").exists() && worktree(&r, "empty").exists());
    assert!(removed_events(&r, "empty").is_empty());

    // The worktree of a task that has not ended: `--ended` leaves it.
    env.run(&r, &["worktree", "create", "busy"]).assert_code(0);
    let out = env.run(&r, &["clean", "--ended"]).assert_code(0).stdout.clone();
    assert!(out.contains("removed worktree") && out.contains("empty") && out.contains("freed "), "{out}");
    assert!(!out.contains("busy"), "{out}");
    assert!(!worktree(&r, "empty").exists() && worktree(&r, "busy").exists());
    let young = env.run(&r, &["clean", "--older-than", "7d"]).assert_code(0).stdout.clone();
    assert!(young.starts_with("freed 0 B (0 worktrees)"), "{young}");
    let bad = env.run(&r, &["clean", "--older-than", "7 weeks"]);
    bad.assert_code(2);
    assert!(bad.stderr.contains("--older-than"), "{}", bad.stderr);
}

#[test]
fn the_budget_removes_the_oldest_ended_worktree_first_never_a_running_one_and_stops_when_short() {
    let env = TestEnv::new();
    let data = "0123456789abcdef\n".repeat(12_000); // about 200 KB
    let keep_all = |max: &str| format!("[worktree]\nkeep = \"all\"\nmax_disk = \"{max}\"\n");
    let r = env.repo("repo").file("data.txt", &data).file("retry-run.toml", keep_all("10GiB")).commit();
    // Oldest first: c, then a, then b, a second apart.
    for task in ["c", "a", "b"] {
        run_task(&env, &r, task, true).assert_code(0);
        std::thread::sleep(std::time::Duration::from_millis(1100));
    }
    let held = LockHolder::start(&r.join(".git"), "c", env.path("held"));
    // Three worktrees of about 215 KB, and one of about 200 KB to come:
    // one must go, and c (the oldest, but running) is not it.
    std::fs::write(r.join("retry-run.toml"), keep_all("700KB")).expect("toml");
    let out = run_task(&env, &r, "d", true);
    out.assert_code(0);
    assert!(out.stderr.contains("removed the worktree of ended task a"), "{}", out.stderr);
    assert!(!worktree(&r, "a").exists());
    for task in ["b", "c", "d"] {
        assert!(worktree(&r, task).exists(), "{task}");
    }
    let gone = removed_events(&r, "a");
    assert!(gone.len() == 1 && gone[0]["reason"].as_str().is_some_and(|s| s.contains("task d")), "{gone:?}");

    // Not enough even without b and d: nothing is removed, the task stops
    // before its attempt with exit 3.
    std::fs::write(r.join("retry-run.toml"), keep_all("300KB")).expect("toml");
    let out = run_task(&env, &r, "e", true);
    out.assert_code(3);
    assert!(out.stderr.contains("max_disk = 300KB") && out.stderr.contains("not ended: c"), "{}", out.stderr);
    for task in ["b", "c", "d"] {
        assert!(worktree(&r, task).exists(), "{task}");
    }
    assert!(!worktree(&r, "e").exists());
    held.release();

    let status = env.run(&r, &["status"]).assert_code(0).stdout.clone();
    assert!(status.contains("%)") && status.contains("of [worktree] max_disk = 300KB"), "{status}");
}

/// `npm install PACKAGE` in `dir` (the npm cache in the CI cache); `false`
/// when the registry cannot be reached.
fn npm_install(env: &TestEnv, dir: &Path, package: &str) -> bool {
    let cache = crate::support::tools::ci_cache().join("npm-cache");
    let out = env
        .command("npm", dir)
        .args(["install", "--no-audit", "--no-fund", "--loglevel=error", "--cache"])
        .arg(&cache)
        .arg(package)
        .output()
        .expect("npm runs");
    if out.status.success() {
        return true;
    }
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ENOTFOUND") || err.contains("EAI_AGAIN") || err.contains("ECONNREFUSED"), "npm: {err}");
    false
}

#[test]
fn a_shared_node_modules_is_in_every_attempt_read_only_or_private_and_follows_its_lock_file() {
    for mode in ["namespaces", "landlock"] {
        shared_node_modules(mode);
    }
}

/// In the namespaces the checkout's `node_modules` is mounted read-only
/// (a write fails); under Landlock alone the task gets a copy of its own
/// (a write stays in it, across the reset, until the lock file changes).
fn shared_node_modules(mode: &str) {
    let env = TestEnv::new();
    let toml = format!(
        "max_attempts = 2\n[sandbox]\nmode = \"{mode}\"\n[worktree]\nkeep = \"all\"\nshare = [\"node_modules\"]\n\
         [[check]]\nname = \"t\"\nkind = \"test\"\nrun = \"grep -q fixed a.txt\"\n"
    );
    let r = env
        .repo("repo")
        .file(".gitignore", "node_modules/\n")
        .file("package.json", "{\"name\": \"shared\", \"version\": \"1.0.0\"}\n")
        .file("a.txt", "a\n")
        .file("retry-run.toml", toml)
        .commit();
    if !npm_install(&env, &r, "is-number@7.0.0") {
        eprintln!("SKIPPED: the npm registry cannot be reached");
        return;
    }
    env.git(&r, &["add", "package.json", "package-lock.json"]);
    env.git(&r, &["commit", "-qm", "is-number"]);
    let checkout = files_under(&r.join("node_modules"));
    let module = "node_modules/is-number/index.js";
    let original = std::fs::read_to_string(r.join(module)).expect("installed");
    let mounted = mode == "namespaces";
    // Attempt 1 sees the module and writes into it (refused when mounted:
    // the agent stops with 7 if the write went through); attempt 2 finds
    // it as attempt 1 left it, and fixes the task.
    let write = if mounted {
        format!("if ( echo '// attempt 1' >> {module} ) 2>/dev/null; then exit 7; fi")
    } else {
        format!("echo '// attempt 1' >> {module}")
    };
    let after = if mounted { original.clone() } else { format!("{original}// attempt 1\n") };
    let first = if mounted {
        FakeAgent::new().expect_prompt("`node_modules` in your worktree is the user's own, mounted read-only")
    } else {
        FakeAgent::new()
    };
    let agent = env.agent(
        first
            .expect(module, &original)
            .sh(&write)
            .write("a.txt", "not yet\n")
            .exit(0)
            .next_call()
            .expect(module, &after)
            .write("a.txt", "fixed\n")
            .exit(0),
    );
    let out = Run::of(env.retry_run(&r).args(agent.after(&["run", "--task", "Fix a"])));
    out.assert_code(0);
    let copies = out.stderr.matches("shared node_modules from your checkout").count();
    assert_eq!(copies, usize::from(!mounted), "{mode}: {}", out.stderr);
    assert_eq!(files_under(&r.join("node_modules")), checkout, "{mode}: the checkout's copy is untouched");
    let snapshot = env.git(&r, &["diff", "--name-only", "HEAD", "refs/retry-run/fix-a/2"]);
    assert_eq!(snapshot, "a.txt", "{mode}: the shared directory is in no snapshot");

    // Again with the same lock file: the copy stays; after `npm install`
    // of another version in the checkout the attempt sees that version
    // (mounted: at once; copied: made again).
    let again = |env: &TestEnv, version: &str| {
        let agent = env.agent(
            FakeAgent::new()
                .sh(&format!("grep -q '\"version\": \"{version}\"' node_modules/is-number/package.json || exit 8"))
                .write("a.txt", "fixed\n")
                .exit(0),
        );
        Run::of(env.retry_run(&r).args(agent.after(&["run", "--again", "--task", "Fix a"])))
    };
    let out = again(&env, "7.0.0");
    out.assert_code(0);
    assert!(!out.stderr.contains("shared node_modules"), "{mode}: {}", out.stderr);
    assert!(npm_install(&env, &r, "is-number@6.0.0"));
    let out = again(&env, "6.0.0");
    out.assert_code(0);
    assert_eq!(out.stderr.contains("shared node_modules from your checkout"), !mounted, "{mode}: {}", out.stderr);
}

#[test]
fn a_share_that_git_does_not_ignore_is_refused_naming_the_setting() {
    let env = TestEnv::new();
    let r = repo(&env, "[worktree]\nshare = [\"src\"]\n");
    let out = run_task(&env, &r, "ok", true);
    out.assert_code(2);
    assert!(out.stderr.contains("[worktree] share: src is not ignored by git"), "{}", out.stderr);
}
