//! `run --lanes`: several attempt chains of one task at once, each a record
//! of its own under the task's, the winner chosen by the gates
//! (docs/lanes.md). Real repositories, the real binary, scripted agents
//! given to each lane by `[[lane]]`.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::support::agent::{Agent, FakeAgent};
use crate::support::child::wait_until_ready;
use crate::support::record::{events, of_type, outcomes};
use crate::support::{TestEnv, processes_in};

/// A project whose check passes once `src/app.txt` says `value = 2`, with
/// one `[[lane]]` table per agent and `top` at the top of its config; the
/// agents may write under `shared/` (see [`shared`]), for the markers the
/// tests wait for.
fn project(env: &TestEnv, top: &str, lanes: &[&Agent]) -> PathBuf {
    let shared = shared(env, "");
    let mut config = format!("{top}\n[sandbox]\nwritable = [\"{}\"]\n\n[retry]\nbaseline = false\n", shared.display());
    config.push_str("\n[[check]]\nname = \"value\"\nkind = \"test\"\nrun = \"grep -q 'value = 2' src/app.txt\"\n");
    for a in lanes {
        config.push_str(&format!("\n[[lane]]\ncommand = {}\n", a.toml()));
    }
    env.repo("repo").file("src/app.txt", "value = 1\n").file("retry-run.toml", &config).commit()
}

/// `name` under the directory outside the repository that agents may write.
fn shared(env: &TestEnv, name: &str) -> PathBuf {
    let dir = env.path("shared");
    std::fs::create_dir_all(&dir).expect("mkdir shared");
    dir.join(name)
}

fn wrong(env: &TestEnv) -> Agent {
    env.agent(FakeAgent::new().write("src/app.txt", "value = 3\n"))
}

/// Wrong at its first attempt, right at its second.
fn right_second(env: &TestEnv) -> Agent {
    env.agent(FakeAgent::new().write("src/app.txt", "value = 3\n").next_call().write("src/app.txt", "value = 2\n"))
}

fn lane(n: u32) -> String {
    format!("t/lanes/{n}")
}

/// The reasons of the escalations a budget made in the first `lanes`
/// lanes' logs.
fn budget_escalations(r: &Path, lanes: u32) -> Vec<String> {
    (1..=lanes)
        .flat_map(|n| of_type(&events(r, &lane(n)), "TaskEscalated").into_iter().cloned().collect::<Vec<_>>())
        .filter(|e| e["budget"] == true)
        .map(|e| e["reason"].as_str().unwrap_or("").to_string())
        .collect()
}

fn run(env: &TestEnv, r: &Path, args: &[&str]) -> crate::support::Run {
    let mut all = vec!["run", "--quiet", "--id", "t", "--task", "Make the value 2"];
    all.extend(args);
    env.run(r, &all)
}

