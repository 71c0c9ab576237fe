//! Changed files between two trees, from one libgit2 diff with rename
//! detection: statuses, modes, symlink targets, submodule pointers, line
//! counts, binary flags and patch text all come from the same pass.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use git2::{Delta, DiffFindOptions, DiffOptions, Oid, Patch, Repository, Tree};

use super::objects::{Leaf, ObjectWriter, TREE_MODE};
use super::{GitError, Repo, Revision, ctx};
use crate::model::{Change, ChangeSet, EntryKind, Head, Side, Status};
use crate::scope::SymlinkLookup;

/// git's own default for `diff.renameLimit`; it also keeps libgit2's rename
/// detection from exploding on huge changes (PERF-NOTES, pitfall 5).
const RENAME_LIMIT: usize = 1000;

/// How much of each change to compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DiffDepth {
    /// Paths, statuses, modes and symlink targets: what `scope` needs.
    NameStatus,
    /// Also line counts, binary flags and the patch text: what `diff` needs.
    Patch,
}

/// The result of comparing a base with a head.
pub struct Comparison<'r> {
    pub changes: ChangeSet,
    /// The patch text; empty unless [`DiffDepth::Patch`] was asked for.
    pub patch: String,
    /// The head tree, for following symlinks.
    pub head_tree: Tree<'r>,
}

impl Repo {
    /// Compares two commits from their merge base, like `git diff base...head`.
    pub fn compare_commits(
        &self,
        base: &Revision,
        head: &Revision,
        depth: DiffDepth,
    ) -> Result<Comparison<'_>, GitError> {
        let merge_base = self.merge_base(base, head)?;
        self.use_memory_odb()?;
        self.use_memory_odb()?;
        let old = self.commit_tree(merge_base)?;
        let new = self.commit_tree(head.oid)?;
        let (changes, patch) = diff_trees(&self.repo, &old, &new, depth)?;
        Ok(Comparison {
            changes: ChangeSet {
                base: merge_base.to_string(),
                head: Head::Commit(head.oid.to_string()),
                changes,
            },
            patch,
            head_tree: new,
        })
    }

    /// Compares the working tree (staged, unstaged and untracked
    /// non-ignored files) with the merge base of `base` and `HEAD`.
    pub fn compare_worktree(
        &self,
        base: &Revision,
        depth: DiffDepth,
    ) -> Result<Comparison<'_>, GitError> {
        let head = self.head()?;
        let merge_base = self.merge_base(base, &head)?;
        let old = self.commit_tree(merge_base)?;
        let head_tree = self.commit_tree(head.oid)?;
        let state = self.worktree_tree(&old, &head_tree)?;
        let new = self
            .repo
            .find_tree(state.tree)
            .map_err(ctx(|| "cannot read the working tree's state".into()))?;
        let (mut changes, patch) = diff_trees(&self.repo, &old, &new, depth)?;
        // A submodule with uncommitted changes of its own: flag its change,
        // or add one when its pointer did not move.
        for path in state.dirty_submodules {
            match changes.iter_mut().find(|c| c.path() == path.as_slice()) {
                Some(c) => c.submodule_dirty = true,
                None => changes.push(Change {
                    status: Status::Modified,
                    old: Some(Side {
                        path: path.clone(),
                        kind: EntryKind::Submodule,
                    }),
                    new: Some(Side {
                        path,
                        kind: EntryKind::Submodule,
                    }),
                    symlink_target: None,
                    submodule_dirty: true,
                    binary: false,
                    additions: 0,
                    deletions: 0,
                }),
            }
        }
        changes.sort_by(|a, b| a.path().cmp(b.path()));
        Ok(Comparison {
            changes: ChangeSet {
                base: merge_base.to_string(),
                head: Head::Worktree,
                changes,
            },
            patch,
            head_tree: new,
        })
    }

    pub(super) fn commit_tree(&self, oid: Oid) -> Result<Tree<'_>, GitError> {
        self.repo
            .find_commit(oid)
            .and_then(|c| c.tree())
            .map_err(ctx(|| format!("cannot read the tree of commit {oid}")))
    }

    /// Follows symlinks through `tree`.
    pub fn symlinks<'a>(&'a self, tree: &'a Tree<'a>) -> TreeSymlinks<'a> {
        TreeSymlinks {
            repo: &self.repo,
            tree,
        }
    }
}

