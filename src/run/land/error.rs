//! What can stop `retry-run land`, each with the exit code the command
//! line gives it (`is_usage`: 2, else 3) and what to do about it.

use std::path::PathBuf;

use crate::git::GitError;
use crate::record::RecordError;

use super::super::RunError;

#[derive(Debug, thiserror::Error)]
pub(crate) enum LandError {
    /// The task's result may not land (no result, rejected, landed).
    #[error("{message}")]
    Refused { message: String, hint: String },
    #[error("HEAD is detached: there is no current branch to land onto")]
    Detached,
    #[error("no branch {branch:?} to land onto (--onto takes a local branch)")]
    NoBranch { branch: String },
    /// The branch's checkout has changes a land would touch.
    #[error("{}: {} would be touched by the land and {} changes of yours (or untracked in the way): nothing was changed", checkout.display(), files.join(", "), if files.len() == 1 { "has" } else { "have" })]
    Dirty { checkout: PathBuf, files: Vec<String> },
    /// The branch moved while the land ran.
    #[error("branch {branch} moved while the land ran (it is no longer at {expected}): nothing was changed")]
    Moved { branch: String, expected: String },
    #[error("task {task} is being run or landed by process {pid}")]
    Locked { task: String, pid: String },
    #[error("the land is recorded, but `git push {remote} {branch}` failed: {detail}")]
    Push { remote: String, branch: String, detail: String },
    #[error("the land is recorded and pushed, but `gh pr create` failed: {detail}")]
    PullRequest { detail: String },
    #[error("--pr needs the GitHub CLI `gh`, which is not on PATH")]
    NoGh,
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Record(RecordError),
    #[error(transparent)]
    Run(#[from] RunError),
}

impl From<RecordError> for LandError {
    fn from(e: RecordError) -> Self {
        match e {
            RecordError::Locked { task, pid, .. } => LandError::Locked { task, pid },
            e => LandError::Record(e),
        }
    }
}

impl LandError {
    /// True when what was asked cannot be done as asked (exit 2); false
    /// when the environment failed (exit 3).
    pub(crate) fn is_usage(&self) -> bool {
        match self {
            LandError::Refused { .. } | LandError::Detached | LandError::NoBranch { .. } | LandError::Dirty { .. } => {
                true
            }
            LandError::Git(e) => e.is_usage(),
            LandError::Record(e) => e.is_usage(),
            LandError::Run(e) => e.is_usage(),
            _ => false,
        }
    }

    /// What the user can do about it.
    pub(crate) fn hint(&self) -> Option<String> {
        match self {
            LandError::Refused { hint, .. } => Some(hint.clone()),
            LandError::Detached => Some("name the branch: retry-run land TASK --onto BRANCH".into()),
            LandError::NoBranch { .. } => Some("check the name with `git branch`".into()),
            LandError::Dirty { .. } => {
                Some("commit or stash them (`git stash`), then run the land again; retry-run never touches them".into())
            }
            LandError::Moved { .. } => Some("run the land again: it replays onto the new tip".into()),
            LandError::Locked { .. } => Some("wait for it to end, then land".into()),
            LandError::Push { .. } => {
                Some("the branch is updated here: push it yourself once the remote takes it".into())
            }
            LandError::PullRequest { .. } => Some("check `gh auth status`, then open it with `gh pr create`".into()),
            LandError::NoGh => Some("install it (https://cli.github.com) and `gh auth login`".into()),
            LandError::Git(e) => e.hint(),
            LandError::Run(e) => e.hint(),
            _ => None,
        }
    }
}
