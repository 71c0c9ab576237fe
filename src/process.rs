//! Running the agent, checks and the verifier: each in its own process
//! group, with a timeout (SIGTERM to the group, then SIGKILL after a grace
//! period), and its output (stdout and stderr, interleaved) kept as a
//! bounded head and tail, so a command printing gigabytes costs a few
//! hundred kilobytes.
//!
//! When the leader exits, whatever it left running in its group (a
//! background child) is killed too: nothing of an attempt outlives it and
//! writes into the worktree during the snapshot.
//!
//! Ctrl-C and SIGTERM ([`catch_interrupts`]): the first one is noted, and
//! the command being waited for is stopped as at a timeout (its group
//! SIGTERM, then SIGKILL after the grace period); the caller asks
//! [`interrupted`] and winds down. A second one kills the groups being
//! waited for and exits at once (130 for SIGINT, 143 for SIGTERM). The
//! handler is registered with `signal-hook`; the wait loop polls, so a
//! flag set by the handler is all it needs: no self-pipe.
//!
//! Programs on `PATH` ([`programs_on_path`], [`find_program`]): the one
//! lookup every caller uses, which finds what a shell would run.

use std::io::{Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

/// What to run.
#[derive(Debug, Clone)]
pub(crate) struct Spec {
    /// `argv[0]` and its arguments; a shell command is `["sh", "-c", cmd]`.
    pub argv: Vec<String>,
    pub cwd: PathBuf,
    /// Variables set over retry-run's own environment.
    pub env: Vec<(String, String)>,
    /// Variables of retry-run's own environment the process does not get.
    pub unset: Vec<String>,
    pub stdin: Option<Vec<u8>>,
    pub timeout: Duration,
    pub grace: Duration,
    /// Bytes kept at the head, and at the tail, of the output.
    pub keep: usize,
}

impl Spec {
    pub(crate) fn shell(cmd: &str, cwd: &Path, timeout: Duration) -> Spec {
        Spec {
            argv: vec!["sh".into(), "-c".into(), cmd.into()],
            cwd: cwd.to_path_buf(),
            env: Vec::new(),
            unset: Vec::new(),
            stdin: None,
            timeout,
            grace: Duration::from_secs(5),
            keep: 64 * 1024,
        }
    }
}

/// A bounded capture: the first `keep` bytes and the last `keep` bytes.
#[derive(Debug, Default, Clone)]
pub(crate) struct Capture {
    keep: usize,
    pub head: Vec<u8>,
    /// A ring of the latest bytes once the head is full.
    tail: Vec<u8>,
    tail_start: usize,
    pub total: u64,
}

impl Capture {
    pub(crate) fn new(keep: usize) -> Capture {
        Capture { keep, ..Capture::default() }
    }

    pub(crate) fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        if self.head.len() < self.keep {
            let n = (self.keep - self.head.len()).min(bytes.len());
            self.head.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
        }
        if bytes.is_empty() || self.keep == 0 {
            return;
        }
        if bytes.len() >= self.keep {
            self.tail.clear();
            self.tail.extend_from_slice(&bytes[bytes.len() - self.keep..]);
            self.tail_start = 0;
            return;
        }
        for &b in bytes {
            if self.tail.len() < self.keep {
                self.tail.push(b);
            } else {
                self.tail[self.tail_start] = b;
                self.tail_start = (self.tail_start + 1) % self.keep;
            }
        }
    }

    /// The tail in order.
    pub(crate) fn tail(&self) -> Vec<u8> {
        let mut t = self.tail[self.tail_start..].to_vec();
        t.extend_from_slice(&self.tail[..self.tail_start]);
        t
    }

    /// Bytes between head and tail that were not kept.
    pub(crate) fn omitted(&self) -> u64 {
        self.total - self.head.len() as u64 - self.tail.len() as u64
    }

    /// Head, an omission mark when bytes were dropped, and tail.
    pub(crate) fn bytes(&self) -> Vec<u8> {
        let mut out = self.head.clone();
        let omitted = self.omitted();
        if omitted > 0 {
            out.extend_from_slice(format!("\n[... {omitted} bytes omitted]\n").as_bytes());
        }
        out.extend_from_slice(&self.tail());
        out
    }
}

