//! One chain of attempts of a task, once planned: the task's lock and
//! lease held, the task started (or found ended), its attempts one after
//! another, the lease given back. A task alone runs one chain; a task in
//! lanes runs one per lane ([`lane`]).

use std::path::Path;

use super::options::{Options, Placement, TaskRan};
use super::plan::Plan;
use super::progress::{Progress, Shared};
use super::start::{self, Started};
use super::{RunError, hold, interrupt, lanes::shared::LaneRun, plan};
use crate::git::Repo;
use crate::record::Store;

/// The chain of `plan`, placed as `placement`, showing its progress on
/// `progress` (made once, for the whole run).
pub(super) fn run(
    (dir, repo, store): (&Path, &Repo, &Store),
    plan: Plan,
    opts: &Options,
    placement: &Placement,
    progress: Progress,
) -> Result<TaskRan, RunError> {
    let _lock = hold::lock(store, &plan.id)?;
    let lease = hold::claim_lease(dir, opts, &plan.id, &progress)?;
    let label = placement.label(&plan.id);
    let (mut task, next) = match start::start_task(repo, store, plan, opts, progress, label) {
        Ok(Started::Now(task, next)) => (task, next),
        Ok(Started::AlreadyEnded(ending)) => {
            return hold::release(lease, Ok(ending)).map(|ending| TaskRan { ending, earlier: true });
        }
        Err(e) => return hold::release(lease, Err(e)).map(|ending| TaskRan { ending, earlier: false }),
    };
    task.fixed.lease = lease;
    let ended = task.attempts(next);
    hold::release(task.fixed.lease.take(), ended).map(|ending| TaskRan { ending, earlier: false })
}

/// Lane `lane` of a task: the task planned for this lane (its agent, the
/// lanes' base), then its chain, its lines on the lanes' `shared` board.
pub(super) fn lane(dir: &Path, opts: &Options, lane: LaneRun, shared: Shared) -> Result<TaskRan, RunError> {
    let repo = Repo::find(dir)?;
    let store = Store::new(repo.common_dir());
    let plan = plan::take_task(&repo, &store, dir, opts, Some(&lane))?;
    interrupt::stop_if_interrupted(&plan.id)?;
    let placement = Placement::Lane(lane, shared);
    let progress = placement.progress(opts, &plan.id);
    run((dir, &repo, &store), plan, opts, &placement, progress)
}
