//! `retry-run push` and `retry-run pull`: tasks' records and attempt
//! commits through a git remote (docs/fleets.md).

use std::path::Path;

use clap::Args;

use super::{CliError, exit};
use crate::record::store::check_task_name;
use crate::record::{RecordError, Store};
use crate::remote::{Remote, RemoteError, Taken};
use crate::text::plural;

/// Send tasks' records and attempt commits to a git remote.
///
/// Send tasks' records and attempt commits to a git remote. The remote
/// refuses a record that does not extend its own.
///
/// Exit 0 when every task was sent, 3 when the remote refused one or could
/// not be reached.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  retry-run push                 # every task, to origin\n  retry-run push fix-login --remote fleet"
)]
pub struct PushArgs {
    /// Tasks to send (default: every task of this repository).
    pub tasks: Vec<String>,
    #[command(flatten)]
    pub remote: RemoteArg,
}

#[derive(Debug, Args)]
pub struct RemoteArg {
    /// The git remote (a name or an URL).
    #[arg(long = "remote", value_name = "NAME", default_value = "origin")]
    pub name: String,
}

/// Fetch tasks' records and attempt commits from a git remote.
///
/// Fetch tasks' records and attempt commits from a git remote, taking a
/// record only when it extends the local one.
///
/// Exit 0 when every task is up to date with the remote or was taken, 3
/// when a record diverged (nothing is merged) or the remote could not be
/// reached.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  retry-run pull                 # every task origin has\n  retry-run pull fix-login --remote fleet"
)]
pub struct PullArgs {
    /// Tasks to fetch (default: every task the remote has).
    pub tasks: Vec<String>,
    #[command(flatten)]
    pub remote: RemoteArg,
}

fn checked(tasks: &[String]) -> Result<(), CliError> {
    for t in tasks {
        check_task_name(t)?;
    }
    Ok(())
}

fn remote_err(e: RemoteError) -> CliError {
    let code = match &e {
        RemoteError::Git(g) if g.is_usage() => exit::USAGE,
        _ => exit::ENVIRONMENT,
    };
    let hint = e.hint();
    CliError::of(code, e, hint)
}

/// The task's local lock; when another process holds it (or it cannot be
/// taken), says so and sets `code`.
fn lock(store: &Store, task: &str, code: &mut i32) -> Option<crate::record::TaskLock> {
    match store.lock(task) {
        Ok(l) => Some(l),
        Err(e) => {
            match e {
                RecordError::Locked { pid, .. } => {
                    crate::console::errln!("{task}: skipped, process {pid} is running it here")
                }
                other => crate::console::errln!("retry-run: error: {task}: {other}"),
            }
            *code = exit::ENVIRONMENT;
            None
        }
    }
}

pub(super) fn push(dir: &Path, args: PushArgs) -> Result<i32, CliError> {
    checked(&args.tasks)?;
    let remote = Remote::open(dir, &args.remote.name).map_err(remote_err)?;
    let store = remote.store();
    let tasks = if args.tasks.is_empty() { store.tasks()? } else { args.tasks };
    if tasks.is_empty() {
        crate::console::outln!("no tasks to push");
        return Ok(exit::OK);
    }
    let mut code = exit::OK;
    for task in &tasks {
        if !store.task(task).events().is_file() {
            crate::console::errln!("retry-run: error: no task {task:?} here; `retry-run status` lists the tasks");
            code = exit::ENVIRONMENT;
            continue;
        }
        let Some(_lock) = lock(store, task, &mut code) else { continue };
        match remote.push(task) {
            Ok(()) => crate::console::outln!("{task}: pushed to {}", args.remote.name),
            Err(e @ RemoteError::NoGit { .. }) => return Err(remote_err(e)),
            Err(e) => {
                for line in remote_err(e).lines() {
                    crate::console::errln!("{line}");
                }
                code = exit::ENVIRONMENT;
            }
        }
    }
    Ok(code)
}

pub(super) fn pull(dir: &Path, args: PullArgs) -> Result<i32, CliError> {
    checked(&args.tasks)?;
    let remote = Remote::open(dir, &args.remote.name).map_err(remote_err)?;
    remote.fetch(&args.tasks, "retry-run pull").map_err(remote_err)?;
    let tasks = if args.tasks.is_empty() { remote.fetched_tasks().map_err(remote_err)? } else { args.tasks };
    if tasks.is_empty() {
        crate::console::outln!("{} has no tasks", args.remote.name);
        return Ok(exit::OK);
    }
    let store = remote.store();
    let mut code = exit::OK;
    for task in &tasks {
        let Some(_lock) = lock(store, task, &mut code) else { continue };
        match remote.take(task) {
            Ok(Taken::Absent) => crate::console::outln!("{task}: {} has no record of it", args.remote.name),
            Ok(Taken::Same) => crate::console::outln!("{task}: up to date"),
            Ok(Taken::Took { events }) => crate::console::outln!("{task}: took {events} new event{}", plural(events)),
            Ok(Taken::LocalAhead { events }) => {
                crate::console::outln!(
                    "{task}: the local record is {events} event{} ahead; `retry-run push {task}` sends it",
                    plural(events)
                )
            }
            Err(e) => {
                for line in remote_err(e).lines() {
                    crate::console::errln!("{line}");
                }
                code = exit::ENVIRONMENT;
            }
        }
    }
    Ok(code)
}
