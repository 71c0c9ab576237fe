//! The network list's rules: `host`, `host:port`, `*.domain`, an address
//! and port, read ([`parse_rule`]) and matched ([`allowed`]). Pure.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

// ---------------------------------------------------------------------------
// The rules
// ---------------------------------------------------------------------------

/// The hosts a rule names, in the form [`canonical_host`] gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Hosts {
    /// One host: a name, an IPv4 address, or an IPv6 address (no brackets).
    Exact(String),
    /// Every name beneath this domain, at any depth, but not the domain.
    Beneath(String),
}

/// One entry of the sandbox's network list: a host, or every host beneath a
/// domain, and the port it may be reached on; without a port, 80 and 443
/// (plain HTTP and HTTPS), so that naming a web API is enough to use it.
/// Its text form ([`fmt::Display`]) is the canonical rule, which
/// [`parse_rule`] reads back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRule {
    hosts: Hosts,
    port: Option<u16>,
}

impl HostRule {
    /// The host and port when the rule names one host of the machine's
    /// loopback with its port (`127.0.0.1:8080`, `localhost:3000`): the
    /// sandbox mirrors it at 127.0.0.1 and that port inside.
    pub fn loopback(&self) -> Option<Loopback> {
        let port = self.port?;
        match &self.hosts {
            Hosts::Exact(h) if h == "localhost" || h.starts_with("127.") => Some(Loopback { host: h.clone(), port }),
            _ => None,
        }
    }

    /// Whether this rule lets `host` (canonical) be reached on `port`.
    fn admits(&self, host: &str, port: u16) -> bool {
        let port_ok = match self.port {
            Some(p) => p == port,
            None => port == 80 || port == 443,
        };
        port_ok
            && match &self.hosts {
                Hosts::Exact(h) => h == host,
                Hosts::Beneath(domain) => {
                    host.len() > domain.len() + 1
                        && host.ends_with(domain.as_str())
                        && host.as_bytes()[host.len() - domain.len() - 1] == b'.'
                }
            }
    }
}

/// A host of the machine's loopback and a port on it, which an allowed
/// rule names ([`HostRule::loopback`]) and the forwarder reaches
/// ([`forward`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loopback {
    pub host: String,
    pub port: u16,
}

impl fmt::Display for HostRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.hosts {
            Hosts::Exact(h) if h.contains(':') => write!(f, "[{h}]")?,
            Hosts::Exact(h) => write!(f, "{h}")?,
            Hosts::Beneath(d) => write!(f, "*.{d}")?,
        }
        match self.port {
            Some(p) => write!(f, ":{p}"),
            None => Ok(()),
        }
    }
}

impl std::str::FromStr for HostRule {
    type Err = RuleError;

    fn from_str(s: &str) -> Result<Self, RuleError> {
        parse_rule(s)
    }
}

/// A rule of the network list that cannot be read: the text, what is
/// wrong, and the forms expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("network rule {rule:?}: {why}; {EXPECTED}")]
pub struct RuleError {
    pub rule: String,
    pub why: String,
}

/// Reads one rule of the network list: `host`, `host:port`, `*.domain`
/// (any name beneath the domain, not the domain itself), `*.domain:port`,
/// `IPv4:port` or `[IPv6]:port` (an address without a port also works).
/// Names are compared without regard to case or a trailing dot. `Err` names
/// the text and says which forms are expected. Pure.
pub fn parse_rule(s: &str) -> Result<HostRule, RuleError> {
    let bad = |why: &str| RuleError { rule: s.to_string(), why: why.to_string() };
    let text = s.trim();
    if text.is_empty() {
        return Err(bad("it is empty"));
    }
    if let Some((_, rest)) = text.split_once("://") {
        let host = rest.split(['/', '?', '#']).next().unwrap_or(rest);
        return Err(bad(&format!("a rule names a host, not a URL: write {host:?}")));
    }
    if text.contains(['/', '?', '#', '@']) {
        return Err(bad("a rule names a host, not a URL or a path"));
    }
    let (host, port, bracketed) = split_authority(text).map_err(&bad)?;
    let port = port.map(parse_port).transpose().map_err(&bad)?;
    let hosts = if let Some(domain) = host.strip_prefix("*.").filter(|_| !bracketed) {
        let domain = canonical_host(domain, false).map_err(&bad)?;
        if domain.parse::<IpAddr>().is_ok() {
            return Err(bad("`*.` goes before a domain name, not an address"));
        }
        Hosts::Beneath(domain)
    } else if host.contains('*') {
        return Err(bad("a wildcard is only `*.` at the start, before a domain name"));
    } else {
        Hosts::Exact(canonical_host(host, bracketed).map_err(&bad)?)
    };
    Ok(HostRule { hosts, port })
}

