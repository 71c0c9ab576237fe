//! A task's state, read back from its record: where the task stands
//! ([`state`], pure over the events: what `run`, `status`, `clean`,
//! `report` and `pull` ask) and what each attempt did ([`attempts`], from
//! `attempts/<n>/attempt.json`, or from the events when that file is
//! missing).

use serde_json::Value;

use super::Event;
use super::chain::Verified;
use super::chain::{LogLine, parse_rfc3339};
use super::{RecordError, Store};
use crate::model::{AttemptRecord, Outcome};

/// Where a task stands, from its events.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskState {
    /// A TaskStarted was recorded.
    pub started: bool,
    /// The first attempt of the current round (`--again` starts a round).
    pub first_attempt: u32,
    pub max_attempts: u32,
    /// How many lanes the latest TaskStarted ran the task in (`run
    /// --lanes`); `None` for one chain.
    pub lanes: Option<u32>,
    /// How the latest TaskStarted of a task in lanes chooses its winner.
    pub choose: Option<String>,
    /// The base commit of the latest TaskStarted.
    pub base: Option<String>,
    /// What the latest TaskStarted ran without confinement by the config's
    /// choice (`worktree.setup_unconfined`, `network_mode = "host"`).
    pub unconfined: Vec<String>,
    /// The highest attempt number started.
    pub last_attempt: u32,
    /// An attempt started and never completed: `retry-run` was killed.
    pub unfinished: Option<u32>,
    /// Attempts of the current round closed by `AttemptAborted` (before
    /// their agent ran): they spend nothing of its budget.
    pub aborted: u32,
    /// The last attempt, when it was aborted and nothing was started
    /// since, with the reason: where the task stopped.
    pub stopped: Option<(u32, String)>,
    /// `TaskSucceeded` or `TaskEscalated` (in a lane's log, also
    /// `LaneStopped`), with the attempt it names, when the latest round
    /// ended.
    pub finished: Option<(Event, Option<u32>)>,
    /// Manifest hashes by attempt, in order.
    pub manifests: Vec<String>,
    /// The outcome of the last completed attempt.
    pub last_outcome: Option<String>,
    /// The agent's cost as it reported it (`AgentFinished.usage`), summed
    /// over every round; `None` when it never reported one.
    pub cost_usd: Option<f64>,
    /// The timestamp of the log's last event.
    pub last_ts: Option<String>,
    /// Every review of the task's results (`Reviewed`), in the log's
    /// order, over every round.
    pub reviews: Vec<crate::model::Review>,
    /// The latest land of the task (`TaskLanded`).
    pub landed: Option<crate::model::Landed>,
    /// What the log's last event is.
    pub last_event: LastEvent,
}

impl TaskState {
    /// The attempt whose result the latest round left (`TaskSucceeded`).
    pub(crate) fn result_attempt(&self) -> Option<u32> {
        match &self.finished {
            Some((Event::TaskSucceeded { .. }, at)) => *at,
            _ => None,
        }
    }

    /// How the latest round's result stands with its reviewers: `landed`
    /// (the land of that attempt), else the latest verdict on it
    /// (`approved`, `rejected`), else `None`.
    pub(crate) fn review_label(&self) -> Option<&'static str> {
        let at = self.result_attempt()?;
        if self.landed.as_ref().is_some_and(|l| l.attempt == at) {
            return Some("landed");
        }
        self.reviews.iter().rev().find(|r| r.attempt == at).map(|r| r.verdict.as_str())
    }
}

/// The log's last event, as far as a task's standing goes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LastEvent {
    /// The log has no event.
    #[default]
    None,
    Succeeded,
    Escalated,
    /// Any other event, or one this version does not know.
    Other,
}

