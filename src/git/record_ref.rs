//! A directory of the record as commits under a ref (docs/fleets.md): a
//! task's `tasks/<task>/` written as a tree and committed on top of the
//! ref's last commit when it changed, and the reverse, a commit's tree
//! written out into a directory. Also the small commits of a lease, and
//! the refs the remote operations read and move.
//!
//! Objects go straight into the repository's object database; open a
//! fresh [`Repo`] for this (one that never compared a working tree, so no
//! in-memory object database sits in front).

use std::path::Path;

use git2::{FileMode, Oid, Signature};

use super::{GitError, Repo, ctx};

/// The committer of record and lease commits.
fn signature() -> Result<Signature<'static>, GitError> {
    Signature::now("retry-run", "retry-run@localhost").map_err(ctx(|| "cannot make a signature".into()))
}

impl Repo {
    /// The object a ref points at, if the ref exists.
    pub fn ref_target(&self, name: &str) -> Option<Oid> {
        self.repo.find_reference(name).ok().and_then(|r| r.target())
    }

    /// Points `name` at `oid`, creating or moving it.
    pub fn set_ref(&self, name: &str, oid: Oid, why: &str) -> Result<(), GitError> {
        self.repo.reference(name, oid, true, why).map_err(ctx(|| format!("cannot set {name}")))?;
        Ok(())
    }

    /// Removes `name` if it exists.
    pub fn delete_ref(&self, name: &str) -> Result<(), GitError> {
        match self.repo.find_reference(name) {
            Ok(mut r) => r.delete().map_err(ctx(|| format!("cannot delete {name}"))),
            Err(_) => Ok(()),
        }
    }

    /// The refs whose names start with `prefix`, with their targets, by name.
    pub fn refs_under(&self, prefix: &str) -> Result<Vec<(String, Oid)>, GitError> {
        let mut out = Vec::new();
        let glob = format!("{prefix}*");
        let refs = self.repo.references_glob(&glob).map_err(ctx(|| format!("cannot list {glob}")))?;
        for r in refs.flatten() {
            if let (Ok(name), Some(oid)) = (r.name(), r.target()) {
                out.push((name.to_string(), oid));
            }
        }
        out.sort();
        Ok(out)
    }

    /// Whether `ancestor` is `descendant` or one of its ancestors.
    pub fn is_ancestor(&self, ancestor: Oid, descendant: Oid) -> bool {
        ancestor == descendant || self.repo.graph_descendant_of(descendant, ancestor).unwrap_or(false)
    }

    /// [`Repo::has_object`] for an id written in hex; `false` for one that
    /// is not an id.
    pub fn has_object_hex(&self, hex: &str) -> bool {
        Oid::from_str(hex).is_ok_and(|oid| self.has_object(oid))
    }

    /// Whether the object database holds `oid`.
    pub fn has_object(&self, oid: Oid) -> bool {
        self.repo.odb().is_ok_and(|o| o.exists(oid))
    }

    /// A commit's message.
    pub fn commit_message(&self, oid: Oid) -> Option<String> {
        self.repo.find_commit(oid).ok().and_then(|c| c.message().ok().map(str::to_string))
    }

    /// `dir` as a tree (files and subdirectories, except names `skip`
    /// says no to), committed on top of `refname`'s commit unless that
    /// commit already holds the same tree; `refname` moved to it. Returns
    /// the ref's commit.
    pub fn commit_dir(
        &self,
        dir: &Path,
        refname: &str,
        message: &str,
        skip: &dyn Fn(&Path) -> bool,
    ) -> Result<Oid, GitError> {
        let tree = self.write_dir(dir, dir, skip)?;
        let parent = self.ref_target(refname).and_then(|p| self.repo.find_commit(p).ok());
        if let Some(p) = &parent
            && p.tree_id() == tree
        {
            return Ok(p.id());
        }
        let tree = self.repo.find_tree(tree).map_err(ctx(|| format!("cannot read the tree of {}", dir.display())))?;
        let sig = signature()?;
        let parents: Vec<&git2::Commit> = parent.iter().collect();
        let oid = self
            .repo
            .commit(Some(refname), &sig, &sig, message, &tree, &parents)
            .map_err(ctx(|| format!("cannot commit {} to {refname}", dir.display())))?;
        Ok(oid)
    }

