//! The leaf entries that differ between two trees.
//!
//! Subtrees with equal ids are skipped without being read, so the cost
//! follows the size of the change, not of the repository (libgit2's own
//! tree-to-tree diff reads every subtree). The new side may carry an
//! *overlay*: paths whose entries replace the tree's (or remove them, with
//! `None`), which is how the working tree is described without writing a
//! single object.
//!
//! Trees are read as raw objects and their entries borrowed from the bytes
//! (no parsed tree, no copied names). A wide change is walked on two
//! threads: the top levels are opened here until there are a few
//! directories to share, then each thread, with its own repository handle,
//! takes the next directory until none is left.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use git2::{ObjectType, Oid, Repository};

use super::{GitError, ctx};

/// A tree entry's id and git file mode.
pub(super) type Leaf = (Oid, i32);

/// A changed leaf: its path, the old side and the new side.
pub(super) type ChangedLeaf = (Vec<u8>, Option<Leaf>, Option<Leaf>);

pub(super) const TREE_MODE: i32 = 0o040000;

/// Directories opened before the work is shared between two threads.
const SHARE_AT: usize = 8;

/// How deep the top levels are opened looking for [`SHARE_AT`] directories.
const SHARE_DEPTH: usize = 3;

/// An overlay entry, relative to the directory it lies in.
type Overlaid<'p> = (&'p [u8], Option<Leaf>);

/// A pair of directories still to compare.
struct Pending<'p> {
    prefix: Vec<u8>,
    old: Option<Oid>,
    new: Option<Oid>,
    overlay: Vec<Overlaid<'p>>,
}

