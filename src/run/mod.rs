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
//! Around the loop: [`queue`] runs several tasks (`run -j`), `lanes/` one
//! task's attempt chains at once (`run --lanes`), `held_lease`
//! keeps a task's lease on a remote, [`progress`] shows what happens, and
//! `error` holds what can go wrong, for the command line to turn into
//! exit codes.

mod agent;
mod agent_start;
mod attempt;
mod confine;
mod disk_budget;
mod error;
pub(crate) mod gates;
mod held_lease;
pub(crate) mod land;
mod lanes;
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
mod task_run;
mod transient;
mod unconfined;
mod worktree;

pub(crate) mod leftovers;

use std::path::{Path, PathBuf};

use crate::git::Repo;
use crate::record::state as history;
use crate::record::{RecordError, Store};
use progress::{Mode, Progress};
use start::Started;

pub(crate) use error::{Ending, RunError};
pub(crate) use plan::{effective_config, landing_gate, recorded_task};
pub(crate) use start::{NextContext, next_context};

/// What `run` was asked to do.
#[derive(Debug, Clone, Default)]
pub(crate) struct Options {
    pub config_path: Option<PathBuf>,
    pub task_file: Option<PathBuf>,
    pub task_text: Option<String>,
    pub id: Option<String>,
    pub base: Option<String>,
    pub max_attempts: Option<u32>,
    /// `--target`: added to the config's `targets`.
    pub targets: Vec<String>,
    pub again: bool,
    pub refresh_base: bool,
    /// Run the checks on the base again instead of taking them from the
    /// cache of earlier runs (`--fresh-baseline`).
    pub fresh_baseline: bool,
    /// `--allow-new-target`: a target no check reports on the base does
    /// not stop the run (the agent is to write its test).
    pub allow_new_target: bool,
    /// The agent command after `--`, overriding `agent.command`.
    pub agent: Vec<String>,
    /// `--preset`: over `agent.preset`.
    pub preset: Option<String>,
    /// `--max-cost` (USD) and `--max-duration`: over `retry.max_cost_usd`
    /// and `retry.max_duration`.
    pub max_cost: Option<f64>,
    pub max_duration: Option<String>,
    pub json: bool,
    pub quiet: bool,
    /// `--remote`: share the task through this git remote, under a lease.
    pub remote: Option<String>,
    /// `--lease`: how long the lease holds without a renewal.
    pub lease: Option<std::time::Duration>,
    /// Set when the task runs among others (`run -j`): progress lines and
    /// JSON events carry the task's id.
    pub among: Option<progress::Shared>,
    /// `--lanes`: attempt chains of the task at once.
    pub lanes: Option<u32>,
    /// `--lane-preset`: each lane's agent preset, by lane.
    pub lane_presets: Vec<String>,
    /// `--choose`: over `retry.choose`.
    pub choose: Option<crate::config::lanes::ChooseMode>,
    /// `-j`: how many lanes run at once.
    pub jobs: usize,
    /// Set when this run is one lane of a task (`run --lanes`).
    pub lane: Option<lanes::shared::LaneRun>,
}

/// The lease's default duration (`--lease`).
pub(crate) const DEFAULT_LEASE: std::time::Duration = std::time::Duration::from_secs(300);

/// How a run of one task ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ran {
    pub ending: Ending,
    /// The task had ended before this run, which did nothing.
    pub earlier: bool,
}

/// `retry-run run`: take the task, then its attempts one after another
/// until one succeeds or the task escalates.
pub(crate) fn run(dir: &Path, opts: Options) -> Result<Ending, RunError> {
    run_task(dir, opts).map(|r| r.ending)
}

/// The id a run of `opts` gives its task; a bad task fails here, before
/// anything runs.
pub(crate) fn task_id(dir: &Path, opts: &Options) -> Result<String, RunError> {
    let repo = Repo::find(dir)?;
    let store = Store::new(repo.common_dir());
    plan::task_and_id(&store, dir, opts).map(|(_, id)| id)
}

