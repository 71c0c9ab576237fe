//! How each preset's agent is given the self-check MCP server
//! (docs/mcp.md): the arguments, variables and generated files its CLI
//! reads, all in the attempt's private directory and none in the user's
//! own settings. Pure: the run writes the files and starts the agent.

use std::path::{Path, PathBuf};

use serde_json::json;

/// The server's name in the agent's settings: its tools reach the model
/// as `mcp__retry-run__run_checks` (Claude Code) and the like.
pub(crate) const SERVER: &str = "retry-run";
/// How long a tool call may take before the agent gives up on it: the
/// checks can take minutes, and the agent's own time limit still holds.
const TOOL_TIMEOUT_SECS: u64 = 3600;

/// What the agent is given.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Wiring {
    /// Inserted after the program's name.
    pub args: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Files to write first (none already there is overwritten): path and
    /// contents; removed when the agent ends.
    pub files: Vec<(PathBuf, Vec<u8>)>,
}

/// The wiring of preset `kind` for the server started by `command`, its
/// files in `dir` (the attempt's TMPDIR) or, for Gemini, in `worktree`;
/// `user` reads the user's own environment, whose settings are kept:
/// opencode's `OPENCODE_CONFIG_CONTENT` gets the server added. An unknown
/// kind gets nothing (the variable alone).
pub(crate) fn wiring(
    kind: &str,
    command: &[String],
    (dir, worktree): (&Path, &Path),
    user: &dyn Fn(&str) -> Option<String>,
) -> Wiring {
    let (program, args) = match command.split_first() {
        Some((p, a)) => (p.clone(), a.to_vec()),
        None => return Wiring::default(),
    };
    match kind {
        "claude-code" => {
            let file = dir.join("retry-run-mcp.claude.json");
            // `alwaysLoad`: its first request waits for the server (else
            // `-p` may start without its tools).
            let config = json!({"mcpServers": {SERVER: {
                "type": "stdio", "command": program, "args": args, "alwaysLoad": true,
            }}});
            Wiring {
                args: vec!["--mcp-config".into(), file.display().to_string()],
                // Its tool calls wait this long (milliseconds).
                env: vec![("MCP_TOOL_TIMEOUT".into(), (TOOL_TIMEOUT_SECS * 1000).to_string())],
                files: vec![(file, pretty(&config))],
            }
        }
        "codex" => {
            let key = |k: &str| format!("mcp_servers.{SERVER}.{k}");
            let list = toml::Value::Array(args.iter().cloned().map(toml::Value::String).collect());
            Wiring {
                args: vec![
                    "-c".into(),
                    format!("{}={}", key("command"), toml::Value::String(program)),
                    "-c".into(),
                    format!("{}={list}", key("args")),
                    "-c".into(),
                    format!("{}={TOOL_TIMEOUT_SECS}", key("tool_timeout_sec")),
                    // Its first request waits for the server (else it waits
                    // about a second, then goes on without its tools).
                    "-c".into(),
                    format!("{}=true", key("required")),
                ],
                ..Wiring::default()
            }
        }
        "gemini" => {
            // The worktree's own settings file, which it merges over the
            // user's (a system settings file it reads only when root owns
            // it and every directory above it). It is made for the agent
            // and removed after it; a worktree that has one keeps its own.
            let file = worktree.join(".gemini/settings.json");
            let config = json!({"mcpServers": {SERVER: {
                "command": program, "args": args, "trust": true, "timeout": TOOL_TIMEOUT_SECS * 1000,
            }}});
            Wiring { files: vec![(file, pretty(&config))], ..Wiring::default() }
        }
        "opencode" => {
            let mut cmd = vec![program];
            cmd.extend(args);
            let server = json!({"type": "local", "command": cmd, "enabled": true, "timeout": TOOL_TIMEOUT_SECS * 1000});
            let mut config = match user("OPENCODE_CONFIG_CONTENT").map(|t| serde_json::from_str(&t)) {
                None => json!({}),
                Some(Ok(v @ serde_json::Value::Object(_))) => v,
                // Not a JSON object: the user's setting is left as it is.
                Some(_) => return Wiring::default(),
            };
            match config.get_mut("mcp").and_then(serde_json::Value::as_object_mut) {
                Some(servers) => {
                    servers.insert(SERVER.into(), server);
                }
                None => config["mcp"] = json!({SERVER: server}),
            }
            Wiring { env: vec![("OPENCODE_CONFIG_CONTENT".into(), config.to_string())], ..Wiring::default() }
        }
        _ => Wiring::default(),
    }
}

