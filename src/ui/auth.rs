//! Who may ask the web view anything: the pure decisions of its safety
//! (docs/ui.md). The server answers only a request that names it by its
//! loopback address (`Host` is `127.0.0.1:PORT` or `localhost:PORT`, so a
//! DNS-rebound name gets nothing) and carries its token: in the URL it
//! printed (the first visit, which sets a cookie and sends the browser on
//! to the same URL without the token), then in that cookie (HttpOnly,
//! SameSite=Strict). An action (a POST) must carry the token in its form
//! and come from the server's own origin (`Origin`, else `Referer`).
//! Every response carries the headers of [`HEADERS`].

/// The headers every response carries: a Content-Security-Policy that
/// allows the server's own script and styles and nothing inline, no
/// sniffing, no referrer.
pub(crate) const HEADERS: &[(&str, &str)] = &[
    (
        "content-security-policy",
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    ),
    ("x-content-type-options", "nosniff"),
    ("referrer-policy", "same-origin"),
];

/// The server being asked: its token and port.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Server<'a> {
    pub token: &'a str,
    pub port: u16,
}

impl Server<'_> {
    /// The cookie that carries the token after the first visit; named
    /// for the port, so that two servers do not take each other's.
    pub(crate) fn cookie_name(&self) -> String {
        format!("retry-run-ui-{}", self.port)
    }

    /// `Set-Cookie` of the first visit.
    pub(crate) fn set_cookie(&self) -> String {
        format!("{}={}; Path=/; HttpOnly; SameSite=Strict", self.cookie_name(), self.token)
    }

    fn origins(&self) -> [String; 2] {
        [format!("http://127.0.0.1:{}", self.port), format!("http://localhost:{}", self.port)]
    }
}

/// What a request shows of itself.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Shown<'a> {
    pub post: bool,
    pub host: Option<&'a str>,
    /// The `Cookie` header, whole.
    pub cookie: Option<&'a str>,
    /// `?token=` of the URL.
    pub query_token: Option<&'a str>,
    /// The form's `token` field (a POST's).
    pub form_token: Option<&'a str>,
    pub origin: Option<&'a str>,
    pub referer: Option<&'a str>,
}

/// What the server does with a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Answer it.
    Pass,
    /// The first visit: set the cookie, send the browser on to the same
    /// URL without the token.
    Enter,
    /// 403, with this plain message.
    Refuse(String),
}

/// What the server does with `seen`.
pub(crate) fn decide(server: Server<'_>, seen: Shown<'_>) -> Decision {
    let hosts = [format!("127.0.0.1:{}", server.port), format!("localhost:{}", server.port)];
    if !seen.host.is_some_and(|h| hosts.iter().any(|ok| h.eq_ignore_ascii_case(ok))) {
        return Decision::Refuse(format!(
            "retry-run ui: refused: this server answers only to http://127.0.0.1:{port} or http://localhost:{port} (the request's Host is {})",
            seen.host.map(|h| format!("{h:?}")).unwrap_or_else(|| "missing".into()),
            port = server.port
        ));
    }
    let again = "open the URL `retry-run ui` printed (http://127.0.0.1:PORT/?token=…)";
    if seen.post {
        if !seen.form_token.is_some_and(|t| same(t, server.token)) {
            return Decision::Refuse(format!(
                "retry-run ui: refused: the form does not carry this server's token; reload the page and send it again, or {again}"
            ));
        }
        let origins = server.origins();
        let from = match (seen.origin, seen.referer) {
            (Some(o), _) => origins.iter().any(|ok| o == ok).then_some(()).ok_or(o),
            (None, Some(r)) => origins
                .iter()
                .any(|ok| r == ok || r.strip_prefix(ok.as_str()).is_some_and(|rest| rest.starts_with('/')))
                .then_some(())
                .ok_or(r),
            (None, None) => Err("nowhere (no Origin or Referer)"),
        };
        return match from {
            Ok(()) => Decision::Pass,
            Err(o) => Decision::Refuse(format!(
                "retry-run ui: refused: an action must come from this server's own pages, not from {o}"
            )),
        };
    }
    if let Some(t) = seen.query_token {
        return if same(t, server.token) {
            Decision::Enter
        } else {
            Decision::Refuse(format!("retry-run ui: refused: the token in the URL is not this server's; {again}"))
        };
    }
    match seen.cookie.and_then(|c| cookie(c, &server.cookie_name())) {
        Some(t) if same(t, server.token) => Decision::Pass,
        Some(_) => Decision::Refuse(format!("retry-run ui: refused: the cookie's token is not this server's; {again}")),
        None => Decision::Refuse(format!("retry-run ui: refused: no token; {again}")),
    }
}

/// The value of the cookie `name` in a `Cookie` header.
fn cookie<'a>(header: &'a str, name: &str) -> Option<&'a str> {
    header.split(';').filter_map(|kv| kv.trim().split_once('=')).find(|(k, _)| *k == name).map(|(_, v)| v)
}

/// Whether `a` is `b`, in a time that does not tell how much of it is.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Where the first visit sends the browser: `path` with the query's
/// other pairs, without `token`.
pub(crate) fn without_token(path: &str, query: &[(String, String)]) -> String {
    let kept: Vec<&(String, String)> = query.iter().filter(|(k, _)| k != "token").collect();
    if kept.is_empty() {
        return path.to_string();
    }
    let mut q = form_urlencoded::Serializer::new(String::new());
    for (k, v) in kept {
        q.append_pair(k, v);
    }
    format!("{path}?{}", q.finish())
}