#[test]
fn the_first_lane_to_pass_wins_and_the_others_are_stopped_not_failed() {
    let env = TestEnv::new();
    let marker = shared(&env, "slow-started");
    let slow = env.agent(FakeAgent::new().sh(&format!("touch {}", marker.display())).sleep("60"));
    let (a, b) = (wrong(&env), right_second(&env));
    let r = project(&env, "max_attempts = 9", &[&a, &b, &slow]);
    let out = run(&env, &r, &[]);
    out.assert_code(0);
    assert!(out.stdout.contains("task t succeeded: lane 2 at its attempt 2"), "{}", out.stdout);

    // The task's log: how each lane ended, the choice, the branch.
    let ev = events(&r, "t");
    assert_eq!(of_type(&ev, "TaskStarted")[0]["lanes"], 3);
    let ended: Vec<(u64, String)> = of_type(&ev, "LaneEnded")
        .iter()
        .map(|e| (e["lane"].as_u64().unwrap_or(0), e["ending"].as_str().unwrap_or("?").to_string()))
        .collect();
    assert_eq!(ended, [(1, "stopped".into()), (2, "succeeded".into()), (3, "stopped".into())]);
    let chosen = of_type(&ev, "LaneChosen")[0];
    assert_eq!((chosen["lane"].as_u64(), chosen["attempt"].as_u64()), (Some(2), Some(2)));
    let winner = env.git(&r, &["rev-parse", "refs/retry-run/t/lanes/2/2"]);
    assert_eq!(env.git(&r, &["rev-parse", "retry-run/t"]), winner);
    assert_eq!(of_type(&ev, "TaskSucceeded")[0]["commit"], winner.as_str());

    // Each lane has its own record, attempts and refs; the slow lane's
    // attempt is STOPPED and the lane ends with LaneStopped.
    assert_eq!(outcomes(&r, &lane(2)), ["CHECK_FAILURE", "SUCCESS"]);
    assert_eq!(outcomes(&r, &lane(3)).last().map(String::as_str), Some("STOPPED"));
    let stopped = of_type(&events(&r, &lane(3)), "LaneStopped")[0].clone();
    assert_eq!(stopped["reason"], "lane 2 passed every gate first");
    assert!(of_type(&events(&r, &lane(1)), "LaneStopped").len() == 1);
    assert!(!outcomes(&r, &lane(1)).contains(&"SUCCESS".to_string()));
    assert_eq!(of_type(&events(&r, &lane(2)), "TaskStarted")[0]["lane"], 2);
    assert!(marker.exists(), "the slow lane's agent ran");
    assert!(processes_in(env.root()).is_empty(), "the stopped agent is gone: {:?}", processes_in(env.root()));
    // No lane leaves a branch of its own; every chain verifies.
    assert_eq!(env.git(&r, &["branch", "--list", "--format=%(refname:short)", "retry-run/*"]), "retry-run/t");
    for rec in ["t", "t/lanes/1", "t/lanes/2", "t/lanes/3"] {
        env.run(&r, &["log", rec, "--verify"]).assert_code(0);
    }
    // Each attempt's manifest names its lane's record.
    let env_of = |n: u32| {
        std::fs::read_to_string(r.join(format!(".git/retry-run/tasks/t/lanes/{n}/attempts/1/manifest.json")))
            .unwrap_or_default()
    };
    assert!(env_of(2).contains("\"task\":\"t/lanes/2\""), "{}", env_of(2));
}

#[test]
fn the_agent_gets_its_lane_and_the_task() {
    let env = TestEnv::new();
    let seen = shared(&env, "");
    let tell = |n: u32| {
        env.agent(
            FakeAgent::new()
                .sh(&format!("echo \"$RETRY_RUN_TASK $RETRY_RUN_LANE $RETRY_RUN_LANES\" > {}/{n}", seen.display()))
                .write("src/app.txt", "value = 2\n"),
        )
    };
    let (a, b) = (tell(1), tell(2));
    let r = project(&env, "", &[&a, &b]);
    run(&env, &r, &["--choose", "all"]).assert_code(0);
    for n in [1, 2] {
        let line = std::fs::read_to_string(seen.join(n.to_string())).expect("the agent ran");
        assert_eq!(line.trim(), format!("t {n} 2"));
    }
}

#[test]
fn choose_all_runs_every_lane_to_its_end_and_the_gates_pick_the_smaller_diff() {
    let env = TestEnv::new();
    let big = env.agent(FakeAgent::new().write("src/app.txt", "value = 2\n").write("src/extra.txt", "a\nb\nc\nd\ne\n"));
    let small = env.agent(FakeAgent::new().write("src/app.txt", "value = 2\n"));
    let r = project(&env, "", &[&big, &small]);
    run(&env, &r, &["--choose", "all"]).assert_code(0);
    let ev = events(&r, "t");
    let chosen = of_type(&ev, "LaneChosen")[0];
    assert_eq!(chosen["lane"], 2);
    assert!(chosen["why"].as_str().unwrap_or("").contains("smaller diff: 2 lines against lane 1's 7"), "{chosen}");
    // Both lanes ran to their end: neither was stopped.
    assert_eq!(outcomes(&r, &lane(1)), ["SUCCESS"]);
    assert_eq!(outcomes(&r, &lane(2)), ["SUCCESS"]);
    assert!(of_type(&ev, "LaneEnded").iter().all(|e| e["ending"] == "succeeded"));
    assert_eq!(env.git(&r, &["rev-parse", "retry-run/t"]), env.git(&r, &["rev-parse", "refs/retry-run/t/lanes/2/1"]));
    // `report` puts the lanes side by side; `stats` counts the task by its
    // lanes, with pass@k.
    let report = env.run(&r, &["report", "t"]);
    report.assert_code(0);
    assert!(report.stdout.contains("| 1 | sh | succeeded | SUCCESS | - | +6 -1 | - |"), "{}", report.stdout);
    assert!(report.stdout.contains("| 2 | sh | succeeded | SUCCESS | - | +1 -1 | - |"), "{}", report.stdout);
    assert!(report.stdout.contains("Chosen: lane 2, passed every gate with the smaller diff"), "{}", report.stdout);
    env.run(&r, &["report", "t/lanes/1"]).assert_code(0);
    // Run again without --again: the task had ended, nothing runs.
    let again = run(&env, &r, &["--choose", "all"]);
    again.assert_code(0);
    assert!(again.stderr.contains("task t already ended"), "{}", again.stderr);
    assert_eq!(of_type(&events(&r, "t"), "TaskStarted").len(), 1);

    let stats = env.run(&r, &["stats"]);
    assert!(stats.stdout.contains(" 2 lanes  100.0%  (1/1 tasks)"), "{}", stats.stdout);
    assert!(stats.stdout.contains("pass@1 100.0%, pass@2 100.0%"), "{}", stats.stdout);
}

