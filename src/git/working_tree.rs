//! A working tree's files (the user's checkout, or a task worktree being
//! reset) read as an overlay on `HEAD`'s tree, without touching any index
//! and without writing any object.
//!
//! libgit2's status names the paths that differ from `HEAD` (staged,
//! unstaged, untracked); each is read from disk and hashed as git would
//! store it. The result is a list of path -> entry (or removal) that
//! [`super::walk`] lays over `HEAD`'s tree, and the content of those blobs.
//!
//! Untracked files count unless ignored. When the change edits a
//! `.gitignore`, "ignored" is decided by the base's rules ([`super::ignore`]),
//! so an edited `.gitignore` can neither hide a new file nor expose one.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::ffi::OsStr;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

use git2::{ObjectType, Oid, Status, StatusOptions};

use super::ignore::BaseIgnore;
use super::index_file::{IndexFile, IndexRecord, Stat};
use super::nofollow_fs::{self, Node};
use super::status::{Scan, StatRules, Stop};
use super::walk::{Leaf, changed_leaves};
use super::{GitError, Repo, ctx};

pub(super) struct WorkingTreeOverlay {
    /// Paths whose entry differs from `HEAD`'s tree (`None`: removed).
    pub overlay: Vec<(Vec<u8>, Option<Leaf>)>,
    /// Content of the blobs in `overlay` that exist only on disk.
    pub contents: HashMap<Oid, Vec<u8>>,
    /// Submodules whose own working tree or index has uncommitted changes.
    pub dirty_submodules: BTreeSet<Vec<u8>>,
}

const GITLINK: u32 = 0o160000;

impl Repo {
    pub(super) fn working_tree_overlay(
        &self,
        base_tree: Oid,
        head_tree: Oid,
        index: Option<ReadIndex>,
    ) -> Result<WorkingTreeOverlay, GitError> {
        let workdir =
            self.repo.workdir().ok_or_else(|| GitError::Bare { path: self.repo.path().to_path_buf() })?.to_path_buf();
        let (known, entries, staged) = self.overlay_entries(base_tree, head_tree, &workdir, index)?;
        let head = self.repo.find_tree(head_tree).map_err(ctx(|| format!("cannot read tree {head_tree}")))?;
        let config = self.repo.config().map_err(ctx(|| "cannot read the repository's config".into()))?;
        let filemode = config.get_bool("core.filemode").unwrap_or(true);
        let autocrlf = config.get_string("core.autocrlf").is_ok_and(|v| v != "false");
        let attributes = self.has_attributes(&known, &entries, &config);
        let mut state = WorkingTreeOverlay {
            overlay: Vec::with_capacity(entries.len()),
            contents: HashMap::new(),
            dirty_submodules: BTreeSet::new(),
        };
        let jobs = self.leaves_without_reading(&mut state, &known, &entries, &staged, &head, &workdir)?;
        uninitialised_submodules(&mut state, &known, &workdir);
        // Read, stat and hash the files. Where no clean filter can apply
        // (the common case), no git object is needed: both cores share the
        // reading and the hashing.
        let filters = autocrlf || attributes;
        let read_all = read_files(&workdir, &jobs, filemode, filters)?;
        self.hash_read(&mut state, read_all, &workdir, &config, autocrlf, attributes)?;
        Ok(state)
    }

    /// The index, read once (`index`: already read), and the entries that
    /// differ from it or from HEAD (`staged`). When the change edits a
    /// `.gitignore`, every untracked or ignored file is judged by the
    /// base's rules: ignored there, it is absent.
    fn overlay_entries(
        &self,
        base_tree: Oid,
        head_tree: Oid,
        workdir: &Path,
        index: Option<ReadIndex>,
    ) -> Result<(IndexSnapshot, Differing, Staged), GitError> {
        let (known, entries, staged) = self.status_entries(None, head_tree, false, index)?;
        let edits_gitignore = entries.iter().any(|(p, _)| is_gitignore(p))
            || changed_leaves(&self.repo, Some(base_tree), Some(head_tree), &[])?
                .iter()
                .any(|(p, _, _)| is_gitignore(p));
        let entries = if edits_gitignore {
            // Ask again with ignored files listed, and judge every untracked
            // or ignored file by the base's rules: ignored there, it is absent.
            let base = self.repo.find_tree(base_tree).map_err(ctx(|| format!("cannot read tree {base_tree}")))?;
            let rules = BaseIgnore::from_tree(&self.repo, &base, workdir, self.common_dir())?;
            self.status_entries(Some(&known), head_tree, true, None)?
                .1
                .into_iter()
                .map(|(path, flag)| match flag {
                    Untracked::No => (path, Untracked::No),
                    _ if rules.is_ignored(&path) => (path, Untracked::Ignored),
                    _ => (path, Untracked::Yes),
                })
                .collect()
        } else {
            entries
        };
        Ok((known.into_owned(), entries, staged))
    }

