//! The command line `run` starts each agent and check process with
//! ([`Confinement::argv`]): where the supervisor's executable is installed
//! beside `retry-run`, that executable with the outer process's line as
//! one JSON object (`retry-run-supervisor --outer LINE -- CMD...`), which
//! spares each process a start of `retry-run` itself and its command-line
//! parser; else `retry-run sandbox` with the same as flags.

use std::path::{Path, PathBuf};

use super::exec::{self, Confined};
use super::{Confinement, Effective, Layers, Limits};

impl Confinement {
    /// The command line to start `argv` with; `log` is where the sandbox
    /// writes the connections it saw and the limits hit. Pure.
    pub fn argv(&self, argv: Vec<String>, log: Option<&Path>) -> Vec<String> {
        match (self.effective.layers(), &self.tmpdir) {
            (Some(layers), Some(t)) => {
                wrap(&Wrap { layers, c: self, tmpdir: t, log, refuse_direct: false, observe: false }, &argv)
            }
            _ => argv,
        }
    }

    /// [`Confinement::argv`] for a check: in detect mode, its connections,
    /// sockets and servers are observed as the agent's are (`--observe`,
    /// judged against the check's own network list, in `policy.network`;
    /// see [`super::observe`]): a check runs code the agent wrote. Pure.
    pub fn check_argv(&self, argv: Vec<String>, log: Option<&Path>) -> Vec<String> {
        let observe = self.effective == Effective::Detect;
        match (self.effective.layers(), &self.tmpdir) {
            (Some(layers), Some(t)) => {
                wrap(&Wrap { layers, c: self, tmpdir: t, log, refuse_direct: false, observe }, &argv)
            }
            _ => argv,
        }
    }

    /// [`Confinement::argv`] for the agent: under namespaces, a direct
    /// connection to a port the machine listens on is recorded as refused
    /// (`--refuse-direct`; see [`super::proxy::refuse_direct`]). Only the agent:
    /// a check that starts a server of its own on such a port inside must
    /// find it free. In detect mode, its connections and sockets are
    /// observed (`--observe`, judged against the network list; see
    /// [`super::observe`]). Pure.
    pub fn agent_argv(&self, argv: Vec<String>, log: Option<&Path>) -> Vec<String> {
        let refuse_direct = self.effective == Effective::Namespaces;
        let observe = self.effective == Effective::Detect;
        match (self.effective.layers(), &self.tmpdir) {
            (Some(layers), Some(t)) => wrap(&Wrap { layers, c: self, tmpdir: t, log, refuse_direct, observe }, &argv),
            _ => argv,
        }
    }
}

/// What [`wrap`] needs: the layers, the confinement, the process's TMPDIR,
/// where the sandbox logs connections and limits hit, whether a direct
/// connection to a port the machine listens on is recorded as refused (the
/// agent's, under namespaces), and whether connections and sockets are
/// observed (the agent's and the checks', in detect mode).
pub struct Wrap<'a> {
    pub layers: Layers,
    pub c: &'a Confinement,
    pub tmpdir: &'a Path,
    pub log: Option<&'a Path>,
    pub refuse_direct: bool,
    pub observe: bool,
}

