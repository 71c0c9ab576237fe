//! Test only: the probe the network tests of `layers/landlock.rs`,
//! `layers/seccomp.rs` and of the fallback confinement (`launch/`) share,
//! here for the system calls it makes to try each kind of socket. The test binary runs again in a process of its own
//! (confining the test process itself would confine every test after it),
//! told by its environment to confine itself and try each kind of socket,
//! one line of output per try.

use std::collections::BTreeMap;
use std::net::{TcpListener, TcpStream};

/// The confinement the re-run test puts itself in.
const MODE: &str = "RETRY_RUN_NET_PROBE";
/// The two ports it gets: `allowed,other`.
const PORTS: &str = "RETRY_RUN_NET_PROBE_PORTS";

/// What one try did: `Ok`, or the errno it failed with.
pub(crate) type Outcome = Result<(), i32>;

/// In the re-run test binary told `mode`: the allowed port and the
/// other one, each with a listener of the parent behind it.
pub(crate) fn child(mode: &str) -> Option<(u16, u16)> {
    if std::env::var(MODE).ok()? != mode {
        return None;
    }
    let ports = std::env::var(PORTS).ok()?;
    let (allowed, other) = ports.split_once(',')?;
    Some((allowed.parse().ok()?, other.parse().ok()?))
}

/// What the tries of the re-run test `test` (its `module_path!()` and
/// name) did in `mode`, by name, with two listeners on 127.0.0.1 open
/// here: the first's port is the allowed one. Panics, with the
/// output, when the re-run test failed.
pub(crate) fn rerun(test: &str, mode: &str) -> BTreeMap<String, Outcome> {
    let allowed = TcpListener::bind("127.0.0.1:0").expect("listener");
    let other = TcpListener::bind("127.0.0.1:0").expect("listener");
    let port = |l: &TcpListener| l.local_addr().expect("bound").port();
    let test = test.split_once("::").map_or(test, |(_crate, rest)| rest);
    let exe = std::env::current_exe().expect("test binary");
    let done = std::process::Command::new(&exe)
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(MODE, mode)
        .env(PORTS, format!("{},{}", port(&allowed), port(&other)))
        .output()
        .expect("re-run the test binary");
    let output = format!("{}{}", String::from_utf8_lossy(&done.stdout), String::from_utf8_lossy(&done.stderr));
    assert!(done.status.success(), "the re-run test failed:\n{output}");
    let outcomes: BTreeMap<String, Outcome> = output
        .lines()
        .filter_map(|l| l.strip_prefix("probe "))
        .filter_map(|l| {
            let (name, result) = l.split_once(' ')?;
            let outcome = match result.strip_prefix("errno ") {
                Some(n) => Err(n.parse().ok()?),
                None => Ok(()),
            };
            Some((name.to_string(), outcome))
        })
        .collect();
    assert!(outcomes.contains_key("socketpair"), "the re-run test tried nothing:\n{output}");
    outcomes
}

