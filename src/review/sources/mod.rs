//! Where a verdict may come from besides the command's own flags: a CI
//! log read as a failed check (`log.rs`), a pull request through `gh`
//! (`github.rs`), a review file any forge or bot may write (`file.rs`).
//! Each gives a draft [`Review`]: its verdict, required change, critique,
//! line comments (without their diff lines), failures and source; the
//! caller fills in the attempt, its commit and the reviewer, and checks
//! the comments against the attempt's diff.

use std::path::Path;

use super::ReviewError;
use crate::model::Review;

/// `--from-log FILE --check NAME`: the log read as the output of check
/// `check` of the project's config (its format, digest and enrichment by
/// the judged commit's sources), as a rejection.
pub(crate) fn from_log(
    repo: &crate::git::Repo,
    config: &crate::config::Config,
    commit: crate::git::Oid,
    file: &Path,
    check: &str,
) -> Result<Review, ReviewError> {
    let _ = (repo, config, commit, file, check);
    Err(ReviewError::NotYet)
}

/// `--from-github-pr N`: the pull request's reviews, comments and failed
/// check runs, read with `gh` in `dir`.
pub(crate) fn from_github_pr(dir: &Path, number: u64) -> Result<Review, ReviewError> {
    let _ = (dir, number);
    Err(ReviewError::NotYet)
}

/// `--from-file FILE`: a review file (docs/review.md).
pub(crate) fn from_file(path: &Path) -> Result<Review, ReviewError> {
    let _ = path;
    Err(ReviewError::NotYet)
}
