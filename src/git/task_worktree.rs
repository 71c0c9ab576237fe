//! Task worktrees: linked git worktrees, detached at the task's base, under
//! `worktree.root` (default `<git-common-dir>/retry-run/worktrees`).
//!
//! libgit2's `git_worktree_add` insists on a branch (it creates one named
//! after the worktree when given none), and retry-run must not create
//! branches in the user's repository. So the worktree is written in git's
//! own on-disk format (`<common>/worktrees/<id>/{gitdir,commondir,HEAD}` and
//! a `.git` file), exactly what `git worktree add --detach` writes, and
//! filled by `checkout.rs` (libgit2's checkout where filters or attributes
//! may apply). `git worktree list` shows it; `git worktree prune` and
//! `git worktree remove` work on it.
//!
//! A reset rewrites only what differs from the base, and never through a
//! symlink: everything that differs is first removed from disk by
//! [`super::nofollow_fs`] (links, files, whole untracked or ignored trees,
//! read-only directories included), and only then are the base's entries
//! written into the cleared paths, the same way as at creation; a tracked
//! file that is still a plain file of the worktree's own (one link, its
//! owner's) is written over in place instead (`checkout.rs`). Where the
//! index holds exactly the base, the same index file is written back with
//! the rewritten files' stat data ([`super::index_file::restat`]), as
//! git's own refresh does, rather than read, rebuilt and written by
//! libgit2.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use git2::build::CheckoutBuilder;
use git2::{IndexEntry, IndexTime, Oid, Repository, Status, StatusOptions};

use super::checkout;
use super::index_file::StatWords;
use super::nofollow_fs;
use super::pack::ObjectKind;
use super::tree_write;
use super::working_tree::ReadIndex;
use super::{GitError, Repo, ctx};

/// What a reset did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ResetReport {
    /// Tracked paths rewritten from the base.
    pub restored: usize,
    /// Untracked or ignored files and trees removed.
    pub removed: usize,
    /// The worktree was missing or broken and was created anew.
    pub recreated: bool,
    /// Lock files of the worktree's index or HEAD that a killed process
    /// left behind, removed before the reset.
    pub stale_locks: Vec<PathBuf>,
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> GitError + '_ {
    move |source| GitError::Io { path: path.to_path_buf(), source }
}

impl Repo {
    /// Where task worktrees live: `configured` (relative to the repository
    /// root) or `<git-common-dir>/retry-run/worktrees`.
    pub fn worktrees_root(&self, configured: &str) -> PathBuf {
        if configured.is_empty() {
            self.common_dir().join("retry-run").join("worktrees")
        } else {
            let p = Path::new(configured);
            if p.is_absolute() { p.to_path_buf() } else { self.workdir().unwrap_or(self.common_dir()).join(p) }
        }
    }

    /// git's administrative directory for the task's worktree.
    pub fn worktree_meta(&self, task: &str) -> PathBuf {
        let name = crate::model::refs::worktree_name(task);
        self.common_dir().join("worktrees").join(format!("retry-run-{name}"))
    }

    /// Whether `path` is a working worktree of this repository.
    pub fn worktree_is_valid(&self, path: &Path, task: &str) -> bool {
        let meta = self.worktree_meta(task);
        let link = std::fs::read(path.join(".git")).unwrap_or_default();
        link.starts_with(b"gitdir: ") && meta.join("HEAD").is_file() && meta.join("commondir").is_file()
    }

    /// Puts back the links between the task's worktree at `path` and the
    /// repository, as retry-run wrote them: the worktree's `.git` file, and
    /// `gitdir` and `commondir` in its administrative directory (a
    /// `config.worktree` there, which retry-run never writes, is removed).
    /// An agent may rewrite them to point at the user's repository or at a
    /// directory of its own whose config runs its code; every unconfined
    /// step that opens the worktree calls this first. Returns what it put
    /// back, named as the fingerprint names them (`worktree/.git`,
    /// `worktree-admin/commondir`, ...). Nothing to do when the worktree or
    /// its administrative directory is missing (it is then created anew).
    ///
    /// Then the administrative directory itself ([`super::worktree_admin`]):
    /// a link, FIFO, socket, device, hard link or oversized file there is
    /// removed and named (`worktree-admin/logs/HEAD`), and a `HEAD` that is
    /// not a commit id (a branch named) is written anew as `base`.
    pub fn relink_worktree(&self, path: &Path, task: &str, base: Oid) -> Result<Vec<String>, GitError> {
        let meta = self.worktree_meta(task);
        if std::fs::symlink_metadata(&meta).is_ok_and(|m| !m.is_dir()) {
            nofollow_fs::remove_any(&meta).map_err(io(&meta))?;
        }
        let mut secured = Vec::new();
        for removed in super::worktree_admin::secure(&meta).map_err(io(&meta))? {
            if removed.path == "HEAD" {
                std::fs::write(meta.join("HEAD"), format!("{base}\n")).map_err(io(&meta))?;
            }
            secured.push(format!("worktree-admin/{} ({})", removed.path, removed.why));
        }
        let (Ok(real_path), Ok(real_meta)) = (std::fs::canonicalize(path), std::fs::canonicalize(&meta)) else {
            return Ok(Vec::new());
        };
        let links = [
            ("worktree/.git", path.join(".git"), format!("gitdir: {}\n", real_meta.display())),
            ("worktree-admin/gitdir", meta.join("gitdir"), format!("{}\n", real_path.join(".git").display())),
            ("worktree-admin/commondir", meta.join("commondir"), "../..\n".to_string()),
        ];
        let mut put_back = Vec::new();
        for (name, file, want) in links {
            let plain = std::fs::symlink_metadata(&file).is_ok_and(|m| m.is_file());
            if plain && std::fs::read(&file).is_ok_and(|now| now == want.as_bytes()) {
                continue;
            }
            if std::fs::symlink_metadata(&file).is_ok() {
                nofollow_fs::remove_any(&file).map_err(io(&file))?;
            }
            std::fs::write(&file, want).map_err(io(&file))?;
            put_back.push(name.to_string());
        }
        let extra = meta.join("config.worktree");
        if std::fs::symlink_metadata(&extra).is_ok() {
            nofollow_fs::remove_any(&extra).map_err(io(&extra))?;
            put_back.push("worktree-admin/config.worktree".to_string());
        }
        put_back.extend(secured);
        Ok(put_back)
    }