/// Tries every kind of socket, one line each, as [`rerun`] reads them.
pub(crate) fn try_all(allowed: u16, other: u16) {
    let report = |name: &str, outcome: Outcome| match outcome {
        Ok(()) => println!("probe {name} ok"),
        Err(errno) => println!("probe {name} errno {errno}"),
    };
    // The harness's own line is still open: start ours on a new one.
    println!();
    use libc::{
        AF_INET, AF_INET6, AF_NETLINK, AF_PACKET, AF_UNIX, AF_VSOCK, IPPROTO_MPTCP, IPPROTO_SCTP, IPPROTO_TCP,
        NETLINK_ROUTE, SOCK_CLOEXEC, SOCK_DGRAM, SOCK_NONBLOCK, SOCK_RAW, SOCK_SEQPACKET, SOCK_STREAM,
    };
    report("udp", socket(AF_INET, SOCK_DGRAM, 0));
    report("udp_nonblock_cloexec", socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    report("udp6", socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    report("std_udp", io(std::net::UdpSocket::bind("127.0.0.1:0")));
    report("icmp", socket(AF_INET, SOCK_DGRAM, libc::IPPROTO_ICMP));
    report("raw", socket(AF_INET, SOCK_RAW, IPPROTO_TCP));
    report("sctp", socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP));
    report("mptcp", socket(AF_INET6, SOCK_STREAM, IPPROTO_MPTCP));
    report("packet", socket(AF_PACKET, SOCK_RAW, 0));
    report("vsock", socket(AF_VSOCK, SOCK_STREAM, 0));
    report("unix_stream", socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    report("unix_dgram", socket(AF_UNIX, SOCK_DGRAM, 0));
    report("unix_seqpacket", socket(AF_UNIX, SOCK_SEQPACKET, 0));
    report("netlink", socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE));
    report("tcp", socket(AF_INET, SOCK_STREAM, 0));
    report("tcp_flags", socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_TCP));
    report("tcp6", socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0));
    report("socketpair", socketpair());
    report("socketpair_dgram", socketpair_dgram());
    report("tiocsti", tiocsti());
    report("io_uring", io_uring());
    report("connect_allowed", io(TcpStream::connect(("127.0.0.1", allowed))));
    report("connect_other", io(TcpStream::connect(("127.0.0.1", other))));
    report("bind_any", bind(0));
    report("bind_allowed", bind(allowed));
    report("fastopen_other", fastopen(other));
    report("mptcp_other", mptcp(other));
    report("listen_unbound", listen_unbound());
    #[cfg(target_arch = "x86_64")]
    report("x32_getpid", x32_getpid());
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn io<T>(r: std::io::Result<T>) -> Outcome {
    r.map(drop).map_err(|e| e.raw_os_error().unwrap_or(0))
}

fn socket(family: i32, ty: i32, protocol: i32) -> Outcome {
    // SAFETY: socket takes no pointer; the descriptor is closed at once.
    let fd = unsafe { libc::socket(family, ty, protocol) };
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: closes the descriptor just made.
    unsafe { libc::close(fd) };
    Ok(())
}

/// A pair of UNIX sockets that carries a byte from one end to the other.
fn socketpair() -> Outcome {
    socketpair_of(libc::SOCK_STREAM)
}

/// A datagram pair, made and closed.
fn socketpair_dgram() -> Outcome {
    let mut fds = [0; 2];
    // SAFETY: fds has room for the two descriptors socketpair writes.
    if unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr()) } != 0 {
        return Err(errno());
    }
    // SAFETY: the descriptors just made.
    unsafe {
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
    Ok(())
}

/// `ioctl(0, TIOCSTI, "x")`: refused by the filter before the kernel
/// looks at descriptor 0 (which is no terminal here: ENOTTY otherwise).
fn tiocsti() -> Outcome {
    let byte = b'x';
    // SAFETY: TIOCSTI reads one byte from the pointer given.
    if unsafe { libc::ioctl(0, libc::TIOCSTI, &byte as *const u8) } != 0 {
        return Err(errno());
    }
    Ok(())
}

fn socketpair_of(ty: i32) -> Outcome {
    let mut fds = [0; 2];
    // SAFETY: fds has room for the two descriptors socketpair writes.
    if unsafe { libc::socketpair(libc::AF_UNIX, ty, 0, fds.as_mut_ptr()) } != 0 {
        return Err(errno());
    }
    let mut byte = [0u8; 1];
    // SAFETY: one byte written from and read into a one-byte buffer, on
    // the descriptors just made, which are then closed.
    let carried = unsafe {
        libc::write(fds[0], b"x".as_ptr().cast(), 1) == 1 && libc::read(fds[1], byte.as_mut_ptr().cast(), 1) == 1
    };
    let failed = errno();
    // SAFETY: as above.
    unsafe {
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
    if carried && byte == *b"x" { Ok(()) } else { Err(failed) }
}

fn io_uring() -> Outcome {
    // io_uring_params is 120 bytes; zeroed asks for the defaults.
    let mut params = [0u64; 16];
    // SAFETY: io_uring_setup writes at most 120 bytes into params; the
    // ring it may return is closed at once.
    let fd = unsafe { libc::syscall(libc::SYS_io_uring_setup, 1u32, params.as_mut_ptr()) };
    if fd < 0 {
        return Err(errno());
    }
    // SAFETY: closes the ring just made.
    unsafe { libc::close(fd as i32) };
    Ok(())
}

fn loopback(port: u16) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr { s_addr: u32::from_ne_bytes([127, 0, 0, 1]) },
        sin_zero: [0; 8],
    }
}

