//! `retry-run ui`'s server at the HTTP level (the real binary, a small
//! HTTP client over a TcpStream): the URL it prints, the token's first
//! visit (a cookie and a redirect), what is refused (no token, another
//! Host, a POST from another origin or without the form's token, paths
//! outside the record), the security headers, a review posted from the
//! page recorded exactly as `retry-run review` records it (apart from
//! its channel), a land posted from the page, a refused land shown with
//! its reason, live updates sent when the log grows, a taken port, and
//! Ctrl-C ending it with 0.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::support::record::{events, of_type};
use crate::support::{FakeAgent, TestEnv};

/// A project whose agent raises `LIMIT` to 2.
fn project(env: &TestEnv) -> PathBuf {
    env.repo("repo").file("limit.py", "LIMIT = 1\n").file("retry-run.toml", "max_attempts = 1\n").commit()
}

fn succeed(env: &TestEnv, r: &Path, id: &str) {
    let agent = env.agent(FakeAgent::new().write("limit.py", "LIMIT = 2\n"));
    env.run_agent(r, &["run", "--quiet", "--task", "Raise the limit", "--id", id], &agent).assert_code(0);
}

/// A running `retry-run ui --no-open`, and what it printed.
struct Ui {
    child: Child,
    port: u16,
    token: String,
    url: String,
}

impl Ui {
    fn start(env: &TestEnv, r: &Path, args: &[&str]) -> Ui {
        let mut child = env
            .retry_run(r)
            .arg("ui")
            .arg("--no-open")
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("retry-run ui starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut line).expect("the URL line");
        let url = line.trim_end().strip_prefix("retry-run ui: ").unwrap_or_else(|| panic!("{line:?}")).to_string();
        let rest = url.strip_prefix("http://127.0.0.1:").unwrap_or_else(|| panic!("{url}"));
        let (port, token) = rest.split_once("/?token=").unwrap_or_else(|| panic!("{url}"));
        let port: u16 = port.parse().expect("a port");
        assert!(token.len() == 64 && token.bytes().all(|b| b.is_ascii_hexdigit()), "{token}");
        Ui { child, port, token: token.to_string(), url }
    }

    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn cookie(&self) -> String {
        format!("retry-run-ui-{}={}", self.port, self.token)
    }

    /// `GET path` with the cookie.
    fn get(&self, path: &str) -> Response {
        let head = format!("GET {path} HTTP/1.1\r\nHost: {}\r\nCookie: {}\r\n", self.host(), self.cookie());
        request(self.port, &head, "")
    }

    /// `POST path` from the server's own page, `form` and its token.
    fn post(&self, path: &str, form: &[(&str, &str)]) -> Response {
        let mut body = form_urlencoded::Serializer::new(String::new());
        body.append_pair("token", &self.token);
        for (k, v) in form {
            body.append_pair(k, v);
        }
        let head = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nOrigin: http://{}\r\nCookie: {}\r\nContent-Type: application/x-www-form-urlencoded\r\n",
            self.host(),
            self.host(),
            self.cookie()
        );
        request(self.port, &head, &body.finish())
    }

    /// SIGINT, then the exit code.
    fn interrupt(mut self) -> Option<i32> {
        // SAFETY: kill(2) on the child this test started.
        assert_eq!(unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) }, 0);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().expect("its status") {
                return status.code();
            }
            assert!(Instant::now() < deadline, "retry-run ui did not end after SIGINT");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Ui {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug)]
struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// One request (`head`: its request line and headers, each ending in
/// CRLF) with `body`, on a connection of its own, read to its end.
fn request(port: u16, head: &str, body: &str) -> Response {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(60))).expect("timeout");
    let req = format!("{head}Content-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
    s.write_all(req.as_bytes()).expect("send");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read");
    let text = String::from_utf8_lossy(&raw).to_string();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.lines();
    let status = lines.next().and_then(|l| l.split(' ').nth(1)).and_then(|c| c.parse().ok()).expect("a status line");
    let headers =
        lines.filter_map(|l| l.split_once(": ")).map(|(k, v)| (k.to_ascii_lowercase(), v.to_string())).collect();
    Response { status, headers, body: body.to_string() }
}

const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

fn assert_safe_headers(r: &Response, what: &str) {
    assert_eq!(r.header("content-security-policy"), Some(CSP), "{what}: {r:?}");
    assert_eq!(r.header("x-content-type-options"), Some("nosniff"), "{what}");
    assert_eq!(r.header("referrer-policy"), Some("same-origin"), "{what}");
}

fn log_bytes(r: &Path, task: &str) -> Vec<u8> {
    std::fs::read(r.join(format!(".git/retry-run/tasks/{task}/events.jsonl"))).expect("the log")
}

