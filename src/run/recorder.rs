//! The recorder: appends the task's events to its log (echoing them to
//! stdout with `--json`), and builds each event the loop records from the
//! loop's own values, in one place each.

use std::collections::BTreeMap;

use serde_json::Value;

use super::RunError;
use crate::git::ResetReport;
use crate::model::{AttemptRecord, CheckResult, ObjectsAdded, ScopeFinding};
use crate::record::confinement::ConfinedRecord;
use crate::record::event::CheckRerun;
use crate::record::{Event, EventLog};

/// Appends events, echoing them to stdout in `--json` mode.
pub(super) struct Recorder {
    pub log: EventLog,
    pub json: bool,
    /// Among other tasks: the task's id, added to each echoed event.
    pub label: Option<String>,
}

/// How a task's worktree was made ready for an attempt.
pub(super) enum Prepared {
    /// `reset = "keep"`: as the last attempt left it.
    Kept,
    /// Created at the base.
    Created,
    /// Reset to the base.
    Reset(ResetReport),
}

/// How a check came to be run: configured (confined as recorded, with the
/// runner variables added and its rerun) or built in.
pub(super) enum CheckRun {
    Configured {
        sandbox: Box<ConfinedRecord>,
        env: BTreeMap<String, String>,
        rerun: Option<CheckRerun>,
        /// `targets` for a run of the task's targets alone.
        part: Option<String>,
        /// When its runs started and ended, Unix milliseconds.
        window: Option<(u64, u64)>,
    },
    Builtin,
}

/// What a scope check found: its findings, what was put back, and the git
/// objects added.
pub(super) struct ScopeFound<'a> {
    pub findings: &'a [ScopeFinding],
    pub restored: &'a [String],
    pub objects: Option<&'a ObjectsAdded>,
    /// Parts of the repository's internals that changed where the attempt
    /// could not write: the environment's.
    pub environment: &'a [String],
    /// What was found outside the worktree, shown but never a violation.
    pub noted: &'a [ScopeFinding],
}

/// What watching the user's checkout cost during an attempt.
pub(super) struct WatchCost {
    pub spent_ms: f64,
    pub setup_ms: f64,
    /// `inotify` or `stat`.
    pub how: &'static str,
}

impl Recorder {
    pub(super) fn event(&mut self, attempt: Option<u32>, event: Event) -> Result<(), RunError> {
        let mut line = self.log.append_line(event.kind(), attempt, &event.fields())?;
        if let Some(task) = &self.label
            && let Ok(Value::Object(mut map)) = serde_json::from_str::<Value>(&line)
        {
            map.entry("task").or_insert_with(|| Value::String(task.clone()));
            line = Value::Object(map).to_string();
        }
        if self.json {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }
        Ok(())
    }

    /// `WorktreeReset`: how the worktree at `path` was made ready.
    pub(super) fn worktree_reset(&mut self, n: u32, path: String, how: &Prepared) -> Result<(), RunError> {
        let event = match how {
            Prepared::Kept => Event::WorktreeReset {
                mode: "keep".into(),
                created: None,
                restored: None,
                removed: None,
                stale_locks_removed: None,
                path,
            },
            Prepared::Created => Event::WorktreeReset {
                mode: "always".into(),
                created: Some(true),
                restored: None,
                removed: None,
                stale_locks_removed: None,
                path,
            },
            Prepared::Reset(r) => Event::WorktreeReset {
                mode: "always".into(),
                created: Some(r.recreated),
                restored: Some(r.restored as u64),
                removed: Some(r.removed as u64),
                stale_locks_removed: Some(r.stale_locks.iter().map(|p| p.display().to_string()).collect()),
                path,
            },
        };
        self.event(Some(n), event)
    }