/// Every leaf that differs between `old` and `new` + `overlay`, sorted by
/// path. `overlay` holds repository-relative paths.
pub(super) fn changed_leaves(
    repo: &Repository,
    old: Option<Oid>,
    new: Option<Oid>,
    overlay: &[(Vec<u8>, Option<Leaf>)],
) -> Result<Vec<ChangedLeaf>, GitError> {
    let odb = repo.odb().map_err(ctx(|| "cannot open the object database".to_string()))?;
    let rel: Vec<Overlaid> = overlay.iter().map(|(p, l)| (p.as_slice(), *l)).collect();
    let mut out = Vec::new();
    let mut frontier = vec![Pending { prefix: Vec::new(), old, new, overlay: rel }];
    for _ in 0..SHARE_DEPTH {
        if frontier.is_empty() || frontier.len() >= SHARE_AT {
            break;
        }
        let mut next = Vec::new();
        for p in &frontier {
            next.extend(level(&odb, p, &mut out)?);
        }
        frontier = next;
    }
    if frontier.len() < 2 {
        for p in &frontier {
            walk(&odb, p, &mut out)?;
        }
    } else {
        walk_shared(repo, &odb, &frontier, &mut out)?;
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// Walks `pending` on this thread and a second one, each taking the next
/// directory in turn. What the second handle cannot read (an object only in
/// this handle's memory) is walked again here, with its error if any.
fn walk_shared(
    repo: &Repository,
    odb: &git2::Odb,
    pending: &[Pending],
    out: &mut Vec<ChangedLeaf>,
) -> Result<(), GitError> {
    let next = AtomicUsize::new(0);
    let git_dir = repo.path().to_path_buf();
    let claim = |odb: &git2::Odb, out: &mut Vec<ChangedLeaf>, failed: &mut Vec<usize>| loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        let Some(p) = pending.get(i) else { break };
        let mut mine = Vec::new();
        match walk(odb, p, &mut mine) {
            Ok(()) => out.append(&mut mine),
            Err(_) => failed.push(i),
        }
    };
    let (mut failed, other) = std::thread::scope(|s| {
        let other = s.spawn(|| {
            let (mut found, mut failed) = (Vec::new(), Vec::new());
            // Without a second handle, this thread takes nothing.
            if let Ok(second) = Repository::open(&git_dir)
                && let Ok(odb) = second.odb()
            {
                claim(&odb, &mut found, &mut failed);
            }
            (found, failed)
        });
        let mut failed = Vec::new();
        claim(odb, out, &mut failed);
        (failed, other.join())
    });
    let (mut found, theirs) = super::joined(other.map(Ok), std::path::Path::new("."), "the tree walk's second thread")?;
    out.append(&mut found);
    failed.extend(theirs);
    failed.sort_unstable();
    for i in failed {
        walk(odb, &pending[i], out)?;
    }
    Ok(())
}

/// Compares `p` and everything below it, depth first.
fn walk(odb: &git2::Odb, p: &Pending, out: &mut Vec<ChangedLeaf>) -> Result<(), GitError> {
    for sub in level(odb, p, out)? {
        walk(odb, &sub, out)?;
    }
    Ok(())
}

/// One directory: each changed leaf goes to `out`; the changed
/// subdirectories are returned.
fn level<'p>(odb: &git2::Odb, p: &Pending<'p>, out: &mut Vec<ChangedLeaf>) -> Result<Vec<Pending<'p>>, GitError> {
    if p.overlay.is_empty() && p.old == p.new {
        return Ok(Vec::new());
    }
    let (old, new) = (p.old.map(|id| read_tree(odb, id)).transpose()?, p.new.map(|id| read_tree(odb, id)).transpose()?);
    if let (true, Some(o), Some(n), Some(oid), Some(nid)) = (p.overlay.is_empty(), &old, &new, p.old, p.new) {
        return lockstep(p, (oid, o.data()), (nid, n.data()), out);
    }
    let a = match (&old, p.old) {
        (Some(o), Some(id)) => parse(id, o.data())?,
        _ => Vec::new(),
    };
    let mut b = match (&new, p.new) {
        (Some(o), Some(id)) => parse(id, o.data())?,
        _ => Vec::new(),
    };
    // The overlay: entries of this directory, and what lies below each of
    // its subdirectories, by name.
    let mut here: BTreeMap<&[u8], Option<Leaf>> = BTreeMap::new();
    let mut below: BTreeMap<&[u8], Vec<Overlaid>> = BTreeMap::new();
    for &(path, leaf) in &p.overlay {
        match path.iter().position(|&c| c == b'/') {
            None => {
                here.insert(path, leaf);
            }
            Some(i) => below.entry(&path[..i]).or_default().push((&path[i + 1..], leaf)),
        }
    }
    if !here.is_empty() {
        b.retain(|(name, _)| !here.contains_key(name));
        b.extend(here.iter().filter_map(|(name, leaf)| leaf.map(|l| (*name, l))));
        b.sort_unstable_by(|x, y| x.0.cmp(y.0));
    }
    let mut subs = Vec::new();
    // Both sides and the overlay's directories are sorted by name: walk
    // them together, one name at a time.
    let (mut a, mut b, mut below) = (a.iter().peekable(), b.iter().peekable(), below.into_iter().peekable());
    loop {
        let name =
            [a.peek().map(|e| e.0), b.peek().map(|e| e.0), below.peek().map(|e| e.0)].into_iter().flatten().min();
        let Some(name) = name else { break };
        let x = a.next_if(|e| e.0 == name).map(|e| e.1);
        let y = b.next_if(|e| e.0 == name).map(|e| e.1);
        let inner = below.next_if(|e| e.0 == name).map(|e| e.1);
        if inner.is_none() && x == y {
            continue;
        }
        note(&p.prefix, name, (x, y), inner, out, &mut subs);
    }
    Ok(subs)
}

/// A name whose entries differ: its leaf change to `out`, and the
/// directory below it (with the overlay's entries there) to `subs`. A file
/// where a directory was (or the reverse) is a leaf change too.
fn note<'p>(
    prefix: &[u8],
    name: &[u8],
    (x, y): (Option<Leaf>, Option<Leaf>),
    inner: Option<Vec<Overlaid<'p>>>,
    out: &mut Vec<ChangedLeaf>,
    subs: &mut Vec<Pending<'p>>,
) {
    let tree_of = |l: Option<Leaf>| l.filter(|(_, m)| *m == TREE_MODE).map(|(id, _)| id);
    let leaf_of = |l: Option<Leaf>| l.filter(|(_, m)| *m != TREE_MODE);
    let mut path = Vec::with_capacity(prefix.len() + 1 + name.len());
    path.extend_from_slice(prefix);
    if !path.is_empty() {
        path.push(b'/');
    }
    path.extend_from_slice(name);
    let (xl, yl) = (leaf_of(x), leaf_of(y));
    if xl != yl {
        out.push((path.clone(), xl, yl));
    }
    let (xt, yt) = (tree_of(x), tree_of(y));
    if xt.is_some() || yt.is_some() || inner.is_some() {
        subs.push(Pending { prefix: path, old: xt, new: yt, overlay: inner.unwrap_or_default() });
    }
}

