//! The paths of a working tree that may differ from its index, and the
//! index's paths that differ from `HEAD`, read directly: the working-tree
//! side of a comparison, for the common index (no submodule, conflict,
//! sparse or intent-to-add entry; see [`plain`]).
//!
//! libgit2's status stats every file by its full path, reads the index with
//! its checksum, and reads every tree of `HEAD` to compare it with the
//! index. Here each directory is listed once and its files are stat'ed
//! relative to it (one name to look up, not six), the index is read by
//! [`super::index_file`], and `HEAD` is compared with the index only below
//! the directories whose cached tree id (the index's TREE extension) does
//! not already match.
//!
//! A path is listed when its stat data cannot vouch for it ([`may_differ`]);
//! the caller reads and hashes it, so a file that was only touched costs a
//! read, never a wrong answer. Untracked files count unless ignored
//! (libgit2 decides, with the repository's rules); an untracked directory
//! that holds a `.git` is another repository, left out as libgit2 leaves it.
//! Anything unexpected on disk (a directory that cannot be listed) stops
//! the scan with [`Stop::Unsure`], and the caller asks libgit2 instead
//! ([`unsure_is_none`]).

use std::collections::HashMap;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};

use git2::Oid;

use super::GitError;
use super::index_file::{IndexFile, IndexRecord, Stat};
use super::walk::TREE_MODE;

/// How stat data is judged (core.fileMode, core.trustCtime) and when the
/// index was written (an entry as new as the index is racy).
#[derive(Debug, Clone, Copy)]
pub(super) struct StatRules {
    pub filemode: bool,
    pub trust_ctime: bool,
    pub index_mtime: (u32, u32),
}

/// A path found, and whether it is untracked (else: tracked, may differ).
pub(super) type FoundPath = (Vec<u8>, bool);

const GITLINK: u32 = 0o160000;
const SYMLINK: u32 = 0o120000;

/// Whether this module can read the index's side of the working tree: no
/// submodule, conflicted, sparse, intent-to-add or assume-unchanged entry,
/// each of which git and libgit2 treat in ways of their own.
pub(super) fn plain(index: &IndexFile) -> bool {
    index
        .entries
        .iter()
        .all(|e| e.stage == 0 && e.mode != GITLINK && !e.skip_worktree && !e.intent_to_add && !e.assume_valid)
}

/// Whether a file whose index entry is `entry` may have changed, from its
/// stat data: a different type or executable bit, size, mtime, ctime,
/// inode or owner, or an mtime at or after the index's own (racy: written
/// in the same instant as the index, the stat data cannot tell).
pub(super) fn may_differ(entry: &IndexRecord, disk: &Stat, disk_mode: u32, rules: &StatRules) -> bool {
    let kind = |m: u32| m & 0o170000;
    let mode_differs = if kind(entry.mode) != kind(disk_mode) {
        true
    } else {
        kind(disk_mode) != SYMLINK && rules.filemode && (entry.mode & 0o100) != (disk_mode & 0o100)
    };
    let s = &entry.stat;
    mode_differs
        || s.size != disk.size
        || s.mtime != disk.mtime
        || (rules.trust_ctime && s.ctime != disk.ctime)
        || s.ino != disk.ino
        || s.uid != disk.uid
        || s.gid != disk.gid
        || s.mtime >= rules.index_mtime
}

/// A file's stat data as the index would record it, and its git mode.
fn stat_of(m: &rustix::fs::Stat) -> (Stat, u32) {
    let stat = Stat {
        ctime: (m.st_ctime as u32, m.st_ctime_nsec as u32),
        mtime: (m.st_mtime as u32, m.st_mtime_nsec as u32),
        dev: m.st_dev as u32,
        ino: m.st_ino as u32,
        uid: m.st_uid,
        gid: m.st_gid,
        size: m.st_size as u32,
    };
    let kind = FileType::from_raw_mode(m.st_mode);
    let mode = if kind == FileType::Symlink {
        SYMLINK
    } else if m.st_mode & 0o100 != 0 {
        0o100755
    } else {
        0o100644
    };
    (stat, mode)
}