    /// `ScopeChecked`: `checked` changes judged, the findings, and what was
    /// put back; `after` names the step that wrote outside (`checks`);
    /// `objects` the git objects the attempt added.
    pub(super) fn scope_checked(
        &mut self,
        n: u32,
        checked: usize,
        found: ScopeFound<'_>,
        after: Option<&str>,
    ) -> Result<(), RunError> {
        self.scope_checked_flagging(n, checked, found, &[], after)
    }

    /// [`Recorder::scope_checked`], with the files that act once the change
    /// lands flagged, not failing (`[scope] acts_after_land = "flag"`).
    pub(super) fn scope_checked_flagging(
        &mut self,
        n: u32,
        checked: usize,
        found: ScopeFound<'_>,
        flagged: &[ScopeFinding],
        after: Option<&str>,
    ) -> Result<(), RunError> {
        self.event(
            Some(n),
            Event::ScopeChecked {
                checked: checked as u64,
                violations: found.findings.to_vec(),
                flagged: flagged.to_vec(),
                restored: found.restored.to_vec(),
                after: after.map(String::from),
                objects_added: found.objects.filter(|o| !o.is_empty()).cloned(),
                environment: found.environment.to_vec(),
                noted: found.noted.to_vec(),
            },
        )
    }

    /// `CheckFinished` for a check's result.
    pub(super) fn check_finished(&mut self, n: u32, result: &CheckResult, how: CheckRun) -> Result<(), RunError> {
        let keys = |fs: &[crate::model::Failure]| fs.iter().map(|f| f.key.clone()).collect::<Vec<_>>();
        let event = match how {
            CheckRun::Configured { sandbox, env, rerun, part, window } => Event::CheckFinished {
                check: result.name.clone(),
                kind: result.kind,
                passed: result.passed,
                exit_code: result.exit_code,
                timed_out: result.timed_out,
                flaky: result.flaky,
                runs: result.runs,
                duration_ms: result.duration_ms,
                new_failures: keys(&result.failures),
                pre_existing: result.pre_existing.len() as u64,
                pre_existing_failures: Some(keys(&result.pre_existing)),
                tests_ran: Some(result.tests_ran),
                sandbox: Some(*sandbox),
                env: Some(env),
                rerun,
                reused: result.reused.clone(),
                not_reused: result.not_reused.clone(),
                builtin: None,
                warnings: None,
                part,
                started_at_ms: window.map(|w| w.0),
                ended_at_ms: window.map(|w| w.1),
                network_seen: result.network_seen.clone(),
            },
            CheckRun::Builtin => Event::CheckFinished {
                check: result.name.clone(),
                kind: result.kind,
                passed: result.passed,
                exit_code: result.exit_code,
                timed_out: false,
                flaky: false,
                runs: 1,
                duration_ms: result.duration_ms,
                new_failures: keys(&result.failures),
                pre_existing: 0,
                pre_existing_failures: None,
                tests_ran: None,
                sandbox: None,
                env: None,
                rerun: None,
                reused: None,
                not_reused: None,
                builtin: Some(true),
                warnings: Some(keys(&result.warnings)),
                part: None,
                started_at_ms: None,
                ended_at_ms: None,
                network_seen: Vec::new(),
            },
        };
        self.event(Some(n), event)
    }

    /// `AttemptCompleted` for a finished (or interrupted) attempt's record.
    pub(super) fn attempt_completed(
        &mut self,
        record: &AttemptRecord,
        watch: Option<WatchCost>,
    ) -> Result<(), RunError> {
        let required = crate::context::required_change(record);
        self.event(
            Some(record.number),
            Event::AttemptCompleted {
                outcome: record.outcome.as_str().into(),
                reason: record.reason.clone(),
                interrupted: record.interrupted.then_some(true),
                duration_ms: record.duration_ms,
                commit: record.commit.clone(),
                required_change: required.text,
                feedback: required.source,
                watch_ms: watch.as_ref().map(|w| w.spent_ms),
                watch_setup_ms: watch.as_ref().map(|w| w.setup_ms),
                watch: watch.map(|w| w.how.to_string()),
                halted: record.halted.clone(),
            },
        )
    }
}
