//! `retry-run clean`: remove task worktrees (and with --state, the record,
//! the task's refs and its success branch), and prune the checks' reuse
//! store. Without --state, attempt commits (`refs/retry-run/...`) and
//! success branches stay.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::repo_args::open;
use super::{CliError, exit};
use crate::clean::{CleanWhich, Cleaned, clean};
use crate::text::human_bytes;

/// Remove worktrees of one task, of all, of ended tasks or of idle ones.
///
/// Remove worktrees of one task, of all, of ended tasks, or of tasks idle for a while.
/// Each clean also prunes the checks' reuse store: the stored runs of tasks
/// whose record is gone and, with --older-than, those older than that.
#[derive(Debug, Args)]
pub struct CleanArgs {
    /// The task whose worktree is removed (its record too with --state).
    pub task: Option<String>,
    /// Every task of the repository, not one.
    #[arg(long, conflicts_with_all = ["task", "stale", "ended", "older_than"])]
    pub all: bool,
    /// Tasks that ended (succeeded or escalated); a running or interrupted one is left.
    #[arg(long, conflicts_with_all = ["task", "stale", "older_than"])]
    pub ended: bool,
    /// Tasks whose last event is older than this (`7d`, `12h`).
    #[arg(long, value_name = "AGE", conflicts_with_all = ["task", "stale"])]
    pub older_than: Option<String>,
    /// Tasks whose last event is older than DAYS days (as --older-than DAYSd).
    #[arg(long, value_name = "DAYS", conflicts_with = "task")]
    pub stale: Option<u64>,
    /// Also remove the record (events, attempts), the refs (attempt
    /// commits) and the success branch of those tasks.
    #[arg(long)]
    pub state: bool,
    /// The config file (default: retry-run.toml at the repository root).
    #[arg(long, value_name = "PATH")]
    pub config: Option<std::path::PathBuf>,
}

/// What the flags ask to clean.
fn which(args: &CleanArgs) -> Result<CleanWhich, CliError> {
    let older = match &args.older_than {
        Some(text) => Some(
            crate::config::DurationSpec::parse(text)
                .map_err(|e| CliError::usage(format!("--older-than: {e} (days: 7d)")))?
                .value
                .as_secs(),
        ),
        None => args.stale.map(|days| days.saturating_mul(86_400)),
    };
    Ok(match (&args.task, args.all, args.ended, older) {
        (Some(t), ..) => CleanWhich::Task(t.clone()),
        (None, true, ..) => CleanWhich::All,
        (None, false, true, _) => CleanWhich::Ended,
        (None, false, false, Some(secs)) => CleanWhich::IdleFor { secs },
        (None, false, false, None) => {
            return Err(CliError::usage(
                "say which: `retry-run clean <task>`, `--all`, `--ended` or `--older-than 7d`",
            ));
        }
    })
}

/// What one removal says.
fn cleaned_line(done: Cleaned) -> String {
    match done {
        Cleaned::Skipped { task, why } => format!("skipped {task}: {why}"),
        Cleaned::Worktree(p, bytes) => format!("removed worktree {} ({})", p.display(), human_bytes(bytes)),
        Cleaned::Record(p) => format!("removed record {}", p.display()),
        Cleaned::Refs(prefix, n) => format!("removed {n} ref{} under {prefix}", crate::text::plural(n)),
        Cleaned::Branch(b) => format!("removed branch {b}"),
        Cleaned::BranchKept(b) => format!("kept branch {b}: it is checked out; switch away and `git branch -D {b}`"),
        Cleaned::Reused { dir, runs, bytes } => format!(
            "removed {runs} stored check run{} ({}) from {}",
            crate::text::plural(runs),
            human_bytes(bytes),
            dir.display()
        ),
    }
}

pub(super) fn run(dir: &Path, args: CleanArgs) -> Result<i32, CliError> {
    let which = which(&args)?;
    let o = open(dir, args.config.as_deref())?;
    let root = o.repo.worktrees_root(&o.config.worktree.root);
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let mut out = std::io::stdout().lock();
    let mut written = Ok(());
    let (mut freed, mut removed) = (0u64, 0usize);
    clean(&o.repo, &root, &which, args.state, now, &mut |done| {
        if let Cleaned::Worktree(_, bytes) = &done {
            freed += bytes;
            removed += 1;
        }
        let line = cleaned_line(done);
        if written.is_ok() {
            written = writeln!(out, "{line}");
        }
    })?;
    written?;
    // What confined processes killed before their end (`kill -9`) left in
    // the temporary directories: whatever the task, it serves nothing.
    for dir in crate::sandbox::launch::left_behind() {
        let bytes = crate::git::nofollow_fs::disk_usage(&dir);
        if crate::git::nofollow_fs::remove_any(&dir).is_ok() {
            freed += bytes;
            writeln!(out, "removed {} (a killed sandbox's, {})", dir.display(), human_bytes(bytes))?;
        }
    }
    // As root: the pids cgroups confined processes made and could not
    // remove (their namespaces were still coming down, or they were
    // killed), in this process's own cgroup, where `run` makes them.
    let cgroups = crate::sandbox::layers::limits::sweep_own(std::time::Duration::ZERO);
    if cgroups > 0 {
        writeln!(out, "removed {cgroups} empty pids cgroup{} confined processes left", crate::text::plural(cgroups))?;
    }
    writeln!(
        out,
        "freed {} ({removed} worktree{}); {}",
        human_bytes(freed),
        crate::text::plural(removed),
        if args.state {
            "the tasks' records, attempt commits and branches are removed"
        } else {
            "attempt commits and branches stay (--state removes them with the record)"
        }
    )?;
    Ok(exit::OK)
}