/// What is on disk at a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Missing,
    /// A regular file or a symlink.
    File,
    Dir,
    /// A fifo, socket or device: git sees nothing there.
    Other,
}

fn kind_of(t: FileType) -> Kind {
    match t {
        FileType::Directory => Kind::Dir,
        FileType::RegularFile | FileType::Symlink => Kind::File,
        _ => Kind::Other,
    }
}

/// The entries directly in a directory, by name: the file entry of that
/// name and the entries below it as a directory. `under` holds the entries
/// below `dir` (sorted), `prefix` is `dir/` (empty for the root).
fn children<'e>(
    prefix: &[u8],
    under: &'e [IndexRecord],
) -> HashMap<&'e [u8], (Option<&'e IndexRecord>, &'e [IndexRecord])> {
    let mut out: HashMap<&[u8], (Option<&IndexRecord>, &[IndexRecord])> = HashMap::new();
    let mut i = 0;
    while i < under.len() {
        let rest = &under[i].path[prefix.len()..];
        match rest.iter().position(|&b| b == b'/') {
            None => {
                out.entry(rest).or_default().0 = Some(&under[i]);
                i += 1;
            }
            Some(slash) => {
                let sub = &under[i].path[..prefix.len() + slash + 1];
                let end = i + under[i..].iter().take_while(|e| e.path.starts_with(sub)).count();
                out.entry(&rest[..slash]).or_default().1 = &under[i..end];
                i = end;
            }
        }
    }
    out
}

/// `entries` (sorted) split into the entry at `path` and those below it.
fn at_and_below<'e>(path: &[u8], entries: &'e [IndexRecord]) -> (Option<&'e IndexRecord>, &'e [IndexRecord]) {
    let at = entries.partition_point(|e| e.path.as_slice() < path);
    let file = entries.get(at).filter(|e| e.path == path);
    let below: Vec<u8> = [path, b"/"].concat();
    let start = entries.partition_point(|e| e.path.as_slice() < below.as_slice());
    let end = start + entries[start..].iter().take_while(|e| e.path.starts_with(&below)).count();
    (file, &entries[start..end])
}

fn is_dot_git(name: &[u8]) -> bool {
    name.eq_ignore_ascii_case(b".git")
}

fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    if dir.is_empty() { name.to_vec() } else { [dir, b"/", name].concat() }
}

/// Walks units of a working tree against the index's entries.
pub(super) struct Scan<'a> {
    /// The working tree's top directory, open once for every unit.
    root: OwnedFd,
    pub rules: StatRules,
    /// Whether a path (relative; a directory without a trailing slash) is
    /// ignored by the repository's rules.
    pub ignored: &'a mut dyn FnMut(&[u8]) -> Result<bool, GitError>,
    /// For a reset: everything the index does not hold is listed, ignored
    /// or not, an untracked directory as one path (not its files), and the
    /// rules are never asked.
    pub whole: bool,
    pub found: Vec<FoundPath>,
}

/// How deep a directory of a working tree may be: one this many levels
/// deep or deeper (its path has this many names) stops the scan
/// ([`crate::model::MAX_TREE_DEPTH`]). libgit2's walk of a working tree
/// enters no directory 100 levels deep ("directory nesting too deep"); git
/// itself refuses trees deeper than 4,096 levels (`core.maxTreeDepth`).
pub const MAX_SCAN_DEPTH: usize = crate::model::MAX_TREE_DEPTH;

/// How many directories deep `path` (relative, `/`-separated) is. Pure.
pub fn depth(path: &[u8]) -> usize {
    if path.is_empty() { 0 } else { path.iter().filter(|b| **b == b'/').count() + 1 }
}

/// A directory at `dir` too deep to read ([`MAX_SCAN_DEPTH`]). Pure.
fn too_deep(dir: &[u8]) -> Result<(), Stop> {
    if depth(dir) >= MAX_SCAN_DEPTH {
        return Err(Stop::Git(GitError::TooDeep { path: dir.to_vec() }));
    }
    Ok(())
}

/// Why a scan stopped: an error, or something on disk this module does
/// not judge (libgit2 will).
pub(super) enum Stop {
    Git(GitError),
    Unsure,
}

