//! Repositories built from a few files with the real `git`:
//!
//! ```ignore
//! let r = env.repo("repo").file("src/app.txt", "value = 1\n").file("retry-run.toml", toml).commit();
//! ```

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use super::TestEnv;

/// Files written into a new repository's directory as they are added;
/// [`RepoBuilder::commit`] makes them its first commit on `main`.
pub(crate) struct RepoBuilder<'a> {
    env: &'a TestEnv,
    root: PathBuf,
    gitlinks: Vec<(PathBuf, String)>,
}

impl<'a> RepoBuilder<'a> {
    pub(super) fn new(env: &'a TestEnv, root: PathBuf) -> RepoBuilder<'a> {
        std::fs::create_dir_all(&root).expect("create the repository's directory");
        RepoBuilder { env, root, gitlinks: Vec::new() }
    }

    /// A file with `content` (its directories created).
    pub(crate) fn file(self, rel: impl AsRef<Path>, content: impl AsRef<[u8]>) -> Self {
        let p = self.root.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("create the file's directory");
        }
        std::fs::write(&p, content).expect("write a file of the repository");
        self
    }

    /// An executable file (mode 755).
    pub(crate) fn executable(self, rel: impl AsRef<Path>, content: impl AsRef<[u8]>) -> Self {
        let p = self.root.join(rel.as_ref());
        let this = self.file(rel, content);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).expect("chmod 755");
        this
    }

    /// A symlink to `target`.
    pub(crate) fn symlink(self, rel: impl AsRef<Path>, target: impl AsRef<Path>) -> Self {
        std::os::unix::fs::symlink(target, self.root.join(rel)).expect("create a symlink");
        self
    }

    /// A submodule at `rel` pointing at commit `sha`, staged without a
    /// checkout (a gitlink in the index only).
    pub(crate) fn gitlink(mut self, rel: impl AsRef<Path>, sha: &str) -> Self {
        self.gitlinks.push((rel.as_ref().to_path_buf(), sha.to_string()));
        self
    }

    /// `git init` on `main`, nothing committed; returns the repository's path.
    pub(crate) fn init(self) -> PathBuf {
        self.env.git(&self.root, &["init", "-q", "-b", "main"]);
        self.root
    }

    /// `git init` on `main` and every file committed as `base`; returns the
    /// repository's path.
    pub(crate) fn commit(self) -> PathBuf {
        let (env, gitlinks) = (self.env, self.gitlinks.clone());
        let root = self.init();
        env.git(&root, &["add", "-A"]);
        for (rel, sha) in &gitlinks {
            let info = format!("160000,{sha},{}", rel.to_str().expect("a UTF-8 gitlink path"));
            env.git(&root, &["update-index", "--add", "--cacheinfo", &info]);
        }
        env.git(&root, &["commit", "-q", "--allow-empty", "-m", "base"]);
        root
    }
}