    /// The task's worktree `index` and `HEAD` made readable as git reads
    /// them, after [`Repo::relink_worktree`] made both plain files: an index
    /// neither retry-run's reader nor libgit2 can read (a bad header,
    /// checksum or entry) is removed (the next read takes every file from
    /// disk), and a `HEAD` that names no commit of the repository (an id
    /// no object has, or an object that is no commit) is written anew at
    /// `base`. Returns what it repaired, named for the attempt's violation:
    /// what the agent wrote there is data, never a reason for the run to
    /// stop as if the machine were at fault.
    pub fn repair_worktree_git(&self, task: &str, base: Oid) -> Result<Vec<String>, GitError> {
        self.repair_git(task, base).map(|(repaired, _)| repaired)
    }

    /// [`Repo::repair_worktree_git`], with the index as it read it, for a
    /// snapshot taken right after to go on from ([`Repo::snapshot_from`]):
    /// the index of a large worktree is read, and its checksum verified,
    /// once rather than twice (2 to 3 ms at 20,000 files).
    pub fn repair_worktree_git_keeping(&self, task: &str, base: Oid) -> Result<(Vec<String>, IndexRead), GitError> {
        let (repaired, read) = self.repair_git(task, base)?;
        let index = self.worktree_meta(task).join("index");
        Ok((repaired, IndexRead::of(read, &index)))
    }

