//! `retry-run run`, the attempt loop, on real repositories with the fake
//! agent: every gate and outcome, the verifier's failure modes, timeouts
//! with forking agents, kill -9 at any point, locks, bounded output, and
//! the user's checkout left as it was; and what reads its record back
//! (`context`, `report`, `inspect`, `log`, `status`, `stats`).

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::support::child::{peak_memory, wait_until_ready};
use crate::support::record::{events, first, of_type, outcomes, prompt};
use crate::support::{Agent, FakeAgent, Run, TestEnv, processes_in};

/// A repository with a small Python-free project: `src/app.txt`, a test
/// script that checks it, and `retry-run.toml` from `toml`.
fn project(env: &TestEnv, toml: &str) -> PathBuf {
    env.repo("repo")
        .file("src/app.txt", "value = 1\n")
        .file(
            "test.sh",
            "if grep -q 'value = 2' src/app.txt; then echo '1 passed'; exit 0; fi\n\
             echo 'FAILED tests/app::test_value - expected value = 2'\nexit 1\n",
        )
        .file(".gitignore", "*.log\n")
        .file("retry-run.toml", toml)
        .commit()
}

const TEST_CHECK: &str = "[retry]\nbaseline = false\n\n[[check]]\nname = \"tests\"\nrun = \"sh test.sh\"\nkind = \"test\"\nformat = \"generic\"\n";

/// A directory outside the repository that agents and checks may write
/// (`[sandbox] writable`), for the markers and counters tests watch; and
/// the config lines that allow it.
fn shared_dir(env: &TestEnv) -> (PathBuf, String) {
    let d = env.path("shared");
    std::fs::create_dir_all(&d).expect("mkdir shared");
    let toml = format!("[sandbox]\nwritable = [\"{}\"]\n", d.display());
    (d, toml)
}

/// `retry-run run --quiet <args> -- <agent>` in `r`.
fn run(env: &TestEnv, r: &Path, args: &[&str], agent: &Agent) -> Run {
    let mut all = vec!["run", "--quiet"];
    all.extend_from_slice(args);
    env.run_agent(r, &all, agent)
}

/// `retry-run run --quiet <args> -- <agent>` in `r`, started.
fn spawn(env: &TestEnv, r: &Path, args: &[&str], agent: &Agent, out: Stdio, err: Stdio) -> Child {
    let mut all = vec!["run", "--quiet"];
    all.extend_from_slice(args);
    env.retry_run(r).args(agent.after(&all)).stdout(out).stderr(err).spawn().expect("retry-run starts")
}

/// An agent that appends a line `text` to `src/app.txt`.
fn appends(env: &TestEnv, text: &str) -> Agent {
    env.agent(FakeAgent::new().append("src/app.txt", &format!("{text}\n")))
}

/// Everything about the user's checkout that must not change.
fn checkout_state(env: &TestEnv, r: &Path) -> (String, String, String, Vec<u8>) {
    (
        env.git(r, &["status", "--porcelain", "--ignored"]),
        env.git(r, &["rev-parse", "HEAD"]),
        env.git(r, &["branch", "--list", "--format=%(refname)"])
            .lines()
            .filter(|b| !b.contains("retry-run/"))
            .collect::<Vec<_>>()
            .join("\n"),
        std::fs::read(r.join(".git/index")).expect("index"),
    )
}

