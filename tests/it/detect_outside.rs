//! Detect mode, outside the repository's internals: what the default
//! sandbox refuses an agent and detect mode lets through is recorded and
//! reported, each attack as what it was (docs/sandbox.md, "Detect mode"):
//! a force-push to a remote (`pushed`), the checkout's own git files
//! (`checkout-git`), lines forged into the record (`record`), retry-run's
//! cache (`retry-run-cache`), and, noted without failing, files in `/tmp`
//! and `/dev/shm` outside the attempt's TMPDIR (`shared-tmp`). Under
//! `run -j` each is charged to the attempt that made it, never to the
//! others beside it.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use crate::support::record::{events, of_type, outcomes};
use crate::support::{FakeAgent, Run, TestEnv};

/// A repository in detect mode, one attempt, no check.
fn repo(env: &TestEnv) -> PathBuf {
    repo_with(env, "max_attempts = 1\n")
}

fn repo_with(env: &TestEnv, head: &str) -> PathBuf {
    env.repo("repo")
        .file("src/app.txt", "value = 1\n")
        .file("notes.txt", "the user's notes\n")
        .file("retry-run.toml", format!("{head}[sandbox]\nmode = \"detect\"\n[retry]\nbaseline = \"off\"\n"))
        .commit()
}

fn run(env: &TestEnv, r: &Path, task: &str, agent: FakeAgent) -> Run {
    let agent = env.agent(agent);
    Run::of(env.retry_run(r).args(agent.after(&["run", "--quiet", "--task", task])))
}

/// The `ScopeChecked` events of `task`'s attempt `n`.
fn scope_checked(r: &Path, task: &str, n: u64) -> Vec<Value> {
    of_type(&events(r, task), "ScopeChecked").into_iter().filter(|e| e["attempt"] == n).cloned().collect()
}

/// (path, reason, rule) of each finding in `field` of `checked`.
fn found(checked: &[Value], field: &str) -> Vec<(String, String, String)> {
    let s = |v: &Value| v.as_str().unwrap_or("").to_string();
    checked
        .iter()
        .flat_map(|e| e[field].as_array().cloned().unwrap_or_default())
        .map(|v| (s(&v["path"]), s(&v["reason"]), s(&v["rule"])))
        .collect()
}

/// (path, reason) of each violation of attempt 1.
fn violations(r: &Path, task: &str) -> Vec<(String, String)> {
    found(&scope_checked(r, task, 1), "violations").into_iter().map(|(p, r, _)| (p, r)).collect()
}

/// A unique name for a file of this test in `/tmp` or `/dev/shm`, removed
/// when dropped.
struct Shared(PathBuf);

