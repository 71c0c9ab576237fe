//! The TCP ports something on this machine listens on at its loopback: the
//! agent's sandbox records a direct connection to one of them as refused
//! (see [`crate::proxy::refuse_direct`]), with the line that would allow it.
//!
//! Asked of the kernel's socket diagnostics (netlink `sock_diag`, as `ss
//! -ltn` asks), for the listening sockets only. `/proc/net/tcp` says the
//! same, but the kernel makes that text by walking every socket's hash
//! bucket for each read: about 0.65 ms a read on this 24 GiB machine, and
//! reading both files whole took 4 ms of every agent's start. The files
//! stay the fallback, each read in one call.

use std::os::fd::AsFd;

/// The TCP ports something listens on at this machine's loopback
/// (127.0.0.1, ::1, or every address) in this process's network
/// namespace, sorted.
pub(crate) fn host_listening_ports() -> Vec<u16> {
    let mut ports = by_diag().unwrap_or_else(|| {
        ["/proc/net/tcp", "/proc/net/tcp6"].iter().filter_map(|f| read_whole(f)).flat_map(|t| on_loopback(&t)).collect()
    });
    ports.sort_unstable();
    ports.dedup();
    ports
}

/// The ports of `/proc/net/tcp{,6}`'s text (`sl local_address rem_address
/// st ...`, addresses as hex `ADDR:PORT`) in state LISTEN (`0A`) on a
/// loopback or every-address address. Pure.
fn on_loopback(text: &str) -> Vec<u16> {
    const LOOPBACK: [&str; 4] =
        ["0100007F", "00000000", "00000000000000000000000001000000", "00000000000000000000000000000000"];
    text.lines()
        .skip(1)
        .filter_map(|line| {
            let mut f = line.split_whitespace();
            let local = f.nth(1)?;
            let state = f.nth(1)?;
            let (addr, port) = local.split_once(':')?;
            (state == "0A" && LOOPBACK.contains(&addr)).then(|| u16::from_str_radix(port, 16).ok()).flatten()
        })
        .collect()
}

/// A `/proc` file read in one call where it fits in 1 MiB (each read of
/// `/proc/net/tcp` walks every socket again).
fn read_whole(path: &str) -> Option<String> {
    use std::io::Read as _;
    let mut f = std::fs::File::open(path).ok()?;
    let mut buf = vec![0u8; 1 << 20];
    let mut len = 0;
    loop {
        let n = f.read(&mut buf[len..]).ok()?;
        len += n;
        // Less than asked for: the file's end (a seq file fills what it
        // is given until it has no more).
        if n == 0 || len < buf.len() {
            break;
        }
        buf.resize(buf.len() * 2, 0);
    }
    buf.truncate(len);
    String::from_utf8(buf).ok()
}

/// The kernel's `TCP_LISTEN` state.
const TCP_LISTEN: u32 = 10;
/// `NETLINK_SOCK_DIAG` and its `SOCK_DIAG_BY_FAMILY` request.
const NETLINK_SOCK_DIAG: libc::c_int = 4;
const SOCK_DIAG_BY_FAMILY: u16 = 20;
/// `struct nlmsghdr`'s size, and `struct inet_diag_req_v2`'s.
const HEADER: usize = 16;
const REQUEST: usize = 56;

/// The listening ports on the loopback, asked of `sock_diag` for IPv4 and
/// IPv6; `None` where netlink cannot be asked (then `/proc` is read).
fn by_diag() -> Option<Vec<u16>> {
    // A kernel that never ends its answer costs a second, then /proc.
    let sock = crate::sys::net::netlink(NETLINK_SOCK_DIAG, std::time::Duration::from_secs(1))?;
    let mut ports = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    for (seq, family) in [(1u32, libc::AF_INET as u8), (2, libc::AF_INET6 as u8)] {
        let req = request(seq, family);
        if crate::sys::net::send(sock.as_fd(), &req).ok() != Some(req.len()) {
            return None;
        }
        loop {
            let n = crate::sys::net::recv(sock.as_fd(), &mut buf).ok().filter(|n| *n > 0)?;
            match answers(&buf[..n], seq, &mut ports) {
                Answer::More => continue,
                Answer::Done => break,
                Answer::Failed => return None,
            }
        }
    }
    Some(ports)
}

/// A `SOCK_DIAG_BY_FAMILY` dump request for TCP sockets of `family` in
/// state LISTEN: `struct nlmsghdr` then `struct inet_diag_req_v2`, in the
/// machine's byte order. Pure.
fn request(seq: u32, family: u8) -> Vec<u8> {
    let mut m = Vec::with_capacity(HEADER + REQUEST);
    m.extend(((HEADER + REQUEST) as u32).to_ne_bytes());
    m.extend(SOCK_DIAG_BY_FAMILY.to_ne_bytes());
    m.extend(((libc::NLM_F_REQUEST | libc::NLM_F_DUMP) as u16).to_ne_bytes());
    m.extend(seq.to_ne_bytes());
    m.extend(0u32.to_ne_bytes());
    // sdiag_family, sdiag_protocol, idiag_ext, pad, idiag_states, then the
    // socket id (ports, addresses, interface, cookie), all zero.
    m.extend([family, libc::IPPROTO_TCP as u8, 0, 0]);
    m.extend((1u32 << TCP_LISTEN).to_ne_bytes());
    m.resize(HEADER + REQUEST, 0);
    m
}

