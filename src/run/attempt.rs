//! What an attempt's phases share: the task's parts that stay fixed while
//! it runs ([`Fixed`]) and the attempt under way ([`Attempt`]). Each phase
//! is a free function in its own file over these and the few mutable parts
//! it needs (the recorder, the watch); `task_run` calls them in order.

use std::path::PathBuf;
use std::time::Instant;

use super::RunError;
use super::held_lease::HeldLease;
use super::plan::Plan;
use super::progress::Progress;
use crate::context::TaskText;
use crate::git::{Oid, Repo, Revision};
use crate::model::AttemptRecord;
use crate::record::Store;
use crate::record::layout::AttemptDir;
use crate::sandbox::Confinement;

/// What stays fixed while a task runs: the plan, where it runs and its
/// attempt window. Every phase reads it.
pub(super) struct Fixed<'a> {
    pub repo: &'a Repo,
    pub store: &'a Store,
    pub json: bool,
    pub plan: Plan,
    pub progress: Progress,
    pub base: Revision,
    pub first_attempt: u32,
    /// Attempts of this round aborted before their agent ran: not counted
    /// among those tried.
    pub aborted: u32,
    pub last_allowed: u32,
    pub task_text: TaskText,
    /// Where the task worktrees live, and this task's.
    pub wt_root: PathBuf,
    pub wt: PathBuf,
    /// With `--remote`: the lease, and the record sent at each attempt's
    /// start and end.
    pub lease: Option<HeldLease>,
    /// The reviews of the task's results, read by each attempt's context.
    pub reviews: Reviewed,
}

/// The reviews of a task's results (`Reviewed` events, in log order), and
/// whether the latest rejection may lead the first prompt of a round.
pub(super) struct Reviewed {
    pub all: Vec<crate::model::Review>,
    pub leads: bool,
}

impl Fixed<'_> {
    /// The command that runs this task again as it runs now (`extra`, such
    /// as `--again`, after its id), ready to paste into a shell.
    pub(super) fn resume_command(&self, extra: &str) -> String {
        let extra: Vec<&str> = extra.split_whitespace().collect();
        crate::outcome::resume::resume_command(&self.plan.id, &extra, &self.plan.resume_args)
    }

    /// With `--remote`, the record as it stands sent to the remote.
    pub(super) fn publish(&self) -> Result<(), RunError> {
        let lane = self.plan.lane.as_ref().and_then(|l| l.shared.lease.as_deref());
        match self.lease.as_ref().or(lane) {
            Some(l) => l.publish(),
            None => Ok(()),
        }
    }
}

/// One attempt under way: what its phases hand one another.
pub(super) struct Attempt {
    pub n: u32,
    /// `tasks/<id>/attempts/<n>/`.
    pub dir: AttemptDir,
    pub started: Instant,
    /// Filled in by each phase as it ends.
    pub record: AttemptRecord,
    /// How its agent and checks are confined.
    pub confinement: Confinement,
    /// The environment its agent and checks share.
    pub env: Vec<(String, String)>,
    /// The snapshot's commit, once taken.
    pub commit: Option<Oid>,
    /// Submodules (paths) the snapshot found with changes of their own.
    pub dirty_submodules: Vec<Vec<u8>>,
    /// What the snapshot cut out of the tree (too deep to read), each a
    /// violation the scope gate reports.
    pub cut: Vec<crate::model::ScopeFinding>,
    /// Whether its checks may reuse earlier runs' output and store theirs
    /// (`[retry] reuse`, `run --fresh-baseline`).
    pub reuse: crate::outcome::reuse::Switches,
}

impl Attempt {
    /// The agent ended by itself, without a timeout or a crash.
    pub(super) fn agent_ok(&self) -> bool {
        self.record.agent.as_ref().is_some_and(|a| !a.timed_out && !a.crashed())
    }
}

/// What the attempts so far left for the next, as the self-check desk
/// reads it: the checks on the base and the earlier attempts' records.
#[derive(Clone, Copy)]
pub(super) struct Carried<'r> {
    pub baselines: Option<&'r [crate::outcome::check::Baseline]>,
    pub prior: &'r [AttemptRecord],
}