/// The command line that runs `argv` confined: the supervisor's
/// executable with the same as one JSON line where it is installed
/// ([`outer`]), else `exe sandbox --reap --layers L --git read-only
/// --tmpdir T --writable P... --deny-read H... --protect G... --network
/// N... -- argv...`. Pure.
pub fn wrap(w: &Wrap<'_>, argv: &[String]) -> Vec<String> {
    if let Some(supervisor) = &w.c.supervisor {
        return exec::outer_argv(supervisor, &outer(w, argv));
    }
    let (c, policy) = (w.c, &w.c.policy);
    let layers = match w.layers {
        Layers::Namespaces => "namespaces",
        Layers::Landlock => "landlock",
        Layers::None => "none",
    };
    let mut out = vec![c.exe.display().to_string(), "sandbox".into()];
    if w.refuse_direct {
        out.push("--refuse-direct".into());
    }
    if w.observe {
        out.push("--observe".into());
    }
    out.extend(["--reap", "--layers", layers, "--git", "read-only", "--tmpdir"].map(String::from));
    out.push(w.tmpdir.display().to_string());
    let mut flag = |name: &str, value: String| {
        out.push(name.into());
        out.push(value);
    };
    if let Some(log) = w.log {
        flag("--log", log.display().to_string());
    }
    if w.layers != Layers::None {
        for p in &policy.writable {
            flag("--writable", p.path.display().to_string());
        }
        for h in &policy.hidden {
            flag("--deny-read", h.display().to_string());
        }
        for p in &policy.protected {
            flag("--protect", p.display().to_string());
        }
        for (from, at) in &policy.shared {
            flag("--share-from", from.display().to_string());
            flag("--share-at", at.display().to_string());
        }
        for k in &c.keep {
            flag("--keep", k.display().to_string());
        }
        for n in &policy.network {
            flag("--network", n.clone());
        }
        flag("--max-processes", c.limits.processes.to_string());
        flag("--max-file-size", c.limits.file_size.to_string());
        // The run looked for the secrets once; every confined process of
        // it takes that list as it is instead of looking again, and, with
        // git read-only, the repository's paths from --keep instead of
        // looking the repository up.
        out.push("--deny-read-complete".into());
    }
    if w.layers == Layers::None && w.observe && !c.host_network {
        // What the observed connections are judged against.
        for n in &policy.network {
            out.extend(["--network".to_string(), n.clone()]);
        }
    }
    if c.host_network {
        out.push("--host-network".into());
    }
    if c.unix_sockets {
        out.push("--unix-sockets".into());
    }
    out.push("--".into());
    out.extend(argv.iter().cloned());
    out
}

