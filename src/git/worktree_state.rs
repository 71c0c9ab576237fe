//! The working tree as a tree object, built without touching any index.
//!
//! `git status` (libgit2's) names the paths that differ from `HEAD`; each is
//! read from disk into a blob, and the HEAD tree is updated with them
//! (`TreeUpdateBuilder`). Blobs and trees go into an in-memory object
//! database, so nothing is written to the repository. Comparing the base
//! with the result is then a fast tree-to-tree diff (PERF-NOTES: diffing a
//! tree against a working tree directly is 2-2.7x slower in libgit2).
//!
//! Untracked files count unless ignored. When the change edits a
//! `.gitignore`, "ignored" is decided by the base's rules ([`super::ignore`]),
//! so an edited `.gitignore` can neither hide a new file nor expose one.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use git2::{Oid, Status, StatusOptions, Tree};

use super::ignore::BaseIgnore;
use super::objects::{Leaf, ObjectWriter};
use super::{GitError, Repo, ctx};

pub(super) struct WorktreeState {
    pub tree: Oid,
    /// Submodules whose own working tree or index has uncommitted changes.
    pub dirty_submodules: BTreeSet<Vec<u8>>,
}

const GITLINK: u32 = 0o160000;

impl Repo {
    pub(super) fn worktree_tree(
        &self,
        base_tree: &Tree,
        head_tree: &Tree,
    ) -> Result<WorktreeState, GitError> {
        let workdir = self
            .repo
            .workdir()
            .ok_or_else(|| GitError::Bare {
                path: self.repo.path().to_path_buf(),
            })?
            .to_path_buf();
        self.use_memory_odb()?;

        let entries = self.status_entries(false)?;
        let base_rules = if gitignore_changed(&entries, || {
            self.tree_gitignores_differ(base_tree, head_tree)
        })? {
            Some(BaseIgnore::from_tree(
                &self.repo,
                base_tree,
                &workdir,
                self.common_dir(),
            )?)
        } else {
            None
        };
        let entries = match &base_rules {
            None => entries,
            // Ask again with ignored files listed, and judge every untracked
            // or ignored file by the base's rules.
            Some(rules) => self
                .status_entries(true)?
                .into_iter()
                .filter(|(path, st)| {
                    !(st.is_wt_new() || st.is_ignored()) || !rules.is_ignored(path)
                })
                .collect(),
        };

        let index = self
            .repo
            .index()
            .map_err(ctx(|| "cannot read the index".into()))?;
        let config = self.repo.config().map_err(ctx(|| "cannot read the repository's config".into()))?;
        let filemode = config.get_bool("core.filemode").unwrap_or(true);
        let autocrlf = config.get_string("core.autocrlf").is_ok_and(|v| v != "false");
        let writer = ObjectWriter::new(&self.repo)?;
        let mut updates: Vec<(Vec<u8>, Option<Leaf>)> = Vec::with_capacity(entries.len());
        let mut dirty_submodules = BTreeSet::new();
        for (path, _) in &entries {
            let rel = Path::new(OsStr::from_bytes(path));
            let head_mode = head_tree.get_path(rel).ok().map(|e| e.filemode() as u32);
            let index_entry = index.get_path(rel, 0);
            let index_mode = index_entry.as_ref().map(|e| e.mode);
            let abs = workdir.join(rel);
            if head_mode == Some(GITLINK) || index_mode == Some(GITLINK) {
                // A checked-out submodule: its HEAD. Not checked out: the
                // pointer the index records; no index entry: removed.
                match self.submodule_state(&abs)? {
                    Some((oid, dirty)) => {
                        updates.push((path.clone(), Some((oid, GITLINK as i32))));
                        if dirty {
                            dirty_submodules.insert(path.clone());
                        }
                    }
                    None => match &index_entry {
                        Some(e) if e.mode == GITLINK => {
                            updates.push((path.clone(), Some((e.id, GITLINK as i32))));
                        }
                        _ => updates.push((path.clone(), None)),
                    },
                }
                continue;
            }
            let meta = match std::fs::symlink_metadata(&abs) {
                Ok(m) => m,
                // Gone, or a parent turned into a file (ENOTDIR): removed.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound || e.raw_os_error() == Some(20) => {
                    updates.push((path.clone(), None));
                    continue;
                }
                Err(e) => return Err(GitError::Io { path: abs, source: e }),
            };
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&abs).map_err(|e| GitError::Io { path: abs.clone(), source: e })?;
                let oid = writer.blob(target.as_os_str().as_bytes())?;
                updates.push((path.clone(), Some((oid, 0o120000))));
            } else if meta.is_file() {
                let oid = self.file_blob(&writer, rel, &abs, autocrlf)?;
                let exec = if filemode {
                    meta.permissions().mode() & 0o111 != 0
                } else {
                    head_mode.or(index_mode) == Some(0o100755)
                };
                updates.push((path.clone(), Some((oid, if exec { 0o100755 } else { 0o100644 }))));
            } else {
                // A directory (or socket, fifo) where a file was: the file is
                // gone; files inside a new directory have entries of their own.
                updates.push((path.clone(), None));
            }
        }
        let tree = writer.tree(&self.repo, Some(head_tree.id()), &updates)?;
        Ok(WorktreeState { tree, dirty_submodules })
    }

    /// The blob git would store for a working-tree file. Without a clean
    /// filter in play, that is the file's bytes, hashed and stored only if
    /// new. Where one may apply (core.autocrlf, or a `filter`, `ident`,
    /// `text`, `eol` or `working-tree-encoding` attribute), libgit2 filters
    /// it as `git add` would; if the filtered blob already exists on disk,
    /// libgit2 then refreshes that object's mtime, the one write to `.git`
    /// this can cause.
    fn file_blob(&self, writer: &ObjectWriter, rel: &Path, abs: &Path, autocrlf: bool) -> Result<Oid, GitError> {
        let data = std::fs::read(abs).map_err(|e| GitError::Io { path: abs.to_path_buf(), source: e })?;
        let attr = |name: &str| {
            self.repo
                .get_attr_bytes(rel, name, git2::AttrCheckFlags::FILE_THEN_INDEX)
                .ok()
                .flatten()
                .is_some_and(|v| {
                    !matches!(git2::AttrValue::from_bytes(Some(v)), git2::AttrValue::False | git2::AttrValue::Unspecified)
                })
        };
        let may_filter = attr("filter")
            || attr("ident")
            || attr("working-tree-encoding")
            || ((autocrlf || attr("text") || attr("eol") || attr("crlf")) && data.contains(&b'\r'));
        if may_filter {
            return self.repo.blob_path(abs).map_err(ctx(|| format!("cannot read {}", abs.display())));
        }
        writer.blob(&data)
    }

    /// Adds an in-memory object backend that takes every write, once.
    pub(super) fn use_memory_odb(&self) -> Result<(), GitError> {
        if self.mempack.get().is_some() {
            return Ok(());
        }
        let odb = self
            .repo
            .odb()
            .map_err(ctx(|| "cannot open the object database".into()))?;
        // Highest priority: new objects go here, never to .git/objects.
        odb.add_new_mempack_backend(1000)
            .map_err(ctx(|| "cannot add an in-memory object database".into()))?;
        let _ = self.mempack.set(());
        Ok(())
    }

    /// Paths that differ between HEAD, the index and the working tree.
    fn status_entries(&self, with_ignored: bool) -> Result<Vec<(Vec<u8>, Status)>, GitError> {
        let mut opts = StatusOptions::new();
        opts.include_untracked(true)
            .recurse_untracked_dirs(true)
            .include_ignored(with_ignored)
            .recurse_ignored_dirs(with_ignored)
            .exclude_submodules(false)
            .renames_head_to_index(false)
            .renames_index_to_workdir(false);
        let statuses = self
            .repo
            .statuses(Some(&mut opts))
            .map_err(ctx(|| "cannot read the working tree's status".into()))?;
        Ok(statuses
            .iter()
            .filter(|e| e.status() != Status::CURRENT)
            .map(|e| (e.path_bytes().to_vec(), e.status()))
            .collect())
    }

    /// A checked-out submodule's HEAD commit and whether it has changes of
    /// its own; `None` when it is not checked out.
    fn submodule_state(&self, abs: &Path) -> Result<Option<(Oid, bool)>, GitError> {
        let Ok(sub) = git2::Repository::open(abs) else {
            return Ok(None);
        };
        let Ok(head) = sub.head().and_then(|h| h.peel_to_commit()) else {
            return Ok(None);
        };
        let mut opts = StatusOptions::new();
        opts.include_untracked(true).exclude_submodules(false);
        let dirty = sub
            .statuses(Some(&mut opts))
            .map_err(ctx(|| {
                format!("cannot read the status of submodule {}", abs.display())
            }))?
            .iter()
            .any(|e| e.status() != Status::CURRENT && !e.status().is_ignored());
        Ok(Some((head.id(), dirty)))
    }

    /// Whether some `.gitignore` differs between two trees.
    fn tree_gitignores_differ(&self, a: &Tree, b: &Tree) -> Result<bool, GitError> {
        let mut opts = git2::DiffOptions::new();
        opts.pathspec("*.gitignore");
        let diff = self
            .repo
            .diff_tree_to_tree(Some(a), Some(b), Some(&mut opts))
            .map_err(ctx(|| "cannot compare .gitignore files".into()))?;
        Ok(diff.deltas().any(|d| {
            [d.old_file().path_bytes(), d.new_file().path_bytes()]
                .into_iter()
                .flatten()
                .any(is_gitignore)
        }))
    }
}

fn is_gitignore(path: &[u8]) -> bool {
    path.rsplit(|&b| b == b'/').next() == Some(b".gitignore")
}

fn gitignore_changed(
    entries: &[(Vec<u8>, Status)],
    committed: impl FnOnce() -> Result<bool, GitError>,
) -> Result<bool, GitError> {
    if entries.iter().any(|(p, _)| is_gitignore(p)) {
        return Ok(true);
    }
    committed()
}
