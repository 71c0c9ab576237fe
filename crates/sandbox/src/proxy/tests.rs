//! The proxy's tests: rules and heads as tables, the server and the
//! forwarders over real sockets.

use super::*;
use std::io::Read;
use std::io::{self, Write};
use std::net::SocketAddr;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::thread;
use std::time::Duration;

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
    assert_eq!(connect("Api.OpenAI.com:443").unwrap(), Asked::Connect { host: "api.openai.com".into(), port: 443 });
    assert_eq!(connect("[::1]:8443").unwrap(), Asked::Connect { host: "::1".into(), port: 8443 });
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
    let Asked::Forward { method, host, port, head } = parse_head(head).unwrap() else { panic!("not forwarded") };
    assert_eq!((method.as_str(), host.as_str(), port), ("POST", "example.com", 8080));
    assert_eq!(
        String::from_utf8(head).unwrap(),
        "POST /a/b?q=1 HTTP/1.1\r\nHost: Example.com:8080\r\nContent-Length: 3\r\nX-Thing:  kept as is \r\n\
         Connection: close\r\n\r\n"
    );
    let origin = |target: &str| match parse_head(format!("GET {target} HTTP/1.0\n\n").as_bytes()).unwrap() {
        Asked::Forward { head, port, .. } => (String::from_utf8(head).unwrap(), port),
        other => panic!("{other:?}"),
    };
    assert_eq!(origin("http://a.com"), ("GET / HTTP/1.0\r\nHost: a.com\r\nConnection: close\r\n\r\n".into(), 80));
    assert_eq!(origin("HTTP://a.com?x").0, "GET /?x HTTP/1.0\r\nHost: a.com\r\nConnection: close\r\n\r\n");
    assert_eq!(origin("http://[::1]:81/").1, 81);
    let upgrade = b"GET http://a.com/ws HTTP/1.1\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n";
    let Asked::Forward { head, .. } = parse_head(upgrade).unwrap() else { panic!("not forwarded") };
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
    let gone = ask(UnixStream::connect(&socket).unwrap(), &format!("CONNECT 127.0.0.1:{closed_port} HTTP/1.1\r\n\r\n"));
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
    assert_eq!((forwarded.status, tunnelled.status), (Some(200), None), "the first answer's status, when it is HTTP");
    assert!(entries.iter().find(|c| c.method == "hello").unwrap().error.is_some());
    assert!(entries.iter().find(|c| c.port == closed_port).unwrap().error.as_ref().unwrap().contains("cannot connect"));
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