/// Two trees with no overlay, compared in the order git writes their
/// entries (by name, a directory's as if it ended in `/`), side by side:
/// the records both hold byte for byte (mode, name and id: most of a
/// changed directory) are stepped over unparsed. Trees out of git's order
/// (which git itself would not write) may pair wrongly.
fn lockstep<'p>(
    p: &Pending<'p>,
    (aid, mut a): (Oid, &[u8]),
    (bid, mut b): (Oid, &[u8]),
    out: &mut Vec<ChangedLeaf>,
) -> Result<Vec<Pending<'p>>, GitError> {
    let mut subs = Vec::new();
    loop {
        while let Some(n) = memchr::memchr(0, a).map(|nul| nul + 21).filter(|&n| n <= a.len()) {
            if b.get(..n) != Some(&a[..n]) {
                break;
            }
            (a, b) = (&a[n..], &b[n..]);
        }
        let x = if a.is_empty() { None } else { Some(entry(aid, a)?) };
        let y = if b.is_empty() { None } else { Some(entry(bid, b)?) };
        let (x, y) = match (x, y) {
            (None, None) => break,
            (Some(x), Some(y)) => match git_order((x.0, x.1), (y.0, y.1)) {
                std::cmp::Ordering::Less => (Some(x), None),
                std::cmp::Ordering::Greater => (None, Some(y)),
                std::cmp::Ordering::Equal => (Some(x), Some(y)),
            },
            other => other,
        };
        let Some((name, _, _)) = x.or(y) else { break };
        if let Some((_, _, rest)) = x {
            a = rest;
        }
        if let Some((_, _, rest)) = y {
            b = rest;
        }
        let (xl, yl) = (x.map(|e| e.1), y.map(|e| e.1));
        // The same entry written with other bytes (a mode's leading zero).
        if xl != yl {
            note(&p.prefix, name, (xl, yl), None, out, &mut subs);
        }
    }
    Ok(subs)
}

/// git's order of two tree entries: by name, a directory's as if it ended
/// in `/`. Equal only for one name of one kind (both directories or both
/// not).
fn git_order((an, (_, am)): (&[u8], Leaf), (bn, (_, bm)): (&[u8], Leaf)) -> std::cmp::Ordering {
    let n = an.len().min(bn.len());
    an[..n].cmp(&bn[..n]).then_with(|| {
        let end = |name: &[u8], mode: i32| name.get(n).copied().or((mode == TREE_MODE).then_some(b'/'));
        end(an, am).cmp(&end(bn, bm))
    })
}

/// The raw bytes of tree `id`.
pub(super) fn read_tree<'o>(odb: &'o git2::Odb, id: Oid) -> Result<git2::OdbObject<'o>, GitError> {
    let obj = odb.read(id).map_err(ctx(|| format!("cannot read tree {id}")))?;
    if obj.kind() != ObjectType::Tree {
        return Err(malformed(id, "not a tree"));
    }
    Ok(obj)
}

fn malformed(id: Oid, what: &str) -> GitError {
    GitError::Git {
        what: format!("cannot read tree {id}"),
        source: git2::Error::from_str(&format!("{what}; run git fsck to check the repository")),
    }
}

/// A tree's entries, borrowed from its bytes, sorted by name.
pub(super) fn parse(id: Oid, mut data: &[u8]) -> Result<Vec<(&[u8], Leaf)>, GitError> {
    let mut entries = Vec::with_capacity(data.len() / 40);
    while !data.is_empty() {
        let (name, leaf, rest) = entry(id, data)?;
        entries.push((name, leaf));
        data = rest;
    }
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    Ok(entries)
}

