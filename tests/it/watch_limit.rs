//! The checkout's watch where inotify cannot watch it: run in a user
//! namespace whose own limit (`user.max_inotify_watches`, which its root
//! may lower for the namespace alone) is below the checkout's directories,
//! retry-run says so once for the whole run, with the limit, the count and
//! the sysctl, and still names what an attempt changed in the checkout,
//! by stat data.

use std::path::Path;
use std::process::Command;

use crate::support::record::{events, first};
use crate::support::{FakeAgent, Run, TestEnv};

/// `args` of the real binary in a new user namespace (the caller mapped to
/// its root) whose inotify limit is `watches`.
fn with_watch_limit(env: &TestEnv, dir: &Path, watches: u32, args: &[String]) -> Command {
    let mut cmd = env.command("unshare", dir);
    cmd.args([
        "--user",
        "--map-root-user",
        "sh",
        "-c",
        &format!("echo {watches} > /proc/sys/user/max_inotify_watches && exec \"$0\" \"$@\""),
        env!("CARGO_BIN_EXE_retry-run"),
    ])
    .args(args);
    cmd
}

#[test]
fn a_checkout_with_more_directories_than_inotify_allows_is_watched_by_stat_data_said_once() {
    let env = TestEnv::new();
    let probe = Run::of(env.command("unshare", &env.path("")).args(["--user", "--map-root-user", "true"]));
    assert_eq!(probe.code, 0, "this test needs user namespaces (unshare --user): {}", probe.stderr);
    let r = env
        .repo("repo")
        .file("src/app/main.txt", "value = 1\n")
        .file("src/lib/util.txt", "util\n")
        .file("docs/guide.txt", "guide\n")
        .file("notes.txt", "the user's notes\n")
        .file("retry-run.toml", "max_attempts = 2\n[sandbox]\nmode = \"detect\"\n")
        .commit();
    let checkout = r.display();
    // Each attempt changes a file of the checkout (a scope violation), so
    // the run makes both attempts.
    let agent = env.agent(
        FakeAgent::new()
            .sh(&format!("echo x >> {checkout}/notes.txt"))
            .sh(&format!("echo y >> {checkout}/src/lib/util.txt"))
            .exit(0),
    );
    let out = Run::of(&mut with_watch_limit(&env, &r, 2, &agent.after(&["run", "--quiet", "--task", "Wide"])));
    out.assert_code(1);
    let said: Vec<&str> = out.stderr.lines().filter(|l| l.contains("instead of inotify")).collect();
    assert_eq!(said.len(), 1, "said once for the run:\n{}", out.stderr);
    assert!(
        said[0].contains("by stat data instead of inotify: your checkout has 5 directories to watch, more than inotify's limit of 2 watches (user.max_inotify_watches); raise it with `sysctl -w user.max_inotify_watches=1024`"),
        "{}",
        said[0]
    );
    let all = events(&r, "wide");
    let done: Vec<_> = all.iter().filter(|e| e["type"] == "AttemptCompleted").collect();
    assert_eq!(done.len(), 2, "two attempts");
    for d in &done {
        assert_eq!(d["outcome"], "SCOPE_VIOLATION", "{d}");
        assert_eq!(d["watch"], "stat", "{d}");
    }
    // Still protected: every attempt's writes to the checkout are named.
    for scope in all.iter().filter(|e| e["type"] == "ScopeChecked") {
        let outside: Vec<&str> = scope["violations"]
            .as_array()
            .expect("violations")
            .iter()
            .filter(|v| v["reason"] == "outside-worktree")
            .filter_map(|v| v["path"].as_str())
            .collect();
        assert_eq!(outside, ["notes.txt", "src/lib/util.txt"], "{scope}");
    }
    assert!(first(&r, "wide", "AttemptCompleted")["watch_setup_ms"].is_number());
}
