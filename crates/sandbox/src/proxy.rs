//! The sandbox's network proxy: a confined process reaches the network only
//! through it, and it lets through only the hosts of the sandbox's network
//! list (`[sandbox] network`, `--network`).
//!
//! A confined process lives in a network namespace of its own that has
//! nothing but loopback, so it cannot open a connection to the outside
//! itself. The proxy runs outside that namespace and listens on a UNIX
//! socket, which, being a path in the filesystem, can be reached from any
//! network namespace. Inside the namespace [`forward`] listens on 127.0.0.1
//! and hands each connection to that socket: programs find an ordinary HTTP
//! proxy at `http://127.0.0.1:PORT` ([`proxy_env`]), and an allowed loopback
//! address (a test model server) at its usual address.
//!
//! The proxy speaks the two forms clients use with a proxy: `CONNECT
//! host:port` (HTTPS, or any TCP, tunnelled as bytes: the proxy never sees
//! inside TLS) and plain HTTP in absolute form (`GET http://host/path`),
//! forwarded in origin form. It decides on the host and port the request
//! names before a byte reaches any host, and records every connection as one
//! JSON line ([`Connection`]).
//!
//! - the rules and the request head are pure ([`parse_rule`], [`allowed`],
//!   [`parse_head`], which reads the head with `httparse`), tested as
//!   tables beside them;
//! - [`start`] runs the proxy, [`forward`] the forwarder inside the
//!   namespace: each connection is a tokio task, all of them on one thread
//!   (the proxy's own, and one inside the namespace), and the proxy serves
//!   at most [`MAX_OPEN`] at once, so a confined process that opens
//!   thousands of connections costs the process running the proxy no
//!   thread; past the bound, a connection gets a 503 that says why.
//!
//! Where no network namespace can be made, [`start`] also listens on TCP
//! 127.0.0.1 and programs are pointed at that port through [`proxy_env`]:
//! the proxy then filters what those programs send through it, and nothing
//! stops a program that ignores the variables.

use std::fmt;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UnixListener, UnixStream};
use tokio::sync::{Semaphore, watch};
use tokio::task::JoinSet;

use serde::{Deserialize, Serialize};

/// How long a client has to send its whole request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long reaching an allowed host may take, every address it resolves to
/// included.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest request head the proxy reads.
const MAX_HEAD: usize = 64 * 1024;
/// The size of the buffer of each direction of a relayed connection.
const PIPE_BUFFER: usize = 64 * 1024;
/// How long the proxy waits, after its own answer, for the client to close.
const LINGER: Duration = Duration::from_secs(2);

/// What a rule or a request may name, for the error of a rule.
const EXPECTED: &str = "expected host, host:port, *.domain, *.domain:port, IPv4:port or [IPv6]:port \
                        (e.g. api.openai.com, *.anthropic.com, 127.0.0.1:8080, [::1]:443)";

// ---------------------------------------------------------------------------
// The rules
// ---------------------------------------------------------------------------

/// The hosts a rule names, in the form [`canonical_host`] gives.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Hosts {
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
fn split_authority(text: &str) -> Result<(&str, Option<&str>, bool), &'static str> {
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
fn parse_port(p: &str) -> Result<u16, &'static str> {
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
fn canonical_host(host: &str, bracketed: bool) -> Result<String, &'static str> {
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
fn authority(host: &str, port: u16) -> String {
    if host.contains(':') { format!("[{host}]:{port}") } else { format!("{host}:{port}") }
}

// ---------------------------------------------------------------------------
// The request head
// ---------------------------------------------------------------------------

/// What a client asked the proxy for, read from its request head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// `CONNECT host:port`: a tunnel of raw bytes to that host.
    Connect { host: String, port: u16 },
    /// A plain-HTTP request in absolute form, to send to `host:port` as
    /// `head`: in origin form, `Host` from the URL (as a proxy must, so
    /// that no other name rides on an allowed address), without the
    /// `Proxy-*`, `Connection` and `Keep-Alive` headers, and with
    /// `Connection: close`: one request per connection, so that the next
    /// one comes back to the proxy to be judged (`Connection: upgrade` when
    /// the client asked to switch protocols).
    Forward { method: String, host: String, port: u16, head: Vec<u8> },
}

impl Request {
    /// The host asked for, canonical ([`allowed`]'s form).
    pub fn host(&self) -> &str {
        match self {
            Request::Connect { host, .. } | Request::Forward { host, .. } => host,
        }
    }

    /// The port asked for.
    pub fn port(&self) -> u16 {
        match self {
            Request::Connect { port, .. } | Request::Forward { port, .. } => *port,
        }
    }

    /// The request's method.
    pub fn method(&self) -> &str {
        match self {
            Request::Connect { .. } => "CONNECT",
            Request::Forward { method, .. } => method,
        }
    }
}

/// A request head the proxy does not serve: its method, as far as it could
/// be read, and why (the body of the 400 answer and the log's error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    pub method: String,
    pub reason: String,
}

/// The length of the request head at the start of `buf`, its blank line
/// included, once all of it is there (lines end in CRLF or LF); `Ok(None)`
/// while more is to come, `Err` once `buf` cannot start a request head
/// ([`parse_head`] says why). Read by `httparse`. Pure.
pub fn head_len(buf: &[u8]) -> Result<Option<usize>, httparse::Error> {
    let mut headers = vec![httparse::EMPTY_HEADER; lines_in(buf)];
    match httparse::Request::new(&mut headers).parse(buf)? {
        httparse::Status::Complete(n) => Ok(Some(n)),
        httparse::Status::Partial => Ok(None),
    }
}

/// The number of lines `head` starts, an upper bound on its headers.
fn lines_in(head: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', head).count() + 1
}

/// The request line that is not one, in words.
const NOT_A_REQUEST_LINE: &str = "the request line is not `METHOD target HTTP/1.1`";

/// Reads a request head (the request line and the headers, up to the blank
/// line) with `httparse`: a `CONNECT host:port` or an absolute-form
/// `http://` request, which comes back rewritten to origin form
/// ([`Request::Forward`]), its headers passed on byte for byte. Pure.
pub fn parse_head(head: &[u8]) -> Result<Request, Malformed> {
    let line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let method_guess = String::from_utf8_lossy(line.split(|&b| b == b' ').next().unwrap_or_default())
        .chars()
        .take(32)
        .collect::<String>();
    let bad = |reason: &str| Malformed { method: method_guess.clone(), reason: reason.to_string() };
    let mut headers = vec![httparse::EMPTY_HEADER; lines_in(head)];
    let mut request = httparse::Request::new(&mut headers);
    match request.parse(head) {
        Ok(httparse::Status::Complete(_)) => {}
        Ok(httparse::Status::Partial) => return Err(bad("the request head is cut short")),
        Err(e) => return Err(bad(why_malformed(head, e))),
    }
    let (Some(method), Some(target), Some(minor)) = (request.method, request.path, request.version) else {
        return Err(bad(NOT_A_REQUEST_LINE));
    };
    let version = if minor == 0 { "HTTP/1.0" } else { "HTTP/1.1" };
    if method == "CONNECT" {
        let (host, port) = parse_target_authority(target, None).map_err(|w| bad(&format!("CONNECT {target}: {w}")))?;
        return Ok(Request::Connect { host, port });
    }
    let (auth, origin) = split_absolute(target).map_err(bad)?;
    let (host, port) = parse_target_authority(auth, Some(80)).map_err(|w| bad(&format!("{target}: {w}")))?;
    let upgrade = request
        .headers
        .iter()
        .filter(|h| h.name.eq_ignore_ascii_case("connection"))
        .any(|h| String::from_utf8_lossy(h.value).split(',').any(|t| t.trim().eq_ignore_ascii_case("upgrade")));
    let mut out = format!("{method} {origin} {version}\r\nHost: {auth}\r\n").into_bytes();
    for h in request.headers.iter() {
        let hop = ["host", "connection", "keep-alive"].iter().any(|n| h.name.eq_ignore_ascii_case(n))
            || h.name.len() >= 6 && h.name[..6].eq_ignore_ascii_case("proxy-");
        if !hop {
            out.extend_from_slice(raw_line(head, h.name));
            out.extend_from_slice(b"\r\n");
        }
    }
    out.extend_from_slice(if upgrade { b"Connection: upgrade\r\n\r\n" } else { b"Connection: close\r\n\r\n" });
    Ok(Request::Forward { method: method.to_string(), host, port, head: out })
}

