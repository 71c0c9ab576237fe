//! The events of a task's log, typed: one variant per event type, with its
//! own fields. The log's envelope (`seq`, `ts`, `attempt`, `prev`) is the
//! chain's ([`super::chain`]); the variant is tagged by `type`. Every writer
//! and reader uses this type, so a field renamed on one side fails to
//! compile on the other. The JSON on disk is documented in
//! `docs/record.md`: keys that an event has only sometimes are left out
//! when absent, and a field missing from an event (one that an earlier
//! version did not write, or a log written by hand) reads as its default.
//! An event type this version does not know is not an error: readers get
//! `None` from [`Event::parse`] and keep the raw event.
//!
//! Every field has a type here, nested ones too ([`BaselineCache`],
//! [`CheckRerun`], [`ContextCut`], and the confinement's in
//! [`super::confinement`]): the log's format is defined by these types
//! alone. Written back, a logged event gives the same bytes (keys are
//! sorted by the chain; `src/record/compat.rs` holds every captured log to
//! that).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::confinement::{ConfinedRecord, SandboxPlan};
use crate::model::{BaselineMode, CheckKind, Halt, Landed, NetworkSeen, ObjectsAdded, Review, ScopeFinding, Usage};

// An event is built once and written at once: the size of its largest
// variant (`CheckFinished`) costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum Event {
    TaskStarted {
        #[serde(default)]
        task: String,
        #[serde(default)]
        title: String,
        #[serde(default)]
        base: String,
        #[serde(default)]
        base_ref: String,
        #[serde(default)]
        max_attempts: u32,
        #[serde(default)]
        first_attempt: u32,
        #[serde(default)]
        resumed: bool,
        #[serde(default)]
        task_sha256: String,
        #[serde(default)]
        targets: Vec<String>,
        #[serde(default)]
        baseline: Option<BaselineMode>,
        /// The confinement asked for and in force (`null` in a lane's
        /// log).
        #[serde(default)]
        sandbox: Option<SandboxPlan>,
        /// A task run in lanes (`run --lanes`): how many, in the task's log.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lanes: Option<u32>,
        /// In a lane's log: which lane it is (1 to `lanes`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lane: Option<u32>,
        /// A task run in lanes: how the winner is chosen (`first`, `all`),
        /// kept for a resumed run.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        choose: Option<String>,
    },
    AttemptStarted {
        #[serde(default)]
        max_attempts: u32,
    },
    WorktreeReset {
        #[serde(default)]
        mode: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        created: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        restored: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        removed: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stale_locks_removed: Option<Vec<String>>,
        #[serde(default)]
        path: String,
    },
    /// An ended task's worktree removed by `[worktree] keep`, or by the
    /// disk budget to make room for another task's.
    WorktreeRemoved {
        #[serde(default)]
        path: String,
        /// What it took on disk.
        #[serde(default)]
        bytes: u64,
        #[serde(default)]
        reason: String,
    },
    AttemptAborted {
        #[serde(default)]
        reason: String,
        #[serde(default)]
        phase: String,
    },
    BaselineChecked {
        #[serde(default)]
        check: String,
        #[serde(default)]
        base: String,
        #[serde(default)]
        passed: bool,
        #[serde(default)]
        failures: Vec<String>,
        /// The variables retry-run added for the test runners.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        env: Option<BTreeMap<String, String>>,
        /// The shared cache of the base's checks: used or filled.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cache: Option<BaselineCache>,
        /// `"targets"`: a run of only the task's targets, the check's full
        /// run on the base waiting for an attempt's full stage.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        part: Option<String>,
    },
    RetryContextAssembled {
        #[serde(default)]
        prior_attempts: u64,
        #[serde(default)]
        sources: Vec<String>,
        #[serde(default)]
        bytes: u64,
        #[serde(default)]
        required_change: Option<String>,
    },
    AttemptContextTruncated {
        #[serde(default)]
        budget_bytes: u64,
        #[serde(default)]
        before: u64,
        #[serde(default)]
        after: u64,
        /// Each section cut and why.
        #[serde(default)]
        cuts: Vec<ContextCut>,
    },
    AttemptContextAssembled {
        #[serde(default)]
        manifest_sha256: String,
        #[serde(default)]
        prompt_sha256: String,
        #[serde(default)]
        context_sha256: String,
    },
    AttemptContextDelivered {
        #[serde(default)]
        sha256: String,
        #[serde(default)]
        bytes: u64,
        #[serde(default)]
        via: Vec<String>,
    },
    AgentStarted {
        #[serde(default)]
        pgid: i64,
        /// How the agent was confined.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sandbox: Option<ConfinedRecord>,
    },
    AgentFinished {
        #[serde(default)]
        exit_code: Option<i32>,
        #[serde(default)]
        signal: Option<i32>,
        #[serde(default)]
        timed_out: bool,
        #[serde(default)]
        duration_ms: u64,
        #[serde(default)]
        output_bytes: u64,
        #[serde(default)]
        last_activity: Option<String>,
        #[serde(default)]
        usage: Option<Usage>,
        /// The agent's leftovers moved out of the worktree. `ignored` is read
        /// as this field too: logs written by earlier versions use it.
        #[serde(default, alias = "ignored")]
        leftovers: Vec<String>,
        /// Hosts (`host:port`) the sandbox's proxy refused it.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        refused_hosts: Vec<String>,
        /// The sandbox's limits it hit, in words.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        limits_hit: Vec<String>,
        /// Detect mode: what it reached that the other modes would have
        /// stopped (`network`, `unix-socket`), or why nothing could be seen.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        network_seen: Vec<NetworkSeen>,
    },
    /// The agent's run ended on a transient failure of its model provider
    /// (docs/agents/README.md): not counted as an attempt, run again from
    /// the attempt's clean start after `wait_ms`, or, past
    /// `agent.transient_retries`, the attempt aborted (`wait_ms` absent).
    AgentRetried {
        /// Which run of the attempt's agent ended so (1: the first).
        #[serde(default)]
        run: u32,
        /// `rate_limit`, `overloaded`, `server_error` or `dropped`.
        #[serde(default)]
        kind: String,
        /// The line of its output, or what the proxy saw, that says so.
        #[serde(default)]
        said: String,
        #[serde(default)]
        exit_code: Option<i32>,
        #[serde(default)]
        duration_ms: u64,
        /// How long retry-run waited before the next run.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        wait_ms: Option<u64>,
        /// The wait the provider asked for (`Retry-After`), when it did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after_ms: Option<u64>,
        /// The run's output, kept in the attempt's directory.
        #[serde(default)]
        output: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Usage>,
    },
    SnapshotTaken {
        #[serde(default)]
        commit: String,
        #[serde(default)]
        #[serde(rename = "ref")]
        refname: String,
        #[serde(default)]
        files: u64,
        #[serde(default)]
        additions: u64,
        #[serde(default)]
        deletions: u64,
        #[serde(default)]
        paths: Vec<String>,
    },
    ScopeChecked {
        #[serde(default)]
        checked: u64,
        #[serde(default)]
        violations: Vec<ScopeFinding>,
        /// Files that act once the change lands, flagged, not failing
        /// (`[scope] acts_after_land = "flag"`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        flagged: Vec<ScopeFinding>,
        #[serde(default)]
        restored: Vec<String>,
        /// `checks` when a check wrote outside the worktree.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        after: Option<String>,
        /// The git objects the attempt added (a `git commit` in its
        /// worktree): reported, not violations.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        objects_added: Option<ObjectsAdded>,
        /// Parts of the repository's internals that changed where the
        /// sandbox let the attempt write nothing (another clone, the
        /// user's git): the environment's, not violations.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        environment: Vec<String>,
        /// What was found outside the worktree and is shown, never a
        /// violation (`shared-tmp`: a file of the user's in `/tmp` or
        /// `/dev/shm`, known by its time alone).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        noted: Vec<ScopeFinding>,
    },
    CheckFinished {
        #[serde(default)]
        check: String,
        #[serde(default)]
        kind: CheckKind,
        #[serde(default)]
        passed: bool,
        #[serde(default)]
        exit_code: Option<i32>,
        #[serde(default)]
        timed_out: bool,
        #[serde(default)]
        flaky: bool,
        #[serde(default)]
        runs: u32,
        #[serde(default)]
        duration_ms: u64,
        #[serde(default)]
        new_failures: Vec<String>,
        #[serde(default)]
        pre_existing: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pre_existing_failures: Option<Vec<String>>,
        /// Written (as a number or null) for configured checks only.
        #[serde(default, deserialize_with = "present", skip_serializing_if = "Option::is_none")]
        tests_ran: Option<Option<u64>>,
        /// How a configured check was confined.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sandbox: Option<ConfinedRecord>,
        /// The variables retry-run added for the test runners (configured
        /// checks).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        env: Option<BTreeMap<String, String>>,
        /// After a failure: the tests run again, or why none was.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rerun: Option<CheckRerun>,
        /// Not run: an earlier run's output on the same inputs, judged
        /// again (which run, its key).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reused: Option<crate::model::Reused>,
        /// Run although an earlier run's output may have stood for it: the
        /// setting that said so (`[[check]] reuse = false`, `[retry] reuse
        /// = false`, `run --fresh-baseline`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        not_reused: Option<String>,
        /// The built-in checks (`targets`, `test-integrity`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        builtin: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        warnings: Option<Vec<String>>,
        /// `targets` for a run of the task's targets alone (`fail_fast`'s
        /// first stage); absent for the check as configured.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        part: Option<String>,
        /// When its first run started and its last ended, in milliseconds
        /// since the Unix epoch (configured checks): checks that ran side
        /// by side overlap.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        started_at_ms: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ended_at_ms: Option<u64>,
        /// Detect mode: what its runs reached that the other modes would
        /// have stopped (`network`, `unix-socket`), or why nothing could be
        /// seen (configured checks).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        network_seen: Vec<NetworkSeen>,
    },
    /// A run of a check not made because a check before it failed
    /// (`[retry] fail_fast`).
    CheckNotRun {
        #[serde(default)]
        check: String,
        /// `targets` or `full`.
        #[serde(default)]
        part: String,
        #[serde(default)]
        reason: String,
    },
    VerifierFinished {
        #[serde(default)]
        answered: bool,
        #[serde(default)]
        calls: u32,
        #[serde(default)]
        verdict: Option<String>,
        #[serde(default)]
        confidence: Option<f64>,
        #[serde(default)]
        required_change: Option<String>,
        #[serde(default)]
        critique: Option<String>,
        #[serde(default)]
        problems: Vec<String>,
        #[serde(default)]
        min_confidence: f64,
        /// How the verifier was confined (the worktree is not among its
        /// writable paths).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sandbox: Option<ConfinedRecord>,
    },
    AttemptCompleted {
        #[serde(default)]
        outcome: String,
        #[serde(default)]
        reason: String,
        /// An attempt that a killed run left, recorded by the next run.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        interrupted: Option<bool>,
        #[serde(default)]
        duration_ms: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        commit: Option<String>,
        #[serde(default)]
        required_change: String,
        #[serde(default)]
        feedback: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        watch_ms: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        watch_setup_ms: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        watch: Option<String>,
        /// Nothing confined the attempt and it changed the git links or
        /// machinery: what, and after which step.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        halted: Option<Halt>,
    },
    TaskSucceeded {
        #[serde(default)]
        commit: String,
        #[serde(default)]
        branch: String,
        #[serde(default)]
        worktree: String,
        #[serde(default)]
        tolerated: Vec<String>,
        #[serde(default)]
        warnings: Vec<String>,
    },
    TaskEscalated {
        #[serde(default)]
        reason: String,
        #[serde(default)]
        attempts: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        budget: Option<bool>,
    },
    /// In a lane's log: the lane stopped because another one won (or the
    /// task's budget ran out in another lane); neither success nor failure.
    /// A call of the agent to a self-check tool (docs/mcp.md), recorded
    /// after its agent ended; advisory, never part of the outcome.
    SelfChecked {
        #[serde(flatten)]
        call: crate::model::SelfCheck,
    },
    LaneStopped {
        #[serde(default)]
        reason: String,
        #[serde(default)]
        attempts: u32,
    },
    /// In the task's log: how one lane ended (`succeeded`, `escalated`,
    /// `stopped`), after how many attempts, with its last commit and agent.
    LaneEnded {
        #[serde(default)]
        lane: u32,
        #[serde(default)]
        ending: String,
        #[serde(default)]
        attempts: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        commit: Option<String>,
        #[serde(default)]
        agent: String,
    },
    /// In the task's log: the lane whose attempt became the task's branch,
    /// and why it was chosen.
    LaneChosen {
        #[serde(default)]
        lane: u32,
        #[serde(default)]
        attempt: u32,
        #[serde(default)]
        commit: String,
        #[serde(default)]
        why: String,
    },
    /// A reviewer's verdict on an attempt's result (`retry-run review`,
    /// the web view, a CI log, a pull request, a land that failed); the
    /// envelope's attempt is the one judged.
    Reviewed {
        #[serde(flatten)]
        review: Review,
    },
    /// The task's result brought onto a branch (`retry-run land`).
    TaskLanded {
        #[serde(flatten)]
        landed: Landed,
    },
    LogRepaired {
        #[serde(default)]
        torn_line: u64,
        #[serde(default)]
        torn_bytes: u64,
        #[serde(default)]
        torn_sha256: String,
        #[serde(default)]
        note: String,
    },
}