/// A token: 32 bytes as 64 hex digits.
pub(crate) fn token_of(bytes: &[u8; 32]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
    const WRONG: &str = "1123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

    fn server() -> Server<'static> {
        Server { token: T, port: 8123 }
    }

    fn get(host: &'static str) -> Shown<'static> {
        Shown { host: Some(host), ..Shown::default() }
    }

    fn post(
        origin: Option<&'static str>,
        referer: Option<&'static str>,
        token: Option<&'static str>,
    ) -> Shown<'static> {
        Shown { post: true, host: Some("127.0.0.1:8123"), origin, referer, form_token: token, ..Shown::default() }
    }

    fn refused(d: &Decision, says: &str) -> bool {
        matches!(d, Decision::Refuse(m) if m.contains(says))
    }

    #[test]
    fn requests_are_answered_only_with_the_token_on_loopback() {
        let cookie = "retry-run-ui-8123=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        let other_port = "retry-run-ui-9000=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
        let cases: Vec<(&str, Shown<'static>, &str)> = vec![
            ("first visit", Shown { query_token: Some(T), ..get("127.0.0.1:8123") }, "enter"),
            ("first visit, localhost", Shown { query_token: Some(T), ..get("localhost:8123") }, "enter"),
            (
                "wrong token in the URL",
                Shown { query_token: Some(WRONG), ..get("127.0.0.1:8123") },
                "not this server's",
            ),
            ("short token", Shown { query_token: Some("0123"), ..get("127.0.0.1:8123") }, "not this server's"),
            ("the cookie", Shown { cookie: Some(cookie), ..get("127.0.0.1:8123") }, "pass"),
            (
                "the cookie among others",
                Shown {
                    cookie: Some(
                        "a=b; retry-run-ui-8123=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef; c=d",
                    ),
                    ..get("localhost:8123")
                },
                "pass",
            ),
            ("another server's cookie", Shown { cookie: Some(other_port), ..get("127.0.0.1:8123") }, "no token"),
            (
                "a wrong cookie",
                Shown { cookie: Some("retry-run-ui-8123=x"), ..get("127.0.0.1:8123") },
                "cookie's token",
            ),
            ("nothing", get("127.0.0.1:8123"), "no token"),
            ("rebound name", Shown { cookie: Some(cookie), ..get("evil.example:8123") }, "answers only"),
            ("rebound name with the token", Shown { query_token: Some(T), ..get("evil.example:8123") }, "answers only"),
            ("another port", Shown { cookie: Some(cookie), ..get("127.0.0.1:80") }, "answers only"),
            ("no port", Shown { cookie: Some(cookie), ..get("127.0.0.1") }, "answers only"),
            ("no host", Shown { cookie: Some(cookie), ..Shown::default() }, "missing"),
            ("0.0.0.0", Shown { cookie: Some(cookie), ..get("0.0.0.0:8123") }, "answers only"),
            ("a POST from the page", post(Some("http://127.0.0.1:8123"), None, Some(T)), "pass"),
            ("a POST from localhost", post(Some("http://localhost:8123"), None, Some(T)), "pass"),
            ("a POST with a Referer only", post(None, Some("http://127.0.0.1:8123/tasks/a"), Some(T)), "pass"),
            (
                "a POST from another origin",
                post(Some("http://evil.example"), None, Some(T)),
                "not from http://evil.example",
            ),
            ("a POST from another port", post(Some("http://127.0.0.1:8124"), None, Some(T)), "own pages"),
            ("a POST from a longer origin", post(Some("http://127.0.0.1:81234"), None, Some(T)), "own pages"),
            ("a POST from a null origin", post(Some("null"), Some("http://127.0.0.1:8123/"), Some(T)), "own pages"),
            (
                "a POST with a lookalike Referer",
                post(None, Some("http://127.0.0.1:8123.evil.example/"), Some(T)),
                "own pages",
            ),
            ("a POST from nowhere", post(None, None, Some(T)), "no Origin or Referer"),
            ("a POST without the token", post(Some("http://127.0.0.1:8123"), None, None), "form does not carry"),
            (
                "a POST with a wrong token",
                post(Some("http://127.0.0.1:8123"), None, Some(WRONG)),
                "form does not carry",
            ),
            (
                "a POST with the cookie only",
                Shown { cookie: Some(cookie), ..post(Some("http://127.0.0.1:8123"), None, None) },
                "form does not carry",
            ),
        ];
        for (name, seen, want) in cases {
            let d = decide(server(), seen);
            let ok = match want {
                "pass" => d == Decision::Pass,
                "enter" => d == Decision::Enter,
                says => refused(&d, says),
            };
            assert!(ok, "{name}: {d:?}");
        }
    }

    #[test]
    fn the_first_visit_goes_on_to_the_same_url_without_the_token() {
        let q = |s: &str| crate::ui::routes::pairs(s.as_bytes());
        let cases = [
            ("/", "token=abc", "/"),
            (
                "/tasks/a/attempts/2",
                "against=previous&token=abc&layout=split",
                "/tasks/a/attempts/2?against=previous&layout=split",
            ),
            ("/", "q=a+b%26c&token=abc", "/?q=a+b%26c"),
        ];
        for (path, query, want) in cases {
            assert_eq!(without_token(path, &q(query)), want, "{path}?{query}");
        }
    }

    #[test]
    fn the_cookie_is_http_only_and_strict() {
        let s = server().set_cookie();
        assert_eq!(s, format!("retry-run-ui-8123={T}; Path=/; HttpOnly; SameSite=Strict"));
    }

    #[test]
    fn tokens_are_64_hex_digits() {
        let mut b = [0u8; 32];
        b[0] = 0xab;
        b[31] = 0x01;
        let t = token_of(&b);
        assert_eq!((t.len(), &t[..4], &t[60..]), (64, "ab00", "0001"));
    }
}