/// The header line of `head` that starts at `name` (a slice `httparse`
/// took from `head`), without its line end: the value as the client wrote
/// it, spaces included, where `httparse` trims them.
fn raw_line<'h>(head: &'h [u8], name: &str) -> &'h [u8] {
    let start = (name.as_ptr() as usize).saturating_sub(head.as_ptr() as usize).min(head.len());
    let line = &head[start..];
    let line = &line[..memchr::memchr(b'\n', line).unwrap_or(line.len())];
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The authority and the origin-form target (`/path?query`, no fragment)
/// of an absolute-form `http://` target; `Err` says why it is not one.
fn split_absolute(target: &str) -> Result<(&str, String), &'static str> {
    let scheme_end = target.find("://").map(|i| (target[..i].to_ascii_lowercase(), i + 3));
    let rest = match scheme_end {
        Some((scheme, at)) if scheme == "http" => &target[at..],
        Some((scheme, _)) if scheme == "https" => {
            return Err("an https:// URL goes through the proxy as a CONNECT tunnel");
        }
        _ if target.starts_with('/') => {
            return Err(
                "this is a proxy: a request names its whole URL (http://host/path), or asks for a CONNECT tunnel",
            );
        }
        _ => return Err("the request's target is not an http:// URL"),
    };
    let split = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (auth, path) = rest.split_at(split);
    if auth.contains('@') {
        return Err("the URL carries a user name (user@host), which the proxy does not pass on");
    }
    let path = path.split('#').next().unwrap_or_default();
    let origin = match path.as_bytes().first() {
        None => "/".to_string(),
        Some(b'?') => format!("/{path}"),
        _ => path.to_string(),
    };
    Ok((auth, origin))
}

/// Why `httparse` refused `head`, in the words of the 400 answer: which
/// part of the head is wrong.
fn why_malformed(head: &[u8], error: httparse::Error) -> &'static str {
    let mut lines = head.split(|&b| b == b'\n').map(|l| l.strip_suffix(b"\r").unwrap_or(l));
    let Ok(line) = std::str::from_utf8(lines.next().unwrap_or_default()) else {
        return "the request line is not text";
    };
    match error {
        httparse::Error::Version if line.split(' ').count() == 3 => "only HTTP/1.0 and HTTP/1.1 requests are served",
        httparse::Error::HeaderName | httparse::Error::HeaderValue | httparse::Error::TooManyHeaders => {
            let fault = lines.skip_while(|l| !l.is_empty() && !matches!(l[0], b' ' | b'\t') && l.contains(&b':'));
            match fault.take_while(|l| !l.is_empty()).next() {
                Some([b' ' | b'\t', ..]) => "a header is folded over several lines",
                Some(_) => "a header line has no `:`",
                None if error == httparse::Error::HeaderValue => "a header's value holds a control character",
                None => "a header has no valid name",
            }
        }
        _ => NOT_A_REQUEST_LINE,
    }
}

/// The host (canonical) and port of a request's `host[:port]`; `default`
/// when it names no port (none for CONNECT, which must).
fn parse_target_authority(text: &str, default: Option<u16>) -> Result<(String, u16), &'static str> {
    let (host, port, bracketed) = split_authority(text)?;
    let port = match (port, default) {
        (Some(p), _) => parse_port(p)?,
        (None, Some(d)) => d,
        (None, None) => return Err("no port (host:port)"),
    };
    Ok((canonical_host(host, bracketed)?, port))
}

/// The proxy's own answer: `status` with a short text `body`, and the
/// connection closed after it. Pure.
pub fn answer(status: u16, reason: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// The 403 answer to a host the network list does not name: it names the
/// host and the rule that would let it through. Pure.
pub fn refusal(host: &str, port: u16) -> Vec<u8> {
    let asked = authority(host, port);
    let rule = if port == 80 || port == 443 {
        if host.contains(':') { format!("[{host}]") } else { host.to_string() }
    } else {
        asked.clone()
    };
    answer(
        403,
        "Forbidden",
        &format!(
            "retry-run sandbox: {asked} is not in the sandbox's network list, so the proxy refused it; \
             to allow it, add \"{rule}\" to `network` under [sandbox] in retry-run.toml, or pass --network {rule}\n"
        ),
    )
}

/// The 400 answer to a request the proxy cannot read. Pure.
fn bad_request(reason: &str) -> Vec<u8> {
    answer(400, "Bad Request", &format!("retry-run sandbox: the network proxy cannot serve this request: {reason}\n"))
}

/// The status code of a response head, read by `httparse`.
fn status_of(head: &[u8]) -> Option<u16> {
    answer_of(head).map(|(status, _)| status)
}

/// The status code of a response head and its `Retry-After` header. Pure.
fn answer_of(head: &[u8]) -> Option<(u16, Option<String>)> {
    let mut headers = vec![httparse::EMPTY_HEADER; lines_in(head)];
    let mut response = httparse::Response::new(&mut headers);
    response.parse(head).ok()?;
    let retry_after = response
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("retry-after"))
        .map(|h| String::from_utf8_lossy(h.value).trim().to_string());
    Some((response.code?, retry_after))
}

/// The first answer a host sent back on a connection, read as it passes
/// when it is plain HTTP ([`Connection::status`]).
#[derive(Default)]
struct Sniffed {
    head: Vec<u8>,
    done: bool,
    answer: Option<(u16, Option<String>)>,
}

impl Sniffed {
    /// Takes in the next bytes the host sent, until its first head is
    /// whole, or they cannot be one (TLS, or longer than a head may be).
    fn take(&mut self, bytes: &[u8]) {
        if self.done {
            return;
        }
        let room = MAX_HEAD.saturating_sub(self.head.len());
        self.head.extend_from_slice(&bytes[..bytes.len().min(room)]);
        let plain = b"HTTP/1.";
        let n = self.head.len().min(plain.len());
        if self.head[..n] != plain[..n] {
            self.done = true;
            return;
        }
        match response_len(&self.head) {
            Ok(Some(len)) => {
                self.answer = answer_of(&self.head[..len]);
                self.done = true;
            }
            Ok(None) if self.head.len() < MAX_HEAD => {}
            _ => self.done = true,
        }
        if self.done {
            self.head = Vec::new();
        }
    }
}

/// A name that resolves only to the machine the proxy runs on.
#[derive(Debug, thiserror::Error)]
#[error(
    "{host} resolves to {ip}, an address of the machine the proxy runs on; to reach it, name the address in the network list"
)]
struct LocalOnly {
    host: String,
    ip: IpAddr,
}

/// The addresses of `host` the proxy may connect to, from those it
/// resolved to. A name that resolves to this machine (a loopback or
/// unspecified address) is refused unless the request named the address
/// itself or `localhost`: otherwise a rule for a domain would let any name
/// beneath it that someone points at 127.0.0.1 reach the services of the
/// machine the proxy runs on. Pure.
fn usable(host: &str, resolved: Vec<SocketAddr>) -> Result<Vec<SocketAddr>, LocalOnly> {
    let named_local = host.parse::<IpAddr>().is_ok() || host == "localhost" || host.ends_with(".localhost");
    if named_local {
        return Ok(resolved);
    }
    let is_local = |ip: IpAddr| match ip {
        IpAddr::V4(a) => a.is_loopback() || a.is_unspecified(),
        IpAddr::V6(a) => {
            a.is_loopback()
                || a.is_unspecified()
                || a.to_ipv4_mapped().is_some_and(|v| v.is_loopback() || v.is_unspecified())
        }
    };
    let (local, remote): (Vec<SocketAddr>, Vec<SocketAddr>) = resolved.into_iter().partition(|a| is_local(a.ip()));
    match local.first() {
        Some(first) if remote.is_empty() => Err(LocalOnly { host: host.to_string(), ip: first.ip() }),
        _ => Ok(remote),
    }
}

// ---------------------------------------------------------------------------
// The log
// ---------------------------------------------------------------------------

/// One connection to the proxy, as its log records it (one JSON line,
/// written when the connection ends).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Connection {
    /// The host asked for, canonical; empty when the request was unreadable.
    pub host: String,
    pub port: u16,
    /// Whether the network list allowed it.
    pub allowed: bool,
    /// `CONNECT`, `GET`, ...; as far as it could be read.
    pub method: String,
    /// Bytes sent to the host (a forwarded request's rewritten head
    /// included); the proxy's own answers are not counted.
    pub bytes_up: u64,
    /// Bytes the host sent back.
    pub bytes_down: u64,
    /// From accepting the connection to its end.
    pub ms: u64,
    /// What went wrong: an unreadable request, a host that cannot be
    /// reached, a connection broken off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The status of the host's first answer, when it was plain HTTP
    /// (forwarded, or inside a tunnel without TLS): what tells a model
    /// server's rate limit or overload ([`crate::agents::transient`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// That answer's `Retry-After` header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after: Option<String>,
}

/// The connections recorded in the log at `path`, in order; lines that are
/// not a connection (a line cut short) are skipped, and a missing log is
/// empty.
pub fn read_log(path: &Path) -> Vec<Connection> {
    let Ok(text) = std::fs::read_to_string(path) else { return Vec::new() };
    text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

// ---------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------

/// A stream the proxy relays: a TCP or a UNIX socket, read and written at
/// once through its two halves.
trait Socket: AsyncRead + AsyncWrite + Unpin + Send + 'static {
    fn halves(&mut self) -> (impl AsyncRead + Unpin + Send + '_, impl AsyncWrite + Unpin + Send + '_);
}

impl Socket for TcpStream {
    fn halves(&mut self) -> (impl AsyncRead + Unpin + Send + '_, impl AsyncWrite + Unpin + Send + '_) {
        self.split()
    }
}

impl Socket for UnixStream {
    fn halves(&mut self) -> (impl AsyncRead + Unpin + Send + '_, impl AsyncWrite + Unpin + Send + '_) {
        self.split()
    }
}

