//! The web view in a real browser: Debian's `chromium`, headless, driven
//! through `chromedriver` (WebDriver) by fantoccini, and `retry-run ui
//! --no-open` serving a real repository.
//!
//! - [`Browser::start`]: chromedriver on 127.0.0.1 on a free port and a
//!   headless chromium session with a fixed window size (for the
//!   screenshots); `None`, with a printed SKIPPED and its reason, when
//!   chromium or chromedriver is missing and `RETRY_RUN_REQUIRE_BROWSER` is
//!   unset (CI sets it: there a missing browser fails the test).
//! - [`Ui::start`]: `retry-run ui --no-open` in a repository, its URL read
//!   from the line it prints; stopped with SIGINT (Ctrl-C) when dropped.
//! - [`http`]: one raw HTTP/1.1 request, for what a browser would not send
//!   (no token, another origin, a path outside the record) and for the
//!   response's headers.
//!
//! The test thread stays synchronous: the browser owns a current-thread
//! tokio runtime and blocks on each WebDriver command.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};

use super::TestEnv;
use super::tools::skipped;

/// The window every page is shown (and photographed) in.
pub(crate) const WINDOW: (u32, u32) = (1280, 900);

/// Set to make a missing chromium or chromedriver fail the test.
const REQUIRE: &str = "RETRY_RUN_REQUIRE_BROWSER";
/// A directory to write each page's screenshot into.
const SCREENSHOTS: &str = "RETRY_RUN_UI_SCREENSHOTS";

/// `program` on PATH.
fn on_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(program)).find(|p| p.is_file())
}

/// A port nobody listens on now.
fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").expect("bind a free port on loopback");
    l.local_addr().expect("its address").port()
}

