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

use std::path::{Path, PathBuf};

use crate::Layers;
use crate::layers::namespaces;
use crate::request::Request;
use crate::sys::process::not_dumpable;
use bubblewrap::outer;
use dirs::private_tmpdir;
use landlock_only::landlock_only;
use log::open_log;
use start::{finish, start_and_wait, unconfined};

pub(crate) mod allowed;
mod bubblewrap;
mod dirs;
mod error;
mod landlock_only;
pub(crate) mod log;
pub(crate) mod start;
pub mod visible;

pub use bubblewrap::bubblewrap_json;
pub use dirs::{left_behind, maker_of};
pub use error::{ENVIRONMENT, ExecError, USAGE};

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

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::bubblewrap::own_executables;
    use crate::layers::landlock::Net;
    use crate::layers::{landlock, seccomp};
    use crate::supervisor::line::{SUPERVISOR, supervisor_for};
    use crate::sys::probe::{DENIED, REFUSED, assert_seen, child, rerun, try_all};
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
