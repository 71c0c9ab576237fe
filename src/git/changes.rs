//! Changed files between a base and a head (a commit, or the working tree
//! described as an overlay on `HEAD`): statuses, modes, symlink targets,
//! submodule pointers, renames as git detects them, line counts, binary
//! flags and patch text.
//!
//! Nothing here writes an object: changed entries come from a walk that
//! skips identical subtrees ([`super::walk`]), renames from git's own
//! algorithm ([`super::renames`]), patches in memory from the blob objects
//! (or, for files only on disk, their bytes) on two threads
//! ([`super::patch`]).

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use git2::{Blob, DiffOptions, Oid, Repository};

use super::patch::{FilePatch, FileSide, Want, file_patch};
use super::renames::{self, ListSide as RenameSide, RenameEnd};
use super::walk::{ChangedLeaf, Leaf, changed_leaves};
use super::{GitError, Repo, Revision, ctx};
use crate::judge::scope::SymlinkLookup;
use crate::model::{Change, ChangeSet, DiffSummary, EntryKind, FileVersions, Head, Side, Status, SymbolChange};

/// git's default `diff.renameLimit`: the inexact rename matrix is skipped
/// when sources x destinations exceeds its square.
const RENAME_LIMIT: usize = 1000;

const GITLINK: i32 = 0o160000;
const SYMLINK: i32 = 0o120000;

/// How much of each change to compute.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffDepth {
    /// Paths, statuses, modes, renames and symlink targets: what `scope` needs.
    NameStatus,
    /// Also line counts, binary flags and the patch: what `diff` needs. Its
    /// text is rendered for the leading files up to `max_lines` lines (whole
    /// files, so possibly more); the total is counted for every file.
    Patch { max_lines: usize },
}

/// The scopes a change touched, from both versions of a file. The git layer
/// knows nothing of parsing: `diff` passes this in, and it runs on the patch
/// threads, on bytes already read.
pub trait SymbolsFn: Sync {
    /// Whether this file's language is supported (else no line numbers are
    /// collected for it).
    fn wants(&self, path: &[u8]) -> bool;
    fn changed(&self, file: &FileVersions) -> Vec<SymbolChange>;
}

/// The result of comparing a base with a head.
pub struct Comparison<'r> {
    pub changes: ChangeSet,
    /// The patch text; empty unless [`DiffDepth::Patch`] was asked for.
    pub patch: String,
    /// How many lines the whole patch has (`patch` may hold fewer).
    pub patch_lines: usize,
    /// The head's tree, to follow its symlinks.
    pub head: HeadView<'r>,
}

/// A comparison's change set and patch, for printing; the head's tree is
/// left behind.
impl From<Comparison<'_>> for DiffSummary {
    fn from(c: Comparison<'_>) -> DiffSummary {
        DiffSummary { changes: c.changes, patch: c.patch, patch_lines: c.patch_lines }
    }
}

/// The same, copied from a comparison that is still needed.
impl From<&Comparison<'_>> for DiffSummary {
    fn from(c: &Comparison<'_>) -> DiffSummary {
        DiffSummary { changes: c.changes.clone(), patch: c.patch.clone(), patch_lines: c.patch_lines }
    }
}

/// The head side of a comparison: a tree, with the working tree's changes
/// laid over it, and the content of blobs that exist only on disk.
pub struct HeadView<'r> {
    repo: &'r Repository,
    tree: Oid,
    overlay: BTreeMap<Vec<u8>, Option<Leaf>>,
    contents: HashMap<Oid, Vec<u8>>,
}

impl HeadView<'_> {
    /// The content of `path` on the head side: the working tree's file as
    /// compared (a symlink's target, not what it points to), else the
    /// tree's blob. `None` for a path it does not hold.
    pub fn file(&self, path: &[u8]) -> Option<Vec<u8>> {
        let (id, mode) = self.leaf(path)?;
        if mode == GITLINK {
            return None;
        }
        self.blob(id).ok()
    }

    /// The blob id and mode of `path` on the head side.
    fn leaf(&self, path: &[u8]) -> Option<Leaf> {
        match self.overlay.get(path) {
            Some(leaf) => *leaf,
            None => {
                let tree = self.repo.find_tree(self.tree).ok()?;
                let entry = tree.get_path(Path::new(OsStr::from_bytes(path))).ok()?;
                Some((entry.id(), entry.filemode()))
            }
        }
    }

    fn blob(&self, id: Oid) -> Result<Vec<u8>, GitError> {
        if let Some(data) = self.contents.get(&id) {
            return Ok(data.clone());
        }
        read_blob(self.repo, id)
    }
}

