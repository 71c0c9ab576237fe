//! How the record says a task and its processes were confined: the
//! `sandbox` field of `TaskStarted` ([`SandboxPlan`]) and of
//! `AgentStarted`, `CheckFinished` and `VerifierFinished` ([`ConfinedRecord`]).
//! Pure types; the sandbox builds them (`Confinement::record`), readers
//! read them. Modes are the words the config and the sandbox write
//! (`auto`, `namespaces`, `landlock`, `detect`, `off`), kept as text so
//! that a log naming a mode this version does not know still reads.
//!
//! A key that older versions did not write is an `Option` left out when
//! absent, so that their logs read back to the same bytes; a key always
//! written, even as `null`, is a plain field.

use std::path::Path;

use crate::proxy;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The word a mode is written as: what serde writes for it (`Effective`
/// and `SandboxMode` are lowercase unit variants), so that the record and
/// the config spell it the same; empty for a value that is not a word.
pub fn word<T: Serialize>(mode: &T) -> String {
    match serde_json::to_value(mode) {
        Ok(serde_json::Value::String(w)) => w,
        _ => String::new(),
    }
}

/// `TaskStarted.sandbox`: the confinement the run asked for and got.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SandboxPlan {
    /// `sandbox.mode` of the config.
    #[serde(default)]
    pub requested: String,
    /// The mode in force.
    #[serde(default)]
    pub mode: String,
    /// The kernel's Landlock ABI (0: none).
    #[serde(default)]
    pub landlock_abi: u8,
    /// Why the mode in force is weaker than asked, or what it lacks.
    #[serde(default)]
    pub note: Option<String>,
    /// What the config runs without confinement, as warnings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unconfined: Option<Vec<String>>,
    /// The model servers let through the proxy for the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_endpoints: Option<Vec<ModelEndpoint>>,
}

/// One model server, as a variable named it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ModelEndpoint {
    /// The variable (`OPENAI_BASE_URL`).
    #[serde(default)]
    pub var: String,
    /// `host:port`.
    #[serde(default)]
    pub host_port: String,
}

/// The `sandbox` of a confined process (the agent, a check, the
/// verifier): its mode, what it could write, and, when confined, the
/// layers around it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ConfinedRecord {
    #[serde(default)]
    pub mode: String,
    #[serde(default)]
    pub landlock_abi: u8,
    /// The writable paths (none when not confined).
    #[serde(default)]
    pub writable: Vec<String>,
    /// Its private TMPDIR.
    #[serde(default)]
    pub tmpdir: Option<String>,
    /// ConfinedRecord only: the layers around it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layers: Option<LayersRecord>,
    /// ConfinedRecord only, when some: the secrets it may not read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hidden: Option<Vec<String>>,
    /// retry-run's variables changed for it, when some.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<EnvChanges>,
}

/// The layers that confine a process.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct LayersRecord {
    /// The namespaces it was given (none under Landlock alone).
    #[serde(default)]
    pub namespaces: Vec<String>,
    #[serde(default)]
    pub landlock_abi: u8,
    /// The sockets seccomp refuses (`udp`, `raw`, `unix`).
    #[serde(default)]
    pub seccomp_denies: Vec<String>,
    #[serde(default)]
    pub network: NetworkRecord,
    #[serde(default)]
    pub max_processes: u64,
    #[serde(default)]
    pub max_file_size: u64,
}

/// What a confined process may reach: the machine's network (written
/// `"host"`) or the hosts the proxy lets through (a list).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NetworkRecord {
    Host,
    Proxy(Vec<String>),
}

impl Default for NetworkRecord {
    fn default() -> Self {
        NetworkRecord::Proxy(Vec::new())
    }
}

impl Serialize for NetworkRecord {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            NetworkRecord::Host => s.serialize_str("host"),
            NetworkRecord::Proxy(hosts) => hosts.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for NetworkRecord {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Written {
            Word(String),
            Hosts(Vec<String>),
        }
        match Written::deserialize(d)? {
            Written::Word(w) if w == "host" => Ok(NetworkRecord::Host),
            Written::Word(w) => Err(serde::de::Error::custom(format!("network {w:?}: `host` or a list of hosts"))),
            Written::Hosts(h) => Ok(NetworkRecord::Proxy(h)),
        }
    }
}

/// retry-run's variables as a confined process gets them: pointed away
/// from the user's checkout, dropped, or hidden as credentials (names).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EnvChanges {
    #[serde(default)]
    pub rewritten: Vec<String>,
    #[serde(default)]
    pub dropped: Vec<String>,
    #[serde(default)]
    pub credentials: Vec<String>,
}

/// At most this many refused hosts are named in the record.
pub const REFUSED_HOSTS_CAP: usize = 50;

