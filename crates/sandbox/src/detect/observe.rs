//! Detect mode's eyes on the network: the connections, sockets and
//! servers of the agent and of its checks, seen as they make them, each recorded as what it was (see
//! [`crate::detect::seen`] for how each is read, judged and said).
//!
//! Nothing confines the agent in detect mode, so nothing stops it (or a
//! check, which runs code it wrote) from sending a secret over TCP,
//! writing a command to `docker.sock` or serving the worktree on
//! `0.0.0.0`. What can be had is the record: a seccomp filter, installed
//! in the command's process just before it executes (every process it
//! starts inherits it, and none can remove it), stops each `connect`, each
//! `sendto` that names an address, each `sendmsg` and `sendmmsg`, each
//! `bind` and `listen` (and 32-bit x86's `socketcall` for those), in every
//! ABI of the machine, and hands it to
//! this process (`SECCOMP_RET_USER_NOTIF`). A thread here reads the
//! address from the caller's memory (`process_vm_readv`), the socket's kind
//! from a copy of its descriptor (`pidfd_getfd`), the program's name, and
//! lets the call go on as it was (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`):
//! nothing is refused, no call fails, and a call the filter does not stop
//! (a `write` on a connected socket) costs nothing.
//!
//! Installing a filter needs `CAP_SYS_ADMIN` or `no_new_privs`. As root,
//! the filter goes in without it, and a setuid program works as it does
//! unconfined. Any other user's agent and checks get `no_new_privs`, as
//! they have in the other modes (bubblewrap and seccomp set it): a setuid
//! program (`sudo`, `su`) does not gain privileges under it, and `sudo`
//! says so and fails. A check that needs `sudo` runs as it did (commit
//! 10bad13) only with `mode = "off"`, where nothing is observed.
//! `worktree.setup` and the verifier are not observed.
//!
//! The listener (the descriptor the notifications come on) is made in the
//! command's process, which is left to exec only once this process has
//! taken a copy (`pidfd_open`, `pidfd_getfd`); the command's own copy is
//! closed by its exec. Where that cannot be done (a kernel before 5.6, a
//! filter with a listener already above: an agent run under another
//! detect mode), the command runs unobserved and the record says why.
//! This process is made not dumpable, so the agent (the same user) cannot
//! take the listener from it, nor trace it.
//!
//! What was seen is judged once the command and everything it left have
//! ended (nothing of the agent runs then to change it) and appended to the
//! sandbox's log ([`crate::detect::seen::Seen`]), which `run` reads into
//! `AgentFinished.network_seen` and each `CheckFinished.network_seen`.

use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use crate::detect::seen::{self, Call, Dest, Machine, Observed, Sock, Trap, Trapped};
use crate::sys::{fd, net, notify};

/// The destinations recorded, each once with a count: a command that
/// connects in a loop cannot grow the record without bound.
const MAX_SEEN: usize = 1000;

/// What the thread hands back: the machine before the command, what it
/// saw (each destination with how many times), how many more it did not
/// keep, and why it saw nothing, when it could not.
#[derive(Debug, Default)]
struct Served {
    machine: Machine,
    seen: Vec<(Observed, u64)>,
    unkept: u64,
    why_not: Option<String>,
}

/// Observation of one command: its filter, the pipes of the hand-over,
/// and the thread that serves the notifications; or why there is none.
pub struct Observer {
    running: Option<Running>,
    why_not: Option<String>,
}

struct Running {
    program: Arc<Vec<libc::sock_filter>>,
    /// The command's ends: it says its pid and the listener's number on
    /// `hello`, and waits for one byte on `go` (`y`: taken).
    hello: OwnedFd,
    go: OwnedFd,
    /// Both ends of the pipe that stops the thread (the reading one shared
    /// with it, so that the byte never goes to a pipe no one reads).
    stop: (Arc<OwnedFd>, OwnedFd),
    thread: JoinHandle<Served>,
    /// Why the hand-over failed (the command did not start).
    refused: Arc<Mutex<Option<String>>>,
}

impl Observer {
    /// Ready to observe a command (detect mode's agent and checks:
    /// `observe`, with `reap`, so that nothing under the filter outlives this process,
    /// which answers it); `None` otherwise. One that cannot be made says
    /// why in the log ([`Observer::finish`]). The caller makes itself not
    /// dumpable.
    pub fn for_command(observe: bool, reap: bool) -> Option<Observer> {
        if !observe || !reap {
            return None;
        }
        Some(match Running::start() {
            Ok(r) => Observer { running: Some(r), why_not: None },
            Err(why) => Observer { running: None, why_not: Some(why.to_string()) },
        })
    }