impl Shared {
    fn new(dir: &str, what: &str) -> Shared {
        Shared(PathBuf::from(
            format!("{dir}/retry-run-it-{what}-{}-{:?}", std::process::id(), std::thread::current().id())
                .replace(['(', ')'], ""),
        ))
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn a_force_push_to_a_remote_on_this_machine_is_named_as_a_push() {
    let env = TestEnv::new();
    let r = repo(&env);
    let remote = env.path("remote.git");
    env.git(env.root(), &["clone", "-q", "--bare", &r.display().to_string(), &remote.display().to_string()]);
    env.git(&r, &["remote", "add", "origin", &remote.display().to_string()]);
    env.git(&r, &["fetch", "-q", "origin"]);
    let before = env.git(&remote, &["rev-parse", "main"]);
    let out = run(
        &env,
        &r,
        "Push",
        FakeAgent::new()
            .append("src/app.txt", "agent\n")
            .sh("git -c user.name=a -c user.email=a@b commit -qam evil")
            .sh("git push -q --force origin HEAD:main"),
    );
    out.assert_code(1);
    let after = env.git(&remote, &["rev-parse", "main"]);
    assert_ne!(after, before, "detect mode only detects");
    assert_eq!(outcomes(&r, "push"), ["SCOPE_VIOLATION"]);
    // One finding: the remote's branch, by the remote read itself; neither
    // the tracking ref git moved with it nor its reflog, nor any object.
    let checked = scope_checked(&r, "push", 1);
    assert_eq!(
        found(&checked, "violations"),
        [(
            "origin:refs/heads/main".to_string(),
            "pushed".to_string(),
            format!("moved {} -> {}", &before[..7], &after[..7])
        )]
    );
    let report = env.run(&r, &["report", "push"]).stdout;
    assert!(report.contains("`origin:refs/heads/main`: pushed (moved"), "{report}");
    assert!(report.contains("Nothing confined an attempt and it wrote outside its worktree"), "{report}");
    let ctx = env.run(&r, &["context", "push"]).stdout.to_lowercase();
    assert!(ctx.contains("never push to a remote") && ctx.contains("`origin:refs/heads/main`"), "{ctx}");
}

/// A child in its own process group, killed whole when dropped.
struct Group(std::process::Child);

impl Drop for Group {
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill").args(["-KILL", "--", &format!("-{}", self.0.id())]).status();
        let _ = self.0.wait();
    }
}

/// A remote reached over the network (`git://`) is not read; the tracking
/// ref `git push` moved names the push.
#[test]
fn a_push_over_the_network_is_named_by_the_tracking_ref_it_moved() {
    let env = TestEnv::new();
    let r = repo(&env);
    let remote = env.path("remote.git");
    env.git(env.root(), &["clone", "-q", "--bare", &r.display().to_string(), &remote.display().to_string()]);
    let port = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port").local_addr().expect("addr").port();
    let daemon = env
        .command("git", env.root())
        .args(["daemon", "--reuseaddr", "--listen=127.0.0.1", &format!("--port={port}"), "--export-all"])
        .args(["--enable=receive-pack", &format!("--base-path={}", env.root().display())])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn();
    let Ok(daemon) = daemon else {
        eprintln!("SKIPPED: git daemon cannot start here");
        return;
    };
    let _daemon = Group(daemon);
    let url = format!("git://127.0.0.1:{port}/remote.git");
    env.git(&r, &["remote", "add", "origin", &url]);
    let ready = (0..100).any(|_| {
        std::thread::sleep(Duration::from_millis(50));
        env.git_raw(&r, ["fetch", "-q", "origin"].map(std::ffi::OsStr::new)).status.success()
    });
    if !ready {
        eprintln!("SKIPPED: git daemon did not answer");
        return;
    }
    let out = run(
        &env,
        &r,
        "Push",
        FakeAgent::new()
            .append("src/app.txt", "agent\n")
            .sh("git -c user.name=a -c user.email=a@b commit -qam evil")
            .sh("git push -q --force origin HEAD:main"),
    );
    out.assert_code(1);
    let checked = scope_checked(&r, "push", 1);
    assert_eq!(
        found(&checked, "violations"),
        [(
            "origin:refs/heads/main".to_string(),
            "pushed".to_string(),
            "its tracking ref refs/remotes/origin/main was moved by `git push`".to_string()
        )]
    );
}

#[test]
fn the_checkouts_lock_orig_head_and_reflog_are_named_as_the_checkouts_git_files() {
    let env = TestEnv::new();
    let r = repo(&env);
    let head = env.git(&r, &["rev-parse", "HEAD"]);
    let out = run(
        &env,
        &r,
        "Lock",
        FakeAgent::new().append("src/app.txt", "agent\n").sh(&format!(
            "g=\"$(git rev-parse --git-common-dir)\"; touch \"$g/index.lock\"; echo {head} > \"$g/ORIG_HEAD\"; \
             echo '{head} {head} A <a@b> 1700000000 +0000\tforged' >> \"$g/logs/HEAD\""
        )),
    );
    out.assert_code(1);
    assert_eq!(outcomes(&r, "lock"), ["SCOPE_VIOLATION"]);
    let mut got = found(&scope_checked(&r, "lock", 1), "violations");
    got.sort();
    let want = |p: &str, what: &str| (p.to_string(), "checkout-git".to_string(), what.to_string());
    assert_eq!(
        got,
        [want(".git/ORIG_HEAD", "added"), want(".git/index.lock", "added"), want(".git/logs/HEAD", "changed")]
    );
    assert!(r.join(".git/index.lock").exists(), "detect mode only detects");
    let report = env.run(&r, &["report", "lock"]).stdout;
    assert!(
        report.contains("`.git/index.lock`: checkout-git (added): a file of the user's checkout's git directory"),
        "{report}"
    );
    let ctx = env.run(&r, &["context", "lock"]).stdout.to_lowercase();
    assert!(
        ctx.contains("leave the user's checkout and its git directory alone") && ctx.contains("`.git/index.lock`"),
        "{ctx}"
    );
}

#[test]
fn events_forged_into_the_record_are_named_and_cut_off_and_another_tasks_record_too() {
    let env = TestEnv::new();
    let r = repo(&env);
    run(&env, &r, "Other", FakeAgent::new().append("src/app.txt", "other\n")).assert_code(0);
    let other = r.join(".git/retry-run/tasks/other/events.jsonl");
    let other_before = std::fs::read(&other).expect("the other task's log");
    let forged = r#"{"seq":9,"ts":"2026-01-01T00:00:00.000Z","type":"TaskSucceeded","prev":"0","branch":"x"}"#;
    let out = run(
        &env,
        &r,
        "Forge",
        FakeAgent::new().append("src/app.txt", "agent\n").sh(&format!(
            "d=\"$(git rev-parse --git-common-dir)/retry-run/tasks\"; echo '{forged}' >> \"$d/forge/events.jsonl\"; \
             echo '{forged}' >> \"$d/other/events.jsonl\""
        )),
    );
    out.assert_code(1);
    assert_eq!(outcomes(&r, "forge"), ["SCOPE_VIOLATION"]);
    let checked = scope_checked(&r, "forge", 1);
    let mut got = found(&checked, "violations");
    got.sort();
    assert_eq!(
        got,
        [
            (
                ".git/retry-run/tasks/forge/events.jsonl".to_string(),
                "record".to_string(),
                format!(
                    "1 line ({} bytes) appended that retry-run did not write; put back as retry-run wrote it",
                    forged.len() + 1
                )
            ),
            (".git/retry-run/tasks/other/events.jsonl".to_string(), "record".to_string(), "changed".to_string()),
        ]
    );
    let restored: Vec<&str> =
        checked[0]["restored"].as_array().expect("restored").iter().filter_map(Value::as_str).collect();
    assert_eq!(restored, ["retry-run/tasks/forge/events.jsonl"]);
    // The task's own log is whole again: its chain holds, the forged
    // success is not in it; the other task's is not retry-run's to cut.
    let log = std::fs::read_to_string(r.join(".git/retry-run/tasks/forge/events.jsonl")).expect("log");
    assert!(!log.contains("\"branch\":\"x\""), "{log}");
    let inspect = env.run(&r, &["inspect", "forge/1", "--json"]);
    inspect.assert_code(0);
    assert!(!inspect.stderr.contains("broken"), "{}", inspect.stderr);
    assert_ne!(std::fs::read(&other).expect("log"), other_before);
    let ctx = env.run(&r, &["context", "forge"]).stdout.to_lowercase();
    assert!(ctx.contains("never write retry-run's record of the task"), "{ctx}");
    let report = env.run(&r, &["report", "forge"]).stdout;
    assert!(report.contains("record (1 line"), "{report}");
}

#[test]
fn retry_runs_cache_written_is_named() {
    let env = TestEnv::new();
    let r = repo(&env);
    let cache = env.home().join(".cache/retry-run");
    std::fs::create_dir_all(&cache).expect("mkdir");
    let out = run(
        &env,
        &r,
        "Cache",
        FakeAgent::new()
            .append("src/app.txt", "agent\n")
            .sh("echo planted > \"$XDG_CACHE_HOME/retry-run/namespaces-probe\""),
    );
    out.assert_code(1);
    assert_eq!(
        violations(&r, "cache"),
        [(cache.join("namespaces-probe").display().to_string(), "retry-run-cache".to_string())]
    );
    let ctx = env.run(&r, &["context", "cache"]).stdout.to_lowercase();
    assert!(ctx.contains("leave retry-run's own cache alone"), "{ctx}");
}

#[test]
fn files_in_tmp_and_dev_shm_outside_tmpdir_are_noted_not_failing_and_told_the_next_attempt() {
    let env = TestEnv::new();
    let toml = "max_attempts = 2\n[[check]]\nname = \"fixed\"\nkind = \"test\"\nrun = \"grep -q fixed src/app.txt\"\n";
    let r = repo_with(&env, toml);
    let (shm, tmp) = (Shared::new("/dev/shm", "shm"), Shared::new("/tmp", "tmp"));
    let out = run(
        &env,
        &r,
        "Shared",
        FakeAgent::new()
            .append("src/app.txt", "wrong\n")
            .sh(&format!("echo x > {}; echo x > {}; echo t > \"$TMPDIR/mine\"", shm.0.display(), tmp.0.display()))
            .next_call()
            .append("src/app.txt", "fixed\n"),
    );
    out.assert_code(0);
    assert_eq!(outcomes(&r, "shared"), ["CHECK_FAILURE", "SUCCESS"], "noted, not failing");
    let checked = scope_checked(&r, "shared", 1);
    assert!(found(&checked, "violations").is_empty(), "{checked:?}");
    let noted = found(&checked, "noted");
    for f in [&shm.0, &tmp.0] {
        assert!(
            noted.contains(&(f.display().to_string(), "shared-tmp".to_string(), "added".to_string())),
            "{f:?} not noted: {noted:?}"
        );
    }
    assert!(!noted.iter().any(|(p, _, _)| p.ends_with("/mine")), "the TMPDIR is the attempt's own: {noted:?}");
    let prompt = crate::support::record::prompt(&r, "shared", 2);
    assert!(prompt.contains("keep temporary files under `$TMPDIR`"), "{prompt}");
    assert!(prompt.contains(&format!("`{}`: shared-tmp (added)", tmp.0.display())), "{prompt}");
    let report = env.run(&r, &["report", "shared"]).stdout;
    assert!(report.contains(&format!("Noted, not failing: `{}`: shared-tmp (added)", shm.0.display())), "{report}");
}

#[test]
fn a_check_that_leaves_a_lock_in_the_checkout_is_charged_to_the_checks() {
    let env = TestEnv::new();
    let toml = "max_attempts = 1\n[[check]]\nname = \"lock\"\nkind = \"lint\"\nrun = \"touch \\\"$(git rev-parse --git-common-dir)/index.lock\\\"\"\n";
    let r = repo_with(&env, toml);
    let out = run(&env, &r, "Check lock", FakeAgent::new().append("src/app.txt", "agent\n"));
    out.assert_code(1);
    let after_checks: Vec<Value> =
        scope_checked(&r, "check-lock", 1).into_iter().filter(|e| e["after"] == "checks").collect();
    assert_eq!(
        found(&after_checks, "violations"),
        [(".git/index.lock".to_string(), "checkout-git".to_string(), "added".to_string())]
    );
}

/// Attacks side by side under `run -j`: each task's window is its own, so
/// each attack is charged to its task alone, and the task that did
/// nothing wrong has no finding at all (before, every task running beside
/// the object store's attack was charged with its objects).
#[test]
fn under_run_j_each_attack_is_charged_to_its_own_attempt_alone() {
    let env = TestEnv::new();
    let r = repo(&env);
    let remote = env.path("remote.git");
    env.git(env.root(), &["clone", "-q", "--bare", &r.display().to_string(), &remote.display().to_string()]);
    env.git(&r, &["remote", "add", "origin", &remote.display().to_string()]);
    env.git(&r, &["gc", "-q"]);
    std::fs::write(r.join("notes.txt"), "the user's notes, v2\n").expect("write");
    env.git(&r, &["commit", "-qam", "v2"]);
    let blob = env.git(&r, &["rev-parse", "HEAD:notes.txt"]);
    let loose = r.join(".git/objects").join(&blob[..2]).join(&blob[2..]);
    assert!(loose.is_file(), "the test needs a loose object");
    let git = r.join(".git");
    let attacks: Vec<(&str, String)> = vec![
        (
            "odb",
            format!(
                "cp {0} {0}.x && rm -f {0} && mv {0}.x {0} && echo /tmp > {1}/objects/info/alternates",
                loose.display(),
                git.display()
            ),
        ),
        (
            "push",
            "git -c user.name=a -c user.email=a@b commit -qam evil && git push -q --force origin HEAD:main".into(),
        ),
        ("lock", format!("touch {}/index.lock", git.display())),
        ("forge", format!("echo '{{}}' >> {}/retry-run/tasks/forge/events.jsonl", git.display())),
        ("honest", "true".into()),
    ];
    // Each agent waits (a little) for another to start beside it.
    let started = env.path("started.log");
    let mut script = FakeAgent::new()
        .append("src/app.txt", "agent\n")
        .sh(&format!("echo \"$RETRY_RUN_TASK\" >> {}", started.display()));
    let mut args: Vec<String> = ["run", "-j", "3", "--quiet"].map(String::from).to_vec();
    for (name, cmd) in &attacks {
        script = script.sh(&format!("if [ \"$RETRY_RUN_TASK\" = {name} ]; then {cmd}; fi"));
        args.push("--task-file".into());
        args.push(env.write(&format!("tasks/{name}.md"), format!("# {name}\n\nDo it.\n")).display().to_string());
    }
    let agent = env.agent(script.sleep("0.2"));
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = env.run_agent(&r, &argv, &agent);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    let part = |p: &Path| p.strip_prefix(&git).expect("under .git").display().to_string();
    let want: Vec<(&str, Vec<(String, &str)>)> = vec![
        ("odb", vec![(part(&loose), "git-internal"), ("objects/info/alternates".into(), "git-internal")]),
        ("push", vec![("origin:refs/heads/main".into(), "pushed")]),
        ("lock", vec![(".git/index.lock".into(), "checkout-git")]),
        ("forge", vec![(".git/retry-run/tasks/forge/events.jsonl".into(), "record")]),
        ("honest", vec![]),
    ];
    for (task, expected) in want {
        let mut got = violations(&r, task);
        got.sort();
        let mut expected: Vec<(String, String)> = expected.into_iter().map(|(p, w)| (p, w.to_string())).collect();
        expected.sort();
        assert_eq!(got, expected, "task {task}\n{}", out.stderr);
    }
    assert_eq!(outcomes(&r, "honest"), ["SUCCESS"]);
}

/// A verifier that forges a line into the task's record after the checks:
/// found before retry-run's next line, cut off, and charged to the attempt.
#[test]
fn a_line_the_verifier_forges_into_the_record_is_cut_off_and_charged_to_the_attempt() {
    let env = TestEnv::new();
    let toml = "max_attempts = 1\n[verifier]\nretries = 0\n\
                run = \"echo '{}' >> \\\"$(git rev-parse --git-common-dir)/retry-run/tasks/verify/events.jsonl\\\"; echo '{\\\"verdict\\\": \\\"approved\\\"}'\"\n";
    let r = repo_with(&env, toml);
    let out = run(&env, &r, "Verify", FakeAgent::new().append("src/app.txt", "agent\n"));
    out.assert_code(1);
    assert_eq!(outcomes(&r, "verify"), ["SCOPE_VIOLATION"]);
    let after: Vec<Value> = scope_checked(&r, "verify", 1).into_iter().filter(|e| e["after"] == "verifier").collect();
    assert_eq!(
        found(&after, "violations"),
        [(
            ".git/retry-run/tasks/verify/events.jsonl".to_string(),
            "record".to_string(),
            "1 line (3 bytes) appended that retry-run did not write; put back as retry-run wrote it".to_string()
        )]
    );
}
