//! Containment of the agent and its checks (the only module that uses
//! Landlock, in [`landlock`]). The policy is pure data: which paths a
//! confined process may write, and why. It is built from the config and the
//! attempt's paths here, and enforced by `retry-run sandbox` ([`exec`]),
//! which the loop puts in front of every agent and check command: that
//! process confines itself, closes what it should not pass on, and executes
//! the command, so the confinement holds for the command and all its
//! descendants.
//!
//! - [`landlock`]: the kernel's enforcement;
//! - [`exec`]: the one place that starts a confined process.
//!
//! Reading and executing stay allowed everywhere; writing (creating,
//! removing, renaming, linking, truncating) only beneath the writable paths.

mod console;
pub mod endpoints;
pub mod env;
pub mod exec;
pub mod landlock;
pub mod limits;
mod listening;
pub mod namespaces;
pub mod observe;
#[cfg(all(test, target_os = "linux"))]
mod probe;
pub mod programs;
pub mod proxy;
pub mod reported;
pub mod seccomp;
pub mod seen;
pub mod supervisor;
pub mod visible;
pub mod wrap;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub use env::{EnvChange, away_from_checkout, credentials, looks_like_credential};
use reported::{self as recorded, ConfinedRecord};

/// Device files programs expect to open for writing.
pub const DEVICES: &[&str] =
    &["/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/pts", "/dev/ptmx", "/dev/random", "/dev/urandom"];

/// The machine's shared memory, which another program's files may be in:
/// private in the namespaces, closed in the fallback (neither read nor
/// written), unless `sandbox.writable` names it.
pub const SHARED_MEMORY: &str = "/dev/shm";

/// The mode `[sandbox] mode` asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SandboxMode {
    /// The strongest that works here: namespaces, else Landlock and
    /// seccomp, else detection only.
    #[default]
    Auto,
    /// Namespaces (bubblewrap) with Landlock inside.
    Namespaces,
    /// Landlock and seccomp, without namespaces.
    Landlock,
    Detect,
    Off,
}

/// What `[sandbox] git` lets a confined process write of the repository.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxGit {
    /// The agent may `git add` and `git commit` in its worktree.
    #[default]
    Commit,
    /// No git writes at all.
    ReadOnly,
}

/// How processes are actually confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effective {
    /// Their own namespaces (bubblewrap), Landlock inside, seccomp.
    Namespaces,
    /// The kernel confines them with Landlock (this ABI version) and
    /// seccomp, without namespaces.
    Landlock,
    /// Nothing confines them; what they change outside the worktree is only
    /// detected, and what they leave running is ended.
    Detect,
    /// Neither confined nor given a private temporary directory.
    Off,
}

impl Effective {
    /// The layers `retry-run sandbox` puts around a process in this mode.
    pub fn layers(self) -> Option<Layers> {
        match self {
            Effective::Namespaces => Some(Layers::Namespaces),
            Effective::Landlock => Some(Layers::Landlock),
            Effective::Detect => Some(Layers::None),
            Effective::Off => None,
        }
    }
}

/// What `retry-run sandbox` puts around its command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layers {
    /// Namespaces through bubblewrap, with Landlock and seccomp inside.
    Namespaces,
    /// Landlock (writes, reads of secrets, TCP ports) and seccomp (UDP, raw
    /// and UNIX sockets), where namespaces are refused.
    Landlock,
    /// Nothing: the command's leftovers are only ended (detect mode).
    None,
}

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

/// The mode in force, and the note to say once when `auto` fell back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModeInForce {
    pub effective: Effective,
    pub note: Option<String>,
}