impl TaskState {
    /// How `status` names where the task stands: `running` when a process
    /// holds its lock, `log broken (…)` when its chain does not verify,
    /// else from the log's last event: `succeeded`, `escalated`, `new`
    /// (nothing recorded) or `stopped`.
    pub fn label(&self, running: bool, log_broken: bool) -> &'static str {
        if running {
            "running"
        } else if log_broken {
            "log broken (retry-run log --verify)"
        } else {
            match self.last_event {
                LastEvent::Succeeded => "succeeded",
                LastEvent::Escalated => "escalated",
                LastEvent::None => "new",
                LastEvent::Other => "stopped",
            }
        }
    }
}

/// Pure: the state of a task from its verified events.
/// The kinds of event [`state`] reads the fields of.
const STATE_KINDS: &[&str] = &[
    "TaskStarted",
    "AttemptStarted",
    "AttemptCompleted",
    "AttemptAborted",
    "AttemptContextAssembled",
    "Reviewed",
    "TaskLanded",
    "AgentFinished",
    "TaskSucceeded",
    "TaskEscalated",
    "LaneStopped",
    "WorktreeRemoved",
];

pub(crate) fn state(events: &[LogLine]) -> TaskState {
    let mut s = TaskState::default();
    let mut open: Option<u32> = None;
    let mut aborted: Vec<u32> = Vec::new();
    let mut costs: Vec<f64> = Vec::new();
    for e in events {
        // Events of the other kinds are read as what they are, another
        // event: not parsed.
        let typed = if STATE_KINDS.contains(&e.kind.as_str()) { e.typed() } else { None };
        s.last_event = match &typed {
            Some(Event::TaskSucceeded { .. }) => LastEvent::Succeeded,
            Some(Event::TaskEscalated { .. }) => LastEvent::Escalated,
            // The worktree of an ended task removed, a review of its
            // result, its land: still ended as it was.
            Some(Event::WorktreeRemoved { .. } | Event::Reviewed { .. } | Event::TaskLanded { .. }) => s.last_event,
            _ => LastEvent::Other,
        };
        match typed {
            Some(Event::TaskStarted { first_attempt, max_attempts, base, sandbox, lanes, choose, .. }) => {
                s.started = true;
                s.lanes = lanes;
                s.choose = choose;
                s.first_attempt = first_attempt;
                s.max_attempts = max_attempts;
                s.base = Some(base);
                s.unconfined = sandbox.and_then(|p| p.unconfined).unwrap_or_default();
                s.finished = None;
            }
            Some(Event::AttemptStarted { .. }) => {
                if let Some(n) = e.attempt {
                    s.last_attempt = s.last_attempt.max(n);
                    open = Some(n);
                    s.stopped = None;
                }
            }
            Some(Event::AttemptCompleted { outcome, .. }) => {
                if e.attempt == open {
                    open = None;
                }
                s.last_outcome = Some(outcome);
            }
            Some(Event::AttemptAborted { reason, .. }) if e.attempt.is_some() && e.attempt == open => {
                open = None;
                aborted.extend(e.attempt);
                s.stopped = e.attempt.map(|n| (n, reason));
            }
            Some(Event::AttemptContextAssembled { manifest_sha256, .. }) => s.manifests.push(manifest_sha256),
            Some(Event::Reviewed { review }) => s.reviews.push(review),
            Some(Event::TaskLanded { landed }) => s.landed = Some(landed),
            Some(Event::AgentFinished { usage: Some(u), .. }) => costs.extend(u.cost_usd),
            Some(ended @ (Event::TaskSucceeded { .. } | Event::TaskEscalated { .. } | Event::LaneStopped { .. })) => {
                s.stopped = None;
                s.finished = Some((ended, e.attempt));
            }
            _ => {}
        }
    }
    s.unfinished = open;
    s.aborted = aborted.iter().filter(|n| **n >= s.first_attempt).count() as u32;
    s.cost_usd = (!costs.is_empty()).then(|| costs.iter().sum());
    s.last_ts = events.last().and_then(|e| e.value.get("ts")).and_then(Value::as_str).map(str::to_string);
    s
}

