//! A request head read ([`parse_head`], with `httparse`): what a client
//! asked the proxy for, and the proxy's own answers. Pure.

use super::rules::{authority, canonical_host, parse_port, split_authority};

// ---------------------------------------------------------------------------
// The request head
// ---------------------------------------------------------------------------

/// What a client asked the proxy for, read from its request head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asked {
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

impl Asked {
    /// The host asked for, canonical ([`allowed`]'s form).
    pub fn host(&self) -> &str {
        match self {
            Asked::Connect { host, .. } | Asked::Forward { host, .. } => host,
        }
    }

    /// The port asked for.
    pub fn port(&self) -> u16 {
        match self {
            Asked::Connect { port, .. } | Asked::Forward { port, .. } => *port,
        }
    }

    /// The request's method.
    pub fn method(&self) -> &str {
        match self {
            Asked::Connect { .. } => "CONNECT",
            Asked::Forward { method, .. } => method,
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
pub(super) fn lines_in(head: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', head).count() + 1
}

/// The request line that is not one, in words.
pub(super) const NOT_A_REQUEST_LINE: &str = "the request line is not `METHOD target HTTP/1.1`";

/// Reads a request head (the request line and the headers, up to the blank
/// line) with `httparse`: a `CONNECT host:port` or an absolute-form
/// `http://` request, which comes back rewritten to origin form
/// ([`Asked::Forward`]), its headers passed on byte for byte. Pure.
pub fn parse_head(head: &[u8]) -> Result<Asked, Malformed> {
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
        return Ok(Asked::Connect { host, port });
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
    Ok(Asked::Forward { method: method.to_string(), host, port, head: out })
}

/// The header line of `head` that starts at `name` (a slice `httparse`
/// took from `head`), without its line end: the value as the client wrote
/// it, spaces included, where `httparse` trims them.
pub(super) fn raw_line<'h>(head: &'h [u8], name: &str) -> &'h [u8] {
    let start = (name.as_ptr() as usize).saturating_sub(head.as_ptr() as usize).min(head.len());
    let line = &head[start..];
    let line = &line[..memchr::memchr(b'\n', line).unwrap_or(line.len())];
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// The authority and the origin-form target (`/path?query`, no fragment)
/// of an absolute-form `http://` target; `Err` says why it is not one.
pub(super) fn split_absolute(target: &str) -> Result<(&str, String), &'static str> {
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
pub(super) fn why_malformed(head: &[u8], error: httparse::Error) -> &'static str {
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
pub(super) fn parse_target_authority(text: &str, default: Option<u16>) -> Result<(String, u16), &'static str> {
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
pub(super) fn bad_request(reason: &str) -> Vec<u8> {
    answer(400, "Bad Request", &format!("retry-run sandbox: the network proxy cannot serve this request: {reason}\n"))
}

/// The status code of a response head, read by `httparse`.
pub(super) fn status_of(head: &[u8]) -> Option<u16> {
    answer_of(head).map(|(status, _)| status)
}

/// The status code of a response head and its `Retry-After` header. Pure.
pub(super) fn answer_of(head: &[u8]) -> Option<(u16, Option<String>)> {
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
pub(super) struct Sniffed {
    head: Vec<u8>,
    pub(super) done: bool,
    pub(super) answer: Option<(u16, Option<String>)>,
}

impl Sniffed {
    /// Takes in the next bytes the host sent, until its first head is
    /// whole, or they cannot be one (TLS, or longer than a head may be).
    pub(super) fn take(&mut self, bytes: &[u8]) {
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

/// The longest request head the proxy reads.
pub(super) const MAX_HEAD: usize = 64 * 1024;

/// The length of the response head at the start of `buf`, as [`head_len`]
/// has it for a request. Pure.
pub(super) fn response_len(buf: &[u8]) -> Result<Option<usize>, httparse::Error> {
    let mut headers = vec![httparse::EMPTY_HEADER; lines_in(buf)];
    match httparse::Response::new(&mut headers).parse(buf)? {
        httparse::Status::Complete(n) => Ok(Some(n)),
        httparse::Status::Partial => Ok(None),
    }
}
