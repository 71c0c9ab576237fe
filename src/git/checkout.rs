//! Writing a tree's files into a task worktree on two threads.
//!
//! Creating files dominates a worktree's creation on a slow disk: on the
//! 2-core machine `bench/worktree.py` was measured on, a create `openat`
//! took about half a millisecond, and git's default checkout wrote the
//! 20,000 files in 12-18 s against about 9 s on two threads. Neither
//! libgit2 nor git by default creates files in parallel. Two threads, each
//! with its own repository handle to read blobs, write contiguous parts of
//! the sorted file list, so that they rarely create files in the same
//! directory (whose lock would serialise them), and the stat data each
//! `fstat` returns goes into the worktree's index, so that the next status
//! does not hash every file again.
//!
//! The bytes written are the blobs' bytes. That is right only when no
//! smudge filter or line-ending conversion can apply and symlinks are real
//! symlinks; [`Repo::plain_checkout`] says when, and otherwise libgit2's
//! checkout does the work.
//!
//! Nothing is written through a symlink: files are created with
//! `O_CREAT | O_EXCL | O_NOFOLLOW`, so a path that exists (a file or a link
//! an attempt left there) is an error, not an overwrite. Callers clear the
//! paths first ([`super::nofollow_fs::Clearer`]). A reset (`replace`)
//! writes the base's bytes over a file in place only when it is a regular
//! file of the worktree's owner with no other link (`overwrite`); anything
//! else there is removed and the file created.

use std::ffi::OsStr;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use git2::{IndexEntry, IndexTime, Oid, Repository};

use super::{GitError, Repo, ctx};

/// One entry of a tree to write: path (relative, `/`-separated), blob or
/// commit id, and git's mode.
#[derive(Debug, Clone)]
pub(super) struct TreeItem {
    pub path: Vec<u8>,
    pub oid: Oid,
    pub mode: u32,
}

const LINK: u32 = 0o120000;
const GITLINK: u32 = 0o160000;
const TREE: i32 = 0o040000;

/// Below this many files one thread writes them all.
const PARALLEL_MIN: usize = 64;

/// Threads that write files. On the 20,000-file benchmark 4 and 8 writers
/// took as long as 2 (about 9 s, as did `git -c checkout.workers=2`): past
/// two, the disk's write-back is the limit, not the threads.
const WRITERS: usize = 2;

impl Repo {
    /// Whether a checkout may write blobs' bytes as they are: no
    /// `.gitattributes` (`any_gitattributes` says for the tree or index),
    /// no attributes file of the repository or the user, no
    /// `core.autocrlf`, and symlinks enabled.
    pub(super) fn plain_checkout(&self, config: &git2::Config, any_gitattributes: bool) -> bool {
        let autocrlf = config.get_string("core.autocrlf").is_ok_and(|v| v != "false");
        let symlinks = config.get_bool("core.symlinks").unwrap_or(true);
        symlinks && !autocrlf && !any_gitattributes && !self.attribute_files(config)
    }

    /// Whether attributes come from outside the tree: `info/attributes`,
    /// `core.attributesFile` or the user's `git/attributes`.
    pub(super) fn attribute_files(&self, config: &git2::Config) -> bool {
        if self.common_dir().join("info").join("attributes").exists() || config.get_path("core.attributesFile").is_ok()
        {
            return true;
        }
        let xdg = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".config")));
        xdg.is_some_and(|d| d.join("git").join("attributes").exists())
    }
}

/// Every file, symlink and submodule of `tree`, in index order.
pub(super) fn tree_items(repo: &Repository, tree: Oid) -> Result<Vec<TreeItem>, GitError> {
    let mut items = Vec::new();
    collect(repo, tree, &mut Vec::new(), &mut items)?;
    Ok(items)
}

fn collect(repo: &Repository, tree: Oid, prefix: &mut Vec<u8>, items: &mut Vec<TreeItem>) -> Result<(), GitError> {
    let t = repo.find_tree(tree).map_err(ctx(|| format!("cannot read tree {tree}")))?;
    for e in t.iter() {
        let len = prefix.len();
        if len > 0 {
            prefix.push(b'/');
        }
        prefix.extend_from_slice(e.name_bytes());
        if e.filemode() == TREE {
            collect(repo, e.id(), prefix, items)?;
        } else {
            items.push(TreeItem { path: prefix.clone(), oid: e.id(), mode: e.filemode() as u32 });
        }
        prefix.truncate(len);
    }
    Ok(())
}

/// Writes `items` (none of which exists on disk) under `root`, reading
/// blobs through repositories opened at `git_dir`, and returns their index
/// entries with stat data, in the items' order. Missing parent directories
/// are created. `create_dir_all` follows symlinks, so the caller makes sure
/// none is in the way: a fresh worktree has none, and a reset has made
/// every existing parent a real directory ([`super::nofollow_fs::Clearer`]).
///
/// With `replace`, what stands at an item's path (a file, a symlink, a
/// directory) is removed first, by the writing thread: a reset restores
/// files the agent just wrote without a pass of its own to unlink them.
pub(super) fn write_items(
    git_dir: &Path,
    root: &Path,
    items: &[TreeItem],
    replace: bool,
) -> Result<Vec<IndexEntry>, GitError> {
    let writers = if items.len() < PARALLEL_MIN { 1 } else { WRITERS };
    let chunk = items.len().div_ceil(writers).max(1);
    let results: Vec<Result<Vec<IndexEntry>, GitError>> = std::thread::scope(|s| {
        let handles: Vec<_> =
            items.chunks(chunk).map(|part| s.spawn(move || write_part(git_dir, root, part, replace))).collect();
        handles.into_iter().map(|h| super::joined(h.join(), root, "a writing thread")).collect()
    });
    let mut all = Vec::with_capacity(items.len());
    for r in results {
        all.extend(r?);
    }
    Ok(all)
}

