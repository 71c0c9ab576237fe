//! An agent that cannot start, and `run` interrupted: the environment's
//! failures, which stop the task without spending its attempts, and
//! SIGINT or SIGTERM during the agent or a check, which stop what runs,
//! record the attempt as interrupted and exit 130 or 143; the next
//! `run --id` resumes.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::support::child::wait_until_ready;
use crate::support::record::{events, of_type};
use crate::support::{Agent, FakeAgent, TestEnv, processes_in};

/// A repository whose check passes once `src/app.txt` says `value = 2`,
/// with `retry-run.toml` from `top` (top-level keys) and `more` (more
/// tables); and a directory outside it that agents and checks may write,
/// for the markers the test waits for.
fn project(env: &TestEnv, top: &str, more: &str) -> (PathBuf, PathBuf) {
    let shared = env.path("shared");
    std::fs::create_dir_all(&shared).expect("mkdir shared");
    let config = format!(
        "{top}[sandbox]\nwritable = [\"{}\"]\n[retry]\nbaseline = false\n[[check]]\nname = \"tests\"\nrun = \"sh test.sh\"\nkind = \"test\"\nformat = \"generic\"\n{more}",
        shared.display()
    );
    let r = env
        .repo("repo")
        .file("src/app.txt", "value = 1\n")
        .file(
            "test.sh",
            "if grep -q 'value = 2' src/app.txt; then echo '1 passed'; exit 0; fi\n\
             echo 'FAILED tests/app::test_value - expected value = 2'\nexit 1\n",
        )
        .file("retry-run.toml", config)
        .commit();
    (r, shared)
}

/// An agent that fixes the project.
fn fixes(env: &TestEnv) -> Agent {
    env.agent(FakeAgent::new().write("src/app.txt", "value = 2\n"))
}

fn attempts_started(r: &Path, task: &str) -> usize {
    of_type(&events(r, task), "AttemptStarted").len()
}

#[test]
fn an_agent_program_that_does_not_exist_stops_the_task_before_its_first_attempt() {
    let env = TestEnv::new();
    let (r, _) = project(&env, "", "");
    let out = env.run(&r, &["run", "--quiet", "--task", "Fix", "--id", "gone", "--", "/nonexistent/agent", "x"]);
    out.assert_code(3);
    assert!(out.stderr.contains("the agent cannot start: `/nonexistent/agent`"), "{}", out.stderr);
    assert_eq!(attempts_started(&r, "gone"), 0, "no attempt is recorded");
    // The first word of a shell command, the same.
    std::fs::write(r.join("retry-run.toml"), "[agent]\ncommand = \"no-such-agent-xyz --prompt {prompt_file}\"\n")
        .expect("write the config");
    let out = env.run(&r, &["run", "--quiet", "--task", "Fix", "--id", "word"]);
    out.assert_code(3);
    assert!(out.stderr.contains("`no-such-agent-xyz` is not on the PATH the agent gets"), "{}", out.stderr);
    assert_eq!(attempts_started(&r, "word"), 0);
}

#[test]
fn a_preset_whose_program_is_not_on_path_says_how_to_install_it() {
    let env = TestEnv::new();
    let (r, _) = project(&env, "", "");
    // PATH without any `claude`.
    let path = std::env::var_os("PATH").unwrap_or_default();
    let without: Vec<PathBuf> = std::env::split_paths(&path).filter(|d| !d.join("claude").exists()).collect();
    let path: OsString = std::env::join_paths(without).expect("a PATH");
    let out = crate::support::Run::of(env.retry_run(&r).env("PATH", &path).args([
        "run",
        "--quiet",
        "--task",
        "Fix",
        "--id",
        "preset",
        "--preset",
        "claude-code",
    ]));
    out.assert_code(3);
    assert!(
        out.stderr.contains("`claude` is not on the PATH the agent gets")
            && out.stderr.contains("npm install -g @anthropic-ai/claude-code"),
        "{}",
        out.stderr
    );
    assert_eq!(attempts_started(&r, "preset"), 0, "no attempt is recorded");
}