/// The first entry of tree `id`'s bytes `data`: its name, its leaf, and the
/// bytes after it.
fn entry(id: Oid, data: &[u8]) -> Result<(&[u8], Leaf, &[u8]), GitError> {
    let sp = data.iter().position(|&c| c == b' ').ok_or_else(|| malformed(id, "an entry has no mode"))?;
    let digits = &data[..sp];
    if digits.is_empty() || digits.len() > 7 || !digits.iter().all(|d| (b'0'..=b'7').contains(d)) {
        return Err(malformed(id, "an entry's mode is not octal"));
    }
    let mode = digits.iter().fold(0i32, |m, &d| m * 8 + i32::from(d - b'0'));
    let rest = &data[sp + 1..];
    let nul = memchr::memchr(0, rest).ok_or_else(|| malformed(id, "an entry's name has no end"))?;
    let raw = rest.get(nul + 1..nul + 21).ok_or_else(|| malformed(id, "an entry's id is cut short"))?;
    let oid = Oid::from_bytes(raw).map_err(ctx(|| format!("cannot read tree {id}")))?;
    Ok((&rest[..nul], (oid, mode), &rest[nul + 21..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use git2::{Repository, TreeBuilder};

    /// A tree from `(path, content)` pairs, written into `repo`'s object
    /// database (which may be an in-memory one).
    fn tree(repo: &Repository, files: &[(&str, &str)]) -> Oid {
        fn build(repo: &Repository, files: &[(Vec<&str>, &str)]) -> Oid {
            let mut tb: TreeBuilder = repo.treebuilder(None).expect("treebuilder");
            let mut dirs: BTreeMap<&str, Vec<(Vec<&str>, &str)>> = BTreeMap::new();
            for (parts, content) in files {
                if parts.len() == 1 {
                    let blob = repo.blob(content.as_bytes()).expect("blob");
                    tb.insert(parts[0], blob, 0o100644).expect("insert");
                } else {
                    dirs.entry(parts[0]).or_default().push((parts[1..].to_vec(), content));
                }
            }
            for (name, below) in dirs {
                tb.insert(name, build(repo, &below), TREE_MODE).expect("insert");
            }
            tb.write().expect("write")
        }
        let split: Vec<(Vec<&str>, &str)> = files.iter().map(|(p, c)| (p.split('/').collect(), *c)).collect();
        build(repo, &split)
    }

    /// libgit2's own tree-to-tree diff, as changed leaves.
    fn oracle(repo: &Repository, old: Oid, new: Oid) -> Vec<(Vec<u8>, Option<Oid>, Option<Oid>)> {
        let (a, b) = (repo.find_tree(old).expect("old"), repo.find_tree(new).expect("new"));
        let diff = repo.diff_tree_to_tree(Some(&a), Some(&b), None).expect("diff");
        let id = |f: git2::DiffFile| Some(f.id()).filter(|id| !id.is_zero());
        let mut v: Vec<_> = diff
            .deltas()
            .map(|d| {
                let path = d.new_file().path_bytes().or(d.old_file().path_bytes()).expect("path").to_vec();
                (path, id(d.old_file()), id(d.new_file()))
            })
            .collect();
        v.sort();
        v
    }

    fn ids(leaves: Vec<ChangedLeaf>) -> Vec<(Vec<u8>, Option<Oid>, Option<Oid>)> {
        leaves.into_iter().map(|(p, a, b)| (p, a.map(|l| l.0), b.map(|l| l.0))).collect()
    }

    /// A base of 12 directories two levels deep (enough to share the walk
    /// between two threads) and a head that changes, adds and deletes in
    /// most of them, and turns a file into a directory.
    fn wide(repo: &Repository) -> (Oid, Oid) {
        let mut base: Vec<(String, String)> = Vec::new();
        for d in 0..12 {
            for f in 0..5 {
                base.push((format!("src/d{d:02}/s/f{f}.py"), format!("print({d}, {f})\n")));
            }
        }
        base.push(("top.txt".into(), "top\n".into()));
        base.push(("src/becomes_dir".into(), "file\n".into()));
        let mut head = base.clone();
        head.retain(|(p, _)| !p.ends_with("f4.py") && p != "src/becomes_dir");
        for (p, c) in head.iter_mut() {
            if p.ends_with("f0.py") {
                c.push_str("print('changed')\n");
            }
        }
        head.push(("src/d03/s/new.py".into(), "new\n".into()));
        head.push(("src/becomes_dir/inner.txt".into(), "inner\n".into()));
        fn as_str(v: &[(String, String)]) -> Vec<(&str, &str)> {
            v.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect()
        }
        (tree(repo, &as_str(&base)), tree(repo, &as_str(&head)))
    }

    #[test]
    fn a_wide_change_walked_on_two_threads_is_what_libgit2_finds() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = Repository::init(dir.path()).expect("init");
        let (base, head) = wide(&repo);
        let got = ids(changed_leaves(&repo, Some(base), Some(head), &[]).expect("walk"));
        assert_eq!(got, oracle(&repo, base, head));
        assert!(got.len() > 20, "{} changes", got.len());
        // The same from the other side.
        let back = ids(changed_leaves(&repo, Some(head), Some(base), &[]).expect("walk"));
        assert_eq!(back, oracle(&repo, head, base));
    }

    #[test]
    fn names_git_sorts_apart_from_bytes_and_kinds_that_change_are_what_libgit2_finds() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = Repository::init(dir.path()).expect("init");
        // git's order puts `a-b` and `a.c` before the directory `a` (as
        // `a/`), and the file `a` before them all.
        let base = tree(
            &repo,
            &[("a/x.txt", "x\n"), ("a-b", "1\n"), ("a.c", "2\n"), ("b", "file\n"), ("c/d/e.txt", "e\n"), ("z", "z\n")],
        );
        let head = tree(
            &repo,
            &[
                ("a", "now a file\n"),
                ("a-b", "1\n"),
                ("a.c", "changed\n"),
                ("b/inner.txt", "now a directory\n"),
                ("c/d/e.txt", "e\n"),
                ("c/d/f.txt", "f\n"),
                ("y", "new\n"),
            ],
        );
        for (old, new) in [(base, head), (head, base)] {
            let got = ids(changed_leaves(&repo, Some(old), Some(new), &[]).expect("walk"));
            assert_eq!(got, oracle(&repo, old, new));
        }
        // A mode that changes alone (the executable bit) is a change too.
        let blob = repo.blob(b"same\n").expect("blob");
        let with_mode = |mode: i32| {
            let mut tb = repo.treebuilder(None).expect("treebuilder");
            tb.insert("run.sh", blob, mode).expect("insert");
            tb.insert("zz", blob, 0o100644).expect("insert");
            tb.write().expect("write")
        };
        let got = changed_leaves(&repo, Some(with_mode(0o100644)), Some(with_mode(0o100755)), &[]).expect("walk");
        assert_eq!(got, vec![(b"run.sh".to_vec(), Some((blob, 0o100644)), Some((blob, 0o100755)))]);
    }

    #[test]
    fn objects_only_in_memory_are_walked_by_the_handle_that_has_them() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = Repository::init(dir.path()).expect("init");
        let odb = repo.odb().expect("odb");
        odb.add_new_mempack_backend(1000).expect("mempack");
        // Every object of both trees is in this handle's memory only: a
        // second handle on the same directory cannot read them.
        let (base, head) = wide(&repo);
        assert!(Repository::open(dir.path()).expect("open").find_tree(head).is_err());
        let got = ids(changed_leaves(&repo, Some(base), Some(head), &[]).expect("walk"));
        assert_eq!(got, oracle(&repo, base, head));
    }

    #[test]
    fn an_overlay_replaces_removes_and_adds_entries_at_any_depth() {
        let dir = tempfile::tempdir().expect("tempdir");
        let repo = Repository::init(dir.path()).expect("init");
        let base = tree(&repo, &[("a/b/c.txt", "c\n"), ("a/d.txt", "d\n"), ("e.txt", "e\n")]);
        let blob = repo.blob(b"new\n").expect("blob");
        let overlay = vec![
            (b"a/b/c.txt".to_vec(), Some((blob, 0o100644))),
            (b"e.txt".to_vec(), None),
            (b"x/y/z.txt".to_vec(), Some((blob, 0o100755))),
        ];
        let got = changed_leaves(&repo, Some(base), Some(base), &overlay).expect("walk");
        let paths: Vec<&[u8]> = got.iter().map(|(p, _, _)| p.as_slice()).collect();
        assert_eq!(paths, [&b"a/b/c.txt"[..], b"e.txt", b"x/y/z.txt"]);
        assert_eq!(got[1].2, None);
        assert_eq!(got[2].1, None);
        assert_eq!(got[2].2, Some((blob, 0o100755)));
    }

    #[test]
    fn a_malformed_tree_is_an_error_not_a_panic() {
        let id = Oid::from_bytes(&[0; 20]).expect("oid");
        for data in [&b"100644"[..], b"100644 name", b"10x644 name\0aaaaaaaaaaaaaaaaaaaa", b"100644 name\0short"] {
            let err = parse(id, data).expect_err("malformed");
            assert!(err.to_string().contains("git fsck"), "{err}");
        }
        let ok = parse(id, b"100644 b\0aaaaaaaaaaaaaaaaaaaa40000 a\0bbbbbbbbbbbbbbbbbbbb").expect("parse");
        assert_eq!(ok.iter().map(|e| e.0).collect::<Vec<_>>(), [&b"a"[..], b"b"]);
        assert_eq!(ok[0].1.1, TREE_MODE);
    }
}
