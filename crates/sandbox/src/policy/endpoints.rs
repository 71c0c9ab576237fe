//! The model server an agent is pointed at by its own variables
//! (`OPENAI_BASE_URL=http://127.0.0.1:11434/v1`: Ollama, LM Studio, a
//! LiteLLM proxy on the user's machine): its host and port are let through
//! the proxy for the agent without configuration, said when the run starts
//! and recorded (`TaskStarted`, `sandbox.model_endpoints`). Pure.

use serde::{Deserialize, Serialize};

/// The variables agents take their model server's address from.
pub const MODEL_URL_VARS: [&str; 5] =
    ["OPENAI_BASE_URL", "OPENAI_API_BASE", "ANTHROPIC_BASE_URL", "GOOGLE_GEMINI_BASE_URL", "OLLAMA_HOST"];

/// One model server, as a variable named it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Endpoint {
    /// The variable (`OPENAI_BASE_URL`).
    pub var: String,
    /// `host:port`, as `[sandbox] network` takes it.
    pub host_port: String,
}

/// The model servers `vars` (name, value) point at, in the order of
/// [`MODEL_URL_VARS`], each `host:port` once. A value that is not an
/// address (empty, no host) is skipped.
pub fn model_endpoints(vars: &[(String, String)]) -> Vec<Endpoint> {
    let mut out: Vec<Endpoint> = Vec::new();
    for name in MODEL_URL_VARS {
        let Some((_, value)) = vars.iter().find(|(k, _)| k == name) else { continue };
        let default_port = if name == "OLLAMA_HOST" { 11434 } else { 0 };
        let Some(host_port) = host_port(value, default_port) else { continue };
        if !out.iter().any(|e| e.host_port == host_port) {
            out.push(Endpoint { var: name.to_string(), host_port });
        }
    }
    out
}

/// `host:port` of a URL (`http://127.0.0.1:8080/v1`) or of a bare
/// `host[:port]` (`OLLAMA_HOST=0.0.0.0`); the port from the scheme (80,
/// 443) or `default_port` when none is written. `0.0.0.0` and `[::]` (a
/// server's "every address") are reached at 127.0.0.1.
fn host_port(value: &str, default_port: u16) -> Option<String> {
    let value = value.trim();
    let (scheme, rest) = match value.split_once("://") {
        Some((s, r)) => (Some(s.to_ascii_lowercase()), r),
        None => (None, value),
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
        let (h, after) = v6.split_once(']')?;
        (h.to_string(), after.strip_prefix(':').map(str::to_string))
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p.to_string())),
            None => (authority.to_string(), None),
        }
    };
    if host.is_empty() || !host.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':')) {
        return None;
    }
    let port: u16 = match port {
        Some(p) => p.parse().ok().filter(|p| *p > 0)?,
        None => match scheme.as_deref() {
            Some("https") => 443,
            Some("http") => 80,
            _ if default_port > 0 => default_port,
            _ => return None,
        },
    };
    let host = match host.to_ascii_lowercase().as_str() {
        "0.0.0.0" | "::" | "::1" => "127.0.0.1".to_string(),
        h => h.to_string(),
    };
    Some(format!("{host}:{port}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn urls_and_bare_hosts_become_host_and_port() {
        let got = model_endpoints(&vars(&[
            ("OPENAI_BASE_URL", "http://127.0.0.1:1234/v1"),
            ("ANTHROPIC_BASE_URL", "https://litellm.internal"),
            ("OLLAMA_HOST", "0.0.0.0"),
            ("GOOGLE_GEMINI_BASE_URL", "http://localhost:8080"),
            ("OPENAI_API_BASE", "http://127.0.0.1:1234/v1"),
            ("HOME", "/root"),
        ]));
        let pairs: Vec<(&str, &str)> = got.iter().map(|e| (e.var.as_str(), e.host_port.as_str())).collect();
        assert_eq!(
            pairs,
            [
                ("OPENAI_BASE_URL", "127.0.0.1:1234"),
                ("ANTHROPIC_BASE_URL", "litellm.internal:443"),
                ("GOOGLE_GEMINI_BASE_URL", "localhost:8080"),
                ("OLLAMA_HOST", "127.0.0.1:11434"),
            ]
        );
    }

    #[test]
    fn what_is_no_address_is_skipped() {
        assert!(model_endpoints(&vars(&[("OPENAI_BASE_URL", "")])).is_empty());
        assert!(model_endpoints(&vars(&[("OPENAI_BASE_URL", "not a url")])).is_empty());
        assert!(model_endpoints(&vars(&[("OPENAI_BASE_URL", "http://h:99999")])).is_empty());
        assert!(model_endpoints(&vars(&[("OPENAI_BASE_URL", "ftp-ish-host")])).is_empty());
        assert_eq!(model_endpoints(&vars(&[("OLLAMA_HOST", "http://[::1]:11500")]))[0].host_port, "127.0.0.1:11500");
        assert_eq!(model_endpoints(&vars(&[("OLLAMA_HOST", "127.0.0.1:11435")]))[0].host_port, "127.0.0.1:11435");
    }
}