    /// [`Repo::repair_worktree_git`], with the index as it read it, when
    /// [`super::index_file`] could (a reset goes on from it rather than
    /// reading the file again).
    fn repair_git(&self, task: &str, base: Oid) -> Result<(Vec<String>, Option<ReadIndex>), GitError> {
        let meta = self.worktree_meta(task);
        let mut repaired = Vec::new();
        let index = meta.join("index");
        let read = ReadIndex::read(&index);
        if read.is_none()
            && std::fs::read(&index).is_ok()
            && git2::Index::open(&index).and_then(|mut i| i.read(true)).is_err()
        {
            std::fs::remove_file(&index).map_err(io(&index))?;
            repaired.push("worktree-admin/index (not an index git can read)".to_string());
        }
        let head = meta.join("HEAD");
        let bytes = match std::fs::read(&head) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(e) => return Err(GitError::Io { path: head, source: e }),
        };
        let text = String::from_utf8_lossy(&bytes).trim().to_string();
        let names_commit = Oid::from_str(&text)
            .ok()
            .is_some_and(|oid| self.repo.find_object(oid, Some(git2::ObjectType::Commit)).is_ok());
        if !names_commit && meta.is_dir() {
            std::fs::write(&head, format!("{base}\n")).map_err(io(&head))?;
            repaired.push(format!(
                "worktree-admin/HEAD (names no commit: {:?})",
                text.chars().take(80).collect::<String>()
            ));
        }
        Ok((repaired, read))
    }

    /// Creates the task's worktree at `path`, detached at `base`.
    pub fn create_worktree(&self, path: &Path, task: &str, base: Oid) -> Result<(), GitError> {
        self.repo.find_commit(base).map_err(ctx(|| format!("cannot read base commit {base}")))?;
        if path.exists() {
            nofollow_fs::remove_any(path).map_err(io(path))?;
        }
        std::fs::create_dir_all(path).map_err(io(path))?;
        let path = std::fs::canonicalize(path).map_err(io(path))?;
        let meta = self.worktree_meta(task);
        nofollow_fs::remove_any(&meta).map_err(io(&meta))?;
        std::fs::create_dir_all(&meta).map_err(io(&meta))?;
        let meta = std::fs::canonicalize(&meta).map_err(io(&meta))?;
        let write =
            |p: PathBuf, text: String| std::fs::write(&p, text).map_err(|source| GitError::Io { path: p, source });
        write(meta.join("gitdir"), format!("{}\n", path.join(".git").display()))?;
        write(meta.join("commondir"), "../..\n".to_string())?;
        write(meta.join("HEAD"), format!("{base}\n"))?;
        write(path.join(".git"), format!("gitdir: {}\n", meta.display()))?;
        let wt =
            Repository::open(&path).map_err(ctx(|| format!("{}: cannot open the new worktree", path.display())))?;
        let commit = wt.find_commit(base).map_err(ctx(|| format!("cannot read base commit {base}")))?;
        let config = wt.config().map_err(ctx(|| format!("{}: cannot read the config", path.display())))?;
        let items = checkout::tree_items(&wt, commit.tree_id())?;
        let gitattributes: Vec<(Vec<u8>, Oid)> = items
            .iter()
            .filter(|i| crate::pathfmt::basename(&i.path) == b".gitattributes")
            .map(|i| (i.path.clone(), i.oid))
            .collect();
        let attributes = !gitattributes.is_empty();
        let plain = self.plain_checkout(&config, attributes);
        if let Some(git) = self.git_checkout(&wt, &gitattributes, !plain) {
            // Filter drivers or a sparse checkout: git writes the files.
            return git.reset_hard(&path, &meta, base);
        }
        if !plain {
            let mut co = CheckoutBuilder::new();
            co.force().recreate_missing(true);
            return wt
                .checkout_tree(commit.as_object(), Some(&mut co))
                .map_err(ctx(|| format!("{}: cannot check out {base}", path.display())));
        }
        let entries = checkout::write_items(&path, &path, &items, false)?;
        let mut index = wt.index().map_err(ctx(|| format!("{}: cannot open the worktree's index", path.display())))?;
        index.clear().map_err(ctx(|| "cannot clear the worktree's index".into()))?;
        for e in &entries {
            index.add(e).map_err(ctx(|| format!("cannot add {} to the index", String::from_utf8_lossy(&e.path))))?;
        }
        cache_trees(&mut index, &commit)?;
        index.write().map_err(ctx(|| format!("{}: cannot write the worktree's index", path.display())))
    }

    /// Brings the task's worktree back to `base` exactly; recreates it when
    /// it is missing or no longer a worktree (deleted, pruned).
    pub fn reset_worktree(&self, path: &Path, task: &str, base: Oid) -> Result<ResetReport, GitError> {
        self.reset_worktree_keeping(path, task, base, &[])
    }

    /// [`Repo::reset_worktree`], leaving the untracked or ignored paths
    /// `keep` (relative, `[worktree] share`) and what is below them as they are.
    pub fn reset_worktree_keeping(
        &self,
        path: &Path,
        task: &str,
        base: Oid,
        keep: &[Vec<u8>],
    ) -> Result<ResetReport, GitError> {
        let mut read = None;
        if path.is_dir() {
            self.relink_worktree(path, task, base)?;
            read = self.repair_git(task, base)?.1;
        }
        if !path.is_dir() || !self.worktree_is_valid(path, task) {
            self.create_worktree(path, task, base)?;
            return Ok(ResetReport { recreated: true, ..ResetReport::default() });
        }
        let stale_locks = self.remove_stale_locks(task)?;
        let wt = Repository::open(path).map_err(ctx(|| format!("{}: cannot open the worktree", path.display())))?;
        let commit = wt.find_commit(base).map_err(ctx(|| format!("cannot read base commit {base}")))?;
        let tree = commit.tree().map_err(ctx(|| format!("cannot read the tree of {base}")))?;
        wt.set_head_detached(base).map_err(ctx(|| format!("{}: cannot detach HEAD at {base}", path.display())))?;

        let mut report = ResetReport { stale_locks, ..ResetReport::default() };
        let (listed, (mut remove, restore, gitattributes)) = self.differences(path, &wt, &tree, read)?;
        remove.retain(|p| !below_any(p.strip_suffix(b"/").unwrap_or(p), keep));
        report.removed = remove.len();
        let (plain, git) = {
            let config = wt.config().map_err(ctx(|| format!("{}: cannot read the config", path.display())))?;
            let plain = self.plain_checkout(&config, !gitattributes.is_empty());
            (plain, self.git_checkout(&wt, &gitattributes, !plain))
        };
        let meta = self.worktree_meta(task);
        // What the attempt added (untracked, ignored) is removed on another
        // thread while the base's files are written back; first, at once,
        // what stands in the way of a file to write back or below one (a
        // symlink that replaced a directory, a directory that replaced a file).
        let removing = |remove: &[&Vec<u8>]| -> Result<(), GitError> {
            for file in remove {
                let rel = Path::new(std::ffi::OsStr::from_bytes(file.strip_suffix(b"/").unwrap_or(file)));
                nofollow_fs::remove_any(&path.join(rel)).map_err(io(&path.join(rel)))?;
            }
            Ok(())
        };
        let (in_the_way, apart): (Vec<&Vec<u8>>, Vec<&Vec<u8>>) =
            remove.iter().partition(|r| overlaps(r.strip_suffix(b"/").unwrap_or(r), &restore));
        removing(&in_the_way)?;
        let (removed, written) = std::thread::scope(|s| {
            let remover = s.spawn(|| removing(&apart));
            let base = Base { wt: &wt, commit: &commit, tree: &tree, plain, git: git.as_ref(), meta: &meta };
            let written = match listed {
                _ if restore.is_empty() => Ok(()),
                // The index holds the base exactly, its trees cached: the
                // files are written and the same index is written back with
                // their new stat data, never read into libgit2.
                Listed::Read(read) if plain && git.is_none() && read.index.trees.get(&b""[..]) == Some(&tree.id()) => {
                    restore_plain(path, &restore, &read, &meta)
                }
                // libgit2's index, read only when a file is to be written back.
                Listed::Read(_) => wt
                    .index()
                    .map_err(ctx(|| format!("{}: cannot read the worktree's index", path.display())))
                    .and_then(|mut index| restore_files(&base, path, &restore, &mut index)),
                Listed::Libgit2(mut index) => restore_files(&base, path, &restore, &mut index),
            };
            (super::joined(remover.join(), path, "a removing thread"), written)
        });
        removed?;
        written?;
        report.restored = restore.len();
        Ok(report)
    }

    /// The lock files left in the task's worktree metadata, removed. The
    /// worktree and its metadata are retry-run's, and its callers hold the
    /// task's run lock: a lock file here was left by a process killed while
    /// writing (git and libgit2 take them for milliseconds).
    fn remove_stale_locks(&self, task: &str) -> Result<Vec<PathBuf>, GitError> {
        let mut stale_locks = Vec::new();
        for name in ["index.lock", "HEAD.lock"] {
            let lock = self.worktree_meta(task).join(name);
            if std::fs::symlink_metadata(&lock).is_ok() {
                nofollow_fs::remove_any(&lock).map_err(io(&lock))?;
                stale_locks.push(lock);
            }
        }
        Ok(stale_locks)
    }

    /// What differs from the base in the worktree `wt`: the paths to remove
    /// and to restore, and the `.gitattributes` files with their blobs; from
    /// the index as `read` (by [`Repo::repair_git`]) when nothing is staged
    /// against the base, else through libgit2, whose index is returned.
    fn differences(
        &self,
        path: &Path,
        wt: &Repository,
        tree: &git2::Tree<'_>,
        read: Option<ReadIndex>,
    ) -> Result<(Listed, Listing), GitError> {
        if let Some(read) = read
            && let Some((read, listing)) = self.plain_reset_listing(path, wt, tree, read)?
        {
            return Ok((Listed::Read(read), listing));
        }
        let (index, remove, restore) = reset_listing(path, wt, tree)?;
        let gitattributes: Vec<(Vec<u8>, Oid)> = index
            .iter()
            .filter(|e| crate::pathfmt::basename(&e.path) == b".gitattributes")
            .map(|e| (e.path, e.id))
            .collect();
        Ok((Listed::Libgit2(index), (remove, restore, gitattributes)))
    }

    /// [`reset_listing`] for the common index, read directly
    /// ([`super::working_tree::plain_rules`]) when nothing is staged
    /// against the base: each directory listed once, an untracked or
    /// ignored directory removed whole. Returns the index, what to remove,
    /// what to write back (sorted) and the index's `.gitattributes`
    /// entries; `None`: libgit2 decides.
    fn plain_reset_listing(
        &self,
        path: &Path,
        wt: &Repository,
        tree: &git2::Tree<'_>,
        read: ReadIndex,
    ) -> Result<Option<(ReadIndex, Listing)>, GitError> {
        let Some((read, rules)) = super::working_tree::plain_rules(wt, read)? else { return Ok(None) };
        let index = &read.index;
        let odb = wt.odb().map_err(ctx(|| "cannot open the object database".into()))?;
        let mut staged = Vec::new();
        super::status::staged(&odb, tree.id(), index, &mut staged)?;
        if !staged.is_empty() {
            return Ok(None);
        }
        let scanned = super::working_tree::scan_working_tree(path, rules, &index.entries, None);
        let Some(found) = super::status::unsure_is_none(scanned)? else { return Ok(None) };
        let (mut remove, mut restore) = (Vec::new(), Vec::new());
        for (file, untracked) in found {
            if untracked { remove.push(file) } else { restore.push(file) }
        }
        restore.sort();
        restore.dedup();
        let gitattributes = index
            .entries
            .iter()
            .filter(|e| crate::pathfmt::basename(&e.path) == b".gitattributes")
            .map(|e| (e.path.clone(), e.id))
            .collect();
        Ok(Some((read, (remove, restore, gitattributes))))
    }

    /// Removes the task's worktree and git's metadata for it.
    pub fn remove_worktree(&self, path: &Path, task: &str) -> Result<(), GitError> {
        nofollow_fs::remove_any(path).map_err(io(path))?;
        let meta = self.worktree_meta(task);
        nofollow_fs::remove_any(&meta).map_err(io(&meta))
    }
}

