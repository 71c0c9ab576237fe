//! Test support: a hermetic environment, real git, the real binary.

pub mod fixture;

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub use fixture::{Fixture, HeadMode};

/// The environment every git and retry-run process of a test runs in: no
/// user or system config, a private HOME, fixed identities and dates.
pub fn hermetic(cmd: &mut Command, home: &Path) {
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("GIT_CONFIG_GLOBAL", home.join(".gitconfig"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Test Author")
        .env("GIT_AUTHOR_EMAIL", "author@example.com")
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_COMMITTER_NAME", "Test Committer")
        .env("GIT_COMMITTER_EMAIL", "committer@example.com")
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
        .env("LC_ALL", "C");
}

/// A temporary directory with a HOME inside it.
pub struct TestEnv {
    pub dir: tempfile::TempDir,
}

impl TestEnv {
    pub fn new() -> TestEnv {
        let dir = tempfile::tempdir().expect("a temporary directory");
        std::fs::create_dir(dir.path().join("home")).expect("create HOME");
        std::fs::write(
            dir.path().join("home/.gitconfig"),
            "[init]\n\tdefaultBranch = main\n[protocol \"file\"]\n\tallow = always\n",
        )
        .expect("write .gitconfig");
        TestEnv { dir }
    }

    pub fn home(&self) -> PathBuf {
        self.dir.path().join("home")
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// Runs git in `dir`; panics with its output when it fails.
    pub fn git(&self, dir: &Path, args: &[&str]) -> String {
        let out = self.git_raw(dir, args.iter().map(OsStr::new));
        assert!(
            out.status.success(),
            "git {args:?} failed in {}:\n{}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim_end().to_string()
    }

    pub fn git_raw<'a>(&self, dir: &Path, args: impl IntoIterator<Item = &'a OsStr>) -> Output {
        let mut cmd = Command::new("git");
        hermetic(&mut cmd, &self.home());
        cmd.current_dir(dir).args(args).output().expect("git runs")
    }

    /// Runs the real retry-run binary in `dir`.
    pub fn run(&self, dir: &Path, args: &[&str]) -> Run {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_retry-run"));
        hermetic(&mut cmd, &self.home());
        let out = cmd.current_dir(dir).args(args).output().expect("retry-run runs");
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }
}

#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{}\nstderr:\n{}", self.stdout, self.stderr))
    }

    #[track_caller]
    pub fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, code, "exit code\nstdout:\n{}\nstderr:\n{}", self.stdout, self.stderr);
        self
    }
}

/// Every fixture under `testdata-repos/`.
pub fn all_fixtures() -> Vec<Fixture> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata-repos");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("testdata-repos exists")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.extension() == Some(OsStr::new("toml")))
        .collect();
    names.sort();
    names.iter().map(|p| Fixture::load(p)).collect()
}

/// Every file under `root` (`.git` included): path -> (mode, content or link target).
pub fn files_under(root: &Path) -> BTreeMap<Vec<u8>, (u32, Vec<u8>)> {
    fn walk(dir: &Path, root: &Path, out: &mut BTreeMap<Vec<u8>, (u32, Vec<u8>)>) {
        for entry in std::fs::read_dir(dir).expect("readable dir") {
            let path = entry.expect("entry").path();
            let rel = path.strip_prefix(root).expect("under root").as_os_str().as_bytes().to_vec();
            let meta = std::fs::symlink_metadata(&path).expect("metadata");
            let mode = meta.permissions().mode();
            if meta.file_type().is_symlink() {
                out.insert(rel, (mode, std::fs::read_link(&path).expect("link").as_os_str().as_bytes().to_vec()));
            } else if meta.is_dir() {
                out.insert(rel, (mode, Vec::new()));
                walk(&path, root, out);
            } else {
                out.insert(rel, (mode, std::fs::read(&path).expect("file")));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// The events of `task`'s log in the repository at `r`, parsed (none when
/// the log does not exist yet).
pub fn events(r: &Path, task: &str) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(r.join(format!(".git/retry-run/tasks/{task}/events.jsonl"))).unwrap_or_default();
    text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}
