//! `retry-run sandbox`: run one command confined to the current directory.

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use super::CliError;
use crate::git::Repo;
use crate::sandbox::exec::{self, Confined};
use crate::sandbox::git_writable;

/// Run a command confined to the current directory (Landlock): it may read
/// and execute anything, and write only beneath the current directory, a
/// private temporary directory (its TMPDIR, removed afterwards), the
/// --writable paths, the repository's objects (with --git commit) and the
/// usual devices (/dev/null, /dev/tty, ...). Its exit status is passed on
/// (a death by signal N as 128+N); nothing is printed unless it cannot start.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  retry-run sandbox -- make test\n  retry-run sandbox --writable ~/.cache/pip -- pip install -e ."
)]
pub struct SandboxArgs {
    /// Another path it may write beneath (`~` is expanded; a missing
    /// directory is created when its parent exists). Repeatable.
    #[arg(long, value_name = "PATH")]
    pub writable: Vec<String>,
    /// A path it may not read, beside ~/.ssh, ~/.aws, ~/.gnupg and the
    /// other credential stores never readable. Repeatable.
    #[arg(long, value_name = "PATH")]
    pub deny_read: Vec<String>,
    /// `commit`: it may also write the repository's objects and this
    /// worktree's own git directory (not config, hooks, refs or HEAD).
    #[arg(long, value_enum, default_value = "commit")]
    pub git: GitArg,
    /// Use this directory as TMPDIR instead of making one (the attempt loop).
    #[arg(long, hide = true, value_name = "DIR")]
    pub tmpdir: Option<PathBuf>,
    /// Replace this process by the command instead of waiting for it (the
    /// attempt loop, which removes the TMPDIR itself).
    #[arg(long, hide = true, conflicts_with = "reap")]
    pub exec: bool,
    /// Wait for the command, end every process it left behind, and end as
    /// it ended (the attempt loop).
    #[arg(long, hide = true)]
    pub reap: bool,
    /// The command and its arguments.
    #[arg(last = true, required = true, value_name = "CMD")]
    pub command: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GitArg {
    Commit,
    ReadOnly,
}

pub fn run(dir: &Path, args: SandboxArgs) -> Result<i32, CliError> {
    let git = match args.git {
        GitArg::Commit => Repo::discover(dir).map(|r| git_writable(r.common_dir(), r.git_dir())).unwrap_or_default(),
        GitArg::ReadOnly => Vec::new(),
    };
    let confined = Confined {
        dir: dir.to_path_buf(),
        writable: args.writable,
        deny_read: args.deny_read,
        git,
        tmpdir: args.tmpdir,
        replace: args.exec,
        reap: args.reap,
        argv: args.command,
    };
    Ok(exec::run(&confined)?)
}