/// How a command ended.
#[derive(Debug, Clone)]
pub(crate) struct Finished {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    /// Stopped because retry-run got SIGINT or SIGTERM ([`interrupted`]).
    pub interrupted: bool,
    pub duration: Duration,
    pub output: Capture,
}

impl Finished {
    pub(crate) fn success(&self) -> bool {
        !self.timed_out && !self.interrupted && self.exit_code == Some(0)
    }
}

/// The first SIGINT or SIGTERM retry-run got (0: none yet).
static INTERRUPT: AtomicI32 = AtomicI32::new(0);

/// The process groups being waited for (0: a free slot), killed by a
/// second signal before retry-run exits.
static WAITED: [AtomicI32; 32] = [const { AtomicI32::new(0) }; 32];

/// The signal that interrupted retry-run, once SIGINT or SIGTERM came
/// (after [`catch_interrupts`]).
pub(crate) fn interrupted() -> Option<i32> {
    match INTERRUPT.load(Ordering::SeqCst) {
        0 => None,
        sig => Some(sig),
    }
}

thread_local! {
    /// The flag that stops this thread's lane of a task, once another lane
    /// has won (`run --lanes`).
    static LANE_STOP: std::cell::RefCell<Option<std::sync::Arc<std::sync::atomic::AtomicBool>>> =
        const { std::cell::RefCell::new(None) };
}

/// From now on, what this thread waits for ([`run_with`]) is stopped, as
/// by SIGINT, once `flag` is set: the lanes of a task share one, set when
/// one of them wins.
pub(crate) fn stop_lane_on(flag: std::sync::Arc<std::sync::atomic::AtomicBool>) {
    LANE_STOP.with(|s| *s.borrow_mut() = Some(flag));
}

/// The flag that stops this thread's lane ([`stop_lane_on`]), to hand to
/// the threads it starts.
pub(crate) fn lane_stop_flag() -> Option<std::sync::Arc<std::sync::atomic::AtomicBool>> {
    LANE_STOP.with(|s| s.borrow().clone())
}

/// Whether this thread's lane was told to stop ([`stop_lane_on`]).
pub(crate) fn lane_stopped() -> bool {
    LANE_STOP.with(|s| s.borrow().as_ref().is_some_and(|f| f.load(Ordering::SeqCst)))
}

/// `SIGINT` or `SIGTERM`, by number.
pub(crate) fn signal_name(sig: i32) -> String {
    match sig {
        libc::SIGINT => "SIGINT".into(),
        libc::SIGTERM => "SIGTERM".into(),
        n => format!("signal {n}"),
    }
}

/// Whether [`catch_interrupts`] has run: SIGINT and SIGTERM are this
/// module's from then on, and a handler installed before (the demo's)
/// leaves them to it.
pub(crate) fn interrupts_caught() -> bool {
    CAUGHT.load(Ordering::SeqCst)
}

static CAUGHT: AtomicBool = AtomicBool::new(false);

/// From now on SIGINT and SIGTERM no longer end retry-run at once: the
/// first is noted for [`interrupted`] (and stops what [`run_with`] waits
/// for), a second one ends the groups being waited for and exits with
/// 128 + its number. Once per process; later calls do nothing.
pub(crate) fn catch_interrupts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for sig in [libc::SIGINT, libc::SIGTERM] {
            // SAFETY: the action only touches atomics and calls kill, write
            // and _exit, all async-signal-safe. signal-hook's handler is
            // installed with SA_RESTART, so other system calls do not fail
            // with EINTR.
            let _ = unsafe { signal_hook::low_level::register(sig, move || on_interrupt(sig)) };
        }
        CAUGHT.store(true, Ordering::SeqCst);
    });
}

