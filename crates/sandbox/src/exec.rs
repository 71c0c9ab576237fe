//! The one place that starts a confined process: what `retry-run sandbox`
//! does, which the attempt loop puts in front of every agent and check
//! command ([`super::wrap`]).
//!
//! With namespaces this process stays outside: it runs the network proxy
//! ([`super::proxy`]) and starts bubblewrap ([`super::namespaces`]), which
//! starts the supervisor inside ([`super::supervisor`]: its own small
//! executable, `--inner`). The supervisor forwards 127.0.0.1 to the proxy,
//! sets the limits, confines itself with Landlock, marks every descriptor
//! it inherited close-on-exec, starts the command under seccomp, ends
//! whatever the command leaves, and writes how it ended where the outer
//! one reads it. Without namespaces (`--layers landlock`) one process does
//! all of that, the proxy reached over TCP.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::Command;

use super::landlock::{self, LandlockError};
use super::{Found, Layers, Limits, limits, namespaces, proxy, seccomp};

/// A command to run confined to a directory. Also the outer process's
/// line when `run` starts the supervisor's executable for it
/// ([`outer_argv`]: one JSON object, without the directory, which is the
/// process's own, and the command, which follows `--`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Confined {
    pub layers: Layers,
    /// The directory it may write beneath (the current directory).
    #[serde(skip)]
    pub dir: PathBuf,
    /// More paths it may write beneath, as given (`sandbox.writable`,
    /// `--writable`): see [`super::prepare_writable`].
    pub writable: Vec<String>,
    /// The repository's paths it may write to commit
    /// ([`super::git_writable`]); empty when git is read-only.
    pub git: Vec<PathBuf>,
    /// More paths it may not read, as given (`--deny-read`), beside the
    /// secrets never readable ([`super::SECRETS`]).
    pub deny_read: Vec<String>,
    /// Paths inside the writable ones it may not change (namespaces only).
    pub protect: Vec<PathBuf>,
    /// Directories mounted read-only at a path (from, at; namespaces only).
    pub shared: Vec<(PathBuf, PathBuf)>,
    /// Paths beneath `/tmp` or `/run` that stay readable (namespaces only).
    pub keep: Vec<PathBuf>,
    /// The hosts it may reach through the proxy.
    pub network: Vec<String>,
    /// The machine's network, unconfined.
    pub host_network: bool,
    /// Named UNIX sockets allowed.
    pub unix_sockets: bool,
    /// Where the proxy appends one line per connection, and the limits
    /// one per limit hit.
    pub log: Option<PathBuf>,
    pub limits: Limits,
    /// Its TMPDIR; `None` makes a private one, removed when it ends.
    pub tmpdir: Option<PathBuf>,
    /// Wait for the command, then end every process it left behind (a
    /// double-forked daemon included), and end the way it ended: its exit
    /// code, or its signal raised again (the attempt loop).
    pub reap: bool,
    /// Loopback ports of the machine that something listens on and the
    /// command may not reach (the inner one records a direct connection
    /// to one as refused; see [`super::listening::host_listening_ports`]).
    pub refuse_ports: Vec<u16>,
    /// Outside: look for the ports to refuse (the agent's sandbox only).
    pub refuse_direct: bool,
    /// Without layers (detect mode's agent): its connections and sockets
    /// are observed and recorded in the log, judged against `network`
    /// ([`super::observe`]).
    #[serde(default)]
    pub observe: bool,
    /// `deny_read` is the whole list of what to hide (the attempt loop
    /// looked for the secrets once for the run): not looked for again.
    pub deny_read_complete: bool,
    /// Print bubblewrap's program and arguments as they would run (the
    /// benchmark's floor), leave the directories they name, run nothing.
    pub print_bwrap: bool,
    /// What `run` found once for all its confined processes (absent: looked
    /// up here).
    #[serde(default)]
    pub found: Found,
    /// The command and its arguments.
    #[serde(skip)]
    pub argv: Vec<String>,
}

impl Default for Confined {
    fn default() -> Self {
        Confined {
            layers: Layers::Namespaces,
            dir: PathBuf::new(),
            writable: Vec::new(),
            git: Vec::new(),
            deny_read: Vec::new(),
            protect: Vec::new(),
            shared: Vec::new(),
            keep: Vec::new(),
            network: Vec::new(),
            host_network: false,
            unix_sockets: false,
            log: None,
            limits: Limits::default(),
            tmpdir: None,
            reap: false,
            refuse_ports: Vec::new(),
            refuse_direct: false,
            observe: false,
            deny_read_complete: false,
            print_bwrap: false,
            found: Found::default(),
            argv: Vec::new(),
        }
    }
}

/// Why a confined command did not run.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error(
        "this kernel ({kernel}) has no Landlock (Linux 5.13 or newer, enabled at boot): `retry-run sandbox` cannot confine anything here"
    )]
    NoLandlock { kernel: String },
    /// A writable path that is wrong (the message names it).
    #[error(transparent)]
    Writable(#[from] super::SandboxError),
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
    ProcessLimit(super::SandboxError),
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
pub fn run(c: &Confined) -> Result<i32, ExecError> {
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
            let observer = super::observe::Observer::for_command(c.observe, c.reap);
            if observer.is_some() {
                // The agent (the same user) may neither trace this process
                // nor take the filter's listener from it.
                not_dumpable();
            }
            let mut log = c.log.as_deref().and_then(open_log);
            let mut ended =
                start_and_wait(&mut unconfined(c, &tmpdir, observer.as_ref()), c.reap, program, log.as_mut());
            if observer.as_ref().is_some_and(super::observe::Observer::refused) {
                // The filter could not be handed over, so nothing started:
                // the command runs unobserved (the log says why).
                ended = start_and_wait(&mut unconfined(c, &tmpdir, None), c.reap, program, log.as_mut());
            }
            if let Some(o) = observer {
                let reach = super::observe::Reach {
                    network: &c.network,
                    host_network: c.host_network,
                    unix_sockets: c.unix_sockets,
                    inside: [&dir, &tmpdir],
                };
                o.finish(c.log.as_deref(), &reach);
            }
            finish(c, ended)
        }
        Layers::Namespaces => outer(c, &dir, &tmpdir, home.as_deref()),
        Layers::Landlock => landlock_only(c, &dir, &tmpdir, home.as_deref()),
    };
    if own_tmp && !c.print_bwrap {
        let _ = std::fs::remove_dir_all(&tmpdir);
    }
    ended
}

/// The command unconfined: no seccomp filter that refuses (it would set
/// no_new_privs and break a check's sudo), but without a terminal (the
/// kernel refuses TIOCSTI on a terminal that is not the caller's own);
/// with `observer`, under its filter (detect mode's agent).
fn unconfined(c: &Confined, tmpdir: &Path, observer: Option<&super::observe::Observer>) -> Command {
    let mut cmd = command(c, tmpdir, None);
    own_session(&mut cmd);
    if let Some(o) = observer {
        o.install_on(&mut cmd);
    }
    cmd
}

