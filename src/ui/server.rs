//! `retry-run ui`'s server: a listener on 127.0.0.1 (axum on tokio), the
//! token made at start, each request checked ([`super::auth`]) and read
//! ([`super::routes`]), then answered: a page from `pages` (rendered on a
//! blocking thread, with the repository opened for it), an asset, the
//! live updates of a task (Server-Sent Events, sent when its log grows),
//! or an action (`review::review`, `run::land::land`, exactly as the
//! command line calls them). Ends on Ctrl-C or SIGTERM.

use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};

use super::auth::{self, Decision, Shown};
use super::routes::{self, Endpoint, Method};
use super::{ActionRefusal, Page, Route, Site};
use crate::git::Repo;
use crate::record::summary::Stamp;
use crate::record::{Store, Summaries};

/// `retry-run ui`, as asked.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ServerOptions {
    /// `--port` (0: one the system chooses).
    pub port: u16,
    /// Open the browser (not `--no-open`).
    pub open: bool,
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub(crate) enum UiError {
    #[error("cannot listen on 127.0.0.1:{port}: {source}")]
    Bind { port: u16, source: std::io::Error },
    #[error("cannot make the token: /dev/urandom: {0}")]
    Token(std::io::Error),
    #[error("cannot start the server: {0}")]
    Runtime(std::io::Error),
    #[error(transparent)]
    Git(#[from] crate::git::GitError),
}

impl UiError {
    /// What the user can do.
    pub(crate) fn hint(&self) -> Option<String> {
        match self {
            UiError::Bind { source, .. } if source.kind() == std::io::ErrorKind::AddrInUse => {
                Some("the port is taken: choose another with --port N, or leave --port out for a free one".into())
            }
            UiError::Git(e) => e.hint(),
            _ => None,
        }
    }
}

/// What every handler shares.
struct App {
    /// Where `retry-run ui` was started (`-C`), to open the repository from.
    dir: PathBuf,
    store: Store,
    /// The task list's rows, kept by their logs' identity.
    summaries: Summaries,
    token: String,
    port: u16,
}

/// Serves the web view of the repository at `dir` until Ctrl-C or
/// SIGTERM; `ready` gets the URL (with its token) once the server
/// listens.
pub(crate) fn serve(dir: &Path, opts: ServerOptions, ready: impl FnOnce(&str)) -> Result<(), UiError> {
    let repo = Repo::find(dir)?;
    let store = Store::new(repo.common_dir());
    drop(repo);
    let listener = std::net::TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, opts.port)))
        .map_err(|source| UiError::Bind { port: opts.port, source })?;
    let port = listener.local_addr().map_err(UiError::Runtime)?.port();
    listener.set_nonblocking(true).map_err(UiError::Runtime)?;
    let token = auth::token_of(&random()?);
    let url = format!("http://127.0.0.1:{port}/?token={token}");
    crate::process::catch_interrupts_saying(b"\nretry-run ui: stopped (again to quit at once)\n");
    let app = Arc::new(App { dir: dir.to_path_buf(), summaries: Summaries::new(store.clone()), store, token, port });
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(UiError::Runtime)?;
    let served = rt.block_on(async {
        let listener = tokio::net::TcpListener::from_std(listener)?;
        // Every log read once while the browser opens, one thread a core
        // (from the blocking pool): the first task list then reads none.
        let warm = Arc::clone(&app);
        tokio::task::spawn_blocking(move || {
            warm.summaries.warm(&warm.store.tasks().unwrap_or_default());
        });
        ready(&url);
        if opts.open {
            open_browser(url.clone());
        }
        let router = axum::Router::new().fallback(handle).with_state(Arc::clone(&app));
        tokio::select! {
            r = axum::serve(listener, router) => r,
            () = interrupted() => Ok(()),
        }
    });
    // An action under way (a land's gates see the interrupt too) is given
    // a moment to record what it did.
    rt.shutdown_timeout(Duration::from_secs(10));
    served.map_err(UiError::Runtime)
}

/// 32 bytes from the kernel's random source.
fn random() -> Result<[u8; 32], UiError> {
    use std::io::Read;
    let mut b = [0u8; 32];
    std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut b)).map_err(UiError::Token)?;
    Ok(b)
}