/// [`run`], telling a task that had already ended from one that ended now.
///
/// SIGINT and SIGTERM stop it: what runs is stopped, the attempt under way
/// recorded as interrupted, and [`RunError::Interrupted`] returned; a task
/// not started yet when one came does not start.
pub(crate) fn run_task(dir: &Path, opts: Options) -> Result<Ran, RunError> {
    crate::process::catch_interrupts();
    let repo = Repo::find(dir)?;
    let store = Store::new(repo.common_dir());
    let plan = plan::take_task(&repo, &store, dir, &opts)?;
    stop_if_interrupted(&plan.id)?;
    if opts.lane.is_none() {
        // Only a task that ran in lanes has `lanes/`: the log is read here
        // for it alone (the task's own run reads it once, in `start`).
        let ran_in_lanes = store.task(&plan.id).path().join("lanes").is_dir();
        let recorded =
            ran_in_lanes.then(|| store.read(&plan.id).ok()).flatten().and_then(|v| history::state(&v.events).lanes);
        let k = lanes::count(&plan, &opts, recorded)?;
        if k > 1 {
            return lanes::run(&repo, &store, plan, &opts, k);
        }
    }
    let _lock = lock(&store, &plan.id)?;
    let lease = claim_lease(dir, &opts, &plan.id)?;
    let (mut task, next) = match start::start_task(&repo, &store, plan, &opts) {
        Ok(Started::Now(task, next)) => (task, next),
        Ok(Started::AlreadyEnded(ending)) => {
            return finish(lease, Ok(ending)).map(|ending| Ran { ending, earlier: true });
        }
        Err(e) => return finish(lease, Err(e)).map(|ending| Ran { ending, earlier: false }),
    };
    task.fixed.lease = lease;
    let ended = task.attempts(next);
    finish(task.fixed.lease.take(), ended).map(|ending| Ran { ending, earlier: false })
}

/// The task's lock: one run of a task at a time.
fn lock(store: &Store, id: &str) -> Result<crate::record::TaskLock, RunError> {
    store.lock(id).map_err(|e| match e {
        RecordError::Locked { ref pid, .. } => {
            RunError::Held { by: format!("process {pid} here"), message: e.to_string() }
        }
        other => other.into(),
    })
}

/// With `--remote`, the task's lease claimed (saying whose expired lease
/// this run took over).
fn claim_lease(dir: &Path, opts: &Options, id: &str) -> Result<Option<held_lease::HeldLease>, RunError> {
    let Some(remote) = &opts.remote else { return Ok(None) };
    let (held, previous) = held_lease::HeldLease::claim(dir, remote, id, opts.lease.unwrap_or(DEFAULT_LEASE))?;
    if let Some(h) = previous {
        let note = format!("task {id}: took over the lease of {} (pid {}), which expired", h.host, h.pid);
        progress_of(opts, id).say(&note);
    }
    Ok(Some(held))
}

/// The task's log, read and verified (empty for a task not started); a
/// broken chain stops the run.
fn verified_log(store: &Store, id: &str) -> Result<crate::record::chain::Verified, RunError> {
    let verified = store.read(id).or_else(|e| match e {
        RecordError::NoTask { .. } => Ok(crate::record::chain::verify(b"")),
        e => Err(e),
    })?;
    match &verified.broken {
        Some(b) => {
            Err(RunError::BrokenLog { task: id.to_string(), path: store.task(id).events(), detail: format!("{b:?}") })
        }
        None => Ok(verified),
    }
}

/// `Err(Interrupted)` once retry-run got SIGINT or SIGTERM.
fn stop_if_interrupted(task: &str) -> Result<(), RunError> {
    match crate::process::interrupted() {
        Some(signal) => Err(RunError::Interrupted {
            task: task.to_string(),
            signal,
            resume: crate::outcome::resume::resume_command(task, &[], &[]),
        }),
        None if crate::process::lane_stopped() => Err(RunError::LaneStopped { task: task.to_string() }),
        None => Ok(()),
    }
}

/// How task `id` shows its progress: alone, or among others.
fn progress_of(opts: &Options, id: &str) -> Progress {
    let mode = Mode::pick(opts.json, opts.quiet);
    match (&opts.among, &opts.lane) {
        (Some(shared), Some(l)) => Progress::among(mode, &format!("{} lane {}", l.task, l.lane), shared),
        (Some(shared), None) => Progress::among(mode, id, shared),
        (None, _) => Progress::new(mode),
    }
}

/// The lease given back with the record's last state, whatever the end.
fn finish(lease: Option<held_lease::HeldLease>, ended: Result<Ending, RunError>) -> Result<Ending, RunError> {
    let Some(lease) = lease else { return ended };
    let released = lease.release();
    match (ended, released) {
        (Ok(ending), Ok(())) => Ok(ending),
        (Ok(_), Err(e)) => Err(e),
        (Err(e), _) => Err(e),
    }
}

/// `v` as pretty JSON at `path`.
fn write_json<T: serde::Serialize>(path: &Path, v: &T) -> Result<(), RunError> {
    let bytes = serde_json::to_vec_pretty(v)
        .map_err(|e| RunError::Encode { path: path.to_path_buf(), message: e.to_string() })?;
    crate::record::store::write_file(path, &bytes)?;
    Ok(())
}