/// The hosts (`host:port`) the proxy refused, in the order of the
/// sandbox's log, each once, the first [`REFUSED_HOSTS_CAP`].
pub fn refused_hosts(log: &Path) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in proxy::read_log(log).into_iter().filter(|c| !c.allowed) {
        if out.len() >= REFUSED_HOSTS_CAP {
            break;
        }
        let h = format!("{}:{}", c.host, c.port);
        if !out.contains(&h) {
            out.push(h);
        }
    }
    out
}

/// A limit a confined command hit, from the sandbox's log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimitHit {
    /// `processes`, `file_size`, `leftovers`, `connections_logged` or
    /// `connections_open`.
    pub limit: String,
    pub max: u64,
    /// How many processes were refused (`processes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<u64>,
}

impl LimitHit {
    /// In words, for the record and the report.
    pub fn describe(&self) -> String {
        match (self.limit.as_str(), self.refused) {
            ("processes", Some(n)) => format!("the process limit ({}) refused {n} new process(es)", self.max),
            ("file_size", _) => format!("the file size limit ({} bytes) ended a process", self.max),
            ("leftovers", _) => format!("{} process(es) it left running were ended", self.max),
            ("connections_logged", Some(n)) => {
                format!("the network log keeps the first {} connections; {n} more were not recorded", self.max)
            }
            ("connections_open", Some(n)) => {
                format!("the network proxy serves {} connections at once; {n} more were refused", self.max)
            }
            (other, _) => format!("the {other} limit ({})", self.max),
        }
    }
}

/// The limits hit, from the sandbox's log (other lines are connections).
pub fn limits_hit(log: &Path) -> Vec<LimitHit> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines().filter_map(|l| serde_json::from_str::<LimitHit>(l).ok()).collect()
}

/// The paths outside `worktree` that `output` says were refused
/// ("Permission denied", "Read-only file system", "Operation not
/// permitted"), as printed, first seen first. Pure.
pub fn refused_paths(output: &[String], worktree: &Path) -> Vec<String> {
    const SIGNS: [&str; 4] = ["Permission denied", "Operation not permitted", "Read-only file system", "EACCES"];
    let wt = worktree.display().to_string();
    let mut out: Vec<String> = Vec::new();
    for line in output {
        if !SIGNS.iter().any(|s| line.contains(s)) {
            continue;
        }
        for word in line.split(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | '`' | ',' | '(' | ')')) {
            let word = word.trim_end_matches(':');
            if word.starts_with('/') && word.len() > 1 && !word.starts_with(&wt) && !out.iter().any(|o| o == word) {
                out.push(word.to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_confined_process_writes_the_keys_it_has_and_null_for_no_tmpdir() {
        let off = ConfinedRecord { mode: "off".into(), ..ConfinedRecord::default() };
        assert_eq!(
            serde_json::to_value(&off).ok(),
            Some(json!({"mode": "off", "landlock_abi": 0, "writable": [], "tmpdir": null}))
        );
        let layers = |network| LayersRecord { network, ..LayersRecord::default() };
        assert_eq!(
            serde_json::to_value(layers(NetworkRecord::Host)).ok().map(|v| v["network"].clone()),
            Some(json!("host"))
        );
        let proxy = layers(NetworkRecord::Proxy(vec!["pypi.org".into()]));
        let v = serde_json::to_value(&proxy).unwrap_or_default();
        assert_eq!(v["network"], json!(["pypi.org"]));
        assert_eq!(serde_json::from_value::<LayersRecord>(v).ok(), Some(proxy));
        assert!(serde_json::from_value::<NetworkRecord>(json!("everywhere")).is_err());
    }

    #[test]
    fn a_plan_of_an_older_version_reads_back_without_the_keys_it_lacked() {
        let old = json!({"landlock_abi": 7, "mode": "landlock", "note": null, "requested": "auto"});
        let plan: SandboxPlan = serde_json::from_value(old.clone()).unwrap_or_default();
        assert_eq!((plan.unconfined.as_ref(), plan.mode.as_str()), (None, "landlock"));
        assert_eq!(serde_json::to_value(&plan).ok(), Some(old));
    }

    #[test]
    fn refused_paths_outside_the_worktree() {
        let out = vec![
            "sh: 1: cannot create /home/u/notes.txt: Permission denied".to_string(),
            "touch: cannot touch '/w/ok': Permission denied".to_string(),
            "OSError: [Errno 13] Permission denied: '/home/u/.cache/x'".to_string(),
            "all fine".to_string(),
        ];
        assert_eq!(refused_paths(&out, Path::new("/w")), ["/home/u/notes.txt", "/home/u/.cache/x"]);
    }
}