/// What the proxy's connections share.
struct Shared {
    rules: Vec<HostRule>,
    log: Option<Mutex<std::fs::File>>,
    /// Connections written to the log, and those past [`LOG_CAP`] that
    /// were not.
    logged: AtomicU64,
    unlogged: AtomicU64,
    /// One permit per connection served at once ([`MAX_OPEN`]).
    open: Arc<Semaphore>,
    /// One permit per refusal lingering at once ([`MAX_REFUSING`]).
    refusing: Arc<Semaphore>,
    /// Connections refused because [`MAX_OPEN`] were open.
    busy: AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    /// Appends `c` to the log as one line, one writer at a time. A failed
    /// write is lost: the connection it records has ended either way.
    fn record(&self, c: &Connection) {
        let Some(log) = &self.log else { return };
        if self.logged.fetch_add(1, Ordering::SeqCst) >= LOG_CAP {
            self.unlogged.fetch_add(1, Ordering::SeqCst);
            return;
        }
        let Ok(mut line) = serde_json::to_vec(c) else { return };
        line.push(b'\n');
        let _ = lock(log).write_all(&line);
    }

    /// Appends to the log the limits this proxy hit, one line each, as
    /// [`super::LimitHit`] reads them.
    fn record_limits(&self) {
        let Some(log) = &self.log else { return };
        let unlogged = self.unlogged.load(Ordering::SeqCst);
        if unlogged > 0 {
            let line = serde_json::json!({"limit": "connections_logged", "max": LOG_CAP, "refused": unlogged});
            let _ = writeln!(lock(log), "{line}");
        }
        let busy = self.busy.load(Ordering::SeqCst);
        if busy > 0 {
            let line = serde_json::json!({"limit": "connections_open", "max": MAX_OPEN, "refused": busy});
            let _ = writeln!(lock(log), "{line}");
        }
    }
}

/// The connections one proxy writes to its log: a command that connects in
/// a loop cannot grow the record without bound. How many more there were
/// is written when the proxy stops, as a limit hit
/// ([`super::LimitHit`], `connections_logged`).
pub const LOG_CAP: u64 = 1000;

/// The connections one proxy serves at once. All of them are served on
/// one thread (and the names they ask for resolved on at most
/// [`RESOLVERS`] more), so a confined process that opens thousands of
/// connections costs the process running the proxy no thread; past this
/// bound, a new connection gets a 503 answer that says why, and how many
/// were refused is written to the log once, when the proxy stops, as a
/// limit hit ([`super::LimitHit`], `connections_open`). A program of a
/// few dozen parallel requests (a package manager, a browser) stays well
/// below it.
pub const MAX_OPEN: usize = 256;
/// The refusals past [`MAX_OPEN`] that wait at once for their client to
/// close ([`answer_and_close`]); past these, the answer is sent and the
/// socket closed at once.
const MAX_REFUSING: usize = 64;
/// The threads that resolve host names for one proxy (the system's
/// resolver blocks); one more name to resolve waits for one of them.
const RESOLVERS: usize = 4;

/// The running proxy. It stops when dropped or [`Proxy::stop`]ped: no new
/// connection is accepted, the open ones are cut, and once every one of them
/// is in the log its socket file is removed.
pub struct Proxy {
    shared: Arc<Shared>,
    socket: PathBuf,
    tcp: Option<SocketAddr>,
    stop: watch::Sender<bool>,
    thread: Option<JoinHandle<()>>,
}

/// Starts the proxy for `rules`: it listens on a new UNIX socket at
/// `socket` (which must not exist; a directory only the caller can reach
/// keeps other users off it) and, with `tcp`, on a free port of 127.0.0.1
/// ([`Proxy::tcp_port`]) for where no network namespace can be made. Every
/// connection is served on one thread of its own, at most [`MAX_OPEN`] at
/// once, and, with `log`, appended to that file when it ends
/// ([`Connection`]).
pub fn start(rules: Vec<HostRule>, socket: &Path, log: Option<PathBuf>, tcp: bool) -> io::Result<Proxy> {
    bind(socket)?.serve(rules, log, tcp)
}

/// The proxy's UNIX socket, listening before the proxy runs: a connection
/// made meanwhile waits in its backlog until [`Bound::serve`]. So the
/// sandbox's outer process binds it before bubblewrap starts, and starts
/// the proxy's runtime and thread at the first connection: a confined
/// process that never connects (most checks) costs no proxy at all.
pub struct Bound {
    unix: std::os::unix::net::UnixListener,
    socket: PathBuf,
}

/// Binds the proxy's socket at `socket` (see [`start`]).
pub fn bind(socket: &Path) -> io::Result<Bound> {
    let unix = std::os::unix::net::UnixListener::bind(socket)?;
    Ok(Bound { unix, socket: socket.to_path_buf() })
}

impl std::os::fd::AsRawFd for Bound {
    /// The listening socket's descriptor, to wait for a first connection.
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.unix.as_raw_fd()
    }
}

impl Bound {
    /// Starts the proxy on this socket (see [`start`]); an error removes
    /// the socket file.
    pub fn serve(self, rules: Vec<HostRule>, log: Option<PathBuf>, tcp: bool) -> io::Result<Proxy> {
        let Bound { unix, socket } = self;
        // From here on, an error removes the socket file.
        let fail = |e: io::Error| {
            let _ = std::fs::remove_file(&socket);
            e
        };
        let log = match log {
            Some(p) => Some(Mutex::new(OpenOptions::new().create(true).append(true).open(p).map_err(fail)?)),
            None => None,
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_io()
            .enable_time()
            .max_blocking_threads(RESOLVERS)
            .thread_name("sandbox-resolve")
            .build()
            .map_err(fail)?;
        serve(rules, (unix, &socket), log, tcp, runtime).map_err(fail)
    }
}

/// The proxy's thread started on `unix` (and, with `tcp`, a port of
/// 127.0.0.1).
fn serve(
    rules: Vec<HostRule>,
    (unix, socket): (std::os::unix::net::UnixListener, &Path),
    log: Option<Mutex<std::fs::File>>,
    tcp: bool,
    runtime: tokio::runtime::Runtime,
) -> io::Result<Proxy> {
    unix.set_nonblocking(true)?;
    let (tcp_listener, tcp) = if tcp {
        let l = std::net::TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?;
        l.set_nonblocking(true)?;
        let addr = l.local_addr()?;
        (Some(l), Some(addr))
    } else {
        (None, None)
    };
    let (unix, tcp_listener) = {
        let _inside = runtime.enter();
        let unix = UnixListener::from_std(unix)?;
        (unix, tcp_listener.map(TcpListener::from_std).transpose()?)
    };
    let shared = Arc::new(Shared {
        rules,
        log,
        logged: AtomicU64::new(0),
        unlogged: AtomicU64::new(0),
        open: Arc::new(Semaphore::new(MAX_OPEN)),
        refusing: Arc::new(Semaphore::new(MAX_REFUSING)),
        busy: AtomicU64::new(0),
    });
    let (stop, stopped) = watch::channel(false);
    let serving = shared.clone();
    let thread = thread::Builder::new().name("sandbox-proxy".into()).spawn(move || {
        runtime.block_on(accept_all(serving, unix, tcp_listener, stopped));
        // A name still being resolved is not waited for.
        runtime.shutdown_background();
    })?;
    Ok(Proxy { shared, socket: socket.to_path_buf(), tcp, stop, thread: Some(thread) })
}

impl Proxy {
    /// The UNIX socket it listens on.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// The port of 127.0.0.1 it listens on, when started with `tcp`.
    pub fn tcp_port(&self) -> Option<u16> {
        self.tcp.map(|a| a.port())
    }

    /// Stops it: see [`Proxy`]. Returns once every connection is logged.
    pub fn stop(mut self) {
        self.halt();
    }

    /// Tells it to stop without waiting: its thread cuts the open
    /// connections and logs them while the caller goes on; [`Proxy::stop`]
    /// or dropping it then waits for the end.
    pub fn begin_stop(&self) {
        self.stop.send_replace(true);
    }

