//! Namespaces: the outer layer of confinement, through bubblewrap (`bwrap`,
//! Debian's `bubblewrap`, the same program Codex and sandbox-runtime use).
//! bubblewrap is a small setuid-free program that has been audited for
//! exactly this job; mount code of our own would be more code to trust.
//!
//! A confined process gets its own user, mount, PID, IPC, UTS and network
//! namespaces: the whole filesystem read-only, the writable paths bound
//! back writable, the protected paths (the worktree's git links) bound
//! read-only over themselves, each hidden path covered (an empty directory,
//! or `/dev/null` unreadable), private `/tmp`, `/dev/shm` and `/run`, a
//! minimal `/dev`, its own `/proc`, and only loopback for a network: the
//! allowed hosts are reached through retry-run's proxy, whose socket is
//! bound in at [`PROXY_SOCKET`]. When its first process ends, everything
//! left in the PID namespace ends with it.

use std::path::{Path, PathBuf};

/// Where the outer process's private directory appears inside: the
/// proxy's socket and the file the inner process writes its end to.
pub const RUN_DIR: &str = "/run/retry-run";
/// The namespace's own `/tmp` (one of [`PRIVATE`]): the TMPDIR of a
/// command given none.
pub const PRIVATE_TMP: &str = "/tmp";
/// Where the proxy's socket appears inside the namespace.
pub const PROXY_SOCKET: &str = "/run/retry-run/proxy.sock";

/// The directories a confined process gets empty and private.
pub const PRIVATE: [&str; 3] = ["/tmp", "/dev/shm", "/run"];

/// What a confined process sees: built by the caller, turned into
/// bubblewrap's arguments by [`args`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layout {
    /// Its working directory.
    pub dir: PathBuf,
    /// Paths bound writable (devices are left to the minimal `/dev`).
    pub writable: Vec<PathBuf>,
    /// Paths inside writable ones bound read-only over themselves.
    pub protected: Vec<PathBuf>,
    /// Directories bound read-only at another path (from, at).
    pub shared: Vec<(PathBuf, PathBuf)>,
    /// Paths covered: directories by an empty one, files by `/dev/null`
    /// (which cannot be opened there: bind mounts carry no devices).
    pub hidden: Vec<Hidden>,
    /// Paths beneath the private directories that must stay readable (the
    /// repository, the command's own directory, `PATH` entries).
    pub keep: Vec<PathBuf>,
    /// The outer process's private directory, bound in at [`RUN_DIR`].
    pub run_dir: Option<PathBuf>,
    /// Share the network namespace of the caller (`network_mode = "host"`).
    pub host_network: bool,
}

/// A path to hide, and whether it is a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hidden {
    pub path: PathBuf,
    pub dir: bool,
}

/// The namespaces a confined process gets, for the record.
pub fn unshared(host_network: bool) -> Vec<&'static str> {
    let mut out = vec!["user", "mount", "pid", "ipc", "uts"];
    if !host_network {
        out.push("net");
    }
    out
}

/// Whether `p` lies beneath one of the [`PRIVATE`] directories.
fn under_private(p: &Path) -> bool {
    PRIVATE.iter().any(|d| p.starts_with(d))
}

