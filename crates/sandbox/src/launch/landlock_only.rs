//! Without namespaces: one process puts the proxy on a TCP port, Landlock,
//! seccomp and the limits in force in the command's process only.

use crate::layers::landlock::{self};
use crate::request::Request;
use crate::{layers::limits, layers::seccomp, proxy};
use std::path::Path;

use super::ExecError;
use super::allowed::{hidden, rules, writable};
use super::dirs::private_tmpdir;
use super::log::{log_limits, open_log};
use super::start::{command, finish, start_and_wait};
use crate::sys::process::confine_on_exec;
use crate::sys::process::{close_inherited, enter_on_exec, install_on_exec, is_root, not_dumpable, own_session};

/// Without namespaces, the proxy on a TCP port of this machine (none with
/// the host's network), and the TCP ports Landlock lets the command reach:
/// the proxy's and the allowed loopback ports.
pub(super) fn tcp_proxy(
    c: &Request,
    rules: Vec<proxy::HostRule>,
    run_dir: &Path,
) -> Result<(Option<proxy::Proxy>, landlock::Net), ExecError> {
    if c.network.host {
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
pub(super) fn landlock_only(c: &Request, dir: &Path, tmpdir: &Path, home: Option<&Path>) -> Result<i32, ExecError> {
    if landlock::abi() == 0 {
        return Err(ExecError::NoLandlock { kernel: landlock::kernel() });
    }
    not_dumpable();
    let rules = rules(c)?;
    let writable = writable(c, dir, Some(tmpdir), home)?;
    let mut hidden = hidden(c, home);
    // Without a private /dev/shm, the machine's is closed to the command,
    // unless it was made writable.
    let shm = Path::new(crate::SHARED_MEMORY);
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
    if let Err(e) = crate::process_limit(root, c.limits.processes, made) {
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
    confine_on_exec(&mut cmd, c.limits, ruleset);
    own_session(&mut cmd);
    let filter = seccomp::filter(seccomp::Deny {
        inet: !c.network.host,
        unix: !c.network.unix_sockets,
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