fn read_blob(repo: &Repository, id: Oid) -> Result<Vec<u8>, GitError> {
    Ok(repo.find_blob(id).map_err(ctx(|| format!("cannot read blob {id}")))?.content().to_vec())
}

/// Blob contents for the main thread: the working tree's contents, else
/// the object database (renames' sizes and contents, symlink targets).
/// Patches read their own blobs ([`Reader`]), each thread with its handle.
struct Blobs<'v> {
    view: &'v HeadView<'v>,
}

impl<'v> Blobs<'v> {
    fn held(&self, id: &Oid) -> Option<&[u8]> {
        self.view.contents.get(id).map(Vec::as_slice)
    }

    /// The length of [`Blobs::get`], read from the object's header where
    /// its content is not at hand.
    fn size(&self, (id, mode): Leaf) -> Result<usize, GitError> {
        if mode == GITLINK {
            return Ok(self.get((id, mode), false)?.len());
        }
        if let Some(data) = self.held(&id) {
            return Ok(data.len());
        }
        let odb = self.view.repo.odb().map_err(ctx(|| "cannot open the object database".to_string()))?;
        odb.read_header(id).map(|(size, _)| size).map_err(ctx(|| format!("cannot read blob {id}")))
    }

    /// A side's content: a blob, or git's text for a submodule pointer.
    fn get(&self, (id, mode): Leaf, dirty: bool) -> Result<Cow<'_, [u8]>, GitError> {
        if mode == GITLINK {
            return Ok(Cow::Owned(submodule_text(id, dirty)));
        }
        if let Some(data) = self.held(&id) {
            return Ok(Cow::Borrowed(data));
        }
        read_blob(self.view.repo, id).map(Cow::Owned)
    }
}

/// git's text for a submodule pointer.
fn submodule_text(id: Oid, dirty: bool) -> Vec<u8> {
    format!("Subproject commit {id}{}\n", if dirty { "-dirty" } else { "" }).into_bytes()
}

/// One side of a change as a patch thread holds it: the blob object its
/// handle read (whose id libgit2 then need not compute again), or bytes
/// (the working tree's, a submodule pointer's text).
enum Held<'r> {
    Blob(Blob<'r>),
    Bytes(Cow<'r, [u8]>),
}

impl Held<'_> {
    fn data(&self) -> &[u8] {
        match self {
            Held::Blob(b) => b.content(),
            Held::Bytes(d) => d,
        }
    }
    fn blob(&self) -> Option<&Blob<'_>> {
        match self {
            Held::Blob(b) => Some(b),
            Held::Bytes(_) => None,
        }
    }
}

/// What a patch thread reads sides with: its own repository handle, and
/// the contents that exist only on disk (shared, read-only).
#[derive(Clone, Copy)]
struct Reader<'r> {
    repo: &'r Repository,
    on_disk: &'r HashMap<Oid, Vec<u8>>,
}

impl<'r> Reader<'r> {
    fn read(&self, (id, mode): Leaf, dirty: bool) -> Result<Held<'r>, GitError> {
        if mode == GITLINK {
            return Ok(Held::Bytes(Cow::Owned(submodule_text(id, dirty))));
        }
        if let Some(data) = self.on_disk.get(&id) {
            return Ok(Held::Bytes(Cow::Borrowed(data)));
        }
        self.repo.find_blob(id).map(Held::Blob).map_err(ctx(|| format!("cannot read blob {id}")))
    }
}

impl SymlinkLookup for HeadView<'_> {
    fn symlink_target(&self, path: &[u8]) -> Option<Vec<u8>> {
        let (id, mode) = self.leaf(path)?;
        if mode != SYMLINK {
            return None;
        }
        self.blob(id).ok()
    }
}

