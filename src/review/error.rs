//! What can go wrong recording a review, each with what to do.

use thiserror::Error;

#[derive(Debug, Error)]
pub(crate) enum ReviewError {
    #[error("review is not built yet")]
    NotYet,
    #[error(transparent)]
    Git(#[from] crate::git::GitError),
    #[error(transparent)]
    Record(#[from] crate::record::RecordError),
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
            ReviewError::Source(e) => e.is_usage(),
            ReviewError::NotYet => false,
        }
    }

    /// What to do about it, when there is something to say.
    pub(crate) fn hint(&self) -> Option<String> {
        match self {
            ReviewError::Git(e) => e.hint(),
            ReviewError::Source(e) => e.hint(),
            _ => None,
        }
    }
}
