//! The errors of the attempt loop and of preparing a worktree. The command
//! line (`cli/error.rs`) alone turns them into exit codes and messages.

use crate::config::ConfigError;
use crate::git::GitError;
use crate::record::RecordError;
use crate::remote::RemoteError;
use crate::scope::GlobError;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Bad input: a task file, a flag, the config, a path given by the user
    /// (nothing is recorded).
    #[error("{0}")]
    Usage(String),
    /// The environment failed: a file that cannot be written, a command that
    /// cannot start, a task another process runs.
    #[error("{0}")]
    Environment(String),
    /// Another process here runs the task.
    #[error("{message}")]
    Held { by: String, message: String },
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{0}; fix the glob in [scope] of retry-run.toml or --allow/--deny")]
    Glob(#[from] GlobError),
    #[error(transparent)]
    Remote(#[from] RemoteError),
}

impl RunError {
    pub fn usage(message: impl Into<String>) -> RunError {
        RunError::Usage(message.into())
    }

    pub fn environment(message: impl Into<String>) -> RunError {
        RunError::Environment(message.into())
    }

    /// Whether the user's input, rather than the environment, is at fault.
    pub fn is_usage(&self) -> bool {
        match self {
            RunError::Usage(_) | RunError::Config(_) | RunError::Glob(_) => true,
            RunError::Environment(_) | RunError::Held { .. } => false,
            RunError::Git(e) => e.is_usage(),
            RunError::Record(e) => e.is_usage(),
            RunError::Remote(RemoteError::Git(e)) => e.is_usage(),
            RunError::Remote(_) => false,
        }
    }

    /// Who holds the task, when it was skipped because another run holds
    /// it (here, or through the remote's lease).
    pub fn held_by(&self) -> Option<String> {
        match self {
            RunError::Remote(e) => e.held_by().map(String::from),
            RunError::Held { by, .. } => Some(by.clone()),
            _ => None,
        }
    }
}

/// How a `run` ended, for the command line to turn into an exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Succeeded,
    Escalated,
}
