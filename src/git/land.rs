//! What `retry-run land` asks of git: a task's change replayed onto a
//! branch's tip (a three-way merge of trees, nothing checked out), the
//! conflicting hunks when it does not apply, the landed commit, and the
//! branch moved: by a compare-and-swap of its ref where no checkout has
//! it, else by `git merge --ff-only` in the checkout that has it, once no
//! file it would touch is dirty.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use git2::{MergeFileOptions, MergeOptions, Oid, Repository, Signature};

use super::filters::run_git;
use super::{GitError, Ident, Repo, Role, ctx};

/// A replay of a change onto a tip.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Replay {
    /// It applied: the tree it makes.
    Clean { tree: Oid },
    /// It conflicted: the paths, and each conflict's text in the style of
    /// conflict markers (`<<<<<<< BRANCH` … `>>>>>>> task`), by path.
    Conflicts { paths: Vec<String>, hunks: Vec<(String, String)> },
}

/// Where a branch is checked out: the user's checkout or a linked worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedOut {
    pub path: PathBuf,
}

impl Repo {
    /// The commit `refs/heads/<branch>` points at; `None` when there is no
    /// such branch.
    pub fn branch_tip(&self, branch: &str) -> Option<Oid> {
        self.repo.find_reference(&format!("refs/heads/{branch}")).ok().and_then(|r| r.target())
    }

    /// The change from `base` to `change` replayed onto `tip`: git's
    /// three-way merge of the three commits' trees, with renames found.
    /// `branch` names the tip's side in the conflict markers.
    pub fn replay(&self, base: Oid, tip: Oid, change: Oid, branch: &str) -> Result<Replay, GitError> {
        let tree = |oid: Oid| {
            self.repo
                .find_commit(oid)
                .and_then(|c| c.tree())
                .map_err(ctx(|| format!("cannot read the tree of commit {oid}")))
        };
        let (ancestor, ours, theirs) = (tree(base)?, tree(tip)?, tree(change)?);
        let mut opts = MergeOptions::new();
        opts.find_renames(true);
        let mut index = self
            .repo
            .merge_trees(&ancestor, &ours, &theirs, Some(&opts))
            .map_err(ctx(|| format!("cannot replay {change} onto {tip}")))?;
        if !index.has_conflicts() {
            let tree = index.write_tree_to(&self.repo).map_err(ctx(|| "cannot write the replayed tree".into()))?;
            return Ok(Replay::Clean { tree });
        }
        let mut paths = Vec::new();
        let mut hunks = Vec::new();
        let conflicts = index.conflicts().map_err(ctx(|| "cannot read the replay's conflicts".into()))?;
        for c in conflicts.flatten() {
            let Some(entry) = c.our.as_ref().or(c.their.as_ref()).or(c.ancestor.as_ref()) else { continue };
            let path = String::from_utf8_lossy(&entry.path).into_owned();
            let text = match (&c.ancestor, &c.our, &c.their) {
                (Some(a), Some(o), Some(t)) => {
                    let mut fo = MergeFileOptions::new();
                    fo.our_label(branch).their_label("task").ancestor_label("base");
                    match self.repo.merge_file_from_index(a, o, t, Some(&mut fo)) {
                        Ok(r) => String::from_utf8_lossy(r.content()).into_owned(),
                        Err(_) => String::new(),
                    }
                }
                (_, None, Some(_)) => format!("{path}: deleted on {branch}, changed by the task\n"),
                (_, Some(_), None) => format!("{path}: changed on {branch}, deleted by the task\n"),
                (None, Some(_), Some(_)) => format!("{path}: added both on {branch} and by the task\n"),
                _ => String::new(),
            };
            if !paths.contains(&path) {
                paths.push(path.clone());
                hunks.push((path, text));
            }
        }
        paths.sort();
        hunks.sort();
        Ok(Replay::Conflicts { paths, hunks })
    }

    /// The tree of commit `oid`.
    pub fn tree_of(&self, oid: Oid) -> Result<Oid, GitError> {
        self.repo.find_commit(oid).map(|c| c.tree_id()).map_err(ctx(|| format!("cannot read commit {oid}")))
    }

    /// A commit of `tree` on `parents` with `message`, its author and its
    /// committer the user's as git would find them (the environment's
    /// `GIT_AUTHOR_*` and `GIT_COMMITTER_*` over the config: [`Role`]);
    /// retry-run's where git has no name and email for one. Written, no
    /// ref moved.
    pub fn land_commit(&self, tree: Oid, parents: &[Oid], message: &str) -> Result<Oid, GitError> {
        let author = self.land_signature(Role::Author)?;
        let committer = self.land_signature(Role::Committer)?;
        let tree = self.repo.find_tree(tree).map_err(ctx(|| format!("cannot read tree {tree}")))?;
        let parents: Vec<git2::Commit<'_>> = parents
            .iter()
            .map(|p| self.repo.find_commit(*p).map_err(ctx(|| format!("cannot read commit {p}"))))
            .collect::<Result<_, _>>()?;
        let refs: Vec<&git2::Commit<'_>> = parents.iter().collect();
        self.repo
            .commit(None, &author, &committer, message, &tree, &refs)
            .map_err(ctx(|| "cannot write the landed commit".into()))
    }