impl Repo {
    /// Compares two commits from their merge base, like `git diff base...head`.
    pub fn compare_commits(
        &self,
        base: &Revision,
        head: &Revision,
        depth: DiffDepth,
        symbols: Option<&dyn SymbolsFn>,
    ) -> Result<Comparison<'_>, GitError> {
        let merge_base = self.merge_base(base, head)?;
        let view = HeadView {
            repo: &self.repo,
            tree: self.commit_tree(head.oid)?,
            overlay: BTreeMap::new(),
            contents: HashMap::new(),
        };
        let (changes, (patch, patch_lines)) =
            compare(&view, self.commit_tree(merge_base)?, &BTreeSet::new(), depth, symbols)?;
        Ok(Comparison {
            changes: ChangeSet { base: merge_base.to_string(), head: Head::Commit(head.oid.to_string()), changes },
            patch,
            patch_lines,
            head: view,
        })
    }

    /// Compares commit `new` with commit `old` directly (not from their
    /// merge base): two snapshots of one task, say, attempt against
    /// attempt.
    pub fn compare_snapshots(&self, old: Oid, new: Oid, depth: DiffDepth) -> Result<Comparison<'_>, GitError> {
        let view = HeadView {
            repo: &self.repo,
            tree: self.commit_tree(new)?,
            overlay: BTreeMap::new(),
            contents: HashMap::new(),
        };
        let (changes, (patch, patch_lines)) = compare(&view, self.commit_tree(old)?, &BTreeSet::new(), depth, None)?;
        Ok(Comparison {
            changes: ChangeSet { base: old.to_string(), head: Head::Commit(new.to_string()), changes },
            patch,
            patch_lines,
            head: view,
        })
    }

    /// Compares the revision `head` with `base` like
    /// [`Repo::compare_commits`], or, without one, the working tree like
    /// [`Repo::compare_worktree`].
    pub fn compare_head(
        &self,
        base: &Revision,
        head: Option<&str>,
        depth: DiffDepth,
        symbols: Option<&dyn SymbolsFn>,
    ) -> Result<Comparison<'_>, GitError> {
        match head {
            Some(spec) => {
                let head = self.resolve(spec)?;
                self.compare_commits(base, &head, depth, symbols)
            }
            None => self.compare_worktree(base, depth, symbols),
        }
    }

    /// Compares the working tree (staged, unstaged and untracked
    /// non-ignored files) with the merge base of `base` and `HEAD`.
    pub fn compare_worktree(
        &self,
        base: &Revision,
        depth: DiffDepth,
        symbols: Option<&dyn SymbolsFn>,
    ) -> Result<Comparison<'_>, GitError> {
        let head = self.head()?;
        let merge_base = self.merge_base(base, &head)?;
        let (old, head_tree) = (self.commit_tree(merge_base)?, self.commit_tree(head.oid)?);
        let state = self.working_tree_overlay(old, head_tree, None)?;
        let view = HeadView {
            repo: &self.repo,
            tree: head_tree,
            overlay: state.overlay.into_iter().collect(),
            contents: state.contents,
        };
        let (changes, (patch, patch_lines)) = compare(&view, old, &state.dirty_submodules, depth, symbols)?;
        Ok(Comparison {
            changes: ChangeSet { base: merge_base.to_string(), head: Head::Worktree, changes },
            patch,
            patch_lines,
            head: view,
        })
    }

    pub fn commit_tree(&self, oid: Oid) -> Result<Oid, GitError> {
        self.repo.find_commit(oid).map(|c| c.tree_id()).map_err(ctx(|| format!("cannot read the tree of commit {oid}")))
    }
}

fn kind(mode: i32) -> Option<EntryKind> {
    EntryKind::from_mode(mode as u32)
}

fn side(path: &[u8], (_, mode): Leaf) -> Option<Side> {
    Some(Side { path: path.to_vec(), kind: kind(mode)? })
}

fn endpoints<'a>(v: &[(&'a [u8], Leaf)], ids: &'a [String]) -> Vec<RenameEnd<'a>> {
    v.iter().zip(ids).map(|((p, (_, mode)), id)| RenameEnd { path: p, id: id.as_bytes(), mode: *mode }).collect()
}

/// One side of a change for its patch.
fn file<'a>(s: Option<(&'a [u8], Leaf)>, held: &'a Option<Held<'a>>) -> Option<FileSide<'a>> {
    s.zip(held.as_ref()).map(|((path, (id, mode)), h)| FileSide { path, id, mode, data: h.data(), blob: h.blob() })
}