/// A task's state, and how `status` names it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TaskStatus {
    pub state: TaskState,
    /// [`TaskState::label`]: `running`, `succeeded`, `stopped`...
    pub label: &'static str,
}

/// Pure: the status of a task from its verified log; `running` when a
/// process holds its lock.
pub(crate) fn status_of(v: &Verified, running: bool) -> TaskStatus {
    let state = state(&v.events);
    let label = state.label(running, v.broken.is_some());
    TaskStatus { state, label }
}

/// Where `task` stands, from its record: `None` when it has none (a
/// worktree without a record); `Err` when its log cannot be read.
pub(crate) fn status(store: &Store, task: &str) -> Result<Option<TaskStatus>, RecordError> {
    match store.read(task) {
        Ok(v) => Ok(Some(status_of(&v, store.running(task).is_some()))),
        Err(RecordError::NoTask { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Milliseconds between two events' timestamps.
pub(crate) fn elapsed_ms(from: &LogLine, to: &LogLine) -> u64 {
    let ts = |e: &LogLine| e.value.get("ts").and_then(Value::as_str).and_then(parse_rfc3339);
    match (ts(from), ts(to)) {
        (Some(a), Some(b)) => b.saturating_sub(a) * 1000,
        _ => 0,
    }
}

/// The record of attempt `n`, started and never completed: CRASH
/// (interrupted), lasting from its start to the log's last event.
pub(crate) fn interrupted(events: &[LogLine], n: u32) -> AttemptRecord {
    let started =
        events.iter().rev().find(|e| e.attempt == Some(n) && matches!(e.typed(), Some(Event::AttemptStarted { .. })));
    let duration = match (started, events.last()) {
        (Some(a), Some(b)) => elapsed_ms(a, b),
        _ => 0,
    };
    AttemptRecord::interrupted(n, duration)
}

/// Pure: the record of a completed attempt as its AttemptCompleted event
/// tells it (what is left when `attempt.json` is lost); `None` for any
/// other event.
pub(crate) fn completed(e: &LogLine) -> Option<AttemptRecord> {
    if e.kind != "AttemptCompleted" {
        return None;
    }
    let Some(Event::AttemptCompleted { outcome, reason, interrupted, duration_ms, .. }) = e.typed() else {
        return None;
    };
    let mut r = AttemptRecord::new(e.attempt?);
    r.outcome = Outcome::parse(&outcome).unwrap_or(Outcome::Crash);
    r.interrupted = interrupted.unwrap_or(false);
    r.duration_ms = duration_ms;
    r.reason = reason;
    Some(r)
}

/// Every completed attempt, in order. An attempt whose `attempt.json` is
/// missing or unreadable is rebuilt from its AttemptCompleted event (what
/// the record still says), never dropped.
pub(crate) fn attempts(store: &Store, task: &str, events: &[LogLine]) -> Vec<AttemptRecord> {
    let mut out = Vec::new();
    for e in events {
        let Some(from_event) = completed(e) else { continue };
        let path = store.attempt(task, from_event.number).attempt_json();
        let from_file = std::fs::read(&path).ok().and_then(|b| serde_json::from_slice::<AttemptRecord>(&b).ok());
        out.push(from_file.unwrap_or(from_event));
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::hash::sha256_hex;
    use crate::record::chain::{ZERO, encode, rfc3339, verify};

    /// A verified log of `(attempt, {"type": ..., fields})`, one event a minute.
    fn log(events: &[(Option<u32>, Value)]) -> Vec<LogLine> {
        let (mut prev, mut text) = (ZERO.to_string(), String::new());
        for (i, (attempt, v)) in events.iter().enumerate() {
            let kind = v["type"].as_str().expect("a type");
            let line = encode(i as u64 + 1, &rfc3339(1_700_000_000 + 60 * i as u64, 0), kind, *attempt, &prev, v);
            prev = sha256_hex(line.as_bytes());
            text.push_str(&line);
            text.push('\n');
        }
        let v = verify(text.as_bytes());
        assert!(v.broken.is_none());
        v.events
    }

    fn started(first: u32, base: &str) -> (Option<u32>, Value) {
        (None, json!({"type": "TaskStarted", "first_attempt": first, "max_attempts": 3, "base": base}))
    }

    fn attempt(n: u32) -> (Option<u32>, Value) {
        (Some(n), json!({"type": "AttemptStarted"}))
    }

    fn completed_as(n: u32, outcome: &str) -> (Option<u32>, Value) {
        (Some(n), json!({"type": "AttemptCompleted", "outcome": outcome, "reason": "r", "duration_ms": 5}))
    }

    fn cost(n: u32, usd: Option<f64>) -> (Option<u32>, Value) {
        (Some(n), json!({"type": "AgentFinished", "usage": {"cost_usd": usd}}))
    }

    fn succeeded(n: u32) -> (Option<u32>, Value) {
        (Some(n), json!({"type": "TaskSucceeded", "branch": "retry-run/t"}))
    }

    /// A log and what its state says.
    struct Case {
        events: Vec<(Option<u32>, Value)>,
        label: &'static str,
        last_attempt: u32,
        unfinished: Option<u32>,
        finished: bool,
        last_outcome: Option<&'static str>,
    }

    fn case(events: Vec<(Option<u32>, Value)>, label: &'static str, last_attempt: u32) -> Case {
        Case { events, label, last_attempt, unfinished: None, finished: false, last_outcome: None }
    }

    #[test]
    fn where_a_task_stands() {
        let escalated = (None, json!({"type": "TaskEscalated", "reason": "r", "attempts": 1}));
        let cases = [
            case(vec![], "new", 0),
            case(vec![started(1, "b1")], "stopped", 0),
            Case { unfinished: Some(1), ..case(vec![started(1, "b1"), attempt(1)], "stopped", 1) },
            Case {
                unfinished: Some(2),
                last_outcome: Some("CHECK_FAILURE"),
                ..case(vec![started(1, "b1"), attempt(1), completed_as(1, "CHECK_FAILURE"), attempt(2)], "stopped", 2)
            },
            Case {
                finished: true,
                last_outcome: Some("SUCCESS"),
                ..case(vec![started(1, "b1"), attempt(1), completed_as(1, "SUCCESS"), succeeded(1)], "succeeded", 1)
            },
            Case {
                finished: true,
                last_outcome: Some("CHECK_FAILURE"),
                ..case(vec![started(1, "b1"), attempt(1), completed_as(1, "CHECK_FAILURE"), escalated], "escalated", 1)
            },
            // A new round (`--again`) clears the ending; the label follows the last event.
            Case {
                last_outcome: Some("SUCCESS"),
                ..case(
                    vec![started(1, "b1"), attempt(1), completed_as(1, "SUCCESS"), succeeded(1), started(2, "b2")],
                    "stopped",
                    1,
                )
            },
            // An event after the ending (a repaired log): the round stays ended, the label is `stopped`.
            Case {
                finished: true,
                last_outcome: Some("SUCCESS"),
                ..case(
                    vec![
                        started(1, "b1"),
                        attempt(1),
                        completed_as(1, "SUCCESS"),
                        succeeded(1),
                        (None, json!({"type": "LogRepaired"})),
                    ],
                    "stopped",
                    1,
                )
            },
            // An event type this version does not know.
            case(vec![(None, json!({"type": "FromTheFuture"}))], "stopped", 0),
            // An aborted attempt is closed.
            case(vec![started(1, "b1"), attempt(1), (Some(1), json!({"type": "AttemptAborted"}))], "stopped", 1),
        ];
        let aborted = (Some(2), json!({"type": "AttemptAborted", "reason": "cannot start", "phase": "agent"}));
        let s = state(&log(&[started(1, "b1"), attempt(1), completed_as(1, "CRASH"), attempt(2), aborted.clone()]));
        assert_eq!((s.aborted, s.stopped), (1, Some((2, "cannot start".to_string()))));
        let s = state(&log(&[started(1, "b1"), attempt(2), aborted.clone(), started(1, "b1"), attempt(3)]));
        assert_eq!((s.aborted, s.stopped), (1, None), "resumed: the abort still counts for the round");
        let s = state(&log(&[started(1, "b1"), attempt(2), aborted, started(3, "b1")]));
        assert_eq!(s.aborted, 0, "a new round");
        for (i, c) in cases.into_iter().enumerate() {
            let s = state(&log(&c.events));
            assert_eq!(s.label(false, false), c.label, "case {i}");
            assert_eq!(s.last_attempt, c.last_attempt, "case {i}");
            assert_eq!(s.unfinished, c.unfinished, "case {i}");
            assert_eq!(s.finished.is_some(), c.finished, "case {i}");
            assert_eq!(s.last_outcome.as_deref(), c.last_outcome, "case {i}");
            assert_eq!(s.label(true, true), "running", "case {i}");
            assert_eq!(s.label(false, true), "log broken (retry-run log --verify)", "case {i}");
        }
    }

    #[test]
    fn events_of_other_kinds_only_end_the_label() {
        let core = [
            started(1, "b1"),
            attempt(1),
            (Some(1), json!({"type": "AttemptContextAssembled", "manifest_sha256": "m1"})),
            cost(1, Some(0.5)),
            completed_as(1, "CHECK_FAILURE"),
            attempt(2),
        ];
        let others = [
            (Some(1), json!({"type": "AgentStarted", "pgid": 7})),
            (Some(1), json!({"type": "SnapshotTaken", "commit": 12})),
            (None, json!({"type": "FromTheFuture"})),
        ];
        let mut mixed = Vec::new();
        for (i, e) in core.iter().enumerate() {
            mixed.push(e.clone());
            mixed.push(others[i % others.len()].clone());
        }
        let (plain, with) = (state(&log(&core)), state(&log(&mixed)));
        assert_eq!(
            (with.started, with.last_attempt, with.unfinished, &with.manifests, with.cost_usd, &with.last_outcome),
            (
                plain.started,
                plain.last_attempt,
                plain.unfinished,
                &plain.manifests,
                plain.cost_usd,
                &plain.last_outcome
            )
        );
        assert_eq!(with.last_event, LastEvent::Other);
        let ended = state(&log(&[started(1, "b1"), attempt(1), completed_as(1, "SUCCESS"), succeeded(1)]));
        assert_eq!(ended.last_event, LastEvent::Succeeded);
    }

    #[test]
    fn rounds_base_and_manifests() {
        let events = log(&[
            started(1, "b1"),
            attempt(1),
            (Some(1), json!({"type": "AttemptContextAssembled", "manifest_sha256": "m1"})),
            completed_as(1, "SUCCESS"),
            succeeded(1),
            started(2, "b2"),
            attempt(2),
            (Some(2), json!({"type": "AttemptContextAssembled", "manifest_sha256": "m2"})),
        ]);
        let s = state(&events);
        assert!(s.started);
        assert_eq!((s.first_attempt, s.max_attempts, s.base.as_deref()), (2, 3, Some("b2")));
        assert_eq!(s.manifests, ["m1", "m2"]);
        assert_eq!(s.last_ts.as_deref(), Some(rfc3339(1_700_000_000 + 7 * 60, 0).as_str()));
    }

    #[test]
    fn cost_is_summed_where_reported() {
        let s = state(&log(&[started(1, "b"), cost(1, None)]));
        assert_eq!(s.cost_usd, None);
        let s = state(&log(&[started(1, "b"), cost(1, Some(0.25)), cost(2, None), cost(2, Some(0.5))]));
        assert_eq!(s.cost_usd, Some(0.75));
    }

    #[test]
    fn interrupted_attempts_last_until_the_last_event() {
        let events = log(&[started(1, "b"), attempt(1), cost(1, None), cost(1, None)]);
        assert_eq!(elapsed_ms(&events[1], &events[3]), 120_000);
        let r = interrupted(&events, 1);
        assert!(r.interrupted && r.outcome == Outcome::Crash);
        assert_eq!(r.duration_ms, 120_000);
        assert_eq!(interrupted(&events, 2).duration_ms, 0);
    }

    #[test]
    fn a_completed_attempt_from_its_event() {
        let events = log(&[attempt(1), completed_as(1, "SCOPE_VIOLATION"), completed_as(2, "NOT_AN_OUTCOME")]);
        assert!(completed(&events[0]).is_none());
        let r = completed(&events[1]).expect("completed");
        assert_eq!((r.number, r.outcome, r.duration_ms, r.reason.as_str()), (1, Outcome::ScopeViolation, 5, "r"));
        assert_eq!(completed(&events[2]).expect("completed").outcome, Outcome::Crash);
    }

    #[test]
    fn reviews_and_lands_keep_the_ending_and_say_how_the_result_stands() {
        let review = |n: u32, verdict: &str| {
            (
                Some(n),
                json!({"type": "Reviewed", "verdict": verdict, "commit": "c", "by": "Ann <a@x>",
                             "channel": "cli", "required_change": "Retry the 429."}),
            )
        };
        let landed = (
            Some(1),
            json!({"type": "TaskLanded", "onto": "main", "from": "a", "commit": "b",
                                      "how": "squash", "attempt_commit": "c", "replayed": true}),
        );
        let ended = vec![started(1, "b1"), attempt(1), completed_as(1, "SUCCESS"), succeeded(1)];
        let s = state(&log(&ended));
        assert_eq!((s.label(false, false), s.review_label()), ("succeeded", None));
        let mut rejected = ended.clone();
        rejected.push(review(1, "rejected"));
        let s = state(&log(&rejected));
        assert_eq!((s.label(false, false), s.review_label()), ("succeeded", Some("rejected")));
        assert_eq!(s.reviews[0].attempt, 1, "the envelope's attempt is the one judged");
        assert_eq!(s.reviews[0].required_change.as_deref(), Some("Retry the 429."));
        rejected.push(review(1, "approved"));
        assert_eq!(state(&log(&rejected)).review_label(), Some("approved"), "the latest verdict counts");
        rejected.push(landed);
        let s = state(&log(&rejected));
        assert_eq!((s.label(false, false), s.review_label()), ("succeeded", Some("landed")));
        assert_eq!(s.landed.as_ref().map(|l| l.how), Some(crate::model::LandHow::Squash));
        // A new round after the rejection: its result is not reviewed yet.
        let mut again = ended.clone();
        again.extend([review(1, "rejected"), started(2, "b1"), attempt(2), completed_as(2, "SUCCESS"), succeeded(2)]);
        let s = state(&log(&again));
        assert_eq!((s.result_attempt(), s.review_label(), s.reviews.len()), (Some(2), None, 1));
    }

    #[test]
    fn a_review_reads_its_attempt_from_the_envelope_and_writes_it_back_there() {
        let logged = serde_json::json!({"seq": 12, "ts": "t", "type": "Reviewed", "attempt": 3, "prev": "p",
            "verdict": "rejected", "commit": "abc", "by": "Ann <a@x>", "channel": "github-pr",
            "required_change": "Retry the 429.", "critique": "it swallows\nthe 429",
            "comments": [{"path": "src/a.py", "start": 4, "end": 5, "text": "here", "lines": ["+x"]}]});
        let Some(e @ Event::Reviewed { .. }) = Event::parse(&logged) else { panic!("Reviewed: {logged}") };
        let Event::Reviewed { review } = &e else { unreachable!() };
        assert_eq!((review.attempt, review.channel, review.comments.len()), (3, crate::model::Channel::GithubPr, 1));
        let line = encode(12, "t", e.kind(), Some(review.attempt), "p", &e.fields());
        let back: Value = serde_json::from_str(&line).expect("json");
        assert_eq!(back, logged);
    }
}
