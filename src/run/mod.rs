//! `retry-run run`: a task's attempts, one after another, until one
//! succeeds or the task escalates.
//!
//! Every step is recorded as an event (docs/record.md) once it is done; the
//! attempt number comes from the log, so a run killed at any point is
//! continued by the next one. Decisions are pure and live elsewhere
//! ([`crate::outcome`], [`crate::context`]); this module is the shell that
//! runs them, one file per phase, in the order they run:
//!
//! 1. `plan`: the task, the effective config (flags over front matter
//!    over `retry-run.toml`), the agent, the scope's rules and the sandbox,
//!    all checked before anything is recorded;
//! 2. `start`: the record read and verified, an attempt a killed run left
//!    closed as interrupted, the base fixed, `TaskStarted` recorded;
//! 3. `task_run`: per attempt, the budget gate, the attempt, and what its
//!    outcome means for the task (success, escalation or another attempt).
//!
//! One attempt (`task_run::TaskRun::attempt`) is, in order, each phase a
//! function over `attempt::Fixed` (the task's fixed parts) and the
//! `attempt::Attempt` it works on:
//! `worktree` (created, reset or kept; then [`prepare`]: the
//! `worktree.include` files and the `worktree.setup` command), `confine`
//! (its TMPDIR and what it may write), the checks on the base
//! ([`gates::checks`], once per base), `outside` (the user's checkout,
//! watched for the whole run by `checkout_watch::whole_run`, and the git machinery marked), `prompt` (the retry context, the prompt and
//! the manifest), `agent` (the agent run confined, its [`leftovers`]
//! moved out), `outside` again (what it changed there), `snapshot` (the
//! worktree as a commit), then the gates (`gates::scope_gate`,
//! [`gates::checks`], [`gates::builtin`], [`gates::verifier`]) and the
//! outcome recorded. `recorder` builds every event the loop appends.
//!
//! After the loop, [`land`] brings a task's result onto a branch (`retry-run
//! land`), running the same gates again on a replay.
//!
//! Around the loop: `task` runs one task, in one `chain` of attempts or in
//! `lanes/` (`run --lanes`, a chain per lane); [`queue`] runs several
//! tasks (`run -j`), each through `task`. `options` says what the user
//! asked and where a run sits (alone, among tasks, a lane); `hold` takes
//! the task's lock and, through `held_lease`, its lease on a remote;
//! `interrupt` says when to stop; [`progress`] shows what happens; and
//! `error` holds what can go wrong, for the command line to turn into
//! exit codes. This file only starts a task: nothing calls back into it.

mod agent;
mod agent_start;
mod attempt;
mod chain;
mod confine;
mod disk_budget;
mod error;
pub(crate) mod gates;
mod held_lease;
mod hold;
mod interrupt;
pub(crate) mod land;
mod lanes;
mod options;
mod outside;
mod plan;
pub(crate) mod prepare;
pub(crate) mod progress;
mod prompt;
pub(crate) mod queue;
mod recorder;
mod self_checks;
pub(crate) mod share;
mod slots;
mod snapshot;
mod start;
mod submodules;
mod surroundings;
mod task;
mod task_run;
mod transient;
mod unconfined;
mod worktree;

pub(crate) mod leftovers;

use std::path::Path;

use crate::git::Repo;
use crate::record::Store;

use crate::record::state as history;
pub(crate) use error::{Ending, RunError};
pub(crate) use options::{Options, Placement, TaskRan};
pub(crate) use plan::{effective_config, landing_gate, recorded_task};
pub(crate) use start::{NextContext, next_context};

/// `retry-run run` of one task: take the task, then its attempts one after
/// another until one succeeds or the task escalates.
pub(crate) fn run(dir: &Path, opts: Options) -> Result<Ending, RunError> {
    task::run(dir, &opts, Placement::Alone).map(|r| r.ending)
}

/// The id a run of `opts` gives its task; a bad task fails here, before
/// anything runs.
pub(crate) fn task_id(dir: &Path, opts: &Options) -> Result<String, RunError> {
    let repo = Repo::find(dir)?;
    let store = Store::new(repo.common_dir());
    plan::task_and_id(&store, dir, opts, None).map(|(_, id)| id)
}
