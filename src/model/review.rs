//! A reviewer's verdict on a task's result, as data (docs/review.md): who
//! judged which attempt's commit, approved or rejected, with the one
//! required change, the critique kept verbatim and line comments on the
//! attempt's diff; and where a land put the result. Written in the task's
//! log as `Reviewed` and `TaskLanded` events (`crate::record::Event`), read
//! back by the next round's context, `report`, `status` and `stats`.

use serde::{Deserialize, Serialize};

/// What a reviewer decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Approved,
    #[default]
    Rejected,
}

impl Verdict {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Verdict::Approved => "approved",
            Verdict::Rejected => "rejected",
        }
    }
}

/// Where a verdict came from (`Review::channel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Channel {
    /// `retry-run review` with its flags (or the critique on stdin).
    #[default]
    Cli,
    /// `retry-run review --from-file`: a review file another tool wrote.
    File,
    /// `retry-run review --from-log`: a CI log read as a failed check.
    Log,
    /// `retry-run review --from-github-pr`: a pull request's reviews and
    /// check runs, read through `gh`.
    GithubPr,
    /// The local web view (`retry-run ui`).
    Ui,
    /// `retry-run land`: the replay conflicted or a gate failed on it.
    Land,
}

impl Channel {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Channel::Cli => "cli",
            Channel::File => "file",
            Channel::Log => "log",
            Channel::GithubPr => "github-pr",
            Channel::Ui => "ui",
            Channel::Land => "land",
        }
    }
}

/// A comment on lines of the judged attempt's diff: `path` (as git prints
/// it), lines `start..=end` of the new version (of the old one for a
/// deleted file), and the diff lines it refers to as they were when it was
/// made (so the next prompt shows them beside it).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LineComment {
    #[serde(default)]
    pub path: String,
    #[serde(default)]
    pub start: u32,
    #[serde(default)]
    pub end: u32,
    #[serde(default)]
    pub text: String,
    /// The diff's lines at `start..=end` (with their `+`, `-` or ` `).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<String>,
    /// Who wrote it, when not the review's reviewer (a pull request's
    /// commenter).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
}

/// A reviewer's verdict on attempt `attempt` of a task (its commit
/// `commit`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Review {
    #[serde(default)]
    pub verdict: Verdict,
    /// The attempt judged.
    #[serde(default)]
    pub attempt: u32,
    /// Its snapshot commit.
    #[serde(default)]
    pub commit: String,
    /// The reviewer: the git identity (`Name <email>`), or `--by`.
    #[serde(default)]
    pub by: String,
    #[serde(default)]
    pub channel: Channel,
    /// A rejection's one imperative sentence.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required_change: Option<String>,
    /// The critique, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub critique: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comments: Vec<LineComment>,
    /// From a CI log or a land's checks: the failures found, as the
    /// digest of a local check names them (`path:line: message`, test ids).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<String>,
    /// From a CI log or a land's checks: the digest of the output (with
    /// enclosing scopes), as a failed check's is shown.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output: Vec<String>,
    /// Where it was read from, in words: `ci.log (check pytest)`,
    /// `pull request #12`, `review.json`, `land onto main`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// An earlier rejection of this task with the same required change:
    /// the attempt it judged (a repeated critique).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<u32>,
}

impl Review {
    pub(crate) fn rejected(&self) -> bool {
        self.verdict == Verdict::Rejected
    }
}

/// How a land updated the branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LandHow {
    /// The branch was at the task's base: moved to the task's commit.
    #[default]
    FastForward,
    /// One new commit on the branch's tip with the replayed change.
    Squash,
    /// A merge commit of the branch's tip and the task's commit.
    Merge,
}

impl LandHow {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            LandHow::FastForward => "fast-forward",
            LandHow::Squash => "squash",
            LandHow::Merge => "merge",
        }
    }
}

/// Where a land put a task's result.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Landed {
    /// The branch updated (`main`, without `refs/heads/`).
    #[serde(default)]
    pub onto: String,
    /// The branch's tip before and after.
    #[serde(default)]
    pub from: String,
    #[serde(default)]
    pub commit: String,
    #[serde(default)]
    pub how: LandHow,
    /// The attempt landed, and its snapshot commit.
    #[serde(default)]
    pub attempt: u32,
    #[serde(default)]
    pub attempt_commit: String,
    /// The change was replayed onto a tip past the task's base, and the
    /// gates ran again there: what each said (`scope ok`, `pytest
    /// passed`), in order. Empty when the branch had not moved.
    #[serde(default)]
    pub replayed: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub gates: Vec<String>,
    /// The sha256 of the task's log up to the land (the trailer's).
    #[serde(default)]
    pub record_sha256: String,
    /// `--push REMOTE`, and `--pr`'s URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pushed: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pr: Option<String>,
    /// The task's branch removed (not with `--keep-branch`).
    #[serde(default)]
    pub branch_removed: bool,
}
