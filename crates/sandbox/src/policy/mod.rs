//! The policy: what a confined process may write, read and reach, built
//! from the config and the attempt's paths. Pure data, enforced by
//! [`crate::launch`].
//!
//! - [`mode`]: the mode asked for and the one in force;
//! - [`secrets`]: what no confined process may read;
//! - [`confinement`]: how an attempt's processes are run, and
//!   [`wrap`]: the [`crate::Request`] each of them is started with;
//! - [`env`], [`endpoints`]: what `run` changes of their environment and
//!   lets through for a local model server;
//! - [`reported`]: what the record says of it, and what the sandbox's log
//!   says happened.

pub mod confinement;
pub mod endpoints;
pub mod env;
pub mod mode;
pub mod reported;
pub mod secrets;
pub mod wrap;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::SandboxGit;
use crate::layers::limits;

/// Device files programs expect to open for writing.
pub const DEVICES: &[&str] =
    &["/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/pts", "/dev/ptmx", "/dev/random", "/dev/urandom"];

/// The machine's shared memory, which another program's files may be in:
/// private in the namespaces, closed in the fallback (neither read nor
/// written), unless `sandbox.writable` names it.
pub const SHARED_MEMORY: &str = "/dev/shm";

/// What cannot be confined or prepared as asked: the mode asked for is not
/// to be had on this kernel, or a path of `sandbox.writable` or of an agent
/// preset's state is wrong or cannot be made. The message names the path
/// and says what to do.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "sandbox.mode = \"namespaces\", but {why}; install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap) and allow unprivileged user namespaces, or use mode = \"auto\""
    )]
    NoNamespaces { why: String },
    #[error(
        "sandbox.mode = \"landlock\", but this kernel ({kernel}) has no Landlock (Linux 5.13 or newer, enabled at boot, is needed); use mode = \"auto\" or \"detect\" to run with detection only"
    )]
    NoLandlock { kernel: String },
    #[error(
        "sandbox.max_processes = {max}, but retry-run runs as root and cannot make a pids cgroup here ({why}): the kernel exempts root from RLIMIT_NPROC, so nothing would hold the limit; run as another user, give retry-run a writable pids cgroup (cgroup v2 delegated to this user, or v1's pids hierarchy writable), or set sandbox.max_processes = 0"
    )]
    NoProcessLimit { max: u64, why: limits::NoCgroup },
    #[error("`~` in sandbox.writable, but HOME is not set")]
    NoHome,
    #[error("sandbox.writable {raw:?}: {} does not exist and cannot be created: {source}", path.display())]
    WritableUncreatable { raw: String, path: PathBuf, source: std::io::Error },
    #[error("sandbox.writable {raw:?}: {} does not exist, nor does its parent; create it or fix the path", path.display())]
    WritableMissing { raw: String, path: PathBuf },
    #[error("sandbox.writable {raw:?}: cannot resolve {}: {source}", path.display())]
    WritableUnresolved { raw: String, path: PathBuf, source: std::io::Error },
    #[error("the agent's state directory {}: {source}", path.display())]
    StateDir { path: PathBuf, source: std::io::Error },
    /// The parent of a state file cannot be created.
    #[error("{}: {source}", path.display())]
    StateParent { path: PathBuf, source: std::io::Error },
    #[error("the agent's state file {}: {source}", path.display())]
    StateFile { path: PathBuf, source: std::io::Error },
}

/// One path a confined process may write beneath, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Writable {
    pub path: PathBuf,
    pub why: String,
}

/// What a confined process may write, read and reach.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Policy {
    pub writable: Vec<Writable>,
    /// Secrets it may not read ([`hidden_paths`]).
    #[serde(default)]
    pub hidden: Vec<PathBuf>,
    /// Paths inside the writable ones it may not change: the worktree's
    /// links to the repository (read-only in the namespaces; put back
    /// afterwards in every mode).
    #[serde(default)]
    pub protected: Vec<PathBuf>,
    /// The hosts it may reach through the proxy (`host`, `host:port`,
    /// `*.domain`).
    #[serde(default)]
    pub network: Vec<String>,
    /// Directories of the user's checkout mounted read-only at a path of
    /// the worktree (`[worktree] share`; namespaces only): (from, at).
    #[serde(default)]
    pub shared: Vec<(PathBuf, PathBuf)>,
}

