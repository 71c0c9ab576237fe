//! What an attempt must never change outside its worktree, watched from
//! outside the sandbox, in every sandbox mode:
//!
//! - the user's own checkout: its HEAD, branches and tags (but retry-run's
//!   own `retry-run/<task>` branches), its index, and
//!   the stat data of every file git does not ignore ([`CheckoutState`]);
//! - the repository's git machinery shared by every worktree: `config`,
//!   `config.worktree`, `hooks/` and `info/`, copied before an attempt and
//!   put back after it when the attempt changed them ([`Machinery`]).

use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::Repo;

/// The stat data that tells a file changed: size, times, inode, mode.
type Stat = (u64, i64, i64, i64, i64, u64, u32);

fn stat_of(m: &std::fs::Metadata) -> Stat {
    (m.size(), m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec(), m.ino(), m.mode())
}

/// A fingerprint of the user's checkout.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckoutState {
    /// Every file not ignored, by path relative to the checkout.
    files: HashMap<PathBuf, Stat>,
    /// `HEAD`, `index`, and each branch and tag, by name.
    git: BTreeMap<String, String>,
}

impl CheckoutState {
    /// Reads the state of the checkout of `repo` (its working directory),
    /// leaving out `skip` (a worktree root inside it). Both cores walk it.
    pub fn read(repo: &Repo, skip: &Path) -> Option<CheckoutState> {
        let root = repo.workdir()?.to_path_buf();
        let files = Mutex::new(HashMap::new());
        let skip = skip.to_path_buf();
        let walker = ::ignore::WalkBuilder::new(&root)
            .hidden(false)
            .parents(false)
            .git_global(true)
            .git_ignore(true)
            .git_exclude(true)
            .require_git(false)
            .ignore(false)
            .threads(2)
            .filter_entry(move |e| e.file_name() != ".git" && e.path() != skip)
            .build_parallel();
        walker.run(|| {
            let files = &files;
            let root = &root;
            Box::new(move |entry| {
                if let Ok(e) = entry
                    && e.depth() > 0
                    && let Ok(m) = e.path().symlink_metadata()
                    && !m.is_dir()
                    && let Ok(rel) = e.path().strip_prefix(root)
                    && let Ok(mut f) = files.lock()
                {
                    f.insert(rel.to_path_buf(), stat_of(&m));
                }
                ::ignore::WalkState::Continue
            })
        });
        let mut git = BTreeMap::new();
        let dir = repo.git_dir();
        git.insert("HEAD".to_string(), std::fs::read_to_string(dir.join("HEAD")).unwrap_or_default());
        if let Ok(m) = std::fs::symlink_metadata(dir.join("index")) {
            git.insert("index".to_string(), format!("{:?}", stat_of(&m)));
        }
        if let Ok(refs) = repo.repo.references() {
            for r in refs.flatten() {
                let Ok(name) = r.name() else { continue };
                // `retry-run/<task>` branches are retry-run's own (another
                // task may finish meanwhile); every other branch and tag is the user's.
                let ours = name.starts_with("refs/heads/retry-run/");
                if (name.starts_with("refs/heads/") || name.starts_with("refs/tags/")) && !ours {
                    let target = r.target().map(|o| o.to_string()).unwrap_or_default();
                    git.insert(name.to_string(), target);
                }
            }
        }
        Some(CheckoutState { files: files.into_inner().unwrap_or_default(), git })
    }

    /// What changed since `before`: file paths (relative to the checkout)
    /// and git state as `.git/HEAD`, `.git/index`, `refs/heads/x`. Pure.
    pub fn changed_since(&self, before: &CheckoutState) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for (p, s) in &self.files {
            if before.files.get(p) != Some(s) {
                out.push(p.display().to_string());
            }
        }
        for p in before.files.keys() {
            if !self.files.contains_key(p) {
                out.push(p.display().to_string());
            }
        }
        let names = |k: &String| if k.starts_with("refs/") { k.clone() } else { format!(".git/{k}") };
        for (k, v) in &self.git {
            if before.git.get(k) != Some(v) {
                out.push(names(k));
            }
        }
        for k in before.git.keys() {
            if !self.git.contains_key(k) {
                out.push(names(k));
            }
        }
        out.sort();
        out.dedup();
        out
    }
}

