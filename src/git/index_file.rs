//! The index file read directly: each entry's path, mode, id, stage, flags
//! and stat data, and the tree ids its TREE extension caches.
//!
//! libgit2 reads an index of 20,000 entries in about 9 ms: it checks the
//! trailing SHA-1 over the whole file (git itself does not, unless asked),
//! validates every path and puts each in a hash map. A working-tree
//! comparison needs none of that. This reader takes versions 2, 3 and 4
//! and answers `None` for an index it cannot describe completely (a split
//! index, sparse directory entries, an unknown required extension, entries
//! out of order): the caller then reads it with libgit2.

use std::collections::HashMap;

use git2::Oid;

/// An index file's entries, in the file's order (by path, then stage).
pub(super) struct IndexFile {
    pub entries: Vec<IndexRecord>,
    /// Directory (`""` for the root) -> the tree id the TREE extension
    /// holds for it, for the directories whose cached id is valid.
    pub trees: HashMap<Vec<u8>, Oid>,
}

/// One index entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct IndexRecord {
    pub path: Vec<u8>,
    pub mode: u32,
    pub id: Oid,
    /// 0 when merged; 1 to 3 for the sides of a conflict.
    pub stage: u8,
    /// The assume-unchanged bit (`git update-index --assume-unchanged`).
    pub assume_valid: bool,
    /// Outside the sparse checkout.
    pub skip_worktree: bool,
    /// Added with `git add -N`: the id is the empty blob's, not content.
    pub intent_to_add: bool,
    pub stat: Stat,
}

/// The stat data git keeps to tell an unchanged file without reading it,
/// each field truncated to 32 bits as the file stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Stat {
    pub ctime: (u32, u32),
    pub mtime: (u32, u32),
    pub dev: u32,
    pub ino: u32,
    pub uid: u32,
    pub gid: u32,
    pub size: u32,
}

const HASH: usize = 20;
const ASSUME_VALID: u16 = 0x8000;
const EXTENDED: u16 = 0x4000;
const SKIP_WORKTREE: u16 = 0x4000;
const INTENT_TO_ADD: u16 = 0x2000;

/// Reads an index file's bytes; `None` when this reader cannot describe
/// the index completely (see the module's comment) or the bytes are not an
/// index. The trailing checksum is not verified, as git does not.
pub(super) fn parse(data: &[u8]) -> Option<IndexFile> {
    parse_at(data).map(|(index, _)| index)
}

/// [`parse`], with where each entry starts in `data` (in the entries'
/// order), for [`restat`].
pub(super) fn parse_at(data: &[u8]) -> Option<(IndexFile, Vec<usize>)> {
    let body = data.get(..data.len().checked_sub(HASH)?)?;
    let mut r = Reader { data: body, at: 0 };
    if r.take(4)? != b"DIRC" {
        return None;
    }
    let version = r.u32()?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let count = r.u32()? as usize;
    let mut entries: Vec<IndexRecord> = Vec::with_capacity(count.min(body.len() / 62));
    let mut offsets: Vec<usize> = Vec::with_capacity(entries.capacity());
    let mut previous: Vec<u8> = Vec::new();
    for _ in 0..count {
        offsets.push(r.at);
        let entry = read_entry(&mut r, version, &previous)?;
        if let Some(last) = entries.last()
            && (last.path.as_slice(), last.stage) >= (entry.path.as_slice(), entry.stage)
        {
            return None;
        }
        previous.clone_from(&entry.path);
        entries.push(entry);
    }
    let trees = read_extensions(&mut r)?;
    Some((IndexFile { entries, trees }, offsets))
}

/// The stat data of one entry as the file stores it, in its order: ctime
/// (seconds, nanoseconds), mtime (the same), dev, ino, mode, uid, gid,
/// size, each truncated to 32 bits.
pub(super) type StatWords = [u32; 10];

/// The index file `data` with new stat data for some of its entries
/// (`(start of the entry, as [`parse_at`] gives it, its words)`) and the
/// trailing checksum computed again: what git's refresh of those entries
/// writes. Paths, ids, flags and extensions stay byte for byte (the
/// entries' sizes do not change, so neither do the offsets an `EOIE` or
/// `IEOT` extension records). `None` when an offset is not inside the
/// entries. Pure.
pub(super) fn restat(data: &[u8], updates: &[(usize, StatWords)]) -> Option<Vec<u8>> {
    use sha1::Digest;
    let end = data.len().checked_sub(HASH)?;
    let mut out = data.to_vec();
    for (at, words) in updates {
        if *at < 12 || at.checked_add(40)? > end {
            return None;
        }
        for (i, w) in words.iter().enumerate() {
            out[at + 4 * i..at + 4 * i + 4].copy_from_slice(&w.to_be_bytes());
        }
    }
    let sum = sha1::Sha1::digest(&out[..end]);
    out[end..].copy_from_slice(&sum);
    Some(out)
}

