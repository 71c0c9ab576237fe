//! A task's history, read back from its record: where the task stands
//! ([`state`], pure over the events) and what each attempt did
//! ([`attempts`], from `attempts/<n>/attempt.json`, or from the events when
//! that file is missing).

use serde_json::Value;

use crate::model::{AttemptRecord, Outcome};
use crate::record::chain::{LogLine, parse_rfc3339};
use crate::record::{Event, Store};

/// Where a task stands, from its events.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskState {
    /// A TaskStarted was recorded.
    pub started: bool,
    /// The first attempt of the current round (`--again` starts a round).
    pub first_attempt: u32,
    pub max_attempts: u32,
    pub base: Option<String>,
    /// The highest attempt number started.
    pub last_attempt: u32,
    /// An attempt started and never completed: `retry-run` was killed.
    pub unfinished: Option<u32>,
    /// `TaskSucceeded` or `TaskEscalated`, with the attempt it names, when
    /// the latest round ended.
    pub finished: Option<(Event, Option<u32>)>,
    /// Manifest hashes by attempt, in order.
    pub manifests: Vec<String>,
}

/// Pure: the state of a task from its verified events.
pub fn state(events: &[LogLine]) -> TaskState {
    let mut s = TaskState::default();
    let mut open: Option<u32> = None;
    for e in events {
        match e.typed() {
            Some(Event::TaskStarted { first_attempt, max_attempts, base, .. }) => {
                s.started = true;
                s.first_attempt = first_attempt;
                s.max_attempts = max_attempts;
                s.base = Some(base);
                s.finished = None;
            }
            Some(Event::AttemptStarted { .. }) => {
                if let Some(n) = e.attempt {
                    s.last_attempt = s.last_attempt.max(n);
                    open = Some(n);
                }
            }
            Some(Event::AttemptCompleted { .. } | Event::AttemptAborted { .. }) if e.attempt == open => open = None,
            Some(Event::AttemptContextAssembled { manifest_sha256, .. }) => s.manifests.push(manifest_sha256),
            Some(ended @ (Event::TaskSucceeded { .. } | Event::TaskEscalated { .. })) => {
                s.finished = Some((ended, e.attempt));
            }
            _ => {}
        }
    }
    s.unfinished = open;
    s
}

/// Milliseconds between two events' timestamps.
pub fn elapsed_ms(from: &LogLine, to: &LogLine) -> u64 {
    let ts = |e: &LogLine| e.value.get("ts").and_then(Value::as_str).and_then(parse_rfc3339);
    match (ts(from), ts(to)) {
        (Some(a), Some(b)) => b.saturating_sub(a) * 1000,
        _ => 0,
    }
}

/// The record of attempt `n`, started and never completed: CRASH
/// (interrupted), lasting from its start to the log's last event.
pub fn interrupted(events: &[LogLine], n: u32) -> AttemptRecord {
    let started =
        events.iter().rev().find(|e| e.attempt == Some(n) && matches!(e.typed(), Some(Event::AttemptStarted { .. })));
    let duration = match (started, events.last()) {
        (Some(a), Some(b)) => elapsed_ms(a, b),
        _ => 0,
    };
    AttemptRecord::interrupted(n, duration)
}

/// Every completed attempt, in order. An attempt whose `attempt.json` is
/// missing or unreadable is rebuilt from its AttemptCompleted event (what
/// the record still says), never dropped.
pub fn attempts(store: &Store, task: &str, events: &[LogLine]) -> Vec<AttemptRecord> {
    let mut out = Vec::new();
    for e in events {
        let Some(Event::AttemptCompleted { outcome, reason, interrupted, duration_ms, .. }) = e.typed() else {
            continue;
        };
        let Some(n) = e.attempt else { continue };
        let path = store.attempt_dir(task, n).join("attempt.json");
        let from_file = std::fs::read(&path).ok().and_then(|b| serde_json::from_slice::<AttemptRecord>(&b).ok());
        let record = from_file.unwrap_or_else(|| {
            let mut r = AttemptRecord::new(n);
            r.outcome = Outcome::parse(&outcome).unwrap_or(Outcome::Crash);
            r.interrupted = interrupted.unwrap_or(false);
            r.duration_ms = duration_ms;
            r.reason = reason;
            r
        });
        out.push(record);
    }
    out
}
