//! Under namespaces: the outer process starts the proxy and bubblewrap,
//! which starts the supervisor inside ([`crate::supervisor`]); it reads how
//! the command ended from the file the supervisor writes.

use crate::request::Request;
use crate::{Layers, layers::limits, layers::namespaces, proxy};
use std::path::{Path, PathBuf};
use std::process::Command;

use super::ExecError;
use super::allowed::{hidden, rules, writable};
use super::dirs::run_dir;
use super::log::{append, log_limits};
use super::start::{Ended, end_as, ended_of, parse_status};
use crate::supervisor::line::supervisor_for;
use crate::sys::process::{become_reaper, close_inherited, end_leftovers, subreaper};
use crate::sys::{fd, process};

/// Outside the namespaces: the proxy, then bubblewrap starting the
/// supervisor inside; its status is the command's, read from the file the
/// supervisor writes. `tmpdir`: the command's TMPDIR, bound in where it
/// was given (`c.tmpdir`), else the namespace's own `/tmp`.
pub(super) fn outer(c: &Request, dir: &Path, tmpdir: &Path, home: Option<&Path>) -> Result<i32, ExecError> {
    // As root, the command's tree gets a pids cgroup: on cgroup v1 the
    // thread that starts bubblewrap enters it alone, so bubblewrap is born
    // in it (see `ThreadEntry`; the cgroup holds one process more, which
    // is not the command's to count); elsewhere bubblewrap's child is moved
    // in while it sets up, the move starting now, beside the work below
    // (see `Mover`).
    let cgroup = limits::PidsCgroup::for_limit(c.limits.processes, c.found.pids_cgroup.as_deref(), true);
    let entry = cgroup.as_ref().and_then(ThreadEntry::open);
    if let (Some(cg), None) = (&cgroup, &entry)
        && cg.tasks().is_some()
    {
        // cgroup v1 whose `tasks` this thread cannot enter: bubblewrap's
        // child is moved instead, and bubblewrap is not in it.
        let _ = cg.set_max(c.limits.processes);
    }
    let mover = cgroup.as_ref().filter(|_| entry.is_none()).map(Mover::start);
    let Bubblewrap { program: bwrap, mut argv, run_dir, writable, hidden, rules, supervisor } =
        bubblewrap(c, dir, tmpdir, home)?;
    let allowed_loopback: Vec<u16> = rules.iter().filter_map(proxy::HostRule::loopback).map(|l| l.port).collect();
    let socket = run_dir.join("proxy.sock");
    let status_file = run_dir.join("status");
    // The proxy's socket listens before bubblewrap starts (the inner
    // process looks for it); its runtime and thread start at the first
    // connection (see `wait_serving`).
    let bound = if c.network.host { None } else { Some(proxy::bind(&socket).map_err(ExecError::Proxy)?) };
    let listening = bound.as_ref().map(std::os::fd::AsRawFd::as_raw_fd);
    let serve = move || bound.map(|b| b.serve(rules, c.log.clone(), false)).transpose().map_err(ExecError::Proxy);
    let pipe_error = |source| ExecError::CannotStart { program: "pipe".into(), source };
    let handoff = Handoff::new(mover.is_some()).map_err(pipe_error)?;
    let inner = inner_request(c, (dir, tmpdir), &writable, &hidden, &allowed_loopback);
    argv.push("--".into());
    argv.extend(crate::supervisor::line::inner_line(&supervisor, inner, handoff.done_fd()));
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

/// What starting `c` under bubblewrap takes, prepared before anything
/// starts ([`bubblewrap`]).
pub(super) struct Bubblewrap {
    /// bubblewrap's executable.
    program: PathBuf,
    /// Its arguments, up to the `--` before the supervisor.
    argv: Vec<String>,
    /// The private run directory made for the proxy's socket, the
    /// supervisor's status and log (the caller removes it).
    run_dir: PathBuf,
    /// The paths the command may write, and those it may not read.
    writable: Vec<PathBuf>,
    hidden: Vec<PathBuf>,
    /// The proxy's rules.
    rules: Vec<proxy::HostRule>,
    /// The words that start the supervisor inside ([`supervisor_for`]).
    supervisor: Vec<String>,
}

/// What starting `c` under bubblewrap takes: the program, its mounts, the
/// paths and rules, and the run directory (made).
pub(super) fn bubblewrap(c: &Request, dir: &Path, tmpdir: &Path, home: Option<&Path>) -> Result<Bubblewrap, ExecError> {
    let program = c.found.bwrap.clone().or_else(namespaces::program).ok_or(ExecError::NoBwrap)?;
    let rules = rules(c)?;
    let writable = writable(c, dir, c.tmpdir.is_some().then_some(tmpdir), home)?;
    let hidden = hidden(c, home);
    let exe =
        std::env::current_exe().map_err(|source| ExecError::CannotStart { program: "retry-run".into(), source })?;
    let supervisor = supervisor_for(&exe);
    let own = [exe.with_file_name("retry-run"), PathBuf::from(&supervisor[0])];
    let run_dir = run_dir()?;
    let layout = layout(c, dir, (&writable, &hidden), &own, &run_dir);
    let argv = namespaces::args(&layout);
    Ok(Bubblewrap { program, argv, run_dir, writable, hidden, rules, supervisor })
}

/// What bubblewrap would be given for `c`, run nothing: its program and
/// arguments before `--` (`bwrap`, `args`), the directories made for them
/// (`made`, left for the caller to remove) and the paths it hides
/// (`hidden`) as one JSON object (`retry-run sandbox --print bwrap`,
/// `bench/sandbox.py`'s floor: bubblewrap alone with the same mounts),
/// whatever layers `c` asks for.
pub fn bubblewrap_json(c: &Request) -> Result<serde_json::Value, ExecError> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let dir = std::fs::canonicalize(&c.dir).unwrap_or_else(|_| c.dir.clone());
    let tmpdir = c.tmpdir.clone().unwrap_or_else(|| PathBuf::from(namespaces::PRIVATE_TMP));
    let b = bubblewrap(c, &dir, &tmpdir, home.as_deref())?;
    Ok(serde_json::json!({ "bwrap": b.program, "args": b.argv, "made": [b.run_dir], "hidden": b.hidden }))
}