/// One entry at `r`; `previous` is the entry before's path, which a
/// version 4 path is stored against. `None` for what this reader cannot
/// describe: extended flags but those it knows, or a sparse index's
/// directory entry.
fn read_entry(r: &mut Reader, version: u32, previous: &[u8]) -> Option<IndexRecord> {
    let start = r.at;
    let mut w = [0u32; 10];
    for x in &mut w {
        *x = r.u32()?;
    }
    let id = Oid::from_bytes(r.take(HASH)?).ok()?;
    let flags = r.u16()?;
    let extended = if flags & EXTENDED != 0 {
        if version < 3 {
            return None;
        }
        r.u16()?
    } else {
        0
    };
    if extended & !(SKIP_WORKTREE | INTENT_TO_ADD) != 0 {
        return None;
    }
    let path = if version == 4 {
        let strip = r.varint()?;
        let keep = previous.len().checked_sub(strip)?;
        let suffix = r.until_nul()?;
        let mut path = Vec::with_capacity(keep + suffix.len());
        path.extend_from_slice(&previous[..keep]);
        path.extend_from_slice(suffix);
        path
    } else {
        let name = r.until_nul()?.to_vec();
        // The entry is padded with 1 to 8 NULs to a multiple of 8.
        let len = r.at - start - 1;
        let padded = (len + 8) & !7;
        r.take(padded - len - 1)?;
        name
    };
    let (stage, mode) = (((flags >> 12) & 3) as u8, w[6]);
    // A sparse index's directory entries: not files.
    if path.is_empty() || path.ends_with(b"/") || mode == 0o040000 {
        return None;
    }
    Some(IndexRecord {
        path,
        mode,
        id,
        stage,
        assume_valid: flags & ASSUME_VALID != 0,
        skip_worktree: extended & SKIP_WORKTREE != 0,
        intent_to_add: extended & INTENT_TO_ADD != 0,
        stat: Stat { ctime: (w[0], w[1]), mtime: (w[2], w[3]), dev: w[4], ino: w[5], uid: w[7], gid: w[8], size: w[9] },
    })
}

/// The extensions after the entries: the cached trees of `TREE`; `None`
/// for a required extension this reader does not know.
fn read_extensions(r: &mut Reader) -> Option<HashMap<Vec<u8>, Oid>> {
    let mut trees = HashMap::new();
    while r.at < r.data.len() {
        let signature = r.take(4)?;
        let size = r.u32()? as usize;
        let ext = r.take(size)?;
        match signature {
            b"TREE" => cached_trees(ext, &mut trees)?,
            // Optional extensions (an upper-case first letter) can be
            // skipped; a required one this reader does not know (`link`:
            // a split index, `sdir`: a sparse index) cannot.
            [b'A'..=b'Z', ..] => {}
            _ => return None,
        }
    }
    Some(trees)
}

/// The TREE extension: nodes of `name NUL entries SP subtrees LF [id]`,
/// each followed by its subtrees; `entries` is -1 for an invalidated node.
fn cached_trees(data: &[u8], out: &mut HashMap<Vec<u8>, Oid>) -> Option<()> {
    let mut r = Reader { data, at: 0 };
    // (path of the node's parent, subtrees still to read there)
    let mut stack: Vec<(Vec<u8>, usize)> = Vec::new();
    while r.at < data.len() {
        let name = r.until_nul()?;
        let parent = match stack.last_mut() {
            Some((parent, left)) => {
                *left = left.checked_sub(1)?;
                parent.clone()
            }
            None if name.is_empty() => Vec::new(),
            None => return None,
        };
        let line = r.until(b'\n')?;
        let text = std::str::from_utf8(line).ok()?;
        let (entries, subtrees) = text.split_once(' ')?;
        let (entries, subtrees): (i64, usize) = (entries.parse().ok()?, subtrees.parse().ok()?);
        let path = if parent.is_empty() { name.to_vec() } else { [&parent[..], b"/", name].concat() };
        if entries >= 0 {
            out.insert(path.clone(), Oid::from_bytes(r.take(HASH)?).ok()?);
        }
        while stack.last().is_some_and(|(_, left)| *left == 0) {
            stack.pop();
        }
        if subtrees > 0 {
            stack.push((path, subtrees));
        }
    }
    stack.is_empty().then_some(())
}

struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let out = self.data.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(out)
    }

    fn u32(&mut self) -> Option<u32> {
        self.take(4).and_then(|b| b.try_into().ok()).map(u32::from_be_bytes)
    }

    fn u16(&mut self) -> Option<u16> {
        self.take(2).and_then(|b| b.try_into().ok()).map(u16::from_be_bytes)
    }

    /// The bytes up to `end`, which is consumed but not returned.
    fn until(&mut self, end: u8) -> Option<&'a [u8]> {
        let len = self.data.get(self.at..)?.iter().position(|&b| b == end)?;
        let out = self.take(len)?;
        self.at += 1;
        Some(out)
    }

    fn until_nul(&mut self) -> Option<&'a [u8]> {
        self.until(0)
    }

    /// git's offset varint (varint.c): each continuation adds one before
    /// shifting, so every value has exactly one encoding.
    fn varint(&mut self) -> Option<usize> {
        let mut byte = self.take(1)?[0];
        let mut value = usize::from(byte & 0x7f);
        while byte & 0x80 != 0 {
            byte = self.take(1)?[0];
            value = value.checked_add(1)?.checked_mul(128)?.checked_add(usize::from(byte & 0x7f))?;
        }
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// A repository whose index libgit2 writes at `version`, with nested
    /// directories, a long name, an executable, a symlink, a conflict and
    /// the extended flags.
    fn written(version: u32) -> (tempfile::TempDir, git2::Repository) {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = git2::Repository::init(dir.path()).expect("init");
        let long = format!("{}/{}", "d".repeat(200), "l".repeat(250));
        let files = ["a.txt", "a/b/c.txt", "a-b", "a/b.txt", "z/y/x/w.py", long.as_str()];
        for f in files {
            let p = dir.path().join(f);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(&p, f).expect("write");
        }
        let mut index = repo.index().expect("index");
        for f in files {
            index.add_path(Path::new(f)).expect("add");
        }
        let base = || repo.index().expect("index").get_path(Path::new("a.txt"), 0).expect("entry");
        for stage in 1..=3u16 {
            let mut e = base();
            e.path = b"conflicted".to_vec();
            e.flags |= stage << 12;
            index.add(&e).expect("conflict side");
        }
        let mut ita = base();
        ita.path = b"new-intent".to_vec();
        ita.flags_extended |= INTENT_TO_ADD;
        index.add(&ita).expect("intent to add");
        let mut skip = base();
        skip.path = b"sparse/out.txt".to_vec();
        skip.flags_extended |= SKIP_WORKTREE;
        skip.mode = 0o100755;
        index.add(&skip).expect("skip worktree");
        index.set_version(version).expect("version");
        index.write().expect("write");
        (dir, repo)
    }

    fn theirs(repo: &git2::Repository) -> Vec<IndexRecord> {
        let mut index = repo.index().expect("index");
        index.read(true).expect("read");
        index
            .iter()
            .map(|e| IndexRecord {
                stage: ((e.flags >> 12) & 3) as u8,
                assume_valid: e.flags & ASSUME_VALID != 0,
                skip_worktree: e.flags_extended & SKIP_WORKTREE != 0,
                intent_to_add: e.flags_extended & INTENT_TO_ADD != 0,
                mode: e.mode,
                id: e.id,
                stat: Stat {
                    ctime: (e.ctime.seconds() as u32, e.ctime.nanoseconds()),
                    mtime: (e.mtime.seconds() as u32, e.mtime.nanoseconds()),
                    dev: e.dev,
                    ino: e.ino,
                    uid: e.uid,
                    gid: e.gid,
                    size: e.file_size,
                },
                path: e.path,
            })
            .collect()
    }

    #[test]
    fn every_version_reads_as_libgit2_reads_it() {
        for version in [2, 3, 4] {
            let (dir, repo) = written(version);
            let data = std::fs::read(dir.path().join(".git/index")).expect("index file");
            assert_eq!(u32::from_be_bytes(data[4..8].try_into().expect("4 bytes")), version.max(3));
            let ours = parse(&data).expect("readable");
            let want = theirs(&repo);
            assert_eq!(want.len(), 11);
            assert_eq!(ours.entries, want, "version {version}");
        }
    }

    #[test]
    fn the_tree_extension_gives_each_valid_directory_its_tree() {
        let (dir, repo) = written(2);
        // Resolve the conflict and drop the special entries, so a tree can
        // be written and cached.
        let mut index = repo.index().expect("index");
        for p in ["conflicted", "new-intent", "sparse/out.txt"] {
            let _ = index.remove_path(Path::new(p));
        }
        let _ = index.conflict_remove(Path::new("conflicted"));
        let root = index.write_tree().expect("tree");
        index.write().expect("write");
        let data = std::fs::read(dir.path().join(".git/index")).expect("index file");
        let ours = parse(&data).expect("readable");
        assert_eq!(ours.trees.get(b"".as_slice()), Some(&root));
        let tree = repo.find_tree(root).expect("root tree");
        let sub = |p: &str| tree.get_path(Path::new(p)).expect("subtree").id();
        assert_eq!(ours.trees.get(b"a/b".as_slice()), Some(&sub("a/b")));
        assert_eq!(ours.trees.get(b"z/y/x".as_slice()), Some(&sub("z/y/x")));
        // A change invalidates the directories above it.
        std::fs::write(dir.path().join("a/b/c.txt"), "changed").expect("write");
        index.add_path(Path::new("a/b/c.txt")).expect("add");
        index.write().expect("write");
        let data = std::fs::read(dir.path().join(".git/index")).expect("index file");
        let ours = parse(&data).expect("readable");
        assert!(!ours.trees.contains_key(b"a/b".as_slice()) && !ours.trees.contains_key(b"".as_slice()));
        assert_eq!(ours.trees.get(b"z/y/x".as_slice()), Some(&sub("z/y/x")));
    }

    #[test]
    fn restat_rewrites_the_stat_data_of_the_entries_named_and_nothing_else() {
        for version in [2, 3, 4] {
            let (dir, repo) = written(version);
            let file = dir.path().join(".git/index");
            let data = std::fs::read(&file).expect("index file");
            let (before, offsets) = parse_at(&data).expect("readable");
            let at = |path: &str| before.entries.iter().position(|e| e.path == path.as_bytes()).expect("entry");
            let (a, deep) = (at("a/b/c.txt"), at("z/y/x/w.py"));
            let words = |n: u32| -> StatWords { [n, n + 1, n + 2, n + 3, n + 4, n + 5, 0o100644, n + 7, n + 8, n + 9] };
            let out = restat(&data, &[(offsets[a], words(10)), (offsets[deep], words(100))]).expect("restat");
            assert_eq!(out.len(), data.len());
            let (after, again) = parse_at(&out).expect("readable after");
            assert_eq!(again, offsets);
            for (i, (old, new)) in before.entries.iter().zip(&after.entries).enumerate() {
                let n = if i == a {
                    10
                } else if i == deep {
                    100
                } else {
                    assert_eq!(old, new, "version {version}: entry {i} untouched");
                    continue;
                };
                let stat = Stat {
                    ctime: (n, n + 1),
                    mtime: (n + 2, n + 3),
                    dev: n + 4,
                    ino: n + 5,
                    uid: n + 7,
                    gid: n + 8,
                    size: n + 9,
                };
                assert_eq!(new, &IndexRecord { stat, ..old.clone() }, "version {version}");
            }
            // libgit2 checks the trailing checksum: it reads the new file.
            std::fs::write(&file, &out).expect("write");
            let mut index = repo.index().expect("index");
            index.read(true).expect("libgit2 reads it");
            let e = index.get_path(Path::new("z/y/x/w.py"), 0).expect("entry");
            assert_eq!((e.mtime.seconds(), e.ino, e.file_size), (102, 105, 109));
        }
    }

    #[test]
    fn restat_refuses_an_offset_outside_the_entries() {
        let (dir, _repo) = written(2);
        let data = std::fs::read(dir.path().join(".git/index")).expect("index file");
        assert!(restat(&data, &[(4, [0; 10])]).is_none());
        assert!(restat(&data, &[(data.len() - HASH - 8, [0; 10])]).is_none());
        assert_eq!(restat(&data, &[]).as_deref(), Some(data.as_slice()), "the same bytes, the same checksum");
    }

    #[test]
    fn what_it_cannot_describe_is_none() {
        let (dir, _repo) = written(2);
        let data = std::fs::read(dir.path().join(".git/index")).expect("index file");
        assert!(parse(&data).is_some());
        // Every truncation, and a wrong signature or version.
        for len in 0..data.len() - HASH {
            assert!(parse(&[&data[..len], &[0u8; HASH][..]].concat()).is_none(), "truncated at {len}");
        }
        let mut bad = data.clone();
        bad[0] = b'X';
        assert!(parse(&bad).is_none());
        let mut bad = data.clone();
        bad[7] = 9;
        assert!(parse(&bad).is_none());
        // A required extension (a split index's `link`) before the checksum.
        let end = data.len() - HASH;
        let link = [&data[..end], b"link", &0u32.to_be_bytes()[..], &data[end..]].concat();
        assert!(parse(&link).is_none());
        let optional = [&data[..end], b"ZZZZ", &0u32.to_be_bytes()[..], &data[end..]].concat();
        assert!(parse(&optional).is_some());
    }
}