fn pretty(v: &serde_json::Value) -> Vec<u8> {
    serde_json::to_vec_pretty(v).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none(_: &str) -> Option<String> {
        None
    }

    fn command() -> Vec<String> {
        ["/opt/rr", "mcp", "--channel", "/w/.git/retry-run/tasks/t/attempts/1/tmp/retry-run-mcp"]
            .map(String::from)
            .to_vec()
    }

    #[test]
    fn claude_code_reads_a_generated_config_file() {
        let w = wiring("claude-code", &command(), (Path::new("/w/tmp"), Path::new("/w/wt")), &none);
        assert_eq!(w.args, ["--mcp-config", "/w/tmp/retry-run-mcp.claude.json"]);
        let (path, bytes) = &w.files[0];
        assert_eq!(path, Path::new("/w/tmp/retry-run-mcp.claude.json"));
        let v: serde_json::Value = serde_json::from_slice(bytes).expect("json");
        assert_eq!(v["mcpServers"]["retry-run"]["command"], "/opt/rr");
        assert_eq!(v["mcpServers"]["retry-run"]["args"][0], "mcp");
    }

    #[test]
    fn codex_is_given_config_overrides_as_toml_values() {
        let w = wiring("codex", &command(), (Path::new("/w/tmp"), Path::new("/w/wt")), &none);
        assert_eq!(w.args[0], "-c");
        assert_eq!(w.args[1], "mcp_servers.retry-run.command=\"/opt/rr\"");
        let (_, list) = w.args[3].split_once('=').expect("key=value");
        let parsed: toml::Table = toml::from_str(&format!("v = {list}")).expect("toml");
        assert_eq!(parsed["v"].as_array().map(Vec::len), Some(3));
        assert!(w.files.is_empty());
    }

    #[test]
    fn gemini_and_opencode_are_given_settings_of_their_own() {
        let dir = (Path::new("/w/tmp"), Path::new("/w/wt"));
        let g = wiring("gemini", &command(), dir, &none);
        assert_eq!(g.files[0].0, Path::new("/w/wt/.gemini/settings.json"));
        let v: serde_json::Value = serde_json::from_slice(&g.files[0].1).expect("json");
        assert_eq!(v["mcpServers"]["retry-run"]["args"][0], "mcp");
        let o = wiring("opencode", &command(), dir, &none);
        let v: serde_json::Value = serde_json::from_str(&o.env[0].1).expect("json");
        assert_eq!(v["mcp"]["retry-run"]["command"][0], "/opt/rr");
        assert_eq!(wiring("aider", &command(), dir, &none), Wiring::default());
    }

    #[test]
    fn the_users_own_settings_are_kept() {
        let dir = (Path::new("/w/tmp"), Path::new("/w/wt"));
        let theirs = |k: &str| {
            (k == "OPENCODE_CONFIG_CONTENT").then(|| r#"{"model":"x/y","mcp":{"docs":{"type":"remote"}}}"#.to_string())
        };
        let o = wiring("opencode", &command(), dir, &theirs);
        let v: serde_json::Value = serde_json::from_str(&o.env[0].1).expect("json");
        assert_eq!(v["model"], "x/y");
        assert_eq!(v["mcp"]["docs"]["type"], "remote");
        assert_eq!(v["mcp"]["retry-run"]["type"], "local");
        let broken = |k: &str| (k == "OPENCODE_CONFIG_CONTENT").then(|| "not json".to_string());
        assert_eq!(wiring("opencode", &command(), dir, &broken), Wiring::default());
    }
}
