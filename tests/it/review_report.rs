//! What the user sees of review rounds and lands (docs/review.md): a task
//! run, rejected with `retry-run review`, run again, rejected again with
//! the same required change, approved and landed with `retry-run land`;
//! then `report` (its "Reviews" and "Landed" sections, what to do next),
//! `status` (the REVIEW column, `--json`) and `stats` (rejections, repeated
//! critiques, time to land, the histogram). And fleets: reviews and lands
//! travel with the record through `push` and `pull`, and a land on one
//! clone is seen on the others.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::support::record::{events, of_type};
use crate::support::{Agent, FakeAgent, Run, TestEnv};

const TASK: &str = "set-the-value";
const BY: &str = "Ann <ann@example.com>";
const REQUIRED: &str = "Say in a comment why the value is 2.";

/// The agent: every call sets the value; the third call also says why.
fn agent(env: &TestEnv) -> Agent {
    env.agent(
        FakeAgent::new()
            .write("src/app.txt", "value = 2\n")
            .next_call()
            .write("src/app.txt", "value = 2\n")
            .next_call()
            .write("src/app.txt", "# 2: the default the tests expect\nvalue = 2\n"),
    )
}

/// A repository with `src/app.txt` on `main`.
fn project(env: &TestEnv, name: &str) -> PathBuf {
    env.repo(name).file("src/app.txt", "value = 1\n").file("retry-run.toml", "max_attempts = 1\n").commit()
}

/// A rejection of the task's result by Ann, with a critique and a comment
/// on the first line of `src/app.txt`.
fn reject(cmd: &mut std::process::Command) -> Run {
    Run::of(cmd.args([
        "review",
        TASK,
        "--required-change",
        REQUIRED,
        "--critique",
        "The value changed with no word of why.\nA reader will change it back.",
        "--comment",
        "src/app.txt:1",
        "why 2?",
        "--by",
        BY,
    ]))
}

fn status_row(run: &Run) -> &str {
    run.stdout.lines().find(|l| l.starts_with(&format!("{TASK}\t"))).unwrap_or_else(|| panic!("{}", run.stdout))
}

fn status_json(run: &Run) -> Value {
    let line = run.stdout.lines().find(|l| l.contains(&format!("\"task\":\"{TASK}\""))).unwrap_or("null");
    serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {}", run.stdout))
}