/// The command with its TMPDIR (and the proxy's address, when it has one).
pub(super) fn command(c: &Confined, tmpdir: &Path, proxy_port: Option<u16>) -> Command {
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
fn writable(c: &Confined, dir: &Path, tmpdir: Option<&Path>, home: Option<&Path>) -> Result<Vec<PathBuf>, ExecError> {
    let extra = super::prepare_writable(&c.writable, home, &c.dir)?;
    Ok(super::command_writable(dir, extra, &c.git, tmpdir))
}

/// What the command may not read: the list it was given when that is
/// complete, else the secrets looked for now with it.
fn hidden(c: &Confined, home: Option<&Path>) -> Vec<PathBuf> {
    if c.deny_read_complete {
        let mut out: Vec<PathBuf> = c.deny_read.iter().filter_map(|p| std::fs::canonicalize(p).ok()).collect();
        out.sort();
        out.dedup();
        out
    } else {
        super::hidden_paths(&c.deny_read, home, &c.dir)
    }
}

/// The proxy's rules, parsed (an error names the bad host).
pub(super) fn rules(c: &Confined) -> Result<Vec<proxy::HostRule>, ExecError> {
    c.network
        .iter()
        .map(|n| proxy::parse_rule(n).map_err(|source| ExecError::Network { rule: n.clone(), source }))
        .collect()
}

/// Outside the namespaces: the proxy, then bubblewrap starting this
/// executable again inside; its status is the command's, read from the
/// file the inner one writes. `tmpdir`: the command's TMPDIR, bound in
/// where it was given (`c.tmpdir`), else the namespace's own `/tmp`.
fn outer(c: &Confined, dir: &Path, tmpdir: &Path, home: Option<&Path>) -> Result<i32, ExecError> {
    let bwrap = c.found.bwrap.clone().or_else(namespaces::program).ok_or(ExecError::NoBwrap)?;
    // As root, the command's tree gets a pids cgroup: on cgroup v1 the
    // thread that starts bubblewrap enters it alone, so bubblewrap is born
    // in it (see `ThreadEntry`; the cgroup holds one process more, which
    // is not the command's to count); elsewhere bubblewrap's child is moved
    // in while it sets up, the move starting now, beside the work below
    // (see `Mover`).
    let cgroup = if c.print_bwrap {
        None
    } else {
        limits::PidsCgroup::for_limit(c.limits.processes, c.found.pids_cgroup.as_deref(), true)
    };
    let entry = cgroup.as_ref().and_then(ThreadEntry::open);
    if let (Some(cg), None) = (&cgroup, &entry)
        && cg.tasks().is_some()
    {
        // cgroup v1 whose `tasks` this thread cannot enter: bubblewrap's
        // child is moved instead, and bubblewrap is not in it.
        let _ = cg.set_max(c.limits.processes);
    }
    let mover = cgroup.as_ref().filter(|_| entry.is_none()).map(Mover::start);
    let rules = rules(c)?;
    let allowed_loopback: Vec<u16> = rules.iter().filter_map(proxy::HostRule::loopback).map(|l| l.port).collect();
    let writable = writable(c, dir, c.tmpdir.is_some().then_some(tmpdir), home)?;
    let hidden = hidden(c, home);
    let run_dir = run_dir()?;
    let socket = run_dir.join("proxy.sock");
    let exe =
        std::env::current_exe().map_err(|source| ExecError::CannotStart { program: "retry-run".into(), source })?;
    let supervisor = supervisor_for(&exe);
    let own = [exe.with_file_name("retry-run"), PathBuf::from(&supervisor[0])];
    let layout = layout(c, dir, (&writable, &hidden), &own, &run_dir);
    let status_file = run_dir.join("status");
    let mut argv = namespaces::args(&layout);
    if c.print_bwrap {
        let made = [run_dir.as_path()];
        let printed = serde_json::json!({ "bwrap": bwrap, "args": argv, "made": made, "hidden": hidden });
        crate::console::outln!("{printed}");
        return Ok(0);
    }
    // The proxy's socket listens before bubblewrap starts (the inner
    // process looks for it); its runtime and thread start at the first
    // connection (see `wait_serving`).
    let bound = if c.host_network { None } else { Some(proxy::bind(&socket).map_err(ExecError::Proxy)?) };
    let listening = bound.as_ref().map(std::os::fd::AsRawFd::as_raw_fd);
    let serve = move || bound.map(|b| b.serve(rules, c.log.clone(), false)).transpose().map_err(ExecError::Proxy);
    let pipe_error = |source| ExecError::CannotStart { program: "pipe".into(), source };
    let handoff = Handoff::new(mover.is_some()).map_err(pipe_error)?;
    argv.extend(inner_args(c, &supervisor, (tmpdir, handoff.done_fd()), &writable, &hidden, &allowed_loopback));
    // While bubblewrap sets up: the pids cgroups earlier confined processes
    // left (see `Waited::Done`) removed.
    let sweep = || {
        if let Some(cg) = &cgroup {
            cg.sweep_siblings();
        }
    };
    let ended = run_bubblewrap(c, (&bwrap, &argv, handoff), (entry, mover), (listening, serve), (&status_file, sweep))?;
    after_bubblewrap(c, &bwrap, ended, (&status_file, &run_dir), cgroup.as_ref())
}

/// The mounts of the namespace: the working directory, what may be
/// written (`writable`) and what is hidden, retry-run's `own` executables
/// read-only, the shared directories, and the run directory.
fn layout(
    c: &Confined,
    dir: &Path,
    (writable, hidden): (&[PathBuf], &[PathBuf]),
    own: &[PathBuf],
    run_dir: &Path,
) -> namespaces::Layout {
    namespaces::Layout {
        dir: dir.to_path_buf(),
        writable: writable.to_vec(),
        protected: c.protect.iter().cloned().chain(own_executables(own, writable)).collect(),
        shared: c.shared.clone(),
        hidden: hidden.iter().map(|p| namespaces::Hidden { path: p.clone(), dir: p.is_dir() }).collect(),
        keep: kept_readable(c, dir, own),
        run_dir: Some(run_dir.to_path_buf()),
        host_network: c.host_network,
    }
}

/// After bubblewrap ended as [`run_bubblewrap`] says: the command's status
/// (from the file the inner process wrote), everything it left ended, its
/// limits and connections logged, the run directory removed.
fn after_bubblewrap(
    c: &Confined,
    bwrap: &Path,
    (waited, pid1, proxy): Bubblewrapped<Option<proxy::Proxy>>,
    (status_file, run_dir): (&Path, &Path),
    cgroup: Option<&limits::PidsCgroup>,
) -> Result<i32, ExecError> {
    // What needs nothing more of the namespace is done first, while its
    // PID 1 ends: the proxy told to stop (the command has ended, and with
    // it the supervisor that forwarded to it; its thread winds down beside
    // the rest and is waited for last), the inner process's status and log
    // read, the run directory removed (inside, it is only a mount of it).
    let (proxy, unserved) = match proxy {
        Some(Ok(p)) => (p, None),
        Some(Err(e)) => (None, Some(e)),
        None => (None, None),
    };
    if let Some(p) = &proxy {
        p.begin_stop();
    }
    let inner_status = std::fs::read_to_string(status_file).ok();
    if let (Some(log), Ok(inner_log)) = (&c.log, std::fs::read_to_string(run_dir.join("log"))) {
        append(log, inner_log.trim_end());
    }
    let _ = std::fs::remove_dir_all(run_dir);
    // bubblewrap ended before the supervisor said the command was done,
    // or nothing here would reap the supervisor once this process ends:
    // its process in the namespace (PID 1) outlives bubblewrap by a moment
    // and comes to this process, waited for by its pid, which bubblewrap
    // said, so nothing of the command outlives this process; then, where
    // bubblewrap ended first, whatever else came here is ended and reaped
    // (not left to the machine's init, which may take seconds to reap it).
    if let Some(pid) = pid1 {
        // SAFETY: waitpid on a process this process is the (sub)reaper of;
        // one already reaped, or never ours, returns an error at once.
        unsafe {
            libc::waitpid(pid as libc::pid_t, std::ptr::null_mut(), 0);
        }
    }
    if !matches!(waited, Ok(Waited::Done(_))) {
        end_leftovers();
    }
    log_limits(c, cgroup, None);
    // Every connection logged before this process ends.
    drop(proxy);
    let waited = waited.map_err(|source| ExecError::CannotStart { program: bwrap.display().to_string(), source })?;
    if let Some(e) = unserved {
        return Err(e);
    }
    // The inner one says how the command ended; without it, bubblewrap's
    // own status (it could not set up, or it was killed).
    let ended = match waited {
        Waited::Done(ended) => ended,
        Waited::Exited(status) => {
            inner_status.as_deref().map(str::trim).and_then(parse_status).unwrap_or_else(|| ended_of(status))
        }
    };
    if ended == Ended::Signal(libc::SIGXFSZ) {
        log_limits(c, None, Some(ended));
    }
    Ok(end_as(c.reap, ended))
}

/// Of retry-run's own executables (`exes`: `retry-run` and the
/// supervisor), those a writable path holds: mounted read-only inside, so
/// that a command may not replace the program that confines the next one
/// (a `~/.cargo` made writable for cargo holds `~/.cargo/bin`). Pure.
fn own_executables(exes: &[PathBuf], writable: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = exes.iter().filter(|e| writable.iter().any(|w| e.starts_with(w))).cloned().collect();
    out.dedup();
    out
}

/// What stays readable although it may lie beneath a private directory:
/// what the caller keeps, the directory, and what the command needs to
/// run ([`super::visible::kept`]: retry-run's own executables, the
/// program and its installation, the `PATH` entries).
fn kept_readable(c: &Confined, dir: &Path, own: &[PathBuf]) -> Vec<PathBuf> {
    let mut keep = c.keep.clone();
    keep.push(dir.to_path_buf());
    let path: Vec<PathBuf> = std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    keep.extend(super::visible::kept(&c.argv, &path, own));
    keep
}

/// The supervisor's executable name, beside `retry-run`
/// (`src/bin/retry-run-supervisor.rs`, [`super::supervisor`]).
pub const SUPERVISOR: &str = "retry-run-supervisor";

/// What the outer process tells the supervisor (the `LINE` of `--inner
/// LINE -- CMD...`, one JSON object): the paths and rules it confines the
/// command to. Not a command line anyone types, so it is read by serde
/// rather than by the command-line parser.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct InnerLine {
    pub tmpdir: String,
    pub writable: Vec<String>,
    pub deny_read: Vec<String>,
    pub network: Vec<String>,
    pub limits: Limits,
    pub host_network: bool,
    pub unix_sockets: bool,
    pub refuse_ports: Vec<u16>,
    /// The descriptor it inherits to say, with one byte, that the command
    /// and all it left have ended and the status is written
    /// ([`Waited::Done`]).
    #[serde(default)]
    pub done_fd: Option<i32>,
}