/// A leaf entry that differs: its path, the old side and the new side.
type ChangedLeaf = (Vec<u8>, Option<Leaf>, Option<Leaf>);

/// Collects every leaf entry that differs between two trees, skipping
/// subtrees whose ids are equal (libgit2's own tree diff walks into them).
fn changed_leaves(
    repo: &Repository,
    old: Option<&Tree>,
    new: Option<&Tree>,
    prefix: &mut Vec<u8>,
    out: &mut Vec<ChangedLeaf>,
) -> Result<(), GitError> {
    use std::collections::BTreeMap;
    let entries = |t: Option<&Tree>| -> BTreeMap<Vec<u8>, Leaf> {
        t.map(|t| t.iter().map(|e| (e.name_bytes().to_vec(), (e.id(), e.filemode()))).collect())
            .unwrap_or_default()
    };
    let (a, b) = (entries(old), entries(new));
    let mut names: Vec<&Vec<u8>> = a.keys().chain(b.keys()).collect();
    names.sort();
    names.dedup();
    let is_tree = |l: Option<Leaf>| l.is_some_and(|(_, m)| m == TREE_MODE);
    let subtree = |l: Option<Leaf>| -> Result<Option<Tree>, GitError> {
        match l {
            Some((id, TREE_MODE)) => repo
                .find_tree(id)
                .map(Some)
                .map_err(ctx(|| format!("cannot read tree {id}"))),
            _ => Ok(None),
        }
    };
    for name in names {
        let (x, y) = (a.get(name).copied(), b.get(name).copied());
        if x == y {
            continue;
        }
        let len = prefix.len();
        if !prefix.is_empty() {
            prefix.push(b'/');
        }
        prefix.extend_from_slice(name);
        if is_tree(x) || is_tree(y) {
            let (tx, ty) = (subtree(x)?, subtree(y)?);
            changed_leaves(repo, tx.as_ref(), ty.as_ref(), prefix, out)?;
        }
        // A file where a directory was (or the reverse) is a leaf change too.
        let (lx, ly) = (x.filter(|_| !is_tree(x)), y.filter(|_| !is_tree(y)));
        if lx.is_some() || ly.is_some() {
            out.push((prefix.clone(), lx, ly));
        }
        prefix.truncate(len);
    }
    Ok(())
}

/// Two small trees holding only the changed entries of `old` and `new`,
/// written to the in-memory object database. Diffing them gives exactly the
/// deltas of diffing `old` and `new`, renames included, at a cost that
/// follows the size of the change rather than the size of the tree.
fn changed_only_trees<'r>(
    repo: &'r Repository,
    old: &Tree,
    new: &Tree,
) -> Result<(Tree<'r>, Tree<'r>), GitError> {
    let mut leaves = Vec::new();
    changed_leaves(repo, Some(old), Some(new), &mut Vec::new(), &mut leaves)?;
    let writer = ObjectWriter::new(repo)?;
    let side = |pick: fn(&ChangedLeaf) -> Option<Leaf>| -> Result<Tree<'r>, GitError> {
        let updates: Vec<(Vec<u8>, Option<Leaf>)> =
            leaves.iter().filter_map(|l| pick(l).map(|leaf| (l.0.clone(), Some(leaf)))).collect();
        let id = writer.tree(repo, None, &updates)?;
        repo.find_tree(id).map_err(ctx(|| "cannot read a tree of the changes".into()))
    };
    Ok((side(|l| l.1)?, side(|l| l.2)?))
}

