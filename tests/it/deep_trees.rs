//! Trees of any shape are judged, in bounded time (docs/sandbox.md, "What
//! retry-run does outside the sandbox"): an attempt that leaves directories
//! too deep for git's walks (100 levels or more) is the agent's scope
//! violation, its tree cut where it is too deep, and the next attempt
//! starts; never the environment's failure (exit 3). Under the default
//! sandbox, as any user.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::support::record::{check_event, events, first, of_type, outcomes, prompt};
use crate::support::{FakeAgent, Run, TestEnv};

/// A check that passes once `src/app.txt` says `fixed`.
const FIXED_CHECK: &str = "max_attempts = 2\n[retry]\nbaseline = false\n[[check]]\nname = \"t\"\nkind = \"test\"\nrun = \"grep -q fixed src/app.txt\"\n";

/// How the first of the agent's (or a check's) deep directories, cut 100
/// levels down, is named in a sentence.
const FIRST_CUT: &str = "deep0/d/d/…/d";

/// Whether python3 (which makes the chains) runs here; says why not.
fn python() -> bool {
    let ok = Command::new("python3").arg("-c").arg("pass").status().is_ok_and(|s| s.success());
    if !ok {
        eprintln!("SKIPPED: no python3 to make the deep directories with");
    }
    ok
}

/// A shell command that makes `chains` chains of directories in the
/// current directory, each `deep<c>` and then `depth` levels of `d`, with
/// a file at its bottom: every directory opened from its parent's
/// descriptor (no path is ever longer than a name).
fn chains(env: &TestEnv, chains: usize, depth: usize) -> String {
    let py = format!(
        "import os\nfor c in range({chains}):\n    fd = os.open('.', os.O_RDONLY)\n    for name in ['deep%d' % c] + ['d'] * {depth}:\n        os.mkdir(name, dir_fd=fd)\n        nfd = os.open(name, os.O_RDONLY, dir_fd=fd)\n        os.close(fd)\n        fd = nfd\n    os.close(os.open('f', os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))\n    os.close(fd)\n"
    );
    let file = env.write(&format!("chains-{chains}x{depth}.py"), py);
    format!("python3 {}", file.display())
}

fn repo(env: &TestEnv, toml: &str) -> PathBuf {
    env.repo("repo")
        .file("src/app.txt", "value = 1\n")
        .file(".gitignore", "*.log\n")
        .file("retry-run.toml", toml)
        .commit()
}

/// `retry-run run` of the task `task` with `agent`, timed.
fn run(env: &TestEnv, r: &Path, task: &str, agent: &crate::support::Agent) -> (Run, Duration) {
    let started = Instant::now();
    let out = env.run_agent(r, &["run", "--quiet", "--task", task], agent);
    let took = started.elapsed();
    eprintln!("{task}: {took:?}");
    (out, took)
}