/// The mode in force for `requested`, on a kernel with Landlock ABI `abi`
/// (0: none) where namespaces can (`Ok`) or cannot (`Err(why)`) be made,
/// and a note to say once when `auto` fell back. `Err` when the mode asked
/// for cannot be had here. Pure.
pub fn resolve(
    requested: SandboxMode,
    abi: u8,
    namespaces: Result<(), &str>,
    kernel: &str,
) -> Result<ModeInForce, SandboxError> {
    let (effective, note) = match (requested, namespaces) {
        (SandboxMode::Off, _) => (Effective::Off, None),
        (SandboxMode::Detect, _) => (Effective::Detect, None),
        (SandboxMode::Namespaces | SandboxMode::Auto, Ok(())) => (Effective::Namespaces, None),
        (SandboxMode::Namespaces, Err(why)) => return Err(SandboxError::NoNamespaces { why: why.to_string() }),
        (SandboxMode::Landlock, _) | (SandboxMode::Auto, Err(_)) if abi > 0 => {
            let note = match (requested, namespaces) {
                (SandboxMode::Auto, Err(why)) => Some(format!(
                    "namespaces cannot be used ({why}): agents and checks are confined by Landlock and seccomp only (no private /tmp, no process namespace; see docs/sandbox.md)"
                )),
                _ => None,
            };
            (Effective::Landlock, note)
        }
        (SandboxMode::Landlock, _) => return Err(SandboxError::NoLandlock { kernel: kernel.to_string() }),
        (SandboxMode::Auto, Err(why)) => (
            Effective::Detect,
            Some(format!(
                "namespaces cannot be used ({why}) and this kernel ({kernel}) has no Landlock: agents and checks run unconfined, and what they change outside the worktree is only detected (sandbox.mode = \"detect\")"
            )),
        ),
    };
    Ok(ModeInForce { effective, note })
}

/// Whether `max_processes` (0: none) can be held for a confined command:
/// `RLIMIT_NPROC` holds it for any user but root, whom the kernel exempts;
/// for root only a pids cgroup does (`cgroup`: one can be made here, or
/// why not). Pure.
pub fn process_limit(root: bool, max_processes: u64, cgroup: Result<(), limits::NoCgroup>) -> Result<(), SandboxError> {
    match cgroup {
        Err(why) if root && max_processes > 0 => Err(SandboxError::NoProcessLimit { max: max_processes, why }),
        _ => Ok(()),
    }
}

/// What the Landlock fallback cannot hold that the namespaces do, in
/// words: said when a run starts and recorded (`TaskStarted`,
/// `sandbox.note`). Pure.
pub fn fallback_gaps() -> String {
    let gaps = [
        "/dev/shm is closed rather than private (programs that need POSIX shared memory or semaphores, such as Python's multiprocessing, fail unless sandbox.writable lists /dev/shm)",
        "the agent sees the machine's other processes (it can neither signal nor trace them)",
        "named UNIX sockets and UDP are refused wholesale, the sandbox's own included",
        "the permissions and times of your files outside the writable paths can be changed (Landlock does not cover chmod, utimes or extended attributes)",
    ];
    format!("the fallback cannot hold: {}", gaps.join("; "))
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

/// What no confined process may read, beneath `HOME`: keys, cloud, forge
/// and registry credentials.
pub const SECRETS: [&str; 10] = [
    "~/.ssh",
    "~/.aws",
    "~/.gnupg",
    "~/.config/gh",
    "~/.git-credentials",
    "~/.netrc",
    "~/.docker",
    "~/.kube",
    "~/.npmrc",
    "~/.pypirc",
];

/// The paths a confined process may not read: [`SECRETS`] and `extra`
/// (`sandbox.deny_read`, `--deny-read`), `~` expanded and relative ones
/// taken from `root`, and the other projects' secret files found beside
/// the repository at `root` and beneath `HOME` ([`other_secrets`]); those
/// that exist, symlinks resolved, sorted.
pub fn hidden_paths(extra: &[String], home: Option<&Path>, root: &Path) -> Vec<PathBuf> {
    let own = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let found: Vec<PathBuf> = other_secrets(home, root)
        .into_iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        // A link beside the repository to a file of its own hides nothing.
        .filter(|p| !p.starts_with(&own) && !p.starts_with(root))
        .collect();
    let mut out: Vec<PathBuf> = SECRETS
        .iter()
        .map(|s| s.to_string())
        .chain(extra.iter().cloned())
        .filter_map(|raw| expand(&raw, home, root).ok())
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .chain(found)
        .collect();
    out.sort();
    out.dedup();
    out
}

/// How deep beneath each place it starts from [`other_secrets`] looks for
/// projects (a secret at `start/a/b/c/.env` is found, one level deeper not).
const DOT_ENV_DEPTH: usize = 4;
/// How many directories it reads at most, all its starting places together
/// (a bound on its cost).
const DOT_ENV_DIRS: usize = 5_000;
/// How many secret files it hides at most (each is a mount and Landlock
/// rules): the first found, nearest places first.
const SECRETS_FOUND: usize = 1_000;

/// Whether a file name is an environment file (`.env`, `.env.local`, ...).
pub fn is_dot_env(name: &str) -> bool {
    name == ".env" || name.starts_with(".env.")
}

/// Files of other projects (and other users' homes) that hold secrets, by
/// name, beside [`is_dot_env`]'s: login files of git, curl, npm and PyPI,
/// Google's client and service account files, SSH private keys.
pub const SECRET_FILES: [&str; 11] = [
    ".netrc",
    "_netrc",
    ".git-credentials",
    ".npmrc",
    ".pypirc",
    "credentials.json",
    "application_default_credentials.json",
    "id_rsa",
    "id_ecdsa",
    "id_ed25519",
    "id_dsa",
];

/// Credential stores in a hidden directory of a project or another user's
/// home, relative to it: hidden whole (a directory) or as the one file.
pub const SECRET_STORES: [&str; 9] = [
    ".ssh",
    ".aws",
    ".gnupg",
    ".azure",
    ".config/gcloud",
    ".config/gh",
    ".docker/config.json",
    ".kube/config",
    ".terraform.d/credentials.tfrc.json",
];

/// What a directory's entry is, as its listing says (links not followed).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Dir,
    Symlink,
    Other,
}