#[test]
fn a_failing_check_is_fed_back_and_the_next_attempt_succeeds() {
    let env = TestEnv::new();
    let r = project(&env, TEST_CHECK);
    crate::support::keep_worktrees(&env, &r);
    let before = checkout_state(&env, &r);
    // Its first call changes the wrong thing; the next do what the prompt
    // says, and only when the prompt names the failure (else they stop).
    let agent = env.agent(
        FakeAgent::new()
            .append("src/app.txt", "# guess\n")
            .next_call()
            .expect_prompt("tests/app::test_value")
            .expect("src/app.txt", "value = 1\n")
            .write("src/app.txt", "value = 2\n"),
    );
    let out = run(&env, &r, &["--task", "Fix the value"], &agent);
    out.assert_code(0);
    assert!(out.stdout.contains("succeeded at attempt 2"), "{}", out.stdout);
    assert_eq!(outcomes(&r, "fix-the-value"), ["CHECK_FAILURE", "SUCCESS"]);
    let p = prompt(&r, "fix-the-value", 2);
    assert!(p.starts_with("## Attempt 2 of 3: the previous attempt failed\n\n**Required change:** Make the failing test pass: `tests/app::test_value`."), "{p}");
    assert!(p.ends_with("## Task\n\nFix the value\n"), "{p}");
    assert_eq!(prompt(&r, "fix-the-value", 1), "Fix the value\n", "a first attempt reads the task as written");
    // The success branch and the worktree at the result; the checkout untouched.
    let branch = env.git(&r, &["rev-parse", "retry-run/fix-the-value"]);
    assert_eq!(branch, env.git(&r, &["rev-parse", "refs/retry-run/fix-the-value/2"]));
    let wt = r.join(".git/retry-run/worktrees/fix-the-value");
    assert_eq!(std::fs::read_to_string(wt.join("src/app.txt")).expect("result"), "value = 2\n");
    assert_eq!(checkout_state(&env, &r), before);
    // Every event type of docs/record.md, and a chain that verifies.
    let ev = events(&r, "fix-the-value");
    for kind in [
        "TaskStarted",
        "AttemptStarted",
        "WorktreeReset",
        "RetryContextAssembled",
        "AttemptContextAssembled",
        "AttemptContextDelivered",
        "AgentFinished",
        "SnapshotTaken",
        "ScopeChecked",
        "CheckFinished",
        "AttemptCompleted",
        "TaskSucceeded",
    ] {
        assert!(!of_type(&ev, kind).is_empty(), "no {kind} event");
    }
    env.run(&r, &["log", "fix-the-value", "--verify"]).assert_code(0);
    // The manifest chain: attempt 2's manifest names attempt 1's hash.
    let m1 = std::fs::read(r.join(".git/retry-run/tasks/fix-the-value/attempts/1/manifest.json")).expect("manifest");
    let m2: Value = serde_json::from_slice(
        &std::fs::read(r.join(".git/retry-run/tasks/fix-the-value/attempts/2/manifest.json")).expect("manifest"),
    )
    .expect("json");
    assert_eq!(m2["prior_manifests"][0], retry_run::hash::sha256_hex(&m1));
    let delivered = of_type(&ev, "AttemptContextDelivered");
    assert_eq!(delivered[1]["sha256"], retry_run::hash::sha256_hex(p.as_bytes()));
    // A finished task is not run again without --again.
    let again = run(&env, &r, &["--task", "Fix the value"], &agent);
    again.assert_code(0);
    assert!(again.stderr.contains("already succeeded at attempt 2"), "{}", again.stderr);
    assert_eq!(outcomes(&r, "fix-the-value").len(), 2);
    run(&env, &r, &["--task", "Fix the value", "--again"], &agent).assert_code(0);
    assert_eq!(outcomes(&r, "fix-the-value"), ["CHECK_FAILURE", "SUCCESS", "SUCCESS"]);
    // report, stats, context.
    let report = env.run(&r, &["report", "fix-the-value"]);
    report.assert_code(0);
    assert!(report.stdout.contains("### Attempt 1: CHECK_FAILURE") && report.stdout.contains("## Look at this first"));
    let stats = env.run(&r, &["stats"]);
    assert!(stats.stdout.contains("check:test     100.0%  (1/1)"), "{}", stats.stdout);
}

#[test]
fn empty_diff_crash_and_scope_each_get_their_outcome_and_required_change() {
    let env = TestEnv::new();
    let r = project(&env, "max_attempts = 1\n[scope]\nallow = [\"src/**\"]\n");
    let nothing = env.agent(FakeAgent::new());
    run(&env, &r, &["--task", "Nothing"], &nothing).assert_code(1);
    assert_eq!(outcomes(&r, "nothing"), ["EMPTY_DIFF"]);
    let ctx = env.run(&r, &["context", "nothing"]);
    ctx.assert_code(0);
    assert!(ctx.stdout.contains("**Required change:** Make actual changes to the files"), "{}", ctx.stdout);

    let crash = env.agent(FakeAgent::new().sh("echo boom").append("src/app.txt", "x\n").exit(3));
    run(&env, &r, &["--task", "Crash"], &crash).assert_code(1);
    assert_eq!(outcomes(&r, "crash"), ["CRASH"]);
    let ctx = env.run(&r, &["context", "crash"]).stdout;
    assert!(ctx.contains("the agent exited with code 3"), "{ctx}");
    assert!(ctx.contains("boom"), "the end of its output is shown: {ctx}");

    let outside = env.agent(FakeAgent::new().write("other.txt", "x\n").append("src/app.txt", "y\n"));
    run(&env, &r, &["--task", "Scope"], &outside).assert_code(1);
    assert_eq!(outcomes(&r, "scope"), ["SCOPE_VIOLATION"]);
    let ev = events(&r, "scope");
    assert!(of_type(&ev, "CheckFinished").is_empty(), "checks are skipped after a scope violation");
    let ctx = env.run(&r, &["context", "scope"]).stdout;
    assert!(
        ctx.contains("Revert your changes to `other.txt`") || ctx.contains("Revert your changes to other.txt"),
        "{ctx}"
    );
    assert!(ctx.contains("`src/**`"), "{ctx}");

    // The git machinery: a hook written through the common directory (the
    // kernel refuses it under Landlock; detection catches it and puts it back).
    let config = std::fs::read_to_string(r.join("retry-run.toml")).expect("config");
    std::fs::write(r.join("retry-run.toml"), format!("{config}\n[sandbox]\nmode = \"detect\"\n")).expect("write");
    let hook = env.agent(
        FakeAgent::new()
            .append("src/app.txt", "y\n")
            .sh("echo 'exit 0' > \"$(git rev-parse --git-common-dir)/hooks/pre-commit\""),
    );
    run(&env, &r, &["--task", "Hook"], &hook).assert_code(1);
    assert_eq!(outcomes(&r, "hook"), ["SCOPE_VIOLATION"]);
    let scope = first(&r, "hook", "ScopeChecked")["violations"].clone();
    assert_eq!(scope[0]["reason"], "git-internal", "{scope}");
    assert!(!r.join(".git/hooks/pre-commit").exists(), "the hook the attempt wrote is removed again");
}

