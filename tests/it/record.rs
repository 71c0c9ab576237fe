//! The record: the event log and the task lock on real repositories, with
//! writers killed by SIGKILL in the middle of their appends; `log
//! --verify`; and the typed events, against logs written by the previous
//! version (captured from its real runs into `tests/record/`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::TestEnv;
use crate::support::child::{self, LockHolder, READY};
use retry_run::record::{Event, Store};

const WRITER: &str = "RETRY_RUN_TEST_WRITER";

fn repo(env: &TestEnv) -> PathBuf {
    env.repo("repo").file("a.txt", "a\n").commit()
}

/// The child of `a_log_killed_mid_append_...`: appends events of growing
/// size to task `t`'s log until killed, saying it is ready after the first.
#[test]
#[ignore = "a child process that a_log_killed_mid_append_many_times_... starts; it does not run on its own"]
fn writer_child() {
    let var = |name: &str| std::env::var_os(name).unwrap_or_else(|| panic!("{name} is not set: a test starts this"));
    let (common, ready) = (var(WRITER), var(READY));
    let store = Store::new(Path::new(&common));
    let mut log = store.log("t").expect("open log");
    let mut i = 0usize;
    loop {
        i += 1;
        let pad = "x".repeat((i * 7919) % 600_000);
        log.append("Tick", Some((i % 5) as u32 + 1), &json!({"i": i, "pad": pad})).expect("append");
        if i == 1 {
            std::fs::write(&ready, "").expect("create the ready marker");
        }
    }
}

#[test]
fn a_log_killed_mid_append_many_times_still_verifies_up_to_its_last_whole_event() {
    let env = TestEnv::new();
    let r = repo(&env);
    let common = r.join(".git");
    let store = Store::new(&common);
    let mut before = 0;
    let mut torn_seen = 0;
    let ready = env.path("writer-ready");
    for round in 0..25u64 {
        let _ = std::fs::remove_file(&ready);
        let mut c = child::spawn("record::writer_child", &[(WRITER, common.as_os_str()), (READY, ready.as_os_str())]);
        // Killed at a point of its appends: some time after its first.
        child::wait_until_ready(&mut c, &ready);
        std::thread::sleep(Duration::from_millis(20 + (round * 37) % 90));
        child::kill(c);
        let v = store.read("t").expect("read");
        assert!(v.broken.is_none(), "round {round}: {:?}", v.broken);
        assert!(v.events.len() >= before, "round {round}: events were lost");
        torn_seen += usize::from(v.torn_tail);
        before = v.events.len();
        let run = env.run(&r, &["log", "t", "--verify"]);
        run.assert_code(0);
    }
    assert!(before > 25, "the writers appended only {before} events");
    // Every torn tail a kill left (but the last) was recorded by the next writer.
    let v = store.read("t").expect("read");
    // (A torn tail can be seen twice when the next child dies before it writes.)
    let recorded = v.repaired.len() + usize::from(v.torn_tail);
    assert!(recorded <= torn_seen && (torn_seen == 0 || recorded >= 1), "{recorded} of {torn_seen}");
    eprintln!("{} events, {torn_seen} torn writes", v.events.len());
}

#[test]
fn torn_writes_at_any_byte_are_recorded_by_the_next_writer() {
    let env = TestEnv::new();
    let r = repo(&env);
    let store = Store::new(&r.join(".git"));
    {
        let mut log = store.log("t").expect("log");
        for i in 0..3 {
            log.append("Tick", None, &json!({"i": i})).expect("append");
        }
    }
    let path = store.task("t").events();
    let whole = std::fs::read(&path).expect("read");
    let last_start = whole[..whole.len() - 1].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
    for cut in (last_start + 1..whole.len() - 1).step_by(7) {
        std::fs::write(&path, &whole[..cut]).expect("truncate");
        let v = store.read("t").expect("read");
        assert!(v.torn_tail && v.broken.is_none() && v.events.len() == 2, "cut at {cut}");
        let run = env.run(&r, &["log", "t", "--verify"]);
        run.assert_code(0);
        assert!(run.stderr.contains("cut short"), "{}", run.stderr);
        let mut log = store.log("t").expect("reopen");
        log.append("After", None, &json!({})).expect("append");
        let v = store.read("t").expect("read");
        assert_eq!((v.broken.clone(), v.repaired.clone(), v.torn_tail), (None, vec![3], false), "cut at {cut}");
        let kinds: Vec<&str> = v.events.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(kinds, ["Tick", "Tick", "LogRepaired", "After"]);
        // The torn bytes are still there, on their own line.
        let now = std::fs::read(&path).expect("read");
        assert!(now.starts_with(&whole[..cut]) && now[cut] == b'\n');
    }
}