/// One file of the machinery: its mode and bytes (a symlink's target).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Saved {
    mode: u32,
    link: bool,
    bytes: Vec<u8>,
}

/// A copy of `config`, `config.worktree`, `hooks/**` and `info/**` of the
/// common git directory.
#[derive(Debug, Clone, Default)]
pub struct Machinery {
    files: BTreeMap<String, Saved>,
}

const MACHINERY: [&str; 4] = ["config", "config.worktree", "hooks", "info"];

impl Machinery {
    pub fn take(common: &Path) -> Machinery {
        let mut m = Machinery::default();
        for name in MACHINERY {
            save(&mut m.files, common, name);
        }
        m
    }

    /// Puts back what changed since `self` was taken: changed and removed
    /// files written again, added ones removed. Returns what it restored
    /// (`config`, `hooks/pre-commit`), and what it could not, with why.
    pub fn restore(&self, common: &Path) -> (Vec<String>, Vec<String>) {
        let now = Machinery::take(common);
        let (mut done, mut failed) = (Vec::new(), Vec::new());
        for (name, saved) in &self.files {
            if now.files.get(name) == Some(saved) {
                continue;
            }
            let path = common.join(name);
            let r = (|| -> std::io::Result<()> {
                if let Ok(m) = std::fs::symlink_metadata(&path)
                    && (m.is_dir() || m.file_type().is_symlink() || saved.link)
                {
                    if m.is_dir() {
                        std::fs::remove_dir_all(&path)?;
                    } else {
                        std::fs::remove_file(&path)?;
                    }
                }
                if let Some(parent) = path.parent() {
                    std::fs::create_dir_all(parent)?;
                }
                if saved.link {
                    std::os::unix::fs::symlink(String::from_utf8_lossy(&saved.bytes).as_ref(), &path)?;
                } else {
                    std::fs::write(&path, &saved.bytes)?;
                    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(saved.mode & 0o7777))?;
                }
                Ok(())
            })();
            match r {
                Ok(()) => done.push(name.clone()),
                Err(e) => failed.push(format!("{name}: {e}")),
            }
        }
        for name in now.files.keys().filter(|n| !self.files.contains_key(*n)) {
            match std::fs::remove_file(common.join(name)) {
                Ok(()) => done.push(name.clone()),
                Err(e) => failed.push(format!("{name}: {e}")),
            }
        }
        done.sort();
        (done, failed)
    }
}

fn save(files: &mut BTreeMap<String, Saved>, common: &Path, name: &str) {
    let path = common.join(name);
    let Ok(meta) = std::fs::symlink_metadata(&path) else { return };
    if meta.is_dir() {
        let Ok(rd) = std::fs::read_dir(&path) else { return };
        for e in rd.flatten() {
            save(files, common, &format!("{name}/{}", e.file_name().to_string_lossy()));
        }
    } else if meta.file_type().is_symlink() {
        let target = std::fs::read_link(&path).map(|t| t.as_os_str().to_string_lossy().into_owned()).unwrap_or_default();
        files.insert(name.to_string(), Saved { mode: meta.permissions().mode(), link: true, bytes: target.into_bytes() });
    } else if let Ok(bytes) = std::fs::read(&path) {
        files.insert(name.to_string(), Saved { mode: meta.permissions().mode(), link: false, bytes });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_are_named_once() {
        let mut before = CheckoutState::default();
        before.files.insert("a.txt".into(), (1, 0, 0, 0, 0, 1, 0o100644));
        before.files.insert("gone.txt".into(), (1, 0, 0, 0, 0, 2, 0o100644));
        before.git.insert("refs/heads/main".into(), "abc".into());
        before.git.insert("HEAD".into(), "ref: refs/heads/main\n".into());
        let mut after = before.clone();
        after.files.insert("a.txt".into(), (2, 0, 0, 0, 0, 1, 0o100644));
        after.files.remove(Path::new("gone.txt"));
        after.files.insert("new.txt".into(), (1, 0, 0, 0, 0, 3, 0o100644));
        after.git.insert("refs/heads/evil".into(), "def".into());
        after.git.insert("HEAD".into(), "ref: refs/heads/evil\n".into());
        assert_eq!(after.changed_since(&before), [".git/HEAD", "a.txt", "gone.txt", "new.txt", "refs/heads/evil"]);
        assert!(before.changed_since(&before.clone()).is_empty());
    }
}