#[test]
fn an_outcome_not_in_retry_on_stops_the_task_and_a_silent_verifier_times_out() {
    let env = TestEnv::new();
    let r = project(&env, "max_attempts = 3\n[retry]\non = [\"check_failure\"]\n");
    run(&env, &r, &["--task", "Stop"], &env.agent(FakeAgent::new())).assert_code(1);
    assert_eq!(outcomes(&r, "stop"), ["EMPTY_DIFF"], "EMPTY_DIFF is not retried");
    let reason = first(&r, "stop", "TaskEscalated")["reason"].as_str().unwrap_or("").to_string();
    assert!(reason.contains("retry.on does not retry"), "{reason}");

    std::fs::write(
        r.join("retry-run.toml"),
        "max_attempts = 1\n[verifier]\nrun = \"sleep 30\"\ntimeout = \"300ms\"\nretries = 1\n",
    )
    .expect("write");
    run(&env, &r, &["--task", "Silent"], &appends(&env, "x")).assert_code(1);
    assert_eq!(outcomes(&r, "silent"), ["UNVERIFIED"]);
    let v = first(&r, "silent", "VerifierFinished");
    assert!(v["problems"][0].as_str().unwrap_or("").contains("timed out"), "{v}");
}

#[test]
fn timeout_kills_the_whole_group_even_children_that_ignore_sigterm() {
    let env = TestEnv::new();
    let (shared, allow) = shared_dir(&env);
    let r = project(&env, &format!("max_attempts = 1\n[agent]\ntimeout = \"1s\"\nkill_grace = \"300ms\"\n{allow}"));
    let pids = shared.join("pids");
    let agent = env.agent(
        FakeAgent::new()
            .sh("trap '' TERM")
            .sh("(trap '' TERM; while :; do sleep 0.05; done) &")
            .sh(&format!("echo $! >> {}", pids.display()))
            .sh(&format!("echo $$ >> {}", pids.display()))
            .append("src/app.txt", "x\n")
            .sh("while :; do sleep 0.05; done"),
    );
    run(&env, &r, &["--task", "Slow"], &agent).assert_code(1);
    assert_eq!(outcomes(&r, "slow"), ["TIMEOUT"]);
    // Both wrote their pids (as their PID namespace numbers them); none of
    // the agent's processes is left in the worktree.
    assert_eq!(std::fs::read_to_string(&pids).expect("pids").split_whitespace().count(), 2);
    let wt = r.join(".git/retry-run/worktrees/slow");
    assert!(processes_in(&wt).is_empty(), "a process of the agent's group survived: {:?}", processes_in(&wt));
    let finished = first(&r, "slow", "AgentFinished");
    assert_eq!(finished["timed_out"], true);
    assert_eq!(finished["last_activity"], "src/app.txt");
    let ctx = env.run(&r, &["context", "slow"]).stdout;
    assert!(ctx.contains("Finish within the 1.0s limit") && ctx.contains("src/app.txt"), "{ctx}");
}