fn write_part(git_dir: &Path, root: &Path, items: &[TreeItem], replace: bool) -> Result<Vec<IndexEntry>, GitError> {
    if items.is_empty() {
        return Ok(Vec::new());
    }
    let repo = Repository::open(git_dir).map_err(ctx(|| format!("cannot open {}", git_dir.display())))?;
    let mut made: Option<PathBuf> = None;
    let mut entries = Vec::with_capacity(items.len());
    let owner = std::fs::symlink_metadata(root).map(|m| m.uid()).ok();
    for item in items {
        let abs = root.join(OsStr::from_bytes(&item.path));
        let io = |source| GitError::Io { path: abs.clone(), source };
        if replace && item.mode & 0o170000 == 0o100000 {
            let blob = repo.find_blob(item.oid).map_err(ctx(|| format!("cannot read blob {}", item.oid)))?;
            if let Some(meta) = overwrite(&abs, item.mode, owner, blob.content()).map_err(io)? {
                entries.push(index_entry(item, Some(&meta)));
                continue;
            }
        }
        if replace {
            match std::fs::remove_file(&abs) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                // A directory where the file goes.
                Err(_) => super::nofollow_fs::remove_any(&abs).map_err(io)?,
            }
        }
        if let Some(parent) = abs.parent()
            && made.as_deref() != Some(parent)
        {
            std::fs::create_dir_all(parent).map_err(|source| GitError::Io { path: parent.to_path_buf(), source })?;
            made = Some(parent.to_path_buf());
        }
        let meta = match item.mode {
            GITLINK => {
                // A submodule that is not checked out: an empty directory.
                std::fs::create_dir(&abs).map_err(io)?;
                None
            }
            LINK => {
                let blob = repo.find_blob(item.oid).map_err(ctx(|| format!("cannot read blob {}", item.oid)))?;
                std::os::unix::fs::symlink(OsStr::from_bytes(blob.content()), &abs).map_err(io)?;
                Some(std::fs::symlink_metadata(&abs).map_err(io)?)
            }
            mode => {
                let blob = repo.find_blob(item.oid).map_err(ctx(|| format!("cannot read blob {}", item.oid)))?;
                let mut file = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .custom_flags(libc::O_NOFOLLOW)
                    .mode(if mode == 0o100755 { 0o777 } else { 0o666 })
                    .open(&abs)
                    .map_err(io)?;
                file.write_all(blob.content()).map_err(io)?;
                Some(file.metadata().map_err(io)?)
            }
        };
        entries.push(index_entry(item, meta.as_ref()));
    }
    Ok(entries)
}

/// The base's `content` written over the file at `abs`, in place, when it
/// is a plain file of the worktree's own: a regular file (never a link:
/// `O_NOFOLLOW`, and the open descriptor must be the file looked at) with
/// one link (a hard link's other name may be outside the worktree), owned
/// by `owner`, writable by it, without set-id or sticky bits, and whose
/// owner's execute bit is the one `mode` (git's 100644 or 100755) gives.
/// The content is written from the start and the file cut to its length:
/// no unlink and create, which on ext4 free and allocate an inode and
/// change the directory, for a file an attempt appended to. Returns its
/// stat data; `None` when it is not such a file (the caller removes what
/// is there and creates the file).
fn overwrite(abs: &Path, mode: u32, owner: Option<u32>, content: &[u8]) -> std::io::Result<Option<std::fs::Metadata>> {
    let before = match std::fs::symlink_metadata(abs) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    let suits = |m: &std::fs::Metadata| {
        m.file_type().is_file()
            && m.nlink() == 1
            && Some(m.uid()) == owner
            && m.mode() & 0o7200 == 0o200
            && (m.mode() & 0o100 != 0) == (mode == 0o100755)
    };
    if !suits(&before) {
        return Ok(None);
    }
    let Ok(mut file) =
        std::fs::OpenOptions::new().write(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(abs)
    else {
        return Ok(None);
    };
    let open = file.metadata()?;
    if !suits(&open) || (open.dev(), open.ino()) != (before.dev(), before.ino()) {
        return Ok(None);
    }
    file.write_all(content)?;
    file.set_len(content.len() as u64)?;
    Ok(Some(file.metadata()?))
}

/// The index entry of a written item: its stat data as git records it
/// (each field truncated to 32 bits, as in the index format).
fn index_entry(item: &TreeItem, meta: Option<&std::fs::Metadata>) -> IndexEntry {
    let time = |secs: i64, nanos: i64| IndexTime::new(secs as i32, nanos as u32);
    IndexEntry {
        ctime: meta.map_or(IndexTime::new(0, 0), |m| time(m.ctime(), m.ctime_nsec())),
        mtime: meta.map_or(IndexTime::new(0, 0), |m| time(m.mtime(), m.mtime_nsec())),
        dev: meta.map_or(0, |m| m.dev() as u32),
        ino: meta.map_or(0, |m| m.ino() as u32),
        mode: item.mode,
        uid: meta.map_or(0, MetadataExt::uid),
        gid: meta.map_or(0, MetadataExt::gid),
        file_size: meta.map_or(0, |m| m.size() as u32),
        id: item.oid,
        flags: item.path.len().min(0xfff) as u16,
        flags_extended: 0,
        path: item.path.clone(),
    }
}
