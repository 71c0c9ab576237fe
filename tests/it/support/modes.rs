//! Who runs an attack and under which sandbox: [`Mode::Namespaces`]
//! (bubblewrap) or [`Mode::Fallback`] (Landlock and seccomp, bubblewrap
//! taken away by `RETRY_RUN_BWRAP=""`), as [`Who::Root`] (the user the
//! tests run as, root in CI) or [`Who::Nobody`] (uid 65534, tried only
//! when the tests run as root); [`can`] says whether a combination can be
//! tried here, [`as_who`] wraps a `retry-run` command for it and
//! [`give_back`] returns the test directory afterwards.

use std::ffi::OsString;
use std::path::Path;
use std::process::Command;
use std::sync::{RwLock, RwLockReadGuard, RwLockWriteGuard};

use super::TestEnv;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Namespaces,
    Fallback,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Who {
    Root,
    Nobody,
}

pub(crate) const NOBODY: u32 = 65534;

pub(crate) fn namespaces_here() -> bool {
    retry_run::sandbox::layers::namespaces::probe().is_ok()
}

/// Whether this combination can be tried here; says why not.
pub(crate) fn can(mode: Mode, who: Who) -> bool {
    let me_root = unsafe { libc::getuid() } == 0;
    match who {
        Who::Root if !me_root => {
            eprintln!("SKIPPED: as root, but the tests do not run as root");
            return false;
        }
        Who::Nobody if !me_root => {}
        Who::Nobody => {
            // The binary and python3 must be reachable by another user.
            let bin = Path::new(env!("CARGO_BIN_EXE_retry-run"));
            let reachable = bin.ancestors().skip(1).all(|d| {
                use std::os::unix::fs::PermissionsExt;
                std::fs::metadata(d).is_ok_and(|m| m.permissions().mode() & 0o001 != 0)
            });
            if !reachable || !Path::new("/usr/bin/python3").exists() || !Path::new("/usr/bin/setpriv").exists() {
                eprintln!("SKIPPED: the binary, /usr/bin/python3 or setpriv cannot be reached by an unprivileged user");
                return false;
            }
        }
        Who::Root => {}
    }
    mode_can(mode)
}

/// As [`can`], but [`Who::Root`] stands for whoever runs the tests (root
/// in CI): for attacks that need no root of the test's own.
pub(crate) fn can_as_me(mode: Mode, who: Who) -> bool {
    if who == Who::Root && unsafe { libc::getuid() } != 0 {
        return mode_can(mode);
    }
    can(mode, who)
}

/// Whether `mode` can be made here; says why not.
fn mode_can(mode: Mode) -> bool {
    match mode {
        Mode::Namespaces if !namespaces_here() => {
            eprintln!("SKIPPED: namespaces cannot be made here");
            false
        }
        Mode::Fallback if retry_run::sandbox::layers::landlock::abi() < 4 => {
            eprintln!("SKIPPED: Landlock ABI 4 is needed for the fallback");
            false
        }
        _ => true,
    }
}

/// The test directory given back to this process's user after a run as
/// the unprivileged one (git refuses to work in another user's repository).
pub(crate) fn give_back(env: &TestEnv, who: Who) {
    if who == Who::Nobody && unsafe { libc::getuid() } == 0 {
        let owned =
            Command::new("chown").args(["-R", "0:0", &env.root().display().to_string()]).status().expect("chown");
        assert!(owned.success());
    }
}

/// `cmd` (a `retry-run` command of `env`) as `who` under `mode`: as the
/// unprivileged user, the whole test directory is given to that user
/// first, and `/usr/bin` comes first on `PATH`.
pub(crate) fn as_who(env: &TestEnv, mut cmd: Command, mode: Mode, who: Who) -> Command {
    if mode == Mode::Fallback {
        cmd.env("RETRY_RUN_BWRAP", "");
    }
    if who == Who::Root || unsafe { libc::getuid() } != 0 {
        return cmd;
    }
    let owned = Command::new("chown")
        .args(["-R", &format!("{NOBODY}:{NOBODY}"), &env.root().display().to_string()])
        .status()
        .expect("chown");
    assert!(owned.success());
    let mut out = Command::new("setpriv");
    out.args([format!("--reuid={NOBODY}"), format!("--regid={NOBODY}"), "--clear-groups".into(), "--".into()]);
    out.arg(cmd.get_program()).args(cmd.get_args());
    out.env_clear();
    for (k, v) in cmd.get_envs() {
        if let Some(v) = v {
            out.env(k, v);
        }
    }
    let path = cmd.get_envs().find(|(k, _)| *k == "PATH").and_then(|(_, v)| v).map(OsString::from).unwrap_or_default();
    let mut with_usr = OsString::from("/usr/bin:/bin:");
    with_usr.push(path);
    out.env("PATH", with_usr);
    if let Some(dir) = cmd.get_current_dir() {
        out.current_dir(dir);
    }
    out
}

/// Runs as the unprivileged user take turns: in the fallback its
/// `RLIMIT_NPROC` (`max_processes`) counts every process of that user, the
/// other tests' too, so a test that holds it to a small number (a fork
/// burst under `max_processes = 50`) runs alone, the others side by side.
static NOBODY_RUNS: RwLock<()> = RwLock::new(());

/// The turn of a test that runs as `who`, held until dropped (none for
/// [`Who::Root`]): alone when `alone`.
pub(crate) enum Turn {
    Unneeded,
    Shared(#[allow(dead_code)] RwLockReadGuard<'static, ()>),
    Alone(#[allow(dead_code)] RwLockWriteGuard<'static, ()>),
}

pub(crate) fn turn(who: Who, alone: bool) -> Turn {
    if who == Who::Root || unsafe { libc::getuid() } != 0 {
        return Turn::Unneeded;
    }
    // A test that failed in its turn leaves the lock poisoned: the others
    // still take theirs.
    if alone {
        Turn::Alone(NOBODY_RUNS.write().unwrap_or_else(|e| e.into_inner()))
    } else {
        Turn::Shared(NOBODY_RUNS.read().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Whether a fork burst held by a small `max_processes` can be tried under
/// `mode` here; says why not. In the fallback the limit is the kernel's
/// `RLIMIT_NPROC` (for root, a pids cgroup), which counts every process of
/// the user: where the tests do not run as root, that user is the tests'
/// own, whose harness, other tests and other programs count too, and the
/// agent might not start at all. As root, the unprivileged user's runs
/// take [`turn`]s.
pub(crate) fn can_burst(mode: Mode) -> bool {
    if mode == Mode::Fallback && unsafe { libc::getuid() } != 0 {
        eprintln!("SKIPPED: in the fallback the process limit counts every process of the user the tests run as");
        return false;
    }
    true
}