/// Gives an index that holds exactly `commit`'s tree the tree ids of its
/// directories (the TREE extension), so that the comparisons that follow
/// ([`super::status::staged`]) skip every directory unread. libgit2's
/// `read_tree` keeps each entry's stat data where the id is unchanged.
fn cache_trees(index: &mut git2::Index, commit: &git2::Commit<'_>) -> Result<(), GitError> {
    let tree = commit.tree().map_err(ctx(|| format!("cannot read the tree of {}", commit.id())))?;
    index.read_tree(&tree).map_err(ctx(|| "cannot cache the index's trees".into()))
}

/// Paths of a worktree, relative to it.
type Paths = Vec<Vec<u8>>;

/// The index a reset listed the worktree's differences from.
enum Listed {
    /// Read by [`super::index_file`]; nothing staged against the base.
    Read(ReadIndex),
    /// libgit2's, put back to the base ([`index_back_to_base`]).
    Libgit2(git2::Index),
}

/// What a reset removes, what it writes back, and the index's
/// `.gitattributes` entries (path, blob).
type Listing = (Paths, Paths, Vec<(Vec<u8>, Oid)>);

/// What differs from the base in the worktree at `path` (`wt`, whose HEAD
/// is the base now), through libgit2: the index put back to the base entry
/// by entry, then its status, untracked and ignored included, in two halves
/// side by side. Returns the index, what to remove and what to write back.
fn reset_listing(path: &Path, wt: &Repository, tree: &git2::Tree<'_>) -> Result<(git2::Index, Paths, Paths), GitError> {
    let (index, mut restore) = index_back_to_base(path, wt, tree)?;
    let mut remove: Vec<Vec<u8>> = Vec::new();
    // libgit2 looks into an untracked directory to tell whether it holds
    // anything: a tree too deep for its walk is cut first (it is removed
    // anyway), and the status read again.
    let statuses = match worktree_statuses(path, wt, &index) {
        Err(e) if e.is_too_deep() => {
            cut_too_deep(path)?;
            worktree_statuses(path, wt, &index)?
        }
        read => read?,
    };
    for (file, st) in statuses {
        if st.intersects(Status::WT_NEW | Status::IGNORED) {
            remove.push(file);
        } else if st.intersects(Status::WT_MODIFIED | Status::WT_DELETED | Status::WT_TYPECHANGE | Status::WT_RENAMED)
            || st.intersects(
                Status::INDEX_NEW | Status::INDEX_MODIFIED | Status::INDEX_DELETED | Status::INDEX_TYPECHANGE,
            )
        {
            restore.push(file);
        }
    }
    restore.sort();
    restore.dedup();
    // Outside the sparse patterns (skip-worktree): absent on purpose.
    restore.retain(|f| {
        index
            .get_path(Path::new(std::ffi::OsStr::from_bytes(f)), 0)
            .is_none_or(|e| e.flags_extended & git2::IndexEntryExtendedFlag::SKIP_WORKTREE.bits() == 0)
    });
    Ok((index, remove, restore))
}

/// Removes every directory of the worktree at `path` too deep for git's
/// walks ([`super::MAX_SCAN_DEPTH`] levels), with what is below it, in one
/// walk ([`nofollow_fs::cut_beyond`]); returns them (relative, sorted).
pub(crate) fn cut_too_deep(path: &Path) -> Result<Vec<Vec<u8>>, GitError> {
    let mut cut = nofollow_fs::cut_beyond(path, super::MAX_SCAN_DEPTH).map_err(io(path))?;
    cut.sort();
    Ok(cut)
}

