//! The record stays byte-compatible: every event log captured in
//! `tests/record/` (from released versions, older builds of this
//! repository and this version; `tests/record/capture.sh` says how)
//! verifies, every line reads as a typed [`Event`], and the typed event
//! written again gives the same bytes, so the hash chain still holds.
//! Test code only.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::Event;
use super::chain::{Finding, encode, verify};

/// Keys renamed since a captured version: read under the old name, written
/// under the new one (event type, old, new).
const RENAMED: &[(&str, &str, &str)] = &[("AgentFinished", "ignored", "leftovers")];

/// A logged line as this version writes it: the same bytes, but for the
/// keys renamed since ([`RENAMED`]); `None` when it is not a JSON object.
fn as_written_now(line: &[u8]) -> Option<String> {
    let Ok(Value::Object(mut map)) = serde_json::from_slice::<Value>(line) else { return None };
    let kind = map.get("type").and_then(Value::as_str).unwrap_or_default().to_string();
    for (_, old, new) in RENAMED.iter().filter(|(t, ..)| *t == kind) {
        if let Some(v) = map.remove(*old) {
            map.insert((*new).to_string(), v);
        }
    }
    Some(Value::Object(map).to_string())
}

/// The captured logs, sorted by name.
fn captures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/record");
    let mut logs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|rd| rd.flatten().map(|e| e.path()).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".events.jsonl"))
        .collect();
    logs.sort();
    logs
}

/// What is wrong with one log: its chain, or a line that does not read
/// typed or is written back differently.
fn problems(name: &str, log: &[u8]) -> Vec<String> {
    let v = verify(log);
    let mut out = Vec::new();
    if let Some(Finding::Broken { line, what }) = v.broken {
        out.push(format!("{name}:{line}: the chain breaks: {what}"));
    }
    if v.torn_tail || !v.repaired.is_empty() {
        out.push(format!("{name}: a torn line"));
    }
    let lines: Vec<&[u8]> = log.split(|&b| b == b'\n').filter(|l| !l.is_empty()).collect();
    if v.events.len() != lines.len() {
        out.push(format!("{name}: {} lines, {} events verified", lines.len(), v.events.len()));
    }
    for e in &v.events {
        let Some(typed) = e.typed() else {
            out.push(format!("{name}:{}: {} does not read typed", e.line, e.kind));
            continue;
        };
        let ts = e.value.get("ts").and_then(Value::as_str).unwrap_or_default();
        let prev = e.value.get("prev").and_then(Value::as_str).unwrap_or_default();
        let again = encode(e.seq, ts, typed.kind(), e.attempt, prev, &typed.fields());
        let line = lines[e.line - 1];
        let renamed = RENAMED.iter().any(|(t, ..)| *t == e.kind);
        // Lines are canonical: their keys sorted, nothing but the JSON. Not
        // checked on a line with a fraction (`watch_ms`): serde_json reads
        // some of them one unit in the last place off (no
        // `float_roundtrip`), so `again` and `was` share that error.
        let fraction = e.value.as_object().is_some_and(|m| m.values().any(Value::is_f64));
        if !renamed && !fraction && as_written_now(line).as_deref().map(str::as_bytes) != Some(line) {
            out.push(format!("{name}:{}: not in the chain's canonical form", e.line));
        }
        let was = as_written_now(line).unwrap_or_default();
        if again != was {
            out.push(format!("{name}:{}: {} is written back differently:\n  was {was}\n  now {again}", e.line, e.kind));
        }
    }
    out
}

#[test]
fn every_captured_log_reads_typed_and_is_written_back_byte_for_byte() {
    let logs = captures();
    let names: Vec<String> =
        logs.iter().filter_map(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned()).collect();
    for expected in ["v0.1-demo.events.jsonl", "v0.1-verifier.events.jsonl"] {
        assert!(names.iter().any(|n| n == expected), "{expected} is not in tests/record: {names:?}");
    }
    let mut wrong = Vec::new();
    let mut events = 0;
    for (path, name) in logs.iter().zip(&names) {
        let log = std::fs::read(path).unwrap_or_default();
        assert!(!log.is_empty(), "{name} is empty");
        events += log.iter().filter(|&&b| b == b'\n').count();
        wrong.extend(problems(name, &log));
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(events > 50, "only {events} events in {names:?}");
}

#[test]
fn a_changed_value_or_a_key_this_version_drops_is_caught() {
    let line = encode(1, "2026-11-22T12:00:00.005Z", "TaskEscalated", Some(2), super::chain::ZERO, &{
        let e = Event::TaskEscalated { reason: "r".into(), attempts: 2, budget: None };
        e.fields()
    });
    assert!(problems("ok", format!("{line}\n").as_bytes()).is_empty());
    // A key no version writes: read, then dropped when written back.
    let extra = line.replacen("{", "{\"zzz\":1,", 1);
    let found = problems("extra", format!("{extra}\n").as_bytes());
    assert!(found.iter().any(|p| p.contains("written back differently")), "{found:?}");
}
