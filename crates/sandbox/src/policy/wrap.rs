//! The command line `run` starts each agent and check process with
//! ([`Confinement::argv`]): the supervisor with the [`Request`] for it
//! (`retry-run-supervisor --request JSON`, or `retry-run supervisor` where
//! the supervisor's own executable is not installed beside `retry-run`).

use std::path::Path;

use crate::request::{Network, Paths, Request};
use crate::{Confinement, Effective, Layers, Limits};

/// Whose process a [`Request`] is for: what the sandbox does beyond the
/// policy depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Whose {
    /// The agent: under namespaces, a direct connection to a port the
    /// machine listens on is recorded as refused (see
    /// [`crate::proxy::refuse_direct`]); in detect mode, its connections
    /// and sockets are observed (judged against the network list; see
    /// [`crate::detect::observe`]).
    Agent,
    /// A check: in detect mode observed as the agent is (judged against
    /// the check's own network list, in `policy.network`): a check runs
    /// code the agent wrote. Not the direct connections: a check that
    /// starts a server of its own on such a port inside must find it free.
    Check,
    /// Anything else (the setup, the verifier): the policy alone.
    Other,
}

impl Confinement {
    /// The command line to start `argv` with; `log` is where the sandbox
    /// writes the connections it saw and the limits hit. Pure.
    pub fn argv(&self, argv: Vec<String>, log: Option<&Path>) -> Vec<String> {
        self.wrap(argv, log, Whose::Other)
    }

    /// [`Confinement::argv`] for a check (see [`Whose::Check`]). Pure.
    pub fn check_argv(&self, argv: Vec<String>, log: Option<&Path>) -> Vec<String> {
        self.wrap(argv, log, Whose::Check)
    }

    /// [`Confinement::argv`] for the agent (see [`Whose::Agent`]). Pure.
    pub fn agent_argv(&self, argv: Vec<String>, log: Option<&Path>) -> Vec<String> {
        self.wrap(argv, log, Whose::Agent)
    }

    fn wrap(&self, argv: Vec<String>, log: Option<&Path>, whose: Whose) -> Vec<String> {
        match self.request(argv, log, whose) {
            Ok(request) => crate::supervisor::line::request_line(&self.supervisor, &request),
            Err(argv) => argv,
        }
    }