/// What the walk makes of one directory's listing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Triage {
    /// Secrets, relative to the directory (`.env`, `.aws`,
    /// `.docker/config.json`); a store's file may not exist.
    pub secrets: Vec<String>,
    /// The directories to look into next.
    pub enter: Vec<String>,
}

/// The secrets among a directory's `entries` and the directories to enter
/// when it lies `depth` levels beneath where the walk started: files (not
/// links) named as [`is_dot_env`] or [`SECRET_FILES`] say, the
/// [`SECRET_STORES`] whose first directory is there; entered are the
/// directories not hidden (`.name`), not dependencies or build output
/// (`node_modules`, `target`, virtualenvs), above [`DOT_ENV_DEPTH`]. Pure.
pub fn triage(entries: &[(String, EntryKind)], depth: usize) -> Triage {
    const SKIP: [&str; 6] = ["node_modules", "target", "venv", ".venv", "__pycache__", "site-packages"];
    let mut t = Triage::default();
    for (name, kind) in entries {
        if *kind == EntryKind::File && (is_dot_env(name) || SECRET_FILES.contains(&name.as_str())) {
            t.secrets.push(name.clone());
        } else if *kind == EntryKind::Dir {
            let stores = SECRET_STORES.iter().filter(|s| s.split('/').next() == Some(name.as_str()));
            t.secrets.extend(stores.map(|s| s.to_string()));
            if depth + 1 < DOT_ENV_DEPTH && !name.starts_with('.') && !SKIP.contains(&name.as_str()) {
                t.enter.push(name.clone());
            }
        }
    }
    t
}

/// Where [`other_secrets`] starts, in this order: the parent directories
/// of the repository at `root`, nearest first, up to a child of `/` (`/`
/// itself never), then `home` when it is not one of them. A parent inside
/// a `.git` directory (a worktree in `.git/retry-run/worktrees/`) is
/// passed over: the checkout it belongs to is the first start; a world-writable directory with the sticky bit (`/tmp`,
/// `/var/tmp`: other programs' files that come and go) is not a start, nor
/// is any parent above it. `sticky` says which are. Pure.
pub fn walk_starts(root: &Path, home: Option<&Path>, sticky: impl Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    for dir in root.ancestors().skip(1) {
        if dir.parent().is_none() || sticky(dir) {
            break;
        }
        let in_git = dir.components().any(|c| c.as_os_str() == ".git");
        if !in_git {
            out.push(dir.to_path_buf());
        }
    }
    if let Some(h) = home
        && !out.iter().any(|o| o == h)
        && h.parent().is_some()
    {
        out.push(h.to_path_buf());
    }
    out
}