impl From<GitError> for Stop {
    fn from(e: GitError) -> Stop {
        Stop::Git(e)
    }
}

/// A scan's answer for its caller: `None` when this module could not judge
/// (libgit2 decides then), an error as it is.
pub(super) fn unsure_is_none<T>(r: Result<T, Stop>) -> Result<Option<T>, GitError> {
    match r {
        Ok(t) => Ok(Some(t)),
        Err(Stop::Unsure) => Ok(None),
        Err(Stop::Git(e)) => Err(e),
    }
}

impl<'a> Scan<'a> {
    /// A scan of the working tree at `root`; see the fields.
    pub(super) fn new(
        root: &Path,
        rules: StatRules,
        ignored: &'a mut dyn FnMut(&[u8]) -> Result<bool, GitError>,
        whole: bool,
    ) -> Result<Scan<'a>, Stop> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
        let Ok(root) = rustix::fs::open(root, flags, Mode::empty()) else { return Err(Stop::Unsure) };
        Ok(Scan { root, rules, ignored, whole, found: Vec::new() })
    }

    /// One unit of the working tree (a path of the cut, `""` for all of
    /// it), with the index entries at or below it (sorted).
    pub(super) fn unit(&mut self, path: &[u8], entries: &[IndexRecord]) -> Result<(), Stop> {
        if path.is_empty() {
            let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
            let Ok(top) = rustix::fs::openat(&self.root, ".", flags, Mode::empty()) else { return Err(Stop::Unsure) };
            return self.dir(top, path, entries);
        }
        let root = self.root.try_clone().map_err(|_| Stop::Unsure)?;
        let kind = match rustix::fs::statat(&root, path, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => kind_of(FileType::from_raw_mode(st.st_mode)),
            Err(e) if e == rustix::io::Errno::NOENT || e == rustix::io::Errno::NOTDIR => Kind::Missing,
            Err(_) => return Err(Stop::Unsure),
        };
        let (file, below) = at_and_below(path, entries);
        self.visit(root.as_fd(), path, path, file, below, kind)
    }

    /// A path (`name` in the directory `parent`): what the index holds
    /// there (`file`, `below`) against what is on disk (`kind`).
    fn visit(
        &mut self,
        parent: BorrowedFd<'_>,
        name: &[u8],
        path: &[u8],
        file: Option<&IndexRecord>,
        below: &[IndexRecord],
        kind: Kind,
    ) -> Result<(), Stop> {
        match (file, kind) {
            (Some(e), Kind::File) => {
                let Ok(st) = rustix::fs::statat(parent, name, AtFlags::SYMLINK_NOFOLLOW) else {
                    return Err(Stop::Unsure);
                };
                let (stat, mode) = stat_of(&st);
                if may_differ(e, &stat, mode, &self.rules) {
                    self.found.push((path.to_vec(), false));
                }
            }
            // Gone, or replaced by a directory or something git cannot hold.
            (Some(_), _) => self.found.push((path.to_vec(), false)),
            (None, Kind::File) => {
                if self.whole || !(self.ignored)(path)? {
                    self.found.push((path.to_vec(), true));
                }
            }
            // A fifo or socket the attempt left: gone after a reset.
            (None, Kind::Other) if self.whole => self.found.push((path.to_vec(), true)),
            (None, _) => {}
        }
        if kind != Kind::Dir {
            // A tracked directory that is gone or is a file now.
            self.found.extend(below.iter().map(|e| (e.path.clone(), false)));
            return Ok(());
        }
        if below.is_empty() && self.whole {
            self.found.push((path.to_vec(), true));
            return Ok(());
        }
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let Ok(fd) = rustix::fs::openat(parent, name, flags, Mode::empty()) else { return Err(Stop::Unsure) };
        if below.is_empty() { self.untracked_dir(fd, path) } else { self.dir(fd, path, below) }
    }

    /// The names of the directory open at `fd`, each with its type (the
    /// directory entry's, or a stat's where the file system gives none),
    /// without `.`, `..` and `.git`; with the directory, still open.
    fn list(fd: OwnedFd) -> Result<(Dir, Vec<(std::ffi::CString, FileType)>), Stop> {
        let Ok(mut dir) = Dir::new(fd) else { return Err(Stop::Unsure) };
        let mut names = Vec::new();
        while let Some(item) = dir.read() {
            let Ok(item) = item else { return Err(Stop::Unsure) };
            let bytes = item.file_name().to_bytes();
            if bytes == b"." || bytes == b".." || is_dot_git(bytes) {
                continue;
            }
            names.push((item.file_name().to_owned(), item.file_type()));
        }
        let Ok(at) = dir.fd() else { return Err(Stop::Unsure) };
        for (name, t) in &mut names {
            if *t == FileType::Unknown {
                let Ok(st) = rustix::fs::statat(at, name.as_c_str(), AtFlags::SYMLINK_NOFOLLOW) else {
                    return Err(Stop::Unsure);
                };
                *t = FileType::from_raw_mode(st.st_mode);
            }
        }
        Ok((dir, names))
    }

    /// A tracked directory, open at `fd`: each name on disk against the
    /// index's.
    fn dir(&mut self, fd: OwnedFd, dir: &[u8], below: &[IndexRecord]) -> Result<(), Stop> {
        too_deep(dir)?;
        let prefix: Vec<u8> = if dir.is_empty() { Vec::new() } else { [dir, b"/"].concat() };
        let mut known = children(&prefix, below);
        let (open, names) = Self::list(fd)?;
        let Ok(at) = open.fd() else { return Err(Stop::Unsure) };
        for (name, t) in names {
            let name = name.to_bytes();
            let (file, sub) = known.remove(name).unwrap_or_default();
            self.visit(at, name, &join(dir, name), file, sub, kind_of(t))?;
        }
        for (name, (file, sub)) in known {
            self.visit(at, name, &join(dir, name), file, sub, Kind::Missing)?;
        }
        Ok(())
    }

    /// A directory the index knows nothing below, open at `fd`: its files
    /// are untracked, unless ignored; another repository (a `.git` inside)
    /// is left out.
    fn untracked_dir(&mut self, fd: OwnedFd, dir: &[u8]) -> Result<(), Stop> {
        // Bounded before anything else is asked of the directory (whether
        // it is ignored costs a look at each level above it).
        too_deep(dir)?;
        if (self.ignored)(dir)? || rustix::fs::statat(&fd, ".git", AtFlags::SYMLINK_NOFOLLOW).is_ok() {
            return Ok(());
        }
        let (open, names) = Self::list(fd)?;
        let Ok(at) = open.fd() else { return Err(Stop::Unsure) };
        for (name, t) in names {
            let path = join(dir, name.to_bytes());
            match kind_of(t) {
                Kind::File if !(self.ignored)(&path)? => self.found.push((path, true)),
                Kind::Dir => {
                    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
                    let Ok(sub) = rustix::fs::openat(at, name.as_c_str(), flags, Mode::empty()) else {
                        return Err(Stop::Unsure);
                    };
                    self.untracked_dir(sub, &path)?;
                }
                _ => {}
            }
        }
        Ok(())
    }
}