/// bubblewrap's arguments for `layout`, up to (not including) `--` and the
/// command. Later mounts win over earlier ones, so the order is: the
/// read-only root, the private directories, what must stay readable in
/// them, the writable paths, the protected ones, the shared ones, the
/// hidden ones. Pure.
pub fn args(layout: &Layout) -> Vec<String> {
    let s = |p: &Path| p.display().to_string();
    let mut out: Vec<String> =
        ["--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts"].iter().map(|a| a.to_string()).collect();
    if !layout.host_network {
        out.push("--unshare-net".into());
    }
    // Dies with the outer process; a session of its own, so nothing inside
    // has a controlling terminal (TIOCSTI, /dev/tty).
    out.extend(["--die-with-parent".into(), "--new-session".into()]);
    // The supervisor that follows is the namespace's PID 1 in place of
    // bubblewrap's own: it already reaps what the command leaves, ends it
    // and says how the command ended, so bubblewrap's would be one process
    // more to start and wait for. As PID 1 it cannot be killed from inside
    // (the kernel delivers a signal from inside only where PID 1 handles
    // it), and when it ends, the kernel ends everything left in the
    // namespace before its parent sees it end.
    out.push("--as-pid-1".into());
    // Run by root, bubblewrap keeps every capability inside: none.
    out.extend(["--cap-drop".into(), "ALL".into()]);
    out.extend(["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"].map(String::from));
    for d in PRIVATE {
        out.extend(["--tmpfs".to_string(), d.to_string()]);
    }
    // A private directory itself is never bound back (a `PATH` holding
    // `/tmp` keeps nothing of it).
    let mut keep: Vec<&PathBuf> = layout
        .keep
        .iter()
        .filter(|p| under_private(p) && !PRIVATE.iter().any(|d| p.as_path() == Path::new(d)))
        .collect();
    keep.sort();
    // What lies beneath a path already bound is visible through it (and a
    // link there cannot be bound over again).
    let mut bound: Vec<&PathBuf> = Vec::new();
    for k in keep {
        if !bound.last().is_some_and(|b| k.starts_with(b)) {
            bound.push(k);
        }
    }
    for k in bound {
        out.extend(["--ro-bind-try".to_string(), s(k), s(k)]);
    }
    for w in layout.writable.iter().filter(|w| !w.starts_with("/dev")) {
        out.extend(["--bind-try".to_string(), s(w), s(w)]);
    }
    for p in &layout.protected {
        out.extend(["--ro-bind-try".to_string(), s(p), s(p)]);
    }
    for (from, at) in &layout.shared {
        out.extend(["--ro-bind".to_string(), s(from), s(at)]);
    }
    for h in &layout.hidden {
        if h.dir {
            out.extend(["--tmpfs".to_string(), s(&h.path)]);
        } else {
            out.extend(["--ro-bind-try".to_string(), "/dev/null".to_string(), s(&h.path)]);
        }
    }
    if let Some(run) = &layout.run_dir {
        out.extend(["--bind".to_string(), s(run), RUN_DIR.to_string()]);
    }
    out.extend(["--chdir".to_string(), s(&layout.dir)]);
    out
}

/// The bubblewrap program: `RETRY_RUN_BWRAP` when set (empty: none, to
/// test the fallback), else `bwrap` on `PATH`.
pub fn program() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("RETRY_RUN_BWRAP") {
        return (!p.is_empty()).then(|| PathBuf::from(p));
    }
    crate::programs::find_program("bwrap")
}

/// Why namespaces cannot be made here. Cloned out of the answer kept for
/// the process, so the error it came from is shared.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ProbeError {
    #[error("bubblewrap (bwrap) is not installed")]
    NotInstalled,
    /// bubblewrap ran and refused; `why` is what it printed.
    #[error("{} cannot create namespaces here: {why}", bwrap.display())]
    Refused { bwrap: PathBuf, why: String },
    #[error("cannot run {}: {source}", bwrap.display())]
    CannotRun { bwrap: PathBuf, source: std::sync::Arc<std::io::Error> },
}

/// The probe's answer, once per process.
static PROBED: std::sync::OnceLock<Result<PathBuf, ProbeError>> = std::sync::OnceLock::new();

/// A probe started ahead of need ([`probe_early`]).
static EARLY: std::sync::Mutex<Option<std::thread::JoinHandle<Result<PathBuf, ProbeError>>>> =
    std::sync::Mutex::new(None);

/// Starts [`probe`] on a thread of its own, so that the bubblewrap process
/// it runs (a few milliseconds) overlaps the work before the first
/// confined process; the answer is kept for the process.
pub fn probe_early() {
    if PROBED.get().is_some() {
        return;
    }
    if let Ok(mut early) = EARLY.lock()
        && early.is_none()
    {
        *early = Some(std::thread::spawn(probe_now));
    }
}