impl InnerLine {
    /// `line` read back (the error says what is wrong with it).
    pub fn parse(line: &str) -> Result<InnerLine, serde_json::Error> {
        serde_json::from_str(line)
    }
}

/// The supervisor to start inside for a `retry-run` at `exe`: its own
/// executable beside it, or, where that is missing, `retry-run sandbox`
/// itself. The words before `--inner`.
pub fn supervisor_for(exe: &Path) -> Vec<String> {
    match supervisor_beside(exe) {
        Some(own) => vec![own.display().to_string()],
        None => vec![exe.display().to_string(), "sandbox".into()],
    }
}

/// The supervisor's executable beside `retry-run` at `exe`, when it is
/// installed there.
pub fn supervisor_beside(exe: &Path) -> Option<PathBuf> {
    let own = exe.with_file_name(SUPERVISOR);
    own.is_file().then_some(own)
}

/// The line that has the supervisor's executable at `supervisor` do what
/// `retry-run sandbox` does for `c` (`retry-run-supervisor --outer LINE --
/// CMD...`): what `run` starts for each agent and check process, without
/// starting `retry-run` itself again or its command-line parser. Pure.
pub fn outer_argv(supervisor: &Path, c: &Confined) -> Vec<String> {
    // Strings, numbers, booleans and enums: serialising cannot fail.
    let line = serde_json::to_string(c).unwrap_or_default();
    let mut argv = vec![supervisor.display().to_string(), "--outer".into(), line, "--".into()];
    argv.extend(c.argv.iter().cloned());
    argv
}

/// The arguments after bubblewrap's own: the supervisor (`supervisor`,
/// the words before `--inner`: see [`supervisor_for`]) as
/// `... --inner LINE -- CMD...`, with what it confines the command to
/// ([`InnerLine`]).
fn inner_args(
    c: &Confined,
    supervisor: &[String],
    (tmpdir, done_fd): (&Path, i32),
    writable: &[PathBuf],
    hidden: &[PathBuf],
    allowed_loopback: &[u16],
) -> Vec<String> {
    // What listens on this machine's loopback and is not allowed: a direct
    // connection to it inside is recorded as refused, with the line that
    // would allow it, instead of failing unseen.
    let refuse_ports = if !c.host_network && c.refuse_direct {
        super::listening::host_listening_ports()
            .into_iter()
            .filter(|p| !allowed_loopback.contains(p))
            .take(64)
            .collect()
    } else {
        Vec::new()
    };
    let line = InnerLine {
        tmpdir: tmpdir.display().to_string(),
        writable: writable.iter().map(|w| w.display().to_string()).collect(),
        deny_read: hidden.iter().map(|h| h.display().to_string()).collect(),
        network: c.network.clone(),
        limits: c.limits,
        host_network: c.host_network,
        unix_sockets: c.unix_sockets,
        refuse_ports,
        done_fd: Some(done_fd),
    };
    // Strings, numbers and booleans: serialising cannot fail.
    let line = serde_json::to_string(&line).unwrap_or_default();
    let mut argv = vec!["--".to_string()];
    argv.extend(supervisor.iter().cloned());
    argv.extend(["--inner".into(), line, "--".into()]);
    argv.extend(c.argv.iter().cloned());
    argv
}