/// [`catch_interrupts`], with `first` said on stderr at the first signal
/// rather than what a run says (`retry-run ui`: the server stops).
pub(crate) fn catch_interrupts_saying(first: &'static [u8]) {
    FIRST_LEN.store(first.len(), Ordering::SeqCst);
    FIRST_SAID.store(first.as_ptr().cast_mut(), Ordering::SeqCst);
    catch_interrupts();
}

/// What the first signal says, when not a run's ([`catch_interrupts_saying`]).
static FIRST_SAID: std::sync::atomic::AtomicPtr<u8> = std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());
static FIRST_LEN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// What SIGINT or SIGTERM does once caught; runs in the signal handler.
fn on_interrupt(sig: i32) {
    const FIRST: &[u8] =
        b"\nretry-run: interrupted: stopping what runs and recording the attempt (again to quit at once)\n";
    if INTERRUPT.compare_exchange(0, sig, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
        let said = FIRST_SAID.load(Ordering::SeqCst);
        let (ptr, len) = if said.is_null() {
            (FIRST.as_ptr(), FIRST.len())
        } else {
            (said.cast_const(), FIRST_LEN.load(Ordering::SeqCst))
        };
        // SAFETY: write(2) on stderr is async-signal-safe; `ptr` and `len`
        // are a `&'static [u8]`'s.
        unsafe {
            libc::write(2, ptr.cast(), len);
        }
        return;
    }
    for slot in &WAITED {
        let pgid = slot.load(Ordering::SeqCst);
        if pgid > 0 {
            // SAFETY: kill(2) is async-signal-safe.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }
    // _exit(2): async-signal-safe, ends the process at once.
    signal_hook::low_level::exit(128 + sig);
}

/// `pgid` among the groups a second signal kills, while it is waited for.
struct Waited(Option<usize>);

impl Waited {
    fn new(pgid: i32) -> Waited {
        Waited(WAITED.iter().position(|s| s.compare_exchange(0, pgid, Ordering::SeqCst, Ordering::SeqCst).is_ok()))
    }
}

impl Drop for Waited {
    fn drop(&mut self) {
        if let Some(i) = self.0 {
            WAITED[i].store(0, Ordering::SeqCst);
        }
    }
}

/// Runs a short command to its end (in `cwd`, when given) and returns its
/// exit status with all of its stdout and stderr (apart). No process group
/// and no timeout: for quick commands (`git` talking to a remote, an agent
/// CLI's `--version`) whose background children may outlive them.
pub(crate) fn output<S: AsRef<std::ffi::OsStr>>(
    program: &str,
    args: &[S],
    cwd: Option<&Path>,
) -> std::io::Result<std::process::Output> {
    let mut cmd = Command::new(program);
    cmd.args(args);
    if let Some(dir) = cwd {
        in_dir(&mut cmd, dir);
    }
    cmd.output()
}

/// Like [`output`], with variables set and unset over retry-run's own
/// environment and, when given, `stdin` written to the process (on a
/// thread of its own, so that a process that writes before it reads does
/// not block on a full pipe).
pub(crate) fn output_with<S: AsRef<std::ffi::OsStr>>(
    program: &str,
    args: &[S],
    cwd: &Path,
    set: &[(&str, &std::ffi::OsStr)],
    unset: &[&str],
    stdin: Option<Vec<u8>>,
) -> std::io::Result<std::process::Output> {
    let mut cmd = Command::new(program);
    cmd.args(args);
    in_dir(&mut cmd, cwd);
    for name in unset {
        cmd.env_remove(name);
    }
    cmd.envs(set.iter().map(|(k, v)| (k, v)));
    cmd.stdin(if stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn()?;
    let writer = match (stdin, child.stdin.take()) {
        (Some(input), Some(mut pipe)) => Some(std::thread::spawn(move || {
            let _ = pipe.write_all(&input);
        })),
        _ => None,
    };
    let out = child.wait_with_output()?;
    if let Some(w) = writer {
        let _ = w.join();
    }
    Ok(out)
}

pub(crate) use crate::sandbox::programs::{find_program, programs_on_path};

/// `cmd` runs in `dir`, and its environment says so as a shell's would:
/// `PWD` is `dir` (programs that take their directory from `PWD` work
/// there, not where retry-run was started), `OLDPWD` is dropped, and
/// `INIT_CWD` (npm's), when set, is `dir` too.
fn in_dir(cmd: &mut Command, dir: &Path) {
    cmd.current_dir(dir).env("PWD", dir).env_remove("OLDPWD");
    if std::env::var_os("INIT_CWD").is_some() {
        cmd.env("INIT_CWD", dir);
    }
}

/// Why a command could not be started.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StartError {
    #[error("empty command")]
    EmptyCommand,
    #[error("cannot create a pipe: {source}")]
    Pipe { source: std::io::Error },
    /// The message says what to do (the agent's output tail and the
    /// verifier's problems quote it whole).
    #[error("cannot start {program:?} in {}: {source}; check the command and that it is installed", cwd.display())]
    Spawn { program: String, cwd: PathBuf, source: std::io::Error },
}

/// Runs `spec` to its end (or its timeout). `Err` only when it could not be
/// started: the message names the program and what to do.
pub(crate) fn run(spec: &Spec) -> Result<Finished, StartError> {
    run_with(spec, &mut |_| {})
}

/// Like [`run`]; `started` gets the process group id as soon as it exists
/// (the loop records it, so a later run can stop an orphaned agent).
pub(crate) fn run_with(spec: &Spec, started: &mut dyn FnMut(i32)) -> Result<Finished, StartError> {
    let (program, args) = spec.argv.split_first().ok_or(StartError::EmptyCommand)?;
    let (reader, writer) = std::io::pipe().map_err(|source| StartError::Pipe { source })?;
    let mut cmd = group_command(spec, program, args, writer)?;
    let start = Instant::now();
    let mut child =
        cmd.spawn().map_err(|source| StartError::Spawn { program: program.clone(), cwd: spec.cwd.clone(), source })?;
    drop(cmd); // closes our copies of the pipe's write end
    let pgid = child.id() as i32;
    let waited = Waited::new(pgid);
    started(pgid);
    let output = OutputReader::start(reader, spec.keep);
    if let (Some(input), Some(mut stdin)) = (spec.stdin.clone(), child.stdin.take()) {
        // A writer thread: a command that does not read its stdin must not block us.
        std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
    }
    let (status, stop) = wait_or_stop(&mut child, pgid, spec, start);
    let duration = start.elapsed();
    // The leader is gone; nothing it started may outlive it.
    kill_group(pgid, if stop == Stop::No { Duration::from_millis(200) } else { spec.grace });
    drop(waited);
    Ok(Finished {
        exit_code: status.and_then(|s| s.code()),
        signal: status.and_then(|s| s.signal()),
        timed_out: stop == Stop::TimedOut,
        interrupted: stop == Stop::Asked,
        duration,
        output: output.finish(),
    })
}

/// The command of `spec` (`program` and `args`), in a process group of its
/// own that dies with this process, with stdout and stderr both on `out`.
fn group_command(spec: &Spec, program: &str, args: &[String], out: std::io::PipeWriter) -> Result<Command, StartError> {
    let err = out.try_clone().map_err(|source| StartError::Pipe { source })?;
    let mut cmd = Command::new(program);
    in_dir(&mut cmd, &spec.cwd);
    for name in &spec.unset {
        cmd.env_remove(name);
    }
    cmd.args(args)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .stdout(out)
        .stderr(err)
        .stdin(if spec.stdin.is_some() { Stdio::piped() } else { Stdio::null() })
        .process_group(0);
    die_with_this_process(&mut cmd);
    Ok(cmd)
}

/// The command's output, read on a thread of its own into a [`Capture`].
struct OutputReader {
    capture: Arc<Mutex<Capture>>,
    thread: std::thread::JoinHandle<()>,
}

impl OutputReader {
    /// Reads `reader` to its end, keeping `keep` bytes of head and tail.
    fn start(mut reader: std::io::PipeReader, keep: usize) -> OutputReader {
        let capture = Arc::new(Mutex::new(Capture::new(keep)));
        let shared = Arc::clone(&capture);
        let thread = std::thread::spawn(move || {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                match reader.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        if let Ok(mut c) = shared.lock() {
                            c.push(&buf[..n]);
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
        });
        OutputReader { capture, thread }
    }

    /// What was read. The reader ends when every writer is gone; one that
    /// escaped the group (setsid) could keep the pipe open, so it is not
    /// waited for more than 2 s.
    fn finish(self) -> Capture {
        let waited = Instant::now();
        while !self.thread.is_finished() && waited.elapsed() < Duration::from_secs(2) {
            std::thread::sleep(Duration::from_millis(1));
        }
        if self.thread.is_finished() {
            let _ = self.thread.join();
        }
        self.capture.lock().map(|c| c.clone()).unwrap_or_default()
    }
}

/// Why a command was stopped before it ended by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    /// It was not: it ended by itself.
    No,
    /// Its time ran out.
    TimedOut,
    /// SIGINT or SIGTERM came, or its lane was told to stop.
    Asked,
}

/// What the wait loop does at a turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Turn {
    /// Waits on.
    Wait,
    /// SIGTERM to the group, for this reason.
    Term(Stop),
    /// SIGKILL to the group: the grace period after SIGTERM is over.
    Kill,
}

/// The wait loop's turn at `now`, given the `deadline`, when SIGTERM was
/// sent (if it was), the `grace` period after it, and whether retry-run
/// was asked to stop. Pure.
fn turn(now: Instant, deadline: Instant, term_sent: Option<Instant>, grace: Duration, asked: bool) -> Turn {
    match term_sent {
        None if asked => Turn::Term(Stop::Asked),
        None if now >= deadline => Turn::Term(Stop::TimedOut),
        Some(t) if now >= t + grace => Turn::Kill,
        _ => Turn::Wait,
    }
}

/// Waits for `child`, the leader of group `pgid`, to end: at its timeout
/// or when asked ([`interrupted`], [`lane_stopped`]) the group gets
/// SIGTERM, then SIGKILL after the grace period. Its exit status (`None`
/// when it cannot be had) and why it was stopped.
fn wait_or_stop(
    child: &mut std::process::Child,
    pgid: i32,
    spec: &Spec,
    start: Instant,
) -> (Option<std::process::ExitStatus>, Stop) {
    let deadline = start + spec.timeout;
    let mut stop = Stop::No;
    let mut term_sent: Option<Instant> = None;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return (Some(status), stop),
            Ok(None) => {}
            Err(_) => return (None, stop),
        }
        let now = Instant::now();
        let asked = term_sent.is_none() && (interrupted().is_some() || lane_stopped());
        match turn(now, deadline, term_sent, spec.grace, asked) {
            Turn::Term(why) => {
                stop = why;
                signal_group(pgid, libc::SIGTERM);
                term_sent = Some(now);
            }
            Turn::Kill => signal_group(pgid, libc::SIGKILL),
            Turn::Wait => {}
        }
        // Short commands (an agent's `true`, a linter on a clean tree) are
        // seen to end within a millisecond; long ones are looked at less.
        std::thread::sleep(Duration::from_millis(if now.duration_since(start) < Duration::from_secs(1) {
            1
        } else {
            25
        }));
    }
}