/// Waits for the probe [`probe_early`] started, if it started one (its
/// answer kept), and starts none: where namespaces are not asked for, the
/// probe's write to the user's cache must not land while an unconfined
/// agent runs, where it would be taken for the agent's (detect mode
/// compares `~/.cache/retry-run`).
pub fn settle_early() {
    let started = EARLY.lock().is_ok_and(|e| e.is_some());
    if started {
        let _ = probe();
    }
}

/// Whether namespaces can be made here: bubblewrap is installed and the
/// kernel lets this user create them (some containers and distributions
/// refuse). `Err` says why not, for the one note the fallback prints.
/// Asked once per process (a probe started by [`probe_early`] is awaited);
/// a success is kept for an hour in the user's cache for the same machine
/// state (see `machine_state`), so most runs start no bubblewrap to ask.
pub fn probe() -> Result<PathBuf, ProbeError> {
    PROBED
        .get_or_init(|| {
            let early = EARLY.lock().ok().and_then(|mut e| e.take());
            early.and_then(|h| h.join().ok()).unwrap_or_else(probe_now)
        })
        .clone()
}

fn probe_now() -> Result<PathBuf, ProbeError> {
    let Some(bwrap) = program() else {
        return Err(ProbeError::NotInstalled);
    };
    // A success is kept for what it depended on (see `machine_state`): the
    // next run on the same machine state starts no probe of its own.
    let state = machine_state(&bwrap);
    let kept = probe_cache();
    if let (Some(state), Some(file)) = (&state, &kept)
        && still_holds(file, state, std::time::SystemTime::now())
    {
        return Ok(bwrap);
    }
    let probed = probe_bwrap(&bwrap);
    if let (Ok(_), Some(state), Some(file)) = (&probed, &state, &kept) {
        keep_success(file, state);
    }
    probed
}

/// How long a kept success holds, at most.
const PROBE_KEPT_FOR: std::time::Duration = std::time::Duration::from_secs(3600);

/// Where a success of the probe is kept: `$XDG_CACHE_HOME/retry-run/
/// namespaces-probe` (else `~/.cache/...`); `None` without either.
fn probe_cache() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("retry-run").join("namespaces-probe"))
}

/// What decides whether bubblewrap can make namespaces for this process,
/// as text: the boot and the kernel, this process's user, user and mount
/// namespaces (another container), its seccomp mode, no-new-privileges
/// and capabilities, the kernel settings that gate unprivileged user
/// namespaces (Debian's, AppArmor's on Ubuntu, the count), and bubblewrap
/// itself (its path, file and mode: a setuid one works otherwise).
/// `None` when one of the always-present parts cannot be read.
fn machine_state(bwrap: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let read = |p: &str| std::fs::read_to_string(p).map(|s| s.trim().to_string());
    let mut out = vec![read("/proc/sys/kernel/random/boot_id").ok()?, read("/proc/sys/kernel/osrelease").ok()?];
    for ns in ["/proc/self/ns/user", "/proc/self/ns/mnt"] {
        out.push(std::fs::read_link(ns).ok()?.display().to_string());
    }
    let status = read("/proc/self/status").ok()?;
    out.extend(
        status
            .lines()
            .filter(|l| ["Uid:", "Gid:", "Groups:", "Cap", "NoNewPrivs:", "Seccomp:"].iter().any(|k| l.starts_with(k)))
            .map(str::to_string),
    );
    for setting in [
        "/proc/sys/kernel/unprivileged_userns_clone",
        "/proc/sys/user/max_user_namespaces",
        "/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
    ] {
        out.push(format!("{setting}={}", read(setting).unwrap_or_default()));
    }
    let m = std::fs::metadata(bwrap).ok()?;
    out.push(format!("{} {} {} {} {} {}", bwrap.display(), m.dev(), m.ino(), m.size(), m.mtime(), m.mode()));
    Some(out.join("\n"))
}