/// One change before it becomes a [`Change`]: the leaves of both sides.
struct Pair<'a> {
    status: Status,
    old: Option<(&'a [u8], Leaf)>,
    new: Option<(&'a [u8], Leaf)>,
    similarity: Option<u32>,
    dirty: bool,
}

fn compare(
    view: &HeadView,
    old_tree: Oid,
    dirty: &BTreeSet<Vec<u8>>,
    depth: DiffDepth,
    symbols: Option<&dyn SymbolsFn>,
) -> Result<(Vec<Change>, (String, usize)), GitError> {
    let overlay: Vec<(Vec<u8>, Option<Leaf>)> = view.overlay.iter().map(|(p, l)| (p.clone(), *l)).collect();
    let leaves: Vec<ChangedLeaf> = changed_leaves(view.repo, Some(old_tree), Some(view.tree), &overlay)?;
    let (mut pairs, deleted, added) = pairs_of(&leaves);
    let blobs = Blobs { view };
    pairs.extend(moved(&blobs, &deleted, &added)?);
    let extra = dirty_submodules(view, dirty, &mut pairs);
    for (path, leaf) in &extra {
        pairs.push(Pair {
            status: Status::Modified,
            old: Some((path, *leaf)),
            new: Some((path, *leaf)),
            similarity: None,
            dirty: true,
        });
    }
    pairs.sort_by(|a, b| {
        fn key<'a>(p: &Pair<'a>) -> &'a [u8] {
            p.new.or(p.old).map_or(&[][..], |(path, _)| path)
        }
        key(a).cmp(key(b))
    });
    let mut changes = changes_of(&pairs, &blobs)?;
    let DiffDepth::Patch { max_lines } = depth else { return Ok((changes, (String::new(), 0))) };
    let patch = patches(&mut changes, &pairs, symbols, max_lines, view)?;
    Ok((changes, patch))
}

/// A path's deleted and added leaves, by path.
type Leaves<'a> = Vec<(&'a [u8], Leaf)>;

/// The changes on both sides of a path (modified, type changed), and the
/// leaves deleted and added, which renames may pair.
fn pairs_of(leaves: &[ChangedLeaf]) -> (Vec<Pair<'_>>, Leaves<'_>, Leaves<'_>) {
    let mut pairs: Vec<Pair> = Vec::with_capacity(leaves.len());
    let (mut deleted, mut added) = (Vec::new(), Vec::new());
    for (path, x, y) in leaves {
        match (x, y) {
            (Some(a), Some(b)) => {
                let status = if a.1 & 0o170000 == b.1 & 0o170000 { Status::Modified } else { Status::TypeChanged };
                pairs.push(Pair {
                    status,
                    old: Some((path, *a)),
                    new: Some((path, *b)),
                    similarity: None,
                    dirty: false,
                });
            }
            (Some(a), None) => deleted.push((path.as_slice(), *a)),
            (None, Some(b)) => added.push((path.as_slice(), *b)),
            (None, None) => {}
        }
    }
    (pairs, deleted, added)
}

/// The renames' view of the deleted and added blobs.
struct Ends<'b, 'v> {
    blobs: &'b Blobs<'v>,
    deleted: &'b [(&'b [u8], Leaf)],
    added: &'b [(&'b [u8], Leaf)],
}
impl<'b> Ends<'b, '_> {
    fn leaf(&self, side: RenameSide, i: usize) -> Leaf {
        if side == RenameSide::Left { self.deleted[i].1 } else { self.added[i].1 }
    }
}
impl<'b> renames::Blobs<'b, GitError> for Ends<'b, '_> {
    fn size(&mut self, side: RenameSide, i: usize) -> Result<usize, GitError> {
        self.blobs.size(self.leaf(side, i))
    }
    fn load(&mut self, side: RenameSide, i: usize) -> Result<Cow<'b, [u8]>, GitError> {
        self.blobs.get(self.leaf(side, i), false)
    }
}

