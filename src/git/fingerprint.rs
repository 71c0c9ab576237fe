//! The git machinery an agent must not touch: the repository's hooks and
//! config, and the worktree's link to the repository. Hashed before and
//! after an attempt; any change is reported (a `git-internal` scope
//! violation in the loop).

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::hash::sha256_hex;

/// Hash of each part, by name (`config`, `hooks/pre-commit`, `worktree/.git`, ...).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Fingerprint {
    pub parts: BTreeMap<String, String>,
}

impl Fingerprint {
    /// One hash over every part.
    pub fn digest(&self) -> String {
        let all: String = self.parts.iter().map(|(k, v)| format!("{k}\0{v}\n")).collect();
        sha256_hex(all.as_bytes())
    }

    /// The parts added, removed or changed since `before`.
    pub fn changed_since(&self, before: &Fingerprint) -> Vec<String> {
        let mut names: Vec<String> = self
            .parts
            .iter()
            .filter(|(k, v)| before.parts.get(*k) != Some(v))
            .map(|(k, _)| k.clone())
            .chain(before.parts.keys().filter(|k| !self.parts.contains_key(*k)).cloned())
            .collect();
        names.sort();
        names.dedup();
        names
    }
}

/// Fingerprints `<common>/config`, `<common>/config.worktree`,
/// `<common>/hooks/**`, `<common>/info/{attributes,exclude}`, and, for a
/// worktree, its `.git` file and its administrative directory's files.
pub fn fingerprint(common: &Path, worktree: Option<(&Path, &Path)>) -> Fingerprint {
    let mut f = Fingerprint::default();
    for name in ["config", "config.worktree", "info/attributes", "info/exclude"] {
        add(&mut f, name, &common.join(name));
    }
    add_tree(&mut f, "hooks", &common.join("hooks"));
    if let Some((wt, meta)) = worktree {
        add(&mut f, "worktree/.git", &wt.join(".git"));
        for name in ["gitdir", "commondir", "config.worktree"] {
            add(&mut f, &format!("worktree-admin/{name}"), &meta.join(name));
        }
    }
    f
}

fn add(f: &mut Fingerprint, name: &str, path: &Path) {
    let Ok(meta) = std::fs::symlink_metadata(path) else { return };
    let content = if meta.file_type().is_symlink() {
        std::fs::read_link(path).map(|t| t.as_os_str().to_string_lossy().into_owned().into_bytes()).unwrap_or_default()
    } else {
        std::fs::read(path).unwrap_or_default()
    };
    let mut bytes = format!("{:o}\0", meta.permissions().mode()).into_bytes();
    bytes.extend_from_slice(&content);
    f.parts.insert(name.to_string(), sha256_hex(&bytes));
}

fn add_tree(f: &mut Fingerprint, name: &str, dir: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let child = format!("{name}/{}", e.file_name().to_string_lossy());
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            add_tree(f, &child, &e.path());
        } else {
            add(f, &child, &e.path());
        }
    }
}