/// The worktree's index put back to the base, entry by entry (stat data
/// of untouched entries kept), and written when the attempt staged
/// something; with the paths whose entries were put back.
fn index_back_to_base(path: &Path, wt: &Repository, tree: &git2::Tree<'_>) -> Result<(git2::Index, Paths), GitError> {
    let mut index = wt.index().map_err(ctx(|| format!("{}: cannot read the worktree's index", path.display())))?;
    let staged = wt
        .diff_tree_to_index(Some(tree), Some(&index), None)
        .map_err(ctx(|| format!("{}: cannot compare the index with the base", path.display())))?;
    let mut restore: Vec<Vec<u8>> = Vec::new();
    for delta in staged.deltas() {
        let file = delta.old_file().path_bytes().or(delta.new_file().path_bytes()).unwrap_or_default().to_vec();
        let rel = Path::new(std::ffi::OsStr::from_bytes(&file));
        match tree.get_path(rel) {
            Ok(entry) => {
                let e = IndexEntry {
                    ctime: IndexTime::new(0, 0),
                    mtime: IndexTime::new(0, 0),
                    dev: 0,
                    ino: 0,
                    mode: entry.filemode() as u32,
                    uid: 0,
                    gid: 0,
                    file_size: 0,
                    id: entry.id(),
                    flags: (file.len().min(0xfff)) as u16,
                    flags_extended: 0,
                    path: file.clone(),
                };
                index.add(&e).map_err(ctx(|| format!("cannot restore index entry {}", rel.display())))?;
                restore.push(file.clone());
            }
            Err(_) => {
                let _ = index.remove_path(rel);
            }
        }
        if let Some(new) = delta.new_file().path_bytes().filter(|n| *n != file.as_slice()) {
            let _ = index.remove_path(Path::new(std::ffi::OsStr::from_bytes(new)));
        }
    }
    if staged.deltas().len() > 0 {
        // Only when the attempt staged something: the status below reads it from disk.
        index.write().map_err(ctx(|| format!("{}: cannot write the worktree's index", path.display())))?;
    }

    Ok((index, restore))
}

/// The worktree's files that differ from the base, untracked and ignored
/// included, with their status; the working tree cut in two halves
/// compared side by side (as for a snapshot's status).
fn worktree_statuses(path: &Path, wt: &Repository, index: &git2::Index) -> Result<Vec<(Vec<u8>, Status)>, GitError> {
    let (first, second) = super::working_tree::split_working_tree(path, index);
    let (a, b) = std::thread::scope(|s| {
        let other = (!second.is_empty()).then(|| {
            s.spawn(|| {
                let repo =
                    Repository::open(path).map_err(ctx(|| format!("{}: cannot open the worktree", path.display())))?;
                statuses(path, &repo, &second)
            })
        });
        let a = statuses(path, wt, &first);
        let b = other.map(|h| super::joined(h.join(), path, "a status thread"));
        (a, b.unwrap_or(Ok(Vec::new())))
    });
    Ok(a?.into_iter().chain(b?).collect())
}

/// The status of the paths under `part` of the worktree at `path`.
fn statuses(path: &Path, repo: &Repository, part: &[Vec<u8>]) -> Result<Vec<(Vec<u8>, Status)>, GitError> {
    let mut opts = StatusOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(false)
        .include_ignored(true)
        .recurse_ignored_dirs(false)
        .exclude_submodules(true)
        .include_unmodified(false)
        .renames_head_to_index(false)
        .renames_index_to_workdir(false)
        .disable_pathspec_match(true);
    for unit in part {
        opts.pathspec(unit.as_slice());
    }
    let list = repo
        .statuses(Some(&mut opts))
        .map_err(ctx(|| format!("{}: cannot read the worktree's status", path.display())))?;
    Ok(list.iter().map(|s| (s.path_bytes().to_vec(), s.status())).collect())
}

/// Whether `path` is one of `sorted` (sorted byte paths), under one of
/// them, or above one of them.
fn overlaps(path: &[u8], sorted: &[Vec<u8>]) -> bool {
    let below = [path, b"/"].concat();
    let at = sorted.partition_point(|q| q.as_slice() < below.as_slice());
    if sorted.get(at).is_some_and(|q| q.starts_with(&below)) {
        return true;
    }
    let mut prefix = path;
    loop {
        if sorted.binary_search_by(|q| q.as_slice().cmp(prefix)).is_ok() {
            return true;
        }
        match prefix.iter().rposition(|&b| b == b'/') {
            Some(i) => prefix = &prefix[..i],
            None => return false,
        }
    }
}

/// A worktree's index as [`Repo::repair_worktree_git_keeping`] read it,
/// with what identifies the file it was read from; empty when it was not
/// read (or could not be described).
#[derive(Default)]
pub struct IndexRead(Option<(ReadIndex, FileId)>);

/// A file's device, inode, size and modification time.
type FileId = (u64, u64, u64, i64, i64);

/// `file`'s [`FileId`], when it can be read.
fn file_id(file: &Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(file).ok()?;
    Some((m.dev(), m.ino(), m.size(), m.mtime(), m.mtime_nsec()))
}

impl IndexRead {
    /// `read`, read from `file` (whose identity is taken now: nothing
    /// writes it between the read and this).
    fn of(read: Option<ReadIndex>, file: &Path) -> IndexRead {
        IndexRead(read.zip(file_id(file)))
    }

    /// The index read, when `file` is still the file it was read from.
    fn take(self, file: &Path) -> Option<ReadIndex> {
        let (read, id) = self.0?;
        (file_id(file) == Some(id)).then_some(read)
    }
}

impl Repo {
    /// Commits the state of the worktree at `path` (tracked changes and new
    /// untracked files that the base's ignore rules do not ignore) as a
    /// commit whose parent is `base`, and points `refname` at it. No index
    /// is touched: the tree is the worktree's `HEAD` tree with the changed
    /// entries laid over it (`tree_write.rs`).
    /// Submodules with changes of their own, which no commit of the
    /// superproject can hold, are named in [`Snapshot::dirty_submodules`].
    pub fn snapshot(&self, path: &Path, base: Oid, refname: &str, message: &str) -> Result<Snapshot, GitError> {
        self.snapshot_from(path, base, refname, message, IndexRead::default())
    }