    /// Each entry's leaf where git's data tells it (a submodule, a sparse
    /// entry, an ignored or dropped file), pushed on `state.overlay`; the
    /// files to read from disk, returned as (overlay index, path, whether
    /// the index or HEAD has it executable).
    fn leaves_without_reading(
        &self,
        state: &mut WorkingTreeOverlay,
        known: &IndexSnapshot,
        entries: &Differing,
        staged: &Staged,
        head: &git2::Tree<'_>,
        workdir: &Path,
    ) -> Result<Vec<ReadJob>, GitError> {
        let mut jobs: Vec<ReadJob> = Vec::new();
        for (path, flag) in entries {
            let rel = Path::new(OsStr::from_bytes(path));
            let index_entry = known.get(path);
            let index_mode = index_entry.map(|e| e.mode);
            // HEAD's entry is the index's unless the path is staged (then
            // HEAD's trees are read, once each, through the object cache).
            let head_mode =
                if staged.contains(path) { head.get_path(rel).ok().map(|e| e.filemode() as u32) } else { index_mode };
            let abs = workdir.join(rel);
            let leaf = if head_mode == Some(GITLINK) || index_mode == Some(GITLINK) {
                // A checked-out submodule: its HEAD. Not checked out: the
                // pointer the index records; no index entry: removed.
                match self.submodule_state(&abs)? {
                    Some((oid, dirty)) => {
                        if dirty {
                            state.dirty_submodules.insert(path.clone());
                        }
                        Some((oid, GITLINK as i32))
                    }
                    None => index_entry.filter(|e| e.mode == GITLINK).map(|e| (e.id, GITLINK as i32)),
                }
            } else if let Some(e) = index_entry.filter(|e| e.skip_worktree && *flag == Untracked::No) {
                // Outside the sparse checkout (skip-worktree): git takes the
                // index's entry for the file, whatever is on disk.
                Some((e.id, e.mode as i32))
            } else if *flag == Untracked::Ignored || (index_entry.is_none() && *flag == Untracked::No) {
                // Ignored, or dropped from the index while left on disk and
                // ignored there (else the working-tree diff lists it as
                // untracked): absent from the working tree's state.
                None
            } else {
                jobs.push((state.overlay.len(), abs, head_mode.or(index_mode) == Some(0o100755)));
                None
            };
            state.overlay.push((path.clone(), leaf));
        }
        Ok(jobs)
    }

    /// The files read: a filter driver's (or an encoding's) hashed by git,
    /// those a clean filter may change filtered by libgit2, the rest kept
    /// as they are; each leaf set in `state`.
    fn hash_read(
        &self,
        state: &mut WorkingTreeOverlay,
        read_all: Vec<Read>,
        workdir: &Path,
        config: &git2::Config,
        autocrlf: bool,
        attributes: bool,
    ) -> Result<(), GitError> {
        let filters = autocrlf || attributes;
        // Files a filter driver (or an encoding) applies to: hashed by git.
        let mut by_git: Vec<(usize, i32)> = Vec::new();
        for (i, found) in read_all {
            let Some((OnDisk { data, mode }, hashed)) = found else { continue };
            if let Some(oid) = hashed {
                state.found(i, (oid, mode), data);
                continue;
            }
            let rel = Path::new(OsStr::from_bytes(&state.overlay[i].0)).to_path_buf();
            if mode != 0o120000
                && attributes
                && !state.overlay[i].0.contains(&b'\n')
                && super::filters::needs_git_hash(&self.repo, config, &rel)
            {
                by_git.push((i, mode));
                continue;
            }
            let oid = if mode != 0o120000 && filters && self.may_filter(&rel, &data, autocrlf, attributes) {
                // libgit2 filters it as `git add` would, into the in-memory
                // object database. If the filtered blob already exists on
                // disk, libgit2 refreshes that object's mtime: the one write
                // to `.git` this can cause.
                self.use_memory_odb()?;
                let abs = workdir.join(&rel);
                self.repo.blob_path(&abs).map_err(ctx(|| format!("cannot read {}", abs.display())))?
            } else {
                state.keep(data)?
            };
            state.overlay[i].1 = Some((oid, mode));
        }
        let paths: Vec<Vec<u8>> = by_git.iter().map(|(i, _)| state.overlay[*i].0.clone()).collect();
        for ((i, mode), (oid, data)) in by_git.into_iter().zip(super::filters::hash_with_git(workdir, &paths)?) {
            state.found(i, (oid, mode), data);
        }
        Ok(())
    }

    /// Whether a clean filter may change a file's bytes on their way into
    /// git: core.autocrlf, or a `filter`, `ident`, `text`, `eol` or
    /// `working-tree-encoding` attribute.
    fn may_filter(&self, rel: &Path, data: &[u8], autocrlf: bool, attributes: bool) -> bool {
        let attr = |name: &str| {
            attributes
                && self
                    .repo
                    .get_attr_bytes(rel, name, git2::AttrCheckFlags::FILE_THEN_INDEX)
                    .ok()
                    .flatten()
                    .is_some_and(|v| {
                        !matches!(
                            git2::AttrValue::from_bytes(Some(v)),
                            git2::AttrValue::False | git2::AttrValue::Unspecified
                        )
                    })
        };
        attr("filter")
            || attr("ident")
            || attr("working-tree-encoding")
            || ((autocrlf || attr("text") || attr("eol") || attr("crlf")) && data.contains(&b'\r'))
    }

