//! What `land` was asked to do ([`LandOptions`]), the task's result and the
//! branch it lands onto ([`LandTarget`]), and how it ended ([`LandEnded`]).

use std::path::PathBuf;

use crate::git::Oid;
use crate::model::Landed;
use crate::record::state::TaskState;

/// What `land` was asked to do.
#[derive(Debug, Clone, Default)]
pub(crate) struct LandOptions {
    pub task: String,
    /// `--onto BRANCH` (default: the checkout's current branch).
    pub onto: Option<String>,
    /// `--merge`: a merge commit rather than a squash, on a replay.
    pub merge: bool,
    /// `--push REMOTE`.
    pub push: Option<String>,
    /// `--pr`: a pull request with `gh pr create` (pushing to `--push`'s
    /// remote, else `origin`).
    pub pr: bool,
    /// `--keep-branch`: the task's branch `retry-run/<task>` stays.
    pub keep_branch: bool,
    /// `--config`.
    pub config_path: Option<PathBuf>,
}

/// How a land ended.
#[derive(Debug, Clone)]
pub(crate) enum LandEnded {
    /// The branch holds the result.
    Landed { landed: Box<Landed>, notes: Vec<String>, completed: bool },
    /// The replay conflicted or a gate failed on it: recorded as a
    /// rejection, the branch untouched. The text says it.
    Rejected { text: String },
}

/// The task's result and the branch it lands onto.
pub(in crate::run) struct LandTarget {
    pub task: String,
    pub title: String,
    pub attempt: u32,
    pub attempt_commit: Oid,
    pub base: Oid,
    pub onto: String,
    pub tip: Oid,
    /// The sha256 of the task's log as it stands.
    pub record_sha256: String,
    pub state: TaskState,
}