#[test]
fn log_verify_names_the_first_tampered_line_and_exits_1() {
    let env = TestEnv::new();
    let r = repo(&env);
    let store = Store::new(&r.join(".git"));
    {
        let mut log = store.log("t").expect("log");
        for i in 0..6 {
            log.append("Tick", Some(1), &json!({"i": i})).expect("append");
        }
    }
    let path = store.task("t").events();
    let orig = std::fs::read_to_string(&path).expect("read");
    let lines: Vec<&str> = orig.lines().collect();
    let cases: Vec<(Vec<String>, usize, &str)> = vec![
        (lines.iter().map(|l| l.replace("\"i\":2", "\"i\":9")).collect(), 3, "edited"),
        (lines.iter().enumerate().filter(|(i, _)| *i != 3).map(|(_, l)| l.to_string()).collect(), 4, "removed"),
        (
            {
                let mut v: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
                v.swap(1, 2);
                v
            },
            2,
            "reordered",
        ),
        (
            {
                let mut v: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
                v.insert(4, lines[1].to_string());
                v
            },
            5,
            "inserted",
        ),
    ];
    for (text, line, word) in cases {
        std::fs::write(&path, text.join("\n") + "\n").expect("write");
        let run = env.run(&r, &["log", "t", "--verify"]);
        run.assert_code(1);
        assert!(run.stderr.contains(&format!("events.jsonl:{line}: line {line} ")), "{word}: {}", run.stderr);
        assert!(run.stderr.contains(word), "{word}: {}", run.stderr);
    }
    std::fs::write(&path, &orig).expect("restore");
    let run = env.run(&r, &["log", "t", "--json"]);
    run.assert_code(0);
    assert_eq!(run.stdout.lines().count(), 6);
    let run = env.run(&r, &["log", "t"]);
    assert!(run.stdout.contains("   1  ") && run.stdout.contains("#1 Tick  i=0"), "{}", run.stdout);
    env.run(&r, &["log", "nosuch"]).assert_code(2);
    env.run(&r, &["log", "../x"]).assert_code(2);
}

#[test]
fn one_run_per_task_and_a_killed_holder_leaves_no_stale_lock() {
    let env = TestEnv::new();
    let r = repo(&env);
    let common = r.join(".git");
    let store = Store::new(&common);
    let holder = LockHolder::start(&common, "t", env.path("held"));
    let msg = store.lock("t").err().expect("the child's lock was never seen").to_string();
    assert!(msg.contains(&format!("process {}", holder.pid())), "{msg}");
    let other = store.lock("other-task").expect("another task runs alongside");
    drop(other);
    holder.release();
    store.lock("t").expect("the lock died with its process");
}

/// A log of the previous version, captured in `tests/record/`.
fn captured(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/record").join(name)).expect("capture")
}

/// Fields renamed since v0.1, written under the new name and still read
/// under the old one: (event type, old name, new name).
const RENAMED: &[(&str, &str, &str)] = &[("AgentFinished", "ignored", "leftovers")];

/// Fields added since v0.1, always written now and read as absent from
/// older logs: (event type, name).
const ADDED: &[(&str, &str)] = &[
    ("BaselineChecked", "env"),
    ("BaselineChecked", "cache"),
    ("CheckFinished", "env"),
    ("CheckFinished", "rerun"),
    ("CheckFinished", "part"),
    ("CheckFinished", "started_at_ms"),
    ("CheckFinished", "ended_at_ms"),
];