/// The other projects' secret files beside the repository at `root` and
/// beneath `home`: from each of [`walk_starts`], breadth first, what
/// [`triage`] finds up to [`DOT_ENV_DEPTH`] levels down; the repository
/// and the other starting places are not entered from another one;
/// [`DOT_ENV_DIRS`] directories read and [`SECRETS_FOUND`] found at most,
/// all starts together. Nothing beneath `root`.
pub fn other_secrets(home: Option<&Path>, root: &Path) -> Vec<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let sticky = |d: &Path| std::fs::metadata(d).is_ok_and(|m| m.permissions().mode() & 0o1002 == 0o1002);
    let starts = walk_starts(root, home, sticky);
    let mut out = Vec::new();
    let mut read = 0;
    for start in &starts {
        let mut queue = std::collections::VecDeque::from([(start.clone(), 0usize)]);
        while let Some((dir, depth)) = queue.pop_front() {
            if read >= DOT_ENV_DIRS || out.len() >= SECRETS_FOUND {
                return out;
            }
            read += 1;
            let Ok(rd) = std::fs::read_dir(&dir) else { continue };
            let entries: Vec<(String, EntryKind)> = rd
                .flatten()
                .filter_map(|e| {
                    let name = e.file_name().into_string().ok()?;
                    let kind = match e.file_type() {
                        Ok(k) if k.is_symlink() => EntryKind::Symlink,
                        Ok(k) if k.is_dir() => EntryKind::Dir,
                        Ok(k) if k.is_file() => EntryKind::File,
                        _ => EntryKind::Other,
                    };
                    Some((name, kind))
                })
                .collect();
            let t = triage(&entries, depth);
            // A link is never followed: one named `.env` that leads to
            // `/usr` would hide `/usr`.
            out.extend(t.secrets.iter().map(|s| dir.join(s)).filter(|p| {
                !p.starts_with(root)
                    && std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_file() || m.file_type().is_dir())
            }));
            for name in t.enter {
                let next = dir.join(name);
                if next != root && !starts.contains(&next) && !root.starts_with(&next) {
                    queue.push_back((next, depth + 1));
                }
            }
        }
    }
    out.truncate(SECRETS_FOUND);
    out
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

/// What the outer process would otherwise look up for each confined
/// process, found once by `run` ([`Found::now`]) and passed in the line of
/// every outer process it starts: bubblewrap's path and, for root, the pids
/// cgroup that `run`, and so each process it starts, is in; and whether
/// `run` is its PID namespace's init (a container's first process), which
/// adopts every orphan and reaps only what it started itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Found {
    pub bwrap: Option<PathBuf>,
    pub pids_cgroup: Option<PathBuf>,
    #[serde(default)]
    pub starter_is_init: bool,
}

impl Found {
    /// Looked up now, for the processes this one will start.
    pub fn now() -> Found {
        Found {
            bwrap: namespaces::program(),
            pids_cgroup: limits::own_dir_for_limit(),
            starter_is_init: std::process::id() == 1,
        }
    }
}

/// The limits a confined command runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Processes at once (`RLIMIT_NPROC`; counted in the sandbox's own
    /// user namespace when it has one).
    pub processes: u64,
    /// The largest file it may write (`RLIMIT_FSIZE`).
    pub file_size: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { processes: 4096, file_size: 20 << 30 }
    }
}

/// How an attempt's agent and checks are run: the mode in force and, when
/// confined, the policy, its private TMPDIR, and the program that enforces
/// it (this executable's `sandbox` command).
#[derive(Debug, Clone)]
pub struct Confinement {
    pub effective: Effective,
    /// The kernel's Landlock ABI (0: none).
    pub abi: u8,
    pub policy: Policy,
    pub tmpdir: Option<PathBuf>,
    pub exe: PathBuf,
    /// The supervisor's executable beside it, when installed: `run` then
    /// starts it in the place of `retry-run sandbox` ([`wrap::wrap`]).
    pub supervisor: Option<PathBuf>,
    /// What each outer process would otherwise look up, found once for
    /// them all (passed in the supervisor's line).
    pub found: Found,
    /// retry-run's variables that pointed into the user's checkout, as the
    /// confined processes get them ([`away_from_checkout`]).
    pub away: Vec<EnvChange>,
    /// retry-run's variables that look like credentials, which the confined
    /// processes do not get ([`credentials`]).
    pub hidden: Vec<String>,
    /// More variables they get (the git quarantine).
    pub extra_env: Vec<(String, String)>,
    /// Paths beneath `/tmp` or `/run` that stay readable in the namespaces
    /// (the repository when it lives there).
    pub keep: Vec<PathBuf>,
    /// The machine's network instead of the proxy (`network_mode = "host"`).
    pub host_network: bool,
    /// Named UNIX sockets allowed (`sandbox.unix_sockets`).
    pub unix_sockets: bool,
    pub limits: Limits,
}