/// Starts bubblewrap with `argv` (after the ends of `handoff`) as the
/// reaper (or subreaper) of what it starts and waits for it; with
/// `entry`, from inside the pids cgroup; with `mover`, its child is moved
/// into it while it sets up (bubblewrap says its child's pid on one pipe
/// and waits on another before that child starts the command);
/// `meanwhile` runs once bubblewrap has started, while it sets up. Returns
/// how the wait ended ([`Waited`]: bubblewrap ended, or the supervisor
/// said the command is done and how, read from `status_file`), the pid of
/// bubblewrap's child, the namespace's PID 1, when it said it, and what
/// `serve` (the proxy, run once `listening`, its socket, has a connection
/// waiting: see [`wait_serving`]) returned, if it ran; when `serve` fails,
/// bubblewrap is ended.
fn run_bubblewrap<T>(
    c: &Confined,
    (bwrap, argv, handoff): (&Path, &[String], Handoff),
    (entry, mover): (Option<ThreadEntry>, Option<Mover>),
    (listening, serve): (Option<std::os::fd::RawFd>, impl FnOnce() -> Result<T, ExecError>),
    (status_file, meanwhile): (&Path, impl FnOnce()),
) -> Result<Bubblewrapped<T>, ExecError> {
    let pipe_error = |source| ExecError::CannotStart { program: "pipe".into(), source };
    let mut cmd = Command::new(bwrap);
    cmd.args(handoff.args());
    cmd.args(argv);
    close_inherited();
    if c.reap {
        become_reaper();
    } else {
        subreaper();
    }
    // No code runs between fork and exec (bubblewrap's ends are left open
    // across exec here, not in the child), so the C library starts it
    // with vfork rather than copying this process.
    handoff.keep_on_exec().map_err(pipe_error)?;
    if let Some(e) = &entry {
        e.enter();
    }
    let spawned = cmd.spawn();
    if let Some(e) = &entry {
        e.leave();
    }
    let (kept, done) = handoff.after_spawn();
    let (mut serve, mut served) = (Some(serve), None);
    let status = spawned.and_then(|mut child| {
        let (pid, info) = match (kept, mover) {
            (Kept::Moving(info, block), Some(m)) => (m.finish(info, block), None),
            (Kept::Info(info), _) => (None, Some(info)),
            (Kept::Moving(..), None) => (None, None),
        };
        meanwhile();
        let waited = wait_serving(&mut child, (listening, &mut serve, &mut served), (done, status_file))?;
        // Read once bubblewrap has ended (its end is closed then), and
        // needed only then.
        let pid = match waited {
            Waited::Exited(_) => pid.or_else(|| info.and_then(read_child_pid)),
            Waited::Done(_) => {
                // bubblewrap has nothing left to do but wait for its PID 1
                // to come down: ended now (its PID 1, in a session of its
                // own, ends with it: `--die-with-parent`). Under `run`
                // (`--reap`) it is reaped too, so that nothing of this
                // process's group outlives it (`run` waits for the group).
                // Typed by hand, the caller waits for this process alone:
                // bubblewrap, dying, and its PID 1 come to this process,
                // the subreaper, and are left to whoever reaps orphans
                // here (the wait for bubblewrap to die took 0.3 to 0.7 ms
                // after the command had ended), unless nothing would.
                let _ = child.kill();
                let init = std::fs::read_to_string("/proc/1/comm").ok();
                let reaped = orphans_are_reaped(init.as_deref(), std::process::id(), c.found.starter_is_init);
                if c.reap || !reaped {
                    let _ = child.wait();
                }
                if reaped { None } else { pid.or_else(|| info.and_then(read_child_pid)) }
            }
        };
        Ok((waited, pid))
    });
    Ok(match status {
        Ok((waited, pid)) => (Ok(waited), pid, served),
        Err(e) => (Err(e), None, served),
    })
}

/// Whether the supervisor, bubblewrap's PID 1, once it comes to this
/// process (the subreaper) and this process ends, will be reaped by the
/// process that then adopts it: this PID namespace's init, whose name
/// (`/proc/1/comm`) is `pid1_comm`, or nothing read. Not where that init
/// is retry-run itself (a container started with `retry-run run` as its
/// command), which reaps only what it started: each confined process
/// would leave a zombie there. That init is known when it started this
/// process (`starter_is_init`: `run` says so in the line, whatever name
/// it was started by), else by its name. Nor where the name cannot be
/// read. This process itself being that init (`me` is 1) ends the
/// namespace with it. Anywhere else the orphan goes where bubblewrap's own
/// PID 1 goes when bubblewrap runs alone. Pure.
fn orphans_are_reaped(pid1_comm: Option<&str>, me: u32, starter_is_init: bool) -> bool {
    if me == 1 {
        return true;
    }
    !starter_is_init && pid1_comm.is_some_and(|comm| !comm.trim_end().starts_with("retry-run"))
}

/// How the wait for bubblewrap ended, what it said of its child's pid,
/// and what was started while it ran, if anything was ([`run_bubblewrap`]).
type Bubblewrapped<T> = (std::io::Result<Waited>, Option<u32>, Option<Result<T, ExecError>>);

/// How the wait for bubblewrap ended.
#[derive(Debug)]
enum Waited {
    /// bubblewrap ended (it could not set up, it was killed, or the
    /// supervisor ended without saying it was done).
    Exited(std::process::ExitStatus),
    /// The supervisor said the command and every process it left have
    /// ended, and how the command did. What is left is the namespaces
    /// coming down, the kernel's work (the mounts taken down, PID 1
    /// reaped): a millisecond here, not waited for, as bubblewrap itself
    /// does not wait for its own PID 1 once that says how the command
    /// ended (except where nothing would reap it: [`orphans_are_reaped`]).
    /// bubblewrap is ended, and reaped under `--reap` or where nothing
    /// else would; its PID 1 ends with it (`--die-with-parent`).
    Done(Ended),
}

/// Waits for `child` to end, or for the supervisor to say on `done` that
/// the command has (how, in `status_file`); `serve` runs (into `served`)
/// once `listening` has a connection waiting, so a process that never
/// connects costs no proxy. Where the kernel has no pidfd to wait on
/// (Linux before 5.3), `serve` runs at once and `child` is waited for.
/// When `serve` fails, the child is ended.
fn wait_serving<T>(
    child: &mut std::process::Child,
    (listening, serve, served): (
        Option<std::os::fd::RawFd>,
        &mut Option<impl FnOnce() -> Result<T, ExecError>>,
        &mut Option<Result<T, ExecError>>,
    ),
    (done, status_file): (std::os::fd::OwnedFd, &Path),
) -> std::io::Result<Waited> {
    use std::os::fd::AsRawFd;
    let Some(pidfd) = pidfd_of(child.id()) else {
        start_serving(child, serve, served);
        return child.wait().map(Waited::Exited);
    };
    let mut done_open = true;
    loop {
        // A negative descriptor is one poll leaves out.
        let listen = listening.filter(|_| serve.is_some()).unwrap_or(-1);
        let mut fds = [
            libc::pollfd { fd: pidfd.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: if done_open { done.as_raw_fd() } else { -1 }, events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: listen, events: libc::POLLIN, revents: 0 },
        ];
        // SAFETY: poll on descriptors this process owns, through an array
        // that lives across the call.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            start_serving(child, serve, served);
            return child.wait().map(Waited::Exited);
        }
        if fds[2].revents != 0 {
            // A connection waits (served even when the child has just
            // ended, so that it is logged).
            start_serving(child, serve, served);
        }
        if fds[0].revents != 0 {
            return child.wait().map(Waited::Exited);
        }
        if fds[1].revents != 0 {
            // Said once: a closed end, or a status that cannot be read,
            // leaves bubblewrap's end to wait for.
            done_open = false;
            if let Some(ended) = read_done(&done, status_file) {
                return Ok(Waited::Done(ended));
            }
        }
    }
}