    /// Has `cmd` install the filter just before it executes, and wait there
    /// until this process holds the listener.
    pub fn install_on(&self, cmd: &mut Command) {
        let Some(r) = &self.running else { return };
        notify::install_on_exec(cmd, Arc::clone(&r.program), r.hello.as_raw_fd(), r.go.as_raw_fd());
    }

    /// Whether the hand-over failed, so the command did not start: it is
    /// started again without (and the log says why).
    pub fn refused(&self) -> bool {
        self.running.as_ref().is_some_and(|r| r.refused.lock().unwrap_or_else(PoisonError::into_inner).is_some())
    }

    /// Once the command and all it left have ended: the thread stopped,
    /// what it saw judged against what it may `reach`, and appended to
    /// `log`, one line each (findings first), with a line that says why
    /// nothing was seen, when nothing could be.
    pub fn finish(self, log: Option<&Path>, reach: &Reach<'_>) {
        let (served, refused) = match self.running {
            Some(r) => {
                // Its own pipe, whose reading end it holds too.
                let _ = fd::write(r.stop.1.as_fd(), b"x");
                let served = r
                    .thread
                    .join()
                    .unwrap_or_else(|_| Served { why_not: Some("its thread failed".into()), ..Served::default() });
                let refused = r.refused.lock().unwrap_or_else(PoisonError::into_inner).take();
                (served, refused)
            }
            None => (Served::default(), None),
        };
        let Some(log) = log else { return };
        let why_not = refused.or(self.why_not).or(served.why_not);
        let mut lines: Vec<String> = Vec::new();
        if let Some(why) = why_not {
            let note = seen::Seen {
                seen: "unobserved".into(),
                what: format!("detect mode could not observe the command's connections and sockets: {why}"),
                count: 0,
            };
            lines.extend(serde_json::to_string(&note).ok());
        }
        let rules: Vec<crate::proxy::HostRule> =
            reach.network.iter().filter_map(|r| crate::proxy::parse_rule(r).ok()).collect();
        let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
        let inside: Vec<std::path::PathBuf> =
            reach.inside.iter().flat_map(|d| [d.to_path_buf(), canonical(d)]).collect();
        let allowed = seen::Allowed {
            rules: &rules,
            host_network: reach.host_network,
            unix_sockets: reach.unix_sockets,
            inside: &inside,
        };
        let judged = seen::judge_all(&served.seen, &allowed, &served.machine, &mut resolve);
        lines.extend(judged.iter().filter_map(|l| serde_json::to_string(l).ok()));
        if served.unkept > 0 {
            let line = serde_json::json!({"limit": "connections_logged", "max": MAX_SEEN, "refused": served.unkept});
            lines.push(line.to_string());
        }
        if !lines.is_empty() {
            append_nofollow(log, &lines);
        }
    }
}

/// What an observed command may reach in the other modes: the network
/// list's hosts (`host`, `host:port`, `*.domain`), the machine's network
/// (`network_mode = "host"`), named UNIX sockets (`sandbox.unix_sockets`),
/// and its own directories (the worktree, its TMPDIR), where its sockets
/// are its own.
pub struct Reach<'a> {
    pub network: &'a [String],
    pub host_network: bool,
    pub unix_sockets: bool,
    pub inside: [&'a Path; 2],
}

/// Why the command's sockets cannot be observed.
#[derive(Debug, thiserror::Error)]
enum NotObserved {
    #[error("no seccomp filter is written for this architecture")]
    NoFilter,
    #[error("cannot make a pipe: {0}")]
    Pipe(std::io::Error),
    #[error("cannot start its thread: {0}")]
    Thread(std::io::Error),
}

impl Running {
    fn start() -> Result<Running, NotObserved> {
        let program = program().ok_or(NotObserved::NoFilter)?;
        let pipe = || fd::pipe().map_err(NotObserved::Pipe);
        let (hello_r, hello_w) = pipe()?;
        let (go_r, go_w) = pipe()?;
        let (stop_r, stop_w) = pipe()?;
        let stop_r = Arc::new(stop_r);
        let refused = Arc::new(Mutex::new(None));
        let (said, stop) = (Arc::clone(&refused), Arc::clone(&stop_r));
        let thread = std::thread::Builder::new()
            .name("observe".into())
            .spawn(move || serve(hello_r, go_w, &stop, &said))
            .map_err(NotObserved::Thread)?;
        Ok(Running { program: Arc::new(program), hello: hello_w, go: go_r, stop: (stop_r, stop_w), thread, refused })
    }
}