/// Every directory of the working tree at `root` that a watch of its files
/// must cover, relative (`""` for the top): each directory the index holds
/// files below, ignored or not (a tracked file counts wherever it lives),
/// and each untracked directory the rules do not ignore, with the ones
/// below it; `.git` and `skip` (a relative path) left out. Each directory
/// is listed once; only untracked directories are put to the rules.
pub(super) fn directories(
    root: &Path,
    entries: &[IndexRecord],
    ignored: &mut dyn FnMut(&[u8]) -> Result<bool, GitError>,
    skip: &[u8],
) -> Result<Vec<Vec<u8>>, Stop> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let Ok(top) = rustix::fs::open(root, flags, Mode::empty()) else { return Err(Stop::Unsure) };
    let mut out = Vec::new();
    directories_below(top, b"", Some(entries), ignored, skip, &mut out)?;
    Ok(out)
}

/// [`directories`] from the directory `dir`, open at `fd`, with the index
/// entries below it (`None`: untracked, already judged not ignored).
fn directories_below(
    fd: OwnedFd,
    dir: &[u8],
    below: Option<&[IndexRecord]>,
    ignored: &mut dyn FnMut(&[u8]) -> Result<bool, GitError>,
    skip: &[u8],
    out: &mut Vec<Vec<u8>>,
) -> Result<(), Stop> {
    // Bounded: deeper than libgit2 reads, the caller's own walk decides.
    if depth(dir) >= MAX_SCAN_DEPTH {
        return Err(Stop::Unsure);
    }
    out.push(dir.to_vec());
    let prefix: Vec<u8> = if dir.is_empty() { Vec::new() } else { [dir, b"/"].concat() };
    let known = below.map(|b| children(&prefix, b)).unwrap_or_default();
    let (open, names) = Scan::list(fd)?;
    let Ok(at) = open.fd() else { return Err(Stop::Unsure) };
    for (name, t) in names {
        let path = join(dir, name.to_bytes());
        if t != FileType::Directory || path == skip {
            continue;
        }
        let sub = known.get(name.to_bytes()).map(|(_, sub)| *sub).filter(|s| !s.is_empty());
        if sub.is_none() && ignored(&path)? {
            continue;
        }
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let Ok(fd) = rustix::fs::openat(at, name.as_c_str(), flags, Mode::empty()) else { return Err(Stop::Unsure) };
        directories_below(fd, &path, sub, ignored, skip, out)?;
    }
    Ok(())
}

