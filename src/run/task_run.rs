//! Phase 3, the task under way: its attempts one after another, each
//! gated by the task's budgets, and what each outcome means for the task
//! (success, escalation, or another attempt).

use std::time::Instant;

use super::attempt::{Attempt, Carried, Fixed};
use super::gates::{base, builtin, scope_gate, stages, verifier};
use super::recorder::{Recorder, WatchCost};
use super::{Ending, RunError};
use super::{agent, confine, outside, prompt, snapshot, worktree};
use crate::checkout_watch::whole_run::Watch;
use crate::config::KeepWorktrees;
use crate::git::Oid;
use crate::model::{AttemptRecord, refs};
use crate::outcome;
use crate::outcome::check::Baseline;
use crate::record::Event;
use crate::text::visible;

/// A task under way: what stays fixed while it runs, the record it
/// appends to, and what its attempts carry from one to the next.
pub(super) struct TaskRun<'a> {
    pub fixed: Fixed<'a>,
    pub rec: Recorder,
    /// The checks on the base, run before the first attempt that needs them.
    pub baselines: Option<Vec<Baseline>>,
    /// The base's full runs under way aside, while they are; stopped when
    /// the run ends first (dropped).
    pub aside: Option<super::gates::base_aside::Aside>,
    /// The user's checkout, watched from the run's start to its end.
    pub watch: Watch,
    /// Manifest hashes of the attempts so far, chained into the next.
    pub manifests: Vec<String>,
    /// Every completed attempt; each attempt adds its own as it ends.
    pub prior: Vec<AttemptRecord>,
}

impl<'a> TaskRun<'a> {
    /// The attempts from `next` until one succeeds or the task escalates.
    /// SIGINT or SIGTERM ends it with [`RunError::Interrupted`], the attempt
    /// under way recorded as interrupted.
    pub(super) fn attempts(&mut self, next: u32) -> Result<Ending, RunError> {
        let ending = self.until_the_end(next);
        // The pids cgroup (root only) of the task's last confined process,
        // which ended before the kernel had taken its namespaces down:
        // removed once it is empty, as each confined process removes those
        // of the ones before it.
        crate::sandbox::layers::limits::sweep_own(std::time::Duration::from_millis(200));
        let ending = ending?;
        self.watch.retire();
        self.leave_worktree(ending);
        Ok(ending)
    }

    /// The ended task's worktree removed, unless `[worktree] keep` keeps
    /// it: the record and the attempts' commits hold what it held. A
    /// worktree that cannot be removed is left, and said so.
    fn leave_worktree(&mut self, ending: Ending) {
        if keeps(self.fixed.plan.config.worktree.keep, ending) || !self.fixed.wt.exists() {
            return;
        }
        let id = self.fixed.plan.id.clone();
        let bytes = crate::git::nofollow_fs::disk_usage(&self.fixed.wt);
        match self.fixed.repo.remove_worktree(&self.fixed.wt, &id) {
            Ok(()) => {
                let keep = match self.fixed.plan.config.worktree.keep {
                    KeepWorktrees::Failed => "failed",
                    _ => "none",
                };
                let reason = format!("the task ended ([worktree] keep = \"{keep}\")");
                let path = self.fixed.wt.display().to_string();
                if let Err(e) = self.rec.event(None, Event::WorktreeRemoved { path, bytes, reason }) {
                    self.fixed.progress.say(&format!("task {id}: {e}"));
                }
            }
            Err(e) => {
                self.fixed.progress.say(&format!("task {id}: its worktree stays at {}: {e}", self.fixed.wt.display()))
            }
        }
    }