    /// The request for `argv` under this confinement, or `argv` back when
    /// nothing confines it (mode `off`). Pure.
    fn request(&self, argv: Vec<String>, log: Option<&Path>, whose: Whose) -> Result<Request, Vec<String>> {
        let (Some(layers), Some(tmpdir)) = (self.effective.layers(), &self.tmpdir) else {
            return Err(argv);
        };
        let observe = self.effective == Effective::Detect && whose != Whose::Other;
        let confined = layers != Layers::None;
        let policy = &self.policy;
        let paths = if confined {
            Paths {
                writable: policy.writable.iter().map(|p| p.path.display().to_string()).collect(),
                git: Vec::new(),
                deny_read: policy.hidden.iter().map(|h| h.display().to_string()).collect(),
                // The run looked for the secrets once; every confined
                // process of it takes that list as it is.
                deny_read_complete: true,
                protect: policy.protected.clone(),
                shared: policy.shared.clone(),
                keep: self.keep.clone(),
            }
        } else {
            Paths::default()
        };
        let network = Network {
            // Without layers, what the observed connections are judged
            // against.
            hosts: if confined || observe { policy.network.clone() } else { Vec::new() },
            host: self.host_network,
            unix_sockets: self.unix_sockets,
            refuse_direct: self.effective == Effective::Namespaces && whose == Whose::Agent,
            observe,
        };
        Ok(Request {
            // The directory is the process's own: its starter sets it.
            argv,
            dir: ".".into(),
            layers,
            paths,
            network,
            limits: if confined { self.limits } else { Limits::default() },
            tmpdir: Some(tmpdir.clone()),
            log: log.map(Path::to_path_buf),
            reap: true,
            found: self.found.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;
    use std::path::PathBuf;

    use super::*;
    use crate::supervisor::line::{Line, read_line};
    use crate::{Policy, Writable};

    fn confinement() -> Confinement {
        Confinement {
            effective: Effective::Namespaces,
            abi: 7,
            policy: Policy {
                writable: vec![Writable { path: "/w".into(), why: "the worktree".into() }],
                hidden: vec!["/h/.ssh".into()],
                protected: vec!["/w/.git".into()],
                network: vec!["pypi.org".into()],
                shared: vec![("/r/node_modules".into(), "/w/node_modules".into())],
            },
            tmpdir: Some("/tmp/t".into()),
            exe: "/bin/retry-run".into(),
            supervisor: vec!["/bin/retry-run-supervisor".into()],
            found: crate::Found::default(),
            away: Vec::new(),
            hidden: Vec::new(),
            extra_env: Vec::new(),
            keep: vec!["/tmp/repo".into()],
            host_network: false,
            unix_sockets: true,
            limits: Limits { processes: 9, file_size: 4096 },
        }
    }

    /// The request a line of `run`'s carries, read back as the supervisor
    /// reads it.
    fn request_of(line: &[String], supervisor: &[String]) -> Request {
        assert_eq!(&line[..supervisor.len()], supervisor, "{line:?}");
        let words: Vec<OsString> = line[supervisor.len()..].iter().map(OsString::from).collect();
        match read_line(&words) {
            Some(Line::Outer(r)) => r,
            other => panic!("not a request: {other:?}"),
        }
    }

    /// `run` starts the supervisor with one request that says the whole
    /// policy, for the agent, a check and anything else.
    #[test]
    fn the_line_run_starts_carries_the_whole_policy_as_one_request() {
        let mut c = confinement();
        // What run found once for all its processes goes in the request.
        c.found = crate::Found {
            bwrap: Some("/usr/bin/bwrap".into()),
            pids_cgroup: Some("/sys/fs/cgroup/pids/x".into()),
            starter_is_init: true,
        };
        let line = c.agent_argv(vec!["sh".into(), "-c".into(), "x".into()], Some(Path::new("/l")));
        assert_eq!(line.len(), 3, "the supervisor, --request and one JSON object: {line:?}");
        let read = request_of(&line, &c.supervisor);
        assert_eq!(read.layers, Layers::Namespaces);
        assert_eq!(read.paths.writable, ["/w"]);
        assert_eq!(read.paths.deny_read, ["/h/.ssh"]);
        assert_eq!(read.paths.protect, [PathBuf::from("/w/.git")]);
        assert_eq!(read.paths.shared, [(PathBuf::from("/r/node_modules"), PathBuf::from("/w/node_modules"))]);
        assert_eq!(read.paths.keep, [PathBuf::from("/tmp/repo")]);
        assert!(read.paths.deny_read_complete && read.paths.git.is_empty());
        assert_eq!(read.network.hosts, ["pypi.org"]);
        assert!(read.network.refuse_direct && read.network.unix_sockets && !read.network.host);
        assert_eq!(read.limits, Limits { processes: 9, file_size: 4096 });
        assert_eq!(read.tmpdir.as_deref(), Some(Path::new("/tmp/t")));
        assert_eq!(read.log.as_deref(), Some(Path::new("/l")));
        assert!(read.reap);
        assert_eq!(read.argv, ["sh", "-c", "x"]);
        assert_eq!(read.found, c.found);
        // A check's line: no direct connections answered.
        assert!(!request_of(&c.check_argv(vec!["true".into()], None), &c.supervisor).network.refuse_direct);
        // Without the supervisor's executable: `retry-run supervisor`, the
        // same request.
        let alone = Confinement { supervisor: vec!["/bin/retry-run".into(), "supervisor".into()], ..c.clone() };
        let line = alone.agent_argv(vec!["true".into()], None);
        assert_eq!(request_of(&line, &alone.supervisor).paths, read.paths);
        // Detect mode: nothing confined, the TMPDIR and the log only.
        let detect = Confinement { effective: Effective::Detect, ..c.clone() };
        let read = request_of(&detect.agent_argv(vec!["true".into()], Some(Path::new("/l"))), &c.supervisor);
        assert!(read.layers == Layers::None && read.paths == Paths::default() && read.limits == Limits::default());
        assert!(read.reap && !read.network.refuse_direct);
        // Its agent observed, judged against the network list; its checks
        // too, against theirs; the setup and the verifier not.
        assert!(read.network.observe && read.network.hosts == ["pypi.org"], "{read:?}");
        let mut check = detect.clone();
        check.policy.network = vec!["127.0.0.1:8080".into()];
        let read = request_of(&check.check_argv(vec!["true".into()], None), &c.supervisor);
        assert!(read.network.observe && read.network.hosts == ["127.0.0.1:8080"] && !read.network.refuse_direct);
        let read = request_of(&detect.argv(vec!["true".into()], None), &c.supervisor);
        assert!(!read.network.observe && read.network.hosts.is_empty(), "{read:?}");
        assert_eq!(Confinement { effective: Effective::Off, ..c }.argv(vec!["true".into()], None), ["true"]);
    }
}
