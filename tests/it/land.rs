//! `retry-run land` (docs/commands.md, docs/review.md): a task's result
//! brought onto a branch. Straight onto a branch still at the task's base
//! (one commit with the attempt's tree, the title and the trailers);
//! replayed onto a branch that moved, the gates run again there (a real
//! Python test) and a squash or a merge commit landed; a replay that breaks
//! a test or that conflicts becomes a rejection and leaves the branch as
//! it was; a dirty checkout is refused with nothing changed; `--push` to a
//! bare remote; `--pr` through a stand-in `gh`; a land killed at any point
//! leaves the branch old or new, and the next land completes it. Real
//! repositories, the real binary, scripted agents.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::record::{events, of_type};
use crate::support::{FakeAgent, Run, TestEnv, files_under, processes_in};

const TASK: &str = "raise-the-limit";

/// A project whose `limit.py` holds `LIMIT = 1`, with a Python test run
/// by `python3 -m unittest` as its check (when `check` is set).
fn project(env: &TestEnv, check: bool) -> PathBuf {
    let toml = if check {
        "max_attempts = 1\n[retry]\nbaseline = \"tolerate\"\n[[check]]\nname = \"tests\"\nrun = \"python3 -m unittest -v\"\nkind = \"test\"\n"
    } else {
        "max_attempts = 1\n"
    };
    env.repo("repo")
        .file("limit.py", "LIMIT = 1\n")
        .file("notes.txt", "notes\n")
        .file("test_limit.py", "import unittest\nimport limit\n\n\nclass T(unittest.TestCase):\n    def test_positive(self):\n        self.assertGreater(limit.LIMIT, 0)\n")
        .file("retry-run.toml", toml)
        .commit()
}

/// The task run to its success: the agent raises the limit to 2.
fn succeed(env: &TestEnv, r: &Path) {
    let agent = env.agent(FakeAgent::new().write("limit.py", "LIMIT = 2\n"));
    let out = env.run_agent(r, &["run", "--quiet", "--task", "Raise the limit"], &agent);
    out.assert_code(0);
}

/// A commit on `main` (checked out) writing `path`.
fn commit_on_main(env: &TestEnv, r: &Path, path: &str, text: &str) -> String {
    std::fs::write(r.join(path), text).expect("write");
    env.git(r, &["add", path]);
    env.git(r, &["commit", "-qm", &format!("change {path}")]);
    env.git(r, &["rev-parse", "main"])
}

fn land(env: &TestEnv, r: &Path, args: &[&str]) -> Run {
    let mut all = vec!["land", TASK];
    all.extend_from_slice(args);
    env.run(r, &all)
}

/// The task's result: the commit its success recorded.
fn result_commit(r: &Path) -> String {
    let ev = events(r, TASK);
    of_type(&ev, "TaskSucceeded")[0]["commit"].as_str().expect("commit").to_string()
}

fn landed(r: &Path) -> serde_json::Value {
    let ev = events(r, TASK);
    let l = of_type(&ev, "TaskLanded");
    assert_eq!(l.len(), 1, "one TaskLanded: {ev:?}");
    l[0].clone()
}

fn sha256_of(path: &Path) -> String {
    retry_run::hash::sha256_hex(&std::fs::read(path).expect("the log"))
}

