//! One task's run: the task taken and planned, then its attempts, in one
//! chain ([`super::chain`]) or in lanes ([`super::lanes`]) when it has
//! them. The queue (`run -j`) runs each of its tasks here.

use std::path::Path;

use super::options::{Options, Placement, TaskRan};
use super::{RunError, chain, history, interrupt, lanes, plan};
use crate::git::Repo;
use crate::record::Store;

/// A run of the task `opts` names, placed as `placement`.
///
/// SIGINT and SIGTERM stop it: what runs is stopped, the attempt under way
/// recorded as interrupted, and [`RunError::Interrupted`] returned; a task
/// not started yet when one came does not start.
pub(crate) fn run(dir: &Path, opts: &Options, placement: Placement) -> Result<TaskRan, RunError> {
    crate::process::catch_interrupts();
    let repo = Repo::find(dir)?;
    let store = Store::new(repo.common_dir());
    let plan = plan::take_task(&repo, &store, dir, opts, None)?;
    interrupt::stop_if_interrupted(&plan.id)?;
    let progress = placement.progress(opts, &plan.id);
    // Only a task that ran in lanes has `lanes/`: the log is read here
    // for it alone (the task's own run reads it once, in `start`).
    let ran_in_lanes = store.task(&plan.id).path().join("lanes").is_dir();
    let recorded =
        ran_in_lanes.then(|| store.read(&plan.id).ok()).flatten().and_then(|v| history::state(&v.events).lanes);
    let k = lanes::count(&plan, opts, recorded)?;
    if k > 1 {
        return lanes::run((&repo, &store), plan, opts, k, &progress);
    }
    chain::run((dir, &repo, &store), plan, opts, &placement, progress)
}