    /// Whether any gitattributes can apply: a `.gitattributes` in the index
    /// or among the changed paths, `info/attributes`, or a global file.
    /// Without any, no clean filter can apply and no attribute is looked up
    /// (each lookup stats every directory up to the root: measured at a
    /// third of the time of a working-tree comparison).
    fn has_attributes(&self, index: &IndexSnapshot, entries: &[(Vec<u8>, Untracked)], config: &git2::Config) -> bool {
        let named = |p: &[u8]| crate::pathfmt::basename(p) == b".gitattributes";
        entries.iter().any(|(p, _)| named(p))
            || index.entries.iter().any(|e| named(&e.path))
            || self.attribute_files(config)
    }

    /// Adds an in-memory object backend that takes every write, once.
    fn use_memory_odb(&self) -> Result<(), GitError> {
        if self.mempack.get().is_some() {
            return Ok(());
        }
        let odb = self.repo.odb().map_err(ctx(|| "cannot open the object database".into()))?;
        // Highest priority: new objects go here, never to .git/objects.
        odb.add_new_mempack_backend(1000).map_err(ctx(|| "cannot add an in-memory object database".into()))?;
        let _ = self.mempack.set(());
        Ok(())
    }

    /// Paths that differ between HEAD, the index and the working tree,
    /// each flagged when it is untracked or ignored, with the index's
    /// entries and the paths staged (HEAD to index).
    ///
    /// The common index is read by [`super::status`] ([`Repo::read_status`]).
    /// Otherwise (submodules, conflicts, sparse or intent-to-add entries,
    /// ignored files asked for, or `read`: the index already read), this is
    /// libgit2's status spread over the machine's two cores: the working
    /// tree is cut in two halves of about equal numbers of index entries
    /// ([`halves`]), each compared with the index on its own thread, as
    /// literal pathspecs that libgit2's iterator uses to skip the other
    /// half's directories. The second thread opens its own repository handle
    /// and reads the index there while this one reads it (libgit2 takes 9 ms
    /// for 20,000 entries), then waits for its half. This thread compares
    /// HEAD with the index after its half.
    fn status_entries<'a>(
        &self,
        read: Option<&'a IndexSnapshot>,
        head_tree: Oid,
        with_ignored: bool,
        index: Option<ReadIndex>,
    ) -> Result<(Cow<'a, IndexSnapshot>, Differing, Staged), GitError> {
        let workdir = self.repo.workdir().ok_or_else(|| GitError::Bare { path: self.repo.path().to_path_buf() })?;
        // The same git directory and working tree (which GIT_DIR and
        // GIT_WORK_TREE may have put apart).
        let git_dir = self.repo.path().to_path_buf();
        // Below this size (about 1,000 entries, [`ONE_THREAD`]) one thread
        // does it all.
        let large = std::fs::metadata(git_dir.join("index")).is_ok_and(|m| m.len() > 100_000);
        if read.is_none()
            && !with_ignored
            && let Some((known, found, staged)) = self.read_status(head_tree, workdir, index)?
        {
            return Ok((Cow::Owned(known), found, staged));
        }
        let (a, ours) = std::thread::scope(|s| {
            let (give, take) = std::sync::mpsc::channel::<Vec<Vec<u8>>>();
            let a = large.then(|| {
                s.spawn(move || {
                    let repo = super::open_at(&git_dir, Some(workdir))?;
                    repo.index().map_err(ctx(|| "cannot read the index".into()))?;
                    // No half: this thread is not needed (or the other
                    // failed, and says why).
                    match take.recv() {
                        Ok(part) if !part.is_empty() => unstaged(&repo, None, &part, with_ignored),
                        _ => Ok(Vec::new()),
                    }
                })
            });
            let run = |give: std::sync::mpsc::Sender<Vec<Vec<u8>>>| -> Result<_, GitError> {
                // The repository handle keeps the index it read; a second
                // `index()` returns it again.
                let index = self.repo.index().map_err(ctx(|| "cannot read the index".into()))?;
                let known = match read {
                    Some(known) => Cow::Borrowed(known),
                    None => Cow::Owned(IndexSnapshot::of(&index)),
                };
                let (first, second) = if large { split(workdir, &known.entries) } else { (Vec::new(), Vec::new()) };
                let _ = give.send(second);
                let b = unstaged(&self.repo, Some(&index), &first, with_ignored)?;
                let staged = self.staged(head_tree, &index)?;
                Ok((known, b, staged))
            };
            // `give` goes with `run`: on an error the thread stops waiting.
            let ours = run(give);
            let a = a.map(|h| super::joined(h.join(), workdir, "a status thread"));
            (a.unwrap_or(Ok(Vec::new())), ours)
        });
        let (known, b, staged) = ours?;
        let staged: Staged = staged.into_iter().map(|(p, _)| p).collect();
        let mut all: std::collections::BTreeMap<Vec<u8>, Untracked> =
            staged.iter().map(|p| (p.clone(), Untracked::No)).collect();
        for (path, flag) in a?.into_iter().chain(b) {
            all.entry(path).and_modify(|f| *f = (*f).max(flag)).or_insert(flag);
        }
        Ok((known, all.into_iter().collect(), staged))
    }

    /// The paths whose index entry differs from `head_tree`'s.
    fn staged(&self, head_tree: Oid, index: &git2::Index) -> Result<Vec<(Vec<u8>, Untracked)>, GitError> {
        let tree = self.repo.find_tree(head_tree).map_err(ctx(|| format!("cannot read tree {head_tree}")))?;
        let mut opts = git2::DiffOptions::new();
        opts.include_typechange(true).ignore_submodules(false);
        let diff = self
            .repo
            .diff_tree_to_index(Some(&tree), Some(index), Some(&mut opts))
            .map_err(ctx(|| "cannot compare HEAD with the index".into()))?;
        Ok(diff.deltas().filter_map(|d| delta_path(&d).map(|p| (p, Untracked::No))).collect())
    }

    /// [`Repo::status_entries`] read by [`super::status`], on two threads
    /// when the index is large; `None` when that module cannot judge the
    /// index or something on disk (libgit2 then does).
    fn read_status(
        &self,
        head_tree: Oid,
        workdir: &Path,
        index: Option<ReadIndex>,
    ) -> Result<Option<(IndexSnapshot, Differing, Staged)>, GitError> {
        let git_dir = self.repo.path().to_path_buf();
        let plain = match index {
            Some(read) => plain_rules(&self.repo, read)?.map(|(read, rules)| (read.index, rules)),
            None => plain_index(&self.repo, &git_dir)?,
        };
        let Some((index, rules)) = plain else { return Ok(None) };
        let (scanned, staged) = std::thread::scope(|s| {
            let scanned = s.spawn(|| scan_working_tree(workdir, rules, &index.entries, Some(&git_dir)));
            let mut staged = Vec::new();
            let odb = self.repo.odb().map_err(ctx(|| "cannot open the object database".into()));
            let staged =
                odb.and_then(|odb| super::status::staged(&odb, head_tree, &index, &mut staged)).map(|()| staged);
            (super::joined(scanned.join().map(Ok), workdir, "a status thread"), staged)
        });
        let Some(found) = super::status::unsure_is_none(scanned?)? else { return Ok(None) };
        let staged: Staged = staged?.into_iter().collect();
        let mut all: std::collections::BTreeMap<Vec<u8>, Untracked> =
            staged.iter().map(|p| (p.clone(), Untracked::No)).collect();
        for (path, untracked) in found {
            let flag = if untracked { Untracked::Yes } else { Untracked::No };
            all.entry(path).and_modify(|f| *f = (*f).max(flag)).or_insert(flag);
        }
        Ok(Some((IndexSnapshot { entries: index.entries }, all.into_iter().collect(), staged)))
    }

    /// Every directory of this repository's working tree that a watch of
    /// its files must cover ([`super::status::directories`]: the tracked
    /// ones and the untracked ones not ignored), absolute, without `skip`
    /// and what is below it. `None` when this cannot be read directly (no
    /// working tree, an index [`super::index_file`] does not read, a
    /// directory that cannot be listed): the caller walks by the ignore
    /// rules instead.
    pub fn watched_directories(&self, skip: &Path) -> Result<Option<Vec<std::path::PathBuf>>, GitError> {
        let Some(workdir) = self.repo.workdir() else { return Ok(None) };
        let entries = match std::fs::read(self.repo.path().join("index")) {
            Ok(data) => match super::index_file::parse(&data) {
                Some(index) => index.entries,
                None => return Ok(None),
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(_) => return Ok(None),
        };
        let skip = skip.strip_prefix(workdir).map(|p| p.as_os_str().as_bytes().to_vec()).unwrap_or_default();
        let mut ignored = |path: &[u8]| {
            self.repo
                .is_path_ignored(Path::new(OsStr::from_bytes(path)))
                .map_err(ctx(|| format!("cannot read the ignore rules for {}", String::from_utf8_lossy(path))))
        };
        let found = super::status::directories(workdir, &entries, &mut ignored, &skip);
        Ok(super::status::unsure_is_none(found)?
            .map(|dirs| dirs.into_iter().map(|d| workdir.join(OsStr::from_bytes(&d))).collect()))
    }

    /// What the files of this working tree's index take, by the sizes the
    /// index records (about what a new worktree at the same commit takes;
    /// 0 when the index cannot be read directly).
    pub fn tracked_bytes(&self) -> u64 {
        let Ok(data) = std::fs::read(self.repo.path().join("index")) else { return 0 };
        super::index_file::parse(&data).map_or(0, |i| i.entries.iter().map(|e| u64::from(e.stat.size)).sum())
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
            .map_err(ctx(|| format!("cannot read the status of submodule {}", abs.display())))?
            .iter()
            .any(|e| e.status() != Status::CURRENT && !e.status().is_ignored());
        Ok(Some((head.id(), dirty)))
    }
}