#[test]
fn review_rounds_and_the_land_in_report_status_and_stats() {
    let env = TestEnv::new();
    let r = project(&env, "repo");
    let agent = agent(&env);
    let base = env.git(&r, &["rev-parse", "main"]);
    env.run_agent(&r, &["run", "--quiet", "--task", "Set the value"], &agent).assert_code(0);

    // Not reviewed yet: the report says how to give a verdict.
    let report = env.run(&r, &["report", TASK]);
    report.assert_code(0);
    assert!(report.stdout.contains(&format!("`retry-run review {TASK} --approve`")), "{}", report.stdout);
    assert!(status_row(&env.run(&r, &["status"])).ends_with("\treview -"));

    // Rejected: status and the report say so, and name `--again`.
    reject(&mut env.retry_run(&r)).assert_code(0);
    assert!(status_row(&env.run(&r, &["status"])).ends_with("\treview rejected"));
    assert_eq!(status_json(&env.run(&r, &["status", "--json"]))["review"], "rejected");
    let md = env.run(&r, &["report", TASK]).assert_code(0).stdout.clone();
    for want in [
        "- Review: rejected\n",
        &format!("Attempt 1 was rejected by {BY}: {REQUIRED} `retry-run run --id {TASK} --again`"),
        "\n## Reviews\n\n### Review 1: attempt 1 rejected\n\n",
        &format!("- By: {BY} (via the command line)\n"),
        &format!("- Required change: {REQUIRED}\n"),
        "- Critique:\n  > The value changed with no word of why.\n  > A reader will change it back.\n",
        "- Line comments:\n  - `src/app.txt:1`: why 2?\n",
    ] {
        assert!(md.contains(want), "{want:?} not in:\n{md}");
    }

    // Round 2 makes the same change: the same required change rejects it
    // again, and that is said.
    env.run_agent(&r, &["run", "--quiet", "--id", TASK, "--again"], &agent).assert_code(0);
    assert!(status_row(&env.run(&r, &["status"])).ends_with("\treview -"), "the new result is not reviewed yet");
    reject(&mut env.retry_run(&r)).assert_code(0);
    let md = env.run(&r, &["report", TASK]).assert_code(0).stdout.clone();
    assert!(md.contains("### Review 2: attempt 2 rejected\n"), "{md}");
    assert!(md.contains("- Repeated: the same required change rejected attempt 1\n"), "{md}");
    assert!(md.contains("The same required change already rejected attempt 1"), "{md}");

    // Round 3 says why: approved, the report names `land`; landed.
    env.run_agent(&r, &["run", "--quiet", "--id", TASK, "--again"], &agent).assert_code(0);
    env.run(&r, &["review", TASK, "--approve", "--by", BY]).assert_code(0);
    assert!(status_row(&env.run(&r, &["status"])).ends_with("\treview approved"));
    let md = env.run(&r, &["report", TASK]).assert_code(0).stdout.clone();
    assert!(md.contains(&format!("Attempt 3 was approved by {BY}: `retry-run land {TASK}`")), "{md}");
    env.run(&r, &["land", TASK]).assert_code(0);
    let landed = env.git(&r, &["rev-parse", "main"]);
    assert_ne!(landed, base, "main moved");
    assert_eq!(
        std::fs::read_to_string(r.join("src/app.txt")).expect("app.txt"),
        "# 2: the default the tests expect\nvalue = 2\n"
    );

    assert!(status_row(&env.run(&r, &["status"])).ends_with("\treview landed on main"));
    let row = status_json(&env.run(&r, &["status", "--json"]));
    assert_eq!(row["review"], "landed", "{row}");
    assert_eq!(
        (row["landed"]["onto"].as_str(), row["landed"]["commit"].as_str()),
        (Some("main"), Some(landed.as_str()))
    );
    let md = env.run(&r, &["report", TASK]).assert_code(0).stdout.clone();
    let at = |needle: &str| md.find(needle).unwrap_or_else(|| panic!("{needle:?} not in:\n{md}"));
    assert!(
        at("## Attempts") < at("## Reviews")
            && at("## Reviews") < at("## Landed")
            && at("## Landed") < at("## The task")
    );
    at("- Review: landed\n");
    at(&format!("- Onto: `main`, `{base}` -> `{landed}` (fast-forward)\n"));
    at("- Attempt: 3 (commit `");
    at("- Not replayed: the branch was still at the task's base\n");
    at("Attempt 3 landed on `main` (fast-forward");
    at("### Review 3: attempt 3 approved\n");

    let text = env.run(&r, &["stats"]).assert_code(0).stdout.clone();
    assert!(text.contains("attempts per task, as a histogram:\n  3 attempts   \u{2588} 1\n"), "{text}");
    assert!(text.contains(&format!("    {TASK:<40}   2 rejected, 1 approved\n")), "{text}");
    assert!(text.contains(&format!("already rejected an attempt of the task): 1, in {TASK}\n")), "{text}");
    assert!(text.contains("time from the first attempt to the land: median "), "{text}");
    let json = env.run(&r, &["stats", "--json"]).assert_code(0).json();
    assert_eq!(json["attempts_histogram"], serde_json::json!({"3": 1}), "{json}");
    assert_eq!(json["reviews"]["by_task"][TASK], serde_json::json!({"rejected": 2, "approved": 1}), "{json}");
    assert_eq!(json["reviews"]["repeated"], 1, "{json}");
    assert_eq!(json["by_feedback"]["review"], serde_json::json!({"attempts": 2, "succeeded": 2}), "{json}");
    assert!(json["reviews"]["to_land_ms"][TASK].is_u64(), "{json}");
}

/// A bare remote and `n` clones of a repository like [`project`]'s, each
/// with its own HOME (a machine).
struct Machines {
    env: TestEnv,
    clones: Vec<(PathBuf, PathBuf)>,
}

impl Machines {
    fn new(n: usize) -> Machines {
        let env = TestEnv::new();
        project(&env, "seed");
        env.git(env.root(), &["clone", "-q", "--bare", "seed", "remote.git"]);
        let remote = env.path("remote.git").display().to_string();
        let clones = (0..n)
            .map(|i| {
                let home = env.new_home(&format!("home-{i}"));
                let dir = env.path(&format!("clone-{i}"));
                let out = env
                    .command_as(&home, "git", env.root())
                    .args(["clone", "-q", &remote, &dir.display().to_string()])
                    .output()
                    .expect("git runs");
                assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
                (dir, home)
            })
            .collect();
        Machines { env, clones }
    }

    fn dir(&self, clone: usize) -> &Path {
        &self.clones[clone].0
    }

    fn command(&self, clone: usize) -> std::process::Command {
        let (dir, home) = &self.clones[clone];
        self.env.retry_run_as(home, dir)
    }

    fn run(&self, clone: usize, args: &[&str]) -> Run {
        Run::of(self.command(clone).args(args))
    }

    fn run_agent(&self, clone: usize, args: &[&str], agent: &Agent) -> Run {
        Run::of(self.command(clone).args(agent.after(args)))
    }
}