/// A TCP connection opened by `sendto` with `MSG_FASTOPEN` instead of
/// `connect`.
fn fastopen(port: u16) -> Outcome {
    // SAFETY: plain calls on a descriptor made and closed here; the
    // address and the byte sent live across the calls that read them.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
        if fd < 0 {
            return Err(errno());
        }
        let addr = loopback(port);
        let sent = libc::sendto(
            fd,
            b"x".as_ptr().cast(),
            1,
            libc::MSG_FASTOPEN,
            (&raw const addr).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        );
        let failed = errno();
        let mut peer: libc::sockaddr_in = std::mem::zeroed();
        let mut len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        let connected = libc::getpeername(fd, (&raw mut peer).cast(), &raw mut len) == 0;
        libc::close(fd);
        match (sent < 0, connected) {
            (true, _) => Err(failed),
            (false, true) => Ok(()),
            // Sent nothing anywhere: no fast open on this machine.
            (false, false) => Err(libc::ENOTCONN),
        }
    }
}

/// `bind` alone (no `listen`) of a TCP socket to 127.0.0.1:`port`.
fn bind(port: u16) -> Outcome {
    // SAFETY: plain calls on a descriptor made and closed here; the
    // address lives across the call that reads it.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
        if fd < 0 {
            return Err(errno());
        }
        let addr = loopback(port);
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        let bound = libc::bind(fd, (&raw const addr).cast(), len);
        let failed = errno();
        libc::close(fd);
        if bound < 0 { Err(failed) } else { Ok(()) }
    }
}

/// An MPTCP connection (which falls back to plain TCP with a TCP peer).
fn mptcp(port: u16) -> Outcome {
    // SAFETY: plain calls on a descriptor made and closed here; the
    // address lives across the call that reads it.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, libc::IPPROTO_MPTCP);
        if fd < 0 {
            return Err(errno());
        }
        let addr = loopback(port);
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        let connected = libc::connect(fd, (&raw const addr).cast(), len);
        let failed = errno();
        libc::close(fd);
        if connected < 0 { Err(failed) } else { Ok(()) }
    }
}

/// getpid through its x32 number: `ENOSYS` where the kernel has no x32.
#[cfg(target_arch = "x86_64")]
fn x32_getpid() -> Outcome {
    // SAFETY: getpid takes no argument.
    let pid = unsafe { libc::syscall(0x4000_0000 | libc::SYS_getpid) };
    if pid < 0 { Err(errno()) } else { Ok(()) }
}

/// `listen` on a TCP socket never bound: the kernel picks the port.
fn listen_unbound() -> Outcome {
    // SAFETY: plain calls on a descriptor made and closed here.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
        if fd < 0 {
            return Err(errno());
        }
        let listened = libc::listen(fd, 1);
        let failed = errno();
        libc::close(fd);
        if listened < 0 { Err(failed) } else { Ok(()) }
    }
}

/// A refusal by the seccomp filter.
pub(crate) const REFUSED: Outcome = Err(libc::EPERM);
/// Landlock's refusal.
pub(crate) const DENIED: Outcome = Err(libc::EACCES);

/// Asserts that each try of `expected` did what it says.
pub(crate) fn assert_seen(seen: &BTreeMap<String, Outcome>, expected: &[(&str, Outcome)]) {
    for (name, outcome) in expected {
        assert_eq!(seen.get(*name), Some(outcome), "{name}, among {seen:?}");
    }
}