    fn halt(&mut self) {
        let Some(thread) = self.thread.take() else { return };
        self.stop.send_replace(true);
        let _ = thread.join();
        let _ = std::fs::remove_file(&self.socket);
        self.shared.record_limits();
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.halt();
    }
}

/// Whether the proxy is stopping (or its handle is gone).
async fn stopping(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

/// Accepts connections on `unix` and `tcp` until the proxy stops, each
/// served as a task of its own, then waits until each has ended and been
/// logged (the open ones are cut).
async fn accept_all(
    shared: Arc<Shared>,
    unix: UnixListener,
    tcp: Option<TcpListener>,
    mut stop: watch::Receiver<bool>,
) {
    let mut tasks = JoinSet::new();
    let accept_tcp = async |tcp: &Option<TcpListener>| match tcp {
        Some(l) => l.accept().await.map(|(s, _)| s),
        None => std::future::pending().await,
    };
    loop {
        while tasks.try_join_next().is_some() {}
        tokio::select! {
            got = unix.accept() => match got {
                Ok((s, _)) => {
                    tasks.spawn(connection(shared.clone(), s, stop.clone()));
                }
                // Out of descriptors, most likely: wait for some to be freed.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
            got = accept_tcp(&tcp) => match got {
                Ok(s) => {
                    let _ = s.set_nodelay(true);
                    tasks.spawn(connection(shared.clone(), s, stop.clone()));
                }
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
            () = stopping(&mut stop) => break,
        }
    }
    drop((unix, tcp));
    while tasks.join_next().await.is_some() {}
}

/// Serves one connection and logs it; past [`MAX_OPEN`] at once, refuses
/// it with a 503 ([`busy`]) and counts it.
async fn connection<S: Socket>(shared: Arc<Shared>, client: S, mut stop: watch::Receiver<bool>) {
    let Ok(_open) = shared.open.clone().try_acquire_owned() else {
        shared.busy.fetch_add(1, Ordering::SeqCst);
        let answer = busy();
        match shared.refusing.clone().try_acquire_owned() {
            Ok(_refusing) => {
                tokio::select! {
                    () = answer_and_close(client, &answer) => {}
                    () = stopping(&mut stop) => {}
                }
            }
            Err(_) => answer_at_once(client, &answer).await,
        }
        return;
    };
    let begun = Instant::now();
    let mut entry = Connection::default();
    let cut = tokio::select! {
        () = handle(&shared, client, &mut entry) => false,
        () = stopping(&mut stop) => true,
    };
    if cut && entry.error.is_none() {
        entry.error = Some("cut off when the proxy stopped".into());
    }
    entry.ms = u64::try_from(begun.elapsed().as_millis()).unwrap_or(u64::MAX);
    shared.record(&entry);
}

/// The 503 answer to a connection past [`MAX_OPEN`]. Pure.
fn busy() -> Vec<u8> {
    answer(
        503,
        "Service Unavailable",
        &format!(
            "retry-run sandbox: {MAX_OPEN} connections through the network proxy are open already, \
             the most a sandbox may have at once, so the proxy refused this one; close some and try again\n"
        ),
    )
}

/// Reads the request of `client`, judges it, and answers it or relays it
/// to its host; what happened goes into `entry`, as it happens (a
/// connection cut off keeps what it had carried).
async fn handle<S: Socket>(shared: &Shared, mut client: S, entry: &mut Connection) {
    let read = tokio::time::timeout(HEAD_TIMEOUT, read_head(&mut client, head_len, REQUEST_HEAD)).await;
    let (head, rest) = match read {
        Err(_) => {
            entry.error = Some("sent no whole request head in time".into());
            return;
        }
        Ok(Err(HeadError::Closed(why))) => {
            entry.error = Some(why.to_string());
            return;
        }
        Ok(Err(HeadError::Bad(why))) => {
            let answer = bad_request(&why);
            entry.error = Some(why);
            answer_and_close(client, &answer).await;
            return;
        }
        Ok(Ok(x)) => x,
    };
    let request = match parse_head(&head) {
        Ok(r) => r,
        Err(m) => {
            let answer = bad_request(&m.reason);
            entry.method = m.method;
            entry.error = Some(m.reason);
            answer_and_close(client, &answer).await;
            return;
        }
    };
    entry.host = request.host().to_string();
    entry.port = request.port();
    entry.method = request.method().to_string();
    if !allowed(&shared.rules, &entry.host, entry.port) {
        answer_and_close(client, &refusal(&entry.host, entry.port)).await;
        return;
    }
    entry.allowed = true;
    let upstream = match reach(&entry.host, entry.port).await {
        Ok(s) => s,
        Err(Unreached::Refused(why)) => {
            entry.allowed = false;
            let refused = answer(403, "Forbidden", &format!("retry-run sandbox: {why}\n"));
            entry.error = Some(why);
            answer_and_close(client, &refused).await;
            return;
        }
        Err(Unreached::Failed(why)) => {
            let failed = answer(502, "Bad Gateway", &format!("retry-run sandbox: {why}\n"));
            entry.error = Some(why);
            answer_and_close(client, &failed).await;
            return;
        }
    };
    let first = match request {
        Request::Connect { .. } => {
            if let Err(e) = client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").await {
                entry.error = Some(e.to_string());
                return;
            }
            rest
        }
        Request::Forward { mut head, .. } => {
            head.extend_from_slice(&rest);
            head
        }
    };
    let mut sniffed = Sniffed::default();
    let moved = (&mut entry.bytes_up, &mut entry.bytes_down);
    entry.error = splice(client, upstream, &first, false, moved, Some(&mut sniffed)).await;
    if let Some((status, retry_after)) = sniffed.answer {
        entry.status = Some(status);
        entry.retry_after = retry_after;
    }
}

/// Sends `answer` and closes `s` gently: its writing side first, then
/// whatever the client still sends is read and dropped until it closes too
/// (for [`LINGER`] at most), so that no reset for unread data makes the
/// client lose the answer.
async fn answer_and_close<S: Socket>(mut s: S, answer: &[u8]) {
    let _ = s.write_all(answer).await;
    let _ = s.shutdown().await;
    let mut sink = [0u8; 4096];
    let drain = async {
        while let Ok(n) = s.read(&mut sink).await
            && n > 0
        {}
    };
    let _ = tokio::time::timeout(LINGER, drain).await;
}

/// Sends `answer` and closes `s` without waiting for the client.
async fn answer_at_once<S: Socket>(mut s: S, answer: &[u8]) {
    let _ = tokio::time::timeout(LINGER, s.write_all(answer)).await;
    let _ = s.shutdown().await;
}

/// Why no request head could be read.
enum HeadError {
    /// The client went away; nobody to answer.
    Closed(&'static str),
    /// A head the proxy will not read (too long), to answer with a 400.
    Bad(String),
}

/// What [`read_head`] says of a peer that stops early: (before anything,
/// in the middle, broken off).
type Ends = [&'static str; 3];
const REQUEST_HEAD: Ends = [
    "closed before sending a request",
    "closed in the middle of its request head",
    "broke off while sending its request head",
];
const RESPONSE_HEAD: Ends = ["the proxy did not answer"; 3];

/// Reads from `s` until `head_len` finds a whole head: the head, blank line
/// included, and whatever came after it. When `head_len` finds that what
/// came is no head, all of it comes back as the head, for the parser to
/// say why.
async fn read_head<R: AsyncRead + Unpin, E>(
    s: &mut R,
    head_len: fn(&[u8]) -> Result<Option<usize>, E>,
    ends: Ends,
) -> Result<(Vec<u8>, Vec<u8>), HeadError> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        match head_len(&buf) {
            Ok(Some(n)) => {
                let rest = buf.split_off(n);
                return Ok((buf, rest));
            }
            Err(_) => return Ok((buf, Vec::new())),
            Ok(None) => {}
        }
        if buf.len() >= MAX_HEAD {
            return Err(HeadError::Bad(format!("the request head is longer than {} KiB", MAX_HEAD / 1024)));
        }
        match s.read(&mut chunk).await {
            Ok(0) if buf.is_empty() => return Err(HeadError::Closed(ends[0])),
            Ok(0) => return Err(HeadError::Closed(ends[1])),
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return Err(HeadError::Closed(ends[2])),
        }
    }
}

/// The length of the response head at the start of `buf`, as [`head_len`]
/// has it for a request. Pure.
fn response_len(buf: &[u8]) -> Result<Option<usize>, httparse::Error> {
    let mut headers = vec![httparse::EMPTY_HEADER; lines_in(buf)];
    match httparse::Response::new(&mut headers).parse(buf)? {
        httparse::Status::Complete(n) => Ok(Some(n)),
        httparse::Status::Partial => Ok(None),
    }
}

/// Why an allowed host was not reached.
enum Unreached {
    /// A name that resolves to this machine ([`usable`]).
    Refused(String),
    /// Not resolved, or no address answered in time.
    Failed(String),
}

/// A connection to `host:port`, trying each of its usable addresses within
/// [`CONNECT_TIMEOUT`] in all.
async fn reach(host: &str, port: u16) -> Result<TcpStream, Unreached> {
    let resolved: Vec<SocketAddr> = tokio::net::lookup_host((host, port))
        .await
        .map_err(|e| Unreached::Failed(format!("cannot resolve {host}: {e}")))?
        .collect();
    let addrs = usable(host, resolved).map_err(|e| Unreached::Refused(e.to_string()))?;
    let deadline = Instant::now() + CONNECT_TIMEOUT;
    let mut last = format!("{host} resolves to no address");
    for a in addrs {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            last = format!("no answer within {} s", CONNECT_TIMEOUT.as_secs());
            break;
        }
        match tokio::time::timeout(left, TcpStream::connect(a)).await {
            Ok(Ok(s)) => {
                let _ = s.set_nodelay(true);
                return Ok(s);
            }
            Ok(Err(e)) => last = format!("{a}: {e}"),
            Err(_) => last = format!("{a}: connection timed out"),
        }
    }
    Err(Unreached::Failed(format!("cannot connect to {}: {last}", authority(host, port))))
}

/// Relays `client` and `upstream` both ways until both directions end,
/// `up_first` sent upstream before anything else, counting the bytes each
/// way into `moved` (up, down) as they go. With `reply`, what comes down
/// starts with the proxy's answer to a CONNECT in `up_first`: a 200 is
/// taken out, anything else passed on. A direction that reaches its end
/// shuts down the writing side of the other socket (a half-close, which
/// the other side sees as the end of what it reads); a direction that
/// fails ends both, and both sockets are closed. Returns that failure.
async fn splice<A: Socket, B: Socket>(
    mut client: A,
    mut upstream: B,
    up_first: &[u8],
    reply: bool,
    moved: (&mut u64, &mut u64),
    sniff: Option<&mut Sniffed>,
) -> Option<String> {
    let (client_in, client_out) = client.halves();
    let (upstream_in, upstream_out) = upstream.halves();
    let up = pump(client_in, upstream_out, up_first, false, moved.0, None);
    let down = pump(upstream_in, client_out, &[], reply, moved.1, sniff);
    tokio::try_join!(up, down).err().map(|e| e.to_string())
}

/// Copies `from` to `to` until `from` ends, `first` before (and, with
/// `reply`, the answer to a CONNECT read first: see [`splice`]), counting
/// into `moved` what `to` got; then shuts down `to`'s writing side.
async fn pump(
    mut from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
    first: &[u8],
    reply: bool,
    moved: &mut u64,
    mut sniff: Option<&mut Sniffed>,
) -> io::Result<()> {
    to.write_all(first).await?;
    *moved += first.len() as u64;
    if reply {
        let (head, rest) = read_head(&mut from, response_len, RESPONSE_HEAD)
            .await
            .map_err(|_| io::Error::other("the proxy did not answer"))?;
        if status_of(&head) != Some(200) {
            to.write_all(&head).await?;
            *moved += head.len() as u64;
        }
        to.write_all(&rest).await?;
        *moved += rest.len() as u64;
    }
    let mut buf = vec![0u8; PIPE_BUFFER];
    loop {
        match from.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => {
                if let Some(s) = sniff.as_deref_mut() {
                    s.take(&buf[..n]);
                }
                to.write_all(&buf[..n]).await?;
                *moved += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let _ = to.shutdown().await;
    Ok(())
}

// ---------------------------------------------------------------------------
// Inside the namespace
// ---------------------------------------------------------------------------

/// The handle of [`inside`]'s runtime, once made.
static INSIDE: Mutex<Option<tokio::runtime::Handle>> = Mutex::new(None);

/// The runtime [`inside`] made, until [`start_inside`] gives it its thread.
static UNSTARTED: Mutex<Option<tokio::runtime::Runtime>> = Mutex::new(None);

/// The runtime of the forwarders and refusers inside a namespace: one,
/// made by the first of them, whose thread [`start_inside`] starts once
/// they are all made (before the process confines itself, so that the
/// connections a confined process opens cost it no thread).
fn inside() -> io::Result<tokio::runtime::Handle> {
    let mut handle = lock(&INSIDE);
    if let Some(h) = handle.as_ref() {
        return Ok(h.clone());
    }
    let runtime = tokio::runtime::Builder::new_current_thread().enable_io().enable_time().build()?;
    let h = runtime.handle().clone();
    *lock(&UNSTARTED) = Some(runtime);
    *handle = Some(h.clone());
    Ok(h)
}

/// Starts the thread of the forwarders and refusers made so far
/// ([`forward`], [`refuse_direct`]), when any were (`None`: none were).
/// Its first work is `confine` (the supervisor puts its seccomp filter on
/// it), before it runs any of them: the runtime's tasks run only on that
/// thread, so no connection is handled by a thread not yet confined, and
/// the caller need not wait for it. The receiver gets what `confine`
/// returned; when that is an error, the thread ends there and its
/// listeners close with the runtime (a connection to them is refused).
pub fn start_inside<E: Send + 'static>(
    confine: impl FnOnce() -> Result<(), E> + Send + 'static,
) -> Option<io::Result<std::sync::mpsc::Receiver<Result<(), E>>>> {
    let runtime = lock(&UNSTARTED).take()?;
    let (tx, rx) = std::sync::mpsc::channel();
    let spawned = thread::Builder::new().name("sandbox-forward".into()).spawn(move || {
        let confined = confine();
        let go_on = confined.is_ok();
        let _ = tx.send(confined);
        if go_on {
            runtime.block_on(std::future::pending::<()>());
        }
    });
    Some(spawned.map(|_| rx))
}

/// `listener` made a listener of the runtime `rt`.
fn listener_on(rt: &tokio::runtime::Handle, listener: std::net::TcpListener) -> io::Result<TcpListener> {
    listener.set_nonblocking(true)?;
    let _inside = rt.enter();
    TcpListener::from_std(listener)
}

/// Inside the namespace: listens on each of `ports` of its loopback, and
/// answers a connection there by recording it as refused (one line of
/// `log`, as the proxy records one, method `direct`) and closing it: the
/// agent that connects straight to a server of the machine's (a database,
/// a model server not named in its variables) is told the connection was
/// refused, and the record, the report and the next prompt say which
/// `[sandbox] network` line would allow it. At most [`LOG_CAP`] lines.
pub fn refuse_direct(ports: &[u16], log: std::fs::File) {
    let Ok(rt) = inside() else { return };
    let log = Arc::new(Mutex::new((log, 0u64)));
    for &port in ports {
        let Ok(listener) = std::net::TcpListener::bind(("127.0.0.1", port)) else { continue };
        let Ok(listener) = listener_on(&rt, listener) else { continue };
        let log = Arc::clone(&log);
        rt.spawn(async move {
            loop {
                let Ok((conn, _)) = listener.accept().await else {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                };
                // Closed with a reset, not an orderly end: the client's
                // next read or write fails.
                let _ = conn.set_zero_linger();
                drop(conn);
                record_direct(&log, port);
            }
        });
    }
}

/// Writes the line of a direct connection to `port` to the log, the first
/// [`LOG_CAP`] times.
fn record_direct(log: &Mutex<(std::fs::File, u64)>, port: u16) {
    let mut guard = lock(log);
    if guard.1 >= LOG_CAP {
        return;
    }
    guard.1 += 1;
    let c = Connection {
        host: "127.0.0.1".into(),
        port,
        allowed: false,
        method: "direct".into(),
        bytes_up: 0,
        bytes_down: 0,
        ms: 0,
        error: Some("a direct connection to this machine's loopback, not allowed".into()),
        ..Connection::default()
    };
    if let Ok(mut line) = serde_json::to_vec(&c) {
        line.push(b'\n');
        let _ = guard.0.write_all(&line);
    }
}

/// Runs the forwarder of a confined process's network namespace: every
/// connection accepted on `listener` (on 127.0.0.1 inside the namespace)
/// is carried to the proxy's UNIX socket `socket`.
///
/// With `target` `None`, bytes go through unchanged: `listener`'s port is
/// the HTTP proxy programs are given ([`proxy_env`]). With `Some((host,
/// port))`, the forwarder first asks the proxy for a `CONNECT host:port`
/// tunnel, then relays the connection through it: `listener` then stands for
/// that host inside the namespace (an allowed `127.0.0.1:41234` listened for
/// at the same port), so it is reached even by clients that never use a
/// proxy for loopback addresses. A refusal from the proxy is passed on to
/// the client as it came (a readable 403 for an HTTP client).
///
/// Every forwarder of the process runs on one thread, started by the first
/// ([`inside`]), for as long as the process lives. `Err` only when it
/// cannot be started.
pub fn forward(listener: std::net::TcpListener, socket: PathBuf, target: Option<Loopback>) -> io::Result<()> {
    let rt = inside()?;
    let listener = listener_on(&rt, listener)?;
    let there = Arc::new((socket, target));
    rt.spawn(async move {
        loop {
            let Ok((client, _)) = listener.accept().await else {
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            };
            let there = there.clone();
            tokio::spawn(async move { relay(client, &there.0, there.1.as_ref()).await });
        }
    });
    Ok(())
}

/// Carries one connection of the forwarder to the proxy. With a target,
/// the CONNECT goes first and the client's bytes right after it, without
/// waiting for the answer, which saves a round trip on every connection.
async fn relay(client: TcpStream, socket: &Path, target: Option<&Loopback>) {
    let _ = client.set_nodelay(true);
    let proxy = match UnixStream::connect(socket).await {
        Ok(p) => p,
        Err(e) => {
            if target.is_none() {
                let body = format!("retry-run sandbox: the network proxy cannot be reached ({e})\n");
                answer_and_close(client, &answer(502, "Bad Gateway", &body)).await;
            }
            return;
        }
    };
    let ask = match target {
        Some(Loopback { host, port }) => {
            let asked = authority(host, *port);
            format!("CONNECT {asked} HTTP/1.1\r\nHost: {asked}\r\n\r\n").into_bytes()
        }
        None => Vec::new(),
    };
    let (mut up, mut down) = (0, 0);
    splice(client, proxy, &ask, target.is_some(), (&mut up, &mut down), None).await;
}

/// The environment that points a confined process's programs at the proxy
/// listening on `port` of 127.0.0.1 (the forwarder's port inside a network
/// namespace, [`Proxy::tcp_port`] without one).
///
/// - `http_proxy`, `https_proxy`, `all_proxy` and their upper-case twins,
///   all `http://127.0.0.1:PORT`: each client reads its own set. curl reads
///   `http_proxy` only in lower case (and `HTTPS_PROXY`, `ALL_PROXY` in
///   either case); Python (urllib, requests, httpx), Go, reqwest, Bun, Deno
///   and undici's `EnvHttpProxyAgent` read either case, lower case first
///   where both are set; `ALL_PROXY` covers the clients that fall back to it
///   (curl, requests, httpx, reqwest). An HTTPS URL goes through as a
///   CONNECT tunnel, an http:// one in absolute form.
/// - `NODE_USE_ENV_PROXY=1`: Node's built-in `fetch` and `http`/`https`
///   ignore the variables above unless it is set (Node 24, and 22.21 on its
///   22 line); older Node ignores it, and a Node program that builds its own
///   agent still has to read them itself.
/// - `no_proxy` and `NO_PROXY` = `localhost,127.0.0.1,::1`, replacing any
///   the user had: loopback connections stay inside the namespace, where
///   they reach a server the confined process started itself and the
///   allowed loopback hosts [`forward`] mirrors at their own ports; sent
///   through the proxy, which runs outside the namespace, they would reach
///   the host's loopback instead and be refused. Go never proxies loopback
///   addresses anyway. Without a namespace, loopback is the host's either
///   way.
///
/// Programs that read none of these (Java, without its own `-D` options)
/// do not reach the network from a namespace.
pub fn proxy_env(port: u16) -> Vec<(String, String)> {
    let url = format!("http://127.0.0.1:{port}");
    let mut env: Vec<(String, String)> = ["http_proxy", "https_proxy", "all_proxy"]
        .iter()
        .flat_map(|n| [n.to_string(), n.to_ascii_uppercase()])
        .map(|n| (n, url.clone()))
        .collect();
    for n in ["no_proxy", "NO_PROXY"] {
        env.push((n.to_string(), "localhost,127.0.0.1,::1".to_string()));
    }
    env.push(("NODE_USE_ENV_PROXY".to_string(), "1".to_string()));
    env
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::{Shutdown, TcpListener, TcpStream};
    use std::os::unix::net::UnixStream;

    /// Reads from `s` until a blank line: the head and what came after it.
    fn read_head<S: Read>(s: &mut S) -> Result<(Vec<u8>, Vec<u8>), io::Error> {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let rest = buf.split_off(i + 4);
                return Ok((buf, rest));
            }
            let n = s.read(&mut chunk)?;
            if n == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
            buf.extend_from_slice(&chunk[..n]);
        }
    }

    #[test]
    fn rules_read_and_print_back() {
        let cases = [
            ("api.openai.com", "api.openai.com"),
            ("API.OpenAI.com.", "api.openai.com"),
            ("  api.openai.com:8443 ", "api.openai.com:8443"),
            ("*.Example.com", "*.example.com"),
            ("*.example.com:8080", "*.example.com:8080"),
            ("127.0.0.1:8080", "127.0.0.1:8080"),
            ("10.0.0.1", "10.0.0.1"),
            ("[::1]:443", "[::1]:443"),
            ("[0:0::1]", "[::1]"),
            ("localhost:41234", "localhost:41234"),
            ("my_host.internal", "my_host.internal"),
        ];
        for (text, want) in cases {
            let rule = parse_rule(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(rule.to_string(), want, "{text}");
            assert_eq!(parse_rule(want).unwrap(), rule, "{want} reads back");
        }
        assert_eq!("x.org:1".parse::<HostRule>().unwrap(), parse_rule("x.org:1").unwrap());
    }

    #[test]
    fn bad_rules_name_the_text_and_the_forms() {
        let cases = [
            ("", "empty"),
            ("https://api.openai.com/v1", "\"api.openai.com\""),
            ("api.openai.com/v1", "not a URL"),
            ("user@host", "not a URL"),
            ("host:", "port"),
            ("host:0", "port"),
            ("host:65536", "port"),
            ("host:+80", "port"),
            ("host:http", "port"),
            ("::1", "brackets"),
            ("[::1", "`]`"),
            ("[::1]x", "`]`"),
            ("[example.com]:80", "IPv6"),
            ("*", "wildcard"),
            ("a.*.com", "wildcard"),
            ("*.1.2.3.4", "domain name"),
            ("*.", "no host"),
            ("exa mple.com", "labels"),
            ("a..b", "labels"),
            ("127.1", "IPv4"),
            ("2130706433", "IPv4"),
            ("256.0.0.1:80", "IPv4"),
        ];
        for (text, part) in cases {
            let err = parse_rule(text).expect_err(text).to_string();
            assert!(err.contains(&format!("{text:?}")), "{text}: {err}");
            assert!(err.contains(part), "{text}: {err}");
            assert!(err.contains("host:port") && err.contains("[IPv6]:port"), "{text}: {err}");
        }
    }

    #[test]
    fn what_the_rules_allow() {
        let rules: Vec<HostRule> = ["api.openai.com", "*.anthropic.com", "127.0.0.1:8080", "[::1]:9000", "x.org:22"]
            .iter()
            .map(|r| parse_rule(r).unwrap())
            .collect();
        let cases = [
            ("api.openai.com", 443, true),
            ("api.openai.com", 80, true),
            ("API.OPENAI.COM.", 443, true),
            ("api.openai.com", 8443, false),
            ("openai.com", 443, false),
            ("evilapi.openai.com", 443, false),
            ("api.openai.com.evil.net", 443, false),
            ("x.anthropic.com", 443, true),
            ("a.b.anthropic.com", 80, true),
            ("anthropic.com", 443, false),
            ("xanthropic.com", 443, false),
            (".anthropic.com", 443, false),
            ("127.0.0.1", 8080, true),
            ("127.0.0.1", 443, false),
            ("127.1", 8080, false),
            ("localhost", 8080, false),
            ("::1", 9000, true),
            ("[::1]", 9000, true),
            ("[0::1]", 9000, true),
            ("::1", 443, false),
            ("x.org", 22, true),
            ("x.org", 443, false),
            ("", 443, false),
        ];
        for (host, port, want) in cases {
            assert_eq!(allowed(&rules, host, port), want, "{host}:{port}");
        }
        assert!(!allowed(&[], "api.openai.com", 443));
    }

    #[test]
    fn the_end_of_a_head() {
        assert_eq!(head_len(b"GET / HTTP/1.1\r\nHost: a\r\n\r\nbody"), Ok(Some(27)));
        assert_eq!(head_len(b"GET / HTTP/1.1\nHost: a\n\nbody"), Ok(Some(24)));
        assert_eq!(head_len(b"GET / HTTP/1.1\r\nHost: a\r\n"), Ok(None));
        assert_eq!(head_len(b"GET / HTTP/1.1\r\nHost: a\r\n\r"), Ok(None));
        assert_eq!(head_len(b""), Ok(None));
        assert!(head_len(b"hello\r\n").is_err());
        assert_eq!(response_len(b"HTTP/1.1 200 OK\r\n\r\nx"), Ok(Some(19)));
    }

    #[test]
    fn connect_heads() {
        let connect = |t: &str| parse_head(format!("CONNECT {t} HTTP/1.1\r\nHost: {t}\r\n\r\n").as_bytes());
        assert_eq!(
            connect("Api.OpenAI.com:443").unwrap(),
            Request::Connect { host: "api.openai.com".into(), port: 443 }
        );
        assert_eq!(connect("[::1]:8443").unwrap(), Request::Connect { host: "::1".into(), port: 8443 });
        let r = connect("127.0.0.1:8080").unwrap();
        assert_eq!((r.host(), r.port(), r.method()), ("127.0.0.1", 8080, "CONNECT"));
        for (target, part) in [("api.openai.com", "no port"), ("a.com:0", "port"), ("a b.com:443", "request line")] {
            let m = connect(target).expect_err(target);
            assert!(m.reason.contains(part), "{target}: {m:?}");
            assert_eq!(m.method, "CONNECT");
        }
    }

    #[test]
    fn absolute_form_becomes_origin_form() {
        let head = b"POST http://Example.com:8080/a/b?q=1#frag HTTP/1.1\r\n\
                     Host: elsewhere.net\r\n\
                     Proxy-Connection: keep-alive\r\n\
                     proxy-authorization: Basic eA==\r\n\
                     Connection: keep-alive\r\n\
                     Keep-Alive: timeout=5\r\n\
                     Content-Length: 3\r\n\
                     X-Thing:  kept as is \r\n\r\n";
        let Request::Forward { method, host, port, head } = parse_head(head).unwrap() else { panic!("not forwarded") };
        assert_eq!((method.as_str(), host.as_str(), port), ("POST", "example.com", 8080));
        assert_eq!(
            String::from_utf8(head).unwrap(),
            "POST /a/b?q=1 HTTP/1.1\r\nHost: Example.com:8080\r\nContent-Length: 3\r\nX-Thing:  kept as is \r\n\
             Connection: close\r\n\r\n"
        );
        let origin = |target: &str| match parse_head(format!("GET {target} HTTP/1.0\n\n").as_bytes()).unwrap() {
            Request::Forward { head, port, .. } => (String::from_utf8(head).unwrap(), port),
            other => panic!("{other:?}"),
        };
        assert_eq!(origin("http://a.com"), ("GET / HTTP/1.0\r\nHost: a.com\r\nConnection: close\r\n\r\n".into(), 80));
        assert_eq!(origin("HTTP://a.com?x").0, "GET /?x HTTP/1.0\r\nHost: a.com\r\nConnection: close\r\n\r\n");
        assert_eq!(origin("http://[::1]:81/").1, 81);
        let upgrade = b"GET http://a.com/ws HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n";
        let Request::Forward { head, .. } = parse_head(upgrade).unwrap() else { panic!("not forwarded") };
        assert!(String::from_utf8(head).unwrap().ends_with("Upgrade: websocket\r\nConnection: upgrade\r\n\r\n"));
    }

    #[test]
    fn malformed_heads() {
        let cases: [(&[u8], &str, &str); 11] = [
            (b"GET /path HTTP/1.1\r\nHost: a.com\r\n\r\n", "GET", "whole URL"),
            (b"GET https://a.com/ HTTP/1.1\r\n\r\n", "GET", "CONNECT"),
            (b"GET ftp://a.com/ HTTP/1.1\r\n\r\n", "GET", "http://"),
            (b"GET http://u:p@a.com/ HTTP/1.1\r\n\r\n", "GET", "user name"),
            (b"GET http://a.com/ HTTP/2.0\r\n\r\n", "GET", "HTTP/1.1"),
            (b"GET http://a.com/\r\n\r\n", "GET", "METHOD target"),
            (b"G(T http://a.com/ HTTP/1.1\r\n\r\n", "G(T", "METHOD target"),
            (b"GET http://a.com/ HTTP/1.1\r\nX-A: 1\r\n  folded\r\n\r\n", "GET", "folded"),
            (b"GET http://a.com/ HTTP/1.1\r\nno colon\r\n\r\n", "GET", "no `:`"),
            (b"GET http://a..com/ HTTP/1.1\r\n\r\n", "GET", "labels"),
            (b"\xff\xfe / HTTP/1.1\r\n\r\n", "\u{fffd}\u{fffd}", "not text"),
        ];
        for (head, method, part) in cases {
            let m = parse_head(head).expect_err(&String::from_utf8_lossy(head));
            assert_eq!(m.method, method, "{m:?}");
            assert!(m.reason.contains(part), "{m:?}");
        }
        let answer = String::from_utf8(bad_request("why")).unwrap();
        assert!(answer.starts_with("HTTP/1.1 400 Bad Request\r\n") && answer.ends_with("request: why\n"), "{answer}");
    }

    #[test]
    fn a_refusal_names_the_host_and_the_list() {
        let text = String::from_utf8(refusal("evil.example", 443)).unwrap();
        assert!(text.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{text}");
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.contains(&format!("Content-Length: {}", body.len())), "{text}");
        assert!(body.contains("evil.example:443 is not in the sandbox's network list"), "{body}");
        assert!(body.contains("[sandbox]") && body.contains("--network evil.example\n"), "{body}");
        let odd = String::from_utf8(refusal("::1", 8080)).unwrap();
        assert!(odd.contains("--network [::1]:8080\n"), "{odd}");
        assert_eq!(status_of(text.as_bytes()), Some(403));
        assert_eq!(status_of(b"HTTP/1.1 200 Connection established\r\n\r\n"), Some(200));
        assert_eq!(status_of(b"SSH-2.0-x\r\n"), None);
    }

    #[test]
    fn the_first_plain_answer_is_read_as_it_passes() {
        let answer = b"HTTP/1.1 529 Overloaded\r\nContent-Type: application/json\r\nretry-after: 3\r\n\r\n{}";
        for cut in [1, 5, 20, answer.len()] {
            let mut s = Sniffed::default();
            s.take(&answer[..cut]);
            s.take(&answer[cut..]);
            s.take(b"HTTP/1.1 200 OK\r\n\r\n");
            assert_eq!(s.answer, Some((529, Some("3".to_string()))), "cut at {cut}");
        }
        let mut tls = Sniffed::default();
        tls.take(&[0x16, 0x03, 0x03, 0x00, 0x2a]);
        tls.take(b"HTTP/1.1 200 OK\r\n\r\n");
        assert_eq!((tls.answer, tls.done), (None, true));
        let mut plain = Sniffed::default();
        plain.take(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
        assert_eq!(plain.answer, Some((200, None)));
    }

    #[test]
    fn names_that_resolve_to_this_machine() {
        let a = |s: &str| s.parse::<SocketAddr>().unwrap();
        let local = vec![a("127.0.0.1:80"), a("[::1]:80")];
        assert_eq!(usable("localhost", local.clone()).unwrap(), local);
        assert_eq!(usable("db.localhost", local.clone()).unwrap(), local);
        assert_eq!(usable("127.0.0.1", vec![a("127.0.0.1:80")]).unwrap(), [a("127.0.0.1:80")]);
        let err = usable("evil.example.com", local).unwrap_err().to_string();
        assert!(err.contains("evil.example.com resolves to 127.0.0.1"), "{err}");
        assert!(usable("x.com", vec![a("0.0.0.0:80")]).is_err());
        assert!(usable("x.com", vec![a("[::ffff:127.0.0.1]:80")]).is_err());
        let mixed = vec![a("127.0.0.1:443"), a("93.184.216.34:443")];
        assert_eq!(usable("x.com", mixed).unwrap(), [a("93.184.216.34:443")]);
    }

    #[test]
    fn the_environment_points_at_the_proxy() {
        let env = proxy_env(3128);
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        for k in ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"] {
            assert_eq!(get(k), Some("http://127.0.0.1:3128"), "{k}");
        }
        assert_eq!(get("NO_PROXY"), Some("localhost,127.0.0.1,::1"));
        assert_eq!(get("no_proxy"), get("NO_PROXY"));
        assert_eq!(get("NODE_USE_ENV_PROXY"), Some("1"));
    }

    #[test]
    fn the_log_skips_what_it_cannot_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("net.jsonl");
        assert!(read_log(&path).is_empty());
        let c = Connection {
            host: "a.com".into(),
            port: 443,
            allowed: true,
            method: "CONNECT".into(),
            bytes_up: 1,
            bytes_down: 2,
            ms: 3,
            error: None,
            ..Connection::default()
        };
        let line = serde_json::to_string(&c).unwrap();
        assert!(!line.contains("error"), "{line}");
        std::fs::write(&path, format!("{line}\nnot json\n{{\"host\":\"cut")).unwrap();
        assert_eq!(read_log(&path), [c]);
    }

    // -- with real sockets on 127.0.0.1 --------------------------------------

    /// A server that sends back what it gets, until the client half-closes.
    fn echo_server() -> u16 {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        thread::spawn(move || {
            for s in listener.incoming().flatten() {
                thread::spawn(move || {
                    let mut r = s.try_clone().unwrap();
                    let mut w = s;
                    let _ = io::copy(&mut r, &mut w);
                    let _ = w.shutdown(Shutdown::Write);
                });
            }
        });
        port
    }

    /// A server that answers one HTTP request per connection with `ok` and
    /// sends the request head it got to the test.
    fn http_server() -> (u16, std::sync::mpsc::Receiver<String>) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (tx, rx) = std::sync::mpsc::channel();
        thread::spawn(move || {
            for mut s in listener.incoming().flatten() {
                let Ok((head, _)) = read_head(&mut s) else { continue };
                let _ = tx.send(String::from_utf8_lossy(&head).into_owned());
                let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
            }
        });
        (port, rx)
    }