/// Whether `rules` let a confined process reach `host` on `port`. `host`
/// may carry a trailing dot, capitals, or brackets around an IPv6 address;
/// a host that is no valid name or address is never allowed. Pure.
pub fn allowed(rules: &[HostRule], host: &str, port: u16) -> bool {
    let canonical = match host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        Some(inner) => canonical_host(inner, true),
        None if host.parse::<Ipv6Addr>().is_ok() => canonical_host(host, true),
        None => canonical_host(host, false),
    };
    canonical.is_ok_and(|h| rules.iter().any(|r| r.admits(&h, port)))
}

/// `text` split into its host and its port (`None` when it has none), and
/// whether the host was an IPv6 address in brackets. The `Err` says what is
/// wrong.
pub(super) fn split_authority(text: &str) -> Result<(&str, Option<&str>, bool), &'static str> {
    if let Some(rest) = text.strip_prefix('[') {
        let (inner, after) = rest.split_once(']').ok_or("an opening `[` without its `]`")?;
        return match after {
            "" => Ok((inner, None, true)),
            _ => match after.strip_prefix(':') {
                Some(port) => Ok((inner, Some(port), true)),
                None => Err("only `:port` may follow the `]` of an IPv6 address"),
            },
        };
    }
    match text.matches(':').count() {
        0 => Ok((text, None, false)),
        1 => text.split_once(':').map(|(h, p)| (h, Some(p), false)).ok_or("a `:` without a port"),
        _ => Err("an IPv6 address goes in brackets, as in [::1] or [::1]:443"),
    }
}

/// A port, 1 to 65535, in decimal digits only.
pub(super) fn parse_port(p: &str) -> Result<u16, &'static str> {
    const WHY: &str = "a port is a number from 1 to 65535";
    if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
        return Err(WHY);
    }
    p.parse::<u16>().ok().filter(|&n| n != 0).ok_or(WHY)
}

/// `host` in the one form rules and requests are compared in: a name in
/// lower case without its trailing dot, an IP address in its canonical text
/// (an IPv6 address without brackets; `bracketed` when it came in them).
/// A name whose last label is a number must be an IPv4 address in dotted
/// decimal: the other spellings a resolver accepts (`127.1`, `2130706433`)
/// are refused, so that no address slips past a rule under another name.
pub(super) fn canonical_host(host: &str, bracketed: bool) -> Result<String, &'static str> {
    if bracketed {
        return host.parse::<Ipv6Addr>().map(|a| a.to_string()).map_err(|_| "not an IPv6 address inside [ ]");
    }
    let name = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    if name.is_empty() {
        return Err("no host");
    }
    if name.len() > 253 {
        return Err("a host name is at most 253 characters");
    }
    let label_ok = |l: &str| {
        !l.is_empty() && l.len() <= 63 && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    if !name.split('.').all(label_ok) {
        return Err("a host name is labels of letters, digits, `-` and `_` between dots");
    }
    let last = name.rsplit('.').next().unwrap_or(&name);
    if last.bytes().all(|b| b.is_ascii_digit()) {
        return name.parse::<Ipv4Addr>().map(|a| a.to_string()).map_err(|_| "not an IPv4 address (a.b.c.d)");
    }
    Ok(name)
}

/// `host:port` as written in a request, the IPv6 address in brackets.
pub(super) fn authority(host: &str, port: u16) -> String {
    if host.contains(':') { format!("[{host}]:{port}") } else { format!("{host}:{port}") }
}

/// What a rule or a request may name, for the error of a rule.
pub(super) const EXPECTED: &str = "expected host, host:port, *.domain, *.domain:port, IPv4:port or [IPv6]:port \
                        (e.g. api.openai.com, *.anthropic.com, 127.0.0.1:8080, [::1]:443)";
