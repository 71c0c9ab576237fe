//! The attempt's worktree: created at the base on first use, else reset to
//! it (or, with `reset = "keep"`, left as the last attempt left it), its
//! submodules with it ([`super::submodules`]); then prepared by `worktree.include` and `worktree.setup` ([`super::prepare`]).

use super::RunError;
use super::prepare;
use super::recorder::Prepared;
use super::task_run::TaskRun;
use crate::config::ResetMode;
use crate::record::Event;
use crate::sandbox::{self, Confinement, Effective};

impl TaskRun<'_> {
    /// The worktree ready for attempt `n`, recorded as `WorktreeReset` (or
    /// the attempt aborted when it cannot be). Returns whether it was kept.
    pub(super) fn worktree(&mut self, n: u32) -> Result<bool, RunError> {
        self.progress.phase("preparing the worktree");
        let (repo, config, id) = (self.repo, &self.plan.config, &self.plan.id);
        let keep =
            config.agent.reset == ResetMode::Keep && n > self.first_attempt && repo.worktree_is_valid(&self.wt, id);
        match self.prepare_worktree(keep, n) {
            Ok(how) => self.rec.worktree_reset(n, self.wt.display().to_string(), &how)?,
            Err(e) => {
                // Stopped by an interruption (its setup was): not an abort.
                super::stop_if_interrupted(id)?;
                self.rec.event(Some(n), Event::AttemptAborted { reason: e.to_string(), phase: "worktree".into() })?;
                self.progress.done("aborted: the worktree could not be prepared");
                return Err(e);
            }
        }
        Ok(keep)
    }

    fn prepare_worktree(&self, keep: bool, n: u32) -> Result<Prepared, RunError> {
        let (repo, id, base) = (self.repo, &self.plan.id, self.base.oid);
        let how = if keep {
            Prepared::Kept
        } else if !self.wt.exists() {
            self.make_room()?;
            repo.create_worktree(&self.wt, id, base)?;
            Prepared::Created
        } else {
            Prepared::Reset(repo.reset_worktree_keeping(
                &self.wt,
                id,
                base,
                &super::share::kept(&self.plan.config.worktree.share),
            )?)
        };
        if !keep {
            self.submodules_ready()?;
        }
        self.share_dependencies()?;
        prepare::prepare(repo, &self.plan.config, &self.wt, self.setup_confinement(n)?.as_ref())?;
        Ok(how)
    }

    /// Back to the base after the checks on the base ran in the worktree
    /// (they may write caches and build output), unless it is kept.
    pub(super) fn back_to_base(&self, n: u32) -> Result<(), RunError> {
        let kept = super::share::kept(&self.plan.config.worktree.share);
        self.repo.reset_worktree_keeping(&self.wt, &self.plan.id, self.base.oid, &kept)?;
        self.submodules_ready()?;
        self.share_dependencies()?;
        prepare::prepare(self.repo, &self.plan.config, &self.wt, self.setup_confinement(n)?.as_ref())
    }

    /// How `worktree.setup` runs before attempt `n`: confined like a check
    /// (the worktree, a TMPDIR of its own, `worktree.setup_network`), unless
    /// the sandbox is off or `worktree.setup_unconfined` asks otherwise.
    fn setup_confinement(&self, n: u32) -> Result<Option<Confinement>, RunError> {
        let (plan, config) = (&self.plan, &self.plan.config);
        if config.worktree.setup.is_none() || config.worktree.setup_unconfined || plan.confined == Effective::Off {
            return Ok(None);
        }
        let dir = self.store.attempt(&plan.id, n);
        let tmp = dir.path().join("setup-tmp");
        let git_paths = self.git_paths(&dir);
        for d in [&tmp, &git_paths.quarantine] {
            std::fs::create_dir_all(d).map_err(|source| RunError::Tmpdir { path: d.clone(), source })?;
        }
        let mut policy = sandbox::policy(&self.wt, &tmp, config.sandbox.git, &git_paths, &plan.extra_writable);
        policy.network = config.worktree.setup_network.clone();
        policy.shared = self.shared_mounts();
        Ok(Some(self.confinement(Some(tmp), policy, &git_paths)))
    }
}