    /// [`Repo::snapshot_from`], where a directory of the worktree too deep
    /// to read ([`super::MAX_SCAN_DEPTH`] levels or more: retry-run's scan
    /// or libgit2's walk says so, [`GitError::is_too_deep`]) ends nothing:
    /// every such directory is removed with what is below it, in one walk
    /// ([`cut_too_deep`]), and the snapshot is taken again. Returns the
    /// snapshot and the directories removed (relative, sorted). Only for a
    /// worktree whose every file is the attempt's to lose (reset before the
    /// next attempt).
    pub fn snapshot_cutting(
        &self,
        path: &Path,
        base: Oid,
        refname: &str,
        message: &str,
        index: IndexRead,
    ) -> Result<(Snapshot, Vec<Vec<u8>>), GitError> {
        match self.snapshot_from(path, base, refname, message, index) {
            Err(e) if e.is_too_deep() => {
                let cut = cut_too_deep(path)?;
                Ok((self.snapshot(path, base, refname, message)?, cut))
            }
            taken => Ok((taken?, Vec::new())),
        }
    }

    /// [`Repo::snapshot`] going on from the worktree's index as `index`
    /// read it, where that is still the file the worktree has (the same
    /// file, size and mtime); else the index is read again.
    pub fn snapshot_from(
        &self,
        path: &Path,
        base: Oid,
        refname: &str,
        message: &str,
        index: IndexRead,
    ) -> Result<Snapshot, GitError> {
        let wt = Repo::discover(path)?;
        let head = wt.head()?;
        let head_tree = wt.commit_tree(head.oid)?;
        let base_tree = self.commit_tree(base)?;
        let state = wt.working_tree_overlay(base_tree, head_tree, index.take(&wt.repo.path().join("index")))?;
        // A fresh handle, without the in-memory object database, writes to disk.
        let repo = Repository::open(path).map_err(ctx(|| format!("{}: cannot open the worktree", path.display())))?;
        let odb = repo.odb().map_err(ctx(|| "cannot open the object database".into()))?;
        let tree_write::Built { root: tree, trees } =
            tree_write::build(&repo, head_tree, &tree_write::nest(&state.overlay))?;

        // What is not stored yet: new blobs, then new trees.
        let mut missing: Vec<(Oid, ObjectKind, std::borrow::Cow<'_, [u8]>)> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        for (file, leaf) in &state.overlay {
            let Some((oid, mode)) = leaf else { continue };
            if *mode == 0o160000 || !seen.insert(*oid) || odb.exists(*oid) {
                continue;
            }
            let data = match state.contents.get(oid) {
                Some(d) => std::borrow::Cow::Borrowed(d.as_slice()),
                // Filtered into the in-memory object database.
                None => {
                    let rel = Path::new(std::ffi::OsStr::from_bytes(file));
                    let blob = wt.repo.find_blob(*oid).map_err(ctx(|| {
                        format!("{}: the file changed while it was being snapshotted", rel.display())
                    }))?;
                    std::borrow::Cow::Owned(blob.content().to_vec())
                }
            };
            missing.push((*oid, ObjectKind::Blob, data));
        }
        for (oid, bytes) in &trees {
            if seen.insert(*oid) && !odb.exists(*oid) {
                missing.push((*oid, ObjectKind::Tree, std::borrow::Cow::Borrowed(bytes.as_slice())));
            }
        }
        store_objects(&odb, &missing)?;

        let tree = repo.find_tree(tree).map_err(ctx(|| format!("cannot read tree {tree}")))?;
        let parent = repo.find_commit(base).map_err(ctx(|| format!("cannot read base commit {base}")))?;
        let sig = git2::Signature::now("retry-run", "retry-run@localhost")
            .map_err(ctx(|| "cannot make a signature".into()))?;
        let oid = repo
            .commit(None, &sig, &sig, message, &tree, &[&parent])
            .map_err(ctx(|| "cannot write the snapshot commit".into()))?;
        repo.reference(refname, oid, true, "retry-run snapshot").map_err(ctx(|| format!("cannot update {refname}")))?;
        Ok(Snapshot { commit: oid, dirty_submodules: state.dirty_submodules.into_iter().collect() })
    }
}

/// A worktree as a commit, and what the commit cannot hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub commit: Oid,
    /// Submodules (paths) with uncommitted changes inside, or files in the
    /// directory of one that is not initialised.
    pub dirty_submodules: Vec<Vec<u8>>,
}

/// What [`Repo::import_quarantine`] did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Imported {
    /// Objects copied into the repository.
    pub copied: usize,
    /// Objects whose content does not hash to their name: not copied.
    pub rejected: Vec<String>,
}

