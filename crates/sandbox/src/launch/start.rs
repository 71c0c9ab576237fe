//! The command's own process: its line and TMPDIR, its start and the
//! wait for it, and how it ended.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Command;

use super::ExecError;
use crate::proxy;
use crate::request::Request;
use crate::sys::process::{COMMAND_GROUP, become_reaper, end_leftovers, own_session, pass_signals_on, raise_again};

/// The command unconfined: no seccomp filter that refuses (it would set
/// no_new_privs and break a check's sudo), but without a terminal (the
/// kernel refuses TIOCSTI on a terminal that is not the caller's own);
/// with `observer`, under its filter (detect mode's agent).
pub(crate) fn unconfined(c: &Request, tmpdir: &Path, observer: Option<&crate::detect::observe::Observer>) -> Command {
    let mut cmd = command(c, tmpdir, None);
    own_session(&mut cmd);
    if let Some(o) = observer {
        o.install_on(&mut cmd);
    }
    cmd
}

/// The command with its TMPDIR (and the proxy's address, when it has one).
pub(crate) fn command(c: &Request, tmpdir: &Path, proxy_port: Option<u16>) -> Command {
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

/// How a process ended, from its wait status.
pub(crate) fn ended_of(status: std::process::ExitStatus) -> Ended {
    match status.signal() {
        Some(sig) => Ended::Signal(sig),
        None => Ended::Code(status.code().unwrap_or(1)),
    }
}

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    Code(i32),
    Signal(i32),
}

/// `exit N` or `signal N`, as the inner process writes it. Pure.
pub(crate) fn parse_status(s: &str) -> Option<Ended> {
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
pub(crate) fn end_as(reap: bool, ended: Ended) -> i32 {
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

pub(crate) fn finish(c: &Request, ended: Result<Ended, ExecError>) -> Result<i32, ExecError> {
    Ok(end_as(c.reap, ended?))
}

/// Starts `cmd` and waits for it; with `reap`, as the subreaper of what it
/// starts, ending every process it leaves (said on stderr and in `log`).
pub(crate) fn start_and_wait(
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