/// Waits until something accepts connections on `port`.
fn wait_for_port(port: u16, child: &mut Child, what: &str) {
    let end = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{what} ended ({status}) before it listened on port {port}");
        }
        assert!(Instant::now() < end, "{what} did not listen on port {port} within 30 s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// chromedriver and a headless chromium session.
pub(crate) struct Browser {
    rt: tokio::runtime::Runtime,
    client: Option<Client>,
    driver: Child,
}

impl Browser {
    /// chromedriver and a headless chromium session, or `None` (the test
    /// said SKIPPED) when either is missing and a browser is not required.
    pub(crate) fn start(env: &TestEnv) -> Option<Browser> {
        let (chromium, driver) = match (on_path("chromium"), on_path("chromedriver")) {
            (Some(c), Some(d)) => (c, d),
            (c, d) => {
                let missing: Vec<&str> = [(c.is_none(), "chromium"), (d.is_none(), "chromedriver")]
                    .iter()
                    .filter(|m| m.0)
                    .map(|m| m.1)
                    .collect();
                let why = format!(
                    "{} not found on PATH (Debian: apt-get install chromium chromium-driver)",
                    missing.join(" and ")
                );
                assert!(std::env::var_os(REQUIRE).is_none(), "{REQUIRE} is set and {why}");
                skipped(&why);
                return None;
            }
        };
        let port = free_port();
        let log = std::fs::File::create(env.path("chromedriver.log")).expect("chromedriver's log");
        let mut driver = Command::new(driver)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("the log, twice"))
            .stderr(log)
            .spawn()
            .expect("chromedriver starts");
        wait_for_port(port, &mut driver, "chromedriver");
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
        let profile = env.path("chromium-profile");
        let caps = json!({
            "browserName": "chrome",
            // Alerts stay open for the test to see (the hostile-agent test).
            "unhandledPromptBehavior": "ignore",
            "goog:chromeOptions": {
                "binary": chromium,
                "args": [
                    "--headless=new",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-dev-shm-usage",
                    "--hide-scrollbars",
                    "--force-device-scale-factor=1",
                    format!("--window-size={},{}", WINDOW.0, WINDOW.1),
                    format!("--user-data-dir={}", profile.display()),
                ],
            },
        });
        let Value::Object(caps) = caps else { unreachable!("an object") };
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let client = rt
            .block_on(ClientBuilder::new(connector).capabilities(caps).connect(&format!("http://127.0.0.1:{port}")))
            .unwrap_or_else(|e| {
                let log = std::fs::read_to_string(env.path("chromedriver.log")).unwrap_or_default();
                panic!("no chromium session through chromedriver: {e}\nchromedriver's log:\n{log}")
            });
        Some(Browser { rt, client: Some(client), driver })
    }

    fn client(&self) -> &Client {
        self.client.as_ref().expect("the session is open until drop")
    }

    /// Opens `url` and waits for its load.
    #[track_caller]
    pub(crate) fn goto(&self, url: &str) {
        self.rt.block_on(self.client().goto(url)).unwrap_or_else(|e| panic!("open {url}: {e}"));
    }

    /// The page's address now.
    pub(crate) fn url(&self) -> String {
        self.rt.block_on(self.client().current_url()).expect("the current URL").to_string()
    }

    /// Runs `script` (a function body: `return …`) in the page, with `args`
    /// as `arguments`.
    #[track_caller]
    pub(crate) fn js(&self, script: &str, args: Vec<Value>) -> Value {
        self.rt.block_on(self.client().execute(script, args)).unwrap_or_else(|e| panic!("script {script:?}: {e}"))
    }

    /// The visible text of the whole page.
    pub(crate) fn page_text(&self) -> String {
        self.js("return document.body ? document.body.innerText : ''", vec![]).as_str().unwrap_or_default().to_string()
    }

    /// The visible text of each element matching `css`.
    pub(crate) fn texts(&self, css: &str) -> Vec<String> {
        let v = self.js(
            "return Array.from(document.querySelectorAll(arguments[0])).map(e => e.innerText)",
            vec![Value::from(css)],
        );
        v.as_array().map(|a| a.iter().map(|s| s.as_str().unwrap_or_default().to_string()).collect()).unwrap_or_default()
    }

    /// How many elements match `css`.
    pub(crate) fn count(&self, css: &str) -> usize {
        self.js("return document.querySelectorAll(arguments[0]).length", vec![Value::from(css)]).as_u64().unwrap_or(0)
            as usize
    }

    /// Waits (up to `secs`) until `script` returns true; panics with `what`
    /// and the page's text otherwise.
    #[track_caller]
    pub(crate) fn wait_until(&self, script: &str, secs: u64, what: &str) {
        let end = Instant::now() + Duration::from_secs(secs);
        loop {
            if self.js(script, vec![]) == Value::Bool(true) {
                return;
            }
            if Instant::now() > end {
                panic!("{what}: not within {secs} s; the page ({}) says:\n{}", self.url(), self.page_text());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Clicks the first element matching `css`.
    #[track_caller]
    pub(crate) fn click(&self, css: &str) {
        let c = self.client();
        self.rt
            .block_on(async { c.find(Locator::Css(css)).await?.click().await })
            .unwrap_or_else(|e| panic!("click {css}: {e}"));
    }

    /// Types `text` into the first element matching `css` (cleared first).
    #[track_caller]
    pub(crate) fn fill(&self, css: &str, text: &str) {
        let c = self.client();
        self.rt
            .block_on(async {
                let e = c.find(Locator::Css(css)).await?;
                e.clear().await?;
                e.send_keys(text).await
            })
            .unwrap_or_else(|e| panic!("type into {css}: {e}"));
    }

    /// The text of the alert open now, if one is.
    pub(crate) fn alert(&self) -> Option<String> {
        self.rt.block_on(self.client().get_alert_text()).ok()
    }

    /// Writes the page as `<name>.png` into `$RETRY_RUN_UI_SCREENSHOTS`
    /// when it is set (the screenshots of docs/ui/).
    pub(crate) fn screenshot(&self, name: &str) {
        let Some(dir) = std::env::var_os(SCREENSHOTS) else { return };
        let png = self.rt.block_on(self.client().screenshot()).expect("a screenshot");
        let dir = PathBuf::from(dir);
        std::fs::create_dir_all(&dir).expect("the screenshots' directory");
        std::fs::write(dir.join(format!("{name}.png")), png).expect("write a screenshot");
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if let Some(c) = self.client.take() {
            let _ = self.rt.block_on(c.close());
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

/// `retry-run ui --no-open`, serving a repository.
pub(crate) struct Ui {
    child: Child,
    /// The URL it printed (with its token).
    pub url: String,
    /// `http://127.0.0.1:PORT`.
    pub origin: String,
    /// The token of its URL.
    pub token: String,
    /// What it printed on stdout after the URL, as it comes.
    rest: mpsc::Receiver<String>,
}

impl Ui {
    /// Starts `retry-run ui --no-open` (and `args`) in `repo` and reads the
    /// URL it prints.
    pub(crate) fn start(env: &TestEnv, repo: &Path, args: &[&str]) -> Ui {
        let stderr = std::fs::File::create(env.path("ui.stderr")).expect("ui's stderr file");
        let mut child = env
            .retry_run(repo)
            .args(["ui", "--no-open"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("retry-run ui starts");
        let out = child.stdout.take().expect("its stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let end = Instant::now() + Duration::from_secs(30);
        let mut seen = String::new();
        let url = loop {
            let left = end.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) => {
                    if let Some(at) = line.find("http://127.0.0.1:") {
                        let url = line[at..].split_whitespace().next().unwrap_or_default().to_string();
                        break url;
                    }
                    seen.push_str(&line);
                    seen.push('\n');
                }
                Err(_) => {
                    let _ = child.kill();
                    let status = child.wait().map(|s| s.to_string()).unwrap_or_default();
                    let err = std::fs::read_to_string(env.path("ui.stderr")).unwrap_or_default();
                    panic!("retry-run ui printed no URL within 30 s ({status}); stdout:\n{seen}stderr:\n{err}");
                }
            }
        };
        let after_scheme = &url["http://".len()..];
        let origin = format!("http://{}", after_scheme.split(['/', '?']).next().unwrap_or_default());
        let token = url
            .split(['?', '&'])
            .find_map(|kv| kv.strip_prefix("token="))
            .unwrap_or_else(|| panic!("no token in the URL {url}"))
            .to_string();
        Ui { child, url, origin, token, rest: rx }
    }

    /// `path` on this server (no token).
    pub(crate) fn at(&self, path: &str) -> String {
        format!("{}{path}", self.origin)
    }

    /// The cookie the first visit sets (`name=token`), for a request
    /// sent without a browser.
    pub(crate) fn cookie(&self) -> String {
        format!("retry-run-ui-{}={}", self.port(), self.token)
    }

    /// The port it listens on.
    pub(crate) fn port(&self) -> u16 {
        self.origin.rsplit(':').next().and_then(|p| p.parse().ok()).expect("a port in the origin")
    }

    /// Stops it as Ctrl-C would and returns its exit code and the rest of
    /// what it printed.
    pub(crate) fn interrupt(mut self) -> (Option<i32>, String) {
        // SAFETY: kill(2) on our own child's pid, with a valid signal.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, libc::SIGINT);
        }
        let end = Instant::now() + Duration::from_secs(10);
        let code = loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                break status.code();
            }
            if Instant::now() > end {
                let _ = self.child.kill();
                let _ = self.child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let rest: Vec<String> = self.rest.try_iter().collect();
        (code, rest.join("\n"))
    }
}

impl Drop for Ui {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A response as [`http`] read it.
#[derive(Debug)]
pub(crate) struct Response {
    pub status: u16,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    /// The first header `name` (lower case).
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// One HTTP/1.1 request to 127.0.0.1:`port`, `Connection: close`, with
/// `headers` as given (a `Host` unless one is given) and `body`.
pub(crate) fn http(port: u16, method: &str, target: &str, headers: &[(&str, &str)], body: &str) -> Response {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect to the server");
    s.set_read_timeout(Some(Duration::from_secs(30))).expect("a read timeout");
    let mut req = format!("{method} {target} HTTP/1.1\r\n");
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        req.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (n, v) in headers {
        req.push_str(&format!("{n}: {v}\r\n"));
    }
    req.push_str(&format!("Content-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len()));
    s.write_all(req.as_bytes()).expect("send the request");
    let mut raw = Vec::new();
    // A server may close the connection on a refusal before reading it all.
    let _ = s.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response to {method} {target}: {text:?}"));
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    Response { status, headers, body: body.to_string() }
}