/// The mounts of the namespace: the working directory, what may be
/// written (`writable`) and what is hidden, retry-run's `own` executables
/// read-only, the shared directories, and the run directory.
pub(super) fn layout(
    c: &Request,
    dir: &Path,
    (writable, hidden): (&[PathBuf], &[PathBuf]),
    own: &[PathBuf],
    run_dir: &Path,
) -> namespaces::Layout {
    namespaces::Layout {
        dir: dir.to_path_buf(),
        writable: writable.to_vec(),
        protected: c.paths.protect.iter().cloned().chain(own_executables(own, writable)).collect(),
        shared: c.paths.shared.clone(),
        hidden: hidden.iter().map(|p| namespaces::Hidden { path: p.clone(), dir: p.is_dir() }).collect(),
        keep: kept_readable(c, dir, own),
        run_dir: Some(run_dir.to_path_buf()),
        host_network: c.network.host,
    }
}

/// After bubblewrap ended as [`run_bubblewrap`] says: the command's status
/// (from the file the inner process wrote), everything it left ended, its
/// limits and connections logged, the run directory removed.
pub(super) fn after_bubblewrap(
    c: &Request,
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
        process::reap(pid);
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
pub(super) fn own_executables(exes: &[PathBuf], writable: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = exes.iter().filter(|e| writable.iter().any(|w| e.starts_with(w))).cloned().collect();
    out.dedup();
    out
}

/// What stays readable although it may lie beneath a private directory:
/// what the caller keeps, the directory, and what the command needs to
/// run ([`crate::launch::visible::kept`]: retry-run's own executables, the
/// program and its installation, the `PATH` entries).
pub(super) fn kept_readable(c: &Request, dir: &Path, own: &[PathBuf]) -> Vec<PathBuf> {
    let mut keep = c.paths.keep.clone();
    keep.push(dir.to_path_buf());
    let path: Vec<PathBuf> = std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    keep.extend(crate::launch::visible::kept(&c.argv, &path, own));
    keep
}

/// What the supervisor inside is asked to run: `c` in `dir` with the paths
/// resolved outside (`writable`, `hidden`: the whole list), its TMPDIR, and the
/// loopback ports a direct connection to is recorded as refused.
pub(super) fn inner_request(
    c: &Request,
    (dir, tmpdir): (&Path, &Path),
    writable: &[PathBuf],
    hidden: &[PathBuf],
    allowed_loopback: &[u16],
) -> crate::supervisor::line::Inner {
    // What listens on this machine's loopback and is not allowed: a direct
    // connection to it inside is recorded as refused, with the line that
    // would allow it, instead of failing unseen.
    let refuse_ports = if !c.network.host && c.network.refuse_direct {
        crate::proxy::listening::host_listening_ports()
            .into_iter()
            .filter(|p| !allowed_loopback.contains(p))
            .take(64)
            .collect()
    } else {
        Vec::new()
    };
    let mut inside = Request::new(c.argv.clone(), dir.to_path_buf(), Layers::Namespaces);
    inside.paths.writable = writable.iter().map(|w| w.display().to_string()).collect();
    inside.paths.deny_read = hidden.iter().map(|h| h.display().to_string()).collect();
    inside.paths.deny_read_complete = true;
    inside.network = c.network.clone();
    inside.limits = c.limits;
    inside.tmpdir = Some(tmpdir.to_path_buf());
    crate::supervisor::line::Inner { request: inside, refuse_ports, done_fd: None }
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
pub(super) fn run_bubblewrap<T>(
    c: &Request,
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
pub(super) fn orphans_are_reaped(pid1_comm: Option<&str>, me: u32, starter_is_init: bool) -> bool {
    if me == 1 {
        return true;
    }
    !starter_is_init && pid1_comm.is_some_and(|comm| !comm.trim_end().starts_with("retry-run"))
}

/// How the wait for bubblewrap ended, what it said of its child's pid,
/// and what was started while it ran, if anything was ([`run_bubblewrap`]).
pub(super) type Bubblewrapped<T> = (std::io::Result<Waited>, Option<u32>, Option<Result<T, ExecError>>);

/// How the wait for bubblewrap ended.
#[derive(Debug)]
pub(super) enum Waited {
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
pub(super) fn wait_serving<T>(
    child: &mut std::process::Child,
    (listening, serve, served): (
        Option<std::os::fd::RawFd>,
        &mut Option<impl FnOnce() -> Result<T, ExecError>>,
        &mut Option<Result<T, ExecError>>,
    ),
    (done, status_file): (std::os::fd::OwnedFd, &Path),
) -> std::io::Result<Waited> {
    use std::os::fd::AsRawFd;
    let Some(pidfd) = fd::pidfd_open(child.id() as libc::pid_t, 0) else {
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
        if let Err(e) = fd::poll(&mut fds) {
            if e.kind() == std::io::ErrorKind::Interrupted {
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
pub(super) fn start_serving<T>(
    child: &mut std::process::Child,
    serve: &mut Option<impl FnOnce() -> Result<T, ExecError>>,
    served: &mut Option<Result<T, ExecError>>,
) {
    if let Some(serve) = serve.take() {
        let result = serve();
        if result.is_err() {
            // The child, not yet waited for.
            process::kill(child.id(), libc::SIGKILL);
        }
        *served = Some(result);
    }
}

/// How the command ended, once the supervisor wrote its byte on `done`:
/// read from `status_file`, which it wrote first. `None` when no byte
/// came (its end closed) or the status cannot be read.
pub(super) fn read_done(done: &std::os::fd::OwnedFd, status_file: &Path) -> Option<Ended> {
    use std::os::fd::AsFd;
    let mut byte = [0u8; 1];
    if !matches!(fd::read(done.as_fd(), &mut byte), Ok(1)) {
        return None;
    }
    std::fs::read_to_string(status_file).ok().as_deref().map(str::trim).and_then(parse_status)
}

/// The pid bubblewrap's `--info-fd` named, read once it has ended.
pub(super) fn read_child_pid(info: std::os::fd::OwnedFd) -> Option<u32> {
    use std::io::Read as _;
    let mut text = String::new();
    std::fs::File::from(info).read_to_string(&mut text).ok()?;
    limits::child_pid(&text)
}

/// The pipes of bubblewrap's `--info-fd` (it writes its child's pid), to
/// move that child into a cgroup while it sets up, `--block-fd` (the child
/// waits for a byte before it forks the command), and the supervisor's
/// `done` (it writes a byte once the command and all it left have ended
/// and the status is written: see [`Waited::Done`]).
pub(super) struct Handoff {
    info: (std::os::fd::OwnedFd, std::os::fd::OwnedFd),
    block: Option<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)>,
    done: (std::os::fd::OwnedFd, std::os::fd::OwnedFd),
}

/// This process's ends once bubblewrap has started: the reading end of
/// its info and, with a move, the writing end of its block.
pub(super) enum Kept {
    Info(std::os::fd::OwnedFd),
    Moving(std::os::fd::OwnedFd, std::os::fd::OwnedFd),
}

impl Handoff {
    fn new(block: bool) -> std::io::Result<Handoff> {
        Ok(Handoff { info: fd::pipe()?, block: if block { Some(fd::pipe()?) } else { None }, done: fd::pipe()? })
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
        use std::os::fd::AsFd;
        let ends =
            [self.info.1.as_fd(), self.done.1.as_fd()].into_iter().chain(self.block.as_ref().map(|b| b.0.as_fd()));
        for end in ends {
            fd::keep_on_exec(end)?;
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
pub(super) struct ThreadEntry {
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
pub(super) struct Mover {
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
