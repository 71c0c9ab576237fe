//! The attempt's worktree: created at the base on first use, else reset to
//! it (or, with `reset = "keep"`, left as the last attempt left it), its
//! submodules with it ([`super::submodules`]); then prepared by `worktree.include` and `worktree.setup` ([`super::prepare`]).

use super::RunError;
use super::attempt::Fixed;
use super::confine::{confinement, git_paths};
use super::disk_budget::make_room;
use super::prepare;
use super::recorder::{Prepared, Recorder};
use super::share::{share_dependencies, shared_mounts};
use super::submodules::submodules_ready;
use crate::config::ResetMode;
use crate::record::Event;
use crate::sandbox::{self, Confinement, Effective};

/// The worktree ready for attempt `n`, recorded as `WorktreeReset` (or
/// the attempt aborted when it cannot be). Returns whether it was kept.
pub(super) fn worktree(t: &Fixed<'_>, rec: &mut Recorder, n: u32) -> Result<bool, RunError> {
    t.progress.phase("preparing the worktree");
    let (repo, config, id) = (t.repo, &t.plan.config, &t.plan.id);
    let keep = config.agent.reset == ResetMode::Keep && n > t.first_attempt && repo.worktree_is_valid(&t.wt, id);
    match prepare_worktree(t, keep, n) {
        Ok(how) => rec.worktree_reset(n, t.wt.display().to_string(), &how)?,
        Err(e) => {
            // Stopped by an interruption (its setup was): not an abort.
            super::interrupt::stop_if_interrupted(id)?;
            rec.event(Some(n), Event::AttemptAborted { reason: e.to_string(), phase: "worktree".into() })?;
            t.progress.done("aborted: the worktree could not be prepared");
            return Err(e);
        }
    }
    Ok(keep)
}

fn prepare_worktree(t: &Fixed<'_>, keep: bool, n: u32) -> Result<Prepared, RunError> {
    let (repo, id, base) = (t.repo, &t.plan.id, t.base.oid);
    let how = if keep {
        Prepared::Kept
    } else if !t.wt.exists() {
        make_room(t)?;
        repo.create_worktree(&t.wt, id, base)?;
        Prepared::Created
    } else {
        Prepared::Reset(repo.reset_worktree_keeping(
            &t.wt,
            id,
            base,
            &super::share::kept(&t.plan.config.worktree.share),
        )?)
    };
    if !keep {
        submodules_ready(t)?;
    }
    share_dependencies(t)?;
    prepare::prepare(repo, &t.plan.config, &t.wt, setup_confinement(t, n)?.as_ref())?;
    Ok(how)
}

/// Back to the base after the checks on the base ran in the worktree
/// (they may write caches and build output), unless it is kept.
pub(super) fn back_to_base(t: &Fixed<'_>, n: u32) -> Result<(), RunError> {
    back_to(t, n, t.base.oid)
}

/// Back to `commit` (the base, or the last attempt's snapshot), prepared
/// as for attempt `n`: what an agent run the model provider failed left
/// is undone ([`super::transient`]).
pub(super) fn back_to(t: &Fixed<'_>, n: u32, commit: crate::git::Oid) -> Result<(), RunError> {
    let kept = super::share::kept(&t.plan.config.worktree.share);
    t.repo.reset_worktree_keeping(&t.wt, &t.plan.id, commit, &kept)?;
    submodules_ready(t)?;
    share_dependencies(t)?;
    prepare::prepare(t.repo, &t.plan.config, &t.wt, setup_confinement(t, n)?.as_ref())
}

/// How `worktree.setup` runs before attempt `n`: confined like a check
/// (the worktree, a TMPDIR of its own, `worktree.setup_network`), unless
/// the sandbox is off or `worktree.setup_unconfined` asks otherwise.
fn setup_confinement(t: &Fixed<'_>, n: u32) -> Result<Option<Confinement>, RunError> {
    let (plan, config) = (&t.plan, &t.plan.config);
    if config.worktree.setup.is_none() || config.worktree.setup_unconfined || plan.confined == Effective::Off {
        return Ok(None);
    }
    let dir = t.store.attempt(&plan.id, n);
    let tmp = dir.path().join("setup-tmp");
    let git_paths = git_paths(t, &dir);
    for d in [&tmp, &git_paths.quarantine] {
        std::fs::create_dir_all(d).map_err(|source| RunError::Tmpdir { path: d.clone(), source })?;
    }
    let mut policy = sandbox::policy(&t.wt, &tmp, config.sandbox.git, &git_paths, &plan.extra_writable);
    policy.network = config.worktree.setup_network.clone();
    policy.shared = shared_mounts(t);
    Ok(Some(confinement(t, Some(tmp), policy, &git_paths)))
}