#[test]
fn timeouts_that_repeat_without_a_change_stop_the_task_unless_retry_on_keeps_them() {
    let env = TestEnv::new();
    let limits = "max_attempts = 4\n[agent]\ntimeout = \"1s\"\nkill_grace = \"300ms\"\n";
    let r = project(&env, limits);
    let slow = env.agent(FakeAgent::new().sh("sleep 5"));
    run(&env, &r, &["--task", "Slow"], &slow).assert_code(1);
    assert_eq!(outcomes(&r, "slow"), ["TIMEOUT", "TIMEOUT"], "stopped after the second of 4");
    let escalated = first(&r, "slow", "TaskEscalated");
    let reason = escalated["reason"].as_str().unwrap_or("");
    assert!(reason.contains("attempts 1 and 2 both ran into the agent's 1.0s limit"), "{reason}");
    assert!(reason.contains("attempt 2 left no change"), "{reason}");
    assert!(reason.contains("`[agent] timeout`") && reason.contains("split the task"), "{reason}");
    assert_eq!(escalated["attempts"], 2, "{escalated}");
    // It wrote nothing: no write is named as its last.
    assert!(!prompt(&r, "slow", 2).contains("Last activity"), "{}", prompt(&r, "slow", 2));

    // The user's own `[retry] on` with "timeout" keeps retrying them.
    let on = "[retry]\non = [\"check_failure\", \"empty_diff\", \"crash\", \"timeout\"]\n";
    std::fs::write(r.join("retry-run.toml"), format!("{limits}{on}")).expect("write");
    run(&env, &r, &["--task", "Slow on"], &slow).assert_code(1);
    assert_eq!(outcomes(&r, "slow-on"), ["TIMEOUT"; 4]);
    let reason = first(&r, "slow-on", "TaskEscalated")["reason"].as_str().unwrap_or("").to_string();
    assert_eq!(reason, "4 attempts failed");
}

#[test]
fn an_agent_that_writes_nothing_and_exits_1_gets_no_last_activity_line() {
    let env = TestEnv::new();
    let r = project(&env, "max_attempts = 2\n");
    run(&env, &r, &["--task", "Fails"], &env.agent(FakeAgent::new().exit(1))).assert_code(1);
    assert_eq!(outcomes(&r, "fails"), ["CRASH", "CRASH"]);
    assert_eq!(first(&r, "fails", "AgentFinished")["last_activity"], Value::Null);
    let second = prompt(&r, "fails", 2);
    assert!(second.contains("exited with code 1"), "{second}");
    assert!(!second.to_lowercase().contains("last activity"), "{second}");
}

#[test]
fn verifier_rejects_approves_fails_and_escalates() {
    let env = TestEnv::new();
    // The verifier writes only where sandbox.writable lets it: its counter
    // lives in a directory named there.
    let state = env.path("verifier-state");
    std::fs::create_dir_all(&state).expect("mkdir");
    let counter = state.join("calls");
    let verifier = |name: &str, body: &str| env.write(name, body).display().to_string();
    let reject = verifier(
        "reject.sh",
        "cat > /dev/null\necho '{\"verdict\":\"needs_changes\",\"required_change\":\"Rename value to amount.\",\"critique\":\"The name is vague.\",\"confidence\":0.9}'\n",
    );
    let low = verifier(
        "low.sh",
        "echo '{\"verdict\":\"needs_changes\",\"required_change\":\"Maybe.\",\"confidence\":0.2}'\n",
    );
    let broken = verifier("broken.sh", "echo 'I could not decide'; exit 1\n");
    let escalate =
        verifier("escalate.sh", "echo '{\"verdict\":\"escalate\",\"critique\":\"Needs a product decision.\"}'\n");
    let flaky = verifier(
        "flaky.sh",
        &format!(
            "n=$(cat {c} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {c}\nif [ $n -lt 2 ]; then echo 'not json'; else echo '{{\"verdict\":\"approved\"}}'; fi\n",
            c = counter.display()
        ),
    );
    let toml = |v: &str| {
        format!(
            "max_attempts = 2\n[verifier]\nrun = \"sh {v}\"\nretries = 2\n[sandbox]\nwritable = [\"{}\"]\n",
            state.display()
        )
    };
    let agent = appends(&env, "value = 2");

    let r = project(&env, &toml(&reject));
    run(&env, &r, &["--task", "Reject"], &agent).assert_code(1);
    assert_eq!(outcomes(&r, "reject"), ["VERIFIER_REJECTION", "VERIFIER_REJECTION"]);
    let p = prompt(&r, "reject", 2);
    assert!(p.contains("**Required change** (the reviewer's words, advisory): \"Rename value to amount.\""), "{p}");
    assert!(p.contains("> The name is vague."), "{p}");

    for (v, task, want, code) in [
        (&low, "low", vec!["SUCCESS"], 0),
        (&broken, "broken", vec!["UNVERIFIED"], 1),
        (&escalate, "escalate", vec!["VERIFIER_REJECTION"], 1),
        (&flaky, "flaky-verifier", vec!["SUCCESS"], 0),
    ] {
        std::fs::write(r.join("retry-run.toml"), toml(v)).expect("write");
        run(&env, &r, &["--task", task], &agent).assert_code(code);
        assert_eq!(outcomes(&r, task), want, "{task}");
    }
    let v = first(&r, "broken", "VerifierFinished");
    assert_eq!((v["answered"].as_bool(), v["calls"].as_u64()), (Some(false), Some(3)), "{v}");
    assert!(
        of_type(&events(&r, "broken"), "TaskEscalated")[0]["reason"].as_str().unwrap_or("").contains("never answered")
    );
    env.git(&r, &["rev-parse", "refs/retry-run/broken/1"]); // the attempt is kept
    let report = env.run(&r, &["report", "broken"]).stdout;
    assert!(report.contains("The reviewer never answered on attempt 1"), "{report}");
    assert_eq!(of_type(&events(&r, "flaky-verifier"), "VerifierFinished")[0]["calls"], 2);
}

