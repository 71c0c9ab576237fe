//! How an attempt's agent and checks are run: the mode in force, the
//! policy, and what `run` changes of their environment.

use std::path::PathBuf;

use crate::policy::env::EnvChange;
use crate::policy::reported::{self as recorded, ConfinedRecord};
use crate::{Effective, Found, Limits, Policy, layers::namespaces};

/// How an attempt's agent and checks are run: the mode in force and, when
/// confined, the policy, its private TMPDIR, and the program that enforces
/// it (this executable's `sandbox` command).
#[derive(Debug, Clone)]
pub struct Confinement {
    pub effective: Effective,
    /// The kernel's Landlock ABI (0: none).
    pub abi: u8,
    pub policy: Policy,
    pub tmpdir: Option<PathBuf>,
    pub exe: PathBuf,
    /// The words that start the supervisor ([`exec::supervisor_for`]):
    /// `run` starts each confined process with them ([`Confinement::argv`]).
    pub supervisor: Vec<String>,
    /// What each outer process would otherwise look up, found once for
    /// them all (passed in the supervisor's line).
    pub found: Found,
    /// retry-run's variables that pointed into the user's checkout, as the
    /// confined processes get them ([`away_from_checkout`]).
    pub away: Vec<EnvChange>,
    /// retry-run's variables that look like credentials, which the confined
    /// processes do not get ([`credentials`]).
    pub hidden: Vec<String>,
    /// More variables they get (the git quarantine).
    pub extra_env: Vec<(String, String)>,
    /// Paths beneath `/tmp` or `/run` that stay readable in the namespaces
    /// (the repository when it lives there).
    pub keep: Vec<PathBuf>,
    /// The machine's network instead of the proxy (`network_mode = "host"`).
    pub host_network: bool,
    /// Named UNIX sockets allowed (`sandbox.unix_sockets`).
    pub unix_sockets: bool,
    pub limits: Limits,
}

impl Confinement {
    /// The environment it adds: the private TMPDIR under its three names.
    pub fn env(&self) -> Vec<(String, String)> {
        let mut env: Vec<(String, String)> =
            self.away.iter().filter_map(|c| Some((c.name.clone(), c.value.clone()?))).collect();
        if let Some(t) = &self.tmpdir {
            env.extend(["TMPDIR", "TMP", "TEMP"].iter().map(|k| (k.to_string(), t.display().to_string())));
        }
        env.extend(self.extra_env.iter().cloned());
        env
    }

    /// The variables of retry-run's environment the confined processes do
    /// not get.
    pub fn unset(&self) -> Vec<String> {
        let mut names: Vec<String> = self.away.iter().filter(|c| c.value.is_none()).map(|c| c.name.clone()).collect();
        names.extend(self.hidden.iter().cloned());
        names
    }

    /// For the record: mode, the layers that confine each process
    /// (namespaces, Landlock ABI, seccomp, the network list), the writable
    /// and hidden paths, and the environment's changes.
    pub fn record(&self) -> ConfinedRecord {
        let confined = matches!(self.effective, Effective::Namespaces | Effective::Landlock);
        let writable: Vec<String> = if confined {
            self.policy.writable.iter().map(|w| w.path.display().to_string()).collect()
        } else {
            Vec::new()
        };
        let mut record = ConfinedRecord {
            mode: recorded::word(&self.effective),
            landlock_abi: self.abi,
            writable,
            tmpdir: self.tmpdir.as_ref().map(|t| t.display().to_string()),
            ..ConfinedRecord::default()
        };
        if confined {
            let namespaces = match self.effective {
                Effective::Namespaces => namespaces::unshared(self.host_network),
                _ => Vec::new(),
            };
            let seccomp: Vec<&str> = match (self.effective, self.host_network, self.unix_sockets) {
                (Effective::Landlock, false, false) => vec!["udp", "raw", "unix"],
                (Effective::Landlock, false, true) => vec!["udp", "raw"],
                (_, _, false) => vec!["unix"],
                _ => Vec::new(),
            };
            record.layers = Some(recorded::LayersRecord {
                namespaces: namespaces.into_iter().map(String::from).collect(),
                landlock_abi: self.abi,
                seccomp_denies: seccomp.into_iter().map(String::from).collect(),
                network: if self.host_network {
                    recorded::NetworkRecord::Host
                } else {
                    recorded::NetworkRecord::Proxy(self.policy.network.clone())
                },
                max_processes: self.limits.processes,
                max_file_size: self.limits.file_size,
            });
            if !self.policy.hidden.is_empty() {
                record.hidden = Some(self.policy.hidden.iter().map(|h| h.display().to_string()).collect());
            }
        }
        if !self.away.is_empty() || !self.hidden.is_empty() {
            let names = |dropped: bool| -> Vec<String> {
                self.away.iter().filter(|c| c.value.is_none() == dropped).map(|c| c.name.clone()).collect()
            };
            record.env = Some(recorded::EnvChanges {
                rewritten: names(false),
                dropped: names(true),
                credentials: self.hidden.clone(),
            });
        }
        record
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{GitPaths, SandboxGit, policy, quarantine_env};
    use std::path::Path;
    #[test]
    fn the_policy_and_the_environment_it_adds() {
        let git = GitPaths {
            objects: "/r/.git/objects".into(),
            admin: "/r/.git/worktrees/t".into(),
            quarantine: "/r/.git/retry-run/q".into(),
            submodule_objects: Vec::new(),
        };
        let p = policy(Path::new("/w"), Path::new("/tmp/t"), SandboxGit::Commit, &git, &["/c".into()]);
        let paths: Vec<String> = p.writable.iter().map(|w| w.path.display().to_string()).collect();
        assert_eq!(&paths[..5], ["/w", "/tmp/t", "/r/.git/retry-run/q", "/r/.git/worktrees/t", "/c"]);
        assert!(!paths.contains(&"/r/.git/objects".to_string()), "the real objects are never writable");
        assert!(paths.contains(&"/dev/null".to_string()));
        assert_eq!(
            p.protected,
            [Path::new("/w/.git"), Path::new("/r/.git/worktrees/t/gitdir"), Path::new("/r/.git/worktrees/t/commondir")]
        );
        let ro = policy(Path::new("/w"), Path::new("/tmp/t"), SandboxGit::ReadOnly, &git, &[]);
        assert!(!ro.writable.iter().any(|w| w.path.starts_with("/r/.git")));
        let c = Confinement {
            effective: Effective::Namespaces,
            abi: 7,
            policy: Policy { network: vec!["api.example.com".into()], ..ro },
            tmpdir: Some("/tmp/t".into()),
            exe: "/bin/rr".into(),
            supervisor: Vec::new(),
            found: Found::default(),
            away: Vec::new(),
            hidden: Vec::new(),
            extra_env: quarantine_env(&git),
            keep: Vec::new(),
            host_network: false,
            unix_sockets: false,
            limits: Limits::default(),
        };
        // The quarantine reaches every confined process through the
        // environment `run` gives it (what each request says: `wrap.rs`).
        assert!(c.env().contains(&("GIT_OBJECT_DIRECTORY".to_string(), "/r/.git/retry-run/q".to_string())));
        assert!(c.env().contains(&("TMPDIR".to_string(), "/tmp/t".to_string())));
        assert_eq!(c.check_argv(vec!["true".into()], None), c.argv(vec!["true".into()], None));
        let off = Confinement { effective: Effective::Off, ..c };
        assert_eq!(off.argv(vec!["true".into()], None), ["true"]);
    }
}