#[test]
fn reviews_and_a_land_travel_with_the_record_and_the_land_is_seen_on_the_other_clones() {
    let m = Machines::new(3);
    let agent = agent(&m.env);
    // Clone 0 runs the task and pushes it; clone 1 pulls it and rejects it.
    m.run_agent(0, &["run", "--quiet", "--task", "Set the value"], &agent).assert_code(0);
    m.run(0, &["push"]).assert_code(0);
    m.run(1, &["pull"]).assert_code(0);
    reject(&mut m.command(1)).assert_code(0);
    let push = m.run(1, &["push"]);
    assert!(push.assert_code(0).stdout.contains(&format!("{TASK}: pushed to origin")), "{}", push.stdout);

    // Clone 0 pulls the rejection: its status and report show it.
    m.run(0, &["pull"]).assert_code(0);
    assert!(status_row(&m.run(0, &["status"])).ends_with("\treview rejected"));
    let reviewed = of_type(&events(m.dir(0), TASK), "Reviewed").into_iter().cloned().collect::<Vec<_>>();
    assert_eq!(reviewed.len(), 1);
    assert_eq!((reviewed[0]["attempt"].as_u64(), reviewed[0]["by"].as_str()), (Some(1), Some(BY)));
    assert!(m.run(0, &["report", TASK]).stdout.contains(&format!("- Required change: {REQUIRED}")));

    // Clone 0 runs the next round twice (the second says why), approves,
    // lands onto its main and pushes the record.
    for _ in 0..2 {
        m.run_agent(0, &["run", "--quiet", "--id", TASK, "--again"], &agent).assert_code(0);
    }
    m.run(0, &["review", TASK, "--approve", "--by", BY]).assert_code(0);
    m.run(0, &["land", TASK]).assert_code(0);
    let landed = m.env.git(m.dir(0), &["rev-parse", "main"]);
    m.run(0, &["push"]).assert_code(0);

    // Clones 1 and 2 pull: the land is seen in status and the report; the
    // task's branch, which the land removed, is not made again on clone 2,
    // which never had it.
    for clone in [1, 2] {
        let pull = m.run(clone, &["pull"]);
        pull.assert_code(0);
        let st = m.run(clone, &["status"]);
        assert!(status_row(&st).ends_with("\treview landed on main"), "clone {clone}: {}", st.stdout);
        let row = status_json(&m.run(clone, &["status", "--json"]));
        assert_eq!(row["landed"]["commit"].as_str(), Some(landed.as_str()), "clone {clone}: {row}");
        let md = m.run(clone, &["report", TASK]).assert_code(0).stdout.clone();
        assert!(md.contains("\n## Landed\n") && md.contains(&format!("-> `{landed}` (fast-forward)")), "{md}");
        assert!(md.contains("### Review 1: attempt 1 rejected") && md.contains("### Review 2: attempt 3 approved"));
        for clone_log in [0, clone] {
            m.run(clone_log, &["log", TASK, "--verify"]).assert_code(0);
        }
    }
    let branch = m
        .env
        .command_as(&m.clones[2].1, "git", m.dir(2))
        .args(["rev-parse", "--verify", "-q", &format!("refs/heads/retry-run/{TASK}")])
        .output()
        .expect("git runs");
    assert!(!branch.status.success(), "the landed task's branch came back on clone 2");
    // Both records are the same chain.
    let log =
        |c: usize| std::fs::read(m.dir(c).join(format!(".git/retry-run/tasks/{TASK}/events.jsonl"))).expect("events");
    assert_eq!(log(0), log(2));
}

#[test]
fn a_run_with_remote_takes_a_rejection_given_on_another_clone_into_its_next_round() {
    let m = Machines::new(2);
    let agent = m.env.agent(
        FakeAgent::new()
            .write("src/app.txt", "value = 2\n")
            .next_call()
            .expect_prompt(&format!("**Required change:** {REQUIRED}"))
            .write("src/app.txt", "# 2: the default the tests expect\nvalue = 2\n"),
    );
    m.run_agent(0, &["run", "--quiet", "--remote", "origin", "--task", "Set the value"], &agent).assert_code(0);
    m.run(1, &["pull"]).assert_code(0);
    reject(&mut m.command(1)).assert_code(0);
    m.run(1, &["push"]).assert_code(0);

    // Clone 0 has not pulled: `run --remote` takes the rejection first,
    // and the round's first prompt leads with it.
    m.run_agent(0, &["run", "--quiet", "--remote", "origin", "--id", TASK, "--again"], &agent).assert_code(0);
    let ev = events(m.dir(0), TASK);
    let kinds: Vec<&str> = ev.iter().filter_map(|e| e["type"].as_str()).collect();
    let reviewed = kinds.iter().position(|k| *k == "Reviewed").expect("the rejection came with the record");
    let again = kinds.iter().rposition(|k| *k == "TaskStarted").expect("a second round");
    assert!(reviewed < again, "{kinds:?}");
    // And the new round went back to the remote: clone 1 sees it.
    m.run(1, &["pull"]).assert_code(0);
    let md = m.run(1, &["report", TASK]).assert_code(0).stdout.clone();
    assert!(md.contains("- Status: succeeded at attempt 2") && md.contains("### Review 1: attempt 1 rejected"), "{md}");
    assert!(status_row(&m.run(1, &["status"])).ends_with("\treview -"), "the new result is not reviewed yet");
}
