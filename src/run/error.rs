//! The errors of the attempt loop and of preparing a worktree. The command
//! line (`cli/error.rs`) alone turns them into exit codes and messages.

use std::path::PathBuf;

use crate::config::ConfigError;
use crate::git::GitError;
use crate::record::RecordError;
use crate::remote::RemoteError;
use crate::scope::GlobError;
use crate::task::TaskError;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{}: cannot read the config file: {source}", path.display())]
    ConfigUnreadable { path: PathBuf, source: std::io::Error },
    #[error("the task's front matter over the project config: {message}")]
    FrontMatter { message: String },
    #[error("--task-file {}: {source}", path.display())]
    TaskFileUnreadable { path: PathBuf, source: std::io::Error },
    #[error("task {task} has no recorded task ({}: {source}); give it with --task-file FILE.md or --task TEXT", path.display())]
    NoRecordedTask { task: String, path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Task(#[from] TaskError),
    #[error("--task is empty; describe the task")]
    EmptyTask,
    #[error("no task: give --task-file FILE.md or --task TEXT")]
    NoTask,
    /// A flag of `run` with a value it cannot take.
    #[error("{flag}{problem}")]
    Flag { flag: &'static str, problem: String },
    #[error(
        "no agent command: set [agent] preset ({presets}) or [agent] command in retry-run.toml, or give it after --, e.g. `retry-run run --task-file t.md -- my-agent {{prompt_file}}`"
    )]
    NoAgentCommand { presets: String },
    #[error(
        "task {task}: its recorded base commit {base} no longer exists in this repository; fetch it, or start over with --refresh-base"
    )]
    BaseGone { task: String, base: String },
    #[error(
        "{}: the event log is broken ({detail}); run `retry-run log {task} --verify` and repair or move the file before running the task again",
        path.display()
    )]
    BrokenLog { task: String, path: PathBuf, detail: String },
    #[error("{}: cannot create the attempt's TMPDIR: {source}", path.display())]
    Tmpdir { path: PathBuf, source: std::io::Error },
    #[error("{}: cannot read the prompt back: {source}", path.display())]
    PromptUnreadable { path: PathBuf, source: std::io::Error },
    #[error("cannot encode {}: {message}", path.display())]
    Encode { path: PathBuf, message: String },
    #[error("cannot find retry-run's own executable to confine the agent: {source}")]
    OwnExecutable { source: std::io::Error },
    #[error("attempt {attempt} succeeded without a snapshot commit")]
    NoSnapshot { attempt: u32 },
    /// A check's command could not be started.
    #[error("{message}")]
    CheckStart { check: String, message: String },
    #[error("the lease's renewal failed")]
    LeaseRenewal,
    /// The agent's program cannot start: not found (before the first
    /// attempt, on the agent's PATH) or not runnable (an attempt was
    /// stopped without being counted). The message names it and how to
    /// install it.
    #[error("{message}")]
    AgentCannotStart { message: String },
    /// SIGINT or SIGTERM: what ran was stopped, the attempt recorded as
    /// interrupted.
    #[error("task {task} interrupted by {}; `{resume}` resumes it", crate::process::signal_name(*signal))]
    Interrupted { task: String, signal: i32, resume: String },
    /// Another lane of the task won (`run --lanes`): this lane's work was
    /// stopped and is recorded as stopped.
    #[error("lane {task} stopped: another lane won")]
    LaneStopped { task: String },
    /// Bad input that another part reported as text: a glob, a preset, a
    /// sandbox path, a `worktree.include` pattern (nothing is recorded).
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
            RunError::Usage(_)
            | RunError::Config(_)
            | RunError::Glob(_)
            | RunError::ConfigUnreadable { .. }
            | RunError::FrontMatter { .. }
            | RunError::TaskFileUnreadable { .. }
            | RunError::NoRecordedTask { .. }
            | RunError::Task(_)
            | RunError::EmptyTask
            | RunError::NoTask
            | RunError::Flag { .. }
            | RunError::NoAgentCommand { .. }
            | RunError::BaseGone { .. } => true,
            RunError::Environment(_)
            | RunError::Held { .. }
            | RunError::BrokenLog { .. }
            | RunError::Tmpdir { .. }
            | RunError::PromptUnreadable { .. }
            | RunError::Encode { .. }
            | RunError::OwnExecutable { .. }
            | RunError::NoSnapshot { .. }
            | RunError::CheckStart { .. }
            | RunError::LeaseRenewal
            | RunError::AgentCannotStart { .. }
            | RunError::Interrupted { .. }
            | RunError::LaneStopped { .. } => false,
            RunError::Git(e) => e.is_usage(),
            RunError::Record(e) => e.is_usage(),
            RunError::Remote(RemoteError::Git(e)) => e.is_usage(),
            RunError::Remote(_) => false,
        }
    }

    /// The signal that interrupted the run (the exit code is 128 + it).
    pub fn interrupted_by(&self) -> Option<i32> {
        match self {
            RunError::Interrupted { signal, .. } => Some(*signal),
            _ => None,
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
