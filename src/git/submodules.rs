//! Submodules of a task worktree (docs/repositories.md, "Submodules").
//!
//! A task worktree gets the submodules the user's checkout has initialised
//! (a repository in the submodule's directory holding the commit the base
//! records), at that commit; the others stay empty directories, as git
//! leaves a submodule nobody initialised. Filling one in takes the `git`
//! program (`run/worktree.rs`, from the checkout's own objects); what is
//! here is what libgit2 does: which submodules the base has and where the
//! checkout keeps them, and a submodule put back as the base records it
//! before each attempt.
//!
//! A submodule of a task worktree keeps its repository in the worktree's
//! administrative directory (`<git-common-dir>/worktrees/retry-run-<task>/
//! modules/<name>`), where `git submodule update` puts it in a linked
//! worktree; its directory's `.git` file points there.

use std::path::{Path, PathBuf};

use git2::build::CheckoutBuilder;
use git2::{Oid, Repository, Status, StatusOptions};

use super::nofollow_fs;
use super::{GitError, Repo, ctx};

const GITLINK: i32 = 0o160000;

/// One submodule of the base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submodule {
    /// Its name in `.gitmodules` (its path when `.gitmodules` does not name it).
    pub name: String,
    /// Its path in the repository.
    pub path: String,
    /// The commit the base records.
    pub commit: Oid,
    /// The git directory of the user's checkout's copy, when the checkout has
    /// it initialised and holds that commit: where a task worktree gets it from.
    pub source: Option<PathBuf>,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> GitError + '_ {
    move |source| GitError::Io { path: path.to_path_buf(), source }
}

impl Repo {
    /// The submodules of commit `base` (its gitlinks, when it has a
    /// `.gitmodules`), named by its `.gitmodules`, each with the user's checkout's copy when there is one.
    pub fn submodules_at(&self, base: Oid) -> Result<Vec<Submodule>, GitError> {
        let commit = self.repo.find_commit(base).map_err(ctx(|| format!("cannot read base commit {base}")))?;
        let tree = commit.tree().map_err(ctx(|| format!("cannot read the tree of {base}")))?;
        // Without `.gitmodules` git knows no submodule (and the walk below
        // is skipped: it reads every tree of the commit).
        if tree.get_name(".gitmodules").is_none() {
            return Ok(Vec::new());
        }
        let mut links: Vec<(String, Oid)> = Vec::new();
        tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            if entry.filemode() == GITLINK {
                links.push((format!("{dir}{}", String::from_utf8_lossy(entry.name_bytes())), entry.id()));
            }
            git2::TreeWalkResult::Ok
        })
        .map_err(ctx(|| format!("cannot walk the tree of {base}")))?;
        if links.is_empty() {
            return Ok(Vec::new());
        }
        let names = self.gitmodules_names(&tree);
        let workdir = self.workdir().map(Path::to_path_buf);
        Ok(links
            .into_iter()
            .map(|(path, commit)| {
                let name = names.iter().find(|(_, p)| *p == path).map_or_else(|| path.clone(), |(n, _)| n.clone());
                let source = workdir.as_ref().and_then(|w| checkout_copy(&w.join(&path), commit));
                Submodule { name, path, commit, source }
            })
            .collect())
    }

    /// (name, path) of each `submodule.<name>.path` of the tree's `.gitmodules`.
    fn gitmodules_names(&self, tree: &git2::Tree<'_>) -> Vec<(String, String)> {
        let Some(blob) = tree.get_path(Path::new(".gitmodules")).ok().and_then(|e| self.repo.find_blob(e.id()).ok())
        else {
            return Vec::new();
        };
        parse_gitmodules(&String::from_utf8_lossy(blob.content()))
    }

    /// Where the task's worktree keeps submodule `name`'s repository.
    pub fn worktree_module_dir(&self, task: &str, name: &str) -> PathBuf {
        self.worktree_meta(task).join("modules").join(name)
    }

    /// The object directories of the submodules the task's worktree has.
    pub fn worktree_module_objects(&self, task: &str) -> Vec<PathBuf> {
        let mut out = Vec::new();
        let mut stack = vec![self.worktree_meta(task).join("modules")];
        while let Some(dir) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&dir) else { continue };
            for e in rd.flatten() {
                if !e.file_type().is_ok_and(|t| t.is_dir()) {
                    continue;
                }
                let objects = e.path().join("objects");
                if objects.is_dir() {
                    out.push(objects);
                } else {
                    // A name with slashes: its directories nest.
                    stack.push(e.path());
                }
            }
        }
        out.sort();
        out
    }

    /// Each submodule of the task's worktree at `wt` put back as the base
    /// records it: one that the user's checkout has and the worktree holds
    /// is checked out at the base's commit with nothing else in it (what
    /// an attempt wrote, committed or not, gone); every other one ends an
    /// empty directory, its repository in the worktree removed. Returns the
    /// submodules of `subs` that must be filled in from the checkout.
    pub fn reset_submodules<'s>(
        &self,
        wt: &Path,
        task: &str,
        subs: &'s [Submodule],
    ) -> Result<Vec<&'s Submodule>, GitError> {
        let mut fill = Vec::new();
        for s in subs {
            let dir = wt.join(&s.path);
            if !std::fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
                if std::fs::symlink_metadata(&dir).is_ok() {
                    nofollow_fs::remove_any(&dir).map_err(io(&dir))?;
                }
                std::fs::create_dir_all(&dir).map_err(io(&dir))?;
            }
            let gitdir = self.worktree_module_dir(task, &s.name);
            if s.source.is_some() && self.reset_one(&dir, &gitdir, s.commit)? {
                continue;
            }
            empty_dir(&dir)?;
            if std::fs::symlink_metadata(&gitdir).is_ok() {
                nofollow_fs::remove_any(&gitdir).map_err(io(&gitdir))?;
            }
            if s.source.is_some() {
                fill.push(s);
            }
        }
        Ok(fill)
    }

    /// Submodule `dir` back at `commit`, when it is the worktree's own
    /// (its `.git` file points at `gitdir`) and holds the commit; `false`
    /// when it is not, for the caller to empty and fill it again.
    fn reset_one(&self, dir: &Path, gitdir: &Path, commit: Oid) -> Result<bool, GitError> {
        if !links_to(dir, gitdir) {
            return Ok(false);
        }
        // Opened at its git directory with the working tree named here: a
        // `core.worktree` an attempt wrote into its config is not followed.
        let Ok(sub) = Repository::open(gitdir) else { return Ok(false) };
        if sub.find_commit(commit).is_err() {
            return Ok(false);
        }
        sub.set_workdir(dir, false).map_err(ctx(|| format!("{}: cannot open the submodule", dir.display())))?;
        let at_commit =
            sub.head().ok().and_then(|h| h.target()) == Some(commit) && sub.head_detached().unwrap_or(false);
        if at_commit && clean(&sub, dir)? {
            return Ok(true);
        }
        // Everything but the link removed (never through a symlink), then
        // the commit's files written afresh.
        let rd = std::fs::read_dir(dir).map_err(io(dir))?;
        for e in rd.flatten() {
            if e.file_name() != ".git" {
                nofollow_fs::remove_any(&e.path()).map_err(io(&e.path()))?;
            }
        }
        sub.set_head_detached(commit).map_err(ctx(|| format!("{}: cannot detach HEAD at {commit}", dir.display())))?;
        let mut index = sub.index().map_err(ctx(|| format!("{}: cannot read the submodule's index", dir.display())))?;
        index.clear().map_err(ctx(|| "cannot clear the submodule's index".into()))?;
        index.write().map_err(ctx(|| format!("{}: cannot write the submodule's index", dir.display())))?;
        let mut co = CheckoutBuilder::new();
        co.force().recreate_missing(true);
        sub.checkout_head(Some(&mut co)).map_err(ctx(|| format!("{}: cannot check out {commit}", dir.display())))?;
        Ok(true)
    }
}