    fn ask<S: Read + Write>(mut s: S, request: &str) -> String {
        s.write_all(request.as_bytes()).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    /// Through a CONNECT answered 200 on `s`: `msg` sent, the writing side
    /// closed, and what comes back until the end.
    fn tunnel(mut s: UnixStream, target: &str, msg: &str) -> String {
        s.write_all(format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n").as_bytes()).unwrap();
        let (head, rest) = read_head(&mut s).ok().unwrap();
        assert_eq!(status_of(&head), Some(200), "{}", String::from_utf8_lossy(&head));
        assert!(rest.is_empty());
        s.write_all(msg.as_bytes()).unwrap();
        s.shutdown(Shutdown::Write).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out
    }

    #[test]
    fn the_proxy_tunnels_forwards_refuses_and_logs() {
        let echo = echo_server();
        let (web, heads) = http_server();
        let dir = tempfile::tempdir().unwrap();
        let (socket, log) = (dir.path().join("proxy.sock"), dir.path().join("net.jsonl"));
        let rules =
            vec![parse_rule(&format!("127.0.0.1:{echo}")).unwrap(), parse_rule(&format!("localhost:{web}")).unwrap()];
        let proxy = start(rules, &socket, Some(log.clone()), true).unwrap();
        assert_eq!(proxy.socket(), socket);
        let tcp = proxy.tcp_port().unwrap();

        // CONNECT, allowed: piped both ways, half-close included.
        let got = tunnel(UnixStream::connect(&socket).unwrap(), &format!("127.0.0.1:{echo}"), "hello");
        assert_eq!(got, "hello");

        // A refused host, over TCP this time.
        let refused = ask(TcpStream::connect(("127.0.0.1", tcp)).unwrap(), "CONNECT evil.example:443 HTTP/1.1\r\n\r\n");
        assert!(refused.starts_with("HTTP/1.1 403 Forbidden"), "{refused}");
        assert!(refused.contains("evil.example:443 is not in the sandbox's network list"), "{refused}");

        // The same echo port under another name is refused too.
        let other = ask(UnixStream::connect(&socket).unwrap(), &format!("CONNECT localhost:{echo} HTTP/1.1\r\n\r\n"));
        assert!(other.starts_with("HTTP/1.1 403"), "{other}");

        // Plain HTTP in absolute form, forwarded in origin form.
        let request = format!(
            "GET http://localhost:{web}/p?q=1 HTTP/1.1\r\nHost: localhost:{web}\r\nProxy-Connection: keep-alive\r\nX-Kept: yes\r\n\r\n"
        );
        let response = ask(UnixStream::connect(&socket).unwrap(), &request);
        assert!(response.starts_with("HTTP/1.1 200 OK") && response.ends_with("\r\n\r\nok"), "{response}");
        let seen = heads.recv().unwrap();
        assert!(seen.starts_with(&format!("GET /p?q=1 HTTP/1.1\r\nHost: localhost:{web}\r\n")), "{seen}");
        assert!(seen.contains("X-Kept: yes\r\n") && !seen.to_ascii_lowercase().contains("proxy-"), "{seen}");

        // Not HTTP at all.
        let bad = ask(UnixStream::connect(&socket).unwrap(), "hello\r\n\r\n");
        assert!(bad.starts_with("HTTP/1.1 400 Bad Request"), "{bad}");

        // An allowed host that does not answer: 502.
        let closed = TcpListener::bind("127.0.0.1:0").unwrap();
        let closed_port = closed.local_addr().unwrap().port();
        drop(closed);
        proxy.stop();
        assert!(!socket.exists(), "the socket file is removed");
        let rules = vec![parse_rule(&format!("127.0.0.1:{closed_port}")).unwrap()];
        let proxy = start(rules, &socket, Some(log.clone()), false).unwrap();
        assert_eq!(proxy.tcp_port(), None);
        let gone =
            ask(UnixStream::connect(&socket).unwrap(), &format!("CONNECT 127.0.0.1:{closed_port} HTTP/1.1\r\n\r\n"));
        assert!(gone.starts_with("HTTP/1.1 502 Bad Gateway"), "{gone}");
        drop(proxy);

        let entries = read_log(&log);
        let brief: Vec<(&str, u16, bool, &str)> =
            entries.iter().map(|c| (c.host.as_str(), c.port, c.allowed, c.method.as_str())).collect();
        assert_eq!(entries.len(), 6, "{entries:#?}");
        for want in [
            ("127.0.0.1", echo, true, "CONNECT"),
            ("evil.example", 443, false, "CONNECT"),
            ("localhost", echo, false, "CONNECT"),
            ("localhost", web, true, "GET"),
            ("", 0, false, "hello"),
            ("127.0.0.1", closed_port, true, "CONNECT"),
        ] {
            assert!(brief.contains(&want), "{want:?} not in {brief:?}");
        }
        let tunnelled = entries.iter().find(|c| c.port == echo && c.allowed).unwrap();
        assert_eq!((tunnelled.bytes_up, tunnelled.bytes_down, &tunnelled.error), (5, 5, &None));
        let refused = entries.iter().find(|c| c.host == "evil.example").unwrap();
        assert_eq!((refused.bytes_up, refused.bytes_down, &refused.error), (0, 0, &None));
        let forwarded = entries.iter().find(|c| c.method == "GET").unwrap();
        assert!(forwarded.bytes_up > 0 && forwarded.bytes_down == response.len() as u64, "{forwarded:?}");
        assert_eq!(
            (forwarded.status, tunnelled.status),
            (Some(200), None),
            "the first answer's status, when it is HTTP"
        );
        assert!(entries.iter().find(|c| c.method == "hello").unwrap().error.is_some());
        assert!(
            entries.iter().find(|c| c.port == closed_port).unwrap().error.as_ref().unwrap().contains("cannot connect")
        );
    }

    #[test]
    fn the_forwarder_carries_connections_to_the_proxy() {
        let echo = echo_server();
        let dir = tempfile::tempdir().unwrap();
        let (socket, log) = (dir.path().join("proxy.sock"), dir.path().join("net.jsonl"));
        let proxy =
            start(vec![parse_rule(&format!("127.0.0.1:{echo}")).unwrap()], &socket, Some(log.clone()), false).unwrap();

        // The proxy port: the client speaks to the proxy through it.
        let raw = TcpListener::bind("127.0.0.1:0").unwrap();
        let raw_port = raw.local_addr().unwrap().port();
        forward(raw, socket.clone(), None).unwrap();
        // Nothing is served before its thread starts (the supervisor's
        // filter its first work); what is made later is served at once.
        let mut early = TcpStream::connect(("127.0.0.1", raw_port)).unwrap();
        early.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
        early.write_all(format!("CONNECT 127.0.0.1:{echo} HTTP/1.1\r\n\r\n").as_bytes()).unwrap();
        let mut nothing = [0u8; 1];
        assert!(early.read(&mut nothing).is_err(), "served before the thread started");
        let confined = start_inside(|| Ok::<(), ()>(())).expect("a runtime to start").unwrap();
        assert_eq!(confined.recv().unwrap(), Ok(()));
        assert!(start_inside(|| Ok::<(), ()>(())).is_none(), "started once");
        let (head, _) = read_head(&mut early).ok().unwrap();
        assert_eq!(status_of(&head), Some(200), "served once the thread started");
        drop(early);
        let mut s = TcpStream::connect(("127.0.0.1", raw_port)).unwrap();
        s.write_all(format!("CONNECT 127.0.0.1:{echo} HTTP/1.1\r\n\r\n").as_bytes()).unwrap();
        let (head, _) = read_head(&mut s).ok().unwrap();
        assert_eq!(status_of(&head), Some(200));
        s.write_all(b"through").unwrap();
        s.shutdown(Shutdown::Write).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        assert_eq!(out, "through");

        // A mirrored host: the client speaks to the echo server itself.
        let mirror = TcpListener::bind("127.0.0.1:0").unwrap();
        let mirror_port = mirror.local_addr().unwrap().port();
        forward(mirror, socket.clone(), Some(Loopback { host: "127.0.0.1".into(), port: echo })).unwrap();
        let mut s = TcpStream::connect(("127.0.0.1", mirror_port)).unwrap();
        s.write_all(b"mirrored").unwrap();
        s.shutdown(Shutdown::Write).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        assert_eq!(out, "mirrored");

        // A mirrored host the proxy refuses: the client gets the refusal.
        let refused = TcpListener::bind("127.0.0.1:0").unwrap();
        let refused_port = refused.local_addr().unwrap().port();
        forward(refused, socket.clone(), Some(Loopback { host: "::1".into(), port: 9 })).unwrap();
        let answer = ask(TcpStream::connect(("127.0.0.1", refused_port)).unwrap(), "");
        assert!(answer.starts_with("HTTP/1.1 403") && answer.contains("[::1]:9 is not in"), "{answer}");

        // A tunnel still open when the proxy stops is cut, and logged.
        let mut open = TcpStream::connect(("127.0.0.1", mirror_port)).unwrap();
        open.write_all(b"x").unwrap();
        let mut one = [0u8; 1];
        open.read_exact(&mut one).unwrap();
        proxy.stop();
        let mut rest = Vec::new();
        let _ = open.read_to_end(&mut rest);

        // Lines are written as connections end, not in the order they began.
        let entries = read_log(&log);
        let mut brief: Vec<(&str, u16, bool, u64, u64)> =
            entries.iter().map(|c| (c.host.as_str(), c.port, c.allowed, c.bytes_up, c.bytes_down)).collect();
        brief.sort();
        assert_eq!(
            brief,
            [
                ("127.0.0.1", echo, true, 0, 0),
                ("127.0.0.1", echo, true, 1, 1),
                ("127.0.0.1", echo, true, 7, 7),
                ("127.0.0.1", echo, true, 8, 8),
                ("::1", 9, false, 0, 0)
            ]
        );

        // With the proxy gone, the proxy port answers 502.
        let gone = TcpListener::bind("127.0.0.1:0").unwrap();
        let gone_port = gone.local_addr().unwrap().port();
        forward(gone, socket, None).unwrap();
        let answer = ask(TcpStream::connect(("127.0.0.1", gone_port)).unwrap(), "CONNECT a.com:443 HTTP/1.1\r\n\r\n");
        assert!(answer.starts_with("HTTP/1.1 502"), "{answer}");
    }
}
