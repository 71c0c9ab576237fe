//! What can go wrong in the git layer ([`GitError`], with the path or ref
//! it concerns and a hint where there is one thing to say), and the small
//! constructors the layer builds its errors with.

use std::path::{Path, PathBuf};

/// A failure of the git layer, with the path or ref it concerns.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// The working tree holds a directory [`super::MAX_SCAN_DEPTH`]
    /// levels deep or deeper: the snapshot does not read it.
    #[error(
        "{}: a directory of the attempt's tree is {} levels deep or deeper; it is left out of the snapshot",
        crate::pathfmt::display(path),
        crate::model::MAX_TREE_DEPTH
    )]
    TooDeep { path: Vec<u8> },
    #[error("{}: not a git repository (nor any parent directory)", path.display())]
    NotARepository { path: PathBuf },
    #[error("unknown revision {rev:?}: no branch, tag or commit of that name")]
    UnknownRevision { rev: String, hint: Option<String> },
    #[error("revision {rev:?} names a {kind}, not a commit")]
    NotACommit { rev: String, kind: String },
    #[error("no base given and no default branch found (tried origin/HEAD, init.defaultBranch, main, master)")]
    NoDefaultBranch,
    #[error("{a} and {b} have no common ancestor")]
    NoMergeBase { a: String, b: String },
    #[error("{a} and {b} have no common ancestor in this shallow clone")]
    ShallowNoMergeBase { a: String, b: String },
    #[error("the repository has no commit yet")]
    NoCommit,
    #[error("{var}={}: {problem}", path.display())]
    Environment { var: &'static str, path: PathBuf, problem: String },
    #[error("HEAD of {} has no commit yet", path.display())]
    UnbornHead { path: PathBuf },
    #[error("{}: bare repository has no working tree", path.display())]
    Bare { path: PathBuf },
    #[error("{what}: {source}")]
    Git { what: String, source: git2::Error },
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    /// A filter driver the attributes name cannot run here.
    #[error(
        "filter driver {driver:?} {problem} ({paths}); retry-run stops rather than work on content git would have converted"
    )]
    FilterDriver { driver: String, problem: String, paths: String },
    /// The `git` program failed at work libgit2 cannot do.
    #[error("{what}: git: {detail}")]
    GitProgram { what: String, detail: String },
    /// One of the worktree's git files (`name`) is a link, FIFO, socket,
    /// device, hard link or oversized file ([`worktree_admin::plain_files`]).
    #[error("{name} is not a plain file: the worktree's git files are retry-run's, not to be replaced")]
    NotPlainFile { name: String },
}

impl GitError {
    /// What the user can do about this error, when there is one thing to
    /// say (printed once, after the error, as `hint: ...`).
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            GitError::NotARepository { .. } => "run retry-run inside a repository or pass -C DIR".into(),
            GitError::UnknownRevision { hint, .. } => return hint.clone(),
            GitError::NoDefaultBranch => "pass --base REV or set `base` in retry-run.toml".into(),
            GitError::NoMergeBase { .. } => "pick a base that shares history with the head".into(),
            GitError::ShallowNoMergeBase { .. } => {
                "fetch more history (git fetch --unshallow, or fetch-depth: 0 in actions/checkout)".into()
            }
            GitError::NoCommit => "make a first commit: retry-run needs a base".into(),
            GitError::Environment { var, .. } => format!("fix or unset {var}"),
            GitError::UnbornHead { .. } => "commit something first".into(),
            GitError::Bare { .. } => "pass --head REV to compare commits".into(),
            GitError::FilterDriver { .. } => {
                "configure the driver or install its program (git-lfs: `git lfs install`)".into()
            }
            _ => return None,
        })
    }

    /// The error and its hint on one line (`message; hint`), where there is
    /// one line to show it (an answer to the agent, a recorded reason).
    pub fn one_line(&self) -> String {
        match self.hint() {
            Some(h) => format!("{self}; {h}"),
            None => self.to_string(),
        }
    }

    /// Whether this is a directory too deep to read: [`GitError::TooDeep`]
    /// from retry-run's own scan, or libgit2's walk of a working tree, which
    /// enters no directory 100 levels deep.
    pub fn is_too_deep(&self) -> bool {
        match self {
            GitError::TooDeep { .. } => true,
            GitError::Git { source, .. } => source.message().contains("directory nesting too deep"),
            _ => false,
        }
    }

    /// True when the user asked for something that cannot exist (exit 2);
    /// false when the environment failed (exit 3).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            GitError::UnknownRevision { .. }
                | GitError::NotACommit { .. }
                | GitError::NoDefaultBranch
                | GitError::NoCommit
                | GitError::Environment { .. }
                | GitError::NoMergeBase { .. }
                | GitError::Bare { .. }
        )
    }
}

/// The result of a scoped thread of the git layer; a thread that panicked
/// becomes an error naming `what` it was doing and where.
pub(super) fn joined<T>(
    result: std::thread::Result<Result<T, GitError>>,
    path: &Path,
    what: &str,
) -> Result<T, GitError> {
    result.unwrap_or_else(|_| {
        Err(GitError::Io { path: path.to_path_buf(), source: std::io::Error::other(format!("{what} failed")) })
    })
}

pub(crate) fn ctx(what: impl FnOnce() -> String) -> impl FnOnce(git2::Error) -> GitError {
    move |source| GitError::Git { what: what(), source }
}