/// The thread: the machine as it is before the command, the listener
/// taken from the command (`hello`, then `go`), then every notification
/// served until `stop` (or until no process is left under the filter).
fn serve(hello: OwnedFd, go: OwnedFd, stop: &OwnedFd, refused: &Mutex<Option<String>>) -> Served {
    let mut served = Served { machine: machine_now(), ..Served::default() };
    let say = |byte: &[u8; 1]| {
        let _ = fd::write(go.as_fd(), byte);
    };
    let Some((pid, fd)) = read_hello(&hello, stop) else {
        // The command never got to its filter (it could not start, or it
        // was not asked to): nothing to serve.
        return served;
    };
    let listener = if fd < 0 {
        Err(why_refused(-fd))
    } else {
        take_fd(pid, fd).map_err(|e| format!("cannot take the filter's listener from the command (pidfd_getfd): {e}"))
    };
    let listener = match listener {
        Ok(l) => l,
        Err(why) => {
            *refused.lock().unwrap_or_else(PoisonError::into_inner) = Some(why);
            say(b"n");
            return served;
        }
    };
    say(b"y");
    drop(go);
    let mut index: std::collections::HashMap<Observed, usize> = std::collections::HashMap::new();
    loop {
        let mut fds = [
            libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: stop.as_raw_fd(), events: libc::POLLIN, revents: 0 },
        ];
        if let Err(e) = fd::poll(&mut fds) {
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            break;
        }
        if fds[1].revents != 0 {
            break;
        }
        if fds[0].revents & libc::POLLIN != 0 {
            for o in serve_one(&listener) {
                keep(&mut served, &mut index, o);
            }
        } else if fds[0].revents != 0 {
            // POLLHUP: no process is left under the filter.
            break;
        }
    }
    served
}

/// `o` counted: a destination seen before counts once more; a new one is
/// kept while fewer than [`MAX_SEEN`] are.
fn keep(served: &mut Served, index: &mut std::collections::HashMap<Observed, usize>, o: Observed) {
    if let Some(&i) = index.get(&o) {
        served.seen[i].1 += 1;
    } else if served.seen.len() < MAX_SEEN {
        index.insert(o.clone(), served.seen.len());
        served.seen.push((o, 1));
    } else {
        served.unkept += 1;
    }
}

/// Why the kernel refused the filter, by its errno.
fn why_refused(errno: i32) -> String {
    let e = std::io::Error::from_raw_os_error(errno);
    match errno {
        libc::EBUSY => format!(
            "a seccomp filter with a listener is already installed above it (retry-run itself in detect mode, a container runtime): {e}"
        ),
        libc::EINVAL | libc::ENOSYS => {
            format!(
                "this kernel cannot hand seccomp notifications to another process (Linux 5.5 or newer is needed): {e}"
            )
        }
        _ => format!("the kernel refused its seccomp filter: {e}"),
    }
}

/// The command's pid and the listener's number, as it said them on
/// `hello`; `None` when `stop` came first or it said nothing.
fn read_hello(hello: &OwnedFd, stop: &OwnedFd) -> Option<(libc::pid_t, i32)> {
    loop {
        let mut fds = [
            libc::pollfd { fd: hello.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: stop.as_raw_fd(), events: libc::POLLIN, revents: 0 },
        ];
        let polled = fd::poll(&mut fds);
        if polled.as_ref().is_err_and(|e| e.raw_os_error() == Some(libc::EINTR)) {
            continue;
        }
        if polled.is_err() || fds[1].revents != 0 || fds[0].revents & libc::POLLIN == 0 {
            return None;
        }
        let mut msg = [0u8; 8];
        // The command writes its 8 bytes at once (a pipe's write of less
        // than PIPE_BUF is whole).
        if !matches!(fd::read(hello.as_fd(), &mut msg), Ok(8)) {
            return None;
        }
        let pid = i32::from_ne_bytes([msg[0], msg[1], msg[2], msg[3]]);
        let fd = i32::from_ne_bytes([msg[4], msg[5], msg[6], msg[7]]);
        return Some((pid, fd));
    }
}

/// A pidfd of thread or process `tid` (for one that is not its process's
/// first thread, on a kernel before 6.9: `None`).
fn pidfd(tid: libc::pid_t) -> Option<OwnedFd> {
    [fd::PIDFD_THREAD, 0].into_iter().find_map(|flags| fd::pidfd_open(tid, flags))
}

/// A copy of descriptor `fd` of process `pid`.
fn take_fd(pid: libc::pid_t, fd: RawFd) -> std::io::Result<OwnedFd> {
    let Some(p) = pidfd(pid) else { return Err(std::io::Error::last_os_error()) };
    fd::pidfd_getfd(&p, fd)
}

