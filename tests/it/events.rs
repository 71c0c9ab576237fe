//! Typed events: logs written by the previous version (captured from its
//! real runs into `tests/record/`) still read, typed, and verify; and the
//! events this version writes have the same fields, type by type.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use retry_run::record::Event;
use serde_json::Value;

use crate::support::TestEnv;

fn captured(name: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/record").join(name)).expect("capture")
}

/// Fields renamed since v0.1, written under the new name and still read
/// under the old one: (event type, old name, new name).
const RENAMED: &[(&str, &str, &str)] = &[("AgentFinished", "ignored", "leftovers")];

/// The keys of each event type in a log, renamed fields under their new name.
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
        let keys: BTreeSet<String> = v.as_object().expect("object").keys().map(renamed).collect();
        out.entry(v["type"].as_str().expect("type").to_string()).or_default().insert(keys);
    }
    out
}

/// A repository whose record holds task `old` with `log` as its event log.
fn repo_with_log(env: &TestEnv, log: &str) -> std::path::PathBuf {
    let r = env.path("repo");
    std::fs::create_dir_all(&r).expect("mkdir");
    env.git(&r, &["init", "-q"]);
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
    let out = env.run(env.dir.path(), &["demo", "--keep"]);
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
    assert_eq!(shapes(&now), shapes(&captured("v0.1-demo.events.jsonl")));
}
