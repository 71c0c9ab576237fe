//! The base's ignore rules, evaluated without its files on disk.
//!
//! git decides "ignored" from the `.gitignore` files in the working tree.
//! When a change edits those files, retry-run judges untracked files by the
//! rules of the *base* instead: every `.gitignore` blob of the base tree,
//! `info/exclude` and the user's global excludes, with git's precedence
//! (deeper files over shallower, the last matching line wins, and nothing
//! inside an ignored directory can be re-included).

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use git2::{ObjectType, Repository, Tree};
use ignore::gitignore::{Gitignore, GitignoreBuilder};

use super::{GitError, ctx};

pub(super) struct BaseIgnore {
    root: PathBuf,
    /// Directory (repository-relative, `b""` for the root) to its rules.
    levels: BTreeMap<Vec<u8>, Gitignore>,
    /// `info/exclude`, then the global excludes file.
    fallbacks: Vec<Gitignore>,
}

impl BaseIgnore {
    pub(super) fn from_tree(
        repo: &Repository,
        tree: &Tree,
        workdir: &Path,
        common_dir: &Path,
    ) -> Result<BaseIgnore, GitError> {
        let mut levels = BTreeMap::new();
        collect(repo, tree, &mut Vec::new(), workdir, &mut levels)?;
        let mut fallbacks = Vec::new();
        let mut exclude = GitignoreBuilder::new(workdir);
        let info = common_dir.join("info").join("exclude");
        if info.is_file() {
            // A malformed line only loses that line, as in git.
            let _ = exclude.add(&info);
        }
        if let Ok(gi) = exclude.build() {
            fallbacks.push(gi);
        }
        let (global, _) = GitignoreBuilder::new(workdir).build_global();
        fallbacks.push(global);
        Ok(BaseIgnore { root: workdir.to_path_buf(), levels, fallbacks })
    }

    /// Whether an untracked file at `path` is ignored by the base's rules.
    pub(super) fn is_ignored(&self, path: &[u8]) -> bool {
        let parts: Vec<&[u8]> = path.split(|&b| b == b'/').collect();
        // A parent directory that is ignored hides everything inside it.
        for depth in 1..=parts.len() {
            let prefix = parts[..depth].join(&b'/');
            let is_dir = depth < parts.len();
            if self.matched(&prefix, is_dir, &parts[..depth - 1]) {
                return true;
            }
        }
        false
    }

    fn matched(&self, path: &[u8], is_dir: bool, parent_dirs: &[&[u8]]) -> bool {
        let abs = self.root.join(OsStr::from_bytes(path));
        // Deepest .gitignore first: it overrides the ones above it.
        for depth in (0..=parent_dirs.len()).rev() {
            let dir = parent_dirs[..depth].join(&b'/');
            if let Some(gi) = self.levels.get(&dir) {
                let m = gi.matched(&abs, is_dir);
                if m.is_ignore() {
                    return true;
                }
                if m.is_whitelist() {
                    return false;
                }
            }
        }
        for gi in &self.fallbacks {
            let m = gi.matched(&abs, is_dir);
            if !m.is_none() {
                return m.is_ignore();
            }
        }
        false
    }
}

fn collect(
    repo: &Repository,
    tree: &Tree,
    dir: &mut Vec<u8>,
    workdir: &Path,
    levels: &mut BTreeMap<Vec<u8>, Gitignore>,
) -> Result<(), GitError> {
    for entry in tree.iter() {
        let name = entry.name_bytes();
        match entry.kind() {
            Some(ObjectType::Tree) => {
                let sub = repo.find_tree(entry.id()).map_err(ctx(|| "cannot read a tree of the base".into()))?;
                let len = dir.len();
                if !dir.is_empty() {
                    dir.push(b'/');
                }
                dir.extend_from_slice(name);
                collect(repo, &sub, dir, workdir, levels)?;
                dir.truncate(len);
            }
            Some(ObjectType::Blob) if name == b".gitignore" => {
                let blob = repo.find_blob(entry.id()).map_err(ctx(|| "cannot read a .gitignore of the base".into()))?;
                let mut b = GitignoreBuilder::new(workdir.join(OsStr::from_bytes(dir)));
                for line in String::from_utf8_lossy(blob.content()).lines() {
                    let _ = b.add_line(None, line);
                }
                if let Ok(gi) = b.build() {
                    levels.insert(dir.clone(), gi);
                }
            }
            _ => {}
        }
    }
    Ok(())
}