#[test]
fn shared_feedback_puts_lane_1s_failure_into_lane_2s_next_prompt() {
    let env = TestEnv::new();
    let done = shared(&env, "lane-1-failed");
    // Lane 1 crashes at its first attempt, then works until it is stopped.
    let fails = env.agent(
        FakeAgent::new()
            .write("src/app.txt", "value = 7\n")
            .sh(&format!("touch {}", done.display()))
            .exit(3)
            .next_call()
            .sleep("60"),
    );
    // Lane 2's first attempt ends after lane 1's has (its marker, then a
    // moment for lane 1's checks), wrong; its second is right.
    let waits = env.agent(
        FakeAgent::new()
            .sh(&format!("while [ ! -e {} ]; do sleep 0.05; done; sleep 1", done.display()))
            .write("src/app.txt", "value = 5\n")
            .next_call()
            .write("src/app.txt", "value = 2\n"),
    );
    let r = project(&env, "max_attempts = 6", &[&fails, &waits]);
    let config = std::fs::read_to_string(r.join("retry-run.toml")).expect("config");
    std::fs::write(r.join("retry-run.toml"), config.replace("[retry]\n", "[retry]\nshare_feedback = true\n"))
        .expect("write");
    run(&env, &r, &[]).assert_code(0);
    let second = crate::support::record::prompt(&r, &lane(2), 2);
    assert!(second.contains("## What the other lanes tried"), "{second}");
    assert!(second.contains("- lane 1, attempt 1: CRASH."), "{second}");
    let first = crate::support::record::prompt(&r, &lane(2), 1);
    assert!(!first.contains("other lanes"), "nothing had failed yet: {first}");
}

#[test]
fn max_attempts_counts_every_lane_and_no_lane_passing_escalates_the_task() {
    let env = TestEnv::new();
    let (a, b) = (wrong(&env), wrong(&env));
    let r = project(&env, "max_attempts = 3", &[&a, &b]);
    let out = run(&env, &r, &["-j", "1"]);
    out.assert_code(1);
    let total = outcomes(&r, &lane(1)).len() + outcomes(&r, &lane(2)).len();
    assert_eq!(total, 3, "three attempts in all, across the lanes");
    let escalated = of_type(&events(&r, "t"), "TaskEscalated")[0].clone();
    assert!(escalated["reason"].as_str().unwrap_or("").starts_with("no lane passed every gate (2 lanes, 3 attempts"));
    let budget = budget_escalations(&r, 2);
    assert_eq!(budget.len(), 1, "the lane that found the budget spent says so");
    assert!(budget[0].contains("spent across its lanes"), "{budget:?}");
}

#[test]
fn a_lane_count_of_presets_more_than_the_lanes_is_refused() {
    let env = TestEnv::new();
    let (a, b) = (wrong(&env), wrong(&env));
    let r = project(&env, "", &[&a, &b]);
    let out = run(&env, &r, &["--lanes", "1"]);
    out.assert_code(2);
    assert!(out.stderr.contains("2 lane agents are given ([[lane]] or --lane-preset) for 1 lanes"), "{}", out.stderr);
    let out = run(&env, &r, &["--lanes", "17"]);
    out.assert_code(2);
    assert!(out.stderr.contains("--lanes"), "{}", out.stderr);
}