    fn until_the_end(&mut self, next: u32) -> Result<Ending, RunError> {
        for n in next.max(self.fixed.first_attempt)..=self.fixed.last_allowed {
            match super::interrupt::stop_if_interrupted(&self.fixed.plan.id) {
                Err(RunError::LaneStopped { .. }) => return self.lane_stopped(n - 1),
                Err(e) => {
                    self.fixed
                        .progress
                        .say(&format!("task {}: stopped before attempt {n}, which did not start", self.fixed.plan.id));
                    return Err(e);
                }
                Ok(()) => {}
            }
            if let Some(ending) = self.budget_gate(n)? {
                return Ok(ending);
            }
            let started = Instant::now();
            let record = match self.attempt(n, started) {
                Err(RunError::Interrupted { signal, .. }) => return Err(self.interrupted(n, started, signal)),
                Err(RunError::LaneStopped { .. }) => {
                    self.stopped(n, started)?;
                    return self.lane_stopped(n);
                }
                other => other?,
            };
            if let Some(ending) = self.conclude(record)? {
                return Ok(ending);
            }
        }
        self.out_of_attempts()
    }

    /// One attempt: each phase a function in its own file, recorded as it
    /// ends. Between phases, a SIGINT or SIGTERM stops it
    /// (`Err(Interrupted)`).
    fn attempt(&mut self, n: u32, started: Instant) -> Result<AttemptRecord, RunError> {
        let id = self.fixed.plan.id.clone();
        let stop = || super::interrupt::stop_if_interrupted(&id);
        let t = &self.fixed;
        t.progress.attempt(n, t.last_allowed);
        self.rec.event(Some(n), Event::AttemptStarted { max_attempts: t.last_allowed })?;
        t.publish()?;
        // `worktree.setup` runs in the worktree the last agent left, and
        // nothing confines it in detect mode: in the repository's
        // unconfined window, so that it is never charged to another's.
        let setup_window = match t.plan.config.worktree.setup {
            Some(_) => outside::hold_window(t)?,
            None => None,
        };
        let kept = worktree::worktree(t, &mut self.rec, n)?;
        drop(setup_window);
        stop()?;
        let mut a = confine::confine(t, n, started)?;
        base::baseline_once(t, &mut self.rec, (&mut self.baselines, &mut self.aside), &a, kept)?;
        stop()?;
        let mut guard = outside::guard_outside(t, &mut self.rec, &mut self.watch)?;
        let prompt = prompt::assemble_prompt(t, &mut self.rec, &self.prior, &mut self.manifests, &a)?;
        stop()?;
        outside::mark_beside(t, &mut guard, &a);
        let carried = Carried { baselines: self.baselines.as_deref(), prior: &self.prior };
        agent::run_agent(t, &mut self.rec, carried, &mut a, &prompt)?;
        // What the agent changed outside is compared and put back even when
        // it was stopped by an interruption.
        let outside = outside::after_agent(t, &mut self.rec, &mut self.watch, &mut guard, &mut a)?;
        // The run's last look at the checkout, when this is its last
        // attempt and no check runs (nothing later in a run reads it).
        if n == t.last_allowed && t.plan.config.checks.is_empty() {
            self.watch.retire();
        }
        stop()?;
        let cmp = snapshot::snapshot(t, &mut self.rec, &mut a)?;
        scope_gate::scope_gate(t, &mut self.rec, &mut a, &cmp, outside)?;
        stop()?;
        match outcome::skip_checks(&a.record) {
            None => {
                outside::before_checks(t, &mut self.watch, &mut guard, &a)?;
                let mut none = Vec::new();
                let baselines = self.baselines.as_mut().unwrap_or(&mut none);
                stages::configured_checks(t, &mut self.rec, (baselines, self.aside.as_ref()), &mut a)?;
                if !t.plan.config.checks.is_empty() {
                    outside::after_checks(t, &mut self.rec, &mut self.watch, &mut guard, &mut a)?;
                    if n == t.last_allowed {
                        self.watch.retire();
                    }
                }
                stop()?;
                if a.record.halted.is_none() {
                    builtin::builtin_checks(t, &mut self.rec, baselines, &mut a, &cmp)?;
                    verifier::review(t, &mut self.rec, &mut a, &cmp)?;
                    stop()?;
                }
            }
            Some(outcome::Skip::Halted) => t.progress.gate("checks and verifier NOT run (halted)"),
            Some(_) => {}
        }
        outside::after_last_step(t, &mut self.rec, &mut a)?;
        self.record_outcome(a)
    }