#[test]
fn baseline_failures_are_pre_existing_and_only_new_ones_fail() {
    let env = TestEnv::new();
    let r = project(
        &env,
        "max_attempts = 1\n[retry]\nbaseline = \"tolerate\"\n[[check]]\nname = \"tests\"\nrun = \"sh test.sh; sh extra.sh\"\nkind = \"test\"\nformat = \"generic\"\n",
    );
    std::fs::write(
        r.join("extra.sh"),
        "[ -f src/new.txt ] && echo 'FAILED tests/app::test_new - boom' && exit 1\nexit 1\n",
    )
    .expect("write");
    env.git(&r, &["add", "-A"]);
    env.git(&r, &["commit", "-qm", "extra"]);
    // Leaves the base's failure as it was: passes (tolerated), labelled pre-existing and named.
    let out = run(&env, &r, &["--task", "Same"], &appends(&env, "doc"));
    out.assert_code(0);
    assert!(out.stdout.contains("still failing, as on the base"), "{}", out.stdout);
    assert_eq!(first(&r, "same", "TaskSucceeded")["tolerated"], serde_json::json!(["tests: tests/app::test_value"]));
    let check = first(&r, "same", "CheckFinished");
    assert_eq!((check["passed"].as_bool(), check["pre_existing"].as_u64()), (Some(true), Some(1)), "{check}");
    assert_eq!(of_type(&events(&r, "same"), "BaselineChecked").len(), 1);
    // Adds a failure: fails, and only the new failure is fed back.
    run(&env, &r, &["--task", "Worse"], &env.agent(FakeAgent::new().write("src/new.txt", "n\n"))).assert_code(1);
    let check = first(&r, "worse", "CheckFinished");
    assert_eq!(check["new_failures"], serde_json::json!(["tests/app::test_new"]), "{check}");
    let ctx = env.run(&r, &["context", "worse"]).stdout;
    assert!(ctx.contains("Make the failing test pass: `tests/app::test_new`."), "{ctx}");
    assert!(!ctx.contains("Make the failing test pass: `tests/app::test_value"), "{ctx}");
}

/// A check whose output names no failing test cannot be narrowed to its
/// failures: it is not run again, so a deterministic failure costs one run
/// (a flaky test is found by rerunning it alone: tests/it/runners.rs).
#[test]
fn a_failing_check_that_names_no_test_is_not_run_again() {
    let env = TestEnv::new();
    let (shared, allow) = shared_dir(&env);
    let counter = shared.join("count");
    let r = project(
        &env,
        &format!(
            "max_attempts = 1\n{allow}[retry]\nbaseline = false\nflaky_reruns = 2\n[[check]]\nname = \"shaky\"\nrun = \"n=$(cat {c} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {c}; [ $n -ge 2 ]\"\n",
            c = counter.display()
        ),
    );
    run(&env, &r, &["--task", "Shaky"], &appends(&env, "x")).assert_code(1);
    let check = first(&r, "shaky", "CheckFinished");
    assert_eq!((check["flaky"].as_bool(), check["runs"].as_u64()), (Some(false), Some(1)), "{check}");
    assert_eq!(std::fs::read_to_string(&counter).expect("the counter").trim(), "1");
}

#[test]
fn bad_config_exits_2_naming_the_line_and_records_nothing() {
    let env = TestEnv::new();
    let r = project(&env, "max_attempts = 2\n[agent]\ntimeout = \"soon\"\n");
    let nothing = env.agent(FakeAgent::new());
    let out = run(&env, &r, &["--task", "x"], &nothing);
    out.assert_code(2);
    assert!(out.stderr.contains("retry-run.toml:3:11"), "{}", out.stderr);
    assert!(!r.join(".git/retry-run/tasks").exists());
    let out = env.run(&r, &["run", "--task", "x"]);
    out.assert_code(2);
    // A task file with a broken front matter.
    std::fs::write(r.join("retry-run.toml"), "").expect("write");
    let task = env.write("t.md", "+++\nmax_attempts = \"two\"\n+++\n# T\n");
    let out = run(&env, &r, &["--task-file", &task.display().to_string()], &nothing);
    out.assert_code(2);
    assert!(out.stderr.contains("t.md:2:16"), "{}", out.stderr);
}