#[test]
fn land_onto_a_branch_at_the_base_is_one_commit_with_the_attempts_tree_the_title_and_the_trailers() {
    let env = TestEnv::new();
    let r = project(&env, false);
    let base = env.git(&r, &["rev-parse", "main"]);
    succeed(&env, &r);
    let attempt = result_commit(&r);
    let log = r.join(".git/retry-run/tasks").join(TASK).join("events.jsonl");
    let record = sha256_of(&log);
    let out = land(&env, &r, &[]);
    out.assert_code(0);
    assert!(out.stdout.contains(&format!("task {TASK} landed on main")), "{}", out.stdout);
    assert!(out.stdout.contains("(fast-forward)"), "{}", out.stdout);
    let tip = env.git(&r, &["rev-parse", "main"]);
    assert_eq!(env.git(&r, &["rev-parse", "main^"]), base, "one commit on the base");
    assert_eq!(env.git(&r, &["rev-parse", "main^{tree}"]), env.git(&r, &["rev-parse", &format!("{attempt}^{{tree}}")]));
    assert_eq!(
        env.git(&r, &["log", "-1", "--format=%B", "main"]),
        format!("Raise the limit\n\nRetry-Run-Task: {TASK}\nRetry-Run-Attempt: 1\nRetry-Run-Record: sha256:{record}")
    );
    // The checkout followed, as `git merge --ff-only` would, and is clean.
    assert_eq!(std::fs::read_to_string(r.join("limit.py")).expect("limit.py"), "LIMIT = 2\n");
    assert_eq!(env.git(&r, &["status", "--porcelain"]), "");
    let l = landed(&r);
    assert_eq!(
        (l["onto"].as_str(), l["how"].as_str(), l["attempt"].as_u64()),
        (Some("main"), Some("fast-forward"), Some(1))
    );
    assert_eq!(l["commit"], tip.as_str());
    assert_eq!(l["from"], base.as_str());
    assert_eq!(l["record_sha256"], record.as_str());
    assert_eq!(l["replayed"], false);
    assert_eq!(l["branch_removed"], true);
    assert!(
        env.git_raw(
            &r,
            ["rev-parse", "--verify", "-q", "refs/heads/retry-run/raise-the-limit"].map(std::ffi::OsStr::new)
        )
        .stdout
        .is_empty()
    );
    // The same result does not land twice.
    let again = land(&env, &r, &[]);
    again.assert_code(2);
    assert!(again.stderr.contains("already landed on main"), "{}", again.stderr);
}

#[test]
fn the_landed_commits_author_and_committer_are_gits_the_environment_over_the_config() {
    let env = TestEnv::new();
    let r = project(&env, false);
    succeed(&env, &r);
    // A config identity, which the environment's comes before (as `git commit` takes them).
    env.git(&r, &["config", "user.name", "Config Name"]);
    env.git(&r, &["config", "user.email", "config@example.com"]);
    let out = Run::of(
        env.retry_run(&r)
            .args(["land", TASK])
            .env("GIT_AUTHOR_NAME", "Lena Author")
            .env("GIT_AUTHOR_EMAIL", "lena@example.com")
            .env("GIT_COMMITTER_NAME", "Cal Committer")
            .env_remove("GIT_COMMITTER_EMAIL"),
    );
    out.assert_code(0);
    assert_eq!(
        env.git(&r, &["log", "-1", "--format=%an <%ae>%n%cn <%ce>", "main"]),
        "Lena Author <lena@example.com>\nCal Committer <config@example.com>"
    );
}

#[test]
fn after_the_branch_moved_the_change_is_replayed_the_checks_run_again_and_a_squash_lands() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let r = project(&env, true);
    succeed(&env, &r);
    let attempt = result_commit(&r);
    let tip = commit_on_main(&env, &r, "notes.txt", "more notes\n");
    let out = land(&env, &r, &[]);
    out.assert_code(0);
    assert!(out.stdout.contains("(squash)"), "{}", out.stdout);
    assert_eq!(env.git(&r, &["rev-parse", "main^"]), tip, "one commit on the tip");
    assert_eq!(env.git(&r, &["show", "main:limit.py"]), "LIMIT = 2");
    assert_eq!(env.git(&r, &["show", "main:notes.txt"]), "more notes");
    assert_ne!(env.git(&r, &["rev-parse", "main"]), attempt);
    let l = landed(&r);
    assert_eq!((l["how"].as_str(), l["replayed"].as_bool()), (Some("squash"), Some(true)));
    let gates: Vec<&str> = l["gates"].as_array().expect("gates").iter().filter_map(|g| g.as_str()).collect();
    assert_eq!(gates, ["scope ok", "tests passed"]);
    // The land's own record keeps the checks' output, and adds no attempt.
    let lands = r.join(".git/retry-run/tasks").join(TASK).join("lands/1");
    let out = std::fs::read_to_string(lands.join("checks/tests.out")).expect("the check's output");
    assert!(out.contains("test_positive"), "{out}");
    assert!(lands.join("base/tests.out").is_file());
    assert!(lands.join("attempt.json").is_file());
    assert!(!r.join(".git/retry-run/tasks").join(TASK).join("attempts/2").exists());
    assert!(!lands.join("tmp").exists(), "its TMPDIR is gone");
    let wts = env.git(&r, &["worktree", "list"]);
    assert!(!wts.contains("+land"), "the land's worktree is removed: {wts}");
}