    /// Attempt `n`, stopped by `signal`: recorded as CRASH (interrupted), as
    /// the next run would record an attempt a killed run left, and where
    /// the task stands said. Returns the error the run ends with.
    fn interrupted(&mut self, n: u32, started: Instant, signal: i32) -> RunError {
        let id = self.fixed.plan.id.clone();
        let record = AttemptRecord::interrupted(n, started.elapsed().as_millis() as u64);
        let dir = self.fixed.store.attempt(&id, n);
        let _ = std::fs::remove_dir_all(dir.tmp());
        let recorded = crate::record::store::write_json(&dir.attempt_json(), &record)
            .map_err(RunError::from)
            .and_then(|()| self.rec.attempt_completed(&record, None))
            .and_then(|()| self.fixed.publish());
        if let Err(e) = recorded {
            return e;
        }
        self.fixed.progress.done(record.outcome.as_str());
        self.fixed.progress.say(&format!(
            "task {id}: attempt {n} of {} was interrupted ({}) and is recorded as CRASH (interrupted)\n  resume: {}",
            self.fixed.last_allowed,
            crate::process::signal_name(signal),
            self.fixed.resume_command(""),
        ));
        RunError::Interrupted { task: id, signal, resume: self.fixed.resume_command("") }
    }

    /// Attempt `n` of a lane, stopped because another lane won: recorded
    /// as STOPPED, neither success nor failure.
    fn stopped(&mut self, n: u32, started: Instant) -> Result<(), RunError> {
        let why = self.fixed.plan.lane.as_ref().map(|l| l.shared.why_stopped()).unwrap_or_default();
        let record = AttemptRecord::stopped(n, started.elapsed().as_millis() as u64, &why);
        let dir = self.fixed.store.attempt(&self.fixed.plan.id, n);
        let _ = std::fs::remove_dir_all(dir.tmp());
        crate::record::store::write_json(&dir.attempt_json(), &record)?;
        self.rec.attempt_completed(&record, None)?;
        self.fixed.progress.done(record.outcome.as_str());
        self.prior.push(record);
        Ok(())
    }

    /// The lane ends, stopped after attempt `last` because another lane
    /// won (`LaneStopped`).
    fn lane_stopped(&mut self, last: u32) -> Result<Ending, RunError> {
        let why = self.fixed.plan.lane.as_ref().map(|l| l.shared.why_stopped()).unwrap_or_default();
        let attempts = (last + 1).saturating_sub(self.fixed.first_attempt).saturating_sub(self.fixed.aborted);
        self.rec.event((last > 0).then_some(last), Event::LaneStopped { reason: why.clone(), attempts })?;
        self.fixed.progress.say(&format!("stopped: {why}"));
        Ok(Ending::Escalated)
    }

    /// No attempt starts once the task has spent its cost or time budget
    /// (in lanes: every lane's attempts count, and `max_attempts` is the
    /// whole task's).
    fn budget_gate(&mut self, n: u32) -> Result<Option<Ending>, RunError> {
        let spent = match &self.fixed.plan.lane {
            Some(l) if !l.shared.take_attempt() => Some(format!(
                "the task's {} attempts (max_attempts) are spent across its lanes",
                l.shared.max_attempts()
            )),
            Some(l) => outcome::budget_spent(&self.fixed.plan.config.retry, &l.shared.all_attempts()),
            None => outcome::budget_spent(&self.fixed.plan.config.retry, &self.prior),
        };
        let Some(why) = spent else { return Ok(None) };
        let tried = (n - self.fixed.first_attempt).saturating_sub(self.fixed.aborted);
        self.rec.event(
            (n > 1).then_some(n - 1),
            Event::TaskEscalated { reason: why.clone(), attempts: tried, budget: Some(true) },
        )?;
        let id = &self.fixed.plan.id;
        self.fixed.progress.say(&format!("task {id} escalated: {why}\n  report: retry-run report {id}"));
        Ok(Some(Ending::Escalated))
    }

