//! Why a confined command did not run, and the exit status that says so.

use std::path::PathBuf;

use crate::layers::landlock::LandlockError;
use crate::layers::seccomp;
use crate::proxy;

/// Why a confined command did not run.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error(
        "this kernel ({kernel}) has no Landlock (Linux 5.13 or newer, enabled at boot): `retry-run sandbox` cannot confine anything here"
    )]
    NoLandlock { kernel: String },
    /// A writable path that is wrong (the message names it).
    #[error(transparent)]
    Writable(#[from] crate::SandboxError),
    /// A `--network` rule that cannot be read.
    #[error("--network {rule:?}: {source}")]
    Network { rule: String, source: proxy::RuleError },
    #[error("bubblewrap (bwrap) is not installed")]
    NoBwrap,
    #[error(
        "cannot create a private temporary directory in {}: {source}", dir.display()
    )]
    TmpDir { dir: PathBuf, source: std::io::Error },
    #[error("{source}")]
    TmpDirUnresolved { path: PathBuf, source: std::io::Error },
    #[error("cannot create a private temporary directory")]
    TmpDirTaken { dir: PathBuf },
    #[error(transparent)]
    Landlock(#[from] LandlockError),
    #[error("cannot start the network proxy: {0}")]
    Proxy(std::io::Error),
    #[error(transparent)]
    Seccomp(#[from] seccomp::SeccompError),
    #[error("no command to run")]
    NoCommand,
    /// The process limit cannot be held here (root without a pids cgroup).
    #[error(transparent)]
    ProcessLimit(crate::SandboxError),
    /// The command could not be started.
    #[error("cannot start {program:?}: {source}")]
    CannotStart { program: String, source: std::io::Error },
}

/// The exit status of a command line at fault (the spec's 2).
pub const USAGE: i32 = 2;

/// The exit status of a machine at fault (the spec's 3).
pub const ENVIRONMENT: i32 = 3;

impl ExecError {
    /// The exit status this error ends `retry-run sandbox` with: 2 for the
    /// command line, what a shell says for a command that cannot start
    /// (127 not found, 126 found and not runnable), else 3. Pure.
    pub fn exit_code(&self) -> i32 {
        match self {
            e if e.is_usage() => USAGE,
            ExecError::CannotStart { source, .. } if source.kind() == std::io::ErrorKind::NotFound => 127,
            ExecError::CannotStart { .. } => 126,
            _ => ENVIRONMENT,
        }
    }

    /// Whether the command line, rather than the machine, is at fault.
    pub fn is_usage(&self) -> bool {
        matches!(self, ExecError::Writable(_) | ExecError::Network { .. } | ExecError::NoBwrap | ExecError::NoCommand)
    }

    /// What the user can do about this error, when there is one thing to
    /// say (printed once, after the error).
    pub fn hint(&self) -> Option<String> {
        match self {
            ExecError::NoBwrap => {
                Some("install it (Debian and Ubuntu: apt-get install bubblewrap) or use --layers landlock".into())
            }
            ExecError::CannotStart { .. } => Some("check the command and that it is installed".into()),
            _ => None,
        }
    }
}
