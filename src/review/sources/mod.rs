//! Where a verdict may come from besides the command's own flags: a CI
//! log read as a failed check (`log.rs`, cleaned by `ci_log.rs`), a pull
//! request through `gh` (`github.rs`, mapped by `pull_request.rs`), a
//! review file any forge or bot may write (`file.rs`, docs/review-file.md).
//! Each gives a draft [`Review`]: its verdict, required change, critique,
//! line comments (without their diff lines), failures and source; the
//! caller fills in the attempt, its commit and the reviewer (a draft's own
//! reviewer kept), and checks the comments against the attempt's diff.

mod ci_log;
mod error;
mod file;
mod github;
mod log;
mod pull_request;

use std::io::Read;
use std::path::Path;

pub(crate) use error::SourceError;

use super::ReviewError;
use crate::model::Review;

/// A review file is refused past this size: it is a verdict, not a log.
const MAX_REVIEW_FILE: u64 = 16 * 1024 * 1024;

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
    Ok(log::from_log(repo, config, commit, file, check)?)
}

/// `--from-github-pr N`: the pull request's reviews, comments and failed
/// check runs, read with `gh` in `dir`.
pub(crate) fn from_github_pr(dir: &Path, number: u64) -> Result<Review, ReviewError> {
    Ok(github::from_github_pr(dir, number)?)
}

/// `--from-file FILE`: a review file (docs/review-file.md).
pub(crate) fn from_file(path: &Path) -> Result<Review, ReviewError> {
    let unreadable = |source| SourceError::FileUnreadable { path: path.to_path_buf(), source };
    let mut f = std::fs::File::open(path).map_err(unreadable)?;
    if f.metadata().map_err(unreadable)?.is_dir() {
        let e = std::io::Error::new(std::io::ErrorKind::IsADirectory, "it is a directory");
        return Err(unreadable(e).into());
    }
    let mut bytes = Vec::new();
    f.by_ref().take(MAX_REVIEW_FILE + 1).read_to_end(&mut bytes).map_err(unreadable)?;
    let invalid =
        |at: &str, problem: String| SourceError::FileInvalid { path: path.to_path_buf(), at: at.into(), problem };
    if bytes.len() as u64 > MAX_REVIEW_FILE {
        return Err(invalid(
            "$",
            format!(
                "larger than {} MiB: a review file holds a verdict, not a log (give a CI log with --from-log)",
                MAX_REVIEW_FILE >> 20
            ),
        )
        .into());
    }
    let text = String::from_utf8(bytes)
        .map_err(|e| invalid("$", format!("not UTF-8 (byte {})", e.utf8_error().valid_up_to())))?;
    let name = path.file_name().map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into_owned());
    Ok(file::parse(&text, &name).map_err(|p| invalid(&p.at, p.what))?)
}