    fn write_dir(&self, root: &Path, dir: &Path, skip: &dyn Fn(&Path) -> bool) -> Result<Oid, GitError> {
        let io = |source| GitError::Io { path: dir.to_path_buf(), source };
        let mut builder = self.repo.treebuilder(None).map_err(ctx(|| "cannot build a tree".into()))?;
        let mut entries: Vec<_> = std::fs::read_dir(dir).map_err(io)?.flatten().collect();
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            let path = e.path();
            let rel = path.strip_prefix(root).unwrap_or(&path);
            if skip(rel) {
                continue;
            }
            let Ok(kind) = e.file_type() else { continue };
            let name = e.file_name();
            let Some(name) = name.to_str() else { continue };
            // A file or directory that went between the listing and its
            // reading was a write under way elsewhere (a lane's record
            // file renamed into place): the next commit has it.
            let gone = |e: &GitError| matches!(e, GitError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound);
            if kind.is_dir() {
                let sub = match self.write_dir(root, &path, skip) {
                    Err(e) if gone(&e) && !path.exists() => continue,
                    other => other?,
                };
                if sub.to_string() != EMPTY_TREE {
                    builder.insert(name, sub, FileMode::Tree.into()).map_err(ctx(|| format!("cannot add {name}")))?;
                }
            } else if kind.is_file() {
                let bytes = match std::fs::read(&path) {
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                    read => read.map_err(|source| GitError::Io { path: path.clone(), source })?,
                };
                let blob = self.repo.blob(&bytes).map_err(ctx(|| format!("cannot store {}", path.display())))?;
                builder.insert(name, blob, FileMode::Blob.into()).map_err(ctx(|| format!("cannot add {name}")))?;
            }
        }
        builder.write().map_err(ctx(|| format!("cannot write the tree of {}", dir.display())))
    }

    /// Writes every file of `commit`'s tree into `dir` (files already there
    /// are overwritten; files the tree lacks are left alone).
    pub fn write_out(&self, commit: Oid, dir: &Path) -> Result<(), GitError> {
        let tree = self
            .repo
            .find_commit(commit)
            .and_then(|c| c.tree())
            .map_err(ctx(|| format!("cannot read the tree of {commit}")))?;
        let mut failed: Option<GitError> = None;
        tree.walk(git2::TreeWalkMode::PreOrder, |parent, entry| {
            if entry.kind() != Some(git2::ObjectType::Blob) {
                return git2::TreeWalkResult::Ok;
            }
            let Ok(name) = entry.name() else { return git2::TreeWalkResult::Ok };
            let path = dir.join(parent).join(name);
            let result =
                self.repo.find_blob(entry.id()).map_err(ctx(|| format!("cannot read {}", path.display()))).and_then(
                    |b| {
                        let io = |source| GitError::Io { path: path.clone(), source };
                        if let Some(p) = path.parent() {
                            std::fs::create_dir_all(p).map_err(io)?;
                        }
                        std::fs::write(&path, b.content()).map_err(io)
                    },
                );
            match result {
                Ok(()) => git2::TreeWalkResult::Ok,
                Err(e) => {
                    failed = Some(e);
                    git2::TreeWalkResult::Abort
                }
            }
        })
        .ok();
        failed.map_or(Ok(()), Err)
    }

    /// A commit of the empty tree with `message`, on `parent`: a lease.
    pub fn message_commit(&self, message: &str, parent: Option<Oid>) -> Result<Oid, GitError> {
        let tree = self.repo.find_tree(empty_tree_id(self)?).map_err(ctx(|| "cannot read the empty tree".into()))?;
        let parent = parent.and_then(|p| self.repo.find_commit(p).ok());
        let parents: Vec<&git2::Commit> = parent.iter().collect();
        let sig = signature()?;
        self.repo
            .commit(None, &sig, &sig, message, &tree, &parents)
            .map_err(ctx(|| "cannot write a lease commit".into()))
    }
}

/// Git's id of the tree with no entries.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

fn empty_tree_id(repo: &Repo) -> Result<Oid, GitError> {
    let b = repo.repo.treebuilder(None).map_err(ctx(|| "cannot build a tree".into()))?;
    b.write().map_err(ctx(|| "cannot write the empty tree".into()))
}