/// The paths whose entry differs between the tree `head` and the index:
/// staged changes. A directory whose cached tree id (TREE extension)
/// equals `HEAD`'s is skipped unread.
pub(super) fn staged(odb: &git2::Odb, head: Oid, index: &IndexFile, out: &mut Vec<Vec<u8>>) -> Result<(), GitError> {
    staged_dir(odb, head, b"", &index.entries, index, out)
}

fn staged_dir(
    odb: &git2::Odb,
    tree: Oid,
    dir: &[u8],
    below: &[IndexRecord],
    index: &IndexFile,
    out: &mut Vec<Vec<u8>>,
) -> Result<(), GitError> {
    if index.trees.get(dir) == Some(&tree) {
        return Ok(());
    }
    let prefix: Vec<u8> = if dir.is_empty() { Vec::new() } else { [dir, b"/"].concat() };
    let mut known = children(&prefix, below);
    let raw = super::walk::read_tree(odb, tree)?;
    for (name, (id, mode)) in super::walk::parse(tree, raw.data())? {
        let path = join(dir, name);
        let (file, sub) = known.remove(name).unwrap_or_default();
        if mode == TREE_MODE {
            if sub.is_empty() {
                leaves(odb, id, &path, out)?;
            } else {
                staged_dir(odb, id, &path, sub, index, out)?;
            }
            out.extend(file.map(|e| e.path.clone()));
        } else {
            let same = file.is_some_and(|e| e.id == id && e.mode as i32 == mode);
            if !same {
                out.push(path);
            }
            out.extend(sub.iter().map(|e| e.path.clone()));
        }
    }
    for (file, sub) in known.into_values() {
        out.extend(file.into_iter().chain(sub).map(|e| e.path.clone()));
    }
    Ok(())
}

