//! `retry-run worktree create|reset|list|path|remove <task>`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use clap::{Args, Subcommand};

use super::repo_args::{Opened, open};
use super::{CliError, exit};
use crate::git::{Oid, safe_fs};
use crate::record::store::check_task_name;

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
    /// Create the task's worktree at the base, copy worktree.include files, run worktree.setup.
    Create(TaskBase),
    /// Bring the worktree back to the base exactly (recreating it if it is gone), then include and setup.
    Reset(TaskBase),
    /// List task worktrees with their disk use.
    List,
    /// Print the task's worktree path.
    Path { task: String },
    /// Remove the task's worktree and git's metadata for it.
    Remove { task: String },
}

#[derive(Debug, Args)]
pub struct TaskBase {
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
    if !store.task_dir(task).is_dir() {
        return Ok(None);
    }
    Ok(Some(store.lock(task)?))
}

pub fn run(dir: &Path, args: WorktreeArgs) -> Result<i32, CliError> {
    let o = open(dir, args.config.as_deref())?;
    let root = o.repo.worktrees_root(&o.config.worktree.root);
    let mut out = std::io::stdout().lock();
    match args.action {
        Action::Create(t) => {
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
            let base = resolve_base(&o, t.base.as_deref())?;
            let _lock = hold(&o, &t.task)?;
            o.repo.create_worktree(&path, &t.task, base)?;
            prepare(&o.repo, &o.config, &path)?;
            writeln!(out, "{}", path.display())?;
        }
        Action::Reset(t) => {
            check_task_name(&t.task)?;
            let path = root.join(&t.task);
            let base = resolve_base(&o, t.base.as_deref())?;
            let _lock = hold(&o, &t.task)?;
            let r = o.repo.reset_worktree(&path, &t.task, base)?;
            prepare(&o.repo, &o.config, &path)?;
            for lock in &r.stale_locks {
                writeln!(out, "removed {}, left by a killed process", lock.display())?;
            }
            if r.recreated {
                writeln!(out, "{}: recreated at {base}", path.display())?;
            } else {
                writeln!(out, "{}: reset to {base} ({} restored, {} removed)", path.display(), r.restored, r.removed)?;
            }
        }
        Action::List => {
            let mut names: Vec<String> = std::fs::read_dir(&root)
                .map(|rd| rd.flatten().filter_map(|e| e.file_name().into_string().ok()).collect())
                .unwrap_or_default();
            names.sort();
            for n in names {
                let p = root.join(&n);
                let state = if o.repo.worktree_is_valid(&p, &n) { "" } else { "  (broken: reset or remove it)" };
                writeln!(out, "{n}\t{}\t{}{state}", human_bytes(safe_fs::disk_usage(&p)), p.display())?;
            }
        }
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

fn resolve_base(o: &Opened, base: Option<&str>) -> Result<Oid, CliError> {
    let rev = match base.or(o.config.base.as_deref()) {
        Some(spec) => o.repo.resolve(spec)?,
        None => o.repo.default_branch()?,
    };
    Ok(rev.oid)
}

/// Copies `worktree.include` files from the user's checkout, then runs
/// `worktree.setup` (its failure is an environment error, exit 3).
pub fn prepare(repo: &crate::git::Repo, config: &crate::config::Config, path: &Path) -> Result<(), CliError> {
    if let Some(src_root) = repo.workdir() {
        let mut wanted: Vec<PathBuf> = Vec::new();
        for pattern in &config.worktree.include {
            wanted.extend(include_matches(src_root, pattern)?);
        }
        wanted.extend(worktreeinclude_matches(repo, src_root)?);
        wanted.sort();
        wanted.dedup();
        for rel in wanted {
            safe_fs::copy_in(&src_root.join(&rel), path, &rel)
                .map_err(|e| CliError::environment(format!("cannot copy {} into the worktree: {e}", rel.display())))?;
        }
    }
    if let Some(setup) = &config.worktree.setup {
        let out = Command::new("sh")
            .arg("-c")
            .arg(setup)
            .current_dir(path)
            .output()
            .map_err(|e| CliError::environment(format!("worktree.setup: cannot run sh: {e}")))?;
        if !out.status.success() {
            let text = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
            let tail: Vec<&str> = text.lines().rev().take(10).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            return Err(CliError::environment(format!(
                "worktree.setup `{setup}` failed in {} ({}); fix the setup command in retry-run.toml:\n{}",
                path.display(),
                out.status,
                tail.join("\n")
            )));
        }
    }
    Ok(())
}

/// The files `.worktreeinclude` at the checkout's root names (gitignore
/// syntax, the convention of Claude Code and other worktree tools): files
/// git ignores that match it. A directory git ignores is entered only when
/// the file names it itself.
fn worktreeinclude_matches(repo: &crate::git::Repo, root: &Path) -> Result<Vec<PathBuf>, CliError> {
    let file = root.join(".worktreeinclude");
    if !file.is_file() {
        return Ok(Vec::new());
    }
    let mut b = ignore::gitignore::GitignoreBuilder::new(root);
    if let Some(e) = b.add(&file) {
        return Err(CliError::usage(format!("{}: {e}", file.display())));
    }
    let rules = b.build().map_err(|e| CliError::usage(format!("{}: {e}", file.display())))?;
    let listed = |p: &Path, dir: bool| rules.matched_path_or_any_parents(p, dir).is_ignore();
    Ok(walk_checkout(
        root,
        &|dir| !repo.is_ignored(dir) || listed(dir, true),
        &|f| listed(f, false) && repo.is_ignored(f),
    ))
}

/// The files below `root` (not `.git`), relative to it, that `keep` takes,
/// entering only the directories `enter` takes.
fn walk_checkout(root: &Path, enter: &dyn Fn(&Path) -> bool, keep: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(root.join(&rel)) else { continue };
        for e in rd.flatten() {
            let child = rel.join(e.file_name());
            if child == Path::new(".git") {
                continue;
            }
            match e.file_type() {
                Ok(t) if t.is_dir() => {
                    if enter(&child) {
                        stack.push(child);
                    }
                }
                Ok(_) if keep(&child) => out.push(child),
                _ => {}
            }
        }
    }
    out
}

/// The files of the user's checkout an include pattern names: a plain path
/// is looked up directly; a glob walks the checkout (not `.git`).
fn include_matches(root: &Path, pattern: &str) -> Result<Vec<PathBuf>, CliError> {
    let bad =
        || CliError::usage(format!("worktree.include {pattern:?}: use a path or glob relative to the repository root"));
    if pattern.starts_with('/') || pattern.split('/').any(|c| c == "..") {
        return Err(bad());
    }
    if !pattern.contains(['*', '?', '[', '{']) {
        let p = PathBuf::from(pattern);
        return Ok(if std::fs::symlink_metadata(root.join(&p)).is_ok() { vec![p] } else { Vec::new() });
    }
    let glob = globset::GlobBuilder::new(pattern).literal_separator(true).build().map_err(|_| bad())?.compile_matcher();
    let mut out = walk_checkout(root, &|_| true, &|f| glob.is_match(f));
    out.sort();
    Ok(out)
}

pub fn human_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}