/// The `too-deep` findings the attempts of `task` recorded.
fn too_deep(r: &Path, task: &str) -> Vec<String> {
    let ev = events(r, task);
    of_type(&ev, "ScopeChecked")
        .iter()
        .flat_map(|e| e["violations"].as_array().cloned().unwrap_or_default())
        .filter(|v| v["reason"] == "too-deep")
        .map(|v| v["path"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Every path of a commit (by `ls-tree -r`) has fewer than 101 names.
fn shallow(env: &TestEnv, r: &Path, rev: &str) -> String {
    let tree = env.git(r, &["ls-tree", "-r", "--name-only", rev]);
    assert!(tree.lines().all(|p| p.split('/').count() <= 100), "a path past the bound in {rev}");
    tree
}

/// Eight chains of 700 directories, an edited `.gitignore` (which sends
/// the snapshot to libgit2's walk, which enters no directory 100 levels
/// deep) and a real change: the first attempt is the agent's violation,
/// and the second, told why, succeeds.
fn eight_chains_then_a_clean_attempt(env: &TestEnv, r: &Path) {
    let agent = env.agent(
        FakeAgent::new()
            .sh(&chains(env, 8, 700))
            .append(".gitignore", "build/\n")
            .write("src/app.txt", "fixed\n")
            .next_call()
            .expect_prompt(FIRST_CUT)
            .expect_prompt("directories under 100 levels deep")
            .write("src/app.txt", "fixed\n"),
    );
    let (out, took) = run(env, r, "Deep", &agent);
    assert_eq!(outcomes(r, "deep"), ["SCOPE_VIOLATION", "SUCCESS"], "{}\n{}", out.stderr, prompt(r, "deep", 2));
    out.assert_code(0);
    let cut = too_deep(r, "deep");
    assert_eq!(cut.len(), 8, "{cut:?}");
    assert!(cut.iter().all(|p| p.split('/').count() == 100), "{cut:?}");
    assert!(prompt(r, "deep", 2).contains(FIRST_CUT), "{}", prompt(r, "deep", 2));
    let tree = shallow(env, r, "refs/retry-run/deep/1");
    assert!(tree.contains("src/app.txt") && tree.contains(".gitignore"), "{tree}");
    assert!(took < Duration::from_secs(120), "{took:?}");
}

#[test]
fn eight_chains_of_700_directories_and_a_gitignore_edit_are_the_agents_violation_and_the_next_attempt_starts() {
    if !python() {
        return;
    }
    let env = TestEnv::new();
    let r = repo(&env, FIXED_CHECK);
    eight_chains_then_a_clean_attempt(&env, &r);
}

#[test]
fn deep_chains_in_a_repository_whose_index_holds_a_submodule_are_judged_the_same() {
    if !python() {
        return;
    }
    let env = TestEnv::new();
    // A gitlink in the index: the snapshot and the reset go through
    // libgit2 from the start.
    let r = env
        .repo("repo")
        .file("src/app.txt", "value = 1\n")
        .file(".gitignore", "*.log\n")
        .file("retry-run.toml", FIXED_CHECK)
        .gitlink("sub", "1111111111111111111111111111111111111111")
        .commit();
    eight_chains_then_a_clean_attempt(&env, &r);
}

#[test]
fn seventy_chains_past_the_bound_are_cut_in_one_pass() {
    if !python() {
        return;
    }
    let env = TestEnv::new();
    let r = repo(&env, "max_attempts = 1\n");
    let agent = env.agent(FakeAgent::new().sh(&chains(&env, 70, 100)).append("src/app.txt", "value = 2\n"));
    let (out, took) = run(&env, &r, "Many", &agent);
    // The agent's failure (1), never the environment's (3).
    out.assert_code(1);
    assert_eq!(outcomes(&r, "many"), ["SCOPE_VIOLATION"], "{}", out.stderr);
    assert_eq!(too_deep(&r, "many").len(), 70);
    let tree = shallow(&env, &r, "refs/retry-run/many/1");
    assert!(tree.contains("src/app.txt"), "{tree}");
    assert!(took < Duration::from_secs(120), "{took:?}");
}

#[test]
fn deep_directories_and_nothing_else_are_a_violation_that_names_them_not_an_empty_diff() {
    if !python() {
        return;
    }
    let env = TestEnv::new();
    let r = repo(&env, "max_attempts = 1\n");
    let agent = env.agent(FakeAgent::new().sh(&chains(&env, 2, 150)));
    let (out, _) = run(&env, &r, "Only deep", &agent);
    out.assert_code(1);
    assert_eq!(outcomes(&r, "only-deep"), ["SCOPE_VIOLATION"], "{}", out.stderr);
    let done = first(&r, "only-deep", "AttemptCompleted");
    let reason = done["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("2 directories 100 levels deep or more") && reason.contains(FIRST_CUT), "{reason}");
}

#[test]
fn a_check_that_writes_a_tree_too_deep_fails_naming_it_and_the_attempt_is_judged() {
    if !python() {
        return;
    }
    let env = TestEnv::new();
    let make = chains(&env, 1, 150);
    let toml = format!(
        "max_attempts = 1\n[retry]\nbaseline = false\n[[check]]\nname = \"deep\"\nkind = \"test\"\nrun = \"{make} && grep -q fixed src/app.txt\"\n"
    );
    let r = repo(&env, &toml);
    let agent = env.agent(FakeAgent::new().write("src/app.txt", "fixed\n"));
    let (out, _) = run(&env, &r, "Check deep", &agent);
    // The check's failure (1), never the environment's (3).
    out.assert_code(1);
    assert_eq!(outcomes(&r, "check-deep"), ["CHECK_FAILURE"], "{}", out.stderr);
    let check = check_event(&r, "check-deep", 1, "deep").to_string();
    assert!(check.contains("check-wrote-worktree") && check.contains("deep0/d/d"), "{check}");
}

#[test]
fn a_chain_of_3000_directories_is_judged_and_its_worktree_reset_and_removed_with_few_descriptors() {
    if !python() {
        return;
    }
    let env = TestEnv::new();
    let r = repo(&env, FIXED_CHECK);
    let agent = env.agent(
        FakeAgent::new()
            .sh(&chains(&env, 1, 3000))
            .write("src/app.txt", "fixed\n")
            .next_call()
            .expect_prompt(FIRST_CUT)
            .sh("test -z \"$(ls -A deep0 2>/dev/null)\" || { echo 'deep0 is still here' >&2; exit 1; }")
            .write("src/app.txt", "fixed\n"),
    );
    // Fewer descriptors than the chain has levels: its removal holds a
    // bounded number open.
    let cmd = env.retry_run(&r);
    let mut limited = Command::new("sh");
    limited.arg("-c").arg("ulimit -S -n 512 && exec \"$0\" \"$@\"").arg(cmd.get_program());
    limited.args(agent.after(&["run", "--quiet", "--task", "Chain"]));
    limited.env_clear();
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            limited.env(k, v);
        }
    }
    if let Some(dir) = cmd.get_current_dir() {
        limited.current_dir(dir);
    }
    let started = Instant::now();
    let out = Run::of(&mut limited);
    eprintln!("chain: {:?}", started.elapsed());
    out.assert_code(0);
    assert_eq!(outcomes(&r, "chain"), ["SCOPE_VIOLATION", "SUCCESS"], "{}", out.stderr);
    assert_eq!(too_deep(&r, "chain").len(), 1);
    let worktrees = r.join(".git/retry-run/worktrees");
    let left: Vec<_> = std::fs::read_dir(&worktrees).into_iter().flatten().flatten().map(|e| e.path()).collect();
    assert!(left.is_empty(), "the worktree was not removed: {left:?}");
}

#[test]
fn a_reset_through_libgit2_cuts_a_tree_too_deep_for_its_walk_and_removes_it() {
    if !python() {
        return;
    }
    let env = TestEnv::new();
    // A gitlink in the index: the reset lists the worktree through libgit2.
    let r = env
        .repo("repo")
        .file("src/app.txt", "value = 1\n")
        .gitlink("sub", "1111111111111111111111111111111111111111")
        .commit();
    env.run(&r, &["worktree", "create", "t1"]).assert_code(0);
    let wt = PathBuf::from(env.run(&r, &["worktree", "path", "t1"]).assert_code(0).stdout.trim());
    let made = Command::new("sh").arg("-c").arg(chains(&env, 2, 150)).current_dir(&wt).status().expect("python3 runs");
    assert!(made.success());
    std::fs::write(wt.join("src/app.txt"), "changed\n").expect("write");
    env.run(&r, &["worktree", "reset", "t1"]).assert_code(0);
    assert!(!wt.join("deep0").exists() && !wt.join("deep1").exists());
    assert_eq!(std::fs::read_to_string(wt.join("src/app.txt")).expect("read"), "value = 1\n");
}