/// Diffs two trees. Objects made on the way go to the in-memory object
/// database, which the caller has set up ([`Repo::use_memory_odb`]).
pub(super) fn diff_trees(
    repo: &Repository,
    old: &Tree,
    new: &Tree,
    depth: DiffDepth,
) -> Result<(Vec<Change>, String), GitError> {
    let (old, new) = changed_only_trees(repo, old, new)?;
    let (old, new) = (&old, &new);
    let mut opts = DiffOptions::new();
    opts.include_typechange(true)
        .ignore_submodules(false)
        .context_lines(3);
    let mut diff = repo
        .diff_tree_to_tree(Some(old), Some(new), Some(&mut opts))
        .map_err(ctx(|| {
            format!("cannot diff {} against {}", old.id(), new.id())
        }))?;
    let mut find = DiffFindOptions::new();
    find.renames(true).rename_limit(RENAME_LIMIT);
    diff.find_similar(Some(&mut find))
        .map_err(ctx(|| "rename detection failed".into()))?;

    let mut out: Vec<(Change, Vec<u8>)> = Vec::with_capacity(diff.deltas().len());
    for (i, delta) in diff.deltas().enumerate() {
        let status = match delta.status() {
            Delta::Added | Delta::Copied => Status::Added,
            Delta::Deleted => Status::Deleted,
            Delta::Modified => Status::Modified,
            Delta::Renamed => Status::Renamed,
            Delta::Typechange => Status::TypeChanged,
            // Tree-to-tree diffs report none of these.
            _ => continue,
        };
        let side = |f: git2::DiffFile| -> Option<Side> {
            let kind = EntryKind::from_mode(u32::from(f.mode()))?;
            Some(Side {
                path: f.path_bytes()?.to_vec(),
                kind,
            })
        };
        let old_side = if status == Status::Added {
            None
        } else {
            side(delta.old_file())
        };
        let new_side = if status == Status::Deleted {
            None
        } else {
            side(delta.new_file())
        };
        let symlink_target = match &new_side {
            Some(s) if s.kind == EntryKind::Symlink => Some(
                repo.find_blob(delta.new_file().id())
                    .map_err(ctx(|| {
                        format!("cannot read symlink {}", crate::pathfmt::display(&s.path))
                    }))?
                    .content()
                    .to_vec(),
            ),
            _ => None,
        };
        let mut change = Change {
            status,
            old: old_side,
            new: new_side,
            symlink_target,
            submodule_dirty: false,
            binary: false,
            additions: 0,
            deletions: 0,
        };
        let mut text = Vec::new();
        if depth == DiffDepth::Patch {
            if status == Status::TypeChanged && both_blobs(&change) {
                let read = |id| {
                    repo.find_blob(id)
                        .map_err(ctx(|| format!("cannot read blob {id}")))
                };
                let (old_blob, new_blob) =
                    (read(delta.old_file().id())?, read(delta.new_file().id())?);
                let tc = typechange_patch(&old_blob, &new_blob, &delta, &mut opts)?;
                change.additions = tc.0;
                change.deletions = tc.1;
                change.binary = tc.2;
                text = tc.3;
            } else if let Some(mut patch) =
                Patch::from_diff(&diff, i).map_err(ctx(|| "cannot compute a patch".into()))?
            {
                let (_, adds, dels) = patch
                    .line_stats()
                    .map_err(ctx(|| "cannot count lines".into()))?;
                change.additions = adds;
                change.deletions = dels;
                change.binary = patch.delta().flags().is_binary();
                text = patch
                    .to_buf()
                    .map_err(ctx(|| "cannot print a patch".into()))?
                    .to_vec();
            }
        }
        out.push((change, text));
    }
    out.sort_by(|a, b| a.0.path().cmp(b.0.path()));
    let mut patch = Vec::new();
    let changes = out
        .into_iter()
        .map(|(c, t)| {
            patch.extend_from_slice(&t);
            c
        })
        .collect();
    Ok((changes, String::from_utf8_lossy(&patch).into_owned()))
}

