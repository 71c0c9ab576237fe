//! `retry-run report <task>`: Markdown for the human who takes the task.

use std::io::Write;
use std::path::Path;

use crate::record::Event;
use clap::Args;

use super::{CliError, exit};
use crate::context::TaskText;
use crate::git::Repo;
use crate::record::Store;
use crate::record::state::{attempts, state};
use crate::record::store::check_task_name;
use crate::report::{Standing, render};
use crate::run::recorded_task;

/// A Markdown report of a task: every attempt, and what to look at first.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The task id (as `retry-run status` lists them).
    pub task: String,
}

pub fn run(dir: &Path, args: ReportArgs) -> Result<i32, CliError> {
    check_task_name(&args.task)?;
    let repo = Repo::find(dir)?;
    let store = Store::new(repo.common_dir());
    let verified = store.read(&args.task)?;
    let task = recorded_task(&store, &args.task)?;
    let state = state(&verified.events);
    let attempts = attempts(&store, &args.task, &verified.events);
    let standing = match &state.finished {
        Some((Event::TaskSucceeded { branch, .. }, at)) => {
            Standing::Succeeded { attempt: at.unwrap_or(0), branch: branch.clone() }
        }
        Some((Event::TaskEscalated { reason, .. }, _)) => Standing::Escalated { reason: reason.clone() },
        _ => match &state.stopped {
            Some((attempt, reason)) => Standing::Stopped { attempt: *attempt, reason: reason.clone() },
            None => Standing::Open,
        },
    };
    let text = TaskText { id: args.task.clone(), title: task.title, text: task.text };
    let md = render(&text, state.base.as_deref(), &attempts, &standing, &state.unconfined);
    let mut out = std::io::stdout().lock();
    out.write_all(md.as_bytes())?;
    out.flush()?;
    Ok(exit::OK)
}
