//! `retry-run sandbox`: run one command confined to the current directory.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use clap::{Args, ValueEnum};

use super::{CliError, exit};
use crate::sandbox::{self, landlock};

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
    /// `commit`: it may also write the repository's objects and this
    /// worktree's own git directory (not config, hooks, refs or HEAD).
    #[arg(long, value_enum, default_value = "commit")]
    pub git: GitArg,
    /// Use this directory as TMPDIR instead of making one (the attempt loop).
    #[arg(long, hide = true, value_name = "DIR")]
    pub tmpdir: Option<PathBuf>,
    /// Replace this process by the command instead of waiting for it (the
    /// attempt loop, which removes the TMPDIR itself).
    #[arg(long, hide = true)]
    pub exec: bool,
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
    let abi = landlock::abi();
    if abi == 0 {
        return Err(CliError::environment(format!(
            "this kernel ({}) has no Landlock (Linux 5.13 or newer, enabled at boot): `retry-run sandbox` cannot confine anything here",
            landlock::kernel()
        )));
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut writable = vec![std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf())];
    writable.extend(sandbox::prepare_writable(&args.writable, home.as_deref(), dir).map_err(CliError::usage)?);
    if args.git == GitArg::Commit
        && let Ok(repo) = crate::git::Repo::discover(dir)
    {
        writable.push(repo.common_dir().join("objects"));
        if repo.git_dir() != repo.common_dir() {
            writable.push(repo.git_dir().to_path_buf());
        }
    }
    let (tmpdir, own_tmp) = match &args.tmpdir {
        Some(t) => (t.clone(), false),
        None => (private_tmpdir()?, true),
    };
    writable.push(tmpdir.clone());
    writable.extend(sandbox::DEVICES.iter().map(PathBuf::from));
    landlock::confine(&writable).map_err(CliError::environment)?;
    close_inherited();
    let (program, rest) = args.command.split_first().ok_or_else(|| CliError::usage("no command to run"))?;
    let mut cmd = Command::new(program);
    cmd.args(rest);
    for k in ["TMPDIR", "TMP", "TEMP"] {
        cmd.env(k, &tmpdir);
    }
    if args.exec {
        let e = cmd.exec();
        eprintln!("retry-run: error: cannot start {program:?}: {e}; check the command and that it is installed");
        return Ok(127);
    }
    let status = cmd.status();
    if own_tmp {
        let _ = std::fs::remove_dir_all(&tmpdir);
    }
    match status {
        Ok(s) => Ok(s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0))),
        Err(e) => {
            eprintln!("retry-run: error: cannot start {program:?}: {e}; check the command and that it is installed");
            Ok(if e.kind() == std::io::ErrorKind::NotFound { 127 } else { 126 })
        }
    }
}

/// A new directory of our own under the system's temporary directory.
fn private_tmpdir() -> Result<PathBuf, CliError> {
    use std::os::unix::fs::DirBuilderExt;
    let base = std::env::temp_dir();
    for i in 0..100u32 {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let p = base.join(format!("retry-run-sandbox-{}-{nanos}-{i}", std::process::id()));
        match std::fs::DirBuilder::new().mode(0o700).create(&p) {
            Ok(()) => return std::fs::canonicalize(&p).map_err(|e| CliError::environment(e.to_string())),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => {
                return Err(CliError::environment(format!(
                    "cannot create a private temporary directory in {}: {e}",
                    base.display()
                )));
            }
        }
    }
    Err(CliError { code: exit::ENVIRONMENT, message: "cannot create a private temporary directory".into() })
}

/// Marks every descriptor above stderr close-on-exec, so none this process
/// inherited (a lock, a repository file) reaches the command.
fn close_inherited() {
    #[cfg(target_os = "linux")]
    {
        const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
        // SAFETY: close_range only changes flags of this process's own
        // descriptors; failure (an old kernel) leaves them as they were.
        unsafe {
            libc::syscall(libc::SYS_close_range, 3 as libc::c_uint, libc::c_uint::MAX, CLOSE_RANGE_CLOEXEC);
        }
    }
}