/// What [`wrap`]'s flag line says, as the outer process's line for the
/// supervisor's executable: the same paths, rules and limits, field for
/// field, as `retry-run sandbox` would read them from that line. Pure.
fn outer(w: &Wrap<'_>, argv: &[String]) -> Confined {
    let (c, policy) = (w.c, &w.c.policy);
    let confined = w.layers != Layers::None;
    let paths = |v: &[PathBuf]| if confined { v.to_vec() } else { Vec::new() };
    Confined {
        layers: w.layers,
        writable: if confined {
            policy.writable.iter().map(|p| p.path.display().to_string()).collect()
        } else {
            Vec::new()
        },
        deny_read: if confined { policy.hidden.iter().map(|h| h.display().to_string()).collect() } else { Vec::new() },
        protect: paths(&policy.protected),
        shared: if confined { policy.shared.clone() } else { Vec::new() },
        keep: paths(&c.keep),
        network: if confined || w.observe { policy.network.clone() } else { Vec::new() },
        host_network: c.host_network,
        unix_sockets: c.unix_sockets,
        log: w.log.map(Path::to_path_buf),
        limits: if confined { c.limits } else { Limits::default() },
        tmpdir: Some(w.tmpdir.to_path_buf()),
        reap: true,
        refuse_direct: w.refuse_direct,
        observe: w.observe,
        deny_read_complete: confined,
        found: c.found.clone(),
        argv: argv.to_vec(),
        ..Confined::default()
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::*;
    use crate::{Policy, Writable};

    fn confinement(supervisor: Option<&str>) -> Confinement {
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
            supervisor: supervisor.map(PathBuf::from),
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

    /// Where the supervisor is installed, `run` starts it with the outer
    /// process's line: read back, it is what the flag line says.
    #[test]
    fn the_supervisors_outer_line_says_what_the_flag_line_says() {
        let flags = confinement(None).agent_argv(vec!["sh".into(), "-c".into(), "x".into()], Some(Path::new("/l")));
        assert_eq!(&flags[..3], ["/bin/retry-run", "sandbox", "--refuse-direct"]);
        let line = flags.join(" ");
        for part in [
            "--writable /w",
            "--deny-read /h/.ssh",
            "--protect /w/.git",
            "--share-from /r/node_modules --share-at /w/node_modules",
            "--keep /tmp/repo",
            "--network pypi.org",
            "--max-processes 9 --max-file-size 4096",
            "--deny-read-complete",
            "--unix-sockets",
            "--log /l",
        ] {
            assert!(line.contains(part), "{part}: {line}");
        }
        let mut c = confinement(Some("/bin/retry-run-supervisor"));
        // What run found once for all its processes goes in the line.
        c.found = crate::Found {
            bwrap: Some("/usr/bin/bwrap".into()),
            pids_cgroup: Some("/sys/fs/cgroup/pids/x".into()),
            starter_is_init: true,
        };
        let outer = c.agent_argv(vec!["sh".into(), "-c".into(), "x".into()], Some(Path::new("/l")));
        assert_eq!(outer[0], "/bin/retry-run-supervisor");
        assert_eq!(outer[1], "--outer");
        assert_eq!(&outer[3..], ["--", "sh", "-c", "x"]);
        let words: Vec<OsString> = outer[1..].iter().map(OsString::from).collect();
        let read = crate::supervisor::read_outer(&words, "/w".into()).expect("read back");
        assert_eq!(read.layers, Layers::Namespaces);
        assert_eq!(read.writable, ["/w"]);
        assert_eq!(read.deny_read, ["/h/.ssh"]);
        assert_eq!(read.protect, [PathBuf::from("/w/.git")]);
        assert_eq!(read.shared, [(PathBuf::from("/r/node_modules"), PathBuf::from("/w/node_modules"))]);
        assert_eq!(read.keep, [PathBuf::from("/tmp/repo")]);
        assert_eq!(read.network, ["pypi.org"]);
        assert_eq!(read.limits, Limits { processes: 9, file_size: 4096 });
        assert_eq!(read.tmpdir.as_deref(), Some(Path::new("/tmp/t")));
        assert_eq!(read.log.as_deref(), Some(Path::new("/l")));
        assert!(read.reap && read.refuse_direct && read.deny_read_complete && read.unix_sockets && !read.host_network);
        assert!(read.git.is_empty() && read.refuse_ports.is_empty() && !read.print_bwrap);
        assert_eq!(read.argv, ["sh", "-c", "x"]);
        assert_eq!(read.dir, Path::new("/w"));
        assert_eq!(read.found, c.found);
        // A check's line: no direct connections answered; detect mode:
        // nothing confined, the TMPDIR and the log only.
        let check = c.argv(vec!["true".into()], None);
        let words: Vec<OsString> = check[1..].iter().map(OsString::from).collect();
        assert!(!crate::supervisor::read_outer(&words, "/w".into()).expect("read").refuse_direct);
        let detect = Confinement { effective: Effective::Detect, ..c.clone() };
        let line = detect.agent_argv(vec!["true".into()], Some(Path::new("/l")));
        let words: Vec<OsString> = line[1..].iter().map(OsString::from).collect();
        let read = crate::supervisor::read_outer(&words, "/w".into()).expect("read");
        assert!(read.layers == Layers::None && read.writable.is_empty() && read.keep.is_empty() && !read.refuse_direct);
        assert!(read.reap && !read.deny_read_complete && read.limits == Limits::default());
        // Its agent observed, judged against the network list; its checks
        // too, against theirs; the setup and the verifier not.
        assert!(read.observe && read.network == ["pypi.org"], "{read:?}");
        let mut check = detect.clone();
        check.policy.network = vec!["127.0.0.1:8080".into()];
        let argv = check.check_argv(vec!["true".into()], Some(Path::new("/l")));
        let words: Vec<OsString> = argv[1..].iter().map(OsString::from).collect();
        let read = crate::supervisor::read_outer(&words, "/w".into()).expect("read");
        assert!(read.observe && read.network == ["127.0.0.1:8080"] && !read.refuse_direct, "{read:?}");
        let setup = detect.argv(vec!["true".into()], Some(Path::new("/l")));
        let words: Vec<OsString> = setup[1..].iter().map(OsString::from).collect();
        let read = crate::supervisor::read_outer(&words, "/w".into()).expect("read");
        assert!(!read.observe && read.network.is_empty(), "{read:?}");
        let flags = Confinement { supervisor: None, ..detect.clone() }.agent_argv(vec!["true".into()], None);
        assert!(
            flags.join(" ").contains("--observe --reap --layers none")
                && flags.join(" ").contains("--network pypi.org")
        );
        assert_eq!(Confinement { effective: Effective::Off, ..c }.argv(vec!["true".into()], None), ["true"]);
    }

    #[test]
    fn a_line_run_did_not_write_is_refused() {
        let words = |w: &[&str]| -> Vec<OsString> { w.iter().map(OsString::from).collect() };
        for refused in [
            &["--outer", "{}", "--", "true"][..],
            &["--outer", "not json", "--", "true"],
            &["--outer", r#"{"layers":"namespaces"}"#, "true"],
            &["--inner", "{}", "--", "true"],
        ] {
            assert!(crate::supervisor::read_outer(&words(refused), "/w".into()).is_none(), "{refused:?}");
        }
    }
}
