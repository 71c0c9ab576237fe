//! The one place that starts a confined process: what `retry-run sandbox`
//! does, which the attempt loop puts in front of every agent and check
//! command ([`crate::policy::wrap`]).
//!
//! With namespaces this process stays outside: it runs the network proxy
//! ([`crate::proxy`]) and starts bubblewrap ([`crate::layers::namespaces`]), which
//! starts the supervisor inside ([`crate::supervisor`]: its own small
//! executable, `--inner`). The supervisor forwards 127.0.0.1 to the proxy,
//! sets the limits, confines itself with Landlock, marks every descriptor
//! it inherited close-on-exec, starts the command under seccomp, ends
//! whatever the command leaves, and writes how it ended where the outer
//! one reads it. Without namespaces (`--layers landlock`) one process does
//! all of that, the proxy reached over TCP.

use crate::layers::landlock::LandlockError;
use crate::request::Request;
use crate::{Layers, layers::limits, layers::namespaces, layers::seccomp, proxy};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;

mod bubblewrap;
mod dirs;
mod landlock_only;
pub mod visible;

use crate::sys::process::*;
pub use bubblewrap::bubblewrap_json;
use bubblewrap::outer;
use dirs::private_tmpdir;
pub use dirs::{left_behind, maker_of};
use landlock_only::landlock_only;