/// Whether the success kept in `file` holds for `state` at `now`: written
/// for the same state, less than [`PROBE_KEPT_FOR`] ago.
fn still_holds(file: &Path, state: &str, now: std::time::SystemTime) -> bool {
    use std::io::Read as _;
    use std::os::unix::fs::OpenOptionsExt;
    // Opened without following a link and without waiting on a FIFO (a
    // `~/.cache` made writable lets an agent plant either), a regular file
    // only, read up to a little more than a state's size.
    let Ok(f) = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK).open(file)
    else {
        return false;
    };
    let Ok(meta) = f.metadata() else { return false };
    let mut kept = String::new();
    if !meta.is_file() || f.take(64 * 1024).read_to_string(&mut kept).is_err() {
        return false;
    }
    kept_holds(&kept, state, meta.modified().ok(), now)
}

/// [`still_holds`] over what was read. Pure.
fn kept_holds(kept: &str, state: &str, written: Option<std::time::SystemTime>, now: std::time::SystemTime) -> bool {
    kept == state && written.and_then(|w| now.duration_since(w).ok()).is_some_and(|age| age < PROBE_KEPT_FOR)
}

/// Keeps a success for `state` in `file` (a temporary file renamed; a
/// failure to write is no error: the next run probes again).
fn keep_success(file: &Path, state: &str) {
    let Some(dir) = file.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    // A new file of its own (never through a link planted at its name),
    // renamed over the kept one (a link there is replaced, not followed).
    let tmp = dir.join(format!(".namespaces-probe.{}", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut f| std::io::Write::write_all(&mut f, state.as_bytes()));
    match written {
        Ok(()) if std::fs::rename(&tmp, file).is_ok() => {}
        // Not ours to remove when it was there before.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        _ => {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

/// Runs bubblewrap once with a confined process's options and `true`.
fn probe_bwrap(bwrap: &Path) -> Result<PathBuf, ProbeError> {
    let bwrap = bwrap.to_path_buf();
    let layout = Layout { dir: PathBuf::from("/"), ..Layout::default() };
    let mut argv = args(&layout);
    argv.extend(["--".to_string(), "true".to_string()]);
    match crate::programs::output(&bwrap, &argv) {
        Ok(out) if out.status.success() => Ok(bwrap),
        Ok(out) => {
            let why = String::from_utf8_lossy(&out.stderr);
            Err(ProbeError::Refused { bwrap, why: why.trim().to_string() })
        }
        Err(e) => Err(ProbeError::CannotRun { bwrap, source: std::sync::Arc::new(e) }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kept_success_holds_for_the_same_state_within_the_hour_only() {
        let now = std::time::SystemTime::now();
        let ago = |s: u64| Some(now - std::time::Duration::from_secs(s));
        let cases = [
            ("a", "a", ago(10), true),
            ("a", "a", ago(3599), true),
            ("a", "a", ago(3600), false),
            ("a", "b", ago(10), false),
            ("", "a", ago(10), false),
            ("a", "a", None, false),
            // Written in the future (a clock set back): not trusted.
            ("a", "a", Some(now + std::time::Duration::from_secs(60)), false),
        ];
        for (kept, state, written, holds) in cases {
            assert_eq!(kept_holds(kept, state, written, now), holds, "{kept:?} {state:?} {written:?}");
        }
    }

    #[test]
    fn a_planted_link_or_fifo_is_neither_read_nor_written_through() {
        let dir = std::env::temp_dir().join(format!("rr-probe-kept-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let now = std::time::SystemTime::now();
        let target = dir.join("target");
        std::fs::write(&target, "s").expect("target");
        let link = dir.join("namespaces-probe");
        std::os::unix::fs::symlink(&target, &link).expect("link");
        assert!(!still_holds(&link, "s", now), "a link is not followed");
        let fifo = dir.join("fifo");
        crate::sys::fd::mkfifo(&fifo).expect("a FIFO made");
        assert!(!still_holds(&fifo, "s", now), "a FIFO is not waited on");
        // A link planted at the temporary name is not written through.
        let planted = dir.join(format!(".namespaces-probe.{}", std::process::id()));
        std::os::unix::fs::symlink(&target, &planted).expect("planted");
        keep_success(&link, "state");
        assert_eq!(std::fs::read_to_string(&target).expect("target"), "s", "nothing written through");
        std::fs::remove_file(&planted).expect("removed");
        keep_success(&link, "state");
        assert!(still_holds(&link, "state", std::time::SystemTime::now()), "the link replaced by the kept file");
        assert_eq!(std::fs::read_to_string(&target).expect("target"), "s");
        std::fs::remove_dir_all(&dir).expect("removed");
    }

    #[test]
    fn the_machine_state_names_bubblewrap_and_changes_with_it() {
        let dir = std::env::temp_dir().join(format!("rr-probe-state-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let (a, b) = (dir.join("a"), dir.join("b"));
        std::fs::write(&a, b"#!/bin/sh\n").expect("a");
        std::fs::write(&b, b"#!/bin/sh\nexit 1\n").expect("b");
        let sa = machine_state(&a).expect("readable here");
        assert!(sa.contains(&a.display().to_string()) && sa.lines().count() > 5, "{sa}");
        assert_eq!(machine_state(&a), Some(sa.clone()), "the same state twice");
        assert_ne!(machine_state(&b), Some(sa), "another bubblewrap, another state");
        assert_eq!(machine_state(&dir.join("missing")), None);
        std::fs::remove_dir_all(&dir).expect("removed");
    }

    #[test]
    fn mounts_in_order_later_wins() {
        let layout = Layout {
            dir: "/r/wt".into(),
            writable: vec!["/r/wt".into(), "/dev/null".into(), "/tmp/x".into()],
            protected: vec!["/r/wt/.git".into()],
            shared: vec![("/r/node_modules".into(), "/r/wt/node_modules".into())],
            hidden: vec![Hidden { path: "/h/.ssh".into(), dir: true }, Hidden { path: "/h/.netrc".into(), dir: false }],
            keep: vec!["/tmp/repo".into(), "/usr/bin".into(), "/tmp/repo".into(), "/tmp".into(), "/tmp/repo/x".into()],
            run_dir: Some("/tmp/run".into()),
            host_network: false,
        };
        let a = args(&layout).join(" ");
        assert!(a.starts_with("--unshare-user --unshare-pid --unshare-ipc --unshare-uts --unshare-net --die-with-parent --new-session --as-pid-1 --cap-drop ALL --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --tmpfs /dev/shm --tmpfs /run "), "{a}");
        assert!(a.contains("--ro-bind-try /tmp/repo /tmp/repo --bind-try /r/wt /r/wt --bind-try /tmp/x /tmp/x --ro-bind-try /r/wt/.git /r/wt/.git --ro-bind /r/node_modules /r/wt/node_modules --tmpfs /h/.ssh --ro-bind-try /dev/null /h/.netrc --bind /tmp/run /run/retry-run --chdir /r/wt"), "{a}");
        assert_eq!(a.matches("/tmp/repo").count(), 2, "kept once: {a}");
        assert!(!a.contains("/usr/bin"), "only what is under a private directory is bound again: {a}");
        assert!(!a.contains("--ro-bind-try /tmp /tmp"), "a private directory is never bound back whole: {a}");
        assert!(!a.contains("/dev/null /dev/null"), "devices come from the minimal /dev: {a}");
        let host = args(&Layout { host_network: true, ..layout });
        assert!(!host.contains(&"--unshare-net".to_string()));
        assert_eq!(unshared(true), ["user", "mount", "pid", "ipc", "uts"]);
    }
}
