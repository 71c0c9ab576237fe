//! A tree's files with their entries, for the key under which a check's
//! earlier output is reused (`crate::outcome::reuse`): what a check with
//! `[[check]] inputs` can read of an attempt's snapshot.

use super::{GitError, Oid, Repo, ctx};

impl Repo {
    /// Every file of `tree` (blobs, symbolic links and submodule commits),
    /// in the tree's order: its path (lossy UTF-8) and `<mode> <id>`.
    pub fn tree_files(&self, tree: Oid) -> Result<Vec<(String, String)>, GitError> {
        let t = self.repo.find_tree(tree).map_err(ctx(|| format!("cannot read tree {tree}")))?;
        let mut out = Vec::new();
        t.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            if entry.kind() != Some(git2::ObjectType::Tree) {
                let path = format!("{dir}{}", String::from_utf8_lossy(entry.name_bytes()));
                out.push((path, format!("{:o} {}", entry.filemode(), entry.id())));
            }
            git2::TreeWalkResult::Ok
        })
        .map_err(ctx(|| format!("cannot read tree {tree}")))?;
        Ok(out)
    }
}