#[test]
fn the_token_opens_the_door_and_everything_else_is_refused() {
    let env = TestEnv::new();
    let r = project(&env);
    succeed(&env, &r, "t");
    let ui = Ui::start(&env, &r, &[]);
    assert!(ui.url.starts_with("http://127.0.0.1:"), "{}", ui.url);

    // The first visit: a cookie for this port, and on to the same URL
    // without the token.
    let host = ui.host();
    let first = request(
        ui.port,
        &format!("GET /tasks/t/attempts/1?layout=split&token={} HTTP/1.1\r\nHost: {host}\r\n", ui.token),
        "",
    );
    assert_eq!(first.status, 303, "{first:?}");
    assert_eq!(first.header("location"), Some("/tasks/t/attempts/1?layout=split"));
    assert_eq!(
        first.header("set-cookie").map(str::to_string),
        Some(format!("retry-run-ui-{}={}; Path=/; HttpOnly; SameSite=Strict", ui.port, ui.token))
    );
    assert_safe_headers(&first, "the first visit");

    // With the cookie: answered (by the pages), with the headers.
    let page = ui.get("/");
    assert!(![403, 404].contains(&page.status), "{page:?}");
    assert_safe_headers(&page, "a page");
    assert_eq!(page.header("cache-control"), Some("no-store"));

    // The assets, long cached.
    let js = ui.get("/assets/app.js");
    assert_eq!((js.status, js.header("content-type")), (200, Some("text/javascript; charset=utf-8")), "{js:?}");
    assert_eq!(js.header("cache-control"), Some("public, max-age=31536000, immutable"));
    assert!(js.body.contains("EventSource"));
    assert_safe_headers(&js, "an asset");

    // Refused: no token, a wrong token, a wrong cookie, another Host.
    let refused = [
        format!("GET / HTTP/1.1\r\nHost: {host}\r\n"),
        format!("GET /?token={} HTTP/1.1\r\nHost: {host}\r\n", "0".repeat(64)),
        format!("GET / HTTP/1.1\r\nHost: {host}\r\nCookie: retry-run-ui-{}={}\r\n", ui.port, "0".repeat(64)),
        format!("GET / HTTP/1.1\r\nHost: evil.example:{}\r\nCookie: {}\r\n", ui.port, ui.cookie()),
        format!("GET /?token={} HTTP/1.1\r\nHost: evil.example\r\n", ui.token),
        format!("GET /assets/app.js HTTP/1.1\r\nHost: {host}\r\n"),
    ];
    for head in &refused {
        let r = request(ui.port, head, "");
        assert_eq!(r.status, 403, "{head}: {r:?}");
        assert_eq!(r.header("content-type"), Some("text/plain; charset=utf-8"));
        assert!(r.body.starts_with("retry-run ui: refused: "), "{}", r.body);
        assert_safe_headers(&r, head);
    }

    // Paths outside the record: not found, never a file.
    for path in [
        "/tasks/../../etc/passwd",
        "/tasks/%2e%2e/%2e%2e/etc/passwd",
        "/tasks/t/../../../../etc/passwd",
        "/tasks/..%2f..%2fetc%2fpasswd",
        "/../../etc/passwd",
        "/assets/../../Cargo.toml",
        "/tasks/t/events.jsonl",
        "/tasks/t/attempts/1/checks/..%2f..%2f..%2fevents.jsonl/x",
        "/tasks/.git",
        "/etc/passwd",
    ] {
        let r = ui.get(path);
        assert_eq!(r.status, 404, "{path}: {r:?}");
        assert!(
            !r.body.contains("root:") && !r.body.contains("[package]") && !r.body.contains("TaskStarted"),
            "{path}"
        );
    }

    // A POST from another origin, from nowhere, or without the form's token:
    // refused, nothing recorded.
    let before = log_bytes(&r, "t");
    let body = format!("token={}&verdict=approve", ui.token);
    for (origin, body) in [
        ("Origin: http://evil.example\r\n", body.as_str()),
        ("Origin: null\r\n", body.as_str()),
        ("", body.as_str()),
        (&*format!("Origin: http://{host}\r\n"), "verdict=approve"),
    ] {
        let head = format!(
            "POST /tasks/t/review HTTP/1.1\r\nHost: {host}\r\n{origin}Cookie: {}\r\nContent-Type: application/x-www-form-urlencoded\r\n",
            ui.cookie()
        );
        let resp = request(ui.port, &head, body);
        assert_eq!(resp.status, 403, "{origin} {body}: {resp:?}");
    }
    assert_eq!(log_bytes(&r, "t"), before, "nothing is recorded");

    assert_eq!(ui.interrupt(), Some(0), "Ctrl-C ends it with 0");
}