/// Receives one notification, looks at the call, and lets it go on.
fn serve_one(listener: &OwnedFd) -> Vec<Observed> {
    let Some(req) = notify::receive(listener.as_fd()) else {
        // ENOENT: the caller is gone already.
        return Vec::new();
    };
    // A failure in the look must neither keep the call waiting nor end
    // the thread (the calls stopped would then fail, ENOSYS).
    let seen = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| look(listener, &req))).unwrap_or_default();
    notify::let_go_on(listener.as_fd(), req.id);
    seen
}

/// Whether the call `id` still waits (its caller alive, so that what was
/// read from a pid was read from the caller, not from a process that took
/// its number since).
fn still_waiting(listener: &OwnedFd, id: u64) -> bool {
    notify::still_waiting(listener.as_fd(), id)
}

/// What the stopped call `req` sends where, read while it waits.
fn look(listener: &OwnedFd, req: &libc::seccomp_notif) -> Vec<Observed> {
    let tid = req.pid as libc::pid_t;
    let mut read = |at: u64, len: usize| read_memory(tid, at, len);
    let trap = match seen::trapped(req.data.arch, req.data.nr as u32, req.data.args) {
        Trapped::Call(t) => t,
        Trapped::Socketcall { call, argp } => match read(argp, 24).and_then(|w| seen::socketcall_args(&w)) {
            Some(args) => Trap { call, args, compat: true },
            None => Trap { call, args: [0; 6], compat: true },
        },
        Trapped::Other => return Vec::new(),
    };
    let sent = seen::sent(&trap, &mut read);
    let sock = socket_of(tid, sent.fd, trap.call == Call::Listen);
    let program = program_of(tid);
    let mut dests: Vec<Dest> = sent.addrs.iter().map(|a| seen::dest(a)).collect();
    if sent.unreadable && dests.is_empty() {
        dests.push(Dest::Unreadable);
    }
    // A send on a connected datagram socket names no address: a query to
    // a DNS server is recorded by its peer (the connection was seen at its
    // `connect`, the names only now).
    if dests.is_empty()
        && !matches!(trap.call, Call::Connect | Call::Bind | Call::Listen)
        && let Some(peer) = sock.peer.filter(|p| p.port() == 53)
    {
        dests.push(Dest::Inet(peer));
    }
    // A server is where its socket is bound (`bind` came before, or the
    // kernel binds it to a port of its choosing at `listen`).
    if trap.call == Call::Listen
        && let Some(local) = sock.local
    {
        dests.push(Dest::Inet(local));
    }
    let mut out = Vec::new();
    for dest in dests {
        if !seen::worth_recording(trap.call, sock.kind, sent.fastopen, &dest) {
            continue;
        }
        let names = match &dest {
            Dest::Inet(a) if a.port() == 53 => seen::dns_names(&sent.payload),
            _ => Vec::new(),
        };
        let (dest, resolved) = match dest {
            Dest::UnixPath(p) => {
                // A relative path is the caller's directory's (read while
                // the call waits).
                let cwd = || std::fs::read_link(format!("/proc/{tid}/cwd")).ok();
                let abs = match p.is_relative().then(cwd).flatten() {
                    Some(cwd) => seen::absolute(&p, &cwd),
                    None => seen::absolute(&p, Path::new("/")),
                };
                // A socket that does not exist reaches nothing (glibc
                // tries nscd's on every lookup, where none runs).
                let Ok(real) = std::fs::canonicalize(&abs) else { continue };
                let real = (real != abs).then_some(real);
                (Dest::UnixPath(abs), real)
            }
            other => (other, None),
        };
        out.push(Observed {
            call: trap.call,
            sock: sock.kind,
            dest,
            resolved,
            fastopen: sent.fastopen,
            names,
            program: program.clone(),
        });
    }
    // All read from the caller while its call waited, or nothing.
    if !still_waiting(listener, req.id) {
        return Vec::new();
    }
    out
}

/// `len` bytes of process `tid`'s memory at `at` (fewer where its mapping
/// ends), through `process_vm_readv`, else `/proc/<tid>/mem`.
fn read_memory(tid: libc::pid_t, at: u64, len: usize) -> Option<Vec<u8>> {
    if len == 0 {
        return Some(Vec::new());
    }
    let mut buf = vec![0u8; len];
    if let Some(n) = notify::read_memory(tid, at, &mut buf) {
        buf.truncate(n);
        return Some(buf);
    }
    use std::os::unix::fs::FileExt;
    let mem = std::fs::File::open(format!("/proc/{tid}/mem")).ok()?;
    let n = mem.read_at(&mut buf, at).ok().filter(|n| *n > 0)?;
    buf.truncate(n);
    Some(buf)
}

