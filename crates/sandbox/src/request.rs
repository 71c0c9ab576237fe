//! One confined command as one value: what to run, where, under which
//! layers, with which paths, network and limits. `run` builds it for each
//! agent and check process ([`crate::Confinement::request`]), the flags of
//! `retry-run sandbox` build it for a command typed by hand, and it
//! reaches the supervisor as one JSON object (`retry-run-supervisor
//! --request JSON`, [`crate::supervisor::line::request_line`]).
//!
//! The environment the command gets is its starter's (what `run` changes
//! of it, `run` changes on the process it starts, with the sandbox on or
//! off), with TMPDIR set to [`Request::tmpdir`] and, with a network list,
//! the proxy's variables.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::layers::{limits, namespaces};

/// One confined command. Serialized whole, it is the supervisor's line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// The command and its arguments.
    pub argv: Vec<String>,
    /// The directory it runs in and may write beneath (`.`: the one it is
    /// started in, as `run` gives it).
    pub dir: PathBuf,
    /// What confines it.
    pub layers: Layers,
    /// What it may write, read and see (absent: nothing more than the
    /// layers allow by themselves).
    #[serde(default)]
    pub paths: Paths,
    /// What it may reach (absent: nothing).
    #[serde(default)]
    pub network: Network,
    /// (Absent: the defaults of `retry-run sandbox`.)
    #[serde(default)]
    pub limits: Limits,
    /// Its TMPDIR; `None`: under namespaces the namespace's own `/tmp`,
    /// else a private directory made now and removed when it ends.
    #[serde(default)]
    pub tmpdir: Option<PathBuf>,
    /// Where the proxy appends one JSON line per connection it saw, and the
    /// sandbox one per limit the command hit.
    #[serde(default)]
    pub log: Option<PathBuf>,
    /// Wait for the command, then end every process it left behind (a
    /// double-forked daemon included), and end the way it ended: its exit
    /// code, or its signal raised again (`run`'s processes).
    #[serde(default)]
    pub reap: bool,
    /// What the starter looked up once for all the processes it starts
    /// (absent: looked up here).
    #[serde(default)]
    pub found: Found,
}

/// The paths of a [`Request`] (each absent field: none).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Paths {
    /// More paths it may write beneath, as given (`sandbox.writable`,
    /// `--writable`; see [`crate::prepare_writable`]).
    pub writable: Vec<String>,
    /// The repository's paths it may write to commit
    /// ([`crate::git_writable`]); empty when git is read-only.
    pub git: Vec<PathBuf>,
    /// More paths it may not read, as given (`--deny-read`), beside the
    /// secrets never readable ([`crate::SECRETS`]) ...
    pub deny_read: Vec<String>,
    /// ... unless this says `deny_read` is the whole list of what to hide:
    /// the starter looked for the secrets once for all its processes.
    pub deny_read_complete: bool,
    /// Paths inside the writable ones it may not change (namespaces only).
    pub protect: Vec<PathBuf>,
    /// Directories mounted read-only at a path (from, at; namespaces only).
    pub shared: Vec<(PathBuf, PathBuf)>,
    /// Paths beneath `/tmp` or `/run` that stay readable (namespaces only).
    pub keep: Vec<PathBuf>,
}

/// The network of a [`Request`] (each absent field: none, or off).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Network {
    /// The hosts it may reach through the proxy (`host`, `host:port`,
    /// `*.domain`); none: no network at all.
    pub hosts: Vec<String>,
    /// The machine's network, unconfined, instead of the proxy.
    pub host: bool,
    /// Named UNIX sockets allowed.
    pub unix_sockets: bool,
    /// Under namespaces, a direct connection to a port the machine's
    /// loopback listens on and `hosts` does not allow is recorded as
    /// refused (the agent's processes; see [`crate::proxy::refuse_direct`]).
    pub refuse_direct: bool,
    /// Without layers (detect mode): its connections and sockets are
    /// observed and logged, judged against `hosts` ([`crate::detect::observe`]).
    pub observe: bool,
}

impl Request {
    /// `argv` in `dir` under `layers`, with nothing more allowed than the
    /// layers allow by themselves and the default limits.
    pub fn new(argv: Vec<String>, dir: PathBuf, layers: Layers) -> Request {
        Request {
            argv,
            dir,
            layers,
            paths: Paths::default(),
            network: Network::default(),
            limits: Limits::default(),
            tmpdir: None,
            log: None,
            reap: false,
            found: Found::default(),
        }
    }

    /// The request as one line of JSON. Pure.
    pub fn to_json(&self) -> String {
        // Strings, numbers, booleans and enums: serialising cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// A request read back from [`Request::to_json`]'s line.
    pub fn from_json(line: &str) -> Result<Request, serde_json::Error> {
        serde_json::from_str(line)
    }
}

/// What `retry-run sandbox` puts around its command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Layers {
    /// Namespaces through bubblewrap, with Landlock and seccomp inside.
    Namespaces,
    /// Landlock (writes, reads of secrets, TCP ports) and seccomp (UDP, raw
    /// and UNIX sockets), where namespaces are refused.
    Landlock,
    /// Nothing: the command's leftovers are only ended (detect mode).
    None,
}

/// What the outer process would otherwise look up for each confined
/// process, found once by `run` ([`Found::now`]) and passed in the line of
/// every outer process it starts: bubblewrap's path and, for root, the pids
/// cgroup that `run`, and so each process it starts, is in; and whether
/// `run` is its PID namespace's init (a container's first process), which
/// adopts every orphan and reaps only what it started itself.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Found {
    pub bwrap: Option<PathBuf>,
    pub pids_cgroup: Option<PathBuf>,
    #[serde(default)]
    pub starter_is_init: bool,
}

impl Found {
    /// Looked up now, for the processes this one will start.
    pub fn now() -> Found {
        Found {
            bwrap: namespaces::program(),
            pids_cgroup: limits::own_dir_for_limit(),
            starter_is_init: std::process::id() == 1,
        }
    }
}

/// The limits a confined command runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Limits {
    /// Processes at once (`RLIMIT_NPROC`; counted in the sandbox's own
    /// user namespace when it has one).
    pub processes: u64,
    /// The largest file it may write (`RLIMIT_FSIZE`).
    pub file_size: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { processes: 4096, file_size: 20 << 30 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The line is the request, field for field.
    #[test]
    fn a_request_reads_back_as_it_was_written() {
        let mut r = Request::new(vec!["sh".into(), "-c".into(), "--help".into()], "/w".into(), Layers::Landlock);
        r.paths.writable = vec!["~/.cache/pip".into()];
        r.paths.shared = vec![("/r/node_modules".into(), "/w/node_modules".into())];
        r.network.hosts = vec!["pypi.org".into()];
        r.network.unix_sockets = true;
        r.limits = Limits { processes: 9, file_size: 4096 };
        r.tmpdir = Some("/tmp/t".into());
        r.reap = true;
        r.found.starter_is_init = true;
        assert_eq!(Request::from_json(&r.to_json()).expect("read back"), r);
        assert!(Request::from_json("{}").is_err(), "a line without the command is refused");
        let least = Request::from_json(r#"{"argv":["true"],"dir":".","layers":"none"}"#).expect("the least");
        assert_eq!(least, Request::new(vec!["true".into()], ".".into(), Layers::None));
        let unknown = r.to_json().replacen('{', "{\"print_bwrap\":true,", 1);
        assert!(Request::from_json(&unknown).is_err(), "an unknown field is refused");
    }
}
