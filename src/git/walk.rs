//! The leaf entries that differ between two trees.
//!
//! Subtrees with equal ids are skipped without being read, so the cost
//! follows the size of the change, not of the repository (libgit2's own
//! tree-to-tree diff reads every subtree). The new side may carry an
//! *overlay*: paths whose entries replace the tree's (or remove them, with
//! `None`), which is how the working tree is described without writing a
//! single object.

use std::collections::BTreeMap;

use git2::{Oid, Repository};

use super::{GitError, ctx};

/// A tree entry's id and git file mode.
pub(super) type Leaf = (Oid, i32);

/// A changed leaf: its path, the old side and the new side.
pub(super) type ChangedLeaf = (Vec<u8>, Option<Leaf>, Option<Leaf>);

pub(super) const TREE_MODE: i32 = 0o040000;

/// Every leaf that differs between `old` and `new` + `overlay`, sorted by
/// path. `overlay` holds repository-relative paths.
pub(super) fn changed_leaves(
    repo: &Repository,
    old: Option<Oid>,
    new: Option<Oid>,
    overlay: &[(Vec<u8>, Option<Leaf>)],
) -> Result<Vec<ChangedLeaf>, GitError> {
    let rel: Vec<(&[u8], Option<Leaf>)> = overlay.iter().map(|(p, l)| (p.as_slice(), *l)).collect();
    let mut out = Vec::new();
    walk(repo, old, new, &rel, &mut Vec::new(), &mut out)?;
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

fn entries(repo: &Repository, tree: Option<Oid>) -> Result<BTreeMap<Vec<u8>, Leaf>, GitError> {
    let Some(id) = tree else {
        return Ok(BTreeMap::new());
    };
    let tree = repo.find_tree(id).map_err(ctx(|| format!("cannot read tree {id}")))?;
    Ok(tree.iter().map(|e| (e.name_bytes().to_vec(), (e.id(), e.filemode()))).collect())
}

fn walk(
    repo: &Repository,
    old: Option<Oid>,
    new: Option<Oid>,
    overlay: &[(&[u8], Option<Leaf>)],
    prefix: &mut Vec<u8>,
    out: &mut Vec<ChangedLeaf>,
) -> Result<(), GitError> {
    if overlay.is_empty() && old == new {
        return Ok(());
    }
    let a = entries(repo, old)?;
    let mut b = entries(repo, new)?;
    // The overlay's entries below each top-level directory, by its name.
    type Below<'p> = BTreeMap<&'p [u8], Vec<(&'p [u8], Option<Leaf>)>>;
    let mut below: Below = BTreeMap::new();
    for &(path, leaf) in overlay {
        match path.iter().position(|&c| c == b'/') {
            None => match leaf {
                Some(l) => {
                    b.insert(path.to_vec(), l);
                }
                None => {
                    b.remove(path);
                }
            },
            Some(i) => below.entry(&path[..i]).or_default().push((&path[i + 1..], leaf)),
        }
    }
    let mut names: Vec<&[u8]> = a.keys().chain(b.keys()).map(Vec::as_slice).chain(below.keys().copied()).collect();
    names.sort_unstable();
    names.dedup();
    let tree_of = |l: Option<Leaf>| l.filter(|(_, m)| *m == TREE_MODE).map(|(id, _)| id);
    let leaf_of = |l: Option<Leaf>| l.filter(|(_, m)| *m != TREE_MODE);
    for name in names {
        let (x, y) = (a.get(name).copied(), b.get(name).copied());
        let inner = below.get(name);
        if inner.is_none() && x == y {
            continue;
        }
        let len = prefix.len();
        if !prefix.is_empty() {
            prefix.push(b'/');
        }
        prefix.extend_from_slice(name);
        let (xt, yt) = (tree_of(x), tree_of(y));
        if xt.is_some() || yt.is_some() || inner.is_some() {
            walk(repo, xt, yt, inner.map_or(&[][..], Vec::as_slice), prefix, out)?;
        }
        // A file where a directory was (or the reverse) is a leaf change too.
        let (xl, yl) = (leaf_of(x), leaf_of(y));
        if xl != yl {
            out.push((prefix.clone(), xl, yl));
        }
        prefix.truncate(len);
    }
    Ok(())
}
