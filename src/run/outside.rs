//! Outside the worktree: the user's checkout, watched from the run's start
//! to its end (never repaired behind the user's back), and the git
//! machinery and repository internals, marked before the agent and put
//! back or compared after it and after the checks.

use std::path::Path;
use std::time::{Duration, Instant};

use super::RunError;
use super::progress::Progress;
use super::task_run::{Attempt, TaskRun};
use crate::checkout_watch::{Machinery, Outside};
use crate::git::Repo;
use crate::git::fingerprint::{Fingerprint, fingerprint};
use crate::model::{ScopeFinding, ScopeReason};
use crate::record::Event;

/// The watch of the user's checkout: started on another thread when the
/// run begins (while the worktree is prepared), ready by the first agent.
pub(super) struct Watch {
    outside: Option<Outside>,
    starting: Option<std::thread::JoinHandle<Outside>>,
    /// Time spent marking and reading it in the current attempt.
    pub spent: Duration,
}

impl Watch {
    pub fn start(repo: &Repo, skip: &Path) -> Watch {
        let (root, skip) = (repo.workdir().map(Path::to_path_buf), skip.to_path_buf());
        Watch {
            outside: None,
            starting: Some(std::thread::spawn(move || Outside::start(root.as_deref(), &skip))),
            spent: Duration::ZERO,
        }
    }

    /// The watch, once ready; says once when it falls back to stat data.
    pub fn ready(&mut self, skip: &Path, progress: &Progress) -> &mut Outside {
        let starting = &mut self.starting;
        self.outside.get_or_insert_with(|| {
            let w = starting.take().and_then(|t| t.join().ok()).unwrap_or_else(|| Outside::start(None, skip));
            if let Some(why) = &w.fallback {
                progress.say(&format!(
                    "watching your checkout by stat data instead of inotify ({why}); each attempt walks it"
                ));
            }
            w
        })
    }
}

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
        let (restored, not_restored) = guard.machinery.restore(self.repo.common_dir());
        for p in &not_restored {
            self.progress.say(&format!("could not restore the repository's {p}"));
        }
        a.record.restored = restored;
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
        let outside = self.watch.ready(&self.wt_root, &self.progress).changes(self.repo);
        self.watch.spent += started.elapsed();
        if !outside.is_empty() {
            let found = outside_findings(&outside);
            self.rec.scope_checked(a.n, 0, &found, &a.record.restored, Some("checks"))?;
            self.progress.gate("scope VIOLATION (a check wrote outside the worktree)");
            a.record.scope.extend(found);
        }
        Ok(())
    }
}
