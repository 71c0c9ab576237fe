//! An open repository ([`Repo`]): found from a directory, opened again
//! for another thread, and the reads and writes every other file of the
//! layer builds on. Its other methods live beside what they do
//! (`identity.rs`, `revs.rs`, `task_worktree.rs`, ...).

use std::path::Path;

use git2::Repository;

use super::{GitError, Oid, ctx};

/// Another handle on the repository of `git_dir`, with `workdir` as its
/// working tree (which `GIT_DIR` and `GIT_WORK_TREE` may have put apart):
/// for a second thread.
pub(super) fn open_at(git_dir: &Path, workdir: Option<&Path>) -> Result<Repository, GitError> {
    let repo = Repository::open(git_dir).map_err(ctx(|| format!("cannot open {}", git_dir.display())))?;
    if let Some(w) = workdir
        && repo.workdir() != Some(w)
    {
        repo.set_workdir(w, false).map_err(ctx(|| format!("cannot use {} as the working tree", w.display())))?;
    }
    Ok(repo)
}

/// An open repository: the user's, found from a directory.
pub struct Repo {
    pub(super) repo: Repository,
    /// Set once the in-memory object database has been added.
    pub(super) mempack: std::cell::OnceCell<()>,
}

/// Whether objects are read with their hashes checked ([`verify_hashes`]).
pub(super) static VERIFY_HASHES: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Reads objects with their hashes checked from now on (`true`): where an
/// unconfined agent could have written the object store. Otherwise they are
/// read from the user's own repository, which nothing else writes, and
/// skipping the check makes reads about 30% faster.
pub fn verify_hashes(on: bool) {
    VERIFY_HASHES.store(on, std::sync::atomic::Ordering::Relaxed);
    git2::opts::strict_hash_verification(on);
}

impl Repo {
    /// Finds the repository that holds `dir` (also from inside a linked
    /// worktree or a subdirectory).
    pub fn discover(dir: &Path) -> Result<Repo, GitError> {
        git2::opts::strict_hash_verification(VERIFY_HASHES.load(std::sync::atomic::Ordering::Relaxed));
        let repo = Repository::discover(dir).map_err(|e| match e.code() {
            git2::ErrorCode::NotFound => GitError::NotARepository { path: dir.to_path_buf() },
            _ => GitError::Git { what: format!("{}: cannot open the repository", dir.display()), source: e },
        })?;
        Ok(Repo { repo, mempack: std::cell::OnceCell::new() })
    }

