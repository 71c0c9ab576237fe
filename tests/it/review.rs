//! `retry-run review`: a reviewer's rejection recorded and carried into
//! the next round's first prompt (the block, in order, the comments beside
//! their lines), a second rejection keeping the first, a repeated required
//! change warned and recorded, and what is refused with nothing appended.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use crate::support::record::{events, of_type, outcomes, prompt};
use crate::support::{FakeAgent, Run, TestEnv};

/// A repository whose test passes once `src/app.txt` says `value = 2`.
fn project(env: &TestEnv) -> PathBuf {
    env.repo("repo")
        .file("src/app.txt", "value = 1\nlog = off\nend\n")
        .file(
            "test.sh",
            "if grep -q 'value = 2' src/app.txt; then echo '1 passed'; exit 0; fi\n\
             echo 'FAILED tests/app::test_value - expected value = 2'\nexit 1\n",
        )
        .file(
            "retry-run.toml",
            "[retry]\nbaseline = false\n\n[[check]]\nname = \"tests\"\nrun = \"sh test.sh\"\nkind = \"test\"\nformat = \"generic\"\n",
        )
        .commit()
}

const RC1: &str = "Turn the log on and drop the debug line.";
const RC2: &str = "Say why the log is on in a comment line.";

/// Round 1 writes `value = 2` and a debug line (lines 1 and 4 change);
/// round 2 fixes only when its prompt leads with the rejection; round 3
/// only when it also keeps the first rejection.
fn agent() -> FakeAgent {
    FakeAgent::new()
        .write("src/app.txt", "value = 2\nlog = off\nend\ndebug = 1\n")
        .next_call()
        .expect_prompt("## ATTEMPT #2 — previous attempt rejected")
        .expect_prompt(&format!("**Required change:** {RC1}"))
        .expect_prompt("- `src/app.txt:4`: drop the debug line\n  ```diff\n  +debug = 1\n  ```")
        .write("src/app.txt", "value = 2\nlog = on\nend\n")
        .next_call()
        .expect_prompt(&format!("## ATTEMPT #3 — previous attempt rejected\n\n**Required change:** {RC2}"))
        .expect_prompt(&format!("### Earlier rejections (latest first)\n- Attempt 1 (by Ann <ann@example.com>, in review): Required change: {RC1}"))
        .write("src/app.txt", "value = 2\n# the log helps support\nlog = on\nend\n")
}

/// `retry-run review ARGS`, the reviewer git's config alone: without the
/// hermetic environment's GIT_COMMITTER_NAME and GIT_COMMITTER_EMAIL,
/// which git (and so review) puts before the config.
fn review(env: &TestEnv, r: &Path, args: &[&str]) -> Run {
    Run::of(
        env.retry_run(r).arg("review").args(args).env_remove("GIT_COMMITTER_NAME").env_remove("GIT_COMMITTER_EMAIL"),
    )
}

fn log_bytes(r: &Path, task: &str) -> Vec<u8> {
    std::fs::read(r.join(format!(".git/retry-run/tasks/{task}/events.jsonl"))).expect("the log")
}

