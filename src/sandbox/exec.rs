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
    /// Its TMPDIR; `None` makes a private one, removed when it ends.
    pub tmpdir: Option<PathBuf>,
    /// Replace this process by the command instead of waiting for it (the
    /// TMPDIR is then the caller's to remove).
    pub replace: bool,
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
    landlock::confine(&super::command_writable(&dir, extra, &c.git, &tmpdir))?;
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
    let status = cmd.status();
    if own_tmp {
        let _ = std::fs::remove_dir_all(&tmpdir);
    }
    match status {
        Ok(s) => Ok(s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0))),
        Err(e) => Err(cannot_start(e, false)),
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