/// The command is killed when this process dies, even by SIGKILL
/// (`PR_SET_PDEATHSIG`, checked after it is set: if this process died
/// between the fork and the flag, the command ends at once). The thread
/// that starts it waits for it, so the flag, which follows the thread,
/// holds as long as the command runs.
fn die_with_this_process(cmd: &mut Command) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: between fork and exec: prctl, getppid and _exit only.
    unsafe {
        cmd.pre_exec(move || {
            #[cfg(target_os = "linux")]
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
            if libc::getppid() != parent {
                libc::_exit(128 + libc::SIGKILL);
            }
            Ok(())
        });
    }
}

fn signal_group(pgid: i32, sig: i32) {
    // SAFETY: kill(2) with a negative pid signals a process group; no memory is shared.
    unsafe {
        libc::kill(-pgid, sig);
    }
}

fn group_alive(pgid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence.
    unsafe { libc::kill(-pgid, 0) == 0 }
}

/// Stops what is left of an agent's process group after `retry-run` itself
/// was killed, but only when the group still works in `worktree` (its
/// leader's current directory), so a reused process id is never signalled.
pub(crate) fn stop_orphan(pgid: i32, worktree: &Path, grace: Duration) -> bool {
    let cwd = std::fs::read_link(format!("/proc/{pgid}/cwd"));
    let ours = match (cwd, std::fs::canonicalize(worktree)) {
        (Ok(c), Ok(w)) => c.starts_with(&w),
        _ => false,
    };
    if ours && group_alive(pgid) {
        kill_group(pgid, grace);
        return true;
    }
    false
}