/// Why a confined command did not run.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error(
        "this kernel ({kernel}) has no Landlock (Linux 5.13 or newer, enabled at boot): `retry-run sandbox` cannot confine anything here"
    )]
    NoLandlock { kernel: String },
    /// A writable path that is wrong (the message names it).
    #[error(transparent)]
    Writable(#[from] crate::SandboxError),
    /// A `--network` rule that cannot be read.
    #[error("--network {rule:?}: {source}")]
    Network { rule: String, source: proxy::RuleError },
    #[error("bubblewrap (bwrap) is not installed")]
    NoBwrap,
    #[error(
        "cannot create a private temporary directory in {}: {source}", dir.display()
    )]
    TmpDir { dir: PathBuf, source: std::io::Error },
    #[error("{source}")]
    TmpDirUnresolved { path: PathBuf, source: std::io::Error },
    #[error("cannot create a private temporary directory")]
    TmpDirTaken { dir: PathBuf },
    #[error(transparent)]
    Landlock(#[from] LandlockError),
    #[error("cannot start the network proxy: {0}")]
    Proxy(std::io::Error),
    #[error(transparent)]
    Seccomp(#[from] seccomp::SeccompError),
    #[error("no command to run")]
    NoCommand,
    /// The process limit cannot be held here (root without a pids cgroup).
    #[error(transparent)]
    ProcessLimit(crate::SandboxError),
    /// The command could not be started.
    #[error("cannot start {program:?}: {source}")]
    CannotStart { program: String, source: std::io::Error },
}

/// The exit status of a command line at fault (the spec's 2).
pub const USAGE: i32 = 2;

/// The exit status of a machine at fault (the spec's 3).
pub const ENVIRONMENT: i32 = 3;

impl ExecError {
    /// The exit status this error ends `retry-run sandbox` with: 2 for the
    /// command line, what a shell says for a command that cannot start
    /// (127 not found, 126 found and not runnable), else 3. Pure.
    pub fn exit_code(&self) -> i32 {
        match self {
            e if e.is_usage() => USAGE,
            ExecError::CannotStart { source, .. } if source.kind() == std::io::ErrorKind::NotFound => 127,
            ExecError::CannotStart { .. } => 126,
            _ => ENVIRONMENT,
        }
    }

    /// Whether the command line, rather than the machine, is at fault.
    pub fn is_usage(&self) -> bool {
        matches!(self, ExecError::Writable(_) | ExecError::Network { .. } | ExecError::NoBwrap | ExecError::NoCommand)
    }

    /// What the user can do about this error, when there is one thing to
    /// say (printed once, after the error).
    pub fn hint(&self) -> Option<String> {
        match self {
            ExecError::NoBwrap => {
                Some("install it (Debian and Ubuntu: apt-get install bubblewrap) or use --layers landlock".into())
            }
            ExecError::CannotStart { .. } => Some("check the command and that it is installed".into()),
            _ => None,
        }
    }
}

/// Runs `c` confined and returns its exit status (a death by signal N as
/// 128+N; with `c.reap`, that signal raised again on this process).
pub fn run(c: &Request) -> Result<i32, ExecError> {
    let (program, _) = c.argv.split_first().ok_or(ExecError::NoCommand)?;
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let dir = std::fs::canonicalize(&c.dir).unwrap_or_else(|_| c.dir.clone());
    // The command's TMPDIR: the one given; else, under the namespaces, the
    // namespace's own `/tmp` (a private tmpfs, gone with the namespace), so
    // that nothing is made, bound or removed on this machine's disk (a
    // directory made and removed on an ext4 `/tmp` cost about 0.4 ms a
    // confined process here); else a private directory made now and
    // removed afterwards.
    let (tmpdir, own_tmp) = match (&c.tmpdir, c.layers) {
        (Some(t), _) => (t.clone(), false),
        (None, Layers::Namespaces) => (PathBuf::from(namespaces::PRIVATE_TMP), false),
        (None, _) => (private_tmpdir("sandbox")?, true),
    };
    if let Some(parent) = c.log.as_deref().and_then(Path::parent) {
        let _ = std::fs::create_dir_all(parent);
    }
    let ended = match c.layers {
        Layers::None => {
            // Detect mode's agent: its connections and sockets observed
            // (`observe`: a filter that stops nothing).
            let observer = crate::detect::observe::Observer::for_command(c.network.observe, c.reap);
            if observer.is_some() {
                // The agent (the same user) may neither trace this process
                // nor take the filter's listener from it.
                not_dumpable();
            }
            let mut log = c.log.as_deref().and_then(open_log);
            let mut ended =
                start_and_wait(&mut unconfined(c, &tmpdir, observer.as_ref()), c.reap, program, log.as_mut());
            if observer.as_ref().is_some_and(crate::detect::observe::Observer::refused) {
                // The filter could not be handed over, so nothing started:
                // the command runs unobserved (the log says why).
                ended = start_and_wait(&mut unconfined(c, &tmpdir, None), c.reap, program, log.as_mut());
            }
            if let Some(o) = observer {
                let reach = crate::detect::observe::Reach {
                    network: &c.network.hosts,
                    host_network: c.network.host,
                    unix_sockets: c.network.unix_sockets,
                    inside: [&dir, &tmpdir],
                };
                o.finish(c.log.as_deref(), &reach);
            }
            finish(c, ended)
        }
        Layers::Namespaces => outer(c, &dir, &tmpdir, home.as_deref()),
        Layers::Landlock => landlock_only(c, &dir, &tmpdir, home.as_deref()),
    };
    if own_tmp {
        let _ = std::fs::remove_dir_all(&tmpdir);
    }
    ended
}

/// The command unconfined: no seccomp filter that refuses (it would set
/// no_new_privs and break a check's sudo), but without a terminal (the
/// kernel refuses TIOCSTI on a terminal that is not the caller's own);
/// with `observer`, under its filter (detect mode's agent).
fn unconfined(c: &Request, tmpdir: &Path, observer: Option<&crate::detect::observe::Observer>) -> Command {
    let mut cmd = command(c, tmpdir, None);
    own_session(&mut cmd);
    if let Some(o) = observer {
        o.install_on(&mut cmd);
    }
    cmd
}

/// The command with its TMPDIR (and the proxy's address, when it has one).
pub(super) fn command(c: &Request, tmpdir: &Path, proxy_port: Option<u16>) -> Command {
    let mut cmd = Command::new(&c.argv[0]);
    cmd.args(&c.argv[1..]);
    for k in ["TMPDIR", "TMP", "TEMP"] {
        cmd.env(k, tmpdir);
    }
    if let Some(port) = proxy_port {
        cmd.envs(proxy::proxy_env(port));
    }
    cmd
}

/// The paths it may write, ready for the kernel; `tmpdir`, its TMPDIR
/// where that is one of this machine's directories.
fn writable(c: &Request, dir: &Path, tmpdir: Option<&Path>, home: Option<&Path>) -> Result<Vec<PathBuf>, ExecError> {
    let extra = crate::prepare_writable(&c.paths.writable, home, &c.dir)?;
    Ok(crate::command_writable(dir, extra, &c.paths.git, tmpdir))
}

/// What the command may not read: the list it was given when that is
/// complete, else the secrets looked for now with it.
fn hidden(c: &Request, home: Option<&Path>) -> Vec<PathBuf> {
    if c.paths.deny_read_complete {
        let mut out: Vec<PathBuf> = c.paths.deny_read.iter().filter_map(|p| std::fs::canonicalize(p).ok()).collect();
        out.sort();
        out.dedup();
        out
    } else {
        crate::hidden_paths(&c.paths.deny_read, home, &c.dir)
    }
}

/// The proxy's rules, parsed (an error names the bad host).
pub(super) fn rules(c: &Request) -> Result<Vec<proxy::HostRule>, ExecError> {
    c.network
        .hosts
        .iter()
        .map(|n| proxy::parse_rule(n).map_err(|source| ExecError::Network { rule: n.clone(), source }))
        .collect()
}

/// The supervisor's executable name, beside `retry-run`
/// (`src/bin/retry-run-supervisor.rs`, [`crate::supervisor`]).
pub const SUPERVISOR: &str = "retry-run-supervisor";

/// The words that start the supervisor for a `retry-run` at `exe`: its own
/// executable beside it, or, where that is missing (a `retry-run` copied
/// alone, or built by `cargo run`), `retry-run supervisor`, the same
/// supervisor served by `retry-run` itself.
pub fn supervisor_for(exe: &Path) -> Vec<String> {
    match supervisor_beside(exe) {
        Some(own) => vec![own.display().to_string()],
        None => vec![exe.display().to_string(), "supervisor".into()],
    }
}

/// The supervisor's executable beside `retry-run` at `exe`, when it is
/// installed there.
pub fn supervisor_beside(exe: &Path) -> Option<PathBuf> {
    let own = exe.with_file_name(SUPERVISOR);
    own.is_file().then_some(own)
}

/// The line that has the supervisor (`supervisor`: the words that start
/// it, [`supervisor_for`]) run `c`: `... --request JSON`, what `run`
/// starts for each agent and check process. Pure.
pub fn line(supervisor: &[String], c: &Request) -> Vec<String> {
    let mut argv = supervisor.to_vec();
    argv.extend(["--request".to_string(), c.to_json()]);
    argv
}

/// How a process ended, from its wait status.
fn ended_of(status: std::process::ExitStatus) -> Ended {
    match status.signal() {
        Some(sig) => Ended::Signal(sig),
        None => Ended::Code(status.code().unwrap_or(1)),
    }
}

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ended {
    Code(i32),
    Signal(i32),
}

/// `exit N` or `signal N`, as the inner process writes it. Pure.
fn parse_status(s: &str) -> Option<Ended> {
    let (kind, n) = s.split_once(' ')?;
    let n: i32 = n.parse().ok()?;
    match kind {
        "exit" => Some(Ended::Code(n)),
        "signal" => Some(Ended::Signal(n)),
        _ => None,
    }
}

/// The status to return for `ended`: a death by signal N is 128+N, or,
/// when reaping, that signal raised again on this process.
pub(super) fn end_as(reap: bool, ended: Ended) -> i32 {
    match ended {
        Ended::Code(code) => code,
        Ended::Signal(sig) => {
            if reap {
                raise_again(sig);
            }
            128 + sig
        }
    }
}

fn finish(c: &Request, ended: Result<Ended, ExecError>) -> Result<i32, ExecError> {
    Ok(end_as(c.reap, ended?))
}

/// Starts `cmd` and waits for it; with `reap`, as the subreaper of what it
/// starts, ending every process it leaves (said on stderr and in `log`).
pub(super) fn start_and_wait(
    cmd: &mut Command,
    reap: bool,
    program: &str,
    log: Option<&mut std::fs::File>,
) -> Result<Ended, ExecError> {
    if reap {
        become_reaper();
    } else {
        pass_signals_on();
    }
    let status = cmd.spawn().and_then(|mut child| {
        COMMAND_GROUP.store(child.id() as i32, std::sync::atomic::Ordering::SeqCst);
        let status = child.wait();
        COMMAND_GROUP.store(0, std::sync::atomic::Ordering::SeqCst);
        status
    });
    if reap {
        let ended = end_leftovers();
        if ended > 0 {
            crate::console::errln!("retry-run: ended {ended} process(es) the command left running");
            if let Some(log) = log {
                use std::io::Write as _;
                let _ = writeln!(log, "{}", serde_json::json!({"limit": "leftovers", "max": ended}));
            }
        }
    }
    let s = status.map_err(|source| ExecError::CannotStart { program: program.to_string(), source })?;
    Ok(ended_of(s))
}

/// Appends to the sandbox's log the limits the command hit: the process
/// limit (as often as its cgroup refused a process) and the file size
/// limit (it ended by `SIGXFSZ`).
fn log_limits(c: &Request, cgroup: Option<&limits::PidsCgroup>, ended: Option<Ended>) {
    let Some(log) = &c.log else { return };
    let mut lines = String::new();
    if let Some(refused) = cgroup.map(limits::PidsCgroup::refused).filter(|n| *n > 0) {
        lines +=
            &format!("{}\n", serde_json::json!({"limit": "processes", "max": c.limits.processes, "refused": refused}));
    }
    if ended == Some(Ended::Signal(libc::SIGXFSZ)) {
        lines += &format!("{}\n", serde_json::json!({"limit": "file_size", "max": c.limits.file_size}));
    }
    if !lines.is_empty() {
        append(log, lines.trim_end());
    }
}

/// `log` opened to append (quietly: the log is a record, not a reason to
/// fail the command).
pub(super) fn open_log(log: &Path) -> Option<std::fs::File> {
    std::fs::OpenOptions::new().create(true).append(true).open(log).ok()
}

/// Appends `line` and a newline to `log` (quietly: the log is a record,
/// not a reason to fail the command).
fn append(log: &Path, line: &str) {
    use std::io::Write as _;
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(log) {
        let _ = writeln!(f, "{line}");
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::bubblewrap::own_executables;
    use super::{SUPERVISOR, supervisor_for};
    use crate::layers::landlock::Net;
    use crate::layers::probe::{DENIED, REFUSED, assert_seen, child, rerun, try_all};
    use crate::layers::{landlock, seccomp};
    use std::path::PathBuf;

    /// The whole fallback, Landlock's TCP rules and the seccomp filter: UDP and
    /// UNIX sockets refused, socketpair working, TCP to the allowed port
    /// only, no port bound.
    #[test]
    fn the_fallback_leaves_tcp_to_the_allowed_port_only() {
        if let Some((allowed, other)) = child("fallback") {
            let c = landlock::confine_with(&[], &[], Net::Only(vec![allowed])).expect("confined");
            assert_eq!(c.net_enforced, c.abi >= 4, "{c:?}");
            seccomp::deny_network_sockets().expect("filter installed");
            try_all(allowed, other);
            return;
        }
        let seen = rerun(concat!(module_path!(), "::the_fallback_leaves_tcp_to_the_allowed_port_only"), "fallback");
        assert_seen(
            &seen,
            &[
                ("udp", REFUSED),
                ("std_udp", REFUSED),
                ("unix_stream", REFUSED),
                ("unix_dgram", REFUSED),
                ("socketpair", Ok(())),
                ("connect_allowed", Ok(())),
                ("fastopen_other", REFUSED),
                ("mptcp_other", REFUSED),
                ("listen_unbound", REFUSED),
            ],
        );
        if landlock::abi() >= 4 {
            assert_seen(&seen, &[("connect_other", DENIED), ("bind_any", DENIED), ("bind_allowed", DENIED)]);
        }
    }

    #[test]
    fn retry_runs_own_executables_under_a_writable_path_are_protected_and_no_others() {
        let exes = [PathBuf::from("/h/.cargo/bin/retry-run"), PathBuf::from("/h/.cargo/bin/retry-run-supervisor")];
        let cases: [(&[&str], usize); 4] =
            [(&[], 0), (&["/work/repo", "/tmp/t"], 0), (&["/h/.cargo"], 2), (&["/h/.cargo/bin/retry-run"], 1)];
        for (writable, protected) in cases {
            let writable: Vec<PathBuf> = writable.iter().map(PathBuf::from).collect();
            assert_eq!(own_executables(&exes, &writable).len(), protected, "{writable:?}");
        }
        let same = [exes[0].clone(), exes[0].clone()];
        assert_eq!(own_executables(&same, &[PathBuf::from("/h")]), [exes[0].clone()], "a fallback names it once");
    }

    #[test]
    fn its_own_executable_is_used_where_it_is_installed_beside_retry_run() {
        let dir = std::env::temp_dir().join(format!("rr-supervisor-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let exe = dir.join("retry-run");
        assert_eq!(
            supervisor_for(&exe),
            [exe.display().to_string(), "supervisor".into()],
            "missing: retry-run supervisor"
        );
        std::fs::write(dir.join(SUPERVISOR), b"").expect("written");
        assert_eq!(supervisor_for(&exe), [dir.join(SUPERVISOR).display().to_string()]);
        std::fs::remove_dir_all(&dir).expect("removed");
    }
}