impl Repo {
    /// Copies the objects an attempt's git wrote into its quarantine (the
    /// object directory its `GIT_OBJECT_DIRECTORY` named) into the
    /// repository, each checked against its name first: an object whose
    /// content does not hash to its id is not copied. The repository's own
    /// object store was read-only to the attempt.
    ///
    /// `also` names more object stores (the task worktree's submodules'),
    /// which get the same objects: a commit made inside a submodule lands
    /// in the quarantine too, and the submodule must read it back.
    pub fn import_quarantine(&self, quarantine: &Path, also: &[PathBuf]) -> Result<Imported, GitError> {
        let mut out = Imported::default();
        if !quarantine.is_dir() {
            return Ok(out);
        }
        let q = git2::Odb::new().map_err(ctx(|| "cannot open the attempt's objects".into()))?;
        q.add_disk_alternate(&quarantine.display().to_string())
            .map_err(ctx(|| format!("{}: cannot read the attempt's objects", quarantine.display())))?;
        let mut ids = Vec::new();
        q.foreach(|oid| {
            ids.push(*oid);
            true
        })
        .map_err(ctx(|| format!("{}: cannot list the attempt's objects", quarantine.display())))?;
        let odb = self.repo.odb().map_err(ctx(|| "cannot open the object database".into()))?;
        let mut subs: Vec<Repository> = Vec::new();
        for dir in also {
            let git_dir = dir.parent().unwrap_or(dir);
            subs.push(
                Repository::open_bare(git_dir)
                    .map_err(ctx(|| format!("{}: cannot open the submodule's repository", git_dir.display())))?,
            );
        }
        let others: Vec<git2::Odb<'_>> = subs
            .iter()
            .map(|r| r.odb().map_err(ctx(|| "cannot open a submodule's objects".into())))
            .collect::<Result<_, _>>()?;
        for oid in ids {
            if !others.is_empty()
                && let Ok(obj) = q.read(oid)
                && Oid::hash_object(obj.kind(), obj.data()).ok() == Some(oid)
            {
                for o in others.iter().filter(|o| !o.exists(oid)) {
                    o.write(obj.kind(), obj.data()).map_err(ctx(|| format!("cannot store object {oid}")))?;
                }
            }
            if odb.exists(oid) {
                continue;
            }
            let Ok(obj) = q.read(oid) else {
                out.rejected.push(oid.to_string());
                continue;
            };
            let (kind, data) = (obj.kind(), obj.data());
            if Oid::hash_object(kind, data).ok() != Some(oid) {
                out.rejected.push(oid.to_string());
                continue;
            }
            odb.write(kind, data).map_err(ctx(|| format!("cannot store object {oid}")))?;
            out.copied += 1;
        }
        Ok(out)
    }
}

/// Fewer new objects than this are written loose; more go into one pack.
const PACK_THRESHOLD: usize = 32;

/// Stores new objects: loose when few, else one pack through the indexer.
fn store_objects(odb: &git2::Odb, objects: &[(Oid, ObjectKind, std::borrow::Cow<'_, [u8]>)]) -> Result<(), GitError> {
    if objects.len() < PACK_THRESHOLD {
        for (oid, kind, data) in objects {
            let kind = match kind {
                ObjectKind::Blob => git2::ObjectType::Blob,
                ObjectKind::Tree => git2::ObjectType::Tree,
            };
            let written = odb.write(kind, data).map_err(ctx(|| format!("cannot store object {oid}")))?;
            debug_assert_eq!(written, *oid);
        }
        return Ok(());
    }
    let pack = super::pack::pack(objects.iter().map(|(_, kind, data)| (*kind, data.as_ref())));
    let mut writer = odb.packwriter().map_err(ctx(|| "cannot open a pack writer".into()))?;
    std::io::Write::write_all(&mut writer, &pack)
        .map_err(|e| GitError::Io { path: "objects/pack".into(), source: e })?;
    writer.commit().map_err(ctx(|| format!("cannot store a pack of {} new objects", objects.len())))?;
    Ok(())
}

/// The base a worktree is reset to, as the worktree's repository sees it.
struct Base<'b> {
    wt: &'b Repository,
    commit: &'b git2::Commit<'b>,
    tree: &'b git2::Tree<'b>,
    /// No filter or attribute applies: files are written by our own threads.
    plain: bool,
    /// Filter drivers or a sparse checkout: git writes the files.
    git: Option<&'b super::filters::GitCheckout>,
    /// The worktree's administrative directory.
    meta: &'b Path,
}

/// The base's version of each path of `restore` written back: the parents
/// made real directories here, each file replaced by the writing threads
/// (plain checkout), through libgit2 when attributes apply, or by git when
/// filter drivers or a sparse checkout do (`filters.rs`).
fn restore_files(base: &Base<'_>, path: &Path, restore: &[Vec<u8>], index: &mut git2::Index) -> Result<(), GitError> {
    let Base { wt, commit, tree, plain, git, meta } = *base;
    let plain = plain && git.is_none();
    let mut items: Vec<checkout::TreeItem> = Vec::new();
    let mut clearer = nofollow_fs::Clearer::new(path);
    for file in restore {
        let rel = Path::new(std::ffi::OsStr::from_bytes(file));
        let Ok(entry) = tree.get_path(rel) else {
            // Not in the base: staged by the attempt, gone from the index now.
            nofollow_fs::remove_any(&path.join(rel)).map_err(io(&path.join(rel)))?;
            continue;
        };
        if entry.filemode() == 0o040000 || !plain {
            clearer.clear_for_write(rel).map_err(io(&path.join(rel)))?;
        } else {
            // The writing thread removes the file itself.
            clearer.real_parents(rel).map_err(io(&path.join(rel)))?;
        }
        if entry.filemode() == 0o040000 {
            for mut item in checkout::tree_items(wt, entry.id())? {
                item.path = [file.as_slice(), b"/", &item.path].concat();
                items.push(item);
            }
        } else {
            items.push(checkout::TreeItem { path: file.clone(), oid: entry.id(), mode: entry.filemode() as u32 });
        }
    }
    if items.is_empty() {
        return Ok(());
    }
    if let Some(git) = git {
        // The cleared paths are missing now: git writes them back through
        // the smudge filters, with whatever else it sees as changed.
        git.reset_hard(path, meta, commit.id())?;
    } else if plain {
        let written = checkout::write_items(path, path, &items, true)?;
        for e in written {
            index
                .add(&e)
                .map_err(ctx(|| format!("cannot update {} in the index", String::from_utf8_lossy(&e.path))))?;
        }
        cache_trees(index, commit)?;
        index.write().map_err(ctx(|| format!("{}: cannot write the worktree's index", path.display())))?;
    } else {
        let mut co = CheckoutBuilder::new();
        co.force().recreate_missing(true).disable_pathspec_match(true);
        for item in &items {
            co.path(Path::new(std::ffi::OsStr::from_bytes(&item.path)));
        }
        let base = commit.id();
        wt.checkout_tree(commit.as_object(), Some(&mut co))
            .map_err(ctx(|| format!("{}: cannot restore files from {base}", path.display())))?;
    }
    Ok(())
}

/// [`restore_files`] where the index `read` holds exactly the base (its
/// cached root tree the base's, nothing staged) and no filter or attribute
/// applies: each path of `restore` (sorted; all index entries) written by
/// the writing threads from its entry's blob and mode, then the same index
/// file written back with the new files' stat data, under git's lock
/// (`index.lock` in the worktree's administrative directory `meta`). No
/// libgit2 index is read, rebuilt from the tree or serialised.
fn restore_plain(path: &Path, restore: &[Vec<u8>], read: &ReadIndex, meta: &Path) -> Result<(), GitError> {
    let entries = &read.index.entries;
    let mut clearer = nofollow_fs::Clearer::new(path);
    let mut items: Vec<checkout::TreeItem> = Vec::with_capacity(restore.len());
    let mut starts: Vec<usize> = Vec::with_capacity(restore.len());
    for file in restore {
        let rel = Path::new(std::ffi::OsStr::from_bytes(file));
        let Ok(i) = entries.binary_search_by(|e| e.path.as_slice().cmp(file)) else {
            let source = std::io::Error::other("a path to restore is not in the worktree's index");
            return Err(GitError::Io { path: path.join(rel), source });
        };
        // The writing thread removes the file itself.
        clearer.real_parents(rel).map_err(io(&path.join(rel)))?;
        items.push(checkout::TreeItem { path: file.clone(), oid: entries[i].id, mode: entries[i].mode });
        starts.push(read.offsets[i]);
    }
    let written = checkout::write_items(path, path, &items, true)?;
    let updates: Vec<(usize, StatWords)> =
        starts.into_iter().zip(&written).map(|(at, e)| (at, stat_words(e))).collect();
    let index = meta.join("index");
    let Some(data) = super::index_file::restat(&read.data, &updates) else {
        let source = std::io::Error::other("cannot write the new stat data into the index");
        return Err(GitError::Io { path: index, source });
    };
    write_locked(&index, &data)
}

/// An index entry's stat data as the index file stores it.
fn stat_words(e: &IndexEntry) -> StatWords {
    [
        e.ctime.seconds() as u32,
        e.ctime.nanoseconds(),
        e.mtime.seconds() as u32,
        e.mtime.nanoseconds(),
        e.dev,
        e.ino,
        e.mode,
        e.uid,
        e.gid,
        e.file_size,
    ]
}

/// `data` written to `file` as git writes its index: into `<file>.lock`,
/// created only if absent (another process holding it is an error), then
/// renamed over `file`.
fn write_locked(file: &Path, data: &[u8]) -> Result<(), GitError> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let lock = file.with_extension("lock");
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_NOFOLLOW)
        .mode(0o666)
        .open(&lock)
        .map_err(io(&lock))?;
    if let Err(e) = out.write_all(data) {
        let _ = std::fs::remove_file(&lock);
        return Err(GitError::Io { path: lock, source: e });
    }
    drop(out);
    std::fs::rename(&lock, file).map_err(|e| {
        let _ = std::fs::remove_file(&lock);
        GitError::Io { path: file.to_path_buf(), source: e }
    })
}

