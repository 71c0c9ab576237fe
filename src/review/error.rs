//! What can go wrong recording a review, each with what to do.

use std::path::PathBuf;

use thiserror::Error;

#[derive(Debug, Error)]
pub(crate) enum ReviewError {
    #[error("task {task} is running (process {pid}); a review judges a result, not an attempt under way")]
    Running { task: String, pid: String },
    #[error("the log of task {task} does not verify ({}): nothing was recorded", path.display())]
    BrokenLog { task: String, path: PathBuf },
    #[error("task {task} has no result to review: its latest round did not succeed")]
    NoResult { task: String },
    #[error("task {task} has no attempt {attempt}{}", if known.is_empty() { String::new() } else { format!(" (its attempts: {known})") })]
    NoAttempt { task: String, attempt: u32, known: String },
    #[error("attempt {attempt} of task {task} left no snapshot commit: there is no result to judge")]
    NoCommit { task: String, attempt: u32 },
    #[error("the snapshot commit {commit} of attempt {attempt} of task {task} is not in the repository")]
    CommitGone { task: String, attempt: u32, commit: String },
    #[error("who reviews? no --by was given and git has no name (no GIT_COMMITTER_NAME, no user.name)")]
    NoIdentity,
    #[error("the required change {problem}")]
    RequiredChange { problem: String },
    #[error("the review from {source_name} rejects the result without a required change")]
    NoRequiredChange { source_name: String },
    #[error("--comment {spec}: {problem}")]
    Comment { spec: String, problem: String, hint: String },
    #[error(transparent)]
    Git(#[from] crate::git::GitError),
    #[error(transparent)]
    Record(#[from] crate::record::RecordError),
    #[error(transparent)]
    Run(#[from] crate::run::RunError),
    #[error(transparent)]
    Source(#[from] super::sources::SourceError),
}

impl ReviewError {
    /// Whether the error is in what the user gave (exit code 2), not in
    /// the environment (3).
    pub(crate) fn is_usage(&self) -> bool {
        match self {
            ReviewError::Git(e) => e.is_usage(),
            ReviewError::Record(e) => e.is_usage(),
            ReviewError::Run(e) => e.is_usage(),
            ReviewError::Source(e) => e.is_usage(),
            ReviewError::NoResult { .. }
            | ReviewError::NoAttempt { .. }
            | ReviewError::NoCommit { .. }
            | ReviewError::NoIdentity
            | ReviewError::RequiredChange { .. }
            | ReviewError::NoRequiredChange { .. }
            | ReviewError::Comment { .. } => true,
            ReviewError::Running { .. } | ReviewError::BrokenLog { .. } | ReviewError::CommitGone { .. } => false,
        }
    }

    /// What to do about it, when there is something to say.
    pub(crate) fn hint(&self) -> Option<String> {
        match self {
            ReviewError::Git(e) => e.hint(),
            ReviewError::Run(e) => e.hint(),
            ReviewError::Source(e) => e.hint(),
            ReviewError::Running { task, .. } => {
                Some(format!("wait for it to end (`retry-run status {task}` shows it), then review its result"))
            }
            ReviewError::BrokenLog { task, .. } => {
                Some(format!("`retry-run log {task} --verify` shows where it breaks"))
            }
            ReviewError::NoResult { task } | ReviewError::NoAttempt { task, .. } => {
                Some(format!("name the attempt to judge with --attempt N (`retry-run report {task}` lists them)"))
            }
            ReviewError::NoCommit { task, .. } => {
                Some(format!("judge an attempt that left a commit (`retry-run report {task}` lists them)"))
            }
            ReviewError::NoIdentity => {
                Some("say who with --by NAME, or set it once with `git config user.name \"Your Name\"` (or GIT_COMMITTER_NAME in the environment)".to_string())
            }
            ReviewError::RequiredChange { .. } => Some(
                "give one imperative sentence: --required-change 'Retry the 429 instead of swallowing it'".to_string(),
            ),
            ReviewError::NoRequiredChange { .. } => {
                Some("name the change the next round must make in the review's required_change".to_string())
            }
            ReviewError::Comment { hint, .. } => Some(hint.clone()),
            _ => None,
        }
    }
}