/// What is known of a socket of a stopped caller: its kind, the peer of a
/// connected datagram socket, and its own IP address when asked for.
#[derive(Debug, Default)]
struct SocketInfo {
    kind: Option<Sock>,
    peer: Option<std::net::SocketAddr>,
    local: Option<std::net::SocketAddr>,
}

/// Descriptor `fd` of thread `tid`, looked at through a copy (its own
/// address too: `local`).
fn socket_of(tid: libc::pid_t, fd: RawFd, local: bool) -> SocketInfo {
    let Some(copy) = pidfd(tid).and_then(|p| fd::pidfd_getfd(&p, fd).ok()) else { return SocketInfo::default() };
    let int = |opt: libc::c_int| net::option(copy.as_fd(), opt);
    let (Some(ty), Some(protocol)) = (int(libc::SO_TYPE), int(libc::SO_PROTOCOL)) else {
        return SocketInfo::default();
    };
    let mut info = SocketInfo { kind: Some(Sock { ty, protocol }), peer: None, local: None };
    if ty == libc::SOCK_DGRAM {
        info.peer = address_of(&copy, net::End::Peer);
    }
    if local {
        info.local = address_of(&copy, net::End::Own);
    }
    info
}

/// A socket's peer or own IP address, when it has one.
fn address_of(sock: &OwnedFd, end: net::End) -> Option<std::net::SocketAddr> {
    let bytes = net::address(sock.as_fd(), end)?;
    match seen::dest(&bytes) {
        Dest::Inet(a) => Some(a),
        _ => None,
    }
}

/// The name of the process thread `tid` belongs to (its first thread's
/// `comm`: a thread may name itself otherwise).
fn program_of(tid: libc::pid_t) -> String {
    let status = std::fs::read_to_string(format!("/proc/{tid}/status")).unwrap_or_default();
    let field = |name: &str| status.lines().find_map(|l| l.strip_prefix(name)).map(str::trim);
    match field("Tgid:") {
        Some(tgid) if tgid != tid.to_string() => std::fs::read_to_string(format!("/proc/{tgid}/comm"))
            .map(|c| c.trim_end_matches('\n').to_string())
            .unwrap_or_default(),
        _ => field("Name:").unwrap_or_default().to_string(),
    }
}

/// The machine as it is now, before the command runs: what listens on its
/// loopback, its abstract sockets, its resolvers.
fn machine_now() -> Machine {
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    let mut udp_ports = bound_on_loopback(&read("/proc/net/udp"));
    udp_ports.extend(bound_on_loopback(&read("/proc/net/udp6")));
    udp_ports.sort_unstable();
    udp_ports.dedup();
    Machine {
        tcp_ports: crate::proxy::listening::host_listening_ports(),
        udp_ports,
        abstract_names: abstract_sockets(&read("/proc/net/unix")),
        resolvers: resolvers(&read("/etc/resolv.conf")),
    }
}

/// The ports of `/proc/net/udp{,6}`'s text (`sl local_address ...`,
/// addresses as hex `ADDR:PORT`) bound on a loopback address (any of
/// 127/8, ::1, ::ffff:127/104) or every address. Pure.
fn bound_on_loopback(text: &str) -> Vec<u16> {
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let local = line.split_whitespace().nth(1)?;
            let (addr, port) = local.split_once(':')?;
            let any = addr.bytes().all(|b| b == b'0');
            let v4 = addr.len() == 8 && addr.ends_with("7F");
            let v6 = addr == "00000000000000000000000001000000"
                || (addr.len() == 32 && addr.starts_with("0000000000000000FFFF0000") && addr.ends_with("7F"));
            (any || v4 || v6).then(|| u16::from_str_radix(port, 16).ok()).flatten()
        })
        .collect()
}