/// Whether `path` is one of `dirs` or below one. Pure.
fn below_any(path: &[u8], dirs: &[Vec<u8>]) -> bool {
    dirs.iter().any(|d| path.starts_with(d) && (path.len() == d.len() || path.get(d.len()) == Some(&b'/')))
}

#[cfg(test)]
mod tests {
    use super::{below_any, overlaps};

    #[test]
    fn overlap_is_the_path_itself_below_it_or_above_it() {
        let restore: Vec<Vec<u8>> =
            ["a.txt", "src/deep/x.txt", "src/lib.py"].iter().map(|p| p.as_bytes().to_vec()).collect();
        assert!(overlaps(b"src/deep", &restore), "a symlink that replaced a directory to restore");
        assert!(overlaps(b"a.txt/inside", &restore), "inside a directory that replaced a file");
        assert!(overlaps(b"src/lib.py", &restore));
        assert!(!overlaps(b"src/lib.py.new", &restore));
        assert!(!overlaps(b"src/de", &restore));
        assert!(!overlaps(b"build", &restore));
    }

    #[test]
    fn kept_paths_are_the_directories_and_what_is_below_them() {
        let keep = vec![b"node_modules".to_vec(), b"web/.venv".to_vec()];
        for (path, kept) in [
            (&b"node_modules"[..], true),
            (b"node_modules/x/y.js", true),
            (b"node_modules2", false),
            (b"web/.venv/bin/python", true),
            (b"web", false),
            (b"web/.venvs", false),
        ] {
            assert_eq!(below_any(path, &keep), kept, "{}", String::from_utf8_lossy(path));
        }
    }
}

#[cfg(test)]
mod index_read {
    use super::{IndexRead, ReadIndex};

    /// The index the repair read serves the snapshot only while the file
    /// is the one it was read from: rewritten, or another file, it is read
    /// again.
    #[test]
    fn the_index_read_once_serves_only_the_same_unchanged_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = git2::Repository::init(dir.path()).expect("init");
        std::fs::write(dir.path().join("a.txt"), "a\n").expect("write");
        let mut index = repo.index().expect("index");
        index.add_path(std::path::Path::new("a.txt")).expect("add");
        index.write().expect("write index");
        let file = dir.path().join(".git/index");
        let read = || IndexRead::of(ReadIndex::read(&file), &file);
        assert!(read().take(&file).is_some_and(|r| r.index.entries.len() == 1), "the same file");
        assert!(read().take(&dir.path().join("a.txt")).is_none(), "another file");
        let kept = read();
        std::fs::write(dir.path().join("b.txt"), "b\n").expect("write");
        index.add_path(std::path::Path::new("b.txt")).expect("add");
        index.write().expect("write index");
        assert!(kept.take(&file).is_none(), "the index written since");
        assert!(IndexRead::default().take(&file).is_none(), "nothing read");
    }
}