    /// The attempt's outcome classified, `attempt.json` written, the end
    /// told and recorded (`AttemptCompleted`).
    fn record_outcome(&mut self, mut a: Attempt) -> Result<AttemptRecord, RunError> {
        let n = a.n;
        let classified = outcome::classify(&a.record);
        a.record.outcome = classified.outcome;
        a.record.reason = classified.reason;
        a.record.duration_ms = a.started.elapsed().as_millis() as u64;
        crate::record::store::write_json(&a.dir.attempt_json(), &a.record)?;
        if let Some(t) = &a.confinement.tmpdir {
            let _ = std::fs::remove_dir_all(t);
        }
        let record = a.record;
        let outside_now: Vec<&str> = record
            .scope
            .iter()
            .filter(|v| v.reason == crate::model::ScopeReason::OutsideWorktree)
            .map(|v| v.path.as_str())
            .collect();
        if !outside_now.is_empty() {
            self.fixed.progress.say(&format!(
                "attempt {n} changed your checkout outside its worktree: {}; retry-run does not undo this (see `git status` there)",
                outside_now.join(", ")
            ));
        }
        if !record.restored.is_empty() {
            self.fixed.progress.say(&format!(
                "attempt {n} changed the repository's {}; put back as it was before the attempt",
                record.restored.join(", ")
            ));
        }
        let spent_ms = self.watch.spent.as_secs_f64() * 1000.0;
        let watch = self.watch.cost(&self.fixed.wt_root, &|m| self.fixed.progress.say(m));
        let cost = WatchCost {
            spent_ms,
            setup_ms: watch.setup.as_secs_f64() * 1000.0,
            how: if watch.by_stat { "stat" } else { "inotify" },
        };
        self.rec.attempt_completed(&record, Some(cost))?;
        self.fixed.progress.done(record.outcome.as_str());
        self.fixed.publish()?;
        Ok(record)
    }

    /// What the attempt's outcome means for the task: success (the branch
    /// set), escalation, or another attempt (`None`).
    fn conclude(&mut self, record: AttemptRecord) -> Result<Option<Ending>, RunError> {
        let n = record.number;
        let refname = refs::attempt(&self.fixed.plan.id, n);
        let retry_on = &self.fixed.plan.config.retry.on;
        let mut next = outcome::next_step(&record, retry_on, &refname);
        if next == outcome::Next::Retry {
            let prev = self.prior.last();
            let timed_out = record.outcome == crate::model::Outcome::Timeout;
            let same = timed_out && prev.is_some_and(|p| self.same_tree(p, &record));
            if let Some(why) = outcome::repeated_timeout(prev, &record, same, retry_on) {
                next = outcome::Next::Escalate(why);
            }
        }
        let ending = match next {
            outcome::Next::Succeed => Some(self.succeed(n, &record)?),
            outcome::Next::Escalate(reason) => Some(self.escalate(n, reason)?),
            outcome::Next::Retry => None,
        };
        if let Some(l) = &self.fixed.plan.lane {
            l.shared.concluded(l.lane, &record);
        }
        self.prior.push(record);
        Ok(ending)
    }

    /// Whether the snapshots of attempts `a` and `b` hold the same tree
    /// (no when either is missing or unreadable).
    fn same_tree(&self, a: &AttemptRecord, b: &AttemptRecord) -> bool {
        let tree = |r: &AttemptRecord| {
            let commit = r.commit.as_deref()?.parse::<Oid>().ok()?;
            self.fixed.repo.tree_of(commit).ok()
        };
        tree(a).is_some_and(|x| tree(b) == Some(x))
    }

