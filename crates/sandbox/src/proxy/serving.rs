//! The proxy outside the namespace: it accepts each connection, judges
//! the host it asks for, reaches it and relays the bytes, and logs each
//! connection as one JSON line ([`Connection`]).

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
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

use super::heads::{
    Asked, MAX_HEAD, Sniffed, answer, bad_request, head_len, parse_head, refusal, response_len, status_of,
};
use super::rules::{HostRule, allowed, authority};

/// A name that resolves only to the machine the proxy runs on.
#[derive(Debug, thiserror::Error)]
#[error(
    "{host} resolves to {ip}, an address of the machine the proxy runs on; to reach it, name the address in the network list"
)]
pub(super) struct LocalOnly {
    host: String,
    ip: IpAddr,
}

/// The addresses of `host` the proxy may connect to, from those it
/// resolved to. A name that resolves to this machine (a loopback or
/// unspecified address) is refused unless the request named the address
/// itself or `localhost`: otherwise a rule for a domain would let any name
/// beneath it that someone points at 127.0.0.1 reach the services of the
/// machine the proxy runs on. Pure.
pub(super) fn usable(host: &str, resolved: Vec<SocketAddr>) -> Result<Vec<SocketAddr>, LocalOnly> {
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
pub(super) trait Socket: AsyncRead + AsyncWrite + Unpin + Send + 'static {
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
pub(super) struct Shared {
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

pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
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
    /// [`crate::LimitHit`] reads them.
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
/// ([`crate::LimitHit`], `connections_logged`).
pub const LOG_CAP: u64 = 1000;

/// The connections one proxy serves at once. All of them are served on
/// one thread (and the names they ask for resolved on at most
/// [`RESOLVERS`] more), so a confined process that opens thousands of
/// connections costs the process running the proxy no thread; past this
/// bound, a new connection gets a 503 answer that says why, and how many
/// were refused is written to the log once, when the proxy stops, as a
/// limit hit ([`crate::LimitHit`], `connections_open`). A program of a
/// few dozen parallel requests (a package manager, a browser) stays well
/// below it.
pub const MAX_OPEN: usize = 256;
/// The refusals past [`MAX_OPEN`] that wait at once for their client to
/// close ([`answer_and_close`]); past these, the answer is sent and the
/// socket closed at once.
pub(super) const MAX_REFUSING: usize = 64;
/// The threads that resolve host names for one proxy (the system's
/// resolver blocks); one more name to resolve waits for one of them.
pub(super) const RESOLVERS: usize = 4;

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
pub(super) fn serve(
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
pub(super) async fn stopping(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

/// Accepts connections on `unix` and `tcp` until the proxy stops, each
/// served as a task of its own, then waits until each has ended and been
/// logged (the open ones are cut).
pub(super) async fn accept_all(
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
pub(super) async fn connection<S: Socket>(shared: Arc<Shared>, client: S, mut stop: watch::Receiver<bool>) {
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
pub(super) fn busy() -> Vec<u8> {
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
pub(super) async fn handle<S: Socket>(shared: &Shared, mut client: S, entry: &mut Connection) {
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
        Asked::Connect { .. } => {
            if let Err(e) = client.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").await {
                entry.error = Some(e.to_string());
                return;
            }
            rest
        }
        Asked::Forward { mut head, .. } => {
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
pub(super) async fn answer_and_close<S: Socket>(mut s: S, answer: &[u8]) {
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
pub(super) async fn answer_at_once<S: Socket>(mut s: S, answer: &[u8]) {
    let _ = tokio::time::timeout(LINGER, s.write_all(answer)).await;
    let _ = s.shutdown().await;
}

/// Why no request head could be read.
pub(super) enum HeadError {
    /// The client went away; nobody to answer.
    Closed(&'static str),
    /// A head the proxy will not read (too long), to answer with a 400.
    Bad(String),
}

/// What [`read_head`] says of a peer that stops early: (before anything,
/// in the middle, broken off).
pub(super) type Ends = [&'static str; 3];
pub(super) const REQUEST_HEAD: Ends = [
    "closed before sending a request",
    "closed in the middle of its request head",
    "broke off while sending its request head",
];
pub(super) const RESPONSE_HEAD: Ends = ["the proxy did not answer"; 3];

/// Reads from `s` until `head_len` finds a whole head: the head, blank line
/// included, and whatever came after it. When `head_len` finds that what
/// came is no head, all of it comes back as the head, for the parser to
/// say why.
pub(super) async fn read_head<R: AsyncRead + Unpin, E>(
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

/// Why an allowed host was not reached.
pub(super) enum Unreached {
    /// A name that resolves to this machine ([`usable`]).
    Refused(String),
    /// Not resolved, or no address answered in time.
    Failed(String),
}

/// A connection to `host:port`, trying each of its usable addresses within
/// [`CONNECT_TIMEOUT`] in all.
pub(super) async fn reach(host: &str, port: u16) -> Result<TcpStream, Unreached> {
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
pub(super) async fn splice<A: Socket, B: Socket>(
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
pub(super) async fn pump(
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

/// How long a client has to send its whole request head.
pub(super) const HEAD_TIMEOUT: Duration = Duration::from_secs(30);
/// How long reaching an allowed host may take, every address it resolves to
/// included.
pub(super) const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The size of the buffer of each direction of a relayed connection.
pub(super) const PIPE_BUFFER: usize = 64 * 1024;
/// How long the proxy waits, after its own answer, for the client to close.
pub(super) const LINGER: Duration = Duration::from_secs(2);