/// What one datagram of the dump said.
#[derive(Debug, PartialEq, Eq)]
enum Answer {
    More,
    Done,
    Failed,
}

/// Reads the messages of one datagram of the answer to request `seq`:
/// each `struct inet_diag_msg` of a socket in state LISTEN on a loopback
/// or every-address address adds its port to `ports`. Pure.
fn answers(mut data: &[u8], seq: u32, ports: &mut Vec<u16>) -> Answer {
    let word = |b: &[u8], at: usize| b.get(at..at + 4).map(|w| u32::from_ne_bytes([w[0], w[1], w[2], w[3]]));
    while data.len() >= HEADER {
        let (Some(len), Some(kind_flags), Some(got)) = (word(data, 0), word(data, 4), word(data, 8)) else {
            return Answer::Failed;
        };
        let len = len as usize;
        let kind = (kind_flags & 0xffff) as u16;
        if len < HEADER || len > data.len() {
            return Answer::Failed;
        }
        if got == seq {
            match kind as libc::c_int {
                libc::NLMSG_DONE => return Answer::Done,
                libc::NLMSG_ERROR => return Answer::Failed,
                _ => {
                    if let Some(port) = listening_port(&data[HEADER..len]) {
                        ports.push(port);
                    }
                }
            }
        }
        // Messages are aligned to 4 bytes.
        let next = (len + 3) & !3;
        data = data.get(next..).unwrap_or_default();
    }
    Answer::More
}

/// The port of one `struct inet_diag_msg` (family, state, timer, retrans,
/// then the socket id: source port in network order, destination port,
/// source address as four 32-bit words) when it listens on a loopback or
/// every-address address. Pure.
fn listening_port(msg: &[u8]) -> Option<u16> {
    let (family, state) = (*msg.first()?, *msg.get(1)?);
    if u32::from(state) != TCP_LISTEN {
        return None;
    }
    let port = u16::from_be_bytes([*msg.get(4)?, *msg.get(5)?]);
    let src = msg.get(8..24)?;
    let loopback = match family as libc::c_int {
        libc::AF_INET => src[..4] == [127, 0, 0, 1] || src[..4] == [0; 4],
        libc::AF_INET6 => src[..15] == [0; 15] && (src[15] == 1 || src[15] == 0),
        _ => false,
    };
    loopback.then_some(port)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{TcpListener, TcpStream};

    /// Asked of the kernel (and, the fallback, read from `/proc`): a
    /// listener on the loopback is found, a connected socket's own port and
    /// a listener on another address are not.
    #[test]
    fn what_listens_on_the_loopback_is_asked_of_the_kernel_and_read_from_proc() {
        let l = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = l.local_addr().expect("addr").port();
        let client = TcpStream::connect(("127.0.0.1", port)).expect("connect");
        let client_port = client.local_addr().expect("addr").port();
        let six = TcpListener::bind("[::1]:0").ok().map(|l| (l.local_addr().expect("addr").port(), l));
        let other = TcpListener::bind("127.0.0.2:0").ok().map(|l| (l.local_addr().expect("addr").port(), l));
        let asked = by_diag().expect("sock_diag answers");
        let text =
            read_whole("/proc/net/tcp").expect("/proc/net/tcp") + &read_whole("/proc/net/tcp6").unwrap_or_default();
        let read = on_loopback(&text);
        for found in [&asked, &read] {
            assert!(found.contains(&port), "{port} not among {found:?}");
            assert!(!found.contains(&client_port), "{client_port} is not listening: {found:?}");
            if let Some((p, _)) = &six {
                assert!(found.contains(p), "[::1]:{p} not among {found:?}");
            }
            if let Some((p, _)) = &other {
                assert!(!found.contains(p), "127.0.0.2:{p} is not this loopback address: {found:?}");
            }
        }
        let mut sorted = asked.clone();
        sorted.sort_unstable();
        sorted.dedup();
        let mut read_sorted = read.clone();
        read_sorted.sort_unstable();
        read_sorted.dedup();
        assert_eq!(sorted, read_sorted, "both ways say the same");
        assert!(host_listening_ports().contains(&port));
    }

    /// A datagram cut short, or an error from the kernel, is no answer
    /// (then `/proc` is read).
    #[test]
    fn a_broken_or_refused_answer_is_no_answer() {
        let mut ports = Vec::new();
        assert_eq!(answers(&[0u8; 8], 1, &mut ports), Answer::More, "nothing whole to read");
        let mut error = request(1, libc::AF_INET as u8);
        error[4..6].copy_from_slice(&(libc::NLMSG_ERROR as u16).to_ne_bytes());
        assert_eq!(answers(&error, 1, &mut ports), Answer::Failed);
        let mut long = request(1, libc::AF_INET as u8);
        long[0..4].copy_from_slice(&1000u32.to_ne_bytes());
        assert_eq!(answers(&long, 1, &mut ports), Answer::Failed, "a length past the datagram");
        assert!(ports.is_empty());
    }
}
