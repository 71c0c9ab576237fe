//! The errors of the attempt loop and of preparing a worktree. The command
//! line (`cli/error.rs`) alone turns them into exit codes and messages.

use crate::config::ConfigError;
use crate::git::GitError;
use crate::record::RecordError;
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
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{0}; fix the glob in [scope] of retry-run.toml or --allow/--deny")]
    Glob(#[from] GlobError),
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
            RunError::Environment(_) => false,
            RunError::Git(e) => e.is_usage(),
            RunError::Record(e) => e.is_usage(),
        }
    }
}

/// How a `run` ended, for the command line to turn into an exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Succeeded,
    Escalated,
}
