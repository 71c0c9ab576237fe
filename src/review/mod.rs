//! `retry-run review`: a reviewer's verdict on a task's result, recorded
//! in the task's log as a `Reviewed` event (docs/review.md). The verdict
//! comes from the command's flags, a review file, a CI log or a pull
//! request ([`sources`]); whatever its channel, it is checked the same way
//! (the line comments against the judged attempt's diff, a repeated
//! critique said) and recorded the same way, so the next round's context
//! reads them alike.

mod error;
pub(crate) mod sources;

use std::path::{Path, PathBuf};

pub(crate) use error::ReviewError;

use crate::model::Review;

/// A line comment as given on the command line: `PATH:LINE[-LINE]` and its
/// text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CommentArg {
    pub spec: String,
    pub text: String,
}

/// What the reviewer says, and where it comes from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Input {
    /// `--approve`.
    Approve,
    /// `--required-change` with its critique (`--critique`,
    /// `--critique-file`, or stdin, read by the command line) and
    /// `--comment`s.
    Reject { required_change: String, critique: Option<String>, comments: Vec<CommentArg> },
    /// `--from-log FILE --check NAME`: a CI log read as that check's output.
    FromLog { file: PathBuf, check: String, required_change: Option<String> },
    /// `--from-github-pr N`: the pull request's reviews, comments and
    /// failed check runs, through `gh`.
    FromGithubPr { number: u64 },
    /// `--from-file FILE`: a review file (docs/review.md).
    FromFile { path: PathBuf },
}

/// `retry-run review`, as asked.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub task: String,
    /// `--attempt`: else the task's result (its latest successful attempt).
    pub attempt: Option<u32>,
    /// `--by`: else the git identity.
    pub by: Option<String>,
    pub input: Input,
    /// `--config`: the project's config, for `--from-log`'s check.
    pub config_path: Option<PathBuf>,
}

/// A review recorded, with what the reviewer should know (a repeated
/// critique).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Recorded {
    pub review: Review,
    pub warnings: Vec<String>,
}

/// Records the review `req` asks for in its task's log.
pub(crate) fn review(dir: &Path, req: Request) -> Result<Recorded, ReviewError> {
    let _ = (dir, req);
    Err(ReviewError::NotYet)
}
