//! `retry-run clean`: remove task worktrees (and with --state, the record).
//! Never deletes an attempt commit (`refs/retry-run/...`) or a success branch.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::repo_args::open;
use super::{CliError, exit};
use crate::git::nofollow_fs;
use crate::record::chain::parse_rfc3339;
use crate::record::state::state;
use crate::record::store::check_task_name;
use crate::record::{RecordError, Store};

/// Remove worktrees of one task, of all, or of tasks idle for DAYS days.
#[derive(Debug, Args)]
pub struct CleanArgs {
    pub task: Option<String>,
    #[arg(long, conflicts_with_all = ["task", "stale"])]
    pub all: bool,
    /// Tasks whose last event is older than DAYS days.
    #[arg(long, value_name = "DAYS", conflicts_with = "task")]
    pub stale: Option<u64>,
    /// Also remove the record (events, attempts) of those tasks.
    #[arg(long)]
    pub state: bool,
    #[arg(long, value_name = "PATH")]
    pub config: Option<std::path::PathBuf>,
}

pub fn run(dir: &Path, args: CleanArgs) -> Result<i32, CliError> {
    if args.task.is_none() && !args.all && args.stale.is_none() {
        return Err(CliError::usage("say which: `retry-run clean <task>`, `--all` or `--stale DAYS`"));
    }
    let o = open(dir, args.config.as_deref())?;
    let store = Store::new(o.repo.common_dir());
    let root = o.repo.worktrees_root(&o.config.worktree.root);
    let tasks: Vec<String> = match &args.task {
        Some(t) => {
            check_task_name(t)?;
            vec![t.clone()]
        }
        None => store.known_tasks(&root)?,
    };
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let mut out = std::io::stdout().lock();
    for task in tasks {
        let verified = store.read(&task).ok();
        if let Some(days) = args.stale {
            let last = verified.as_ref().and_then(|v| state(&v.events).last_ts).and_then(|ts| parse_rfc3339(&ts));
            match last {
                Some(t) if now.saturating_sub(t) >= days * 86_400 => {}
                _ => continue,
            }
        }
        let lock = match store.lock(&task) {
            Ok(l) => l,
            Err(e @ RecordError::Locked { .. }) => {
                writeln!(out, "skipped {task}: {e}")?;
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let wt = root.join(&task);
        if wt.exists() || o.repo.worktree_meta(&task).exists() {
            o.repo.remove_worktree(&wt, &task)?;
            writeln!(out, "removed worktree {}", wt.display())?;
        }
        drop(lock);
        let record = store.task(&task);
        if args.state && record.path().exists() {
            let d = record.path();
            nofollow_fs::remove_any(d).map_err(|e| CliError::environment(format!("{}: {e}", d.display())))?;
            writeln!(out, "removed record {}", d.display())?;
        }
    }
    Ok(exit::OK)
}
