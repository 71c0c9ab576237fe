//! The system calls of starting, confining, signalling and reaping
//! processes.

use crate::{Limits, layers::seccomp};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

/// Drops every capability of the calling process and what it will
/// execute (the bounding set emptied, then the effective, permitted and
/// inheritable sets cleared): a command run by root in the fallback is
/// root without root's powers (no `CAP_SYS_PTRACE` to read another
/// process's environment, no `CAP_DAC_OVERRIDE`). Only system calls: safe
/// between `fork` and `exec`. Nothing to do for another user.
pub(crate) fn drop_capabilities() {
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
pub(crate) fn not_dumpable() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl sets a flag of this process.
    unsafe {
        libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
    }
}

/// The process group the command leads (its own session), for the
/// signals this process passes on; 0 while none runs.
pub(crate) static COMMAND_GROUP: std::sync::atomic::AtomicI32 = std::sync::atomic::AtomicI32::new(0);

/// The command starts a session of its own: it has no controlling
/// terminal (it cannot open `/dev/tty`, nor push input into the user's
/// terminal), and it dies with this process (`PR_SET_PDEATHSIG`). SIGTERM,
/// SIGINT and SIGHUP sent to this process are passed on to the command's
/// group (see [`ignore_but_wake`]).
pub(crate) fn own_session(cmd: &mut Command) {
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

/// Moves the command's process into the cgroup whose `cgroup.procs` (or,
/// on v1, `tasks`) is `procs` just before it executes. Where the cgroup
/// is the only limit (`required`: root), a failure stops the start; else
/// it fails quietly and the rlimit stays.
pub(crate) fn enter_on_exec(cmd: &mut Command, procs: &Path, required: bool) {
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
pub(crate) fn is_root() -> bool {
    // SAFETY: getuid has no preconditions.
    unsafe { libc::getuid() == 0 }
}

/// Installs `filter` in the command's process just before it executes.
pub(crate) fn install_on_exec(cmd: &mut Command, filter: seccomp::Filter) {
    // SAFETY: the closure runs between fork and exec; installing a seccomp
    // filter is two system calls on data prepared before the fork.
    unsafe {
        cmd.pre_exec(move || filter.install().map_err(std::io::Error::other));
    }
}

/// Sets the process and file-size limits for this process and what it
/// starts (an error leaves the limit as it was).
pub(crate) fn set_limits(limits: &Limits) {
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
pub(crate) fn ignore_but_wake(sig: libc::c_int) {
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
pub(crate) fn pass_signals_on() {
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
pub(crate) fn become_reaper() {
    subreaper();
    pass_signals_on();
}

/// Makes this process the subreaper of what it starts: a descendant whose
/// parent ends comes to this process instead of the machine's init.
pub(crate) fn subreaper() {
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
pub(crate) fn children() -> Vec<libc::pid_t> {
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
pub(crate) const LEFTOVER_GRACE: std::time::Duration = std::time::Duration::from_millis(100);

/// Reaps the children that have ended, without waiting. Returns whether
/// none is left at all, ended or not (the kernel's `ECHILD`, for the
/// children of every thread of this process).
pub(crate) fn reap_ended() -> bool {
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
pub(crate) fn end_leftovers() -> usize {
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
pub(crate) fn raise_again(sig: libc::c_int) {
    // SAFETY: restores the default action of `sig` and raises it on this
    // process, which then ends as the command did.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// Writes the one byte that says the command is done on `fd` (inherited
/// from the outer process, which waits for it: see `Waited::Done`) and
/// closes it.
pub(crate) fn say_done(fd: i32) {
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
pub(crate) fn close_inherited() {
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

/// This process's effective user.
pub(crate) fn euid() -> u32 {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() }
}

/// Whether process `pid` exists (signal 0 asks the kernel without sending).
pub(crate) fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only asks whether the process exists.
    let gone = unsafe { libc::kill(pid as libc::pid_t, 0) } == -1
        && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH);
    !gone
}

/// Sends `sig` to process `pid` (quietly: one gone already is no error).
pub(crate) fn kill(pid: u32, sig: libc::c_int) {
    // SAFETY: kill only sends a signal.
    unsafe {
        libc::kill(pid as libc::pid_t, sig);
    }
}

/// Waits for process `pid`, a child or an orphan this process is the
/// (sub)reaper of, and reaps it; one already reaped, or never ours,
/// returns at once.
pub(crate) fn reap(pid: u32) {
    // SAFETY: waitpid with no status to write.
    unsafe {
        libc::waitpid(pid as libc::pid_t, std::ptr::null_mut(), 0);
    }
}

/// The command's process, between fork and exec, puts `limits` on itself,
/// drops its capabilities and confines itself to `ruleset` (made before
/// the fork): the Landlock-only fallback.
pub(crate) fn confine_on_exec(cmd: &mut Command, limits: Limits, ruleset: crate::layers::landlock::Prepared) {
    // SAFETY: between fork and exec: setrlimit, prctl, capset and two
    // system calls on a descriptor prepared before the fork; nothing
    // allocates.
    unsafe {
        cmd.pre_exec(move || {
            set_limits(&limits);
            drop_capabilities();
            ruleset.restrict_self()
        });
    }
}

/// Ignores SIGPIPE, so that a closed pipe is an error to handle, not the
/// end of this process.
pub(crate) fn ignore_sigpipe() {
    // SAFETY: setting a signal's disposition to SIG_IGN; no handler runs.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}