/// Runs `serve` (into `served`) if it has not run; when it fails, `child`
/// is ended.
fn start_serving<T>(
    child: &mut std::process::Child,
    serve: &mut Option<impl FnOnce() -> Result<T, ExecError>>,
    served: &mut Option<Result<T, ExecError>>,
) {
    if let Some(serve) = serve.take() {
        let result = serve();
        if result.is_err() {
            // SAFETY: kill on the child, not yet waited for.
            unsafe {
                libc::kill(child.id() as libc::pid_t, libc::SIGKILL);
            }
        }
        *served = Some(result);
    }
}

/// How the command ended, once the supervisor wrote its byte on `done`:
/// read from `status_file`, which it wrote first. `None` when no byte
/// came (its end closed) or the status cannot be read.
fn read_done(done: &std::os::fd::OwnedFd, status_file: &Path) -> Option<Ended> {
    use std::os::fd::AsRawFd;
    let mut byte = [0u8; 1];
    // SAFETY: read into a one-byte buffer this function owns.
    let n = unsafe { libc::read(done.as_raw_fd(), byte.as_mut_ptr().cast(), 1) };
    if n != 1 {
        return None;
    }
    std::fs::read_to_string(status_file).ok().as_deref().map(str::trim).and_then(parse_status)
}

/// A descriptor that becomes readable when the process `pid` (a child not
/// yet waited for) ends; `None` where the kernel has none.
fn pidfd_of(pid: u32) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: pidfd_open takes a pid and flags and returns a new
    // descriptor or -1.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
    // SAFETY: a descriptor just made, owned by nothing else.
    (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
}

/// The pid bubblewrap's `--info-fd` named, read once it has ended.
fn read_child_pid(info: std::os::fd::OwnedFd) -> Option<u32> {
    use std::io::Read as _;
    let mut text = String::new();
    std::fs::File::from(info).read_to_string(&mut text).ok()?;
    limits::child_pid(&text)
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

/// Without namespaces, the proxy on a TCP port of this machine (none with
/// the host's network), and the TCP ports Landlock lets the command reach:
/// the proxy's and the allowed loopback ports.
fn tcp_proxy(
    c: &Confined,
    rules: Vec<proxy::HostRule>,
    run_dir: &Path,
) -> Result<(Option<proxy::Proxy>, landlock::Net), ExecError> {
    if c.host_network {
        return Ok((None, landlock::Net::Any));
    }
    let mut ports: Vec<u16> = rules.iter().filter_map(proxy::HostRule::loopback).map(|l| l.port).collect();
    let p = proxy::start(rules, &run_dir.join("proxy.sock"), c.log.clone(), true).map_err(ExecError::Proxy)?;
    ports.extend(p.tcp_port());
    Ok((Some(p), landlock::Net::Only(ports)))
}

/// Without namespaces: the proxy on a TCP port of this machine, Landlock
/// (writes, reads of secrets, TCP only to the proxy and the allowed
/// loopback ports), seccomp (no UDP, raw or UNIX sockets) and the limits,
/// all put in force in the command's process only. This process stays
/// outside the command's Landlock domain (the command cannot signal or
/// trace it, nor read its environment), in a session apart from the
/// command's (the command has no terminal), and is not dumpable.
fn landlock_only(c: &Confined, dir: &Path, tmpdir: &Path, home: Option<&Path>) -> Result<i32, ExecError> {
    if landlock::abi() == 0 {
        return Err(ExecError::NoLandlock { kernel: landlock::kernel() });
    }
    not_dumpable();
    let rules = rules(c)?;
    let writable = writable(c, dir, Some(tmpdir), home)?;
    let mut hidden = hidden(c, home);
    // Without a private /dev/shm, the machine's is closed to the command,
    // unless it was made writable.
    let shm = Path::new(super::SHARED_MEMORY);
    if shm.is_dir() && !writable.iter().any(|w| w.starts_with(shm) || shm.starts_with(w)) {
        hidden.push(shm.to_path_buf());
    }
    let run_dir = private_tmpdir("run")?;
    let (proxy, net) = match tcp_proxy(c, rules, &run_dir) {
        Ok(started) => started,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&run_dir);
            return Err(e);
        }
    };
    let port = proxy.as_ref().and_then(|p| p.tcp_port());
    let ruleset = landlock::prepare(&writable, &hidden, net)?;
    // Root is exempt from RLIMIT_NPROC: its limit is a pids cgroup, or
    // nothing runs.
    let cgroup = limits::PidsCgroup::for_limit(c.limits.processes, c.found.pids_cgroup.as_deref(), false);
    let root = is_root();
    let made = if cgroup.is_some() { Ok(()) } else { Err(limits::NoCgroup::NotMade) };
    if let Err(e) = super::process_limit(root, c.limits.processes, made) {
        drop(proxy);
        let _ = std::fs::remove_dir_all(&run_dir);
        return Err(ExecError::ProcessLimit(e));
    }
    close_inherited();
    let mut cmd = command(c, tmpdir, port);
    if let Some(cg) = &cgroup {
        // First, before Landlock closes the cgroup's files to it: the
        // command's process has one thread between fork and exec, which on
        // cgroup v1 enters through `tasks`, without the grace period (see
        // `ThreadEntry`); for root, a failure to enter stops the start.
        enter_on_exec(&mut cmd, &cg.tasks().unwrap_or_else(|| cg.procs()), root);
    }
    let limits = c.limits;
    // SAFETY: between fork and exec: setrlimit and two system calls on a
    // descriptor prepared before the fork.
    unsafe {
        cmd.pre_exec(move || {
            set_limits(&limits);
            drop_capabilities();
            ruleset.restrict_self()
        });
    }
    own_session(&mut cmd);
    let filter = seccomp::filter(seccomp::Deny {
        inet: !c.host_network,
        unix: !c.unix_sockets,
        protect: None,
        supervisor: false,
    })?;
    install_on_exec(&mut cmd, filter);
    let mut log = c.log.as_deref().and_then(open_log);
    let ended = start_and_wait(&mut cmd, c.reap, &c.argv[0], log.as_mut());
    drop(proxy);
    // Outside the command's Landlock domain, this process can remove it.
    let _ = std::fs::remove_dir_all(&run_dir);
    log_limits(c, cgroup.as_ref(), ended.as_ref().ok().copied());
    finish(c, ended)
}

/// Drops every capability of the calling process and what it will
/// execute (the bounding set emptied, then the effective, permitted and
/// inheritable sets cleared): a command run by root in the fallback is
/// root without root's powers (no `CAP_SYS_PTRACE` to read another
/// process's environment, no `CAP_DAC_OVERRIDE`). Only system calls: safe
/// between `fork` and `exec`. Nothing to do for another user.
fn drop_capabilities() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl and capset on this process's own credentials, with a
    // header and data on the stack.
    unsafe {
        if libc::geteuid() != 0 {
            return;
        }
        for cap in 0..64 {
            libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0);
        }
        #[repr(C)]
        struct Header {
            version: u32,
            pid: i32,
        }
        #[repr(C)]
        struct Data {
            effective: u32,
            permitted: u32,
            inheritable: u32,
        }
        const VERSION_3: u32 = 0x2008_0522;
        let mut header = Header { version: VERSION_3, pid: 0 };
        let data =
            [Data { effective: 0, permitted: 0, inheritable: 0 }, Data { effective: 0, permitted: 0, inheritable: 0 }];
        libc::syscall(libc::SYS_capset, &mut header as *mut Header, data.as_ptr());
    }
}

