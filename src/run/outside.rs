//! Outside the worktree: the user's checkout, watched from the run's start
//! to its end (never repaired behind the user's back), and the git
//! machinery and repository internals, marked before the agent and put
//! back or compared after it and after the checks.

use std::time::{Duration, Instant};

use super::RunError;
use super::task_run::{Attempt, TaskRun};
use crate::checkout_watch::Machinery;
use crate::git::fingerprint::{Fingerprint, fingerprint};
use crate::model::{ScopeFinding, ScopeReason};
use crate::record::Event;

/// What is watched outside the worktree during one attempt: the git
/// machinery to put back, and the repository's internals to compare.
pub(super) struct Guard {
    machinery: Machinery,
    before: Fingerprint,
}

/// What an agent changed outside its worktree.
pub(super) struct Changed {
    /// Paths of the user's checkout.
    pub checkout: Vec<String>,
    /// Parts of the repository's internals (`objects`, `refs`, ...).
    pub git_internal: Vec<String>,
}

/// Paths of the user's checkout an attempt changed, as scope findings.
pub(super) fn outside_findings(paths: &[String]) -> Vec<ScopeFinding> {
    paths
        .iter()
        .map(|p| ScopeFinding { path: p.clone(), old_path: None, reason: ScopeReason::OutsideWorktree, rule: None })
        .collect()
}

impl TaskRun<'_> {
    /// What must not change outside the worktree, marked before the agent:
    /// the checkout, the git machinery and the repository's internals.
    pub(super) fn guard_outside(&mut self) -> Guard {
        let meta = self.repo.worktree_meta(&self.plan.id);
        let before = fingerprint(self.repo.common_dir(), Some((&self.wt, &meta)));
        let started = Instant::now();
        self.watch.spent = Duration::ZERO;
        self.watch.ready(&self.wt_root, &self.progress).mark(self.repo);
        let machinery = Machinery::take(self.repo.common_dir());
        self.watch.spent += started.elapsed();
        Guard { machinery, before }
    }

    /// After the agent: the git machinery put back, the user's checkout only
    /// looked at, `AgentFinished` recorded.
    pub(super) fn after_agent(&mut self, guard: &Guard, a: &mut Attempt) -> Result<Changed, RunError> {
        let meta = self.repo.worktree_meta(&self.plan.id);
        let after = fingerprint(self.repo.common_dir(), Some((&self.wt, &meta)));
        let started = Instant::now();
        let (mut restored, not_restored) = guard.machinery.restore(self.repo.common_dir());
        for p in &not_restored {
            self.progress.say(&format!("could not restore the repository's {p}"));
        }
        // Before anything opens the worktree again: its links to the
        // repository as retry-run wrote them (the fingerprint above saw any
        // change, which the scope gate reports).
        restored.extend(self.repo.relink_worktree(&self.wt, &self.plan.id)?);
        a.record.restored = restored;
        // What the agent committed, checked, into the repository (its
        // objects went to the attempt's quarantine).
        let imported = self.repo.import_quarantine(&self.git_paths(&a.dir).quarantine)?;
        if !imported.rejected.is_empty() {
            self.progress.say(&format!(
                "the agent's git wrote {} object(s) whose content does not match their name: not imported",
                imported.rejected.len()
            ));
        }
        let checkout = self.watch.ready(&self.wt_root, &self.progress).changes(self.repo);
        self.watch.spent += started.elapsed();
        if let Some(r) = &a.record.agent {
            self.rec.event(
                Some(a.n),
                Event::AgentFinished {
                    exit_code: r.exit_code,
                    signal: r.signal,
                    timed_out: r.timed_out,
                    duration_ms: r.duration_ms,
                    output_bytes: r.output_bytes,
                    last_activity: r.last_activity.clone(),
                    usage: r.usage.clone(),
                    leftovers: r.leftovers.clone(),
                    refused_hosts: r.refused_hosts.clone(),
                    limits_hit: r.limits_hit.clone(),
                },
            )?;
            self.progress.gate(&if r.timed_out {
                "agent TIMEOUT".to_string()
            } else {
                format!("agent {}", crate::text::exit_text(r.exit_code, r.signal))
            });
        }
        Ok(Changed { checkout, git_internal: after.changed_since(&guard.before) })
    }

    /// Checks run code the agent wrote: what they changed outside the
    /// worktree is the attempt's too.
    pub(super) fn after_checks(&mut self, guard: &Guard, a: &mut Attempt) -> Result<(), RunError> {
        let started = Instant::now();
        let (restored, _) = guard.machinery.restore(self.repo.common_dir());
        a.record.restored.extend(restored);
        let relinked = self.repo.relink_worktree(&self.wt, &self.plan.id)?;
        a.record.restored.extend(relinked.iter().cloned());
        let outside = self.watch.ready(&self.wt_root, &self.progress).changes(self.repo);
        self.watch.spent += started.elapsed();
        if !outside.is_empty() || !relinked.is_empty() {
            let mut found = outside_findings(&outside);
            found.extend(relinked.into_iter().map(|part| ScopeFinding {
                path: part,
                old_path: None,
                reason: ScopeReason::GitInternal,
                rule: None,
            }));
            self.rec.scope_checked(a.n, 0, &found, &a.record.restored, Some("checks"))?;
            self.progress.gate("scope VIOLATION (a check wrote outside the worktree)");
            a.record.scope.extend(found);
        }
        Ok(())
    }
}