/// The keys of each event type in a log, renamed fields under their new
/// name, added ones left out.
fn shapes(log: &str) -> BTreeMap<String, BTreeSet<BTreeSet<String>>> {
    let mut out: BTreeMap<String, BTreeSet<BTreeSet<String>>> = BTreeMap::new();
    for line in log.lines() {
        let v: Value = serde_json::from_str(line).expect("a JSON line");
        let renamed = |k: &String| {
            RENAMED
                .iter()
                .find(|(t, old, _)| v["type"] == *t && k == old)
                .map_or(k.clone(), |(_, _, new)| new.to_string())
        };
        let added = |k: &String| ADDED.iter().any(|(t, name)| v["type"] == *t && k == name);
        let keys: BTreeSet<String> = v.as_object().expect("object").keys().filter(|k| !added(k)).map(renamed).collect();
        out.entry(v["type"].as_str().expect("type").to_string()).or_default().insert(keys);
    }
    out
}

/// A repository whose record holds task `old` with `log` as its event log.
fn repo_with_log(env: &TestEnv, log: &str) -> PathBuf {
    let r = env.repo("repo").init();
    let dir = r.join(".git/retry-run/tasks/old");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(dir.join("events.jsonl"), log).expect("write");
    std::fs::write(dir.join("task.md"), "# Old\n").expect("write");
    r
}

#[test]
fn logs_of_the_previous_version_read_typed_and_verify() {
    for name in ["v0.1-demo.events.jsonl", "v0.1-verifier.events.jsonl"] {
        let log = captured(name);
        for (i, line) in log.lines().enumerate() {
            let v: Value = serde_json::from_str(line).expect("json");
            let typed =
                Event::parse(&v).unwrap_or_else(|| panic!("{name}:{}: {} does not read typed", i + 1, v["type"]));
            assert_eq!(typed.kind(), v["type"].as_str().expect("type"));
        }
        // In a record of its own: verifies, and the readers read it.
        let env = TestEnv::new();
        let r = repo_with_log(&env, &log);
        env.run(&r, &["log", "old", "--verify"]).assert_code(0);
        let status = env.run(&r, &["status"]);
        assert!(
            status.stdout.contains("old\tsucceeded") || status.stdout.contains("old\tescalated"),
            "{}",
            status.stdout
        );
        env.run(&r, &["report", "old"]).assert_code(0);
    }
}

#[test]
fn an_event_of_an_unknown_type_is_kept_and_shown() {
    let log = captured("v0.1-demo.events.jsonl");
    let env = TestEnv::new();
    // A newer version's event, chained properly after the captured ones.
    let last = log.lines().last().expect("a line");
    let seq = serde_json::from_str::<Value>(last).expect("json")["seq"].as_u64().expect("seq") + 1;
    let prev = retry_run::hash::sha256_hex(last.as_bytes());
    let future = retry_run::record::chain::encode(
        seq,
        "2026-11-23T00:00:00.000Z",
        "FleetPushed",
        None,
        &prev,
        &serde_json::json!({"remote": "origin"}),
    );
    let r = repo_with_log(&env, &format!("{log}{future}\n"));
    env.run(&r, &["log", "old", "--verify"]).assert_code(0);
    let shown = env.run(&r, &["log", "old"]);
    assert!(shown.stdout.contains("FleetPushed"), "{}", shown.stdout);
    env.run(&r, &["report", "old"]).assert_code(0);
}

#[test]
fn this_version_writes_the_same_fields_as_the_previous_one() {
    let env = TestEnv::new();
    let out = env.run(env.root(), &["demo", "--keep"]);
    out.assert_code(0);
    let dir = out
        .stdout
        .lines()
        .chain(out.stderr.lines())
        .find_map(|l| l.split("kept in ").nth(1))
        .map(|d| d.trim().to_string())
        .expect("the demo's directory");
    let now = std::fs::read_to_string(
        Path::new(&dir).join("calc/.git/retry-run/tasks/make-the-calc-checks-pass/events.jsonl"),
    )
    .expect("the demo's log");
    let _ = std::fs::remove_dir_all(&dir);
    let mut now = shapes(&now);
    // New since: an ended task's worktree removed (docs/worktrees.md).
    assert!(now.remove("WorktreeRemoved").is_some(), "{now:?}");
    // New since: a check's run left by fail_fast (docs/honest-success.md).
    now.remove("CheckNotRun");
    assert_eq!(now, shapes(&captured("v0.1-demo.events.jsonl")));
}
