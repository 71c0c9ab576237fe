//! What can go wrong sharing a task through a remote ([`RemoteError`]).

use crate::git::GitError;
use crate::record::RecordError;

/// A failure of a remote operation, naming the task and the remote.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    #[error("`git` is not on PATH: {what} runs it to reach the remote")]
    NoGit { what: String },
    #[error("{what}: git could not reach remote {remote:?}: {detail}")]
    Transport { remote: String, what: String, detail: String },
    #[error(
        "task {task}: the record on {remote} and the local one diverged at event {seq} (local: {}, remote: {}); nothing was merged"
        , local.as_deref().unwrap_or("none"), remote_event.as_deref().unwrap_or("none")
    )]
    Diverged { task: String, remote: String, seq: u64, local: Option<String>, remote_event: Option<String> },
    #[error("task {task}: {remote} refused the push ({})", reasons.join("; "))]
    Refused { task: String, remote: String, reasons: Vec<String> },
    #[error("task {task} is held by {by} on {remote}; skipped")]
    Held { task: String, remote: String, by: String },
    #[error("task {task}: another run took over its lease on {remote} ({by}); this run pushes nothing more and stops")]
    LeaseLost { task: String, remote: String, by: String },
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Record(#[from] RecordError),
}

impl RemoteError {
    /// What the user can do about this error, when there is one thing to
    /// say (printed once, after the error).
    pub fn hint(&self) -> Option<String> {
        match self {
            RemoteError::NoGit { .. } => Some("install git".into()),
            RemoteError::Diverged { task, .. } => {
                Some(format!("keep one: move .git/retry-run/tasks/{task} aside and pull again to take the remote's"))
            }
            RemoteError::Refused { task, .. } => Some(format!("`retry-run pull {task}` shows what it holds")),
            RemoteError::Git(e) => e.hint(),
            _ => None,
        }
    }

    /// Who holds the task, when the task was skipped because another run
    /// holds it.
    pub fn held_by(&self) -> Option<&str> {
        match self {
            RemoteError::Held { by, .. } => Some(by),
            _ => None,
        }
    }
}