impl WorkingTreeOverlay {
    /// Overlay entry `i` is this blob, whose bytes are kept for later reads.
    fn found(&mut self, i: usize, leaf: Leaf, data: Vec<u8>) {
        self.contents.entry(leaf.0).or_insert(data);
        self.overlay[i].1 = Some(leaf);
    }

    /// Hashes a blob's bytes and keeps them for later reads.
    fn keep(&mut self, data: Vec<u8>) -> Result<Oid, GitError> {
        let oid = hash_blob(&data)?;
        self.contents.entry(oid).or_insert(data);
        Ok(oid)
    }
}

/// Paths of the working tree that differ from HEAD, each flagged.
type Differing = Vec<(Vec<u8>, Untracked)>;

/// Paths whose entry differs between HEAD and the index.
type Staged = std::collections::HashSet<Vec<u8>>;

/// Whether a path is known only to the working tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Untracked {
    No,
    Yes,
    Ignored,
}

/// The path of a delta of a diff against the index or working tree.
fn delta_path(d: &git2::DiffDelta) -> Option<Vec<u8>> {
    d.new_file().path_bytes().or_else(|| d.old_file().path_bytes()).map(<[u8]>::to_vec)
}

/// A working-tree file as git would store it: its bytes (a symlink's
/// target) and its mode.
struct OnDisk {
    data: Vec<u8>,
    mode: i32,
}