/// Makes this process not dumpable: another process of the same user
/// can no longer trace it, read or write its memory, take its descriptors
/// or read its `/proc/<pid>/environ`. (A program it executes is dumpable
/// again.)
pub(super) fn not_dumpable() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl sets a flag of this process.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
}

/// The process group the command leads (its own session), for the
/// signals this process passes on; 0 while none runs.
static COMMAND_GROUP: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// The command starts a session of its own: it has no controlling
/// terminal (it cannot open `/dev/tty`, nor push input into the user's
/// terminal), and it dies with this process (`PR_SET_PDEATHSIG`). SIGTERM,
/// SIGINT and SIGHUP sent to this process are passed on to the command's
/// group (see [`ignore_but_wake`]).
fn own_session(cmd: &mut Command) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: between fork and exec: setsid, prctl and getppid only.
    unsafe {
        cmd.pre_exec(move || {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            if libc::getppid() != parent {
                // This process ended before the flag was set.
                libc::_exit(128 + libc::SIGKILL);
            }
            Ok(())
        });
    }
}

fn finish(c: &Confined, ended: Result<Ended, ExecError>) -> Result<i32, ExecError> {
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
fn log_limits(c: &Confined, cgroup: Option<&limits::PidsCgroup>, ended: Option<Ended>) {
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

/// The pipes of bubblewrap's `--info-fd` (it writes its child's pid), to
/// move that child into a cgroup while it sets up, `--block-fd` (the child
/// waits for a byte before it forks the command), and the supervisor's
/// `done` (it writes a byte once the command and all it left have ended
/// and the status is written: see [`Waited::Done`]).
struct Handoff {
    info: (std::os::fd::OwnedFd, std::os::fd::OwnedFd),
    block: Option<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)>,
    done: (std::os::fd::OwnedFd, std::os::fd::OwnedFd),
}

/// This process's ends once bubblewrap has started: the reading end of
/// its info and, with a move, the writing end of its block.
enum Kept {
    Info(std::os::fd::OwnedFd),
    Moving(std::os::fd::OwnedFd, std::os::fd::OwnedFd),
}

impl Handoff {
    fn new(block: bool) -> std::io::Result<Handoff> {
        Ok(Handoff { info: pipe()?, block: if block { Some(pipe()?) } else { None }, done: pipe()? })
    }

    /// bubblewrap's arguments naming the ends it uses.
    fn args(&self) -> Vec<String> {
        use std::os::fd::AsRawFd;
        let mut out = vec!["--info-fd".to_string(), self.info.1.as_raw_fd().to_string()];
        if let Some(block) = &self.block {
            out.extend(["--block-fd".to_string(), block.0.as_raw_fd().to_string()]);
        }
        out
    }

    /// The descriptor the supervisor inherits to say the command is done
    /// (through bubblewrap, which leaves inherited descriptors open).
    fn done_fd(&self) -> i32 {
        use std::os::fd::AsRawFd;
        self.done.1.as_raw_fd()
    }

    /// Leaves bubblewrap's ends open across its exec. The pipes are made
    /// close-on-exec and this is done just before bubblewrap starts: this
    /// process starts no other program meanwhile, and drops these ends
    /// right after ([`Handoff::after_spawn`]).
    fn keep_on_exec(&self) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        let ends = [self.info.1.as_raw_fd(), self.done.1.as_raw_fd()]
            .into_iter()
            .chain(self.block.as_ref().map(|b| b.0.as_raw_fd()));
        for fd in ends {
            // SAFETY: fcntl on a descriptor this process owns.
            if unsafe { libc::fcntl(fd, libc::F_SETFD, 0) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        Ok(())
    }

    /// The ends this process keeps once bubblewrap has started (its own
    /// are closed here), and the reading end of `done`.
    fn after_spawn(self) -> (Kept, std::os::fd::OwnedFd) {
        let kept = match self.block {
            Some(block) => Kept::Moving(self.info.0, block.1),
            None => Kept::Info(self.info.0),
        };
        (kept, self.done.0)
    }
}

/// The calling thread alone in the pids cgroup and back out, on cgroup
/// v1 (its `tasks` files): a process it starts meanwhile is born in the
/// cgroup, and so is everything that process starts.
///
/// A thread that moves itself alone is moved without the lock that moving
/// a whole process takes, whose first taking waits for an RCU grace
/// period (6 to 19 ms here, [`Mover`]): about 0.1 ms each way here (Linux
/// 6.18). The other threads of this process stay where they are; the
/// files are opened beforehand, so each move is one write.
struct ThreadEntry {
    into: std::fs::File,
    back: std::fs::File,
}

impl ThreadEntry {
    /// Both `tasks` files opened to write, or `None` (cgroup v2, which
    /// moves whole processes only, or one that cannot be written).
    fn open(cgroup: &limits::PidsCgroup) -> Option<ThreadEntry> {
        let open = |p: PathBuf| std::fs::OpenOptions::new().write(true).open(p).ok();
        Some(ThreadEntry { into: open(cgroup.tasks()?)?, back: open(cgroup.own_tasks())? })
    }

    /// Moves the calling thread into the cgroup (quietly, as the cgroup
    /// itself is best effort: the limit is then not enforced).
    fn enter(&self) {
        use std::io::Write as _;
        let _ = (&self.into).write_all(b"0");
    }

    /// Moves the calling thread back where this process is.
    fn leave(&self) {
        use std::io::Write as _;
        let _ = (&self.back).write_all(b"0");
    }
}

/// Moves bubblewrap's child into the pids cgroup on a thread of its own
/// (cgroup v2, where a thread cannot enter alone).
///
/// Moving a process into a cgroup waits for an RCU grace period (8 to 10
/// ms on cgroup v1 here) unless another move happened a moment before. So
/// the thread starts with a move that changes nothing (this process into
/// the cgroup it is already in), beside the sandbox's setup, and the move
/// that counts, once bubblewrap has said its child's pid, comes right
/// after it and is quick.
struct Mover {
    ends: std::sync::mpsc::Sender<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)>,
    thread: std::thread::JoinHandle<Option<u32>>,
}

impl Mover {
    fn start(cgroup: &limits::PidsCgroup) -> Mover {
        let (ends, wait) = std::sync::mpsc::channel::<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)>();
        let (own, procs) = (cgroup.own_procs(), cgroup.procs());
        let thread = std::thread::spawn(move || {
            use std::io::{Read as _, Write as _};
            let _ = std::fs::OpenOptions::new().write(true).open(own).and_then(|mut f| f.write_all(b"0"));
            let (info, block) = wait.recv().ok()?;
            let mut text = String::new();
            let _ = std::fs::File::from(info).read_to_string(&mut text);
            let pid = limits::child_pid(&text);
            if let Some(pid) = pid {
                let _ = std::fs::OpenOptions::new()
                    .write(true)
                    .open(&procs)
                    .and_then(|mut f| f.write_all(pid.to_string().as_bytes()));
            }
            // Bubblewrap's child goes on (it goes on as well when
            // bubblewrap said nothing: it failed, and the closed pipe
            // wakes its child if it has one).
            let _ = std::fs::File::from(block).write_all(b"x");
            pid
        });
        Mover { ends, thread }
    }

    /// Hands bubblewrap's ends to the thread and waits until its child may
    /// go on; returns that child's pid.
    fn finish(self, info: std::os::fd::OwnedFd, block: std::os::fd::OwnedFd) -> Option<u32> {
        let _ = self.ends.send((info, block));
        self.thread.join().ok().flatten()
    }
}