#[test]
fn merge_lands_a_merge_commit_of_the_tip_and_the_attempt() {
    let env = TestEnv::new();
    let r = project(&env, false);
    succeed(&env, &r);
    let attempt = result_commit(&r);
    let tip = commit_on_main(&env, &r, "notes.txt", "more notes\n");
    let out = land(&env, &r, &["--merge", "--keep-branch"]);
    out.assert_code(0);
    assert_eq!(env.git(&r, &["log", "-1", "--format=%P", "main"]), format!("{tip} {attempt}"));
    assert_eq!(landed(&r)["how"], "merge");
    assert_eq!(landed(&r)["gates"], serde_json::json!(["scope ok"]));
    // Without checks no worktree was made: the land's record holds no run.
    let lands = r.join(".git/retry-run/tasks").join(TASK).join("lands/1");
    assert!(lands.join("attempt.json").is_file());
    assert!(!lands.join("base").exists() && !lands.join("checks").exists() && !lands.join("tmp").exists());
    assert_eq!(env.git(&r, &["rev-parse", "retry-run/raise-the-limit"]), attempt, "--keep-branch keeps it");
    assert!(
        env.git(&r, &["log", "-1", "--format=%B", "main"])
            .starts_with("Raise the limit\n\nRetry-Run-Task: raise-the-limit\n")
    );
}

#[test]
fn a_replay_that_breaks_a_test_is_a_rejection_and_the_branch_stays() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let r = project(&env, true);
    succeed(&env, &r);
    // The branch moves: a test that holds on its tip and not with the change.
    let test = "import unittest\nimport limit\n\n\nclass T(unittest.TestCase):\n    def test_positive(self):\n        self.assertGreater(limit.LIMIT, 0)\n\n    def test_small(self):\n        self.assertLess(limit.LIMIT, 2)\n";
    let tip = commit_on_main(&env, &r, "test_limit.py", test);
    let out = land(&env, &r, &[]);
    out.assert_code(1);
    assert!(out.stderr.contains("the gates failed on the replay onto main"), "{}", out.stderr);
    assert!(
        out.stderr.contains("next round: retry-run run --id raise-the-limit --again --refresh-base --base main"),
        "{}",
        out.stderr
    );
    assert_eq!(env.git(&r, &["rev-parse", "main"]), tip, "the branch is untouched");
    let ev = events(&r, TASK);
    assert!(of_type(&ev, "TaskLanded").is_empty());
    let rev = of_type(&ev, "Reviewed");
    assert_eq!(rev.len(), 1, "{ev:?}");
    let rev = rev[0];
    assert_eq!(
        (rev["verdict"].as_str(), rev["channel"].as_str(), rev["by"].as_str()),
        (Some("rejected"), Some("land"), Some("retry-run land"))
    );
    assert_eq!(rev["attempt"], 1);
    let required = rev["required_change"].as_str().expect("a required change");
    assert!(required.contains("`tests`") && required.contains("test_limit.py"), "{required}");
    assert!(rev["output"].to_string().contains("test_small"), "{rev}");
    assert!(rev["source"].as_str().expect("source").starts_with("land onto main"), "{rev}");
    // Its status says so, and the task's branch stays for the next round.
    assert_eq!(env.git(&r, &["rev-parse", "retry-run/raise-the-limit"]), result_commit(&r));
    let again = land(&env, &r, &[]);
    again.assert_code(2);
    assert!(again.stderr.contains("rejected by its latest review"), "{}", again.stderr);
}