impl Confinement {
    /// The environment it adds: the private TMPDIR under its three names.
    pub fn env(&self) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> =
            self.away.iter().filter_map(|c| Some((c.name.clone(), c.value.clone()?))).collect();
        if let Some(t) = &self.tmpdir {
            env.extend(["TMPDIR", "TMP", "TEMP"].iter().map(|k| (k.to_string(), t.display().to_string())));
        }
        env.extend(self.extra_env.iter().cloned());
        env
    }

    /// The variables of retry-run's environment the confined processes do
    /// not get.
    pub fn unset(&self) -> Vec<String> {
        let mut names: Vec<String> = self.away.iter().filter(|c| c.value.is_none()).map(|c| c.name.clone()).collect();
        names.extend(self.hidden.iter().cloned());
        names
    }

    /// For the record: mode, the layers that confine each process
    /// (namespaces, Landlock ABI, seccomp, the network list), the writable
    /// and hidden paths, and the environment's changes.
    pub fn record(&self) -> ConfinedRecord {
        let confined = matches!(self.effective, Effective::Namespaces | Effective::Landlock);
        let writable: Vec<String> = if confined {
            self.policy.writable.iter().map(|w| w.path.display().to_string()).collect()
        } else {
            Vec::new()
        };
        let mut record = ConfinedRecord {
            mode: recorded::word(&self.effective),
            landlock_abi: self.abi,
            writable,
            tmpdir: self.tmpdir.as_ref().map(|t| t.display().to_string()),
            ..ConfinedRecord::default()
        };
        if confined {
            let namespaces = match self.effective {
                Effective::Namespaces => namespaces::unshared(self.host_network),
                _ => Vec::new(),
            };
            let seccomp: Vec<&str> = match (self.effective, self.host_network, self.unix_sockets) {
                (Effective::Landlock, false, false) => vec!["udp", "raw", "unix"],
                (Effective::Landlock, false, true) => vec!["udp", "raw"],
                (_, _, false) => vec!["unix"],
                _ => Vec::new(),
            };
            record.layers = Some(recorded::LayersRecord {
                namespaces: namespaces.into_iter().map(String::from).collect(),
                landlock_abi: self.abi,
                seccomp_denies: seccomp.into_iter().map(String::from).collect(),
                network: if self.host_network {
                    recorded::Network::Host
                } else {
                    recorded::Network::Proxy(self.policy.network.clone())
                },
                max_processes: self.limits.processes,
                max_file_size: self.limits.file_size,
            });
            if !self.policy.hidden.is_empty() {
                record.hidden = Some(self.policy.hidden.iter().map(|h| h.display().to_string()).collect());
            }
        }
        if !self.away.is_empty() || !self.hidden.is_empty() {
            let names = |dropped: bool| -> Vec<String> {
                self.away.iter().filter(|c| c.value.is_none() == dropped).map(|c| c.name.clone()).collect()
            };
            record.env = Some(recorded::EnvChanges {
                rewritten: names(false),
                dropped: names(true),
                credentials: self.hidden.clone(),
            });
        }
        record
    }
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

/// At most this many refused hosts are named in the record.
pub const REFUSED_HOSTS_CAP: usize = 50;

/// The hosts (`host:port`) the proxy refused, in the order of the
/// sandbox's log, each once, the first [`REFUSED_HOSTS_CAP`].
pub fn refused_hosts(log: &Path) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in proxy::read_log(log).into_iter().filter(|c| !c.allowed) {
        if out.len() >= REFUSED_HOSTS_CAP {
            break;
        }
        let h = format!("{}:{}", c.host, c.port);
        if !out.contains(&h) {
            out.push(h);
        }
    }
    out
}

/// A limit a confined command hit, from the sandbox's log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimitHit {
    /// `processes`, `file_size`, `leftovers`, `connections_logged` or
    /// `connections_open`.
    pub limit: String,
    pub max: u64,
    /// How many processes were refused (`processes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<u64>,
}

impl LimitHit {
    /// In words, for the record and the report.
    pub fn describe(&self) -> String {
        match (self.limit.as_str(), self.refused) {
            ("processes", Some(n)) => format!("the process limit ({}) refused {n} new process(es)", self.max),
            ("file_size", _) => format!("the file size limit ({} bytes) ended a process", self.max),
            ("leftovers", _) => format!("{} process(es) it left running were ended", self.max),
            ("connections_logged", Some(n)) => {
                format!("the network log keeps the first {} connections; {n} more were not recorded", self.max)
            }
            ("connections_open", Some(n)) => {
                format!("the network proxy serves {} connections at once; {n} more were refused", self.max)
            }
            (other, _) => format!("the {other} limit ({})", self.max),
        }
    }
}