/// A pipe, both ends close-on-exec: (read, write).
fn pipe() -> std::io::Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into the array on success.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just made and are owned by nothing else.
    Ok(unsafe { (std::os::fd::OwnedFd::from_raw_fd(fds[0]), std::os::fd::OwnedFd::from_raw_fd(fds[1])) })
}

/// Moves the command's process into the cgroup whose `cgroup.procs` (or,
/// on v1, `tasks`) is `procs` just before it executes. Where the cgroup
/// is the only limit (`required`: root), a failure stops the start; else
/// it fails quietly and the rlimit stays.
fn enter_on_exec(cmd: &mut Command, procs: &Path, required: bool) {
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = std::ffi::CString::new(procs.as_os_str().as_bytes()) else { return };
    // SAFETY: between fork and exec the closure only calls open, write
    // and close on a path prepared before the fork, and reads errno.
    unsafe {
        cmd.pre_exec(move || {
            let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            let entered = fd >= 0 && libc::write(fd, b"0".as_ptr().cast(), 1) == 1;
            let error = std::io::Error::last_os_error();
            if fd >= 0 {
                libc::close(fd);
            }
            if required && !entered { Err(error) } else { Ok(()) }
        });
    }
}

/// Whether this process runs as root.
fn is_root() -> bool {
    // SAFETY: getuid has no preconditions.
    unsafe { libc::getuid() == 0 }
}

/// Installs `filter` in the command's process just before it executes.
fn install_on_exec(cmd: &mut Command, filter: seccomp::Filter) {
    // SAFETY: the closure runs between fork and exec; installing a seccomp
    // filter is two system calls on data prepared before the fork.
    unsafe {
        cmd.pre_exec(move || filter.install().map_err(std::io::Error::other));
    }
}

/// Sets the process and file-size limits for this process and what it
/// starts (an error leaves the limit as it was).
pub(super) fn set_limits(limits: &Limits) {
    let set = |resource, value: u64| {
        let lim = libc::rlimit { rlim_cur: value as libc::rlim_t, rlim_max: value as libc::rlim_t };
        // SAFETY: setrlimit reads the struct passed by reference.
        unsafe {
            libc::setrlimit(resource, &lim);
        }
    };
    if limits.processes > 0 {
        set(libc::RLIMIT_NPROC, limits.processes);
    }
    set(libc::RLIMIT_FSIZE, limits.file_size);
}

/// Passes a termination signal on to the command's group when the command
/// runs in a session of its own (the process group this process is in
/// does not hold it then); this process stays to end what the command
/// leaves.
fn ignore_but_wake(sig: libc::c_int) {
    let group = COMMAND_GROUP.load(std::sync::atomic::Ordering::SeqCst);
    if group > 0 {
        // SAFETY: kill(2) is async-signal-safe.
        unsafe {
            libc::kill(-group, sig);
        }
    }
}

/// SIGTERM, SIGINT and SIGHUP no longer end this process: they are passed
/// on to the command's session ([`ignore_but_wake`]), and this process
/// ends as the command does. Set up once per process; exec resets the
/// handlers to the default in the command.
fn pass_signals_on() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            // SAFETY: the action only loads an atomic and calls kill(2),
            // both async-signal-safe. A signal that cannot be hooked keeps
            // its default action.
            let _ = unsafe { signal_hook::low_level::register(sig, move || ignore_but_wake(sig)) };
        }
    });
}

/// Makes this process the subreaper of what it starts: a descendant whose
/// parent ends (a double-forked daemon, `setsid` included) becomes this
/// process's child instead of init's, so it can be ended. SIGTERM, SIGINT
/// and SIGHUP no longer end this process (they still reach the command,
/// which gets the default handlers back when it starts).
fn become_reaper() {
    subreaper();
    pass_signals_on();
}

/// Makes this process the subreaper of what it starts: a descendant whose
/// parent ends comes to this process instead of the machine's init.
fn subreaper() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER only sets a flag of this
    // process.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    }
}

/// The processes whose parent is this one: from the kernel's list of this
/// (single-threaded) process's children where it has one, else from every
/// process's parent id.
fn children() -> Vec<libc::pid_t> {
    let me = std::process::id().to_string();
    if let Ok(list) = std::fs::read_to_string(format!("/proc/self/task/{me}/children")) {
        return list.split_whitespace().filter_map(|p| p.parse().ok()).collect();
    }
    let Ok(rd) = std::fs::read_dir("/proc") else { return Vec::new() };
    rd.flatten()
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<libc::pid_t>().ok()))
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // pid (comm) state ppid ...: comm may hold spaces and parentheses.
            stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(1)) == Some(me.as_str())
        })
        .collect()
}

/// How long the processes the command left get to end by themselves (a
/// server whose client, the command, closed its input on exiting: the
/// agent's MCP servers) before they count as left running.
const LEFTOVER_GRACE: std::time::Duration = std::time::Duration::from_millis(100);

/// Reaps the children that have ended, without waiting. Returns whether
/// none is left at all, ended or not (the kernel's `ECHILD`, for the
/// children of every thread of this process).
fn reap_ended() -> bool {
    loop {
        // SAFETY: waitpid on this process's own children, without blocking.
        match unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) } {
            n if n > 0 => continue,
            0 => return false,
            _ => return std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD),
        }
    }
}

/// Ends every process left below this one (each ended process's own
/// children come here in turn) and reaps them, once those that end by
/// themselves within [`LEFTOVER_GRACE`] have. Returns how many it ended.
fn end_leftovers() -> usize {
    let deadline = std::time::Instant::now() + LEFTOVER_GRACE;
    // Looked at again soon, then less often: what ends by itself mostly
    // ends within a millisecond (bubblewrap's PID 1 in the namespace, a
    // moment after bubblewrap), and a fixed 5 ms nap cost every confined
    // process 5 ms.
    let mut nap = std::time::Duration::from_micros(100);
    loop {
        // No child at all: nothing to look for in /proc.
        if reap_ended() || children().is_empty() {
            return 0;
        }
        if std::time::Instant::now() >= deadline {
            break;
        }
        std::thread::sleep(nap);
        nap = (nap * 2).min(std::time::Duration::from_millis(5));
    }
    let mut ended = 0;
    loop {
        let left = children();
        if left.is_empty() {
            return ended;
        }
        for pid in &left {
            // SAFETY: kill and waitpid on this process's own children.
            unsafe {
                libc::kill(*pid, libc::SIGKILL);
            }
        }
        for pid in &left {
            // SAFETY: as above; a child already reaped returns an error.
            unsafe {
                libc::waitpid(*pid, std::ptr::null_mut(), 0);
            }
        }
        ended += left.len();
    }
}