#[test]
fn json_mode_prints_only_events_on_stdout() {
    let env = TestEnv::new();
    let r = project(&env, "max_attempts = 1\n");
    let out = env.run_agent(&r, &["run", "--json", "--task", "J"], &appends(&env, "x"));
    out.assert_code(0);
    let kinds: Vec<String> = out
        .stdout
        .lines()
        .map(|l| {
            serde_json::from_str::<Value>(l).expect("each line is JSON")["type"].as_str().unwrap_or("").to_string()
        })
        .collect();
    assert_eq!(kinds.first().map(String::as_str), Some("TaskStarted"));
    // The task's end, then its worktree removed ([worktree] keep = "none").
    assert_eq!(kinds[kinds.len().saturating_sub(2)..], ["TaskSucceeded", "WorktreeRemoved"]);
    assert_eq!(kinds.len(), events(&r, "j").len());
}

#[test]
fn context_is_the_next_prompt_byte_for_byte_and_deterministic() {
    let env = TestEnv::new();
    let r = project(&env, &format!("max_attempts = 1\n{TEST_CHECK}"));
    let agent = appends(&env, "# guess");
    run(&env, &r, &["--task", "Ctx"], &agent).assert_code(1);
    let a = env.run(&r, &["context", "ctx"]);
    let b = env.run(&r, &["context", "ctx"]);
    a.assert_code(0);
    assert_eq!(a.stdout, b.stdout);
    assert!(!a.stdout.contains(&r.display().to_string()), "no absolute path of this machine: {}", a.stdout);
    let json = env.run(&r, &["context", "ctx", "--json"]).json();
    assert_eq!(json["attempt"], 2);
    run(&env, &r, &["--task", "Ctx", "--again"], &agent).assert_code(1);
    assert_eq!(prompt(&r, "ctx", 2), a.stdout, "context rendered what attempt 2 then received");
}

#[test]
fn one_run_per_task_and_different_tasks_side_by_side() {
    let env = TestEnv::new();
    let (shared, allow) = shared_dir(&env);
    let r = project(&env, &format!("max_attempts = 1\n{allow}"));
    // The first run's agent says it started, then waits for the test.
    let (started, release) = (shared.join("started"), env.path("release"));
    let slow = env.agent(
        FakeAgent::new()
            .sh(&format!("touch {}", started.display()))
            .sh(&format!("while [ ! -e {} ]; do sleep 0.02; done", release.display()))
            .append("src/app.txt", "x\n"),
    );
    let mut first = spawn(&env, &r, &["--task", "Shared"], &slow, Stdio::piped(), Stdio::piped());
    wait_until_ready(&mut first, &started);
    let second = run(&env, &r, &["--task", "Shared"], &env.agent(FakeAgent::new()));
    second.assert_code(3);
    assert!(second.stderr.contains("is being run by process"), "{}", second.stderr);
    let other = spawn(&env, &r, &["--task", "Other"], &appends(&env, "y"), Stdio::piped(), Stdio::piped());
    std::fs::write(&release, "").expect("release the first agent");
    assert_eq!(first.wait_with_output().expect("wait").status.code(), Some(0));
    assert_eq!(other.wait_with_output().expect("wait").status.code(), Some(0));
}

/// Kills `retry-run run` with SIGKILL at a point of the attempt, then runs
/// the task again: the killed attempt is a CRASH (interrupted), numbering
/// continues, and the log verifies.
fn kill_then_continue(env: &TestEnv, r: &Path, task: &str, agent: &Agent, marker: Option<&Path>, delay: Duration) {
    let mut child = spawn(env, r, &["--task", task], agent, Stdio::null(), Stdio::null());
    if let Some(m) = marker {
        wait_until_ready(&mut child, m);
    }
    std::thread::sleep(delay);
    let _ = child.kill();
    let _ = child.wait();
    if let Some(m) = marker {
        let _ = std::fs::remove_file(m);
    }
    env.run(r, &["log", &retry_run::task::slug(task), "--verify"]).assert_code(0);
}

