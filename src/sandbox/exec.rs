//! The one place that starts a confined process: what `retry-run sandbox`
//! does, which the attempt loop puts in front of every agent and check
//! command ([`super::wrap`]). The process confines itself with Landlock
//! ([`super::landlock`], writable paths from [`super::command_writable`]),
//! marks every descriptor it inherited close-on-exec, and runs the command,
//! or becomes it, so the confinement holds for the command and all its
//! descendants.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::Command;

use super::landlock::{self, LandlockError};

/// A command to run confined to a directory.
#[derive(Debug, Clone, Default)]
pub struct Confined {
    /// The directory it may write beneath (the current directory).
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
    /// Its TMPDIR; `None` makes a private one, removed when it ends.
    pub tmpdir: Option<PathBuf>,
    /// Replace this process by the command instead of waiting for it (the
    /// TMPDIR is then the caller's to remove).
    pub replace: bool,
    /// Wait for the command, then end every process it left behind (a
    /// double-forked daemon included), and end the way it ended: its exit
    /// code, or its signal raised again (the attempt loop).
    pub reap: bool,
    /// The command and its arguments.
    pub argv: Vec<String>,
}

/// Why a confined command did not run.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error(
        "this kernel ({kernel}) has no Landlock (Linux 5.13 or newer, enabled at boot): `retry-run sandbox` cannot confine anything here"
    )]
    NoLandlock { kernel: String },
    /// A writable path that is wrong (the message names it).
    #[error("{message}")]
    Writable { message: String },
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
    #[error("no command to run")]
    NoCommand,
    /// The command could not be started; `replaced` when this process was
    /// to become it.
    #[error("cannot start {program:?}: {source}; check the command and that it is installed")]
    CannotStart { program: String, replaced: bool, source: std::io::Error },
}

/// Runs `c` confined and returns its exit status (a death by signal N as
/// 128+N). With `c.replace`, this process becomes the command and returns
/// only with an error.
pub fn run(c: &Confined) -> Result<i32, ExecError> {
    if landlock::abi() == 0 {
        return Err(ExecError::NoLandlock { kernel: landlock::kernel() });
    }
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let dir = std::fs::canonicalize(&c.dir).unwrap_or_else(|_| c.dir.clone());
    let extra = super::prepare_writable(&c.writable, home.as_deref(), &c.dir)
        .map_err(|message| ExecError::Writable { message })?;
    let (tmpdir, own_tmp) = match &c.tmpdir {
        Some(t) => (t.clone(), false),
        None => (private_tmpdir()?, true),
    };
    let hidden = super::hidden_paths(&c.deny_read, home.as_deref(), &c.dir);
    landlock::confine(&super::command_writable(&dir, extra, &c.git, &tmpdir), &hidden)?;
    close_inherited();
    let (program, rest) = c.argv.split_first().ok_or(ExecError::NoCommand)?;
    let mut cmd = Command::new(program);
    cmd.args(rest);
    for k in ["TMPDIR", "TMP", "TEMP"] {
        cmd.env(k, &tmpdir);
    }
    let cannot_start = |source, replaced| ExecError::CannotStart { program: program.clone(), replaced, source };
    if c.replace {
        return Err(cannot_start(cmd.exec(), true));
    }
    if c.reap {
        become_reaper();
    }
    let status = cmd.status();
    if c.reap {
        let ended = end_leftovers();
        if ended > 0 {
            eprintln!("retry-run: ended {ended} process(es) the command left running");
        }
    }
    if own_tmp {
        let _ = std::fs::remove_dir_all(&tmpdir);
    }
    match status {
        Ok(s) => {
            if c.reap
                && let Some(sig) = s.signal()
            {
                raise_again(sig);
            }
            Ok(s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0)))
        }
        Err(e) => Err(cannot_start(e, false)),
    }
}

/// Does nothing: a termination signal sent to the process group reaches
/// the command, and this process stays to end what the command leaves.
extern "C" fn ignore_but_wake(_: libc::c_int) {}

/// Makes this process the subreaper of what it starts: a descendant whose
/// parent ends (a double-forked daemon, `setsid` included) becomes this
/// process's child instead of init's, so it can be ended. SIGTERM, SIGINT
/// and SIGHUP no longer end this process (they still reach the command,
/// which gets the default handlers back when it starts).
fn become_reaper() {
    #[cfg(target_os = "linux")]
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER only sets a flag of this
    // process; sigaction installs a handler that does nothing, which exec
    // resets to the default in the command.
    unsafe {
        libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
        for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = ignore_but_wake as *const () as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
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

/// Ends every process left below this one (each ended process's own
/// children come here in turn) and reaps them. Returns how many it ended.
fn end_leftovers() -> usize {
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

/// A new directory of our own under the system's temporary directory.
fn private_tmpdir() -> Result<PathBuf, ExecError> {
    use std::os::unix::fs::DirBuilderExt;
    let base = std::env::temp_dir();
    for i in 0..100u32 {
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
        let p = base.join(format!("retry-run-sandbox-{}-{nanos}-{i}", std::process::id()));
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

/// Marks every descriptor above stderr close-on-exec, so none this process
/// inherited (a lock, a repository file) reaches the command.
fn close_inherited() {
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