/// A key that is there, `null` included: `Some` of its value (a plain
/// `Option<Option<_>>` would read `null` as absent and leave it out when
/// written back).
fn present<'de, D: serde::Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// `BaselineChecked.cache`: the base's check run taken from the shared
/// cache (`hit`, with the task whose run it reuses), or run and stored.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BaselineCache {
    #[serde(default)]
    pub key: String,
    #[serde(default)]
    pub hit: bool,
    /// On a hit: the task whose run it reuses.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// What the check received, in words (the key holds its digest).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
}

/// `CheckFinished.rerun`: after a failure, the failing tests run again and
/// the variables that selected them (and, for a runner that selects on its
/// command line, the command run instead: `run`), or why none was run
/// again (written `{"none": why}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CheckRerun {
    Ran {
        tests: Vec<String>,
        env: BTreeMap<String, String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        run: Option<String>,
    },
    NotRun {
        none: String,
    },
}

/// `AttemptContextTruncated.cuts`: a section of the retry context cut, how
/// many lines, and the limit that cut it (`max_tokens`,
/// `max_check_output_lines`, ...).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ContextCut {
    #[serde(default)]
    pub section: String,
    #[serde(default)]
    pub lines: u64,
    #[serde(default)]
    pub why: String,
}

impl Event {
    /// The event's type, as written in the log.
    pub fn kind(&self) -> &'static str {
        match self {
            Event::TaskStarted { .. } => "TaskStarted",
            Event::AttemptStarted { .. } => "AttemptStarted",
            Event::WorktreeReset { .. } => "WorktreeReset",
            Event::WorktreeRemoved { .. } => "WorktreeRemoved",
            Event::AttemptAborted { .. } => "AttemptAborted",
            Event::BaselineChecked { .. } => "BaselineChecked",
            Event::RetryContextAssembled { .. } => "RetryContextAssembled",
            Event::AttemptContextTruncated { .. } => "AttemptContextTruncated",
            Event::AttemptContextAssembled { .. } => "AttemptContextAssembled",
            Event::AttemptContextDelivered { .. } => "AttemptContextDelivered",
            Event::AgentStarted { .. } => "AgentStarted",
            Event::AgentFinished { .. } => "AgentFinished",
            Event::AgentRetried { .. } => "AgentRetried",
            Event::SnapshotTaken { .. } => "SnapshotTaken",
            Event::ScopeChecked { .. } => "ScopeChecked",
            Event::CheckFinished { .. } => "CheckFinished",
            Event::CheckNotRun { .. } => "CheckNotRun",
            Event::VerifierFinished { .. } => "VerifierFinished",
            Event::AttemptCompleted { .. } => "AttemptCompleted",
            Event::TaskSucceeded { .. } => "TaskSucceeded",
            Event::TaskEscalated { .. } => "TaskEscalated",
            Event::SelfChecked { .. } => "SelfChecked",
            Event::LaneStopped { .. } => "LaneStopped",
            Event::LaneEnded { .. } => "LaneEnded",
            Event::LaneChosen { .. } => "LaneChosen",
            Event::Reviewed { .. } => "Reviewed",
            Event::TaskLanded { .. } => "TaskLanded",
            Event::LogRepaired { .. } => "LogRepaired",
        }
    }

    /// The event's own fields, for the log (its `type` is the envelope's).
    pub fn fields(&self) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(m) = &mut v {
            m.remove("type");
        }
        v
    }

    /// A logged event's value (envelope and fields) as typed; `None` for a
    /// type this version does not know, or fields it cannot read.
    /// Read from the value in place (`&Value` is a deserializer): no copy
    /// of it is made, which a whole log read typed would pay per event.
    pub fn parse(value: &Value) -> Option<Event> {
        use serde::Deserialize;
        Event::deserialize(value).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_leave_the_type_to_the_envelope_and_unknown_types_are_none() {
        let e = Event::TaskEscalated { reason: "2 attempts failed".into(), attempts: 2, budget: None };
        assert_eq!(e.kind(), "TaskEscalated");
        assert_eq!(e.fields(), serde_json::json!({"reason": "2 attempts failed", "attempts": 2}));
        let logged = serde_json::json!({"seq": 9, "ts": "t", "type": "TaskEscalated", "attempt": 2, "prev": "p",
                                        "reason": "r", "attempts": 2});
        assert!(matches!(Event::parse(&logged), Some(Event::TaskEscalated { attempts: 2, .. })));
        assert_eq!(Event::parse(&serde_json::json!({"type": "FromTheFuture", "x": 1})), None);
    }

    #[test]
    fn tests_ran_keeps_null_apart_from_absent() {
        for (written, read) in [
            (serde_json::json!({"type": "CheckFinished", "tests_ran": null}), Some(None)),
            (serde_json::json!({"type": "CheckFinished", "tests_ran": 3}), Some(Some(3))),
            (serde_json::json!({"type": "CheckFinished"}), None),
        ] {
            let Some(e @ Event::CheckFinished { tests_ran, .. }) = Event::parse(&written) else { panic!("{written}") };
            assert_eq!(tests_ran, read, "{written}");
            assert_eq!(e.fields().get("tests_ran"), written.get("tests_ran"), "{written}");
        }
    }

    #[test]
    fn agent_finished_reads_leftovers_under_their_old_name() {
        let old = serde_json::json!({"type": "AgentFinished", "exit_code": 0, "ignored": [".aider.chat.history.md"]});
        let Some(e @ Event::AgentFinished { .. }) = Event::parse(&old) else { panic!("AgentFinished: {old}") };
        assert!(matches!(&e, Event::AgentFinished { leftovers, .. } if leftovers == &[".aider.chat.history.md"]));
        assert_eq!(e.fields()["leftovers"], serde_json::json!([".aider.chat.history.md"]));
        assert!(e.fields().get("ignored").is_none());
    }
}