/// The abstract sockets `/proc/net/unix`'s text names (`@name`, as the
/// kernel writes them). Pure.
fn abstract_sockets(text: &str) -> Vec<String> {
    let mut out: Vec<String> = text
        .lines()
        .skip(1)
        .filter_map(|line| {
            // Num RefCount Protocol Flags Type St Inode Path: the path may
            // hold spaces.
            let mut rest = line;
            for _ in 0..7 {
                rest = rest.trim_start().split_once(char::is_whitespace)?.1;
            }
            let path = rest.trim_start();
            path.starts_with('@').then(|| path.to_string())
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The `nameserver` addresses of `/etc/resolv.conf`'s text. Pure.
fn resolvers(text: &str) -> Vec<std::net::IpAddr> {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("nameserver"))
        .filter_map(|rest| rest.split_whitespace().next())
        .filter_map(|a| a.split('%').next()?.parse().ok())
        .collect()
}

/// How long the allowed names may take to resolve, all together.
const RESOLVE_TIME: std::time::Duration = std::time::Duration::from_secs(3);

/// Each of `names` and the addresses it resolves to now (those that
/// resolve within [`RESOLVE_TIME`]; at most 32 names).
fn resolve(names: &[String]) -> Vec<(String, Vec<std::net::IpAddr>)> {
    use std::net::ToSocketAddrs as _;
    let (tx, rx) = std::sync::mpsc::channel();
    for name in names.iter().take(32) {
        let (tx, name) = (tx.clone(), name.clone());
        let _ = std::thread::Builder::new().name("observe-resolve".into()).spawn(move || {
            let ips: Vec<std::net::IpAddr> =
                (name.as_str(), 0).to_socket_addrs().map(|a| a.map(|s| s.ip()).collect()).unwrap_or_default();
            let _ = tx.send((name, ips));
        });
    }
    drop(tx);
    let deadline = std::time::Instant::now() + RESOLVE_TIME;
    let mut out = Vec::new();
    while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(r) => out.push(r),
            Err(_) => break,
        }
    }
    out
}

/// Appends `lines` to `log`, never through a link (the agent, unconfined,
/// could have put one there): a link is replaced by a new file.
fn append_nofollow(log: &Path, lines: &[String]) {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let open = |extra: libc::c_int| {
        std::fs::OpenOptions::new().append(true).create(true).custom_flags(libc::O_NOFOLLOW | extra).open(log)
    };
    let file = match open(0) {
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            let _ = std::fs::remove_file(log);
            open(libc::O_EXCL)
        }
        other => other,
    };
    if let Ok(mut f) = file {
        let mut text = lines.join("\n");
        text.push('\n');
        let _ = f.write_all(text.as_bytes());
    }
}

// ---------------------------------------------------------------------------
// The filter
// ---------------------------------------------------------------------------