/// Reads one path of the working tree; `None` when it is not a file or
/// symlink any more (gone, or a directory now). `exec_by_index` is the
/// executable bit to keep when core.fileMode is false.
///
/// Read beneath the working tree's root without following a link on the
/// way ([`nofollow_fs::Beneath`]): a directory the attempt replaced by a
/// link makes the files below it removed, never read through the link.
fn on_disk(
    tree: &nofollow_fs::Beneath,
    workdir: &Path,
    abs: &Path,
    filemode: bool,
    exec_by_index: bool,
) -> Result<Option<OnDisk>, GitError> {
    let io = |e| GitError::Io { path: abs.to_path_buf(), source: e };
    let Ok(rel) = abs.strip_prefix(workdir) else { return Ok(None) };
    match tree.read(rel).map_err(io)? {
        None => Ok(None),
        Some(Node::Link(target)) => Ok(Some(OnDisk { data: target, mode: 0o120000 })),
        Some(Node::File { data, exec }) => {
            let exec = if filemode { exec } else { exec_by_index };
            Ok(Some(OnDisk { data, mode: if exec { 0o100755 } else { 0o100644 } }))
        }
    }
}

/// The id of a blob of these bytes.
fn hash_blob(data: &[u8]) -> Result<Oid, GitError> {
    Oid::hash_object(ObjectType::Blob, data).map_err(ctx(|| "cannot hash a file".into()))
}

/// What the comparison consults of the index: every entry, sorted by
/// path bytes (then by stage, as in the index; libgit2 orders an index
/// case-insensitively under core.ignoreCase). Read by
/// [`super::index_file`], or copied out of libgit2's index in one pass
/// (libgit2 copies an entry's path on every access).
#[derive(Clone)]
pub(super) struct IndexSnapshot {
    pub entries: Vec<IndexRecord>,
}

impl IndexSnapshot {
    pub(super) fn of(index: &git2::Index) -> IndexSnapshot {
        let mut entries: Vec<IndexRecord> = index
            .iter()
            .map(|e| IndexRecord {
                mode: e.mode,
                id: e.id,
                stage: ((e.flags >> 12) & 3) as u8,
                assume_valid: e.flags & 0x8000 != 0,
                skip_worktree: e.flags_extended & git2::IndexEntryExtendedFlag::SKIP_WORKTREE.bits() != 0,
                intent_to_add: e.flags_extended & git2::IndexEntryExtendedFlag::INTENT_TO_ADD.bits() != 0,
                // Not consulted on this path: libgit2 judges the stat data.
                stat: Stat::default(),
                path: e.path,
            })
            .collect();
        // Stable, and linear on the index's own (sorted) order.
        entries.sort_by(|a, b| a.path.cmp(&b.path));
        IndexSnapshot { entries }
    }

    /// The stage-0 entry of `path`, as `git_index_get_bypath(path, 0)`.
    fn get(&self, path: &[u8]) -> Option<&IndexRecord> {
        let start = self.entries.partition_point(|e| e.path.as_slice() < path);
        self.entries[start..].iter().take_while(|e| e.path == path).find(|e| e.stage == 0)
    }
}