/// The git paths of an attempt's worktree: its administrative directory,
/// the real object database, and the attempt's own object directory (its
/// quarantine), where its git writes new objects.
pub struct GitPaths {
    pub objects: PathBuf,
    pub admin: PathBuf,
    pub quarantine: PathBuf,
    /// The object directories of the worktree's submodules (under `admin`),
    /// read as alternates too, so that git works inside a submodule.
    pub submodule_objects: Vec<PathBuf>,
}

/// What `--git commit` lets a command in a repository write: the object
/// database under `common_dir`, and the worktree's own git directory
/// `git_dir` when it is a linked worktree's (not config, hooks, refs or
/// HEAD of the repository). Pure.
pub fn git_writable(common_dir: &Path, git_dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![common_dir.join("objects")];
    if git_dir != common_dir {
        out.push(git_dir.to_path_buf());
    }
    out
}

/// What `retry-run sandbox` lets its command write, in this order: `dir`
/// (the current directory), the `extra` paths, `git`'s, its `tmpdir`
/// (when that is one of this machine's directories, not the namespace's
/// own `/tmp`) and the [`DEVICES`]. Pure.
pub fn command_writable(dir: &Path, extra: Vec<PathBuf>, git: &[PathBuf], tmpdir: Option<&Path>) -> Vec<PathBuf> {
    let mut out = vec![dir.to_path_buf()];
    out.extend(extra);
    out.extend(git.iter().cloned());
    out.extend(tmpdir.map(Path::to_path_buf));
    out.extend(DEVICES.iter().map(PathBuf::from));
    out
}

/// The policy of an attempt's agent or check: the worktree, its TMPDIR,
/// and with `git = "commit"` its object quarantine and the worktree's
/// administrative directory (HEAD, index; its links to the repository
/// stay read-only); the real object database never. Pure.
pub fn policy(worktree: &Path, tmpdir: &Path, git: SandboxGit, git_paths: &GitPaths, extra: &[PathBuf]) -> Policy {
    let mut w = vec![
        Writable { path: worktree.to_path_buf(), why: "the worktree".into() },
        Writable { path: tmpdir.to_path_buf(), why: "the private TMPDIR".into() },
    ];
    if git == SandboxGit::Commit {
        w.push(Writable {
            path: git_paths.quarantine.clone(),
            why: "the attempt's git objects (sandbox.git = \"commit\")".into(),
        });
        w.push(Writable { path: git_paths.admin.clone(), why: "the worktree's git directory".into() });
    }
    w.extend(extra.iter().map(|p| Writable { path: p.clone(), why: "sandbox.writable".into() }));
    w.extend(DEVICES.iter().map(|d| Writable { path: PathBuf::from(d), why: "device".into() }));
    let mut seen = std::collections::HashSet::new();
    w.retain(|x| seen.insert(x.path.clone()));
    let protected = vec![worktree.join(".git"), git_paths.admin.join("gitdir"), git_paths.admin.join("commondir")];
    Policy { writable: w, hidden: Vec::new(), protected, network: Vec::new(), shared: Vec::new() }
}

/// The environment that sends an attempt's git writes to its quarantine:
/// new objects go to `quarantine`, existing ones are read from `objects`
/// (as git's own `receive-pack` quarantines a push). Pure.
pub fn quarantine_env(git_paths: &GitPaths) -> Vec<(String, String)> {
    vec![
        ("GIT_OBJECT_DIRECTORY".into(), git_paths.quarantine.display().to_string()),
        (
            "GIT_ALTERNATE_OBJECT_DIRECTORIES".into(),
            std::iter::once(&git_paths.objects)
                .chain(&git_paths.submodule_objects)
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(":"),
        ),
    ]
}

/// The policy of the verifier: it reads the attempt's worktree and writes
/// nothing of it, only its private TMPDIR and the `sandbox.writable` paths
/// (a reviewer CLI's own state). Pure.
pub fn verifier_policy(tmpdir: &Path, extra: &[PathBuf]) -> Policy {
    let mut w = vec![Writable { path: tmpdir.to_path_buf(), why: "the private TMPDIR".into() }];
    w.extend(extra.iter().map(|p| Writable { path: p.clone(), why: "sandbox.writable".into() }));
    w.extend(DEVICES.iter().map(|d| Writable { path: PathBuf::from(d), why: "device".into() }));
    let mut seen = std::collections::HashSet::new();
    w.retain(|x| seen.insert(x.path.clone()));
    Policy { writable: w, ..Policy::default() }
}

