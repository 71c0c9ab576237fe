//! A task's history, read back from its record: where the task stands
//! ([`state`], pure over the events) and what each attempt did
//! ([`attempts`], from `attempts/<n>/attempt.json`, or from the events when
//! that file is missing).

use serde_json::Value;

use crate::attempt::{AttemptRecord, Outcome};
use crate::record::Store;
use crate::record::chain::{Event, parse_rfc3339};

/// Where a task stands, from its events.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskState {
    /// The latest TaskStarted's fields.
    pub started: Option<Value>,
    /// The first attempt of the current round (`--again` starts a round).
    pub first_attempt: u32,
    pub max_attempts: u32,
    pub base: Option<String>,
    /// The highest attempt number started.
    pub last_attempt: u32,
    /// An attempt started and never completed: `retry-run` was killed.
    pub unfinished: Option<u32>,
    /// `TaskSucceeded` or `TaskEscalated`, with its fields, when the
    /// latest round ended.
    pub finished: Option<(String, Value)>,
    /// Manifest hashes by attempt, in order.
    pub manifests: Vec<String>,
}

/// Pure: the state of a task from its verified events.
pub fn state(events: &[Event]) -> TaskState {
    let mut s = TaskState::default();
    let mut open: Option<u32> = None;
    for e in events {
        match e.kind.as_str() {
            "TaskStarted" => {
                s.started = Some(e.value.clone());
                s.first_attempt = e.value.get("first_attempt").and_then(Value::as_u64).unwrap_or(1) as u32;
                s.max_attempts = e.value.get("max_attempts").and_then(Value::as_u64).unwrap_or(0) as u32;
                s.base = e.value.get("base").and_then(Value::as_str).map(str::to_string);
                s.finished = None;
            }
            "AttemptStarted" => {
                if let Some(n) = e.attempt {
                    s.last_attempt = s.last_attempt.max(n);
                    open = Some(n);
                }
            }
            "AttemptCompleted" | "AttemptAborted" if e.attempt == open => open = None,
            "AttemptContextAssembled" => {
                if let Some(h) = e.value.get("manifest_sha256").and_then(Value::as_str) {
                    s.manifests.push(h.to_string());
                }
            }
            "TaskSucceeded" | "TaskEscalated" => s.finished = Some((e.kind.clone(), e.value.clone())),
            _ => {}
        }
    }
    s.unfinished = open;
    s
}

/// Milliseconds between two events' timestamps.
pub fn elapsed_ms(from: &Event, to: &Event) -> u64 {
    let ts = |e: &Event| e.value.get("ts").and_then(Value::as_str).and_then(parse_rfc3339);
    match (ts(from), ts(to)) {
        (Some(a), Some(b)) => b.saturating_sub(a) * 1000,
        _ => 0,
    }
}

/// The record of attempt `n`, started and never completed: CRASH
/// (interrupted), lasting from its start to the log's last event.
pub fn interrupted(events: &[Event], n: u32) -> AttemptRecord {
    let started = events.iter().rev().find(|e| e.kind == "AttemptStarted" && e.attempt == Some(n));
    let duration = match (started, events.last()) {
        (Some(a), Some(b)) => elapsed_ms(a, b),
        _ => 0,
    };
    AttemptRecord::interrupted(n, duration)
}

/// Every completed attempt, in order. An attempt whose `attempt.json` is
/// missing or unreadable is rebuilt from its AttemptCompleted event (what
/// the record still says), never dropped.
pub fn attempts(store: &Store, task: &str, events: &[Event]) -> Vec<AttemptRecord> {
    let mut out = Vec::new();
    for e in events.iter().filter(|e| e.kind == "AttemptCompleted") {
        let Some(n) = e.attempt else { continue };
        let path = store.attempt_dir(task, n).join("attempt.json");
        let from_file = std::fs::read(&path).ok().and_then(|b| serde_json::from_slice::<AttemptRecord>(&b).ok());
        let record = from_file.unwrap_or_else(|| {
            let outcome =
                e.value.get("outcome").and_then(Value::as_str).and_then(Outcome::parse).unwrap_or(Outcome::Crash);
            let mut r = AttemptRecord::new(n);
            r.outcome = outcome;
            r.interrupted = e.value.get("interrupted").and_then(Value::as_bool).unwrap_or(false);
            r.duration_ms = e.value.get("duration_ms").and_then(Value::as_u64).unwrap_or(0);
            r.reason = e.value.get("reason").and_then(Value::as_str).unwrap_or("").to_string();
            r
        });
        out.push(record);
    }
    out
}
