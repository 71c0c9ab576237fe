//! The run's flow around its attempts: which base a task starts from and
//! how the first line names it; environment failures (a check or an agent
//! that cannot start, a target no check reports) that stop the run
//! instead of spending attempts; a closed stdout or stderr; and the small
//! things around a run (resume commands that work as printed, what a report
//! says after an interruption or a crash, `status`'s headers, `clean
//! --state`).

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::support::child::wait_until_ready;
use crate::support::record::{events, first, of_type, outcomes};
use crate::support::{Agent, FakeAgent, Run, TestEnv};

/// A repository with `src/app.txt` and a test script that passes once it
/// says `value = 2`; `retry-run.toml` from `toml`.
fn project(env: &TestEnv, toml: &str) -> PathBuf {
    env.repo("repo")
        .file("src/app.txt", "value = 1\n")
        .file(
            "test.sh",
            "if grep -q 'value = 2' src/app.txt; then echo '1 passed'; exit 0; fi\n\
             echo 'FAILED tests/app::test_value - expected value = 2'\nexit 1\n",
        )
        .file("retry-run.toml", toml)
        .commit()
}

const CHECK: &str = "[retry]\nbaseline = false\n\n[[check]]\nname = \"tests\"\nrun = \"sh test.sh\"\nkind = \"test\"\nformat = \"generic\"\n";

/// A directory outside the repository agents may write, and the config
/// lines that allow it.
fn shared(env: &TestEnv) -> (PathBuf, String) {
    let d = env.path("shared");
    std::fs::create_dir_all(&d).expect("mkdir shared");
    (d.clone(), format!("[sandbox]\nwritable = [\"{}\"]\n", d.display()))
}

fn fixes(env: &TestEnv) -> Agent {
    env.agent(FakeAgent::new().write("src/app.txt", "value = 2\n"))
}

fn run(env: &TestEnv, r: &Path, args: &[&str], agent: &Agent) -> Run {
    let mut all = vec!["run", "--quiet"];
    all.extend_from_slice(args);
    env.run_agent(r, &all, agent)
}

fn short(sha: &str) -> &str {
    &sha[..7]
}

// ---- 4. The base is the user's HEAD ----

#[test]
fn without_base_the_task_starts_from_the_checked_out_feature_branch() {
    let env = TestEnv::new();
    let r = project(&env, CHECK);
    env.git(&r, &["checkout", "-q", "-b", "feature"]);
    std::fs::write(r.join("notes.txt"), "feature work\n").expect("write");
    env.git(&r, &["add", "notes.txt"]);
    env.git(&r, &["commit", "-q", "-m", "feature work"]);
    let head = env.git(&r, &["rev-parse", "HEAD"]);
    let out = run(&env, &r, &["--task", "Fix", "--id", "f"], &fixes(&env));
    out.assert_code(0);
    assert_eq!(first(&r, "f", "TaskStarted")["base"], head.as_str());
    let line = out.stderr.lines().next().unwrap_or("");
    assert!(line.contains("base feature") && line.contains(short(&head)), "first line:\n{}", out.stderr);
    // The attempt's commit has the feature's file: it started there.
    let files = env.git(&r, &["ls-tree", "-r", "--name-only", "refs/retry-run/f/1"]);
    assert!(files.lines().any(|l| l == "notes.txt"), "{files}");
}

#[test]
fn a_detached_head_is_the_base_and_the_first_line_says_so() {
    let env = TestEnv::new();
    let r = project(&env, CHECK);
    let first_commit = env.git(&r, &["rev-parse", "HEAD"]);
    std::fs::write(r.join("later.txt"), "later\n").expect("write");
    env.git(&r, &["add", "later.txt"]);
    env.git(&r, &["commit", "-q", "-m", "later"]);
    env.git(&r, &["checkout", "-q", "--detach", &first_commit]);
    let out = run(&env, &r, &["--task", "Fix", "--id", "d"], &fixes(&env));
    out.assert_code(0);
    assert_eq!(first(&r, "d", "TaskStarted")["base"], first_commit.as_str());
    let line = out.stderr.lines().next().unwrap_or("");
    assert!(line.contains(short(&first_commit)) && line.contains("detached"), "first line:\n{}", out.stderr);
}