#[test]
fn a_rejection_leads_the_next_round_and_a_second_keeps_the_first() {
    let env = TestEnv::new();
    let r = project(&env);
    let a = env.agent(agent());
    env.run_agent(&r, &["run", "--quiet", "--task", "Set the value to 2", "--id", "t"], &a).assert_code(0);
    env.git(&r, &["config", "user.name", "Ann"]);
    env.git(&r, &["config", "user.email", "ann@example.com"]);

    // A comment on a line attempt 1 did not change: refused, nothing appended.
    let before = log_bytes(&r, "t");
    let out = review(&env, &r, &["t", "--required-change", RC1, "--comment", "src/app.txt:2", "why off?"]);
    out.assert_code(2);
    assert!(
        out.error_line().contains("src/app.txt:2 is not on a changed line of attempt 1's diff; the changed lines of src/app.txt nearest it: 1, 4"),
        "{}",
        out.stderr
    );
    assert_eq!(log_bytes(&r, "t"), before, "nothing is appended");
    let out = review(&env, &r, &["t", "--required-change", RC1, "--comment", "lib/x.txt:1", "?"]);
    out.assert_code(2);
    assert!(
        out.error_line().contains("lib/x.txt is not in attempt 1's diff; the file it changes: src/app.txt"),
        "{}",
        out.stderr
    );
    assert_eq!(log_bytes(&r, "t"), before);

    // The rejection: a required change, a critique and two line comments.
    let critique = "The value is right.\n\nBut   the log must stay on,\nand debug lines never ship.\n";
    env.write("critique.md", critique);
    let critique_file = env.path("critique.md");
    let out = review(
        &env,
        &r,
        &[
            "t",
            "--required-change",
            RC1,
            "--critique-file",
            critique_file.to_str().expect("utf-8"),
            "--comment",
            "src/app.txt:1",
            "this is right",
            "--comment",
            "src/app.txt:4",
            "drop the debug line",
        ],
    );
    out.assert_code(0);
    assert!(
        out.stdout.contains("task t: attempt 1 (") && out.stdout.contains("rejected by Ann <ann@example.com>"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("`retry-run run --id t --again` starts the next round"), "{}", out.stdout);
    let ev = events(&r, "t");
    let reviewed = of_type(&ev, "Reviewed");
    assert_eq!(reviewed.len(), 1);
    let e = reviewed[0];
    assert_eq!(
        (e["attempt"].as_u64(), e["verdict"].as_str(), e["channel"].as_str()),
        (Some(1), Some("rejected"), Some("cli"))
    );
    assert_eq!(e["critique"].as_str(), Some(critique), "the critique is kept verbatim");
    assert_eq!(e["commit"].as_str().map(str::to_string), Some(env.git(&r, &["rev-parse", "refs/retry-run/t/1"])));
    assert_eq!(e["comments"][1]["lines"], serde_json::json!(["+debug = 1"]));
    assert!(e.get("repeats").is_none());

    // The next round leads with it: `context` shows it before the run.
    let next = env.run(&r, &["context", "t"]);
    next.assert_code(0);
    assert!(
        next.stdout.starts_with(&format!("## ATTEMPT #2 — previous attempt rejected\n\n**Required change:** {RC1}\n")),
        "{}",
        next.stdout
    );
    env.run_agent(&r, &["run", "--quiet", "--id", "t", "--again"], &a).assert_code(0);
    assert_eq!(outcomes(&r, "t"), ["SUCCESS", "SUCCESS"]);
    let p = prompt(&r, "t", 2);
    let order = [
        "## ATTEMPT #2 — previous attempt rejected\n",
        &format!("**Required change:** {RC1}\n"),
        "Attempt 1 (commit ",
        "**Reviewer critique** (Ann <ann@example.com>, verbatim):\n> The value is right.\n>\n> But   the log must stay on,\n> and debug lines never ship.\n",
        "**Line comments:**\n- `src/app.txt:1`: this is right\n  ```diff\n  -value = 1\n  +value = 2\n  ```\n- `src/app.txt:4`: drop the debug line\n",
        "### Diff of attempt 1 (you may start from it)\n```diff\n",
        "## Task\n",
    ];
    let mut at = 0;
    for part in order {
        let found = p[at..].find(part).unwrap_or_else(|| panic!("{part:?} after byte {at} in:\n{p}"));
        at += found + part.len();
    }
    assert!(p.starts_with("## ATTEMPT #2"), "the block leads:\n{p}");
    let assembled = of_type(&ev_after(&r), "RetryContextAssembled").last().map(|e| (*e).clone()).expect("assembled");
    assert_eq!(assembled["required_change"].as_str(), Some(RC1));
    assert!(assembled["sources"].as_array().is_some_and(|s| s.iter().any(|s| s == "review")), "{assembled}");

    // A second rejection, with --rerun: the next round keeps the first.
    let out = Run::of(
        env.retry_run(&r)
            .args(["review", "t", "--required-change", RC2, "--rerun", "--"])
            .args(a.argv())
            .stdin(Stdio::null()),
    );
    out.assert_code(0);
    assert_eq!(outcomes(&r, "t"), ["SUCCESS", "SUCCESS", "SUCCESS"]);
    let p3 = prompt(&r, "t", 3);
    assert!(
        p3.starts_with(&format!("## ATTEMPT #3 — previous attempt rejected\n\n**Required change:** {RC2}")),
        "{p3}"
    );
    let earlier = p3.find("### Earlier rejections (latest first)").expect("earlier rejections");
    assert!(p3[earlier..].contains("> But   the log must stay on,"), "the first critique stays:\n{p3}");
    assert!(p3[earlier..].contains("- `src/app.txt:4`: drop the debug line"), "{p3}");

    // The same required change again: warned, and recorded as a repeat.
    let out = review(&env, &r, &["t", "--required-change", "turn the log ON and drop the debug line", "--json"]);
    out.assert_code(0);
    assert!(
        out.stderr
            .contains("warning: attempt 1 was rejected with the same required change; the agent did not act on it"),
        "{}",
        out.stderr
    );
    let json = out.json();
    assert_eq!((json["attempt"].as_u64(), json["repeats"].as_u64()), (Some(3), Some(1)));
    let last = of_type(&events(&r, "t"), "Reviewed").last().map(|e| (*e).clone()).expect("reviewed");
    assert_eq!(last["repeats"].as_u64(), Some(1));
}

fn ev_after(r: &Path) -> Vec<serde_json::Value> {
    events(r, "t")
}

#[test]
fn approvals_and_what_is_refused() {
    let env = TestEnv::new();
    let r = project(&env);
    let a = env.agent(FakeAgent::new().write("src/app.txt", "value = 2\nlog = off\nend\n"));
    env.run_agent(&r, &["run", "--quiet", "--task", "Set the value to 2", "--id", "t"], &a).assert_code(0);
    let before = log_bytes(&r, "t");
    // No git identity and no --by.
    let out = review(&env, &r, &["t", "--approve"]);
    out.assert_code(2);
    assert!(out.error_line().contains("who reviews?"), "{}", out.stderr);
    assert!(
        out.hints().iter().any(|h| h.contains("--by NAME") && h.contains("git config user.name")),
        "{}",
        out.stderr
    );
    // (arguments, exit code, words of the error)
    let missing = env.path("nowhere.md");
    let missing = missing.to_str().expect("utf-8");
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        (vec!["nope", "--approve", "--by", "me"], 2, "nope"),
        (vec!["t", "--attempt", "9", "--approve", "--by", "me"], 2, "task t has no attempt 9 (its attempts: 1)"),
        (vec!["t", "--required-change", "Fix it.\nAnd more.", "--by", "me"], 2, "spans several lines"),
        (vec!["t", "--required-change", "  ", "--by", "me"], 2, "the required change is empty"),
        (vec!["t", "--required-change", "Fix it.", "--critique-file", missing, "--by", "me"], 2, "nowhere.md"),
        (
            vec!["t", "--required-change", "Fix it.", "--comment", "src/app.txt", "x", "--by", "me"],
            2,
            "expected PATH:LINE",
        ),
    ];
    for (args, code, words) in cases {
        let out = review(&env, &r, &args);
        out.assert_code(code);
        assert!(out.error_line().contains(words), "{args:?}: {}", out.stderr);
    }
    assert_eq!(log_bytes(&r, "t"), before, "nothing was appended");

    // The approval.
    let out = review(&env, &r, &["t", "--approve", "--by", "Bob"]);
    out.assert_code(0);
    assert!(out.stdout.contains("attempt 1 (") && out.stdout.contains("approved by Bob"), "{}", out.stdout);
    let ev = events(&r, "t");
    let e = of_type(&ev, "Reviewed")[0];
    assert_eq!(
        (e["verdict"].as_str(), e["by"].as_str(), e["attempt"].as_u64()),
        (Some("approved"), Some("Bob"), Some(1))
    );

    // The critique on stdin, kept verbatim.
    let mut child = env
        .retry_run(&r)
        .args(["review", "t", "--required-change", "Keep the log off.", "--by", "Bob"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("review starts");
    child.stdin.take().expect("stdin").write_all(b"  indented\nsecond line\n").expect("write stdin");
    Run::from_output(&child.wait_with_output().expect("review ends")).assert_code(0);
    let ev = events(&r, "t");
    assert_eq!(of_type(&ev, "Reviewed")[1]["critique"].as_str(), Some("  indented\nsecond line\n"));

    // A task being run (its lock held, as `run` holds it): refused, exit 3.
    let lock = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(r.join(".git/retry-run/tasks/t/lock"))
        .expect("the lock file");
    lock.lock().expect("the task's lock");
    let out = review(&env, &r, &["t", "--approve", "--by", "me"]);
    drop(lock);
    out.assert_code(3);
    assert!(out.error_line().contains("task t is running"), "{}", out.stderr);
    assert!(out.hints().iter().any(|h| h.contains("wait for it")), "{}", out.stderr);
}

#[test]
fn the_reviewer_is_gits_committer_as_git_var_finds_it_the_environment_over_the_config() {
    let env = TestEnv::new();
    let r = project(&env);
    let a = env.agent(FakeAgent::new().write("src/app.txt", "value = 2\nlog = off\nend\n"));
    env.run_agent(&r, &["run", "--quiet", "--task", "Set the value to 2", "--id", "t"], &a).assert_code(0);
    // `git var GIT_COMMITTER_IDENT` in the same environment, without its date.
    let git_ident = |cmd: &mut std::process::Command| {
        let out = cmd.args(["var", "GIT_COMMITTER_IDENT"]).output().expect("git var");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let line = String::from_utf8_lossy(&out.stdout).trim_end().to_string();
        line.rsplitn(3, ' ').nth(2).expect("NAME <EMAIL> TIME ZONE").to_string()
    };
    let with_env = |cmd: &mut std::process::Command| {
        cmd.env("GIT_COMMITTER_NAME", "Cleo Reviewer").env("GIT_COMMITTER_EMAIL", "cleo@example.com");
    };

    // No user.name in any config: the identity is the environment's alone, and git commits with it.
    assert!(env.git_raw(&r, ["config", "user.name"].map(std::ffi::OsStr::new)).stdout.is_empty());
    let mut git = env.command("git", &r);
    with_env(&mut git);
    assert_eq!(git_ident(&mut git), "Cleo Reviewer <cleo@example.com>");
    let mut cmd = env.retry_run(&r);
    with_env(&mut cmd);
    let out = Run::of(cmd.args(["review", "t", "--approve"]));
    out.assert_code(0);
    assert!(out.stdout.contains("approved by Cleo Reviewer <cleo@example.com>"), "{}", out.stdout);
    let by = |n: usize| of_type(&events(&r, "t"), "Reviewed")[n]["by"].as_str().map(str::to_string);
    assert_eq!(by(0).as_deref(), Some("Cleo Reviewer <cleo@example.com>"));

    // With user.name and user.email configured, the environment still comes first, as in git.
    env.git(&r, &["config", "user.name", "Ann"]);
    env.git(&r, &["config", "user.email", "ann@example.com"]);
    let mut git = env.command("git", &r);
    with_env(&mut git);
    assert_eq!(git_ident(&mut git), "Cleo Reviewer <cleo@example.com>");
    let mut cmd = env.retry_run(&r);
    with_env(&mut cmd);
    Run::of(cmd.args(["review", "t", "--approve"])).assert_code(0);
    assert_eq!(by(1).as_deref(), Some("Cleo Reviewer <cleo@example.com>"));
    // The name from the environment, the email from the config.
    let mut cmd = env.retry_run(&r);
    cmd.env("GIT_COMMITTER_NAME", "Cleo Reviewer").env_remove("GIT_COMMITTER_EMAIL");
    Run::of(cmd.args(["review", "t", "--approve"])).assert_code(0);
    assert_eq!(by(2).as_deref(), Some("Cleo Reviewer <ann@example.com>"));
}

#[test]
fn a_task_without_a_result_needs_an_attempt() {
    let env = TestEnv::new();
    let r = project(&env);
    let a = env.agent(FakeAgent::new().write("src/app.txt", "value = 3\n"));
    env.run_agent(&r, &["run", "--quiet", "--task", "Set the value to 2", "--id", "t", "--max-attempts", "1"], &a)
        .assert_code(1);
    let out = review(&env, &r, &["t", "--required-change", "Set it to 2.", "--by", "me"]);
    out.assert_code(2);
    assert!(out.error_line().contains("task t has no result to review"), "{}", out.stderr);
    assert!(out.hints().iter().any(|h| h.contains("--attempt N")), "{}", out.stderr);
    // Named, the failed attempt may be judged; its comments hit its diff.
    review(
        &env,
        &r,
        &[
            "t",
            "--attempt",
            "1",
            "--required-change",
            "Set it to 2.",
            "--by",
            "me",
            "--comment",
            "src/app.txt:1",
            "3 is not 2",
        ],
    )
    .assert_code(0);
}

#[test]
fn a_task_run_in_lanes_is_reviewed_on_its_chosen_lane_and_its_lanes_keep_the_rejection() {
    let env = TestEnv::new();
    let right = env.agent(
        FakeAgent::new()
            .write("src/app.txt", "value = 2\nlog = off\nend\ndebug = 1\n")
            .next_call()
            .expect_prompt(&format!("- Attempt 1 (by me, in review): Required change: {RC1}"))
            .write("src/app.txt", "value = 2\nlog = on\nend\n"),
    );
    let wrong = env.agent(FakeAgent::new().write("src/app.txt", "value = 3\n").next_call().exit(1));
    let r = project(&env);
    let mut config = std::fs::read_to_string(r.join("retry-run.toml")).expect("config");
    config.push_str(&format!("\n[[lane]]\ncommand = {}\n\n[[lane]]\ncommand = {}\n", right.toml(), wrong.toml()));
    std::fs::write(r.join("retry-run.toml"), config).expect("config");
    env.git(&r, &["commit", "-qam", "lanes"]);
    let run = ["run", "--quiet", "--task", "Set the value to 2", "--id", "t", "--lanes", "2", "--max-attempts", "2"];
    env.run(&r, &run).assert_code(0);
    let out =
        review(&env, &r, &["t", "--by", "me", "--required-change", RC1, "--comment", "src/app.txt:4", "no debug"]);
    out.assert_code(0);
    let ev = events(&r, "t");
    let e = of_type(&ev, "Reviewed")[0];
    assert_eq!(e["attempt"].as_u64(), Some(1));
    assert_eq!(e["comments"][0]["lines"], serde_json::json!(["+debug = 1"]));
    assert_eq!(
        e["commit"].as_str().map(str::to_string),
        Some(env.git(&r, &["rev-parse", "refs/retry-run/t/lanes/1/1"]))
    );
    // The next round's lanes read the rejection (in its section, not as a
    // leading block: a lane's attempts are numbered apart from the task).
    env.run(&r, &["run", "--quiet", "--id", "t", "--again", "--lanes", "2", "--max-attempts", "2"]).assert_code(0);
    let p = std::fs::read_to_string(r.join(".git/retry-run/tasks/t/lanes/1/attempts/2/prompt.md")).expect("prompt");
    assert!(p.contains("### Reviewers' rejections of this task's results (latest first)"), "{p}");
}