/// The index of the working tree whose git directory is `git_dir`, read
/// by [`super::index_file`], with the rules its config sets for judging
/// stat data; `None` when [`super::status`] cannot judge it (see
/// [`super::status::plain`], core.ignoreCase, core.symlinks = false).
pub(super) fn plain_index(repo: &git2::Repository, git_dir: &Path) -> Result<Option<(IndexFile, StatRules)>, GitError> {
    let Some(read) = ReadIndex::read(&git_dir.join("index")) else { return Ok(None) };
    Ok(plain_rules(repo, read)?.map(|(read, rules)| (read.index, rules)))
}

/// An index file read by [`super::index_file`], with its bytes, where
/// each entry starts in them and the file's mtime: what a reset needs to
/// write the same index back with new stat data
/// ([`super::index_file::restat`]).
pub(super) struct ReadIndex {
    pub data: Vec<u8>,
    pub index: IndexFile,
    pub offsets: Vec<usize>,
    pub mtime: (u32, u32),
}

impl ReadIndex {
    /// The index file at `file`; `None` when it is missing or
    /// [`super::index_file`] cannot describe it.
    pub(super) fn read(file: &Path) -> Option<ReadIndex> {
        use std::os::unix::fs::MetadataExt;
        let (Ok(meta), Ok(data)) = (std::fs::metadata(file), std::fs::read(file)) else { return None };
        let (index, offsets) = super::index_file::parse_at(&data)?;
        Some(ReadIndex { data, index, offsets, mtime: (meta.mtime() as u32, meta.mtime_nsec() as u32) })
    }
}

/// [`plain_index`] for an index already read.
pub(super) fn plain_rules(
    repo: &git2::Repository,
    read: ReadIndex,
) -> Result<Option<(ReadIndex, StatRules)>, GitError> {
    let config = repo.config().map_err(ctx(|| "cannot read the repository's config".into()))?;
    let flag = |key: &str, default: bool| config.get_bool(key).unwrap_or(default);
    if !super::status::plain(&read.index) || flag("core.ignorecase", false) || !flag("core.symlinks", true) {
        return Ok(None);
    }
    let rules = StatRules {
        filemode: flag("core.filemode", true),
        trust_ctime: flag("core.trustctime", true),
        index_mtime: read.mtime,
    };
    Ok(Some((read, rules)))
}

/// How many index entries one thread scans alone.
const ONE_THREAD: usize = 1000;

/// [`Scan`]s the working tree at `workdir` against `entries`, cut in two
/// halves on two threads when there are more than [`ONE_THREAD`]. With `ignore_rules` (the git
/// directory), untracked files its ignore rules match are left out, each
/// thread asking its own repository handle; without, the listing is whole,
/// for a reset.
pub(super) fn scan_working_tree(
    workdir: &Path,
    rules: StatRules,
    entries: &[IndexRecord],
    ignore_rules: Option<&Path>,
) -> Result<Vec<super::status::FoundPath>, Stop> {
    let large = entries.len() > ONE_THREAD;
    let (first, second) = if large { split(workdir, entries) } else { (Vec::new(), Vec::new()) };
    let first = if first.is_empty() { vec![Vec::new()] } else { first };
    let scan = |units: &[Vec<u8>]| -> Result<Vec<super::status::FoundPath>, Stop> {
        let repo = ignore_rules.map(|git_dir| super::open_at(git_dir, Some(workdir))).transpose()?;
        let mut ignored = |path: &[u8]| match &repo {
            Some(repo) => repo
                .is_path_ignored(Path::new(OsStr::from_bytes(path)))
                .map_err(ctx(|| format!("cannot read the ignore rules for {}", String::from_utf8_lossy(path)))),
            None => Ok(false),
        };
        let whole = repo.is_none();
        let mut scan = Scan::new(workdir, rules, &mut ignored, whole)?;
        for unit in units {
            scan.unit(unit, entries)?;
        }
        Ok(scan.found)
    };
    let (a, b) = std::thread::scope(|s| {
        let a = (!second.is_empty()).then(|| s.spawn(|| scan(&second)));
        let b = scan(&first);
        let a = a.map(|h| {
            h.join().unwrap_or_else(|_| {
                let source = std::io::Error::other("a status thread failed");
                Err(Stop::Git(GitError::Io { path: workdir.to_path_buf(), source }))
            })
        });
        (a.unwrap_or(Ok(Vec::new())), b)
    });
    let mut found = b?;
    found.extend(a?);
    Ok(found)
}

fn is_gitignore(path: &[u8]) -> bool {
    crate::pathfmt::basename(path) == b".gitignore"
}

/// The working tree at `workdir` cut in two halves of literal pathspecs
/// ([`halves`]) by the entries of `index` and the names on disk, for two
/// comparisons side by side. Two empty lists: do not split.
pub(super) fn split_working_tree(workdir: &Path, index: &git2::Index) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    split(workdir, &IndexSnapshot::of(index).entries)
}