/// Every leaf path below tree `id` at `dir`.
fn leaves(odb: &git2::Odb, id: Oid, dir: &[u8], out: &mut Vec<Vec<u8>>) -> Result<(), GitError> {
    let raw = super::walk::read_tree(odb, id)?;
    for (name, (sub, mode)) in super::walk::parse(id, raw.data())? {
        let path = join(dir, name);
        if mode == TREE_MODE {
            leaves(odb, sub, &path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(path: &str) -> IndexRecord {
        IndexRecord {
            path: path.as_bytes().to_vec(),
            mode: 0o100644,
            id: Oid::ZERO_SHA1,
            stage: 0,
            assume_valid: false,
            skip_worktree: false,
            intent_to_add: false,
            stat: Stat { ctime: (10, 1), mtime: (10, 2), dev: 1, ino: 7, uid: 1000, gid: 1000, size: 42 },
        }
    }

    const RULES: StatRules = StatRules { filemode: true, trust_ctime: true, index_mtime: (20, 0) };

    #[test]
    fn the_stat_data_vouches_only_when_every_field_agrees() {
        let e = entry("f");
        let same = e.stat;
        assert!(!may_differ(&e, &same, 0o100644, &RULES));
        let changed: [fn(&mut Stat); 7] = [
            |s| s.size += 1,
            |s| s.mtime.1 += 1,
            |s| s.mtime.0 += 1,
            |s| s.ctime.1 += 1,
            |s| s.ino += 1,
            |s| s.uid += 1,
            |s| s.gid += 1,
        ];
        for change in changed {
            let mut s = same;
            change(&mut s);
            assert!(may_differ(&e, &s, 0o100644, &RULES), "{s:?}");
        }
        // The device is not compared (git and libgit2 do not either).
        assert!(!may_differ(&e, &Stat { dev: 9, ..same }, 0o100644, &RULES));
        // core.trustCtime = false: a new ctime alone is no change.
        let lax = StatRules { trust_ctime: false, ..RULES };
        assert!(!may_differ(&e, &Stat { ctime: (99, 0), ..same }, 0o100644, &lax));
    }

    #[test]
    fn modes_count_by_type_and_by_the_executable_bit_under_core_filemode() {
        let e = entry("f");
        assert!(may_differ(&e, &e.stat, 0o100755, &RULES));
        assert!(!may_differ(&e, &e.stat, 0o100755, &StatRules { filemode: false, ..RULES }));
        assert!(may_differ(&e, &e.stat, SYMLINK, &StatRules { filemode: false, ..RULES }));
        let link = IndexRecord { mode: SYMLINK, ..entry("l") };
        assert!(!may_differ(&link, &link.stat, SYMLINK, &RULES));
    }

    #[test]
    fn an_entry_as_new_as_the_index_is_racy() {
        let e = entry("f");
        for index_mtime in [(10, 2), (10, 1), (9, 999)] {
            assert!(may_differ(&e, &e.stat, 0o100644, &StatRules { index_mtime, ..RULES }), "{index_mtime:?}");
        }
        assert!(!may_differ(&e, &e.stat, 0o100644, &StatRules { index_mtime: (10, 3), ..RULES }));
    }

    #[test]
    fn children_group_files_and_directories_by_name() {
        // Index order: "a" < "a-b" < "a.c" < "a/x" < "a/y/z" < "b".
        let all: Vec<IndexRecord> = ["a", "a-b", "a.c", "a/x", "a/y/z", "b"].map(entry).to_vec();
        let c = children(b"", &all);
        assert_eq!(c.len(), 4);
        let (file, sub) = c[b"a".as_slice()];
        assert_eq!(file.map(|e| e.path.as_slice()), Some(b"a".as_slice()));
        assert_eq!(sub.iter().map(|e| e.path.as_slice()).collect::<Vec<_>>(), [b"a/x".as_slice(), b"a/y/z"]);
        assert!(c[b"a-b".as_slice()].1.is_empty() && c[b"b".as_slice()].0.is_some());
        let (file, below) = at_and_below(b"a", &all);
        assert!(file.is_some() && below.len() == 2);
        let inner = children(b"a/", below);
        assert_eq!(inner[b"y".as_slice()].1.len(), 1);
        assert!(inner[b"x".as_slice()].0.is_some());
    }

    #[test]
    fn plain_refuses_what_git_treats_its_own_way() {
        let ok = IndexFile { entries: vec![entry("a")], trees: HashMap::new() };
        assert!(plain(&ok));
        for odd in [
            IndexRecord { stage: 2, ..entry("a") },
            IndexRecord { mode: GITLINK, ..entry("a") },
            IndexRecord { skip_worktree: true, ..entry("a") },
            IndexRecord { intent_to_add: true, ..entry("a") },
            IndexRecord { assume_valid: true, ..entry("a") },
        ] {
            assert!(!plain(&IndexFile { entries: vec![odd], trees: HashMap::new() }));
        }
    }
}