#[test]
fn reset_keep_starts_each_attempt_from_the_last_ones_files() {
    let env = TestEnv::new();
    let r = project(&env, &format!("max_attempts = 3\n[agent]\nreset = \"keep\"\n{TEST_CHECK}"));
    // Each attempt adds a line; the third fixes the value. With "keep" the
    // third attempt still has the first two attempts' lines.
    let agent = env.agent(
        FakeAgent::new()
            .append("src/notes.txt", "attempt 1\n")
            .next_call()
            .append("src/notes.txt", "attempt 2\n")
            .next_call()
            .append("src/notes.txt", "attempt 3\n")
            .write("src/app.txt", "value = 2\n"),
    );
    run(&env, &r, &["--task", "Keep"], &agent).assert_code(0);
    assert_eq!(outcomes(&r, "keep"), ["CHECK_FAILURE", "CHECK_FAILURE", "SUCCESS"]);
    let modes: Vec<String> = of_type(&events(&r, "keep"), "WorktreeReset")
        .iter()
        .map(|e| e["mode"].as_str().unwrap_or("?").to_string())
        .collect();
    assert_eq!(modes, ["always", "keep", "keep"], "the first attempt starts at the base");
    let notes = env.git(&r, &["show", "retry-run/keep:src/notes.txt"]);
    assert_eq!(notes, "attempt 1\nattempt 2\nattempt 3");
    // Each snapshot's parent is still the base: its diff holds everything so far.
    let base = env.git(&r, &["rev-parse", "HEAD"]);
    assert_eq!(env.git(&r, &["rev-parse", "refs/retry-run/keep/2^"]), base);
    assert_eq!(env.git(&r, &["show", "refs/retry-run/keep/2:src/notes.txt"]), "attempt 1\nattempt 2");
}

#[test]
fn a_full_disk_mid_append_is_a_clear_error_and_the_next_run_records_the_repair() {
    use std::os::unix::process::CommandExt;
    let env = TestEnv::new();
    let r = project(&env, "max_attempts = 5\n");
    // A file-size limit stands in for a full disk: the write that crosses
    // it is cut short and the next fails (EFBIG where a disk gives ENOSPC),
    // in the middle of an append to the event log.
    let agent = env.agent(FakeAgent::new().append("src/app.txt", "x\n").exit(1));
    let mut cmd = env.retry_run(&r);
    cmd.args(agent.after(&["run", "--quiet", "--task", "Full"]));
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit { rlim_cur: 4096, rlim_max: 4096 };
            libc::setrlimit(libc::RLIMIT_FSIZE, &limit);
            Ok(())
        });
    }
    let out = cmd.output().expect("retry-run runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("events.jsonl: File too large"), "names the log: {stderr}");
    let log = r.join(".git/retry-run/tasks/full/events.jsonl");
    assert_eq!(std::fs::metadata(&log).expect("log").len(), 4096, "the last append was cut at the limit");
    let whole = events(&r, "full").len();
    assert!(whole >= 5, "the events before it stay: {whole}");

    // With room again, the next run ends the torn line, records it and goes on.
    std::fs::write(r.join("retry-run.toml"), "max_attempts = 8\n").expect("write");
    run(&env, &r, &["--id", "full"], &agent).assert_code(1);
    let ev = events(&r, "full");
    let repaired = of_type(&ev, "LogRepaired");
    assert_eq!(repaired.len(), 1, "the torn line is recorded once");
    assert_eq!(repaired[0]["torn_line"], whole + 1);
    let verify = env.run(&r, &["log", "full", "--verify"]);
    verify.assert_code(0);
    assert!(verify.stderr.contains("cut short by a crash during an append"), "{}", verify.stderr);
}

#[test]
fn an_event_log_that_is_not_a_file_is_refused_and_status_shows_the_other_tasks() {
    let env = TestEnv::new();
    let r = project(&env, "max_attempts = 1\n");
    let fix = env.agent(FakeAgent::new().write("src/app.txt", "value = 2\n"));
    run(&env, &r, &["--task", "Fine"], &fix).assert_code(0);
    let dir = r.join(".git/retry-run/tasks/odd");
    std::fs::create_dir_all(&dir).expect("mkdir");
    // Reads of /dev/full never end; a log must be a plain file.
    std::os::unix::fs::symlink("/dev/full", dir.join("events.jsonl")).expect("symlink");
    let out = run(&env, &r, &["--id", "odd", "--task", "Odd"], &env.agent(FakeAgent::new()));
    out.assert_code(3);
    assert!(out.stderr.contains("events.jsonl: not a regular file"), "{}", out.stderr);
    let status = env.run(&r, &["status"]);
    status.assert_code(3);
    assert!(
        status.stdout.contains("fine\tsucceeded") && status.stdout.contains("odd\tunreadable"),
        "{}",
        status.stdout
    );
    assert!(status.stderr.contains("not a regular file"), "{}", status.stderr);
}

#[test]
fn a_missing_attempt_directory_is_named_and_the_rest_of_the_record_still_reads() {
    let env = TestEnv::new();
    let r = project(&env, &format!("max_attempts = 1\n{TEST_CHECK}"));
    run(&env, &r, &["--task", "Gone"], &appends(&env, "x")).assert_code(1);
    let adir = r.join(".git/retry-run/tasks/gone/attempts/1");
    std::fs::remove_dir_all(&adir).expect("rm -r");
    let out = env.run(&r, &["inspect", "gone/1"]);
    out.assert_code(0);
    assert!(out.stdout.contains("is missing") && out.stdout.contains("AttemptCompleted"), "{}", out.stdout);
    let prompt = env.run(&r, &["inspect", "gone/1", "--prompt"]);
    prompt.assert_code(3);
    assert!(
        prompt.stderr.contains("attempts/1/prompt.md") && prompt.stderr.contains("incomplete"),
        "{}",
        prompt.stderr
    );
    // The diff comes from the snapshot commit; the log still verifies.
    assert!(env.run(&r, &["inspect", "gone/1", "--diff"]).assert_code(0).stdout.contains("src/app.txt"));
    env.run(&r, &["log", "gone", "--verify"]).assert_code(0);
    env.run(&r, &["report", "gone"]).assert_code(0);
}

