//! Agent presets: how to run each coding agent CLI non-interactively, what
//! it may write besides the worktree, what it leaves in the worktree that is
//! not part of the change, and how to read its report. Presets are data
//! (`presets/<name>.toml`, carried in the binary); adding an agent is one
//! data file, plus an output reader in [`output`] when it has its own format.
//! Pure: nothing here runs a process or touches a file.
//!
//! A preset never chooses a model or an API endpoint: those stay the user's
//! (the agent's own config and environment, or `[agent] args`).

pub(crate) mod mcp;
pub(crate) mod output;
pub mod transient;

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One preset, as its data file says.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Preset {
    pub name: String,
    pub description: String,
    /// The program looked for on `PATH`.
    pub program: String,
    /// How to install the program (a command line), said when it is not
    /// on the agent's `PATH`.
    #[serde(default)]
    pub install: String,
    /// The non-interactive command line; placeholders as in
    /// `agent.command`, plus `{prompt}` (the prompt's text) and `{tmpdir}`.
    pub command: Vec<String>,
    /// The prompt is written to the agent's stdin.
    pub stdin: bool,
    /// Arguments that make the program print its version.
    pub version: Vec<String>,
    /// How to read its output: `claude-json`, or `text` (its last lines).
    pub output: String,
    /// Directories it must be able to write (added to `sandbox.writable`).
    pub state_dirs: Vec<String>,
    /// Files it must be able to write, with the content a new one starts with.
    pub state_files: BTreeMap<String, String>,
    /// Its leftovers: files it may leave in the worktree that are not part
    /// of the change (`ignore` is read as this key too, as in the config).
    #[serde(alias = "ignore")]
    pub leftovers: Vec<String>,
    /// Environment for the agent: update checks, telemetry and prompts off.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Variables that look like credentials that the agent itself needs
    /// (added to `agent.env_pass`).
    #[serde(default)]
    pub env_pass: Vec<String>,
    /// The hosts its CLI reaches its model on by default, and those its own
    /// login needs (a token's refresh): the network it gets through
    /// retry-run's proxy. Bare host names.
    #[serde(default)]
    pub hosts: Vec<String>,
    /// Hosts its CLI contacts for update checks and telemetry, which stay
    /// refused: named so that the docs and `agents` say what is cut off.
    #[serde(default)]
    pub refused_hosts: Vec<String>,
    /// The files holding its own login (`~` is the home directory): the
    /// credential files it may read when others are hidden.
    #[serde(default)]
    pub credential_files: Vec<String>,
    /// How its agent is given the self-check MCP server ([`mcp::wiring`]):
    /// the preset's own name, or none for an agent without MCP.
    #[serde(default)]
    pub mcp: Option<String>,
    /// What its CLI prints when its model provider fails it transiently,
    /// per kind ([`transient::KINDS`]): read instead of the common forms.
    #[serde(default)]
    pub transient: transient::Forms,
    /// Its CLI exits 0 when it gives up on its provider (Aider).
    #[serde(default)]
    pub transient_exit_0: bool,
}

impl Preset {
    /// The forms its transient failures are recognised by.
    pub fn transient_forms(&self) -> transient::Forms {
        if self.transient.is_empty() { transient::common_forms() } else { self.transient.clone() }
    }
}

const SOURCES: &[(&str, &str)] = &[
    ("claude-code", include_str!("presets/claude-code.toml")),
    ("codex", include_str!("presets/codex.toml")),
    ("aider", include_str!("presets/aider.toml")),
    ("gemini", include_str!("presets/gemini.toml")),
    ("opencode", include_str!("presets/opencode.toml")),
];

/// The names of every preset.
pub fn names() -> Vec<&'static str> {
    SOURCES.iter().map(|(n, _)| *n).collect()
}

/// The preset called `name`; `Err` names the known ones.
pub fn preset(name: &str) -> Result<Preset, PresetError> {
    let (_, text) = SOURCES
        .iter()
        .find(|(n, _)| *n == name)
        .ok_or_else(|| PresetError::Unknown { name: name.to_string(), known: names().join(", ") })?;
    toml::from_str(text).map_err(|source| PresetError::Malformed { name: name.to_string(), source })
}

/// A preset that cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum PresetError {
    #[error("unknown agent preset {name:?}: use one of {known}")]
    Unknown { name: String, known: String },
    /// A preset built into retry-run that does not parse (a bug of
    /// retry-run's, caught by its tests).
    #[error("the built-in preset {name} is malformed: {source}")]
    Malformed { name: String, source: toml::de::Error },
}

/// The command line of `p` with the user's `args` after it.
pub fn command_line(p: &Preset, args: &[String]) -> Vec<String> {
    p.command.iter().chain(args.iter()).cloned().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_parses_and_is_named_as_its_file() {
        for name in names() {
            let p = preset(name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(p.name, name);
            assert_eq!(p.command.first(), Some(&p.program), "{name}: the command starts with the program");
            assert!(p.install.contains(" install "), "{name}: how to install it: {:?}", p.install);
            assert!(
                ["claude-json", "codex-jsonl", "gemini-json", "opencode-jsonl", "aider-text", "text"]
                    .contains(&p.output.as_str()),
                "{name}: reader {}",
                p.output
            );
            assert!(!p.state_dirs.is_empty(), "{name}: a state directory");
            let prompt_in = p.stdin || p.command.iter().any(|a| a.contains("{prompt"));
            assert!(prompt_in, "{name}: the prompt reaches it");
        }
        assert!(preset("cursor").unwrap_err().to_string().contains("claude-code, codex"));
    }

    #[test]
    fn every_preset_names_the_hosts_it_reaches_and_the_files_of_its_login() {
        let bare = |h: &str| {
            h.contains('.') && h.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-')
        };
        for name in names() {
            let p = preset(name).unwrap_or_else(|e| panic!("{e}"));
            assert!(!p.hosts.is_empty(), "{name}: the hosts of its model API");
            for h in p.hosts.iter().chain(&p.refused_hosts) {
                assert!(bare(h), "{name}: {h:?} is a host name, no scheme, port or path");
            }
            assert!(!p.hosts.iter().any(|h| p.refused_hosts.contains(h)), "{name}: a host both reached and refused");
            assert!(!p.credential_files.is_empty(), "{name}: the files of its login");
            for f in &p.credential_files {
                assert!(f.starts_with("~/") && !f.ends_with('/'), "{name}: {f:?}, a file under the home directory");
            }
            for (f, seed) in &p.state_files {
                if f.ends_with(".json") {
                    let v: Result<serde_json::Value, _> = serde_json::from_str(seed);
                    assert!(v.is_ok_and(|v| v.is_object()), "{name}: {f} starts as a JSON object");
                }
            }
        }
    }

    #[test]
    fn a_preset_without_hosts_or_login_reads_as_none() {
        let text = r#"name = "x"
description = "x"
program = "x"
command = ["x"]
stdin = true
version = ["--version"]
output = "text"
state_dirs = ["~/.x"]
state_files = {}
leftovers = []
"#;
        let p: Preset = toml::from_str(text).expect("parses");
        assert!(p.hosts.is_empty() && p.refused_hosts.is_empty() && p.credential_files.is_empty());
    }

    #[test]
    fn user_args_come_after_the_preset() {
        let p = preset("claude-code").expect("preset");
        let line = command_line(&p, &["--model".into(), "sonnet".into()]);
        assert_eq!(&line[line.len() - 2..], ["--model", "sonnet"]);
        assert_eq!(line[0], "claude");
    }
}