#[test]
fn a_review_from_the_page_is_recorded_as_the_command_line_records_it_and_a_land_lands() {
    let env = TestEnv::new();
    let r = project(&env);
    for t in ["cli", "page", "lands"] {
        succeed(&env, &r, t);
    }
    env.git(&r, &["config", "user.name", "Ann"]);
    env.git(&r, &["config", "user.email", "ann@example.com"]);
    let rc = "Raise it to 3, not 2.";
    let critique = "Two is too low for <b>bursts</b>.\n\nSee the logs.\n";
    let text = "why <script>alert(1)</script> 2?";
    env.run(
        &r,
        &[
            "review",
            "cli",
            "--attempt",
            "1",
            "--required-change",
            rc,
            "--critique",
            critique,
            "--comment",
            "limit.py:1",
            text,
        ],
    )
    .assert_code(0);

    let ui = Ui::start(&env, &r, &[]);
    // Live updates: at once, then when the log grows.
    let mut live = TcpStream::connect(("127.0.0.1", ui.port)).expect("connect");
    live.set_read_timeout(Some(Duration::from_secs(10))).expect("timeout");
    let head = format!("GET /tasks/page/live HTTP/1.1\r\nHost: {}\r\nCookie: {}\r\n\r\n", ui.host(), ui.cookie());
    live.write_all(head.as_bytes()).expect("send");
    let mut live = BufReader::new(live);
    let mut seen = String::new();
    let mut read_event = |seen: &mut String| {
        let from = seen.len();
        loop {
            let mut line = String::new();
            live.read_line(&mut line).expect("an event within 10 s");
            seen.push_str(&line);
            if seen[from..].contains("event: changed\n") && line == "\n" {
                return;
            }
        }
    };
    read_event(&mut seen);
    assert!(seen.starts_with("HTTP/1.1 200"), "{seen}");
    assert!(seen.to_ascii_lowercase().contains("content-type: text/event-stream"), "{seen}");

    // The same rejection, from the page's form (a blank comment row skipped).
    let resp = ui.post(
        "/tasks/page/review",
        &[
            ("attempt", "1"),
            ("verdict", "reject"),
            ("required_change", rc),
            ("critique", critique),
            ("comment_path", "limit.py"),
            ("comment_lines", "1"),
            ("comment_text", text),
            ("comment_path", ""),
            ("comment_lines", ""),
            ("comment_text", ""),
        ],
    );
    assert_eq!((resp.status, resp.header("location")), (303, Some("/tasks/page")), "{resp:?}");
    let from = seen.len();
    read_event(&mut seen);
    assert!(seen[from..].contains("event: changed\ndata: "), "an event once the log grew: {}", &seen[from..]);

    let cli = events(&r, "cli");
    let page = events(&r, "page");
    let (a, b) = (of_type(&cli, "Reviewed")[0], of_type(&page, "Reviewed")[0]);
    assert_eq!((a["channel"].as_str(), b["channel"].as_str()), (Some("cli"), Some("ui")));
    let mut keys: Vec<&String> =
        a.as_object().expect("an object").keys().chain(b.as_object().expect("an object").keys()).collect();
    keys.sort();
    keys.dedup();
    // The envelope (time, chain, task) and the commit (each task's own
    // snapshot) differ; the review itself does not, apart from its channel.
    let differ = ["channel", "commit", "ts", "prev", "hash", "task", "seq"];
    for k in keys.iter().filter(|k| !differ.contains(&k.as_str())) {
        assert_eq!(a[k.as_str()], b[k.as_str()], "field {k}:\n{a}\n{b}");
    }
    for k in ["verdict", "by", "required_change", "critique", "comments"] {
        assert!(keys.iter().any(|x| x.as_str() == k), "{k} compared: {a}");
    }
    assert_eq!(b["comments"][0]["text"].as_str(), Some(text));

    // A refused action: the task's page with the reason, a 4xx, nothing landed.
    let before = log_bytes(&r, "page");
    let main_before = env.git(&r, &["rev-parse", "main"]);
    let resp = ui.post("/tasks/page/land", &[("onto", ""), ("merge", "")]);
    assert!((400..500).contains(&resp.status), "{resp:?}");
    assert_eq!(log_bytes(&r, "page"), before);
    assert_eq!(env.git(&r, &["rev-parse", "main"]), main_before);
    let resp = ui.post("/tasks/page/review", &[("verdict", "approve"), ("required_change", "Do more.")]);
    assert_eq!(resp.status, 400, "{resp:?}");
    assert_eq!(log_bytes(&r, "page"), before);

    // A land from the page lands, as `retry-run land` does.
    let resp = ui.post("/tasks/lands/land", &[("onto", ""), ("merge", "")]);
    assert_eq!((resp.status, resp.header("location")), (303, Some("/tasks/lands")), "{resp:?}");
    let ev = events(&r, "lands");
    let landed = of_type(&ev, "TaskLanded");
    assert_eq!(landed.len(), 1, "{ev:?}");
    assert_eq!(landed[0]["onto"].as_str(), Some("main"));
    assert_eq!(landed[0]["commit"].as_str().map(str::to_string), Some(env.git(&r, &["rev-parse", "main"])));
    assert_eq!(std::fs::read_to_string(r.join("limit.py")).expect("limit.py"), "LIMIT = 2\n");

    assert_eq!(ui.interrupt(), Some(0));
}

#[test]
fn a_taken_port_is_refused_with_what_to_do() {
    let env = TestEnv::new();
    let r = project(&env);
    let holder = std::net::TcpListener::bind(("127.0.0.1", 0)).expect("a port");
    let port = holder.local_addr().expect("its address").port().to_string();
    let out = env.run(&r, &["ui", "--no-open", "--port", &port]);
    out.assert_code(3);
    assert!(out.error_line().contains(&format!("cannot listen on 127.0.0.1:{port}")), "{}", out.stderr);
    assert!(out.stderr.contains("choose another with --port N"), "{}", out.stderr);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
}