    /// The signature of a landed commit's `role`: the user's identity
    /// when it has both a name and an email (libgit2 wants both), else
    /// retry-run's.
    fn land_signature(&self, role: Role) -> Result<Signature<'static>, GitError> {
        match self.identity(role) {
            Some(Ident { name, email: Some(email) }) => {
                Signature::now(&name, &email).map_err(ctx(|| format!("cannot make a signature of {name} <{email}>")))
            }
            _ => Signature::now("retry-run", "retry-run@localhost").map_err(ctx(|| "cannot make a signature".into())),
        }
    }

    /// `refs/heads/<branch>` moved from `old` to `new` only if it still
    /// points at `old` (libgit2 holds the ref's lock file while it checks
    /// and writes; the reflog says `why`). Atomic: the ref is either old or
    /// new.
    pub fn move_branch(&self, branch: &str, old: Oid, new: Oid, why: &str) -> Result<(), GitError> {
        let name = format!("refs/heads/{branch}");
        self.repo
            .reference_matching(&name, new, true, old, why)
            .map_err(ctx(|| format!("cannot move {name} from {old}")))?;
        Ok(())
    }

    /// Deletes branch `refs/heads/<branch>`, if it exists.
    pub fn delete_branch(&self, branch: &str) -> Result<bool, GitError> {
        match self.repo.find_reference(&format!("refs/heads/{branch}")) {
            Ok(mut r) => {
                r.delete().map_err(ctx(|| format!("cannot delete branch {branch}")))?;
                Ok(true)
            }
            Err(_) => Ok(false),
        }
    }

    /// Where `branch` is checked out: the user's checkout, or a linked
    /// worktree (not retry-run's task worktrees, which are detached).
    pub fn checked_out(&self, branch: &str) -> Option<CheckedOut> {
        let want = format!("refs/heads/{branch}");
        let main = Repository::open(self.common_dir()).ok()?;
        let on = |r: &Repository| {
            r.find_reference("HEAD")
                .ok()
                .and_then(|h| h.symbolic_target().ok().flatten().map(|t| t == want))
                .unwrap_or(false)
        };
        if !main.is_bare()
            && on(&main)
            && let Some(w) = main.workdir()
        {
            return Some(CheckedOut { path: w.to_path_buf() });
        }
        let names = main.worktrees().ok()?;
        for name in names.iter().flatten().flatten() {
            let Ok(wt) = main.find_worktree(name) else { continue };
            let Ok(r) = Repository::open_from_worktree(&wt) else { continue };
            if on(&r) {
                return Some(CheckedOut { path: wt.path().to_path_buf() });
            }
        }
        None
    }

    /// The files of the checkout at `checkout` that the change from commit
    /// `old` to commit `new` touches and that have changes there (in the
    /// index or the working tree against its HEAD, or untracked in the way).
    pub fn dirty_in_the_way(&self, checkout: &Path, old: Oid, new: Oid) -> Result<Vec<String>, GitError> {
        let r =
            Repository::open(checkout).map_err(ctx(|| format!("{}: cannot open the checkout", checkout.display())))?;
        let tree = |oid: Oid| {
            r.find_commit(oid).and_then(|c| c.tree()).map_err(ctx(|| format!("cannot read the tree of commit {oid}")))
        };
        let (a, b) = (tree(old)?, tree(new)?);
        let diff = r.diff_tree_to_tree(Some(&a), Some(&b), None).map_err(ctx(|| "cannot compare the trees".into()))?;
        let mut touched: Vec<Vec<u8>> = Vec::new();
        for d in diff.deltas() {
            for f in [d.old_file(), d.new_file()] {
                if let Some(p) = f.path_bytes()
                    && !touched.iter().any(|t| t.as_slice() == p)
                {
                    touched.push(p.to_vec());
                }
            }
        }
        if touched.is_empty() {
            return Ok(Vec::new());
        }
        let mut opts = git2::StatusOptions::new();
        opts.include_untracked(true).recurse_untracked_dirs(true).include_ignored(false).disable_pathspec_match(true);
        for p in &touched {
            opts.pathspec(std::ffi::CString::new(p.clone()).unwrap_or_default());
        }
        let statuses =
            r.statuses(Some(&mut opts)).map_err(ctx(|| format!("{}: cannot read its status", checkout.display())))?;
        let mut dirty: Vec<String> = statuses
            .iter()
            .filter(|s| s.status() != git2::Status::CURRENT && !s.status().is_ignored())
            .filter_map(|s| s.path().ok().map(str::to_string))
            .collect();
        dirty.sort();
        dirty.dedup();
        Ok(dirty)
    }

    /// `git merge --ff-only <new>` in the checkout at `checkout` (hooks
    /// off): its branch, index and files moved to `new` as git would.
    pub fn fast_forward_checkout(&self, checkout: &Path, new: Oid) -> Result<(), GitError> {
        let new = new.to_string();
        let args: [&OsStr; 4] = ["merge".as_ref(), "--ff-only".as_ref(), "-q".as_ref(), new.as_ref()];
        run_git(checkout, &[], &args, &[], None, &|| format!("{}: git merge --ff-only {new}", checkout.display()))
            .map(|_| ())
    }

    /// `git push <remote> <branch>` from the repository.
    pub fn push_branch(&self, remote: &str, branch: &str) -> Result<(), GitError> {
        let dir = self.workdir().unwrap_or(self.common_dir()).to_path_buf();
        let spec = format!("refs/heads/{branch}:refs/heads/{branch}");
        let args: [&OsStr; 4] = ["push".as_ref(), "-q".as_ref(), remote.as_ref(), spec.as_ref()];
        run_git(&dir, &[], &args, &[], None, &|| format!("git push {remote} {branch}")).map(|_| ())
    }

    /// The parents of commit `oid`.
    pub fn parents(&self, oid: Oid) -> Vec<Oid> {
        self.repo.find_commit(oid).map(|c| c.parent_ids().collect()).unwrap_or_default()
    }
}