#[test]
fn kill_9_during_the_agent_checks_or_snapshot_is_continued_by_the_next_run() {
    let env = TestEnv::new();
    let (shared, allow) = shared_dir(&env);
    let marker = shared.join("marker");
    let r = project(
        &env,
        &format!(
            "max_attempts = 50\n{allow}[retry]\nbaseline = false\n[[check]]\nname = \"slow\"\nrun = \"touch {m}; sleep 5\"\ntimeout = \"1m\"\n",
            m = marker.display()
        ),
    );
    // During the agent.
    let pid_file = shared.join("agent.pid");
    let during_agent = env.agent(
        FakeAgent::new()
            .sh(&format!("echo $$ > {}", pid_file.display()))
            .sh(&format!("touch {}", marker.display()))
            .sleep("30"),
    );
    kill_then_continue(&env, &r, "Killed", &during_agent, Some(&marker), Duration::from_millis(100));
    // During the checks (the check touches the marker).
    let edit = appends(&env, "x");
    kill_then_continue(&env, &r, "Killed", &edit, Some(&marker), Duration::from_millis(100));
    // At arbitrary points, the snapshot and the event writes among them.
    for ms in [5u64, 30, 60, 120] {
        kill_then_continue(&env, &r, "Killed", &edit, None, Duration::from_millis(ms));
    }
    std::fs::write(r.join("retry-run.toml"), "max_attempts = 20\n").expect("write");
    let out = run(&env, &r, &["--task", "Killed"], &appends(&env, "done"));
    out.assert_code(0);
    let ev = events(&r, "killed");
    let completed: Vec<u64> = of_type(&ev, "AttemptCompleted").iter().filter_map(|e| e["attempt"].as_u64()).collect();
    let started: Vec<u64> = of_type(&ev, "AttemptStarted").iter().filter_map(|e| e["attempt"].as_u64()).collect();
    assert_eq!(completed, started, "every started attempt is completed, in order");
    assert!(completed.windows(2).all(|w| w[1] == w[0] + 1), "numbering continues: {completed:?}");
    let interrupted =
        of_type(&ev, "AttemptCompleted").iter().filter(|e| e["interrupted"] == true && e["outcome"] == "CRASH").count();
    assert!(interrupted >= 2, "the agent and check kills are recorded as interrupted: {interrupted}");
    env.run(&r, &["log", "killed", "--verify"]).assert_code(0);
    // The orphaned agent of the first killed run was stopped by the next run
    // (its pid file says it ran; nothing of it is left in the worktree).
    // (A killed run's checks, `sleep 5`, may still be ending on their own.)
    assert!(pid_file.is_file());
    let wt = r.join(".git/retry-run/worktrees/killed");
    let agent: Vec<String> = processes_in(&wt)
        .into_iter()
        .filter(|p| {
            let pid = p.split_whitespace().next().unwrap_or("");
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == b"sleep\x0030\x00")
        })
        .collect();
    assert!(agent.is_empty(), "the orphaned agent still runs: {agent:?}");
}

#[test]
fn an_agent_printing_200_mb_costs_megabytes() {
    let env = TestEnv::new();
    let r = project(&env, "max_attempts = 1\n");
    let agent =
        env.agent(FakeAgent::new().sh("head -c 200000000 /dev/zero | tr '\\0' x; echo").append("src/app.txt", "x\n"));
    let mut cmd = env.retry_run(&r);
    cmd.args(agent.after(&["run", "--quiet", "--task", "Loud"]));
    // The exit code and the peak memory of retry-run (and of the agent
    // processes it waited for).
    let (code, max_rss_kb) = peak_memory(&cmd, &env.path("loud.json"));
    assert_eq!(code, 0, "status {code}");
    let kept = std::fs::metadata(r.join(".git/retry-run/tasks/loud/attempts/1/agent.out")).expect("agent.out").len();
    assert!(kept < 200 * 1024, "head and tail only: {kept} bytes");
    let finished = first(&r, "loud", "AgentFinished");
    assert_eq!(finished["output_bytes"], 200_000_001);
    assert!(max_rss_kb < 150 * 1024, "peak memory {max_rss_kb} KiB");
}
