//! Fixture repositories described as data (`testdata-repos/*.toml`, see its
//! README), built into real git repositories with the real `git`.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::TestEnv;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Fixture {
    #[serde(skip)]
    pub name: String,
    pub description: String,
    #[serde(default = "yes")]
    pub git_oracle: bool,
    pub base: Vec<Entry>,
    pub change: Vec<Step>,
    #[serde(default)]
    pub scope: Vec<ScopeCase>,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Entry {
    pub path: String,
    pub text: Option<String>,
    pub hex: Option<String>,
    pub symlink: Option<String>,
    #[serde(default)]
    pub exec: bool,
    pub gitlink: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Step {
    pub op: String,
    pub path: String,
    pub from: Option<String>,
    pub text: Option<String>,
    pub hex: Option<String>,
    pub symlink: Option<String>,
    pub exec: Option<bool>,
    pub gitlink: Option<String>,
    #[serde(default = "yes")]
    pub stage: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ScopeCase {
    pub mode: String,
    pub allow: Vec<String>,
    pub deny: Vec<String>,
    pub checked: u64,
    pub violations: Vec<[String; 3]>,
}

impl ScopeCase {
    pub(crate) fn applies_to(&self, mode: HeadMode) -> bool {
        match self.mode.as_str() {
            "both" => true,
            "commit" => mode == HeadMode::Commit,
            "worktree" => mode == HeadMode::Worktree,
            other => panic!("unknown scope mode {other:?}"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HeadMode {
    /// The changes are committed on branch `feature`.
    Commit,
    /// The changes are left in the working tree on `feature`.
    Worktree,
}

/// `\xNN` escapes in fixture strings become raw bytes.
pub(crate) fn bytes(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && b.get(i + 1) == Some(&b'x')
            && i + 4 <= b.len()
            && let Ok(v) = u8::from_str_radix(std::str::from_utf8(&b[i + 2..i + 4]).unwrap_or("zz"), 16)
        {
            out.push(v);
            i += 4;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex content")).collect()
}

pub(crate) fn os(b: &[u8]) -> &OsStr {
    OsStr::from_bytes(b)
}

impl Fixture {
    pub(crate) fn load(path: &Path) -> Fixture {
        let text = std::fs::read_to_string(path).expect("fixture readable");
        let mut f: Fixture = toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        f.name = path.file_stem().expect("name").to_string_lossy().into_owned();
        f
    }

    pub(crate) fn named(name: &str) -> Fixture {
        Fixture::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata-repos").join(format!("{name}.toml")))
    }

    /// Builds the repository in `env` under `dir_name`: the base committed
    /// on `main`, the changes on branch `feature`.
    pub(crate) fn build(&self, env: &TestEnv, dir_name: &str, mode: HeadMode) -> PathBuf {
        let repo = env.path(dir_name);
        std::fs::create_dir_all(&repo).expect("repo dir");
        env.git(&repo, &["init", "-q", "-b", "main"]);
        let mut gitlinks = Vec::new();
        for e in &self.base {
            let p = bytes(&e.path);
            let content = e.text.as_deref().map(bytes).or_else(|| e.hex.as_deref().map(hex));
            write_entry(&repo, &p, content.as_deref(), e.symlink.as_deref(), e.exec);
            if let Some(sha) = &e.gitlink {
                std::fs::create_dir_all(repo.join(os(&p))).expect("gitlink dir");
                gitlinks.push((p, sha.clone()));
            }
        }
        env.git(&repo, &["add", "-A"]);
        for (p, sha) in &gitlinks {
            add_gitlink(env, &repo, p, sha);
        }
        env.git(&repo, &["commit", "-q", "--allow-empty", "-m", "base"]);
        env.git(&repo, &["checkout", "-q", "-b", "feature"]);

        let mut gitlinks = Vec::new();
        for s in &self.change {
            let p = bytes(&s.path);
            let full = repo.join(os(&p));
            let mut touched = vec![p.clone()];
            match s.op.as_str() {
                "write" => {
                    let content = s
                        .text
                        .as_deref()
                        .map(bytes)
                        .or_else(|| s.hex.as_deref().map(hex))
                        .expect("write needs text or hex");
                    write_entry(&repo, &p, Some(&content), None, s.exec.unwrap_or(false));
                }
                "symlink" => write_entry(&repo, &p, None, s.symlink.as_deref(), false),
                "delete" => remove(&full),
                "rename" => {
                    let from = bytes(s.from.as_deref().expect("rename needs from"));
                    if let Some(parent) = full.parent() {
                        std::fs::create_dir_all(parent).expect("parent");
                    }
                    std::fs::rename(repo.join(os(&from)), &full).expect("rename");
                    touched.push(from);
                }
                "chmod" => {
                    let mode = if s.exec.expect("chmod needs exec") { 0o755 } else { 0o644 };
                    std::fs::set_permissions(&full, std::fs::Permissions::from_mode(mode)).expect("chmod");
                }
                "mkdir" => std::fs::create_dir_all(&full).expect("mkdir"),
                "gitlink" => {
                    std::fs::create_dir_all(&full).expect("gitlink dir");
                    gitlinks.push((p.clone(), s.gitlink.clone().expect("gitlink needs a sha")));
                }
                other => panic!("{}: unknown op {other:?}", self.name),
            }
            if mode == HeadMode::Worktree && s.stage && s.op == "gitlink" {
                add_gitlink(env, &repo, &p, s.gitlink.as_deref().unwrap_or_default());
            } else if mode == HeadMode::Worktree && s.stage {
                let mut args: Vec<&OsStr> = vec![OsStr::new("add"), OsStr::new("-A"), OsStr::new("--")];
                args.extend(touched.iter().map(|t| os(t)));
                let out = env.git_raw(&repo, args);
                assert!(out.status.success(), "git add: {}", String::from_utf8_lossy(&out.stderr));
            }
        }
        if mode == HeadMode::Commit {
            env.git(&repo, &["add", "-A"]);
            for (p, sha) in &gitlinks {
                add_gitlink(env, &repo, p, sha);
            }
            env.git(&repo, &["commit", "-q", "--allow-empty", "-m", "feature"]);
        }
        repo
    }
}

fn add_gitlink(env: &TestEnv, repo: &Path, path: &[u8], sha: &str) {
    let info = format!("160000,{sha},{}", String::from_utf8_lossy(path));
    env.git(repo, &["update-index", "--add", "--cacheinfo", &info]);
}

fn remove(full: &Path) {
    match std::fs::symlink_metadata(full) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(full).expect("remove dir"),
        Ok(_) => std::fs::remove_file(full).expect("remove file"),
        Err(_) => {}
    }
}

fn write_entry(repo: &Path, path: &[u8], content: Option<&[u8]>, symlink: Option<&str>, exec: bool) {
    let full = repo.join(os(path));
    if let Some(parent) = full.parent() {
        std::fs::create_dir_all(parent).expect("parent dir");
    }
    remove(&full);
    if let Some(target) = symlink {
        std::os::unix::fs::symlink(os(&bytes(target)), &full).expect("symlink");
    } else if let Some(content) = content {
        std::fs::write(&full, content).expect("write");
        let mode = if exec { 0o755 } else { 0o644 };
        std::fs::set_permissions(&full, std::fs::Permissions::from_mode(mode)).expect("chmod");
    }
}