fn split(workdir: &Path, entries: &[IndexRecord]) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let paths: Vec<&[u8]> = entries.iter().map(|e| e.path.as_slice()).collect();
    halves(&paths, &|dir: &[u8]| {
        let abs = workdir.join(OsStr::from_bytes(dir));
        // Only a real directory; the root's `.git` is git's, not a unit.
        if !std::fs::symlink_metadata(&abs).is_ok_and(|m| m.is_dir()) {
            return None;
        }
        let names = std::fs::read_dir(&abs).ok()?.flatten().map(|e| e.file_name().into_vec());
        Some(names.filter(|n| !(dir.is_empty() && n == b".git")).collect())
    })
}

/// The names in a directory of the working tree (relative path, `""` for
/// the root), or `None` when it is not a real directory on disk.
type ListDir<'a> = dyn Fn(&[u8]) -> Option<Vec<Vec<u8>>> + 'a;

/// The working tree cut in two lists of literal pathspecs that together
/// cover every path of the index (`paths`) and of the disk, with about as
/// many index entries in each. `disk(dir)` lists the names in `dir` (`""`
/// for the root) when it is a real directory on disk.
///
/// `paths` is sorted. The units are the top-level names; while one directory holds more than
/// half the entries, it is replaced by the names inside it (from the index
/// and from disk, so new files beside them stay covered). Two empty lists
/// mean: compare everything at once.
fn halves(paths: &[&[u8]], disk: &ListDir<'_>) -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let total = paths.len();
    let mut units = children(paths, disk, b"");
    for _ in 0..4 {
        let Some((i, (unit, count))) = units.iter().enumerate().max_by_key(|(_, (_, c))| *c) else { break };
        // Only a directory of the index that is a directory on disk too: not
        // a submodule, a file that replaced it, or an untracked tree.
        let below = [unit.as_slice(), b"/"].concat();
        if count * 2 <= total || !paths.iter().any(|p| p.starts_with(&below)) || disk(unit).is_none() {
            break;
        }
        let unit = unit.clone();
        units.remove(i);
        units.extend(children(paths, disk, &unit));
        units.sort();
    }
    let mut seen = 0;
    let (mut first, mut second) = (Vec::new(), Vec::new());
    for (unit, count) in units {
        if first.is_empty() || (seen + count) * 2 <= total + count {
            seen += count;
            first.push(unit);
        } else {
            second.push(unit);
        }
    }
    if second.is_empty() {
        return (Vec::new(), Vec::new());
    }
    (first, second)
}

/// The names directly under `dir` (relative, `""` for the root), as paths,
/// each with the number of index entries at or below it: from the index,
/// and from disk (a new file or directory counts one).
fn children(paths: &[&[u8]], disk: &ListDir<'_>, dir: &[u8]) -> Vec<(Vec<u8>, usize)> {
    let prefix: Vec<u8> = if dir.is_empty() { Vec::new() } else { [dir, b"/"].concat() };
    // Counted by borrowed name; the index is sorted, so the paths under
    // `dir` are one run.
    let start = paths.partition_point(|p| *p < prefix.as_slice());
    let mut counts: std::collections::BTreeMap<&[u8], usize> = std::collections::BTreeMap::new();
    for p in &paths[start..] {
        let Some(rest) = p.strip_prefix(prefix.as_slice()) else { break };
        let name = rest.split(|&b| b == b'/').next().unwrap_or(rest);
        *counts.entry(name).or_default() += 1;
    }
    let on_disk = disk(dir).unwrap_or_default();
    for name in &on_disk {
        counts.entry(name).or_insert(1);
    }
    counts.into_iter().map(|(name, n)| ([prefix.as_slice(), name].concat(), n)).collect()
}

/// The paths under `part` whose working tree file differs from `index`
/// (the repository's own when `None`), untracked ones and (with
/// `with_ignored`) ignored ones marked so.
fn unstaged(
    repo: &git2::Repository,
    index: Option<&git2::Index>,
    part: &[Vec<u8>],
    with_ignored: bool,
) -> Result<Vec<(Vec<u8>, Untracked)>, GitError> {
    let mut opts = git2::DiffOptions::new();
    opts.include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(with_ignored)
        .recurse_ignored_dirs(with_ignored)
        .include_typechange(true)
        .ignore_submodules(false)
        .disable_pathspec_match(true);
    for unit in part {
        opts.pathspec(unit.as_slice());
    }
    let diff = repo
        .diff_index_to_workdir(index, Some(&mut opts))
        .map_err(ctx(|| "cannot compare the index with the working tree".into()))?;
    Ok(diff
        .deltas()
        .filter_map(|d| {
            let flag = match d.status() {
                git2::Delta::Untracked => Untracked::Yes,
                git2::Delta::Ignored => Untracked::Ignored,
                _ => Untracked::No,
            };
            delta_path(&d).map(|p| (p, flag))
        })
        .collect())
}

/// A submodule nobody initialised here (no repository in its directory)
/// whose directory holds files: changes inside it, which its status cannot
/// show.
fn uninitialised_submodules(state: &mut WorkingTreeOverlay, known: &IndexSnapshot, workdir: &Path) {
    for e in known.entries.iter().filter(|e| e.mode == GITLINK) {
        let abs = workdir.join(OsStr::from_bytes(&e.path));
        if !state.dirty_submodules.contains(&e.path)
            && git2::Repository::open(&abs).is_err()
            && std::fs::read_dir(&abs).is_ok_and(|mut rd| rd.next().is_some())
        {
            state.dirty_submodules.insert(e.path.clone());
        }
    }
}

