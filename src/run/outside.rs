//! Outside the worktree: the user's checkout, watched from the run's start
//! to its end (never repaired behind the user's back), and the git
//! machinery and repository internals, marked before the agent and put
//! back or compared after it and after the checks.

use std::time::{Duration, Instant};

use super::RunError;
use super::recorder::Found;
use super::task_run::{Attempt, TaskRun};
use crate::checkout_watch::Machinery;
use crate::git::fingerprint::{Fingerprint, Part, TaskParts, fingerprint};
use crate::model::{Halt, HaltedAfter, InternalChange, ScopeFinding, ScopeReason};
use crate::outcome::internals::{Judged, judge};
use crate::record::Event;
use crate::sandbox::Effective;

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
    /// Parts of the repository's internals (`objects/1a/2b...`,
    /// `refs/heads/main`, `config`, `worktree/.git`, ...).
    pub git_internal: Vec<InternalChange>,
}

/// Paths of the user's checkout an attempt changed, as scope findings.
pub(super) fn outside_findings(paths: &[String]) -> Vec<ScopeFinding> {
    paths
        .iter()
        .map(|p| ScopeFinding { path: p.clone(), old_path: None, reason: ScopeReason::OutsideWorktree, rule: None })
        .collect()
}

/// The violations of `judged` as `git-internal` findings, but for those
/// the checkout's watch already names (`refs/heads/main`; `HEAD`, which it
/// names `.git/HEAD`).
pub(super) fn internal_findings(judged: &Judged, checkout: &[String]) -> Vec<ScopeFinding> {
    judged
        .violations
        .iter()
        .filter(|p| !checkout.iter().any(|c| c == *p || c.strip_prefix(".git/") == Some(p.as_str())))
        .map(|p| ScopeFinding { path: p.clone(), old_path: None, reason: ScopeReason::GitInternal, rule: None })
        .collect()
}

/// `sandbox.mode` as in force for a process confined as `effective`.
fn mode_name(effective: Effective) -> &'static str {
    match effective {
        Effective::Namespaces => "namespaces",
        Effective::Landlock => "landlock",
        Effective::Detect => "detect",
        Effective::Off => "off",
    }
}

impl TaskRun<'_> {
    /// The repository's internals now, with this task's worktree links.
    fn internals(&self) -> Fingerprint {
        let admin = self.repo.worktree_meta(&self.plan.id);
        let task = TaskParts { id: &self.plan.id, worktree: &self.wt, admin: &admin };
        fingerprint(self.repo.common_dir(), Some(&task))
    }

    /// What must not change outside the worktree, marked before the agent:
    /// the checkout, the git machinery and the repository's internals.
    pub(super) fn guard_outside(&mut self) -> Guard {
        let before = self.internals();
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
        let after = self.internals();
        let started = Instant::now();
        let (mut restored, not_restored) = guard.machinery.restore(self.repo.common_dir());
        for p in &not_restored {
            self.progress.say(&format!("could not restore the repository's {p}"));
        }
        // Before anything opens the worktree again: its links to the
        // repository as retry-run wrote them (the fingerprint above saw any
        // change, which the scope gate reports).
        let relinked = self.repo.relink_worktree(&self.wt, &self.plan.id, self.base.oid)?;
        // What was removed from the worktree's administrative directory (a
        // link, a FIFO, a HEAD naming a branch) is the attempt's violation.
        let secured: Vec<InternalChange> = relinked
            .iter()
            .filter(|p| p.starts_with("worktree-admin/") && p.contains(" ("))
            .map(|p| InternalChange { part: p.clone(), change: crate::model::PartChange::Changed })
            .collect();
        restored.extend(relinked);
        a.record.restored = restored;
        // What the agent committed, checked, into the repository (its
        // objects went to the attempt's quarantine).
        let git_paths = self.git_paths(&a.dir);
        let imported = self.repo.import_quarantine(&git_paths.quarantine, &git_paths.submodule_objects)?;
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
        let mut git_internal = after.compare(&guard.before);
        git_internal.extend(secured);
        Ok(Changed { checkout, git_internal })
    }

    /// Checks run code the agent wrote: what they changed outside the
    /// worktree is the attempt's too. Where nothing confined them and they
    /// changed the git links or machinery, the attempt is halted
    /// (`a.record.halted`): nothing unconfined runs after them.
    pub(super) fn after_checks(&mut self, guard: &mut Guard, a: &mut Attempt) -> Result<(), RunError> {
        // Compared with the mark before the agent: the agent changed nothing
        // there but objects added (the checks would not run otherwise), and
        // retry-run wrote the snapshot's ref since.
        if let Some(commit) = a.commit {
            let refname = crate::model::refs::attempt(&self.plan.id, a.n);
            guard.before.parts.insert(refname, Part { content: commit.to_string(), times: None });
        }
        let judged = judge(
            &self.internals().compare(&guard.before),
            matches!(a.confinement.effective, Effective::Landlock | Effective::Namespaces),
        );
        let started = Instant::now();
        let (restored, _) = guard.machinery.restore(self.repo.common_dir());
        a.record.restored.extend(restored);
        let relinked = self.repo.relink_worktree(&self.wt, &self.plan.id, self.base.oid)?;
        a.record.restored.extend(relinked.iter().cloned());
        let outside = self.watch.ready(&self.wt_root, &self.progress).changes(self.repo);
        self.watch.spent += started.elapsed();
        let mut found = outside_findings(&outside);
        let mut internal = internal_findings(&judged, &outside);
        // A link put back that the fingerprint missed (changed and changed
        // back in between, or not part of it).
        for part in relinked {
            if !internal.iter().any(|f| f.path == part) {
                internal.push(ScopeFinding {
                    path: part,
                    old_path: None,
                    reason: ScopeReason::GitInternal,
                    rule: None,
                });
            }
        }
        found.extend(internal);
        if !found.is_empty() {
            let now = Found { findings: &found, restored: &a.record.restored, objects: None };
            self.rec.scope_checked(a.n, 0, now, Some("checks"))?;
            self.progress.gate("scope VIOLATION (a check wrote outside the worktree)");
            a.record.scope.extend(found);
        }
        self.halt(a, HaltedAfter::Checks, judged.halt);
        Ok(())
    }

    /// Halts attempt `a` when `parts` (git links and machinery changed by
    /// its unconfined `after` step) is not empty, saying so.
    pub(super) fn halt(&mut self, a: &mut Attempt, after: HaltedAfter, parts: Vec<String>) {
        if parts.is_empty() || a.record.halted.is_some() {
            return;
        }
        let mode = mode_name(a.confinement.effective);
        self.progress.say(&format!(
            "attempt {}: nothing confines it (sandbox.mode = \"{mode}\") and its {after} changed {}; \
             retry-run runs none of its checks or verifier and no further attempt",
            a.n,
            parts.join(", ")
        ));
        a.record.halted = Some(Halt { after, parts });
    }
}
