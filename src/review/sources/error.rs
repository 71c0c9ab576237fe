//! What can go wrong reading a verdict from a CI log, a pull request or a
//! review file, each naming the file, the check or the command, and what to
//! do about it.

use std::path::PathBuf;

use thiserror::Error;

#[derive(Debug, Error)]
pub(crate) enum SourceError {
    /// `--check NAME` that the config does not have.
    #[error("--check {check}: the config has no check named `{check}` ({})", configured_checks(configured))]
    UnknownCheck { check: String, configured: Vec<String> },
    #[error("{}: cannot read the CI log: {source}", path.display())]
    LogUnreadable { path: PathBuf, source: std::io::Error },
    /// A log in which the check did not fail: nothing to reject with.
    #[error("{}: nothing failed in it: read as the output of check `{check}`, {why}", path.display())]
    NothingFailed { path: PathBuf, check: String, why: String },
    #[error("--from-github-pr needs GitHub's `gh` program, and it is not on PATH")]
    GhMissing,
    #[error("--from-github-pr: `gh` is not logged in to GitHub ({said})")]
    GhNotLoggedIn { said: String },
    /// `gh` failed for a reason of the user's (no such pull request).
    #[error("pull request #{number}: `gh {command}` failed: {said}")]
    PullRequestNotFound { number: u64, command: String, said: String },
    #[error("`gh {command}` failed: {said}")]
    GhFailed { command: String, said: String },
    #[error("`gh {command}` printed what retry-run cannot read: {problem}")]
    GhOutput { command: String, problem: String },
    /// A pull request with no review, comment or failed check.
    #[error("pull request #{number} has nothing to record: {why}")]
    NothingInPullRequest { number: u64, why: String },
    #[error("{}: cannot read the review file: {source}", path.display())]
    FileUnreadable { path: PathBuf, source: std::io::Error },
    /// A review file that is not JSON, or whose JSON says what a review
    /// cannot (`at` is its JSON path, `$.comments[1].start`).
    #[error("{}: {at}: {problem}", path.display())]
    FileInvalid { path: PathBuf, at: String, problem: String },
}

/// `its checks: a, b` or `it has no [[check]]`.
fn configured_checks(names: &[String]) -> String {
    if names.is_empty() {
        "it has no [[check]]".into()
    } else {
        let shown: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
        format!("its checks: {}", shown.join(", "))
    }
}

impl SourceError {
    /// Whether the error is in what the user gave (exit code 2), not in
    /// the environment (3).
    pub(crate) fn is_usage(&self) -> bool {
        match self {
            SourceError::UnknownCheck { .. }
            | SourceError::LogUnreadable { .. }
            | SourceError::NothingFailed { .. }
            | SourceError::PullRequestNotFound { .. }
            | SourceError::NothingInPullRequest { .. }
            | SourceError::FileUnreadable { .. }
            | SourceError::FileInvalid { .. } => true,
            SourceError::GhMissing
            | SourceError::GhNotLoggedIn { .. }
            | SourceError::GhFailed { .. }
            | SourceError::GhOutput { .. } => false,
        }
    }

    /// What to do about it.
    pub(crate) fn hint(&self) -> Option<String> {
        Some(match self {
            SourceError::UnknownCheck { configured, .. } if configured.is_empty() => {
                "add a [[check]] to retry-run.toml whose output the log holds (its format decides how the log is read)"
                    .into()
            }
            SourceError::UnknownCheck { .. } => {
                "name with --check the configured check whose output the CI log holds".into()
            }
            SourceError::LogUnreadable { .. } => "give the path of the CI log, saved as a file".into(),
            SourceError::NothingFailed { .. } => {
                "give the log of the run that failed (for GitHub Actions: the failed job's raw log, or `gh run view --log-failed`), or reject with --required-change".into()
            }
            SourceError::GhMissing => "install GitHub's gh CLI (https://cli.github.com) or use --from-file".into(),
            SourceError::GhNotLoggedIn { .. } => "run `gh auth login` (or set GH_TOKEN), then try again".into(),
            SourceError::PullRequestNotFound { .. } => {
                "give the number of a pull request of this repository's GitHub remote (`gh pr list`)".into()
            }
            SourceError::GhFailed { .. } | SourceError::GhOutput { .. } => {
                "run the same `gh` command yourself to see what it says, or save the review as a file and use --from-file (docs/review-file.md)".into()
            }
            SourceError::NothingInPullRequest { .. } => {
                "wait for a review or for its checks to finish, or reject with --required-change".into()
            }
            SourceError::FileUnreadable { .. } => "give the path of a review file (docs/review-file.md)".into(),
            SourceError::FileInvalid { .. } => {
                "fix the file: docs/review-file.md lists its fields and which are required".into()
            }
        })
    }
}