/// git shows a type change (file to symlink and back) as the old entry
/// deleted and the new one added, and counts its lines that way; libgit2
/// shows neither. This builds git's form from two in-memory patches, so no
/// object is written. Returns (additions, deletions, binary, patch text).
fn typechange_patch(
    old: &git2::Blob,
    new: &git2::Blob,
    delta: &git2::DiffDelta,
    opts: &mut DiffOptions,
) -> Result<(usize, usize, bool, Vec<u8>), GitError> {
    let path = delta.new_file().path();
    let abbrev = |id: Oid| id.to_string()[..7].to_string();
    let del = Patch::from_buffers(old.content(), path, &[], path, Some(opts))
        .map_err(ctx(|| "cannot compute a patch".into()))?;
    let add = Patch::from_buffers(&[], path, new.content(), path, Some(opts))
        .map_err(ctx(|| "cannot compute a patch".into()))?;
    let mut text = Vec::new();
    let (mut adds, mut dels, mut binary) = (0, 0, false);
    for (mut patch, deleting) in [(del, true), (add, false)] {
        let (_, a, d) = patch
            .line_stats()
            .map_err(ctx(|| "cannot count lines".into()))?;
        adds += a;
        dels += d;
        binary |= patch.delta().flags().is_binary();
        let buf = patch
            .to_buf()
            .map_err(ctx(|| "cannot print a patch".into()))?;
        let lines: Vec<&[u8]> = buf.split_inclusive(|&b| b == b'\n').collect();
        let Some((first, rest)) = lines.split_first() else {
            continue;
        };
        // The body: from the first hunk or "Binary files" line on.
        let body_at = rest
            .iter()
            .position(|l| l.starts_with(b"@@") || l.starts_with(b"Binary"))
            .unwrap_or(rest.len());
        let minus = rest
            .iter()
            .find(|l| l.starts_with(b"--- "))
            .copied()
            .unwrap_or(b"");
        let plus = rest
            .iter()
            .find(|l| l.starts_with(b"+++ "))
            .copied()
            .unwrap_or(b"");
        text.extend_from_slice(first);
        if deleting {
            let mode = u32::from(delta.old_file().mode());
            text.extend_from_slice(
                format!(
                    "deleted file mode {mode:o}\nindex {}..0000000\n",
                    abbrev(old.id())
                )
                .as_bytes(),
            );
            if !minus.is_empty() {
                text.extend_from_slice(minus);
                text.extend_from_slice(b"+++ /dev/null\n");
            }
        } else {
            let mode = u32::from(delta.new_file().mode());
            text.extend_from_slice(
                format!(
                    "new file mode {mode:o}\nindex 0000000..{}\n",
                    abbrev(new.id())
                )
                .as_bytes(),
            );
            if !plus.is_empty() {
                text.extend_from_slice(b"--- /dev/null\n");
                text.extend_from_slice(plus);
            }
        }
        for l in &rest[body_at..] {
            text.extend_from_slice(l);
        }
    }
    Ok((adds, dels, binary, text))
}

fn both_blobs(c: &Change) -> bool {
    let blob = |s: &Option<Side>| s.as_ref().is_some_and(|s| s.kind != EntryKind::Submodule);
    blob(&c.old) && blob(&c.new)
}

/// Symlinks of a tree, for [`crate::scope::resolve_symlink`].
pub struct TreeSymlinks<'a> {
    repo: &'a Repository,
    tree: &'a Tree<'a>,
}

impl SymlinkLookup for TreeSymlinks<'_> {
    fn symlink_target(&self, path: &[u8]) -> Option<Vec<u8>> {
        let entry = self
            .tree
            .get_path(Path::new(OsStr::from_bytes(path)))
            .ok()?;
        if entry.filemode() != 0o120000 {
            return None;
        }
        Some(self.repo.find_blob(entry.id()).ok()?.content().to_vec())
    }
}