/// Ends what an earlier run of a task left running in its worktree
/// `worktree` (a killed `retry-run run`'s agent, a daemon it started): every
/// process of this user, but this one, that has the worktree in its
/// environment (`RETRY_RUN_WORKTREE`, which every agent gets), or that
/// works beneath the worktree with no terminal (what the sandbox starts
/// never has one; a shell of the user's looking at the worktree has).
/// Returns how many it ended (SIGKILL, waited for up to 2 s).
pub(crate) fn end_processes_in(worktree: &Path) -> usize {
    let Ok(wt) = std::fs::canonicalize(worktree) else { return 0 };
    let marker = {
        let mut m = b"RETRY_RUN_WORKTREE=".to_vec();
        m.extend_from_slice(worktree.as_os_str().as_encoded_bytes());
        m
    };
    let marker_real = {
        let mut m = b"RETRY_RUN_WORKTREE=".to_vec();
        m.extend_from_slice(wt.as_os_str().as_encoded_bytes());
        m
    };
    let me = std::process::id();
    let uid = unsafe { libc::getuid() };
    let left = || -> Vec<libc::pid_t> {
        let Ok(rd) = std::fs::read_dir("/proc") else { return Vec::new() };
        rd.flatten()
            .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()))
            .filter(|&pid| pid != me)
            .filter(|&pid| {
                use std::os::unix::fs::MetadataExt;
                let dir = PathBuf::from(format!("/proc/{pid}"));
                if std::fs::metadata(&dir).map(|m| m.uid()).ok() != Some(uid) {
                    return false;
                }
                let environ = std::fs::read(dir.join("environ")).unwrap_or_default();
                let marked = environ.split(|b| *b == 0).any(|v| v == marker.as_slice() || v == marker_real.as_slice());
                let inside = std::fs::read_link(dir.join("cwd")).is_ok_and(|c| c.starts_with(&wt));
                marked || (inside && !has_terminal(&dir))
            })
            .map(|pid| pid as libc::pid_t)
            .collect()
    };
    let mut ended = std::collections::BTreeSet::new();
    let t = Instant::now();
    loop {
        let now = left();
        if now.is_empty() || t.elapsed() > Duration::from_secs(2) {
            return ended.len();
        }
        for pid in now {
            // SAFETY: kill(2) on a process of this user found just now.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
            ended.insert(pid);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether the process whose `/proc` directory is `dir` has a controlling
/// terminal (`tty_nr`, the 7th field of its `stat`).
fn has_terminal(dir: &Path) -> bool {
    let stat = std::fs::read_to_string(dir.join("stat")).unwrap_or_default();
    // pid (comm) state ppid pgrp session tty_nr ...: comm may hold spaces.
    stat.rsplit_once(')')
        .and_then(|(_, rest)| rest.split_whitespace().nth(4))
        .and_then(|t| t.parse::<i64>().ok())
        .is_some_and(|t| t != 0)
}

/// SIGTERM to what is left of the group, SIGKILL after `grace`, and wait
/// (at most a few seconds) until none of it is left.
pub(crate) fn kill_group(pgid: i32, grace: Duration) {
    if !group_alive(pgid) {
        return;
    }
    signal_group(pgid, libc::SIGTERM);
    let t = Instant::now();
    while group_alive(pgid) && t.elapsed() < grace {
        std::thread::sleep(Duration::from_millis(10));
    }
    signal_group(pgid, libc::SIGKILL);
    let t = Instant::now();
    while group_alive(pgid) && t.elapsed() < Duration::from_secs(5) {
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capture_keeps_head_and_tail() {
        let mut c = Capture::new(4);
        for chunk in [&b"abc"[..], b"defg", b"hij", b"k"] {
            c.push(chunk);
        }
        assert_eq!(c.head, b"abcd");
        assert_eq!(c.tail(), b"hijk");
        assert_eq!(c.omitted(), 3);
        assert_eq!(c.bytes(), b"abcd\n[... 3 bytes omitted]\nhijk");
        let mut small = Capture::new(10);
        small.push(b"hello");
        assert_eq!(small.bytes(), b"hello");
        let mut big = Capture::new(3);
        big.push(b"0123456789");
        assert_eq!((big.head.as_slice(), big.tail()), (&b"012"[..], b"789".to_vec()));
    }

    #[test]
    fn the_wait_loop_terms_at_the_deadline_or_when_asked_and_kills_after_the_grace() {
        let t0 = Instant::now();
        let (s, grace) = (Duration::from_secs(1), Duration::from_secs(5));
        let deadline = t0 + 10 * s;
        assert_eq!(turn(t0, deadline, None, grace, false), Turn::Wait);
        assert_eq!(turn(t0 + 10 * s, deadline, None, grace, false), Turn::Term(Stop::TimedOut));
        assert_eq!(turn(t0, deadline, None, grace, true), Turn::Term(Stop::Asked));
        assert_eq!(turn(t0 + 10 * s, deadline, None, grace, true), Turn::Term(Stop::Asked), "asked wins");
        assert_eq!(turn(t0 + 14 * s, deadline, Some(t0 + 10 * s), grace, false), Turn::Wait);
        assert_eq!(turn(t0 + 15 * s, deadline, Some(t0 + 10 * s), grace, false), Turn::Kill);
    }

    #[test]
    fn a_program_on_path_is_an_executable_regular_file() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().expect("tempdir");
        let dir = |name: &str| {
            let d = tmp.path().join(name);
            std::fs::create_dir(&d).expect("mkdir");
            d
        };
        let (plain, folder, runnable, linked) = (dir("plain"), dir("folder"), dir("runnable"), dir("linked"));
        let write = |path: &Path, mode: u32| {
            std::fs::write(path, "#!/bin/sh\n").expect("write");
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).expect("chmod");
        };
        write(&plain.join("tool"), 0o644);
        std::fs::create_dir(folder.join("tool")).expect("a directory named tool");
        write(&runnable.join("tool"), 0o755);
        std::os::unix::fs::symlink(runnable.join("tool"), linked.join("tool")).expect("symlink");
        write(&runnable.join("only-owner"), 0o700);
        let path = std::env::join_paths([&plain, &folder, &runnable, &linked]).expect("PATH");
        let found: Vec<PathBuf> = programs_on_path("tool", &path).collect();
        assert_eq!(
            found,
            [runnable.join("tool"), linked.join("tool")],
            "a file without an execute bit, or a directory, is no program"
        );
        assert_eq!(programs_on_path("only-owner", &path).next(), Some(runnable.join("only-owner")));
        assert_eq!(programs_on_path("missing", &path).next(), None);
        assert_eq!(programs_on_path("runnable/tool", tmp.path().as_os_str()).next(), None, "a path is not looked up");
        assert_eq!(programs_on_path("", &path).next(), None);
        let plain_only = std::env::join_paths([&plain]).expect("PATH");
        assert_eq!(programs_on_path("tool", &plain_only).next(), None, "a non-executable file on PATH is not found");
    }
}