    /// The task succeeded: its branch set to the attempt's commit.
    fn succeed(&mut self, n: u32, record: &AttemptRecord) -> Result<Ending, RunError> {
        let id = &self.fixed.plan.id;
        let commit =
            record.commit.as_deref().and_then(|c| c.parse::<Oid>().ok()).ok_or(RunError::NoSnapshot { attempt: n })?;
        // A lane leaves no branch of its own: its attempt's ref stands for
        // it, and the task's branch is set to the lane chosen.
        let branch = match &self.fixed.plan.lane {
            Some(l) => {
                l.shared.passed(l.lane);
                refs::attempt(id, n)
            }
            None => {
                let branch = refs::success_branch(id);
                self.fixed.repo.set_branch(&branch, commit)?;
                branch
            }
        };
        let tolerated = outcome::tolerated(record);
        let warnings: Vec<String> =
            record.checks.iter().flat_map(|c| c.warnings.iter().map(|w| w.label.clone())).collect();
        self.rec.event(
            Some(n),
            Event::TaskSucceeded {
                commit: commit.to_string(),
                branch: branch.clone(),
                worktree: self.fixed.wt.display().to_string(),
                tolerated: tolerated.clone(),
                warnings: warnings.clone(),
            },
        )?;
        if self.rec.label.is_some() {
            self.fixed.progress.say(&format!("succeeded at attempt {n} (branch {branch})"));
        } else if !self.fixed.json {
            crate::console::outln!("task {id} succeeded at attempt {n}");
            crate::console::outln!("  branch:   {branch} ({commit})");
            if keeps(self.fixed.plan.config.worktree.keep, Ending::Succeeded) {
                crate::console::outln!("  worktree: {}", self.fixed.wt.display());
            } else {
                crate::console::outln!(
                    "  worktree: removed ([worktree] keep); `retry-run worktree create {id} --attempt {n}` brings it back"
                );
            }
            let counts = outcome::base_counts(record);
            if !counts.is_empty() {
                let counts = visible(&counts.join(", ")).into_owned();
                crate::console::outln!("  still failing, as on the base ({}): {counts}", outcome::tolerated_by(record));
            }
            for w in &warnings {
                crate::console::outln!("  test-integrity warning: {}", visible(w));
            }
            for f in &record.flagged {
                crate::console::outln!("  flagged:  {} ({})", f.path, crate::context::required::acts_after_land(f));
            }
        }
        Ok(Ending::Succeeded)
    }

    fn escalate(&mut self, n: u32, reason: String) -> Result<Ending, RunError> {
        let id = &self.fixed.plan.id;
        self.rec.event(
            Some(n),
            Event::TaskEscalated {
                reason: reason.clone(),
                attempts: (n - self.fixed.first_attempt + 1).saturating_sub(self.fixed.aborted),
                budget: None,
            },
        )?;
        self.fixed.progress.say(&format!(
            "task {id} escalated: {reason}\n  report:   retry-run report {id}\n  attempts: refs/retry-run/{id}/*  (retry-run inspect {id}/{n})"
        ));
        Ok(Ending::Escalated)
    }

    /// Every allowed attempt failed.
    fn out_of_attempts(&mut self) -> Result<Ending, RunError> {
        let tried = (self.fixed.last_allowed + 1 - self.fixed.first_attempt).saturating_sub(self.fixed.aborted);
        let reason = format!("{tried} attempt{} failed", crate::text::plural(tried as usize));
        self.rec.event(
            Some(self.fixed.last_allowed),
            Event::TaskEscalated { reason: reason.clone(), attempts: tried, budget: None },
        )?;
        let id = &self.fixed.plan.id;
        self.fixed.progress.say(&format!("task {id} escalated: {reason}\n  report: retry-run report {id}"));
        Ok(Ending::Escalated)
    }
}

/// Whether a task that ended so keeps its worktree under `keep`. Pure.
fn keeps(keep: KeepWorktrees, ending: Ending) -> bool {
    match keep {
        KeepWorktrees::All => true,
        KeepWorktrees::Failed => ending == Ending::Escalated,
        KeepWorktrees::None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_says_which_ended_tasks_keep_their_worktree() {
        use Ending::*;
        use KeepWorktrees as K;
        let table = [
            (K::None, Succeeded, false),
            (K::None, Escalated, false),
            (K::Failed, Succeeded, false),
            (K::Failed, Escalated, true),
            (K::All, Succeeded, true),
            (K::All, Escalated, true),
        ];
        for (keep, ending, kept) in table {
            assert_eq!(keeps(keep, ending), kept, "{keep:?} {ending:?}");
        }
    }
}
