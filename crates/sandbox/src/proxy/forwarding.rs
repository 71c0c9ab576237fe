//! Inside the namespace: the forwarders from 127.0.0.1 to the proxy's
//! socket, and the refusers of direct connections to the machine's ports.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::thread::{self};
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream, UnixStream};

use super::heads::answer;
use super::rules::{Loopback, authority};
use super::serving::{Connection, LOG_CAP, answer_and_close, lock, splice};

// ---------------------------------------------------------------------------
// Inside the namespace
// ---------------------------------------------------------------------------

/// The handle of [`inside`]'s runtime, once made.
pub(super) static INSIDE: Mutex<Option<tokio::runtime::Handle>> = Mutex::new(None);

/// The runtime [`inside`] made, until [`start_inside`] gives it its thread.
pub(super) static UNSTARTED: Mutex<Option<tokio::runtime::Runtime>> = Mutex::new(None);

/// The runtime of the forwarders and refusers inside a namespace: one,
/// made by the first of them, whose thread [`start_inside`] starts once
/// they are all made (before the process confines itself, so that the
/// connections a confined process opens cost it no thread).
pub(super) fn inside() -> io::Result<tokio::runtime::Handle> {
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
pub(super) fn listener_on(rt: &tokio::runtime::Handle, listener: std::net::TcpListener) -> io::Result<TcpListener> {
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
pub(super) fn record_direct(log: &Mutex<(std::fs::File, u64)>, port: u16) {
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
pub(super) async fn relay(client: TcpStream, socket: &Path, target: Option<&Loopback>) {
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
