//! The event log and the task lock on real repositories, with writers
//! killed by SIGKILL in the middle of their appends.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::json;

use crate::support::TestEnv;
use retry_run::record::Store;

const WRITER: &str = "RETRY_RUN_TEST_WRITER";
const LOCKER: &str = "RETRY_RUN_TEST_LOCKER";

fn repo(env: &TestEnv) -> PathBuf {
    let r = env.path("repo");
    std::fs::create_dir(&r).expect("mkdir");
    env.git(&r, &["init", "-q"]);
    std::fs::write(r.join("a.txt"), "a\n").expect("write");
    env.git(&r, &["add", "."]);
    env.git(&r, &["commit", "-qm", "one"]);
    r
}

/// Re-runs this test binary as a child that runs only `test`.
fn child(test: &str, var: &str, value: &Path) -> Child {
    Command::new(std::env::current_exe().expect("test binary"))
        .args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(var, value)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn child")
}

/// In a child: appends events of growing size until killed.
#[test]
fn writer_child() {
    let Some(common) = std::env::var_os(WRITER) else { return };
    let store = Store::new(Path::new(&common));
    let mut log = store.log("t").expect("open log");
    let mut i = 0usize;
    loop {
        i += 1;
        let pad = "x".repeat((i * 7919) % 600_000);
        log.append("Tick", Some((i % 5) as u32 + 1), &json!({"i": i, "pad": pad})).expect("append");
    }
}

/// In a child: holds the lock of task `t` until killed.
#[test]
fn locker_child() {
    let Some(common) = std::env::var_os(LOCKER) else { return };
    let store = Store::new(Path::new(&common));
    loop {
        if let Ok(_lock) = store.lock("t") {
            std::thread::sleep(Duration::from_secs(60));
        }
        std::thread::sleep(Duration::from_millis(5));
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
    for round in 0..25u64 {
        let mut c = child("record::writer_child", WRITER, &common);
        std::thread::sleep(Duration::from_millis(20 + (round * 37) % 90));
        c.kill().expect("SIGKILL");
        let _ = c.wait();
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
    let mut c = child("record::locker_child", LOCKER, &common);
    let mut refused = None;
    for _ in 0..200 {
        match store.lock("t") {
            Err(e) => {
                refused = Some(e.to_string());
                break;
            }
            Ok(l) => {
                drop(l);
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
    let msg = refused.expect("the child's lock was never seen");
    assert!(msg.contains(&format!("process {}", c.id())), "{msg}");
    let other = store.lock("other-task").expect("another task runs alongside");
    drop(other);
    c.kill().expect("kill");
    let _ = c.wait();
    store.lock("t").expect("the lock died with its process");
}