#[test]
fn a_conflict_is_a_rejection_naming_the_files_with_the_hunks_and_the_branch_stays() {
    let env = TestEnv::new();
    let r = project(&env, false);
    succeed(&env, &r);
    let tip = commit_on_main(&env, &r, "limit.py", "LIMIT = 5\n");
    let out = land(&env, &r, &[]);
    out.assert_code(1);
    assert!(out.stderr.contains("the replay onto main conflicts"), "{}", out.stderr);
    assert!(out.stderr.contains("<<<<<<< main"), "{}", out.stderr);
    assert_eq!(env.git(&r, &["rev-parse", "main"]), tip);
    assert_eq!(std::fs::read_to_string(r.join("limit.py")).expect("limit.py"), "LIMIT = 5\n");
    let ev = events(&r, TASK);
    let rev = of_type(&ev, "Reviewed")[0];
    assert_eq!(rev["required_change"], "Rebase onto main and resolve the conflicts in limit.py.");
    assert_eq!(rev["failures"], serde_json::json!(["limit.py"]));
    let output: Vec<&str> = rev["output"].as_array().expect("output").iter().filter_map(|l| l.as_str()).collect();
    assert_eq!(output, ["--- limit.py", "<<<<<<< main", "LIMIT = 5", "=======", "LIMIT = 2", ">>>>>>> task"]);
    assert!(of_type(&ev, "TaskLanded").is_empty());
}

#[test]
fn a_dirty_checkout_is_refused_with_nothing_changed() {
    let env = TestEnv::new();
    let r = project(&env, false);
    succeed(&env, &r);
    std::fs::write(r.join("limit.py"), "LIMIT = 7  # mine\n").expect("write");
    std::fs::write(r.join("untracked.txt"), "mine\n").expect("write");
    let before = files_under(&r);
    let out = land(&env, &r, &[]);
    out.assert_code(2);
    assert!(out.stderr.contains("limit.py would be touched by the land"), "{}", out.stderr);
    assert!(out.stderr.contains("commit or stash them"), "{}", out.stderr);
    let after = files_under(&r);
    // Every file of the checkout, its index and HEAD, byte for byte; only
    // retry-run's own lock file may have been written.
    let mine = |m: &std::collections::BTreeMap<Vec<u8>, (u32, Vec<u8>)>| {
        m.iter().filter(|(k, _)| !k.ends_with(b"/lock")).map(|(k, v)| (k.clone(), v.clone())).collect::<Vec<_>>()
    };
    let (b, a) = (mine(&before), mine(&after));
    let changed: Vec<String> = b
        .iter()
        .filter(|x| !a.contains(x))
        .chain(a.iter().filter(|x| !b.contains(x)))
        .map(|(k, _)| String::from_utf8_lossy(k).into_owned())
        .collect();
    assert!(changed.is_empty(), "the checkout changed: {changed:?}");
    // Untracked in the way: a task adding a file the user has untracked.
    assert!(of_type(&events(&r, TASK), "TaskLanded").is_empty());
}

