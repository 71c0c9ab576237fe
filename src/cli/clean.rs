//! `retry-run clean`: remove task worktrees (and with --state, the record).
//! Never deletes an attempt commit (`refs/retry-run/...`) or a success branch.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::repo_args::open;
use super::{CliError, exit};
use crate::clean::{Cleaned, Which, clean};

/// Remove worktrees of one task, of all, or of tasks idle for DAYS days.
#[derive(Debug, Args)]
pub struct CleanArgs {
    /// The task whose worktree is removed (its record too with --state).
    pub task: Option<String>,
    /// Every task of the repository, not one.
    #[arg(long, conflicts_with_all = ["task", "stale"])]
    pub all: bool,
    /// Tasks whose last event is older than DAYS days.
    #[arg(long, value_name = "DAYS", conflicts_with = "task")]
    pub stale: Option<u64>,
    /// Also remove the record (events, attempts) of those tasks.
    #[arg(long)]
    pub state: bool,
    /// The config file (default: retry-run.toml at the repository root).
    #[arg(long, value_name = "PATH")]
    pub config: Option<std::path::PathBuf>,
}

pub fn run(dir: &Path, args: CleanArgs) -> Result<i32, CliError> {
    let which = match (&args.task, args.all, args.stale) {
        (Some(t), ..) => Which::Task(t.clone()),
        (None, true, _) => Which::All,
        (None, false, Some(days)) => Which::IdleFor { days },
        (None, false, None) => {
            return Err(CliError::usage("say which: `retry-run clean <task>`, `--all` or `--stale DAYS`"));
        }
    };
    let o = open(dir, args.config.as_deref())?;
    let root = o.repo.worktrees_root(&o.config.worktree.root);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let mut out = std::io::stdout().lock();
    let mut written = Ok(());
    clean(&o.repo, &root, &which, args.state, now, &mut |done| {
        let line = match done {
            Cleaned::Skipped { task, why } => format!("skipped {task}: {why}"),
            Cleaned::Worktree(p) => format!("removed worktree {}", p.display()),
            Cleaned::Record(p) => format!("removed record {}", p.display()),
        };
        if written.is_ok() {
            written = writeln!(out, "{line}");
        }
    })?;
    written?;
    Ok(exit::OK)
}
