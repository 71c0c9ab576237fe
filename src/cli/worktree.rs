//! `retry-run worktree create|reset|list|path|remove <task>`.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};

use super::repo_args::{Opened, open};
use super::{CliError, exit};
use crate::git::{Oid, nofollow_fs};
use crate::record::store::check_task_name;
use crate::text::human_bytes;

/// Manage task worktrees (linked git worktrees at the task's base).
///
/// Manage task worktrees: linked git worktrees detached at the task's base,
/// under worktree.root (default <git-common-dir>/retry-run/worktrees).
#[derive(Debug, Args)]
pub struct WorktreeArgs {
    #[command(subcommand)]
    pub action: Action,

    /// The config file (default: retry-run.toml at the repository root).
    #[arg(long, value_name = "PATH", global = true)]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum Action {
    /// Create the task's worktree at the base, with include and setup.
    ///
    /// Create the task's worktree at the base, copy worktree.include files, run worktree.setup;
    /// with --attempt N, at what attempt N left instead (to look at an ended task's work).
    Create(CreateArgs),
    /// Reset the worktree to the base exactly, then include and setup.
    ///
    /// Bring the worktree back to the base exactly (recreating it if it is gone), then include and setup.
    Reset(TaskBase),
    /// List task worktrees with their disk use.
    List,
    /// Print the task's worktree path.
    Path {
        /// The task id (as `retry-run status` lists them).
        task: String,
    },
    /// Remove the task's worktree and git's metadata for it.
    Remove {
        /// The task id (as `retry-run status` lists them).
        task: String,
    },
}

#[derive(Debug, Args)]
pub struct CreateArgs {
    #[command(flatten)]
    pub task: TaskBase,
    /// Materialise the files attempt N left (its recorded commit), byte for byte: no include, no setup.
    #[arg(long, value_name = "N", conflicts_with = "base")]
    pub attempt: Option<u32>,
}

#[derive(Debug, Args)]
pub struct TaskBase {
    /// The task id (as `retry-run status` lists them).
    pub task: String,
    /// The base: any revision. Default: `base` in retry-run.toml, else the default branch.
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
}

/// Holds the task's run lock while its worktree is changed, so that a
/// create, reset or remove never runs under an attempt (exit 3 names the
/// running process). A task that has never been run has no record and no
/// lock to take; none is created for it.
fn hold(o: &Opened, task: &str) -> Result<Option<crate::record::TaskLock>, CliError> {
    let store = crate::record::Store::new(o.repo.common_dir());
    if !store.task(task).path().is_dir() {
        return Ok(None);
    }
    Ok(Some(store.lock(task)?))
}

pub(crate) fn run(dir: &Path, args: WorktreeArgs) -> Result<i32, CliError> {
    let o = open(dir, args.config.as_deref())?;
    let root = o.repo.worktrees_root(&o.config.worktree.root);
    let mut out = std::io::stdout().lock();
    match args.action {
        Action::Create(c) => create(&o, &root, &mut out, c)?,
        Action::Reset(t) => reset(&o, &root, &mut out, t)?,
        Action::List => list(&o, &root, &mut out)?,
        Action::Path { task } => {
            check_task_name(&task)?;
            let path = root.join(&task);
            if !path.exists() {
                return Err(CliError::usage(format!(
                    "task {task} has no worktree; `retry-run worktree create {task}`"
                )));
            }
            writeln!(out, "{}", path.display())?;
        }
        Action::Remove { task } => {
            check_task_name(&task)?;
            let path = root.join(&task);
            let _lock = hold(&o, &task)?;
            o.repo.remove_worktree(&path, &task)?;
            writeln!(out, "removed {}", path.display())?;
        }
    }
    Ok(exit::OK)
}

/// `worktree create`: a new worktree at the base, prepared, or at a
/// recorded attempt as it was.
fn create(o: &Opened, root: &Path, out: &mut impl Write, args: CreateArgs) -> Result<(), CliError> {
    let CreateArgs { task: t, attempt } = args;
    check_task_name(&t.task)?;
    let path = root.join(&t.task);
    if path.exists() {
        return Err(CliError::usage(format!(
            "{}: the worktree of task {} exists; use `retry-run worktree reset {}`",
            path.display(),
            t.task,
            t.task
        )));
    }
    if let Some(n) = attempt {
        let refname = crate::model::refs::attempt(&t.task, n);
        let Some(commit) = o.repo.ref_target(&refname) else {
            return Err(CliError::usage(format!(
                "task {} has no recorded attempt {n} ({refname}); `retry-run report {}` lists its attempts",
                t.task, t.task
            )));
        };
        let _lock = hold(o, &t.task)?;
        o.repo.create_worktree(&path, &t.task, commit)?;
        writeln!(out, "{}", path.display())?;
        return Ok(());
    }
    let base = resolve_base(o, t.base.as_deref())?;
    let _lock = hold(o, &t.task)?;
    o.repo.create_worktree(&path, &t.task, base)?;
    crate::run::prepare::prepare(&o.repo, &o.config, &path, None)?;
    writeln!(out, "{}", path.display())?;
    Ok(())
}

/// `worktree reset`: the worktree back at the base, prepared again.
fn reset(o: &Opened, root: &Path, out: &mut impl Write, t: TaskBase) -> Result<(), CliError> {
    check_task_name(&t.task)?;
    let path = root.join(&t.task);
    let base = resolve_base(o, t.base.as_deref())?;
    let _lock = hold(o, &t.task)?;
    let r = o.repo.reset_worktree(&path, &t.task, base)?;
    crate::run::prepare::prepare(&o.repo, &o.config, &path, None)?;
    for lock in &r.stale_locks {
        writeln!(out, "removed {}, left by a killed process", lock.display())?;
    }
    if r.recreated {
        writeln!(out, "{}: recreated at {base}", path.display())?;
    } else {
        writeln!(out, "{}: reset to {base} ({} restored, {} removed)", path.display(), r.restored, r.removed)?;
    }
    Ok(())
}

/// `worktree list`: every worktree, its disk use, and whether it is broken.
fn list(o: &Opened, root: &Path, out: &mut impl Write) -> Result<(), CliError> {
    let mut names: Vec<String> = std::fs::read_dir(root)
        .map(|rd| rd.flatten().filter_map(|e| e.file_name().into_string().ok()).collect())
        .unwrap_or_default();
    names.sort();
    for n in names {
        let p = root.join(&n);
        let state = if o.repo.worktree_is_valid(&p, &n) { "" } else { "  (broken: reset or remove it)" };
        writeln!(out, "{n}\t{}\t{}{state}", human_bytes(nofollow_fs::disk_usage(&p)), p.display())?;
    }
    Ok(())
}

fn resolve_base(o: &Opened, base: Option<&str>) -> Result<Oid, CliError> {
    Ok(o.repo.resolve_base(base.or(o.config.base.as_deref()))?.oid)
}