/// `~` and `~/x` expanded with `home`; a relative path taken from `root`. Pure.
pub fn expand(raw: &str, home: Option<&Path>, root: &Path) -> Result<PathBuf, SandboxError> {
    let p = if raw == "~" {
        home.ok_or(SandboxError::NoHome)?.to_path_buf()
    } else if let Some(rest) = raw.strip_prefix("~/") {
        home.ok_or(SandboxError::NoHome)?.join(rest)
    } else {
        PathBuf::from(raw)
    };
    Ok(if p.is_absolute() { p } else { root.join(p) })
}

/// The `sandbox.writable` paths ready for the kernel: `~` expanded,
/// relative ones from `root`, a missing one created as an empty directory
/// when its parent exists, and symlinks resolved (once, now). `Err` names
/// the path and what to do.
pub fn prepare_writable(raw: &[String], home: Option<&Path>, root: &Path) -> Result<Vec<PathBuf>, SandboxError> {
    let mut out = Vec::new();
    for r in raw {
        let p = expand(r, home, root)?;
        if !p.exists() {
            match p.parent() {
                // Made by another confined process starting beside this one
                // (checks side by side) meanwhile: there, as asked.
                Some(parent) if parent.is_dir() => match std::fs::create_dir(&p) {
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && p.is_dir() => {}
                    r2 => r2.map_err(|source| SandboxError::WritableUncreatable {
                        raw: r.clone(),
                        path: p.clone(),
                        source,
                    })?,
                },
                _ => return Err(SandboxError::WritableMissing { raw: r.clone(), path: p }),
            }
        }
        let real = std::fs::canonicalize(&p).map_err(|source| SandboxError::WritableUnresolved {
            raw: r.clone(),
            path: p.clone(),
            source,
        })?;
        out.push(real);
    }
    Ok(out)
}

/// An agent preset's state: its directories created when missing (with
/// their parents) and its files created with their starting content, all
/// resolved, ready for the kernel. `Err` names the path.
pub fn prepare_state(
    dirs: &[String],
    files: &std::collections::BTreeMap<String, String>,
    home: Option<&Path>,
) -> Result<Vec<PathBuf>, SandboxError> {
    let root = home.unwrap_or(Path::new("/"));
    let mut out = Vec::new();
    for d in dirs {
        let p = expand(d, home, root)?;
        std::fs::create_dir_all(&p).map_err(|source| SandboxError::StateDir { path: p.clone(), source })?;
        out.push(std::fs::canonicalize(&p).unwrap_or(p));
    }
    for (f, seed) in files {
        let p = expand(f, home, root)?;
        if !p.exists() {
            if let Some(parent) = p.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|source| SandboxError::StateParent { path: parent.to_path_buf(), source })?;
            }
            std::fs::write(&p, seed).map_err(|source| SandboxError::StateFile { path: p.clone(), source })?;
        }
        out.push(std::fs::canonicalize(&p).unwrap_or(p));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_sandbox_command_may_write() {
        let git = git_writable(Path::new("/r/.git"), Path::new("/r/.git"));
        assert_eq!(git, [Path::new("/r/.git/objects")]);
        let linked = git_writable(Path::new("/r/.git"), Path::new("/r/.git/worktrees/w"));
        assert_eq!(linked, [Path::new("/r/.git/objects"), Path::new("/r/.git/worktrees/w")]);
        let w = command_writable(Path::new("/w"), vec!["/c".into()], &linked, Some(Path::new("/tmp/t")));
        let want: Vec<PathBuf> = ["/w", "/c", "/r/.git/objects", "/r/.git/worktrees/w", "/tmp/t"]
            .into_iter()
            .chain(DEVICES.iter().copied())
            .map(PathBuf::from)
            .collect();
        assert_eq!(w, want);
        // The namespace's own /tmp as TMPDIR: nothing of this machine's to bind.
        let own = command_writable(Path::new("/w"), Vec::new(), &[], None);
        assert_eq!(own, [Path::new("/w")].into_iter().chain(DEVICES.iter().map(Path::new)).collect::<Vec<_>>());
    }

    #[test]
    fn expansion() {
        let home = Path::new("/home/u");
        assert_eq!(expand("~/.cache/pip", Some(home), Path::new("/r")).unwrap(), Path::new("/home/u/.cache/pip"));
        assert_eq!(expand("~", Some(home), Path::new("/r")).unwrap(), Path::new("/home/u"));
        assert_eq!(expand("build", Some(home), Path::new("/r")).unwrap(), Path::new("/r/build"));
        assert_eq!(expand("/abs", None, Path::new("/r")).unwrap(), Path::new("/abs"));
        assert!(expand("~/x", None, Path::new("/r")).is_err());
    }
}