#[test]
fn an_agent_that_cannot_start_in_its_worktree_stops_the_task_without_spending_the_attempt() {
    let env = TestEnv::new();
    let (r, _) = project(&env, "max_attempts = 1\n", "");
    // A path relative to the worktree cannot be looked up before the
    // attempt: it fails to start there.
    let out = env.run(&r, &["run", "--quiet", "--task", "Fix", "--id", "rel", "--", "./agent.sh"]);
    out.assert_code(3);
    assert!(out.stderr.contains("the agent cannot start") && out.stderr.contains("./agent.sh"), "{}", out.stderr);
    let ev = events(&r, "rel");
    let aborted = of_type(&ev, "AttemptAborted");
    assert_eq!(aborted.len(), 1, "{ev:?}");
    assert_eq!((aborted[0]["attempt"].as_u64(), aborted[0]["phase"].as_str()), (Some(1), Some("agent")));
    assert!(of_type(&ev, "AttemptCompleted").is_empty(), "not an attempt of the agent's: {ev:?}");
    let report = env.run(&r, &["report", "rel"]);
    report.assert_code(0);
    let first_look = report.stdout.split("## Look at this first").nth(1).unwrap_or("");
    assert!(first_look.contains("before its agent ran") && first_look.contains("./agent.sh"), "{}", report.stdout);
    env.run(&r, &["log", "rel", "--verify"]).assert_code(0);
    // With max_attempts = 1, the next run still gets its attempt.
    let out = env.run_agent(&r, &["run", "--quiet", "--id", "rel"], &fixes(&env));
    out.assert_code(0);
    assert!(out.stdout.contains("succeeded at attempt 2"), "{}", out.stdout);
}

/// Where the run is interrupted.
#[derive(Clone, Copy)]
enum During {
    Agent,
    Check,
}

/// `retry-run run` interrupted by `signal` once the agent or the check
/// has written its marker: it exits 128 + `signal`, leaves no process in
/// the worktree, records attempt 1 as interrupted in a log that verifies,
/// and `run --id` then succeeds at attempt 2.
fn interrupted_then_resumed(signal: i32, during: During) {
    let env = TestEnv::new();
    let marker = env.path("shared/marker");
    let check = match during {
        // The check's first run marks and sleeps; the next ones test.
        During::Check => format!(
            "[[check]]\nname = \"slow\"\nrun = \"if [ ! -e {m} ]; then touch {m}; sleep 60; fi\"\ntimeout = \"5m\"\n",
            m = marker.display()
        ),
        During::Agent => String::new(),
    };
    let (r, _) = project(&env, "max_attempts = 2\n", &check);
    let first_call = match during {
        During::Agent => FakeAgent::new().sh(&format!("touch {}", marker.display())).sleep("60"),
        During::Check => FakeAgent::new().append("src/app.txt", "x\n"),
    };
    let agent = env.agent(first_call.next_call().write("src/app.txt", "value = 2\n"));
    let mut child = env
        .retry_run(&r)
        .args(agent.after(&["run", "--quiet", "--task", "Fix", "--id", "t"]))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("retry-run starts");
    wait_until_ready(&mut child, &marker);
    // SAFETY: kill(2) on the child this test started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
    let out = child.wait_with_output().expect("retry-run ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(128 + signal), "stderr:\n{stderr}");
    assert!(stderr.contains("retry-run run --id t"), "how to resume:\n{stderr}");
    let wt = r.join(".git/retry-run/worktrees/t");
    assert!(processes_in(&wt).is_empty(), "left running: {:?}", processes_in(&wt));
    env.run(&r, &["log", "t", "--verify"]).assert_code(0);
    let ev = events(&r, "t");
    let completed = of_type(&ev, "AttemptCompleted");
    assert_eq!(completed.len(), 1, "{ev:?}");
    assert_eq!(
        (completed[0]["attempt"].as_u64(), completed[0]["outcome"].as_str(), &completed[0]["interrupted"]),
        (Some(1), Some("CRASH"), &serde_json::json!(true))
    );
    let out = env.run_agent(&r, &["run", "--quiet", "--id", "t"], &agent);
    out.assert_code(0);
    assert!(out.stdout.contains("succeeded at attempt 2"), "{}", out.stdout);
    env.run(&r, &["log", "t", "--verify"]).assert_code(0);
}

#[test]
fn sigint_during_the_agent_stops_it_records_the_attempt_and_exits_130() {
    interrupted_then_resumed(libc::SIGINT, During::Agent);
}

#[test]
fn sigterm_during_the_agent_exits_143() {
    interrupted_then_resumed(libc::SIGTERM, During::Agent);
}

#[test]
fn sigint_during_a_check_stops_it_and_exits_130() {
    interrupted_then_resumed(libc::SIGINT, During::Check);
}

#[test]
fn sigterm_during_a_check_exits_143() {
    interrupted_then_resumed(libc::SIGTERM, During::Check);
}