#[test]
fn an_untracked_file_in_the_way_is_refused_too() {
    let env = TestEnv::new();
    let r = project(&env, false);
    let agent = env.agent(FakeAgent::new().write("added.txt", "the task's\n"));
    env.run_agent(&r, &["run", "--quiet", "--task", "Raise the limit"], &agent).assert_code(0);
    std::fs::write(r.join("added.txt"), "the user's\n").expect("write");
    let out = land(&env, &r, &[]);
    out.assert_code(2);
    assert!(out.stderr.contains("added.txt would be touched"), "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(r.join("added.txt")).expect("added.txt"), "the user's\n");
}

#[test]
fn onto_a_branch_not_checked_out_moves_only_its_ref() {
    let env = TestEnv::new();
    let r = project(&env, false);
    succeed(&env, &r);
    env.git(&r, &["branch", "release"]);
    env.git(&r, &["checkout", "-q", "-b", "elsewhere"]);
    std::fs::write(r.join("limit.py"), "LIMIT = 9  # mine\n").expect("write");
    let out = land(&env, &r, &["--onto", "release"]);
    out.assert_code(0);
    assert_eq!(env.git(&r, &["show", "release:limit.py"]), "LIMIT = 2");
    assert_eq!(std::fs::read_to_string(r.join("limit.py")).expect("limit.py"), "LIMIT = 9  # mine\n");
    let reflog = env.git(&r, &["reflog", "-1", "--format=%gs", "release"]);
    assert_eq!(reflog, "retry-run land: task raise-the-limit attempt 1");
    env.git(&r, &["checkout", "-q", "--detach"]);
    let detached = env.run(&r, &["land", TASK]);
    detached.assert_code(2);
}

#[test]
fn push_sends_the_branch_to_a_bare_remote() {
    let env = TestEnv::new();
    let r = project(&env, false);
    let remote = env.path("remote.git");
    env.git(env.root(), &["init", "-q", "--bare", remote.to_str().expect("utf-8")]);
    env.git(&r, &["remote", "add", "origin", remote.to_str().expect("utf-8")]);
    env.git(&r, &["push", "-q", "origin", "main"]);
    succeed(&env, &r);
    let out = land(&env, &r, &["--push", "origin"]);
    out.assert_code(0);
    assert_eq!(env.git(&remote, &["rev-parse", "main"]), env.git(&r, &["rev-parse", "main"]));
    assert_eq!(landed(&r)["pushed"], "origin");
}

#[test]
fn pr_calls_gh_with_the_title_and_the_reports_summary() {
    let env = TestEnv::new();
    let r = project(&env, false);
    let remote = env.path("remote.git");
    env.git(env.root(), &["init", "-q", "--bare", remote.to_str().expect("utf-8")]);
    env.git(&r, &["remote", "add", "origin", remote.to_str().expect("utf-8")]);
    succeed(&env, &r);
    env.git(&r, &["branch", "raise-pr"]);
    let bin = env.path("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let calls = env.path("gh-calls");
    // A stand-in gh: records its arguments and the body file, prints a URL.
    let gh = format!(
        "#!/bin/sh\nprintf '%s\\n' \"$@\" > {calls}/args\nwhile [ $# -gt 0 ]; do if [ \"$1\" = --body-file ]; then cp \"$2\" {calls}/body; fi; shift; done\necho https://github.com/o/r/pull/7\n",
        calls = calls.display()
    );
    std::fs::create_dir_all(&calls).expect("calls");
    std::fs::write(bin.join("gh"), gh).expect("gh");
    std::fs::set_permissions(bin.join("gh"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let path = format!("{}:{}", bin.display(), env.path_var().to_string_lossy());
    let out = Run::of(env.retry_run(&r).args(["land", TASK, "--onto", "raise-pr", "--pr"]).env("PATH", path));
    out.assert_code(0);
    assert!(out.stdout.contains("pull request: https://github.com/o/r/pull/7"), "{}", out.stdout);
    let args = std::fs::read_to_string(calls.join("args")).expect("gh was called");
    let args: Vec<&str> = args.lines().collect();
    assert_eq!(&args[..4], ["pr", "create", "--title", "Raise the limit"]);
    assert_eq!(&args[6..], ["--head", "raise-pr"]);
    let body = std::fs::read_to_string(calls.join("body")).expect("the body");
    assert!(body.starts_with("# retry-run report: Raise the limit\n"), "{body}");
    assert!(body.contains("## Look at this first"), "{body}");
    assert!(!body.contains("## Attempts"), "{body}");
    let l = landed(&r);
    assert_eq!((l["pushed"].as_str(), l["pr"].as_str()), (Some("origin"), Some("https://github.com/o/r/pull/7")));
    assert_eq!(env.git(&remote, &["rev-parse", "raise-pr"]), env.git(&r, &["rev-parse", "raise-pr"]));
    // Without gh: a clear error before anything lands.
    let none = Run::of(env.retry_run(&r).args(["land", TASK, "--pr"]).env("PATH", "/nonexistent"));
    assert_eq!(none.code, 3, "{}", none.stderr);
    assert!(none.stderr.contains("--pr needs the GitHub CLI `gh`, which is not on PATH"), "{}", none.stderr);
}

#[test]
fn a_land_killed_during_its_checks_leaves_the_branch_old_and_the_next_one_lands() {
    let env = TestEnv::new();
    let slow = env.path("slow");
    let toml = format!(
        "max_attempts = 1\n[retry]\nbaseline = false\n[[check]]\nname = \"tests\"\nrun = \"if grep -q 'LIMIT = 2' limit.py && [ -f {} ]; then sleep 60; fi; true\"\n",
        slow.display()
    );
    let r = env
        .repo("repo")
        .file("limit.py", "LIMIT = 1\n")
        .file("notes.txt", "notes\n")
        .file("retry-run.toml", &toml)
        .commit();
    succeed(&env, &r);
    let tip = commit_on_main(&env, &r, "notes.txt", "more notes\n");
    std::fs::write(&slow, "").expect("slow");
    let mut child =
        env.retry_run(&r).args(["land", TASK]).stdout(Stdio::null()).stderr(Stdio::null()).spawn().expect("land");
    let wt_root = r.join(".git/retry-run/worktrees");
    let deadline = Instant::now() + Duration::from_secs(60);
    while processes_in(&wt_root).iter().all(|p| !p.contains("+land")) {
        assert!(Instant::now() < deadline, "the check never started");
        assert!(child.try_wait().expect("status").is_none(), "the land ended before its check slept");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    // The check it left behind is ended too (it would sleep a minute).
    for p in processes_in(&wt_root) {
        if let Some(pid) = p.split_whitespace().next().and_then(|p| p.parse::<i32>().ok()) {
            // SAFETY: kill(2) on a process this test's land started.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
    assert_eq!(env.git(&r, &["rev-parse", "main"]), tip, "the branch is old");
    // `clean` removes the worktree the killed land left.
    let left = wt_root.join(format!("{TASK}+land"));
    assert!(left.exists());
    env.run(&r, &["clean", TASK]).assert_code(0);
    assert!(!left.exists(), "clean removes the land's worktree");
    std::fs::remove_file(&slow).expect("rm");
    let out = land(&env, &r, &[]);
    out.assert_code(0);
    assert_eq!(env.git(&r, &["rev-parse", "main^"]), tip);
    assert_eq!(landed(&r)["how"], "squash");
}

#[test]
fn a_land_killed_after_the_branch_moved_is_recorded_by_the_next_not_landed_twice() {
    let env = TestEnv::new();
    let r = project(&env, false);
    succeed(&env, &r);
    let attempt = result_commit(&r);
    let base = env.git(&r, &["rev-parse", "main"]);
    // The branch as a land leaves it the moment it moved, before
    // TaskLanded: the tip names the task and the attempt in its trailers.
    let log = r.join(".git/retry-run/tasks").join(TASK).join("events.jsonl");
    let message = format!(
        "Raise the limit\n\nRetry-Run-Task: {TASK}\nRetry-Run-Attempt: 1\nRetry-Run-Record: sha256:{}\n",
        sha256_of(&log)
    );
    let tree = format!("{attempt}^{{tree}}");
    let moved = env.git(&r, &["commit-tree", &tree, "-p", &base, "-m", &message]);
    env.git(&r, &["merge", "-q", "--ff-only", &moved]);
    let out = land(&env, &r, &[]);
    out.assert_code(0);
    assert!(out.stdout.contains("the land is recorded now"), "{}", out.stdout);
    assert_eq!(env.git(&r, &["rev-parse", "main"]), moved, "not landed twice");
    let l = landed(&r);
    assert_eq!((l["commit"].as_str(), l["how"].as_str()), (Some(moved.as_str()), Some("fast-forward")));
    assert_eq!(l["branch_removed"], true);
}

#[test]
fn a_land_travels_with_the_record_and_a_pull_elsewhere_does_not_bring_the_branch_back() {
    let env = TestEnv::new();
    let r = project(&env, false);
    let remote = env.path("remote.git");
    env.git(env.root(), &["init", "-q", "--bare", remote.to_str().expect("utf-8")]);
    env.git(&r, &["remote", "add", "origin", remote.to_str().expect("utf-8")]);
    env.git(&r, &["push", "-q", "origin", "main"]);
    succeed(&env, &r);
    land(&env, &r, &["--push", "origin"]).assert_code(0);
    env.run(&r, &["push", TASK]).assert_code(0);
    let other = env.path("other");
    env.git(env.root(), &["clone", "-q", remote.to_str().expect("utf-8"), other.to_str().expect("utf-8")]);
    env.run(&other, &["pull", TASK]).assert_code(0);
    assert_eq!(landed(&other)["commit"], landed(&r)["commit"]);
    let branch = env.git_raw(
        &other,
        ["rev-parse", "--verify", "-q", "refs/heads/retry-run/raise-the-limit"].map(std::ffi::OsStr::new),
    );
    assert!(branch.stdout.is_empty(), "the landed task's branch is not made again");
    let again = land(&env, &other, &[]);
    again.assert_code(2);
    assert!(again.stderr.contains("already landed on main"), "{}", again.stderr);
}

#[test]
fn a_task_without_a_result_or_unknown_is_refused() {
    let env = TestEnv::new();
    let r = project(&env, false);
    let unknown = env.run(&r, &["land", "nope"]);
    unknown.assert_code(2);
    assert!(!r.join(".git/retry-run/tasks/nope").exists(), "no record is made for it");
    let agent = env.agent(FakeAgent::new().exit(1));
    env.run_agent(&r, &["run", "--quiet", "--task", "Raise the limit"], &agent).assert_code(1);
    let out = land(&env, &r, &[]);
    out.assert_code(2);
    assert!(out.stderr.contains("has no result to land"), "{}", out.stderr);
}

#[test]
fn the_replays_checks_run_after_worktree_setup_in_the_lands_worktree() {
    let env = TestEnv::new();
    let toml = "max_attempts = 1\n[worktree]\nsetup = \"echo built > built.txt\"\n[retry]\nbaseline = false\n[[check]]\nname = \"built\"\nrun = \"test -f built.txt\"\n";
    let r = env
        .repo("repo")
        .file("limit.py", "LIMIT = 1\n")
        .file("notes.txt", "notes\n")
        .file(".gitignore", "built.txt\n")
        .file("retry-run.toml", toml)
        .commit();
    succeed(&env, &r);
    commit_on_main(&env, &r, "notes.txt", "more notes\n");
    let out = land(&env, &r, &[]);
    out.assert_code(0);
    let gates = landed(&r)["gates"].clone();
    assert_eq!(gates, serde_json::json!(["scope ok", "built passed"]));
    assert_eq!(env.git(&r, &["show", "main:limit.py"]), "LIMIT = 2");
    assert!(
        env.git_raw(&r, ["cat-file", "-e", "main:built.txt"].map(std::ffi::OsStr::new)).status.code() != Some(0),
        "setup's output does not land"
    );
}