/// Ends this process by `sig`, as the command ended.
fn raise_again(sig: libc::c_int) {
    // SAFETY: restores the default action of `sig` and raises it on this
    // process, which then ends as the command did.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// A new directory of our own (mode 0700) under the temporary directory.
fn private_tmpdir(what: &str) -> Result<PathBuf, ExecError> {
    // The proxy's socket lives in the `run` one: its path must stay short
    // (a UNIX socket's path has 108 bytes), whatever TMPDIR says.
    let base = if what == "run" { PathBuf::from("/tmp") } else { std::env::temp_dir() };
    private_dir_in(&base, what)
}

/// The outer process's `run` directory under namespaces (the proxy's
/// socket, the command's status, the inner log): in `/dev/shm`, a tmpfs
/// on most machines, where making and removing it costs a tenth of what
/// it costs on a disk's `/tmp` (0.1 ms against 0.01 here, ext4 with
/// `discard`); else in `/tmp`. Inside, the command has a `/dev/shm` of
/// its own and reaches this directory only at [`namespaces::RUN_DIR`],
/// where the inner process put its own files before Landlock closed it.
fn run_dir() -> Result<PathBuf, ExecError> {
    private_dir_in(Path::new("/dev/shm"), "run").or_else(|_| private_tmpdir("run"))
}

/// A new directory of our own (mode 0700) in `base`, named for `what`.
fn private_dir_in(base: &Path, what: &str) -> Result<PathBuf, ExecError> {
    use std::os::unix::fs::DirBuilderExt;
    let base = base.to_path_buf();
    for i in 0..100u32 {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let p = base.join(format!("retry-run-{what}-{}-{nanos}-{i}", std::process::id()));
        match std::fs::DirBuilder::new().mode(0o700).create(&p) {
            Ok(()) => {
                return std::fs::canonicalize(&p).map_err(|source| ExecError::TmpDirUnresolved { path: p, source });
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(source) => return Err(ExecError::TmpDir { dir: base, source }),
        }
    }
    Err(ExecError::TmpDirTaken { dir: base })
}

/// The pid in the name of a directory [`private_dir_in`] made
/// (`retry-run-sandbox-<pid>-…`, `retry-run-run-<pid>-…`); `None` for any
/// other name. Pure.
pub fn maker_of(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("retry-run-sandbox-").or_else(|| name.strip_prefix("retry-run-run-"))?;
    let (pid, tail) = rest.split_once('-')?;
    let (nanos, n) = tail.split_once('-')?;
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    (digits(nanos) && digits(n)).then(|| pid.parse().ok()).flatten()
}

/// The directories a `retry-run sandbox` (the process every confined agent
/// and check runs in) made and could not remove because it was killed
/// (`kill -9`): in `/dev/shm`, `/tmp` and the temporary directory, named as
/// [`maker_of`] reads, this user's, real directories, whose maker is gone.
pub fn left_behind() -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    // SAFETY: geteuid cannot fail.
    let me = unsafe { libc::geteuid() };
    let mut bases = vec![PathBuf::from("/dev/shm"), PathBuf::from("/tmp"), std::env::temp_dir()];
    bases.dedup();
    let mut found = Vec::new();
    for base in bases {
        let Ok(entries) = std::fs::read_dir(&base) else { continue };
        for e in entries.flatten() {
            let Some(pid) = e.file_name().to_str().and_then(maker_of) else { continue };
            let path = e.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
            // SAFETY: signal 0 only asks whether the process exists.
            let gone = unsafe { libc::kill(pid as libc::pid_t, 0) } == -1
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
            if meta.is_dir() && meta.uid() == me && gone {
                found.push(path);
            }
        }
    }
    found
}

/// Writes the one byte that says the command is done on `fd` (inherited
/// from the outer process, which waits for it: see `Waited::Done`) and
/// closes it.
pub(super) fn say_done(fd: i32) {
    // SAFETY: a one-byte write and a close on the descriptor the outer
    // process named in this process's line and left open across
    // bubblewrap for this alone; this process opens nothing at that
    // number meanwhile (it is taken).
    unsafe {
        libc::write(fd, b"1".as_ptr().cast(), 1);
        libc::close(fd);
    }
}

/// Marks every descriptor above stderr close-on-exec, so none this process
/// inherited (a lock, a repository file) reaches the command.
pub(super) fn close_inherited() {
    #[cfg(target_os = "linux")]
    {
        const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
        // SAFETY: close_range only changes flags of this process's own
        // descriptors; failure (an old kernel) leaves them as they were.
        unsafe {
            libc::syscall(libc::SYS_close_range, 3 as libc::c_uint, libc::c_uint::MAX, CLOSE_RANGE_CLOEXEC);
        }
    }
}

#[cfg(test)]
mod names {
    use super::maker_of;

    #[test]
    fn the_maker_of_a_directory_a_sandbox_left() {
        let cases = [
            ("retry-run-run-4242-123456789-0", Some(4242)),
            ("retry-run-sandbox-7-1-99", Some(7)),
            ("retry-run-run-4242-123456789", None),
            ("retry-run-run-x-1-0", None),
            ("retry-run-run-12-1-0-extra", None),
            ("retry-run-tmp-12-1-0", None),
            ("retry-run-it-ydUs8n", None),
            ("other", None),
        ];
        for (name, want) in cases {
            assert_eq!(maker_of(name), want, "{name}");
        }
    }
}

#[cfg(test)]
mod reaping {
    use super::orphans_are_reaped;

    #[test]
    fn the_supervisor_is_left_to_the_init_that_adopts_it_unless_that_is_retry_run() {
        for init in ["systemd\n", "tini\n", "bash\n", "docker-init\n", "process_api\n"] {
            assert!(orphans_are_reaped(Some(init), 4242, false), "{init}");
        }
        assert!(!orphans_are_reaped(Some("retry-run\n"), 4242, false), "retry-run run as a container's command");
        assert!(!orphans_are_reaped(Some("retry-run-super\n"), 4242, false), "its supervisor, the outer process");
        assert!(!orphans_are_reaped(Some("rr\n"), 4242, true), "run, the init, started by another name, said so");
        assert!(!orphans_are_reaped(None, 4242, false), "an init whose name cannot be read");
        assert!(orphans_are_reaped(Some("retry-run\n"), 1, false), "this process is the init: all ends with it");
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::{SUPERVISOR, landlock, own_executables, seccomp, supervisor_for};
    use crate::landlock::Net;
    use crate::probe::{DENIED, REFUSED, assert_seen, child, rerun, try_all};
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
        assert_eq!(supervisor_for(&exe), [exe.display().to_string(), "sandbox".into()], "missing: retry-run sandbox");
        std::fs::write(dir.join(SUPERVISOR), b"").expect("written");
        assert_eq!(supervisor_for(&exe), [dir.join(SUPERVISOR).display().to_string()]);
        std::fs::remove_dir_all(&dir).expect("removed");
    }
}