/// The limits hit, from the sandbox's log (other lines are connections).
pub fn limits_hit(log: &Path) -> Vec<LimitHit> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines().filter_map(|l| serde_json::from_str::<LimitHit>(l).ok()).collect()
}

/// The paths outside `worktree` that `output` says were refused
/// ("Permission denied", "Read-only file system", "Operation not
/// permitted"), as printed, first seen first. Pure.
pub fn refused_paths(output: &[String], worktree: &Path) -> Vec<String> {
    const SIGNS: [&str; 4] = ["Permission denied", "Operation not permitted", "Read-only file system", "EACCES"];
    let wt = worktree.display().to_string();
    let mut out: Vec<String> = Vec::new();
    for line in output {
        if !SIGNS.iter().any(|s| line.contains(s)) {
            continue;
        }
        for word in line.split(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | '`' | ',' | '(' | ')')) {
            let word = word.trim_end_matches(':');
            if word.starts_with('/') && word.len() > 1 && !word.starts_with(&wt) && !out.iter().any(|o| o == word) {
                out.push(word.to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_the_fallback_says_it_cannot_hold() {
        let gaps = fallback_gaps();
        assert!(gaps.contains("/dev/shm is closed") && gaps.contains("sandbox.writable"), "{gaps}");
        assert!(!gaps.contains("max_processes"), "the limit is held or the run refused: {gaps}");
    }

    #[test]
    fn root_without_a_pids_cgroup_is_refused_unless_no_limit_is_asked() {
        let no = || Err(limits::NoCgroup::NotMade);
        let e = process_limit(true, 100, no()).expect_err("root, a limit, no cgroup");
        let text = e.to_string();
        assert!(text.contains("max_processes = 100") && text.contains("(no pids cgroup could be made)"), "{text}");
        assert!(text.contains("sandbox.max_processes = 0"), "{text}");
        assert!(process_limit(true, 0, no()).is_ok());
        assert!(process_limit(false, 100, no()).is_ok());
        assert!(process_limit(true, 100, Ok(())).is_ok());
    }

    #[test]
    fn modes() {
        let k = "Linux 6.1";
        let no = Err("bwrap is not installed");
        let r = |mode, abi, ns| resolve(mode, abi, ns, k).map(|r| (r.effective, r.note));
        assert_eq!(r(SandboxMode::Auto, 7, Ok(())).unwrap(), (Effective::Namespaces, None));
        assert_eq!(r(SandboxMode::Auto, 0, Ok(())).unwrap().0, Effective::Namespaces);
        let (m, note) = r(SandboxMode::Auto, 7, no).unwrap();
        assert_eq!(m, Effective::Landlock);
        assert!(note.unwrap().contains("bwrap is not installed"));
        let (m, note) = r(SandboxMode::Auto, 0, no).unwrap();
        assert_eq!(m, Effective::Detect);
        assert!(note.unwrap().contains("Linux 6.1"));
        assert_eq!(r(SandboxMode::Landlock, 7, Ok(())).unwrap(), (Effective::Landlock, None));
        let err = r(SandboxMode::Landlock, 0, Ok(())).unwrap_err().to_string();
        assert!(err.contains("Linux 6.1") && err.contains("\"detect\""), "{err}");
        let err = r(SandboxMode::Namespaces, 7, no).unwrap_err().to_string();
        assert!(err.contains("bubblewrap") && err.contains("\"auto\""), "{err}");
        assert_eq!(r(SandboxMode::Detect, 7, Ok(())).unwrap().0, Effective::Detect);
        assert_eq!(r(SandboxMode::Off, 7, Ok(())).unwrap().0, Effective::Off);
        assert_eq!(Effective::Detect.layers(), Some(Layers::None));
        assert_eq!(Effective::Off.layers(), None);
    }

    #[test]
    fn policy_and_wrapping() {
        let git = GitPaths {
            objects: "/r/.git/objects".into(),
            admin: "/r/.git/worktrees/t".into(),
            quarantine: "/r/.git/retry-run/q".into(),
            submodule_objects: Vec::new(),
        };
        let p = policy(Path::new("/w"), Path::new("/tmp/t"), SandboxGit::Commit, &git, &["/c".into()]);
        let paths: Vec<String> = p.writable.iter().map(|w| w.path.display().to_string()).collect();
        assert_eq!(&paths[..5], ["/w", "/tmp/t", "/r/.git/retry-run/q", "/r/.git/worktrees/t", "/c"]);
        assert!(!paths.contains(&"/r/.git/objects".to_string()), "the real objects are never writable");
        assert!(paths.contains(&"/dev/null".to_string()));
        assert_eq!(
            p.protected,
            [Path::new("/w/.git"), Path::new("/r/.git/worktrees/t/gitdir"), Path::new("/r/.git/worktrees/t/commondir")]
        );
        let ro = policy(Path::new("/w"), Path::new("/tmp/t"), SandboxGit::ReadOnly, &git, &[]);
        assert!(!ro.writable.iter().any(|w| w.path.starts_with("/r/.git")));
        let c = Confinement {
            effective: Effective::Namespaces,
            abi: 7,
            policy: Policy { network: vec!["api.example.com".into()], ..ro },
            tmpdir: Some("/tmp/t".into()),
            exe: "/bin/rr".into(),
            supervisor: None,
            found: Found::default(),
            away: Vec::new(),
            hidden: Vec::new(),
            extra_env: quarantine_env(&git),
            keep: Vec::new(),
            host_network: false,
            unix_sockets: false,
            limits: Limits::default(),
        };
        let argv = c.argv(vec!["sh".into(), "-c".into(), "x".into()], Some(Path::new("/a/net.jsonl")));
        assert_eq!(
            &argv[..9],
            ["/bin/rr", "sandbox", "--reap", "--layers", "namespaces", "--git", "read-only", "--tmpdir", "/tmp/t"]
        );
        let line = argv.join(" ");
        assert!(line.contains("--network api.example.com") && line.contains("--log /a/net.jsonl"), "{line}");
        assert!(line.contains("--max-processes 4096 --max-file-size 21474836480"), "{line}");
        assert_eq!(&argv[argv.len() - 4..], ["--", "sh", "-c", "x"]);
        assert!(c.env().contains(&("GIT_OBJECT_DIRECTORY".to_string(), "/r/.git/retry-run/q".to_string())));
        // The secrets were looked for once: every confined process takes the list.
        assert!(line.contains("--deny-read-complete"), "{line}");
        // Only the agent's sandbox answers direct connections.
        assert!(!line.contains("--refuse-direct"), "{line}");
        let agent = c.agent_argv(vec!["true".into()], None);
        assert_eq!(&agent[..3], ["/bin/rr", "sandbox", "--refuse-direct"]);
        let detect = Confinement { effective: Effective::Detect, ..c.clone() };
        assert!(!detect.agent_argv(vec!["true".into()], None).contains(&"--refuse-direct".to_string()));
        let argv = detect.argv(vec!["true".into()], None);
        assert_eq!(argv.join(" "), "/bin/rr sandbox --reap --layers none --git read-only --tmpdir /tmp/t -- true");
        let argv = detect.argv(vec!["true".into()], Some(Path::new("/a/l")));
        assert!(argv.join(" ").contains("--tmpdir /tmp/t --log /a/l -- true"));
        // A check: observed in detect mode, against its own list; confined
        // as any other process elsewhere.
        let argv = detect.check_argv(vec!["true".into()], Some(Path::new("/a/l")));
        assert_eq!(
            argv.join(" "),
            "/bin/rr sandbox --observe --reap --layers none --git read-only --tmpdir /tmp/t --log /a/l --network api.example.com -- true"
        );
        assert_eq!(c.check_argv(vec!["true".into()], None), c.argv(vec!["true".into()], None));
        let off = Confinement { effective: Effective::Off, ..c };
        assert_eq!(off.argv(vec!["true".into()], None), ["true"]);
    }

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

    #[test]
    fn what_a_directory_listing_hides_and_enters() {
        use EntryKind::*;
        let entries: Vec<(String, EntryKind)> = [
            (".env", File),
            (".env.production", File),
            (".envrc", File),
            ("env", File),
            (".netrc", File),
            ("credentials.json", File),
            ("id_ed25519", File),
            ("id_ed25519.pub", File),
            (".git-credentials", Symlink),
            (".aws", Dir),
            (".docker", Dir),
            (".config", Dir),
            (".git", Dir),
            ("src", Dir),
            ("node_modules", Dir),
            ("target", Dir),
            ("README.md", File),
        ]
        .into_iter()
        .map(|(n, k)| (n.to_string(), k))
        .collect();
        let t = triage(&entries, 0);
        assert_eq!(
            t.secrets,
            [
                ".env",
                ".env.production",
                ".netrc",
                "credentials.json",
                "id_ed25519",
                ".aws",
                ".docker/config.json",
                ".config/gcloud",
                ".config/gh"
            ]
        );
        assert_eq!(t.enter, ["src"]);
        assert_eq!(triage(&entries, DOT_ENV_DEPTH - 2).enter, ["src"]);
        assert!(triage(&entries, DOT_ENV_DEPTH - 1).enter.is_empty(), "no deeper than the bound");
        assert_eq!(triage(&entries, DOT_ENV_DEPTH - 1).secrets.len(), 9, "found at the last level still");
    }

    #[test]
    fn the_walk_starts_beside_the_repository_up_to_a_child_of_the_root() {
        let never = |_: &Path| false;
        let s = walk_starts(Path::new("/srv/work/app"), Some(Path::new("/home/u")), never);
        assert_eq!(s, [Path::new("/srv/work"), Path::new("/srv"), Path::new("/home/u")]);
        let s = walk_starts(Path::new("/home/u/src/app"), Some(Path::new("/home/u")), never);
        assert_eq!(s, [Path::new("/home/u/src"), Path::new("/home/u"), Path::new("/home")]);
        // The worktree inside the checkout's .git: its hidden parents passed over.
        let s = walk_starts(Path::new("/srv/app/.git/retry-run/worktrees/t"), None, never);
        assert_eq!(s, [Path::new("/srv/app"), Path::new("/srv")]);
        // Shared temporary directories stop it.
        let tmp = |d: &Path| d == Path::new("/var/tmp") || d == Path::new("/tmp");
        let s = walk_starts(Path::new("/var/tmp/x/work/app"), Some(Path::new("/var/tmp/x/home")), tmp);
        assert_eq!(s, [Path::new("/var/tmp/x/work"), Path::new("/var/tmp/x"), Path::new("/var/tmp/x/home")]);
        assert!(walk_starts(Path::new("/tmp/app"), None, tmp).is_empty());
        assert!(walk_starts(Path::new("/app"), Some(Path::new("/")), never).is_empty(), "never / itself");
    }

    #[test]
    fn other_projects_secrets_beside_the_repository_are_found_not_its_own() {
        let t = tempfile::tempdir().expect("tempdir");
        let base = std::fs::canonicalize(t.path()).expect("real path");
        let files = [
            "work/app/.env",
            "work/app/sub/.env",
            "work/billing/.env",
            "work/billing/.aws/credentials",
            "work/billing/svc/api/.env.local",
            "work/billing/a/b/c/d/.env",
            "work/billing/node_modules/x/.env",
            "work/.netrc",
            "other/deep/proj/credentials.json",
            "home/proj/.env",
            "home/notes.txt",
        ];
        for f in files {
            let p = base.join(f);
            std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
            std::fs::write(&p, "x").expect("write");
        }
        std::os::unix::fs::symlink("/usr", base.join("work/billing/.env.usr")).expect("link");
        let root = base.join("work/app");
        let found = other_secrets(Some(&base.join("home")), &root);
        let mut rel: Vec<String> =
            found.iter().filter_map(|p| p.strip_prefix(&base).ok()).map(|p| p.display().to_string()).collect();
        rel.sort();
        assert_eq!(
            rel,
            [
                "home/proj/.env",
                "other/deep/proj/credentials.json",
                "work/.netrc",
                "work/billing/.aws",
                "work/billing/.env",
                "work/billing/svc/api/.env.local",
            ],
            "{found:?}"
        );
        let hidden = hidden_paths(&[], Some(&base.join("home")), &root);
        assert!(hidden.contains(&base.join("work/billing/.env")) && !hidden.contains(&root.join(".env")));
        assert!(!hidden.iter().any(|h| h.starts_with("/usr")), "a link is not followed: {hidden:?}");
    }

    #[test]
    fn refused_paths_outside_the_worktree() {
        let out = vec![
            "sh: 1: cannot create /home/u/notes.txt: Permission denied".to_string(),
            "touch: cannot touch '/w/ok': Permission denied".to_string(),
            "OSError: [Errno 13] Permission denied: '/home/u/.cache/x'".to_string(),
            "all fine".to_string(),
        ];
        assert_eq!(refused_paths(&out, Path::new("/w")), ["/home/u/notes.txt", "/home/u/.cache/x"]);
    }
}