/// Resolves once SIGINT or SIGTERM came.
async fn interrupted() {
    while crate::process::interrupted().is_none() {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Opens `url` in the browser (`$BROWSER`, else `xdg-open`), on a thread
/// of its own; a failure is only said.
fn open_browser(url: String) {
    std::thread::spawn(move || {
        let browser = std::env::var("BROWSER")
            .ok()
            .and_then(|b| b.split(':').map(str::trim).find(|s| !s.is_empty()).map(str::to_string));
        let (program, args) = match &browser {
            Some(b) => {
                let mut words = b.split_whitespace().map(str::to_string);
                let program = words.next().unwrap_or_default();
                let mut args: Vec<String> = words.collect();
                if args.iter().any(|a| a.contains("%s")) {
                    args = args.into_iter().map(|a| a.replace("%s", &url)).collect();
                } else {
                    args.push(url.clone());
                }
                (program, args)
            }
            None => ("xdg-open".to_string(), vec![url.clone()]),
        };
        let said = match crate::process::output(&program, &args, None) {
            Ok(out) if out.status.success() => return,
            Ok(out) => format!("{program} exited with {}", out.status),
            Err(e) => format!("cannot run {program}: {e}"),
        };
        crate::console::errln!("retry-run ui: could not open a browser ({said}); open the URL above");
    });
}

/// Every request: checked, read, answered; the safety headers added.
async fn handle(State(app): State<Arc<App>>, req: Request) -> Response {
    let mut resp = answer(&app, req).await;
    let headers = resp.headers_mut();
    for (name, value) in auth::HEADERS {
        headers.insert(*name, HeaderValue::from_static(value));
    }
    headers.entry(header::CACHE_CONTROL).or_insert(HeaderValue::from_static("no-store"));
    resp
}

/// A header's value, when it is text.
fn value(h: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    h.get(name).and_then(|v| v.to_str().ok())
}

/// The largest form body read (a review's critique and comments).
const MAX_FORM: usize = 1 << 20;

async fn answer(app: &Arc<App>, req: Request) -> Response {
    let method = match *req.method() {
        axum::http::Method::GET | axum::http::Method::HEAD => Method::Get,
        axum::http::Method::POST => Method::Post,
        _ => Method::Other,
    };
    let path = req.uri().path().to_string();
    let query = routes::pairs(req.uri().query().unwrap_or("").as_bytes());
    let headers = req.headers().clone();
    let form = if method == Method::Post {
        match axum::body::to_bytes(req.into_body(), MAX_FORM).await {
            Ok(b) => routes::pairs(&b),
            Err(_) => {
                return plain(StatusCode::PAYLOAD_TOO_LARGE, "retry-run ui: the form is too large (1 MiB at most)");
            }
        }
    } else {
        Vec::new()
    };
    let query_token = query.iter().find(|(k, _)| k == "token").map(|(_, v)| v.as_str());
    let form_token = form.iter().find(|(k, _)| k == "token").map(|(_, v)| v.as_str());
    let seen = Shown {
        post: method == Method::Post,
        host: value(&headers, header::HOST),
        cookie: value(&headers, header::COOKIE),
        query_token,
        form_token,
        origin: value(&headers, header::ORIGIN),
        referer: value(&headers, header::REFERER),
    };
    let server = auth::Server { token: &app.token, port: app.port };
    match auth::decide(server, seen) {
        Decision::Refuse(why) => return plain(StatusCode::FORBIDDEN, &why),
        Decision::Enter => {
            let to = auth::without_token(&path, &query);
            let mut resp = StatusCode::SEE_OTHER.into_response();
            if let (Ok(loc), Ok(cookie)) = (HeaderValue::from_str(&to), HeaderValue::from_str(&server.set_cookie())) {
                resp.headers_mut().insert(header::LOCATION, loc);
                resp.headers_mut().insert(header::SET_COOKIE, cookie);
            }
            return resp;
        }
        Decision::Pass => {}
    }
    let query: Vec<(String, String)> = query.into_iter().filter(|(k, _)| k != "token").collect();
    let Some(endpoint) = routes::route(method, &path, &query) else {
        return plain(StatusCode::NOT_FOUND, "retry-run ui: not found");
    };
    match endpoint {
        Endpoint::Page(route) => page(app, route, None).await,
        Endpoint::Asset { name } => asset(name),
        Endpoint::Live { id } => live(app.store.task(&id).events()),
        Endpoint::Review { id } => review(app, id, form).await,
        Endpoint::Land { id } => land(app, id, form).await,
    }
}

/// A page from `pages`, on a blocking thread; `status` over its own.
async fn page(app: &Arc<App>, route: Route, status: Option<StatusCode>) -> Response {
    let app = Arc::clone(app);
    let rendered = tokio::task::spawn_blocking(move || -> Result<Page, crate::git::GitError> {
        let repo = Repo::find(&app.dir)?;
        let site = Site { repo: &repo, store: &app.store, summaries: &app.summaries, token: &app.token };
        Ok(super::pages::page(&site, &route))
    })
    .await;
    let page = match rendered {
        Ok(Ok(p)) => p,
        Ok(Err(e)) => return plain(StatusCode::INTERNAL_SERVER_ERROR, &format!("retry-run ui: {e}")),
        Err(_) => return plain(StatusCode::INTERNAL_SERVER_ERROR, "retry-run ui: the page could not be made"),
    };
    let code = StatusCode::from_u16(page.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let code = match status {
        Some(s) if code != StatusCode::NOT_FOUND => s,
        _ => code,
    };
    let mut resp = Response::new(Body::from(page.body));
    *resp.status_mut() = code;
    resp.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(page.content_type));
    resp
}

fn asset(name: &str) -> Response {
    let Some(a) = super::assets::find(name) else {
        return plain(StatusCode::NOT_FOUND, "retry-run ui: not found");
    };
    let mut resp = Response::new(Body::from(a.body));
    let h = resp.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(a.content_type));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=31536000, immutable"));
    resp
}

fn plain(code: StatusCode, text: &str) -> Response {
    let mut resp = Response::new(Body::from(format!("{text}\n")));
    *resp.status_mut() = code;
    resp.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    resp
}

/// Server-Sent Events: `changed` at once (what the page was rendered
/// from may already be behind), then each time the log at `events` grows
/// or is rewritten (woken by inotify on its directory, [`super::live`],
/// or by a look every 300 ms where inotify cannot watch); ends when the
/// server does.
fn live(events: PathBuf) -> Response {
    let first = Stamp::of(&events);
    let dir = events.parent().map(Path::to_path_buf).unwrap_or_default();
    let stream = futures_util::stream::unfold((events, dir, None, first, true), |state| async move {
        let (events, dir, wake, last, now) = state;
        if now {
            let e = Event::default().event("changed").data("0");
            return Some((Ok::<_, std::convert::Infallible>(e), (events, dir, wake, last, false)));
        }
        // Watched from here on: set up in the stream, on the runtime.
        let mut wake = wake.unwrap_or_else(|| super::live::Wake::new(&dir));
        loop {
            wake.next().await;
            if crate::process::interrupted().is_some() {
                return None;
            }
            let seen = Stamp::of(&events);
            if seen != last {
                let len = seen.map_or(0, |s| s.len());
                let e = Event::default().event("changed").data(len.to_string());
                return Some((Ok(e), (events, dir, Some(wake), seen, false)));
            }
        }
    });
    Sse::new(stream).keep_alive(KeepAlive::default()).into_response()
}

/// `POST /tasks/<id>/review`: exactly `retry-run review`'s verb.
async fn review(app: &Arc<App>, id: String, form: Vec<(String, String)>) -> Response {
    let req = match super::actions::review_request(&id, &form) {
        Ok(r) => r,
        Err(e) => return refused(app, id, "review", e.to_string(), None, StatusCode::BAD_REQUEST).await,
    };
    let dir = app.dir.clone();
    match tokio::task::spawn_blocking(move || crate::review::review(&dir, req)).await {
        Ok(Ok(_)) => to_task(&id),
        Ok(Err(e)) => {
            let code = if e.is_usage() { StatusCode::BAD_REQUEST } else { StatusCode::CONFLICT };
            let hint = e.hint();
            refused(app, id, "review", e.to_string(), hint, code).await
        }
        Err(_) => plain(StatusCode::INTERNAL_SERVER_ERROR, "retry-run ui: the review stopped before it ended"),
    }
}

/// `POST /tasks/<id>/land`: exactly `retry-run land`'s verb.
async fn land(app: &Arc<App>, id: String, form: Vec<(String, String)>) -> Response {
    let opts = super::actions::land_options(&id, &form);
    let dir = app.dir.clone();
    match tokio::task::spawn_blocking(move || crate::run::land::land(&dir, &opts)).await {
        Ok(Ok(crate::run::land::LandEnded::Landed { .. })) => to_task(&id),
        Ok(Ok(crate::run::land::LandEnded::Rejected { text, .. })) => {
            refused(app, id, "land", text, None, StatusCode::CONFLICT).await
        }
        Ok(Err(e)) => {
            let code = if e.is_usage() { StatusCode::BAD_REQUEST } else { StatusCode::CONFLICT };
            let hint = e.hint().filter(|h| !h.is_empty());
            refused(app, id, "land", e.to_string(), hint, code).await
        }
        Err(_) => plain(StatusCode::INTERNAL_SERVER_ERROR, "retry-run ui: the land stopped before it ended"),
    }
}

/// The task's page with why `action` was refused, as `code`.
async fn refused(
    app: &Arc<App>,
    id: String,
    action: &'static str,
    message: String,
    hint: Option<String>,
    code: StatusCode,
) -> Response {
    let route = Route::Task { id, refused: Some(ActionRefusal { action, message, hint }) };
    page(app, route, Some(code)).await
}

/// 303 to the task's page.
fn to_task(id: &str) -> Response {
    let mut resp = StatusCode::SEE_OTHER.into_response();
    if let Ok(loc) = HeaderValue::from_str(&format!("/tasks/{id}")) {
        resp.headers_mut().insert(header::LOCATION, loc);
    }
    resp
}