#[test]
fn killed_mid_lanes_then_resumed_each_lane_goes_on_and_the_chains_verify() {
    let env = TestEnv::new();
    let marker = shared(&env, "both-running");
    let hang = |other: &str| {
        env.agent(
            FakeAgent::new()
                .sh(&format!("touch {}.{other}", marker.display()))
                .sleep("60")
                .next_call()
                .write("src/app.txt", "value = 2\n"),
        )
    };
    let (a, b) = (hang("1"), hang("2"));
    let r = project(&env, "max_attempts = 6", &[&a, &b]);
    let mut child = env
        .retry_run(&r)
        .args(["run", "--quiet", "--id", "t", "--task", "Make the value 2", "--choose", "all"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    wait_until_ready(&mut child, &PathBuf::from(format!("{}.1", marker.display())));
    wait_until_ready(&mut child, &PathBuf::from(format!("{}.2", marker.display())));
    child.kill().expect("kill -9");
    let _ = child.wait();
    // The agents outlive the killed run: the resumed run stops them.
    // The lanes and the choice come from the record.
    let out = env.run(&r, &["run", "--quiet", "--id", "t"]);
    out.assert_code(0);
    for n in [1, 2] {
        assert_eq!(outcomes(&r, &lane(n)), ["CRASH", "SUCCESS"], "lane {n}");
        env.run(&r, &["log", &lane(n), "--verify"]).assert_code(0);
    }
    let ev = events(&r, "t");
    assert_eq!(of_type(&ev, "TaskStarted").len(), 2);
    assert_eq!(of_type(&ev, "TaskStarted")[1]["resumed"], true);
    assert_eq!(of_type(&ev, "TaskStarted")[1]["lanes"], 2, "the lanes come from the record");
    assert_eq!(of_type(&ev, "TaskStarted")[1]["choose"], "all", "and so does the choice");
    env.run(&r, &["log", "t", "--verify"]).assert_code(0);
    assert!(processes_in(env.root()).is_empty(), "{:?}", processes_in(env.root()));
}

#[test]
fn each_lane_has_its_worktree_and_clean_removes_them_with_the_task() {
    let env = TestEnv::new();
    let (a, b) = (right_second(&env), right_second(&env));
    let r = project(&env, "max_attempts = 4", &[&a, &b]);
    crate::support::keep_worktrees(&env, &r);
    run(&env, &r, &["--choose", "all"]).assert_code(0);
    let wts = r.join(".git/retry-run/worktrees");
    for n in [1, 2] {
        let wt = wts.join(format!("t+{n}"));
        assert_eq!(std::fs::read_to_string(wt.join("src/app.txt")).expect("the lane's worktree"), "value = 2\n");
    }
    let listed = env.git(&r, &["worktree", "list"]);
    assert!(listed.contains("t+1") && listed.contains("t+2"), "{listed}");
    // `status` sums the lanes' attempts and worktrees; `inspect` takes a
    // lane's attempt.
    let status = env.run(&r, &["status"]).stdout;
    let row = status.lines().nth(1).unwrap_or("");
    assert!(row.starts_with("t\tsucceeded\tattempts 4\t") && row.contains("\tlast 2 lanes\t"), "{status}");
    assert!(!status.contains("worktree none"), "{status}");
    let inspect = env.run(&r, &["inspect", "t/lanes/2/2"]);
    inspect.assert_code(0);
    assert!(inspect.stdout.contains("refs/retry-run/t/lanes/2/2"), "{}", inspect.stdout);
    env.run(&r, &["clean", "t"]).assert_code(0);
    assert!(!wts.join("t+1").exists() && !wts.join("t+2").exists());
    let listed = env.git(&r, &["worktree", "list"]);
    assert!(!listed.contains("t+"), "{listed}");
}

#[test]
fn max_duration_counts_every_lanes_attempts() {
    let env = TestEnv::new();
    let slow_wrong = || env.agent(FakeAgent::new().sleep("1").write("src/app.txt", "value = 3\n"));
    let (a, b) = (slow_wrong(), slow_wrong());
    let r = project(&env, "max_attempts = 20", &[&a, &b]);
    let config = std::fs::read_to_string(r.join("retry-run.toml")).expect("config");
    std::fs::write(r.join("retry-run.toml"), config.replace("[retry]\n", "[retry]\nmax_duration = \"3s\"\n"))
        .expect("write");
    run(&env, &r, &[]).assert_code(1);
    // Each lane alone would run three 1-second attempts before its own
    // attempts reached 3 s; counted together, the lanes stop sooner.
    let total = outcomes(&r, &lane(1)).len() + outcomes(&r, &lane(2)).len();
    assert!((3..=5).contains(&total), "{total} attempts in all");
    let reasons = budget_escalations(&r, 2);
    assert!(!reasons.is_empty() && reasons.iter().all(|r| r.contains("retry.max_duration")), "{reasons:?}");
}

#[test]
fn choose_all_with_a_verifier_takes_its_pick_among_the_lanes_that_passed() {
    let env = TestEnv::new();
    // The verifier approves each attempt; shown the lanes, it picks lane 1
    // (the larger diff, which the gates alone would not choose).
    let verifier = env.write(
        "verifier.sh",
        "if grep -q '^# Choose one lane' ; then\n  echo '{\"verdict\": \"approved\", \"lane\": 1, \"why\": \"it documents the change\"}'\nelse\n  echo '{\"verdict\": \"approved\"}'\nfi\n",
    );
    let big = env.agent(FakeAgent::new().write("src/app.txt", "value = 2\n").write("src/extra.txt", "a\nb\nc\n"));
    let small = env.agent(FakeAgent::new().write("src/app.txt", "value = 2\n"));
    let r = project(&env, "", &[&big, &small]);
    let config = std::fs::read_to_string(r.join("retry-run.toml")).expect("config");
    std::fs::write(r.join("retry-run.toml"), format!("{config}\n[verifier]\nrun = \"sh {}\"\n", verifier.display()))
        .expect("write");
    run(&env, &r, &["--choose", "all"]).assert_code(0);
    let chosen = of_type(&events(&r, "t"), "LaneChosen")[0].clone();
    assert_eq!(chosen["lane"], 1, "{chosen}");
    assert_eq!(chosen["why"], "the verifier's pick among 2 lanes that passed every gate: it documents the change");
    let shown = std::fs::read_to_string(r.join(".git/retry-run/tasks/t/choice/verifier-1.out")).expect("its output");
    assert!(shown.contains("\"lane\": 1"), "{shown}");
    assert_eq!(env.git(&r, &["rev-parse", "retry-run/t"]), env.git(&r, &["rev-parse", "refs/retry-run/t/lanes/1/1"]));

    // A pick that is not one of the lanes shown leaves the gates' choice.
    std::fs::write(&verifier, "echo '{\"verdict\": \"approved\", \"lane\": 7}'\n").expect("write");
    run(&env, &r, &["--again", "--choose", "all"]).assert_code(0);
    let chosen = of_type(&events(&r, "t"), "LaneChosen")[1].clone();
    assert_eq!(chosen["lane"], 2, "{chosen}");
    let why = chosen["why"].as_str().unwrap_or("");
    assert!(
        why.contains("smaller diff") && why.contains("the verifier gave no pick: the verdict picks lane 7"),
        "{why}"
    );
}

#[test]
fn with_a_remote_the_task_holds_one_lease_and_its_record_carries_every_lane() {
    let env = TestEnv::new();
    let (a, b) = (right_second(&env), right_second(&env));
    let r = project(&env, "max_attempts = 4", &[&a, &b]);
    env.git(env.root(), &["clone", "-q", "--bare", "repo", "remote.git"]);
    env.git(&r, &["remote", "add", "origin", &env.path("remote.git").display().to_string()]);
    run(&env, &r, &["--choose", "all", "--remote", "origin"]).assert_code(0);
    let remote = env.path("remote.git");
    let refs = env.git(&remote, &["for-each-ref", "--format=%(refname)", "refs/retry-run/"]);
    let refs: Vec<&str> = refs.lines().collect();
    assert!(refs.contains(&"refs/retry-run/t/lease") && refs.contains(&"refs/retry-run/t/record"), "{refs:?}");
    assert!(!refs.iter().any(|r| r.starts_with("refs/retry-run/t/lanes/") && r.ends_with("/lease")), "{refs:?}");
    for attempt in ["refs/retry-run/t/lanes/1/2", "refs/retry-run/t/lanes/2/2"] {
        assert!(refs.contains(&attempt), "{attempt} sent: {refs:?}");
    }
    let files = env.git(&remote, &["ls-tree", "-r", "--name-only", "refs/retry-run/t/record"]);
    for f in ["events.jsonl", "lanes/1/events.jsonl", "lanes/2/events.jsonl", "lanes/2/attempts/2/prompt.md"] {
        assert!(files.lines().any(|l| l == f), "{f} in the record: {files}");
    }
    assert!(!files.lines().any(|l| l.ends_with("/lock") || l == "lock" || l.contains("/tmp/")), "{files}");
    // The record sent is the record here, the task's end included.
    let sent = env.git(&remote, &["show", "refs/retry-run/t/record:events.jsonl"]);
    assert!(sent.contains("\"type\":\"LaneChosen\"") && sent.contains("\"type\":\"TaskSucceeded\""), "{sent}");
}