/// The git directory of the checkout's copy of a submodule at `dir`, when
/// there is one holding `commit`.
fn checkout_copy(dir: &Path, commit: Oid) -> Option<PathBuf> {
    let repo = Repository::open(dir).ok()?;
    // Its own repository, not the superproject's found through a file.
    let own = repo.workdir().and_then(|w| std::fs::canonicalize(w).ok()) == std::fs::canonicalize(dir).ok();
    (own && repo.find_commit(commit).is_ok()).then(|| repo.path().to_path_buf())
}

/// Whether the `.git` of submodule `dir` is a file that points at `gitdir`
/// (absolute, or relative to `dir` as git writes it).
fn links_to(dir: &Path, gitdir: &Path) -> bool {
    let link = dir.join(".git");
    if !std::fs::symlink_metadata(&link).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let Ok(text) = std::fs::read_to_string(&link) else { return false };
    let Some(target) = text.strip_prefix("gitdir: ").map(str::trim_end) else { return false };
    let target = dir.join(target);
    match (std::fs::canonicalize(target), std::fs::canonicalize(gitdir)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// Whether a submodule has nothing of its own: no change, no untracked or
/// ignored file.
fn clean(sub: &Repository, dir: &Path) -> Result<bool, GitError> {
    let mut opts = StatusOptions::new();
    opts.include_untracked(true).include_ignored(true).exclude_submodules(false);
    let list = sub
        .statuses(Some(&mut opts))
        .map_err(ctx(|| format!("cannot read the status of submodule {}", dir.display())))?;
    Ok(list.iter().all(|e| e.status() == Status::CURRENT))
}

/// Everything inside `dir` removed, never through a symlink.
fn empty_dir(dir: &Path) -> Result<(), GitError> {
    let rd = std::fs::read_dir(dir).map_err(io(dir))?;
    for e in rd.flatten() {
        nofollow_fs::remove_any(&e.path()).map_err(io(&e.path()))?;
    }
    Ok(())
}

/// (name, path) of each `[submodule "name"]` with a `path` in a
/// `.gitmodules` text.
fn parse_gitmodules(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut name: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(head) = line.strip_prefix('[') {
            name = head
                .strip_prefix("submodule")
                .and_then(|r| r.trim().strip_prefix('"'))
                .and_then(|r| r.rsplit_once('"'))
                .map(|(n, _)| n.to_string());
        } else if let (Some(n), Some((key, value))) = (&name, line.split_once('='))
            && key.trim().eq_ignore_ascii_case("path")
        {
            let value = value.trim().trim_matches('"').to_string();
            out.push((n.clone(), value));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::parse_gitmodules;

    #[test]
    fn gitmodules_names_and_paths() {
        let text = "[submodule \"lib\"]\n\tpath = vendor/lib\n\turl = ../lib.git\n[core]\n\tpath = no\n[submodule \"x y\"]\n\tpath = \"x y\"\n";
        assert_eq!(
            parse_gitmodules(text),
            vec![("lib".to_string(), "vendor/lib".to_string()), ("x y".to_string(), "x y".to_string())]
        );
    }
}