#[test]
fn a_base_flag_naming_another_branch_than_head_is_said_once_and_a_resume_keeps_the_base() {
    let env = TestEnv::new();
    let (_, sandbox) = shared(&env);
    let r = project(&env, &format!("max_attempts = 2\n{sandbox}{CHECK}"));
    let main = env.git(&r, &["rev-parse", "HEAD"]);
    env.git(&r, &["checkout", "-q", "-b", "feature"]);
    std::fs::write(r.join("notes.txt"), "feature work\n").expect("write");
    env.git(&r, &["add", "notes.txt"]);
    env.git(&r, &["commit", "-q", "-m", "feature work"]);
    let main_name = env.git(&r, &["branch", "--list", "main", "master", "--format=%(refname:short)"]);
    let agent = env.agent(FakeAgent::new().append("src/app.txt", "x\n").exit(1));
    let out = run(&env, &r, &["--task", "Fix", "--id", "b", "--base", &main_name, "--max-attempts", "1"], &agent);
    out.assert_code(1);
    assert_eq!(first(&r, "b", "TaskStarted")["base"], main.as_str());
    let said: Vec<&str> = out.stderr.lines().filter(|l| l.contains("HEAD is feature")).collect();
    assert_eq!(said.len(), 1, "said once:\n{}", out.stderr);
    assert!(said[0].contains(&main_name) && said[0].contains("--base"), "{}", said[0]);
    // Resumed from the feature branch without --base: the recorded base.
    let out = run(&env, &r, &["--id", "b", "--again", "--max-attempts", "1"], &agent);
    out.assert_code(1);
    let started = of_type(&events(&r, "b"), "TaskStarted").into_iter().map(|e| e["base"].clone()).collect::<Vec<_>>();
    assert_eq!(started, [main.as_str(), main.as_str()], "{}", out.stderr);
    assert!(out.stderr.lines().next().unwrap_or("").contains("recorded"), "{}", out.stderr);
}

// ---- 6. Environment failures stop the run ----

#[test]
fn a_check_whose_program_is_not_found_stops_the_run_before_the_first_attempt() {
    let env = TestEnv::new();
    let (d, sandbox) = shared(&env);
    let marker = d.join("agent-ran");
    let r =
        project(&env, &format!("{sandbox}[[check]]\nname = \"tests\"\nrun = \"pytset -q tests\"\nkind = \"test\"\n"));
    let agent = env.agent(FakeAgent::new().sh(&format!("touch {}", marker.display())).append("src/app.txt", "x\n"));
    let out = run(&env, &r, &["--task", "Fix", "--id", "c"], &agent);
    out.assert_code(3);
    assert!(out.stderr.contains("pytset -q tests") && out.stderr.contains("pytset: not found"), "{}", out.stderr);
    assert!(!marker.exists(), "the agent never ran");
    let ev = events(&r, "c");
    assert!(of_type(&ev, "AttemptCompleted").is_empty(), "no attempt spent: {ev:?}");
    assert_eq!(of_type(&ev, "AttemptAborted").len(), 1, "{ev:?}");
}

#[test]
fn an_agent_wrapped_in_sh_c_with_a_typo_stops_after_its_first_attempt() {
    let env = TestEnv::new();
    let r = project(&env, CHECK);
    let out = env.run(
        &r,
        &["run", "--quiet", "--task", "Fix", "--id", "w", "--", "sh", "-c", "claude-typo-xyz --print \"$0\"", "x"],
    );
    out.assert_code(3);
    assert!(out.stderr.contains("claude-typo-xyz: not found"), "{}", out.stderr);
    let ev = events(&r, "w");
    assert!(outcomes(&r, "w").is_empty(), "no CRASH spent: {ev:?}");
    assert_eq!(of_type(&ev, "AttemptStarted").len(), 1, "one attempt only: {ev:?}");
    assert_eq!(of_type(&ev, "AttemptAborted").len(), 1, "{ev:?}");
    // A wrapper script with the typo: the same.
    let wrapper = env.write("wrap.sh", "#!/bin/sh\nclaude-typo-xyz \"$@\"\n");
    std::fs::set_permissions(&wrapper, std::os::unix::fs::PermissionsExt::from_mode(0o755)).expect("chmod");
    let out = env.run(&r, &["run", "--quiet", "--task", "Fix", "--id", "w2", "--", wrapper.to_str().expect("utf-8")]);
    out.assert_code(3);
    assert!(out.stderr.contains("claude-typo-xyz: not found"), "{}", out.stderr);
    assert!(outcomes(&r, "w2").is_empty(), "no CRASH spent");
}

