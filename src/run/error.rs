//! The errors of the attempt loop and of preparing a worktree. The command
//! line (`cli/error.rs`) alone turns them into exit codes and messages.

use std::path::PathBuf;

use crate::config::ConfigError;
use crate::git::GitError;
use crate::judge::scope::GlobError;
use crate::record::RecordError;
use crate::remote::RemoteError;
use crate::task::TaskError;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{}: cannot read the config file: {source}", path.display())]
    ConfigUnreadable { path: PathBuf, source: std::io::Error },
    #[error("the task's front matter over the project config: {message}")]
    FrontMatter { message: String },
    #[error("--task-file {}: {source}", path.display())]
    TaskFileUnreadable { path: PathBuf, source: std::io::Error },
    #[error("task {task} has no recorded task ({}: {source})", path.display())]
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
    #[error("no agent command")]
    NoAgentCommand { presets: String },
    #[error("task {task}: its recorded base commit {base} no longer exists in this repository")]
    BaseGone { task: String, base: String },
    #[error("{}: the event log is broken ({detail})", path.display())]
    BrokenLog { task: String, path: PathBuf, detail: String },
    #[error("{}: cannot create the attempt's TMPDIR: {source}", path.display())]
    Tmpdir { path: PathBuf, source: std::io::Error },
    #[error("{}: cannot read the prompt back: {source}", path.display())]
    PromptUnreadable { path: PathBuf, source: std::io::Error },
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
    /// The agent's model provider failed it transiently more often than
    /// `[agent] transient_retries` allows: the attempt was aborted, not
    /// counted. The message names the provider's error and what to do.
    #[error("{message}")]
    ModelUnavailable { message: String },
    /// SIGINT or SIGTERM: what ran was stopped, the attempt recorded as
    /// interrupted.
    #[error("task {task} interrupted by {}", crate::process::signal_name(*signal))]
    Interrupted { task: String, signal: i32, resume: String },
    /// Another lane of the task won (`run --lanes`): this lane's work was
    /// stopped and is recorded as stopped.
    #[error("lane {task} stopped: another lane won")]
    LaneStopped { task: String },
    /// A preset named in the config or on the command line.
    #[error(transparent)]
    Preset(#[from] crate::agents::PresetError),
    /// A `[[lane]]`'s preset.
    #[error("[[lane]] preset: {0}")]
    LanePreset(crate::agents::PresetError),
    #[error(transparent)]
    TestPaths(#[from] crate::judge::integrity::TestPathsError),
    /// A sandbox path of the config (`sandbox.writable`, a preset's state),
    /// or a sandbox mode this machine cannot give.
    #[error(transparent)]
    Sandbox(#[from] crate::sandbox::SandboxError),
    /// `agent.leftovers` globs that do not compile.
    #[error(transparent)]
    Leftovers(#[from] super::leftovers::LeftoversError),
    /// A `worktree.include` pattern or the file listing them.
    #[error("{0}")]
    Include(String),
    /// `[worktree] share` names a directory it cannot share.
    #[error("[worktree] share: {0}")]
    Share(String),
    /// More lane agents than lanes.
    #[error(
        "task {task}: {agents} lane agents are given ([[lane]] or --lane-preset) for {lanes} lanes; give --lanes {agents} or fewer agents"
    )]
    LaneAgents { task: String, agents: usize, lanes: u32 },
    /// A target the task names is in no check's tests (and
    /// `--allow-new-target` was not given).
    #[error("task {task}: {message}")]
    MissingTarget { task: String, message: String },
    /// Something retry-run itself could not read, write or start.
    #[error("{doing}: {source}")]
    Io { doing: String, source: std::io::Error },
    /// `worktree.setup` failed or could not start.
    #[error("{0}")]
    Setup(String),
    /// A submodule of the worktree could not be filled in.
    #[error("{0}")]
    Submodule(String),
    /// The task's worktree would take the worktrees past `max_disk`.
    #[error("{0}")]
    DiskBudget(String),
    /// A lane's thread ended without a result (a panic in it).
    #[error("lane {lane} ended without a result")]
    LaneLost { lane: usize },
    /// Another process here runs the task.
    #[error("{message}")]
    Held { by: String, message: String },
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Glob(#[from] GlobError),
    #[error(transparent)]
    Remote(#[from] RemoteError),
}

impl RunError {
    /// `doing` failed with `source` (the environment's fault).
    pub fn io(doing: impl Into<String>, source: std::io::Error) -> RunError {
        RunError::Io { doing: doing.into(), source }
    }

    /// Whether the user's input, rather than the environment, is at fault.
    pub fn is_usage(&self) -> bool {
        match self {
            RunError::Preset(_)
            | RunError::LanePreset(_)
            | RunError::TestPaths(_)
            | RunError::Leftovers(_)
            | RunError::Include(_)
            | RunError::Share(_)
            | RunError::LaneAgents { .. }
            | RunError::MissingTarget { .. }
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
            RunError::Io { .. }
            | RunError::Setup(_)
            | RunError::Submodule(_)
            | RunError::DiskBudget(_)
            | RunError::LaneLost { .. }
            | RunError::Held { .. }
            | RunError::BrokenLog { .. }
            | RunError::Tmpdir { .. }
            | RunError::PromptUnreadable { .. }
            | RunError::OwnExecutable { .. }
            | RunError::NoSnapshot { .. }
            | RunError::CheckStart { .. }
            | RunError::LeaseRenewal
            | RunError::AgentCannotStart { .. }
            | RunError::ModelUnavailable { .. }
            | RunError::Interrupted { .. }
            | RunError::LaneStopped { .. } => false,
            RunError::Sandbox(e) => !matches!(
                e,
                crate::sandbox::SandboxError::NoNamespaces { .. }
                    | crate::sandbox::SandboxError::NoLandlock { .. }
                    | crate::sandbox::SandboxError::NoProcessLimit { .. }
            ),
            RunError::Git(e) => e.is_usage(),
            RunError::Record(e) => e.is_usage(),
            RunError::Remote(RemoteError::Git(e)) => e.is_usage(),
            RunError::Remote(_) => false,
        }
    }

    /// What the user can do about this error, when there is one thing to
    /// say (printed once, after the error, as `hint: ...`).
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            RunError::NoRecordedTask { .. } => "give the task with --task-file FILE.md or --task TEXT".into(),
            RunError::NoAgentCommand { presets } => format!(
                "set [agent] preset ({presets}) or [agent] command in retry-run.toml, or give it after --, e.g. `retry-run run --task-file t.md -- my-agent {{prompt_file}}`"
            ),
            RunError::BaseGone { .. } => "fetch the base commit, or start over with --refresh-base".into(),
            RunError::BrokenLog { task, .. } => {
                format!(
                    "run `retry-run log {task} --verify`, then repair or move the file before running the task again"
                )
            }
            RunError::Interrupted { resume, .. } => format!("`{resume}` resumes it"),
            RunError::Glob(_) => GlobError::HINT.into(),
            RunError::Git(e) => return e.hint(),
            RunError::Remote(e) => return e.hint(),
            _ => return None,
        })
    }

    /// The error and its hint on one line (`message; hint`), where there is
    /// one line to show it (a fleet's summary).
    pub fn one_line(&self) -> String {
        match self.hint() {
            Some(h) => format!("{self}; {h}"),
            None => self.to_string(),
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