/// The deleted and added leaves as renames, as git pairs them, then as
/// deletions and additions.
fn moved<'a>(
    blobs: &Blobs,
    deleted: &[(&'a [u8], Leaf)],
    added: &[(&'a [u8], Leaf)],
) -> Result<Vec<Pair<'a>>, GitError> {
    let hex = |v: &[(&[u8], Leaf)]| -> Vec<String> { v.iter().map(|(_, (id, _))| id.to_string()).collect() };
    let (del_ids, add_ids) = (hex(deleted), hex(added));
    let mut ends = Ends { blobs, deleted, added };
    let renamed = renames::detect(&endpoints(deleted, &del_ids), &endpoints(added, &add_ids), RENAME_LIMIT, &mut ends)?;
    let mut pairs = Vec::new();
    let (mut del_done, mut add_done) = (vec![false; deleted.len()], vec![false; added.len()]);
    for (i, j, score) in renamed {
        del_done[i] = true;
        add_done[j] = true;
        pairs.push(Pair {
            status: Status::Renamed,
            old: Some(deleted[i]),
            new: Some(added[j]),
            similarity: Some(renames::percent(score)),
            dirty: false,
        });
    }
    pairs.extend(deleted.iter().zip(&del_done).filter(|(_, d)| !**d).map(|(s, _)| Pair {
        status: Status::Deleted,
        old: Some(*s),
        new: None,
        similarity: None,
        dirty: false,
    }));
    pairs.extend(added.iter().zip(&add_done).filter(|(_, d)| !**d).map(|(s, _)| Pair {
        status: Status::Added,
        old: None,
        new: Some(*s),
        similarity: None,
        dirty: false,
    }));
    Ok(pairs)
}

/// Submodules with changes of their own: their change flagged; returned,
/// those whose pointer did not move, to be added as a change.
fn dirty_submodules(view: &HeadView, dirty: &BTreeSet<Vec<u8>>, pairs: &mut [Pair]) -> Vec<(Vec<u8>, Leaf)> {
    let mut extra: Vec<(Vec<u8>, Leaf)> = Vec::new();
    for path in dirty {
        match pairs.iter_mut().find(|p| p.new.is_some_and(|(np, _)| np == path.as_slice())) {
            Some(p) => p.dirty = true,
            None => {
                if let Some(leaf) = view.overlay.get(path).copied().flatten() {
                    extra.push((path.clone(), leaf));
                }
            }
        }
    }
    extra
}

/// The changes, without their counts.
fn changes_of(pairs: &[Pair], blobs: &Blobs) -> Result<Vec<Change>, GitError> {
    let mut changes = Vec::with_capacity(pairs.len());
    for p in pairs {
        let symlink_target = match p.new {
            Some((_, leaf @ (_, SYMLINK))) => Some(blobs.get(leaf, false)?.into_owned()),
            _ => None,
        };
        changes.push(Change {
            status: p.status,
            old: p.old.and_then(|(path, leaf)| side(path, leaf)),
            new: p.new.and_then(|(path, leaf)| side(path, leaf)),
            symlink_target,
            submodule_dirty: p.dirty,
            binary: false,
            additions: 0,
            deletions: 0,
            symbols: None,
        });
    }
    Ok(changes)
}

/// A change's patch, and its symbols where asked.
type Rendered = (FilePatch, Option<Vec<SymbolChange>>);

/// Both sides of a pair, read with `reader`.
fn sides<'r>(p: &Pair, reader: Reader<'r>) -> Result<(Option<Held<'r>>, Option<Held<'r>>), GitError> {
    let old = p.old.map(|(_, leaf)| reader.read(leaf, false)).transpose()?;
    let new = p.new.map(|(_, leaf)| reader.read(leaf, p.dirty)).transpose()?;
    Ok((old, new))
}

/// The patch of `p`, its text rendered when `text`; and the symbols it
/// touched, where `symbols` asks.
fn render_one(
    p: &Pair,
    (o, n): &(Option<Held>, Option<Held>),
    symbols: Option<&dyn SymbolsFn>,
    text: bool,
    opts: &mut DiffOptions,
) -> Result<Rendered, GitError> {
    let path = p.new.or(p.old).map_or(&[][..], |(path, _)| path);
    let regular = |s: Option<(&[u8], Leaf)>| s.is_none_or(|(_, (_, mode))| mode & 0o170000 == 0o100000);
    let wanted = symbols.filter(|f| regular(p.old) && regular(p.new) && f.wants(path));
    let fp = file_patch(
        file(p.old, o).as_ref(),
        file(p.new, n).as_ref(),
        p.similarity,
        Want { lines: wanted.is_some(), text },
        opts,
    )?;
    let old_id = p.old.map(|(_, (oid, _))| oid);
    // A dirty submodule's bytes are not its leaf's.
    let new_id = p.new.filter(|_| !p.dirty).map(|(_, (oid, _))| oid);
    let syms = wanted.filter(|_| !fp.binary).map(|f| {
        f.changed(&FileVersions {
            path,
            old: o.as_ref().map(Held::data),
            new: n.as_ref().map(Held::data),
            old_changed: &fp.old_changed,
            new_changed: &fp.new_changed,
            old_id: old_id.as_ref().map(|o| o.as_bytes()),
            new_id: new_id.as_ref().map(|o| o.as_bytes()),
        })
    });
    Ok((fp, syms))
}

/// The patches of `pairs[range]`, each from the blobs `reader` reads, their
/// text rendered up to `text_budget` lines; and the symbols each touched,
/// where `symbols` asks. `None` for a pair whose blobs this handle cannot
/// read (an object only in another handle's memory): its caller renders it
/// again.
fn render(
    pairs: &[Pair],
    reader: Reader,
    symbols: Option<&dyn SymbolsFn>,
    range: std::ops::Range<usize>,
    text_budget: usize,
) -> Result<Vec<Option<Rendered>>, GitError> {
    let mut opts = DiffOptions::new();
    opts.context_lines(3);
    let mut written = 0;
    range
        .map(|k| {
            let Ok(held) = sides(&pairs[k], reader) else { return Ok(None) };
            let r = render_one(&pairs[k], &held, symbols, written < text_budget, &mut opts)?;
            written += r.0.line_count;
            Ok(Some(r))
        })
        .collect()
}

/// The patches' counts and symbols set on `changes`; the patch text of the
/// leading files, up to `max_lines`, and the number of lines of them all.
/// Counted on both cores, each thread reading the blobs of its half with
/// its own handle, the text rendered only for the leading files. Symbols
/// too, where asked: the caller parses, from the same bytes.
fn patches(
    changes: &mut [Change],
    pairs: &[Pair],
    symbols: Option<&dyn SymbolsFn>,
    max_lines: usize,
    view: &HeadView,
) -> Result<(String, usize), GitError> {
    let mine = Reader { repo: view.repo, on_disk: &view.contents };
    let half = if pairs.len() < 16 { pairs.len() } else { pairs.len() / 2 };
    let (gitdir, on_disk) = (view.repo.path().to_path_buf(), &view.contents);
    let (first, second) = std::thread::scope(|s| {
        let second = (half < pairs.len()).then(|| {
            s.spawn(move || match Repository::open(&gitdir) {
                Ok(repo) => render(pairs, Reader { repo: &repo, on_disk }, symbols, half..pairs.len(), 0),
                // Without a second handle, this thread renders nothing.
                Err(_) => Ok((half..pairs.len()).map(|_| None).collect()),
            })
        });
        (render(pairs, mine, symbols, 0..half, max_lines), second.map(|t| t.join()))
    });
    let second = match second {
        Some(joined) => super::joined(joined, Path::new("."), "the patch thread")?,
        None => Vec::new(),
    };
    let mut opts = DiffOptions::new();
    opts.context_lines(3);
    let (mut patch_text, mut total, mut written) = (Vec::new(), 0, 0);
    for (k, (change, done)) in changes.iter_mut().zip(first?.into_iter().chain(second)).enumerate() {
        let under = written < max_lines;
        let (fp, syms) = match done {
            // The second thread rendered no text: do it here, for the few
            // files still under the bound.
            Some((fp, syms)) if k < half || !under => (fp, syms),
            Some((_, syms)) => (render_one(&pairs[k], &sides(&pairs[k], mine)?, None, true, &mut opts)?.0, syms),
            None => render_one(&pairs[k], &sides(&pairs[k], mine)?, symbols, under, &mut opts)?,
        };
        change.symbols = syms;
        change.additions = fp.additions;
        change.deletions = fp.deletions;
        change.binary = fp.binary;
        total += fp.line_count;
        if under {
            patch_text.extend_from_slice(&fp.text);
            written += fp.line_count;
        }
    }
    Ok((String::from_utf8_lossy(&patch_text).into_owned(), total))
}