/// A project whose check prints pytest's verbose lines.
fn reported_tests(env: &TestEnv) -> PathBuf {
    env.repo("repo")
        .file("src/app.txt", "value = 1\n")
        .file(
            "test.sh",
            "echo 'tests/test_app.py::test_value FAILED'\necho 'tests/test_app.py::test_other PASSED'\n\
             echo '=== 1 failed, 1 passed in 0.01s ==='\nexit 1\n",
        )
        .file(
            "retry-run.toml",
            "[retry]\nbaseline = \"label\"\n\n[[check]]\nname = \"tests\"\nrun = \"sh test.sh\"\nkind = \"test\"\n",
        )
        .commit()
}

#[test]
fn a_target_no_check_reports_on_the_base_stops_the_run_naming_the_nearest_ids() {
    let env = TestEnv::new();
    let r = reported_tests(&env);
    let agent = env.agent(FakeAgent::new().append("src/app.txt", "x\n"));
    let out = run(&env, &r, &["--task", "Fix", "--id", "t", "--target", "tests/test_app.py::test_valeu"], &agent);
    out.assert_code(2);
    assert!(
        out.stderr.contains("tests/test_app.py::test_valeu") && out.stderr.contains("tests/test_app.py::test_value"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("--allow-new-target"), "{}", out.stderr);
    assert!(outcomes(&r, "t").is_empty(), "no attempt spent");
    // A test the agent must write: allowed, the attempts run.
    let out = run(
        &env,
        &r,
        &[
            "--task",
            "Fix",
            "--id",
            "n",
            "--target",
            "tests/test_app.py::test_new",
            "--allow-new-target",
            "--max-attempts",
            "1",
        ],
        &agent,
    );
    out.assert_code(1);
    assert_eq!(outcomes(&r, "n").len(), 1);
}

// ---- 10. A closed stdout or stderr ----

#[test]
fn a_run_piped_into_head_goes_on_and_records_its_attempts() {
    let env = TestEnv::new();
    let (d, sandbox) = shared(&env);
    let marker = d.join("closed");
    let r = project(&env, &format!("{sandbox}{CHECK}"));
    // The agent waits until the reader has gone, then fixes.
    let agent = env.agent(
        FakeAgent::new()
            .sh(&format!("while [ ! -e {} ]; do sleep 0.05; done", marker.display()))
            .write("src/app.txt", "value = 2\n"),
    );
    // Both stdout and stderr into one pipe read by `head -1`.
    let (reader, writer) = std::io::pipe().expect("a pipe");
    let mut head =
        std::process::Command::new("head").arg("-1").stdin(reader).stdout(Stdio::piped()).spawn().expect("head starts");
    let mut child = env
        .retry_run(&r)
        .args(agent.after(&["run", "--task", "Fix", "--id", "p"]))
        .stdout(writer.try_clone().expect("dup"))
        .stderr(writer)
        .spawn()
        .expect("retry-run starts");
    let mut first_line = String::new();
    BufReader::new(head.stdout.take().expect("head's stdout")).read_line(&mut first_line).expect("read");
    assert!(head.wait().expect("head ends").success());
    std::fs::write(&marker, "").expect("mark");
    let status = child.wait().expect("retry-run ends");
    assert_eq!(status.code(), Some(0), "first line: {first_line}");
    assert_eq!(outcomes(&r, "p"), ["SUCCESS"]);
    env.run(&r, &["log", "p", "--verify"]).assert_code(0);
    // The commands that print, into a closed pipe: exit 0, no panic.
    let commands: [&[&str]; 8] = [
        &["report", "p"],
        &["log", "p"],
        &["status"],
        &["inspect", "p/1", "--diff"],
        &["diff"],
        &["context", "p"],
        &["stats"],
        &["scope"],
    ];
    for args in commands {
        let mut c = env.retry_run(&r).args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("starts");
        drop(c.stdout.take());
        let mut err = String::new();
        c.stderr.take().expect("stderr").read_to_string(&mut err).expect("read");
        let code = c.wait().expect("ends").code();
        assert!(!err.contains("panicked") && code == Some(0), "{args:?}: {code:?} {err}");
    }
    // An error into a closed stderr: its exit code, no panic.
    let mut c = env.retry_run(&r).args(["report", "no-such-task"]).stderr(Stdio::piped()).spawn().expect("starts");
    drop(c.stderr.take());
    let status = c.wait().expect("ends");
    assert!(status.code().is_some_and(|c| c == 2 || c == 3), "{status:?}");
}

// ---- 12. The small ones ----

#[test]
fn the_resume_command_printed_after_an_interrupt_works_and_the_report_says_what_the_worktree_holds() {
    let env = TestEnv::new();
    let (d, sandbox) = shared(&env);
    let marker = d.join("marker");
    let r = project(&env, &format!("max_attempts = 2\n{sandbox}{CHECK}"));
    let agent = env.agent(
        FakeAgent::new()
            .append("src/app.txt", "half done\n")
            .sh(&format!("touch {}", marker.display()))
            .sleep("60")
            .next_call()
            .write("src/app.txt", "value = 2\n"),
    );
    let mut child = env
        .retry_run(&r)
        .args(agent.after(&["run", "--quiet", "--task", "Fix", "--id", "i"]))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("retry-run starts");
    wait_until_ready(&mut child, &marker);
    // SAFETY: kill(2) on the child this test started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let out = child.wait_with_output().expect("retry-run ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    let report = env.run(&r, &["report", "i"]);
    report.assert_code(0);
    assert!(
        report.stdout.contains("- M `src/app.txt`") && !report.stdout.contains("nothing of it was kept"),
        "what the worktree holds:\n{}",
        report.stdout
    );
    let resume = stderr
        .lines()
        .find_map(|l| l.trim().strip_prefix("resume: "))
        .unwrap_or_else(|| panic!("no resume line:\n{stderr}"))
        .to_string();
    let out = Run::of(env.command("sh", &r).args(["-c", &resume]).env("PATH", env.path_var()));
    // The retry-run of the command is the one under test.
    let out = if out.code == 127 {
        let exe = env!("CARGO_BIN_EXE_retry-run");
        Run::of(env.command("sh", &r).args(["-c", &resume.replacen("retry-run", exe, 1)]))
    } else {
        out
    };
    out.assert_code(0);
    assert!(out.stdout.contains("succeeded at attempt 2"), "{}", out.stdout);
}

#[test]
fn a_crash_report_shows_the_agents_last_lines() {
    let env = TestEnv::new();
    let r = project(&env, CHECK);
    let agent =
        env.agent(FakeAgent::new().sh("echo 'loading the model'; echo 'fatal: quota exceeded for key x' >&2").exit(2));
    run(&env, &r, &["--task", "Fix", "--id", "k", "--max-attempts", "1"], &agent).assert_code(1);
    assert_eq!(outcomes(&r, "k"), ["CRASH"]);
    let report = env.run(&r, &["report", "k"]);
    report.assert_code(0);
    assert!(report.stdout.contains("fatal: quota exceeded for key x"), "{}", report.stdout);
}

#[test]
fn status_has_column_headers() {
    let env = TestEnv::new();
    let r = project(&env, CHECK);
    run(&env, &r, &["--task", "Fix", "--id", "s"], &fixes(&env)).assert_code(0);
    let out = env.run(&r, &["status"]);
    out.assert_code(0);
    let header = out.stdout.lines().next().unwrap_or("");
    for col in ["TASK", "STATE", "ATTEMPTS", "BASE", "LAST", "WORKTREE", "COST"] {
        assert!(header.contains(col), "{col} in the header:\n{}", out.stdout);
    }
    assert!(out.stdout.lines().nth(1).is_some_and(|l| l.starts_with("s")), "{}", out.stdout);
}

#[test]
fn clean_state_removes_the_tasks_refs_and_branch_and_says_so() {
    let env = TestEnv::new();
    let r = project(&env, CHECK);
    run(&env, &r, &["--task", "Fix", "--id", "gone"], &fixes(&env)).assert_code(0);
    run(&env, &r, &["--task", "Fix", "--id", "kept"], &fixes(&env)).assert_code(0);
    let out = env.run(&r, &["clean", "gone", "--state"]);
    out.assert_code(0);
    let refs = env.git(&r, &["for-each-ref", "--format=%(refname)"]);
    assert!(!refs.contains("retry-run/gone"), "{refs}");
    assert!(refs.contains("refs/retry-run/kept/1") && refs.contains("refs/heads/retry-run/kept"), "{refs}");
    assert!(
        out.stdout.contains("removed branch retry-run/gone") && out.stdout.contains("refs/retry-run/gone/"),
        "{}",
        out.stdout
    );
    // Without --state, the refs stay.
    env.run(&r, &["clean", "kept"]).assert_code(0);
    assert!(env.git(&r, &["for-each-ref", "--format=%(refname)"]).contains("refs/retry-run/kept/1"));
}