/// A file to read: its index in the overlay, its path, and whether the
/// index or HEAD has it executable.
type ReadJob = (usize, std::path::PathBuf, bool);

/// A file read: its index in the overlay, and what is on disk with its
/// blob id when no filter can apply (`None`: gone).
type Read = (usize, Option<(OnDisk, Option<Oid>)>);

/// The files of `jobs` read, stat'ed and (without `filters`) hashed, on
/// two threads when there are many and no filter applies.
fn read_files(workdir: &Path, jobs: &[ReadJob], filemode: bool, filters: bool) -> Result<Vec<Read>, GitError> {
    let read = |jobs: &[ReadJob]| -> Result<Vec<Read>, GitError> {
        let tree = nofollow_fs::Beneath::open(workdir)
            .map_err(|source| GitError::Io { path: workdir.to_path_buf(), source })?;
        jobs.iter()
            .map(|(i, abs, exec)| {
                let Some(found) = on_disk(&tree, workdir, abs, filemode, *exec)? else { return Ok((*i, None)) };
                let id = if filters || found.mode == 0o120000 { None } else { Some(hash_blob(&found.data)?) };
                Ok((*i, Some((found, id))))
            })
            .collect()
    };
    Ok(if filters || jobs.len() < 64 {
        read(jobs)?
    } else {
        let (a, b) = jobs.split_at(jobs.len() / 2);
        let (x, y) = std::thread::scope(|s| {
            let y = s.spawn(|| read(b));
            (read(a), y.join())
        });
        let y = super::joined(y, workdir, "a reading thread");
        let mut all = x?;
        all.extend(y?);
        all
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(s: &str) -> Vec<u8> {
        s.as_bytes().to_vec()
    }

    fn refs(paths: &[Vec<u8>]) -> Vec<&[u8]> {
        paths.iter().map(Vec::as_slice).collect()
    }

    /// Whether some unit of either half is `path` or a directory above it.
    fn covered(path: &[u8], (first, second): &(Vec<Vec<u8>>, Vec<Vec<u8>>)) -> bool {
        first.iter().chain(second).any(|u| path == u.as_slice() || path.starts_with(&[u.as_slice(), b"/"].concat()))
    }

    #[test]
    fn halves_balance_top_level_directories() {
        let mut paths: Vec<Vec<u8>> = (0..1000).map(|i| b(&format!("d{}/f{i}", i % 4))).collect();
        paths.sort();
        let disk = |dir: &[u8]| -> Option<Vec<Vec<u8>>> {
            dir.is_empty().then(|| vec![b("d0"), b("d1"), b("d2"), b("d3"), b("new.txt")])
        };
        let h = halves(&refs(&paths), &disk);
        assert_eq!(h, (vec![b("d0"), b("d1")], vec![b("d2"), b("d3"), b("new.txt")]));
        assert!(paths.iter().all(|p| covered(p, &h)) && covered(b"new.txt", &h));
    }

    #[test]
    fn halves_open_a_directory_that_holds_most_files() {
        // `src` holds 900 of 1,000 entries and a new file of its own on disk.
        let mut paths: Vec<Vec<u8>> = (0..900).map(|i| b(&format!("src/m{}/f{i}", i % 3))).collect();
        paths.extend((0..100).map(|i| b(&format!("tests/t{i}"))));
        paths.sort();
        let disk = |dir: &[u8]| -> Option<Vec<Vec<u8>>> {
            match dir {
                b"" => Some(vec![b("src"), b("tests")]),
                b"src" => Some(vec![b("m0"), b("m1"), b("m2"), b("new.rs")]),
                _ => None,
            }
        };
        let h = halves(&refs(&paths), &disk);
        assert_eq!(h, (vec![b("src/m0"), b("src/m1")], vec![b("src/m2"), b("src/new.rs"), b("tests")]));
        assert!(paths.iter().all(|p| covered(p, &h)) && covered(b"src/new.rs", &h));
    }

    #[test]
    fn halves_never_open_a_submodule_or_a_replaced_directory() {
        // One submodule holds the only entry: nothing to split.
        let disk = |dir: &[u8]| -> Option<Vec<Vec<u8>>> { dir.is_empty().then(|| vec![b("sub")]) };
        assert_eq!(halves(&[b"sub".as_slice()], &disk), (vec![], vec![]));
        // `src` is a file on disk now: it stays one unit.
        let paths: Vec<Vec<u8>> = [b("README")].into_iter().chain((0..10).map(|i| b(&format!("src/f{i}")))).collect();
        let disk = |dir: &[u8]| -> Option<Vec<Vec<u8>>> { dir.is_empty().then(|| vec![b("README"), b("src")]) };
        assert_eq!(halves(&refs(&paths), &disk), (vec![b("README")], vec![b("src")]));
    }
}