/// One instruction of the filter, its jumps to labels.
#[derive(Debug, Clone, Copy)]
enum Op {
    /// The call's architecture, number, or one half of an argument.
    LdArch,
    LdNr,
    LdArg {
        index: u32,
        high: bool,
    },
    /// Jump to the label when the value loaded equals `k`.
    Jeq(u32, Label),
    Ret(u32),
    At(Label),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Label {
    Arch(usize),
    SendTo,
    SendToHigh,
    Socketcall,
    Notify,
    Allow,
}

/// `struct seccomp_data`'s offsets: `nr`, `arch`, then `args` (u64 each)
/// from 16.
const NR: u32 = 0;
const ARCH: u32 = 4;
const ARGS: u32 = 16;

/// The filter: for each ABI of [`crate::detect::seen::ABIS`], `connect`,
/// `sendmsg`, `sendmmsg`, `bind`, `listen`, `sendto` with an address (its
/// fifth argument not NULL) and `socketcall` of those go to the listener; every other
/// call, and every other architecture, is allowed: nothing is refused.
/// `None` where no ABI is known (or a jump would be too long).
fn program() -> Option<Vec<libc::sock_filter>> {
    let abis = seen::ABIS;
    if abis.is_empty() {
        return None;
    }
    let mut archs: Vec<u32> = abis.iter().map(|a| a.arch).collect();
    archs.dedup();
    let mut ops = vec![Op::LdArch];
    ops.extend(archs.iter().enumerate().map(|(i, a)| Op::Jeq(*a, Label::Arch(i))));
    ops.push(Op::Ret(libc::SECCOMP_RET_ALLOW));
    for (i, arch) in archs.iter().enumerate() {
        ops.extend([Op::At(Label::Arch(i)), Op::LdNr]);
        for abi in abis.iter().filter(|a| a.arch == *arch) {
            for (nr, call) in abi.calls {
                ops.push(Op::Jeq(nr, if call == Call::SendTo { Label::SendTo } else { Label::Notify }));
            }
            if let Some(nr) = abi.socketcall {
                ops.push(Op::Jeq(nr, Label::Socketcall));
            }
        }
        ops.push(Op::Ret(libc::SECCOMP_RET_ALLOW));
    }
    // sendto(fd, buf, len, flags, addr, alen): stopped when addr is not
    // NULL (a send on a connected socket, the usual `send`, goes on).
    ops.extend([
        Op::At(Label::SendTo),
        Op::LdArg { index: 4, high: false },
        Op::Jeq(0, Label::SendToHigh),
        Op::Ret(libc::SECCOMP_RET_USER_NOTIF),
        Op::At(Label::SendToHigh),
        Op::LdArg { index: 4, high: true },
        Op::Jeq(0, Label::Allow),
        Op::Ret(libc::SECCOMP_RET_USER_NOTIF),
        Op::At(Label::Socketcall),
        Op::LdArg { index: 0, high: false },
    ]);
    ops.extend(seen::SOCKETCALLS.iter().map(|(n, _)| Op::Jeq(*n, Label::Notify)));
    ops.extend([
        Op::Ret(libc::SECCOMP_RET_ALLOW),
        Op::At(Label::Notify),
        Op::Ret(libc::SECCOMP_RET_USER_NOTIF),
        Op::At(Label::Allow),
        Op::Ret(libc::SECCOMP_RET_ALLOW),
    ]);
    assemble(&ops)
}

/// `ops` as BPF, each jump made relative (`None` past 255 instructions).
fn assemble(ops: &[Op]) -> Option<Vec<libc::sock_filter>> {
    let mut at: Vec<(Label, usize)> = Vec::new();
    let mut n = 0;
    for op in ops {
        match op {
            Op::At(l) => at.push((*l, n)),
            _ => n += 1,
        }
    }
    let code = |c: u32| c as u16;
    let ld = |k: u32| libc::sock_filter { code: code(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS), jt: 0, jf: 0, k };
    // Little-endian: the low half of an argument first.
    let half = |high: bool| if high == cfg!(target_endian = "little") { 4 } else { 0 };
    let mut out = Vec::with_capacity(n);
    for op in ops {
        let pc = out.len();
        out.push(match *op {
            Op::At(_) => continue,
            Op::LdArch => ld(ARCH),
            Op::LdNr => ld(NR),
            Op::LdArg { index, high } => ld(ARGS + 8 * index + half(high)),
            Op::Jeq(k, label) => {
                let target = at.iter().find(|(l, _)| *l == label)?.1;
                let jt = u8::try_from(target.checked_sub(pc + 1)?).ok()?;
                libc::sock_filter { code: code(libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K), jt, jf: 0, k }
            }
            Op::Ret(k) => libc::sock_filter { code: code(libc::BPF_RET | libc::BPF_K), jt: 0, jf: 0, k },
        });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `prog` (the instructions [`assemble`] writes) on one call.
    fn run(prog: &[libc::sock_filter], arch: u32, nr: u32, args: [u64; 6]) -> u32 {
        let mut data = Vec::new();
        data.extend(nr.to_ne_bytes());
        data.extend(arch.to_ne_bytes());
        data.extend(0u64.to_ne_bytes());
        for a in args {
            data.extend(a.to_ne_bytes());
        }
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let i = prog[pc];
            let c = u32::from(i.code);
            if c == libc::BPF_LD | libc::BPF_W | libc::BPF_ABS {
                let k = i.k as usize;
                acc = u32::from_ne_bytes(data[k..k + 4].try_into().expect("4 bytes"));
                pc += 1;
            } else if c == libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K {
                pc += 1 + if acc == i.k { usize::from(i.jt) } else { usize::from(i.jf) };
            } else if c == libc::BPF_RET | libc::BPF_K {
                return i.k;
            } else {
                panic!("an instruction the filter never writes: {c:#x}");
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_filter_stops_the_calls_that_name_an_address_in_every_abi_and_nothing_else() {
        let prog = program().expect("a filter for x86_64");
        let (notify, allow) = (libc::SECCOMP_RET_USER_NOTIF, libc::SECCOMP_RET_ALLOW);
        let x64 = seen::AUDIT_ARCH_X86_64;
        let i386 = seen::AUDIT_ARCH_I386;
        let cases: &[(u32, u32, [u64; 6], u32, &str)] = &[
            (x64, 42, [0; 6], notify, "connect"),
            (x64, 46, [0; 6], notify, "sendmsg"),
            (x64, 307, [0; 6], notify, "sendmmsg"),
            (x64, 44, [3, 1, 1, 0, 0x7fff_0000_1000, 16], notify, "sendto with an address"),
            (x64, 44, [3, 1, 1, 0, 0x1000, 16], notify, "sendto with a low address"),
            (x64, 44, [3, 1, 1, 0, 0x7fff_0000_0000, 16], notify, "sendto with a high address"),
            (x64, 44, [3, 1, 1, 0, 0, 0], allow, "send: sendto without one"),
            (x64, 1, [0; 6], allow, "write"),
            (x64, 41, [0; 6], allow, "socket"),
            (x64, 49, [0; 6], notify, "bind"),
            (x64, 50, [0; 6], notify, "listen"),
            (x64, 43, [0; 6], allow, "accept"),
            (x64, seen::X32_BIT | 50, [0; 6], notify, "x32 listen"),
            (i386, 361, [0; 6], notify, "i386 bind"),
            (i386, 363, [0; 6], notify, "i386 listen"),
            (i386, 102, [2, 0x1000, 0, 0, 0, 0], notify, "socketcall bind"),
            (i386, 102, [4, 0x1000, 0, 0, 0, 0], notify, "socketcall listen"),
            (i386, 102, [1, 0x1000, 0, 0, 0, 0], allow, "socketcall socket"),
            (x64, seen::X32_BIT | 42, [0; 6], notify, "x32 connect"),
            (x64, seen::X32_BIT | 518, [0; 6], notify, "x32 sendmsg"),
            (x64, seen::X32_BIT | 46, [0; 6], allow, "x32 has no sendmsg at 46"),
            (x64, seen::X32_BIT | 1, [0; 6], allow, "x32 write: not refused"),
            (i386, 362, [0; 6], notify, "i386 connect"),
            (i386, 369, [3, 1, 1, 0, 0x1000, 16], notify, "i386 sendto with an address"),
            (i386, 369, [3, 1, 1, 0, 0, 0], allow, "i386 send"),
            (i386, 102, [3, 0x1000, 0, 0, 0, 0], notify, "socketcall connect"),
            (i386, 102, [16, 0x1000, 0, 0, 0, 0], notify, "socketcall sendmsg"),
            (i386, 102, [9, 0x1000, 0, 0, 0, 0], allow, "socketcall send"),
            (i386, 42, [0; 6], allow, "i386's 42 is no connect"),
            (seen::AUDIT_ARCH_AARCH64, 203, [0; 6], allow, "another architecture: allowed, never killed"),
        ];
        for (arch, nr, args, want, what) in cases {
            assert_eq!(run(&prog, *arch, *nr, *args), *want, "{what}");
        }
    }

    #[test]
    fn what_the_machine_has_before_the_command_is_read() {
        let udp = "  sl  local_address rem_address   st\n\
                   0: 3500007F:0035 00000000:0000 07\n\
                   1: 00000000:14E9 00000000:0000 07\n\
                   2: 0A000001:1F90 00000000:0000 07\n";
        assert_eq!(bound_on_loopback(udp), [53, 5353]);
        let udp6 = "  sl  local_address rem_address st\n\
                    0: 00000000000000000000000001000000:0277 00000000000000000000000000000000:0000 07\n\
                    1: 0000000000000000FFFF00000100007F:0801 00000000000000000000000000000000:0000 07\n\
                    2: 20010DB8000000000000000000000001:0050 00000000000000000000000000000000:0000 07\n";
        assert_eq!(bound_on_loopback(udp6), [631, 2049]);
        let unix = "Num       RefCount Protocol Flags    Type St Inode Path\n\
                    0000000000000000: 00000002 00000000 00010000 0001 01 20001 @/tmp/.X11-unix/X0\n\
                    0000000000000000: 00000002 00000000 00010000 0001 01 20002 /run/docker.sock\n\
                    0000000000000000: 00000002 00000000 00010000 0001 01 20003 @my bus@\n\
                    0000000000000000: 00000003 00000000 00000000 0001 03 20004\n";
        assert_eq!(abstract_sockets(unix), ["@/tmp/.X11-unix/X0", "@my bus@"]);
        let conf = "# generated\nnameserver 127.0.0.53\nnameserver fe80::1%eth0\noptions edns0\nsearch lan\n";
        assert_eq!(
            resolvers(conf),
            ["127.0.0.53".parse::<std::net::IpAddr>().expect("ip"), "fe80::1".parse().expect("ip")]
        );
    }

    #[test]
    fn the_log_is_appended_to_never_through_a_link() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("bashrc");
        std::fs::write(&target, "mine\n").expect("write");
        let log = dir.path().join("network-agent.jsonl");
        std::os::unix::fs::symlink(&target, &log).expect("link");
        append_nofollow(&log, &["one".into(), "two".into()]);
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "mine\n", "the link's target is left alone");
        assert_eq!(std::fs::read_to_string(&log).expect("read"), "one\ntwo\n");
        append_nofollow(&log, &["three".into()]);
        assert_eq!(std::fs::read_to_string(&log).expect("read"), "one\ntwo\nthree\n");
    }
}