    /// The user's repository for a command started in `dir`, found as git
    /// finds it: `GIT_DIR` names the git directory (relative to `dir`), and
    /// without `GIT_WORK_TREE` or `core.worktree` `dir` is the top of the
    /// working tree; `GIT_WORK_TREE` names the working tree (with `GIT_DIR`
    /// or with a repository discovered from `dir`); `GIT_COMMON_DIR` must
    /// name the common directory the git directory already shares (libgit2
    /// cannot take another one). Without them, [`Repo::discover`].
    ///
    /// Only for the user's repository: a task worktree is opened by its
    /// path, whatever the environment says.
    pub fn find(dir: &Path) -> Result<Repo, GitError> {
        let var = |name: &str| {
            std::env::var_os(name).filter(|v| !v.is_empty()).map(|v| crate::pathfmt::absolute(Path::new(&v), dir))
        };
        let (git_dir, work_tree, common_dir) = (var("GIT_DIR"), var("GIT_WORK_TREE"), var("GIT_COMMON_DIR"));
        let found = match &git_dir {
            None => Repo::discover(dir)?,
            Some(g) => {
                git2::opts::strict_hash_verification(VERIFY_HASHES.load(std::sync::atomic::Ordering::Relaxed));
                let flags = git2::RepositoryOpenFlags::NO_SEARCH;
                let repo = Repository::open_ext(g, flags, &[] as &[&std::ffi::OsStr]).map_err(|e| {
                    let problem = match e.code() {
                        git2::ErrorCode::NotFound => "not a git directory".to_string(),
                        _ => format!("cannot open the repository: {}", e.message()),
                    };
                    GitError::Environment { var: "GIT_DIR", path: g.clone(), problem }
                })?;
                Repo { repo, mempack: std::cell::OnceCell::new() }
            }
        };
        if let Some(c) = &common_dir {
            let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
                (Ok(a), Ok(b)) => a == b,
                _ => false,
            };
            if !same(c, found.repo.commondir()) {
                let problem = format!(
                    "the repository at {} shares {}; retry-run follows GIT_COMMON_DIR only where it names that same directory",
                    found.repo.path().display(),
                    found.repo.commondir().display()
                );
                return Err(GitError::Environment { var: "GIT_COMMON_DIR", path: c.clone(), problem });
            }
        }
        let top = match (&work_tree, &git_dir) {
            (Some(w), _) => Some((w.clone(), "GIT_WORK_TREE")),
            // git: with GIT_DIR alone, the current directory is the top of
            // the working tree, unless the config names one or says bare.
            (None, Some(_)) => {
                let config = found.repo.config().ok();
                let named = config.as_ref().is_some_and(|c| c.get_path("core.worktree").is_ok());
                let bare = config.as_ref().and_then(|c| c.get_bool("core.bare").ok()).unwrap_or(false);
                (!named && !bare).then(|| (dir.to_path_buf(), "GIT_DIR"))
            }
            (None, None) => None,
        };
        if let Some((top, var)) = top {
            if !top.is_dir() {
                return Err(GitError::Environment { var, path: top, problem: "no such directory".into() });
            }
            found.repo.set_workdir(&top, false).map_err(|e| GitError::Environment {
                var,
                path: top.clone(),
                problem: format!("cannot use it as the working tree: {}", e.message()),
            })?;
        }
        Ok(found)
    }

    /// Another handle on the same repository and working tree, for another
    /// thread (a handle is not shared between threads).
    pub fn reopen(&self) -> Result<Repo, GitError> {
        let path = self.repo.path();
        let repo = Repository::open(path).map_err(|e| GitError::Git {
            what: format!("{}: cannot open the repository", path.display()),
            source: e,
        })?;
        if let Some(w) = self.repo.workdir()
            && repo.workdir() != Some(w)
        {
            repo.set_workdir(w, false).map_err(ctx(|| format!("cannot use {} as the working tree", w.display())))?;
        }
        Ok(Repo { repo, mempack: std::cell::OnceCell::new() })
    }

    /// The working tree's root, or `None` for a bare repository.
    pub fn workdir(&self) -> Option<&Path> {
        self.repo.workdir()
    }

    /// The git directory shared by all worktrees of the repository.
    pub fn common_dir(&self) -> &Path {
        self.repo.commondir()
    }

    /// Whether git ignores `rel` (a path relative to the working tree).
    pub fn is_ignored(&self, rel: &Path) -> bool {
        self.repo.status_should_ignore(rel).unwrap_or(false)
    }

    /// Whether git sees no change at `rel`: ignored by the rules and not
    /// tracked (a tracked file counts wherever it lives).
    pub fn ignores_changes_to(&self, rel: &Path) -> bool {
        self.is_ignored(rel) && !self.repo.index().is_ok_and(|i| i.get_path(rel, 0).is_some())
    }

    /// Every branch and tag (`refs/heads/x`, `refs/tags/v1`) with the id it
    /// points at (empty for a symbolic ref), in the order git lists them.
    pub fn branches_and_tags(&self) -> Vec<(String, String)> {
        let Ok(refs) = self.repo.references() else { return Vec::new() };
        refs.flatten()
            .filter_map(|r| {
                let name = r.name().ok()?;
                (name.starts_with("refs/heads/") || name.starts_with("refs/tags/"))
                    .then(|| (name.to_string(), r.target().map(|o| o.to_string()).unwrap_or_default()))
            })
            .collect()
    }

    /// This worktree's own git directory (`<common>/worktrees/<id>` for a
    /// linked worktree, the common directory for the main one).
    pub fn git_dir(&self) -> &Path {
        self.repo.path()
    }
}

impl Repo {
    /// The content of `path` in `commit`'s tree; `None` when it is not a
    /// blob there.
    pub fn blob_at(&self, commit: Oid, path: &str) -> Option<Vec<u8>> {
        let tree = self.repo.find_commit(commit).ok()?.tree().ok()?;
        let entry = tree.get_path(Path::new(path)).ok()?;
        let blob = self.repo.find_blob(entry.id()).ok()?;
        Some(blob.content().to_vec())
    }

    /// Points branch `name` at `commit`, creating or moving it. Only for
    /// `retry-run/<task>`, the one branch retry-run writes in the user's
    /// repository.
    pub fn set_branch(&self, name: &str, commit: Oid) -> Result<(), GitError> {
        let c = self
            .repo
            .find_commit(commit)
            .map_err(|e| GitError::Git { what: format!("cannot read commit {commit}"), source: e })?;
        self.repo
            .branch(name, &c, true)
            .map_err(|e| GitError::Git { what: format!("cannot create branch {name}"), source: e })?;
        Ok(())
    }
}
