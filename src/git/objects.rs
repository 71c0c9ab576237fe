//! Writing the few objects retry-run needs (blobs of working-tree files,
//! trees that describe a state) into the in-memory object database only.
//!
//! libgit2's `git_odb_write` first *freshens* an object that already exists:
//! it touches the mtime of the loose object or of the whole pack file, in
//! the user's `.git`. So every object here is hashed first and written only
//! when no backend has it; the write then lands in the mempack backend,
//! which has the highest priority. Trees are serialised here too, rather
//! than by `TreeUpdateBuilder`, which also validates every entry it inserts
//! by reading it (a third of the cost, measured).

use std::collections::BTreeMap;

use git2::{ObjectType, Odb, Oid, Repository};

use super::{GitError, ctx};

/// A tree entry's id and git file mode.
pub(super) type Leaf = (Oid, i32);

pub(super) const TREE_MODE: i32 = 0o040000;

pub(super) struct ObjectWriter<'r> {
    odb: Odb<'r>,
}

impl<'r> ObjectWriter<'r> {
    /// The repository must already have its in-memory backend
    /// ([`super::Repo::use_memory_odb`]).
    pub fn new(repo: &'r Repository) -> Result<Self, GitError> {
        Ok(ObjectWriter { odb: repo.odb().map_err(ctx(|| "cannot open the object database".into()))? })
    }

    fn put(&self, kind: ObjectType, data: &[u8]) -> Result<Oid, GitError> {
        let oid = Oid::hash_object(kind, data).map_err(ctx(|| "cannot hash an object".into()))?;
        if !self.odb.exists(oid) {
            self.odb.write(kind, data).map_err(ctx(|| format!("cannot store object {oid} in memory")))?;
        }
        Ok(oid)
    }

    pub fn blob(&self, data: &[u8]) -> Result<Oid, GitError> {
        self.put(ObjectType::Blob, data)
    }

    /// The tree `base` with `updates` applied (a path to a new entry, or to
    /// `None` to remove it). Returns the empty tree when nothing is left.
    pub fn tree(&self, repo: &Repository, base: Option<Oid>, updates: &[(Vec<u8>, Option<Leaf>)]) -> Result<Oid, GitError> {
        let mut rel: Vec<(&[u8], Option<Leaf>)> = updates.iter().map(|(p, l)| (p.as_slice(), *l)).collect();
        // Sorted, every update under one directory sits in one run.
        rel.sort_by(|a, b| a.0.cmp(b.0));
        match self.subtree(repo, base, &rel)? {
            Some(oid) => Ok(oid),
            None => self.put(ObjectType::Tree, b""),
        }
    }

    fn subtree(&self, repo: &Repository, base: Option<Oid>, updates: &[(&[u8], Option<Leaf>)]) -> Result<Option<Oid>, GitError> {
        let mut entries: BTreeMap<Vec<u8>, Leaf> = BTreeMap::new();
        if let Some(id) = base {
            let tree = repo.find_tree(id).map_err(ctx(|| format!("cannot read tree {id}")))?;
            entries.extend(tree.iter().map(|e| (e.name_bytes().to_vec(), (e.id(), e.filemode()))));
        }
        let mut i = 0;
        while i < updates.len() {
            let (path, leaf) = updates[i];
            match path.iter().position(|&b| b == b'/') {
                None => {
                    match leaf {
                        Some(l) => entries.insert(path.to_vec(), l),
                        None => entries.remove(path),
                    };
                    i += 1;
                }
                Some(slash) => {
                    // Every update under `dir/` sits next to this one in sorted order.
                    let dir = &path[..slash];
                    let end = i + updates[i..].iter().take_while(|(p, _)| p.len() > slash && &p[..=slash] == &path[..=slash]).count();
                    let inner: Vec<(&[u8], Option<Leaf>)> = updates[i..end].iter().map(|(p, l)| (&p[slash + 1..], *l)).collect();
                    let sub_base = entries.get(dir).filter(|(_, m)| *m == TREE_MODE).map(|(id, _)| *id);
                    match self.subtree(repo, sub_base, &inner)? {
                        Some(id) => entries.insert(dir.to_vec(), (id, TREE_MODE)),
                        None => entries.remove(dir),
                    };
                    i = end;
                }
            }
        }
        if entries.is_empty() {
            return Ok(None);
        }
        self.put(ObjectType::Tree, &serialize(&entries)).map(Some)
    }
}

/// A tree object's bytes: entries in git's order (a tree's name sorts as if
/// it ended in `/`), each `MODE NAME\0<20-byte id>`.
fn serialize(entries: &BTreeMap<Vec<u8>, Leaf>) -> Vec<u8> {
    let key = |name: &[u8], mode: i32| -> Vec<u8> {
        let mut k = name.to_vec();
        if mode == TREE_MODE {
            k.push(b'/');
        }
        k
    };
    let mut sorted: Vec<(&Vec<u8>, &Leaf)> = entries.iter().collect();
    sorted.sort_by_cached_key(|(name, (_, mode))| key(name, *mode));
    let mut out = Vec::with_capacity(sorted.len() * 40);
    for (name, (id, mode)) in sorted {
        out.extend_from_slice(format!("{mode:o} ").as_bytes());
        out.extend_from_slice(name);
        out.push(0);
        out.extend_from_slice(id.as_bytes());
    }
    out
}
