//! What detect mode saw a command send where, read from the calls the
//! kernel stopped for [`crate::detect::observe`], judged against what the other
//! modes allow, and said in words: "TCP connect to 203.0.113.5:443 by
//! python3", "UNIX stream connect to /run/docker.sock by curl". Pure, but
//! for [`network_seen`], which reads the sandbox's log.
//!
//! A call is one of `connect`, `sendto`, `sendmsg` and `sendmmsg`, and
//! `bind` and `listen` (and `socketcall` for 32-bit x86 programs), in any
//! of the machine's ABIs ([`ABIS`]); its address is read from the
//! caller's memory through the `read` the caller passes ([`sent`]), a
//! listening socket's from the socket itself. What the default mode would
//! have stopped is a finding ([`judge`]):
//!
//! - `network`: a connection or datagram to an address the network list
//!   does not allow (neither by address nor by a name that resolves to it);
//!   to a server of the machine's own loopback (one listening before the
//!   command started); DNS to a server other than the machine's resolver,
//!   or a lookup through it of a name the list does not name; VSOCK and
//!   other families; a TCP server listening, or a UDP socket bound to a
//!   port, on an address other than loopback (`0.0.0.0`, `::`, an address
//!   of the machine's), which the namespace's own loopback would have kept
//!   out of reach.
//! - `unix-socket`: a named UNIX socket outside the worktree and the
//!   command's TMPDIR (after symbolic links), or an abstract one that
//!   existed before the command started (the machine's: D-Bus, X11).
//!
//! Recorded but not reported: what the list allows, the command's own
//! servers on loopback (reached, or listening there), its own sockets, lookups through the machine's
//! resolver or name services of names the list allows (or of names not
//! seen). A named socket that does not exist reaches nothing and is not
//! recorded.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::proxy::{self, HostRule};

/// A call that sends to an address, or that makes a socket reachable
/// (`bind`, `listen`), as observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Call {
    Connect,
    SendTo,
    SendMsg,
    SendMmsg,
    Bind,
    Listen,
}

impl Call {
    /// Whether the call makes a socket reachable (its address is its own,
    /// not a destination).
    pub fn serves(self) -> bool {
        matches!(self, Call::Bind | Call::Listen)
    }
}

/// The kernel's audit architectures (`AUDIT_ARCH_*`), as seccomp gives
/// them (named for every build: a filter lets other architectures' calls
/// through).
#[allow(dead_code)]
pub const AUDIT_ARCH_X86_64: u32 = 0xC000_003E;
#[allow(dead_code)]
pub const AUDIT_ARCH_I386: u32 = 0x4000_0003;
#[allow(dead_code)]
pub const AUDIT_ARCH_AARCH64: u32 = 0xC000_00B7;
#[allow(dead_code)]
pub const AUDIT_ARCH_ARM: u32 = 0x4000_0028;
/// The bit x86_64's x32 ABI sets in its call numbers.
#[allow(dead_code)]
pub const X32_BIT: u32 = 0x4000_0000;

/// One ABI of the machine: its architecture, its numbers of the six
/// calls, its `socketcall` (32-bit x86), and whether its `msghdr` has
/// 32-bit fields (`compat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Abi {
    pub arch: u32,
    pub calls: [(u32, Call); 6],
    pub socketcall: Option<u32>,
    pub compat: bool,
}

/// `socketcall`'s numbers of the calls observed (`SYS_CONNECT`,
/// `SYS_SENDTO`, `SYS_SENDMSG`, `SYS_SENDMMSG`, `SYS_BIND`,
/// `SYS_LISTEN`); `SYS_SEND` (9) names no address.
pub const SOCKETCALLS: [(u32, Call); 6] = [
    (3, Call::Connect),
    (11, Call::SendTo),
    (16, Call::SendMsg),
    (20, Call::SendMmsg),
    (2, Call::Bind),
    (4, Call::Listen),
];

/// The ABIs a program on this machine may call the kernel through: on
/// x86_64 the native one, x32 (the same architecture, numbers with
/// [`X32_BIT`]) and 32-bit x86 (a 32-bit program, or `int 0x80` from a
/// 64-bit one); on aarch64 the native one and 32-bit ARM.
#[cfg(target_arch = "x86_64")]
pub const ABIS: &[Abi] = &[
    Abi {
        arch: AUDIT_ARCH_X86_64,
        calls: [
            (42, Call::Connect),
            (44, Call::SendTo),
            (46, Call::SendMsg),
            (307, Call::SendMmsg),
            (49, Call::Bind),
            (50, Call::Listen),
        ],
        socketcall: None,
        compat: false,
    },
    Abi {
        arch: AUDIT_ARCH_X86_64,
        calls: [
            (X32_BIT | 42, Call::Connect),
            (X32_BIT | 44, Call::SendTo),
            (X32_BIT | 518, Call::SendMsg),
            (X32_BIT | 538, Call::SendMmsg),
            (X32_BIT | 49, Call::Bind),
            (X32_BIT | 50, Call::Listen),
        ],
        socketcall: None,
        compat: true,
    },
    Abi {
        arch: AUDIT_ARCH_I386,
        calls: [
            (362, Call::Connect),
            (369, Call::SendTo),
            (370, Call::SendMsg),
            (345, Call::SendMmsg),
            (361, Call::Bind),
            (363, Call::Listen),
        ],
        socketcall: Some(102),
        compat: true,
    },
];

#[cfg(target_arch = "aarch64")]
pub const ABIS: &[Abi] = &[
    Abi {
        arch: AUDIT_ARCH_AARCH64,
        calls: [
            (203, Call::Connect),
            (206, Call::SendTo),
            (211, Call::SendMsg),
            (269, Call::SendMmsg),
            (200, Call::Bind),
            (201, Call::Listen),
        ],
        socketcall: None,
        compat: false,
    },
    Abi {
        arch: AUDIT_ARCH_ARM,
        calls: [
            (283, Call::Connect),
            (290, Call::SendTo),
            (296, Call::SendMsg),
            (374, Call::SendMmsg),
            (282, Call::Bind),
            (284, Call::Listen),
        ],
        socketcall: None,
        compat: true,
    },
];

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub const ABIS: &[Abi] = &[];

/// A stopped call: which, its arguments in the order the native call
/// takes them (`connect(fd, addr, len)`, `sendto(fd, buf, len, flags,
/// addr, alen)`, `sendmsg(fd, msg, flags)`, `sendmmsg(fd, vec, n,
/// flags)`, `bind(fd, addr, len)`, `listen(fd, backlog)`), and whether its structures have 32-bit fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trap {
    pub call: Call,
    pub args: [u64; 6],
    pub compat: bool,
}

/// What a notification is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trapped {
    Call(Trap),
    /// 32-bit x86's `socketcall(call, argp)`: the call's six arguments are
    /// 32-bit words in the caller's memory at `argp`.
    Socketcall {
        call: Call,
        argp: u64,
    },
    /// None the filter stops.
    Other,
}

/// The call of architecture `arch` numbered `nr` with `args`. Pure.
pub fn trapped(arch: u32, nr: u32, args: [u64; 6]) -> Trapped {
    for abi in ABIS.iter().filter(|a| a.arch == arch) {
        if let Some((_, call)) = abi.calls.iter().find(|(n, _)| *n == nr) {
            return Trapped::Call(Trap { call: *call, args, compat: abi.compat });
        }
        if abi.socketcall == Some(nr)
            && let Some((_, call)) = SOCKETCALLS.iter().find(|(n, _)| u64::from(*n) == args[0])
        {
            return Trapped::Socketcall { call: *call, argp: args[1] };
        }
    }
    Trapped::Other
}

/// A `socketcall`'s arguments, read as six 32-bit words (`words`, at
/// least 24 bytes). Pure.
pub fn socketcall_args(words: &[u8]) -> Option<[u64; 6]> {
    let mut args = [0u64; 6];
    for (i, a) in args.iter_mut().enumerate() {
        *a = u64::from(u32_at(words, i * 4)?);
    }
    Some(args)
}

/// The longest address read (`sizeof(struct sockaddr_storage)`; the
/// kernel refuses a longer one).
pub const MAX_ADDR: usize = 128;
/// The bytes of a message read (a DNS query's names are in its first).
pub const MAX_PAYLOAD: usize = 512;
/// The messages of one `sendmmsg` looked at.
const MAX_MMSG: usize = 16;

/// What a stopped call sends: on which descriptor, to which addresses
/// (each a `sockaddr` as the caller wrote it; none for a send on a
/// connected socket), the first bytes of its first message, and whether it
/// asks for TCP Fast Open (a connection made by the send).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sent {
    pub fd: i32,
    pub addrs: Vec<Vec<u8>>,
    pub payload: Vec<u8>,
    pub fastopen: bool,
    /// An address the call names could not be read.
    pub unreadable: bool,
}

/// What `t` sends, its memory read through `read(address, length)`
/// (`None`: unreadable). Pure but for `read`.
pub fn sent(t: &Trap, read: &mut dyn FnMut(u64, usize) -> Option<Vec<u8>>) -> Sent {
    let a = t.args;
    let mut s = Sent { fd: a[0] as i32, ..Sent::default() };
    let fastopen = |flags: u64| flags & libc::MSG_FASTOPEN as u64 != 0;
    match t.call {
        Call::Connect | Call::Bind => s.address(a[1], a[2], read),
        // Its address is the socket's own, asked of the socket.
        Call::Listen => {}
        Call::SendTo => {
            if a[4] != 0 {
                s.address(a[4], a[5], read);
            }
            s.payload = read(a[1], (a[2] as usize).min(MAX_PAYLOAD)).unwrap_or_default();
            s.fastopen = fastopen(a[3]);
        }
        Call::SendMsg => {
            match read(a[1], msghdr_len(t.compat)).and_then(|m| msghdr(&m, t.compat)) {
                Some(m) => s.message(m, t.compat, read),
                None => s.unreadable = true,
            }
            s.fastopen = fastopen(a[2]);
        }
        Call::SendMmsg => {
            // struct mmsghdr: a msghdr and the length sent, padded.
            let size = if t.compat { 32 } else { 64 };
            let n = (a[2] as usize).min(MAX_MMSG);
            match read(a[1], n * size) {
                Some(vec) => {
                    for m in vec.chunks_exact(size).filter_map(|c| msghdr(c, t.compat)) {
                        s.message(m, t.compat, read);
                    }
                }
                None if n > 0 => s.unreadable = true,
                None => {}
            }
            s.fastopen = fastopen(a[3]);
        }
    }
    s
}

impl Sent {
    /// The address at `ptr`, `len` bytes long, when there is one.
    fn address(&mut self, ptr: u64, len: u64, read: &mut dyn FnMut(u64, usize) -> Option<Vec<u8>>) {
        if ptr == 0 || len == 0 {
            return;
        }
        match read(ptr, (len as usize).min(MAX_ADDR)) {
            Some(bytes) => self.addrs.push(bytes),
            None => self.unreadable = true,
        }
    }

    /// A message's address, and its first bytes when none were read yet.
    fn message(&mut self, m: Msghdr, compat: bool, read: &mut dyn FnMut(u64, usize) -> Option<Vec<u8>>) {
        self.address(m.name, m.namelen, read);
        if !self.payload.is_empty() || m.iov == 0 || m.iovlen == 0 {
            return;
        }
        let size = if compat { 8 } else { 16 };
        let Some(iov) = read(m.iov, size) else { return };
        let (base, len) = if compat {
            (u32_at(&iov, 0).map(u64::from), u32_at(&iov, 4).map(u64::from))
        } else {
            (u64_at(&iov, 0), u64_at(&iov, 8))
        };
        if let (Some(base), Some(len)) = (base, len)
            && base != 0
        {
            self.payload = read(base, (len as usize).min(MAX_PAYLOAD)).unwrap_or_default();
        }
    }
}

/// The fields of a `struct msghdr` looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Msghdr {
    name: u64,
    namelen: u64,
    iov: u64,
    iovlen: u64,
}

/// `struct msghdr`'s size: 56 bytes, or 28 with 32-bit fields.
fn msghdr_len(compat: bool) -> usize {
    if compat { 28 } else { 56 }
}

/// A `struct msghdr` read from `b`. Pure.
fn msghdr(b: &[u8], compat: bool) -> Option<Msghdr> {
    if compat {
        let w = |i: usize| u32_at(b, i * 4).map(u64::from);
        Some(Msghdr { name: w(0)?, namelen: w(1)?, iov: w(2)?, iovlen: w(3)? })
    } else {
        Some(Msghdr {
            name: u64_at(b, 0)?,
            namelen: u64::from(u32_at(b, 8)?),
            iov: u64_at(b, 16)?,
            iovlen: u64_at(b, 24)?,
        })
    }
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_ne_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// Where an address leads.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Dest {
    Inet(SocketAddr),
    /// A named UNIX socket, as given (a relative one taken from the
    /// caller's directory by [`absolute`]).
    UnixPath(PathBuf),
    /// An abstract UNIX socket's name (after its leading NUL).
    UnixAbstract(Vec<u8>),
    Vsock {
        cid: u32,
        port: u32,
    },
    /// Another address family.
    Family(u16),
    /// The call names an address that could not be read.
    Unreadable,
    /// Nothing to record: `AF_UNSPEC` (a datagram socket disconnected), an
    /// unnamed UNIX socket, netlink (the kernel itself), or an address too
    /// short for its family (the kernel refuses the call).
    Ignored,
}

/// The destination `addr` (a `sockaddr`) names. Pure.
pub fn dest(addr: &[u8]) -> Dest {
    let Some(family) = addr.get(..2).map(|f| u16::from_ne_bytes([f[0], f[1]])) else { return Dest::Ignored };
    let port = || addr.get(2..4).map(|p| u16::from_be_bytes([p[0], p[1]]));
    match i32::from(family) {
        libc::AF_INET => match (port(), addr.get(4..8)) {
            (Some(port), Some(ip)) if addr.len() >= 16 => {
                Dest::Inet(SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::new(ip[0], ip[1], ip[2], ip[3]), port)))
            }
            _ => Dest::Ignored,
        },
        libc::AF_INET6 => match (port(), addr.get(8..24)) {
            (Some(port), Some(ip)) => {
                let octets: [u8; 16] = ip.try_into().unwrap_or([0; 16]);
                let ip = Ipv6Addr::from(octets);
                match ip.to_ipv4_mapped() {
                    Some(v4) => Dest::Inet(SocketAddr::V4(SocketAddrV4::new(v4, port))),
                    None => Dest::Inet(SocketAddr::V6(SocketAddrV6::new(ip, port, 0, 0))),
                }
            }
            _ => Dest::Ignored,
        },
        libc::AF_UNIX => {
            let path = &addr[2..];
            match path.first() {
                None => Dest::Ignored,
                Some(0) => Dest::UnixAbstract(path[1..].to_vec()),
                Some(_) => {
                    let end = path.iter().position(|b| *b == 0).unwrap_or(path.len());
                    use std::os::unix::ffi::OsStrExt;
                    Dest::UnixPath(PathBuf::from(std::ffi::OsStr::from_bytes(&path[..end])))
                }
            }
        }
        libc::AF_VSOCK => match (u32_at(addr, 4), u32_at(addr, 8)) {
            (Some(port), Some(cid)) => Dest::Vsock { cid, port },
            _ => Dest::Ignored,
        },
        libc::AF_UNSPEC | libc::AF_NETLINK => Dest::Ignored,
        _ => Dest::Family(family),
    }
}

/// `path` made absolute from `cwd` (the caller's directory), `.` and `..`
/// taken lexically. Pure.
pub fn absolute(path: &Path, cwd: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in cwd.join(path).components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// A socket's type and protocol (`SO_TYPE`, `SO_PROTOCOL`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sock {
    pub ty: i32,
    pub protocol: i32,
}

/// Whether a call on a socket of kind `sock` to `dest` is worth recording:
/// not a send that names an address on a stream socket (the kernel
/// ignores it: the connection was seen at its `connect`), unless it is
/// TCP Fast Open, and not what [`Dest::Ignored`] covers; of what makes a
/// socket reachable, a server listening on an IP address, and a datagram
/// socket bound to a port it chose (a stream socket's `bind` is seen at its
/// `listen`: a client may bind before it connects; port 0 is a client's,
/// the kernel picks one). Pure.
pub fn worth_recording(call: Call, sock: Option<Sock>, fastopen: bool, dest: &Dest) -> bool {
    if *dest == Dest::Ignored {
        return false;
    }
    match call {
        Call::Listen => matches!(dest, Dest::Inet(_)),
        Call::Bind => matches!(dest, Dest::Inet(a) if a.port() != 0) && sock.is_some_and(|s| s.ty == libc::SOCK_DGRAM),
        _ => {
            let stream = sock.is_some_and(|s| s.ty == libc::SOCK_STREAM);
            call == Call::Connect || !stream || fastopen
        }
    }
}

/// One destination a command sent to, as seen.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Observed {
    pub call: Call,
    pub sock: Option<Sock>,
    pub dest: Dest,
    /// A UNIX path as it resolves (symbolic links followed), where that
    /// differs from the path given.
    pub resolved: Option<PathBuf>,
    pub fastopen: bool,
    /// The names a DNS query asks for (a message to port 53).
    pub names: Vec<String>,
    /// The program (its process's name).
    pub program: String,
}

/// The names a DNS query (`payload`, one UDP message) asks for, in lower
/// case; none when it is no query. Pure.
pub fn dns_names(payload: &[u8]) -> Vec<String> {
    // Header: id, flags (QR is the top bit: 0 for a query), QDCOUNT, ...
    let (Some(flags), Some(count)) = (payload.get(2), payload.get(4..6)) else { return Vec::new() };
    if flags & 0x80 != 0 {
        return Vec::new();
    }
    let count = u16::from_be_bytes([count[0], count[1]]).min(4);
    let mut at = 12;
    let mut names = Vec::new();
    for _ in 0..count {
        let mut labels: Vec<String> = Vec::new();
        loop {
            let Some(&len) = payload.get(at) else { return names };
            at += 1;
            if len == 0 {
                break;
            }
            // A pointer (compression) or a length past 63: not a query's.
            if len > 63 {
                return names;
            }
            let Some(label) = payload.get(at..at + len as usize) else { return names };
            at += len as usize;
            labels.push(label.iter().map(|b| shown_byte(b.to_ascii_lowercase())).collect());
        }
        // QTYPE and QCLASS.
        at += 4;
        let name = labels.join(".");
        if !name.is_empty() && !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// A byte of a name: itself when printable, else `\xNN`.
fn shown_byte(b: u8) -> String {
    if b.is_ascii_graphic() { (b as char).to_string() } else { format!("\\x{b:02x}") }
}

/// `text` with its control characters escaped, for one line of the
/// record. Pure.
fn shown(text: &str) -> String {
    text.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}

/// What the transport is called, by the socket's kind and family.
fn transport(sock: Option<Sock>, dest: &Dest) -> &'static str {
    if matches!(dest, Dest::Vsock { .. }) {
        return "VSOCK";
    }
    let unix = matches!(dest, Dest::UnixPath(_) | Dest::UnixAbstract(_));
    match (unix, sock.map(|s| (s.ty, s.protocol))) {
        (true, Some((libc::SOCK_STREAM, _))) => "UNIX stream",
        (true, Some((libc::SOCK_DGRAM, _))) => "UNIX datagram",
        (true, Some((libc::SOCK_SEQPACKET, _))) => "UNIX seqpacket",
        (true, _) => "UNIX",
        (false, Some((libc::SOCK_STREAM, libc::IPPROTO_MPTCP))) => "MPTCP",
        (false, Some((libc::SOCK_STREAM, libc::IPPROTO_SCTP) | (libc::SOCK_SEQPACKET, _))) => "SCTP",
        (false, Some((libc::SOCK_STREAM, _))) => "TCP",
        (false, Some((libc::SOCK_DGRAM, libc::IPPROTO_ICMP | libc::IPPROTO_ICMPV6))) => "ICMP",
        (false, Some((libc::SOCK_DGRAM, _))) => "UDP",
        (false, Some((libc::SOCK_RAW, _))) => "raw IP",
        (false, _) => "IP",
    }
}

/// An abstract socket's name as `/proc/net/unix` shows it: `@` first, and
/// for each NUL in it. Pure.
pub fn abstract_name(name: &[u8]) -> String {
    let mut out = String::from("@");
    for b in name {
        match b {
            0 => out.push('@'),
            b if b.is_ascii_graphic() || *b == b' ' => out.push(*b as char),
            b => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out
}

/// What `o` was, in words: "TCP connect to 203.0.113.5:443 by python3".
/// Pure.
pub fn what(o: &Observed) -> String {
    let by = if o.program.is_empty() { "an unknown program".to_string() } else { shown(&o.program) };
    let verb = match (o.call, o.fastopen) {
        (Call::Listen, _) => "listen",
        (Call::Bind, _) => "bind",
        (_, true) => "Fast Open connect",
        (Call::Connect, _) => "connect",
        _ => "datagram",
    };
    let transport = transport(o.sock, &o.dest);
    // "UDP datagram", "UNIX datagram" (not "UNIX datagram datagram").
    let t = if verb == "datagram" && transport.ends_with(verb) {
        transport.to_string()
    } else {
        format!("{transport} {verb}")
    };
    match &o.dest {
        // Its own address: where it can be reached.
        Dest::Inet(a) if o.call.serves() => format!("{t} on {a} by {by}"),
        Dest::Inet(a) if a.port() == 53 && !o.names.is_empty() => {
            format!("DNS lookup of {} through {a} by {by}", o.names.join(", "))
        }
        Dest::Inet(a) if a.port() == 53 => format!("{t} to {a} (DNS) by {by}"),
        Dest::Inet(a) => format!("{t} to {a} by {by}"),
        Dest::UnixPath(p) => {
            let path = shown(&p.to_string_lossy());
            match &o.resolved {
                Some(r) => format!("{t} to {path} (a link to {}) by {by}", shown(&r.to_string_lossy())),
                None => format!("{t} to {path} by {by}"),
            }
        }
        Dest::UnixAbstract(name) => format!("{t} to the abstract socket {} by {by}", abstract_name(name)),
        Dest::Vsock { cid, port } => format!("{t} to CID {cid} port {port} by {by}"),
        Dest::Family(f) => format!("{verb} on a socket of address family {f} by {by}"),
        Dest::Unreadable => format!("{verb} by {by} to an address that could not be read"),
        Dest::Ignored => format!("{verb} by {by}"),
    }
}

/// What the machine had before the command started: what listens on its
/// loopback (TCP), what is bound there (UDP), its abstract UNIX sockets
/// (as [`abstract_name`] writes them), and its DNS resolvers
/// (`/etc/resolv.conf`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Machine {
    pub tcp_ports: Vec<u16>,
    pub udp_ports: Vec<u16>,
    pub abstract_names: Vec<String>,
    pub resolvers: Vec<IpAddr>,
}

/// What the command may reach in the other modes.
#[derive(Debug, Clone, Copy)]
pub struct Allowed<'a> {
    pub rules: &'a [HostRule],
    /// `network_mode = "host"`: every address.
    pub host_network: bool,
    /// `sandbox.unix_sockets`: every named UNIX socket.
    pub unix_sockets: bool,
    /// Where its own sockets are: the worktree and its TMPDIR.
    pub inside: &'a [PathBuf],
}

/// What a destination seen was: what the other modes would have stopped
/// (`network`, `unix-socket`), or not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Allowed,
    Network,
    UnixSocket,
}

impl Verdict {
    /// The finding's name in the record.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Allowed => "allowed",
            Verdict::Network => "network",
            Verdict::UnixSocket => "unix-socket",
        }
    }
}

/// The machine's name services, which the C library asks on a lookup
/// (hosts, users): nscd, systemd-resolved, systemd's user database. Like
/// its DNS resolver, asked with names not seen: recorded, not reported.
const NAME_SERVICES: [&str; 3] =
    ["/run/nscd/socket", "/run/systemd/resolve/io.systemd.Resolve", "/run/systemd/userdb/"];

/// Whether `ip` is this machine's (loopback, or the unspecified address,
/// which `connect` takes as loopback).
fn is_local(ip: IpAddr) -> bool {
    ip.is_loopback() || ip.is_unspecified()
}

/// A rule's host and port, as its canonical text says them.
fn rule_parts(rule: &HostRule) -> (String, Option<u16>) {
    let text = rule.to_string();
    if let Some(rest) = text.strip_prefix('[') {
        let (host, after) = rest.split_once(']').unwrap_or((rest, ""));
        return (host.to_string(), after.strip_prefix(':').and_then(|p| p.parse().ok()));
    }
    match text.rsplit_once(':') {
        Some((host, port)) => (host.to_string(), port.parse().ok()),
        None => (text, None),
    }
}

/// Whether `rules` name `name` on any port (a DNS lookup of it is then
/// the allowed host's). Pure.
fn name_allowed(rules: &[HostRule], name: &str) -> bool {
    let mut ports = vec![80, 443];
    ports.extend(rules.iter().filter_map(|r| rule_parts(r).1));
    ports.iter().any(|p| proxy::allowed(rules, name, *p))
}

/// The names worth resolving to judge addresses by: every host a rule
/// names exactly (no wildcard, no address, not `localhost`) and every
/// name looked up that a rule allows (`*.domain`'s). Pure.
pub fn names_to_resolve(seen: &[(Observed, u64)], rules: &[HostRule]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in rules {
        let (host, _) = rule_parts(r);
        if !host.starts_with("*.") && host.parse::<IpAddr>().is_err() && host != "localhost" && !out.contains(&host) {
            out.push(host);
        }
    }
    for name in seen.iter().flat_map(|(o, _)| &o.names) {
        if name_allowed(rules, name) && !out.contains(name) {
            out.push(name.clone());
        }
    }
    out
}

/// Whether judging `o` may need the allowed names resolved: an address
/// out there (not this machine's, not DNS) that no rule names as such.
/// Pure.
pub fn needs_names(o: &Observed, a: &Allowed<'_>) -> bool {
    match &o.dest {
        Dest::Inet(_) if o.call.serves() => false,
        Dest::Inet(addr) => {
            !a.host_network
                && !is_local(addr.ip())
                && addr.port() != 53
                && !proxy::allowed(a.rules, &addr.ip().to_string(), addr.port())
        }
        _ => false,
    }
}

/// What `o` was: allowed in the other modes, or what they would have
/// stopped, given the command's `allowed` reach, what the `machine` had
/// before it started, and the allowed names resolved (`resolved`: each
/// name and its addresses). Pure.
pub fn judge(o: &Observed, a: &Allowed<'_>, machine: &Machine, resolved: &[(String, Vec<IpAddr>)]) -> Verdict {
    match &o.dest {
        Dest::Inet(addr) if o.call.serves() => judge_served(*addr, a.host_network),
        Dest::Inet(addr) => judge_inet(o, *addr, a, machine, resolved),
        Dest::UnixPath(given) => {
            let path = o.resolved.as_deref().unwrap_or(given);
            let own = a.inside.iter().any(|d| path.starts_with(d)) && given.is_absolute();
            let names = NAME_SERVICES.iter().any(|s| path.starts_with(s));
            if a.unix_sockets || own || names { Verdict::Allowed } else { Verdict::UnixSocket }
        }
        Dest::UnixAbstract(name) => {
            // Abstract names live in the network namespace: the machine's
            // are out of reach in its own, with or without UNIX sockets.
            let machines = machine.abstract_names.contains(&abstract_name(name));
            if (a.host_network && a.unix_sockets) || !machines { Verdict::Allowed } else { Verdict::UnixSocket }
        }
        Dest::Family(_) | Dest::Unreadable if a.host_network => Verdict::Allowed,
        Dest::Vsock { .. } | Dest::Family(_) | Dest::Unreadable => Verdict::Network,
        Dest::Ignored => Verdict::Allowed,
    }
}

/// A socket reachable at `addr` (listening, or bound for datagrams): only
/// loopback is what the other modes allow (in the namespaces, the only
/// address there is; the machine's network, `network_mode = "host"`,
/// allows every one). `0.0.0.0`, `::` and the machine's own addresses are
/// reachable from other machines. Pure.
pub fn judge_served(addr: SocketAddr, host_network: bool) -> Verdict {
    if host_network || addr.ip().is_loopback() { Verdict::Allowed } else { Verdict::Network }
}

fn judge_inet(
    o: &Observed,
    addr: SocketAddr,
    a: &Allowed<'_>,
    machine: &Machine,
    resolved: &[(String, Vec<IpAddr>)],
) -> Verdict {
    let (ip, port) = (addr.ip(), addr.port());
    if a.host_network || proxy::allowed(a.rules, &ip.to_string(), port) {
        return Verdict::Allowed;
    }
    if port == 53 && machine.resolvers.contains(&ip) {
        // The machine's resolver: the lookup is judged by its names, where
        // the query was seen.
        return if o.names.iter().all(|n| name_allowed(a.rules, n)) { Verdict::Allowed } else { Verdict::Network };
    }
    if is_local(ip) {
        if proxy::allowed(a.rules, "localhost", port) {
            return Verdict::Allowed;
        }
        // A server of the machine's (there before the command started), or
        // the command's own, which the namespaces would have let it reach.
        let udp = o.sock.is_some_and(|s| s.ty == libc::SOCK_DGRAM);
        let tcp = o.sock.is_some_and(|s| s.ty == libc::SOCK_STREAM);
        let machines = (!udp && machine.tcp_ports.contains(&port)) || (!tcp && machine.udp_ports.contains(&port));
        return if machines { Verdict::Network } else { Verdict::Allowed };
    }
    if port != 53 && resolved.iter().any(|(name, ips)| ips.contains(&ip) && proxy::allowed(a.rules, name, port)) {
        return Verdict::Allowed;
    }
    Verdict::Network
}

/// One line of the sandbox's log for a destination detect mode saw (or,
/// `seen: "unobserved"`, why it could see none).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Seen {
    /// `network` or `unix-socket`: what the other modes would have
    /// stopped; `allowed`: what they let through (recorded, not
    /// reported); `unobserved`: nothing could be seen (`what` says why).
    pub seen: String,
    /// In words: "TCP connect to 203.0.113.5:443 by python3".
    pub what: String,
    /// How many times.
    #[serde(default)]
    pub count: u64,
}

impl Seen {
    /// Whether it is a finding: what the other modes would have stopped,
    /// or a note that nothing could be seen.
    pub fn reported(&self) -> bool {
        self.seen != Verdict::Allowed.word()
    }
}

/// Names and the addresses each resolves to.
pub type Addresses = Vec<(String, Vec<IpAddr>)>;

/// The lines to log for what was seen (each destination with how many
/// times), judged: findings first, in the order first seen. Pure but for
/// `resolve`, asked at most once, only when an address needs the allowed
/// names to be judged by.
pub fn judge_all(
    seen: &[(Observed, u64)],
    a: &Allowed<'_>,
    machine: &Machine,
    resolve: &mut dyn FnMut(&[String]) -> Addresses,
) -> Vec<Seen> {
    let resolved = if seen.iter().any(|(o, _)| needs_names(o, a)) {
        let names = names_to_resolve(seen, a.rules);
        if names.is_empty() { Vec::new() } else { resolve(&names) }
    } else {
        Vec::new()
    };
    let mut lines: Vec<Seen> = Vec::new();
    for (o, count) in seen {
        let verdict = judge(o, a, machine, &resolved);
        let what = what(o);
        match lines.iter_mut().find(|l| l.what == what && l.seen == verdict.word()) {
            Some(l) => l.count += count,
            None => lines.push(Seen { seen: verdict.word().into(), what, count: *count }),
        }
    }
    lines.sort_by_key(|l| !l.reported());
    lines
}

/// At most this many findings are named in the record.
pub const SEEN_CAP: usize = 50;

/// The findings of detect mode in the sandbox's log (what the other modes
/// would have stopped, and why nothing could be seen), in its order, the
/// first [`SEEN_CAP`]; other lines (the proxy's, the limits) are skipped.
pub fn network_seen(log: &Path) -> Vec<Seen> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    text.lines().filter_map(|l| serde_json::from_str::<Seen>(l).ok()).filter(Seen::reported).take(SEEN_CAP).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sockaddr_in(ip: [u8; 4], port: u16) -> Vec<u8> {
        let mut b = (libc::AF_INET as u16).to_ne_bytes().to_vec();
        b.extend(port.to_be_bytes());
        b.extend(ip);
        b.extend([0u8; 8]);
        b
    }

    fn sockaddr_un(path: &[u8]) -> Vec<u8> {
        let mut b = (libc::AF_UNIX as u16).to_ne_bytes().to_vec();
        b.extend(path);
        b
    }

    fn observed(dest: Dest, ty: i32) -> Observed {
        Observed {
            call: Call::Connect,
            sock: Some(Sock { ty, protocol: 0 }),
            dest,
            resolved: None,
            fastopen: false,
            names: Vec::new(),
            program: "python3".into(),
        }
    }

    fn rules(list: &[&str]) -> Vec<HostRule> {
        list.iter().map(|r| proxy::parse_rule(r).expect("rule")).collect()
    }

    #[test]
    fn addresses_are_read_as_the_kernel_reads_them() {
        assert_eq!(dest(&sockaddr_in([203, 0, 113, 5], 443)), Dest::Inet("203.0.113.5:443".parse().expect("addr")));
        assert_eq!(dest(&sockaddr_in([127, 0, 0, 1], 53)[..8]), Dest::Ignored, "too short: the kernel refuses it");
        let mut v6 = (libc::AF_INET6 as u16).to_ne_bytes().to_vec();
        v6.extend(8080u16.to_be_bytes());
        v6.extend([0u8; 4]);
        v6.extend(Ipv6Addr::LOCALHOST.octets());
        v6.extend([0u8; 4]);
        assert_eq!(dest(&v6), Dest::Inet("[::1]:8080".parse().expect("addr")));
        let mut mapped = v6.clone();
        mapped[8..24].copy_from_slice(&Ipv4Addr::new(10, 1, 2, 3).to_ipv6_mapped().octets());
        assert_eq!(dest(&mapped), Dest::Inet("10.1.2.3:8080".parse().expect("addr")), "v4-mapped as IPv4");
        assert_eq!(dest(&sockaddr_un(b"/run/docker.sock\0junk")), Dest::UnixPath("/run/docker.sock".into()));
        assert_eq!(dest(&sockaddr_un(b"\0bus\0x")), Dest::UnixAbstract(b"bus\0x".to_vec()));
        assert_eq!(dest(&sockaddr_un(b"")), Dest::Ignored, "unnamed");
        let unspec = (libc::AF_UNSPEC as u16).to_ne_bytes().to_vec();
        assert_eq!(dest(&unspec), Dest::Ignored);
        let mut netlink = (libc::AF_NETLINK as u16).to_ne_bytes().to_vec();
        netlink.extend([0u8; 10]);
        assert_eq!(dest(&netlink), Dest::Ignored);
        let mut vsock = (libc::AF_VSOCK as u16).to_ne_bytes().to_vec();
        vsock.extend([0u8; 2]);
        vsock.extend(1234u32.to_ne_bytes());
        vsock.extend(2u32.to_ne_bytes());
        assert_eq!(dest(&vsock), Dest::Vsock { cid: 2, port: 1234 });
        let packet = (libc::AF_PACKET as u16).to_ne_bytes().to_vec();
        assert_eq!(dest(&packet), Dest::Family(libc::AF_PACKET as u16));
        assert_eq!(dest(&[1]), Dest::Ignored);
        assert_eq!(absolute(Path::new("../s.sock"), Path::new("/w/sub")), Path::new("/w/s.sock"));
        assert_eq!(absolute(Path::new("/a/./b"), Path::new("/w")), Path::new("/a/b"));
    }

    /// A process's memory: the bytes at each address.
    fn memory(regions: Vec<(u64, Vec<u8>)>) -> impl FnMut(u64, usize) -> Option<Vec<u8>> {
        move |at, len| {
            let (start, bytes) = regions.iter().find(|(s, b)| at >= *s && at < s + b.len() as u64)?;
            let from = (at - start) as usize;
            bytes.get(from..from + len).map(<[u8]>::to_vec)
        }
    }

    #[test]
    fn each_call_s_addresses_and_first_bytes_are_read() {
        let addr = sockaddr_in([198, 51, 100, 7], 9);
        let data = b"secret".to_vec();
        let connect = Trap { call: Call::Connect, args: [5, 0x1000, 16, 0, 0, 0], compat: false };
        let mut mem = memory(vec![(0x1000, addr.clone())]);
        assert_eq!(sent(&connect, &mut mem), Sent { fd: 5, addrs: vec![addr.clone()], ..Sent::default() });
        let sendto =
            Trap { call: Call::SendTo, args: [3, 0x2000, 6, libc::MSG_FASTOPEN as u64, 0x1000, 16], compat: false };
        let mut mem = memory(vec![(0x1000, addr.clone()), (0x2000, data.clone())]);
        let s = sent(&sendto, &mut mem);
        assert_eq!((s.addrs.clone(), s.payload.clone(), s.fastopen), (vec![addr.clone()], data.clone(), true));
        // sendmsg: a msghdr naming the address and one iovec.
        let mut msg = Vec::new();
        msg.extend(0x1000u64.to_ne_bytes());
        msg.extend(16u32.to_ne_bytes());
        msg.extend([0u8; 4]);
        msg.extend(0x3000u64.to_ne_bytes());
        msg.extend(1u64.to_ne_bytes());
        msg.extend([0u8; 24]);
        let mut iov = 0x2000u64.to_ne_bytes().to_vec();
        iov.extend(6u64.to_ne_bytes());
        let sendmsg = Trap { call: Call::SendMsg, args: [4, 0x4000, 0, 0, 0, 0], compat: false };
        let regions = vec![(0x1000, addr.clone()), (0x2000, data.clone()), (0x3000, iov), (0x4000, msg.clone())];
        let s = sent(&sendmsg, &mut memory(regions.clone()));
        assert_eq!((s.addrs.clone(), s.payload.clone(), s.unreadable), (vec![addr.clone()], data.clone(), false));
        // sendmmsg: two messages, the second without an address.
        let mut vec = msg.clone();
        vec.extend([0u8; 8]);
        vec.extend([0u8; 64]);
        let mut regions = regions;
        regions.push((0x5000, vec));
        let sendmmsg = Trap { call: Call::SendMmsg, args: [4, 0x5000, 2, 0, 0, 0], compat: false };
        let s = sent(&sendmmsg, &mut memory(regions));
        assert_eq!((s.addrs, s.payload), (vec![addr.clone()], data.clone()));
        // 32-bit: the same message with 32-bit fields.
        let mut msg32 = Vec::new();
        for w in [0x1000u32, 16, 0x3000, 1, 0, 0, 0] {
            msg32.extend(w.to_ne_bytes());
        }
        let mut iov32 = 0x2000u32.to_ne_bytes().to_vec();
        iov32.extend(6u32.to_ne_bytes());
        let compat = Trap { call: Call::SendMsg, args: [4, 0x4000, 0, 0, 0, 0], compat: true };
        let regions = vec![(0x1000, addr.clone()), (0x2000, data.clone()), (0x3000, iov32), (0x4000, msg32)];
        let s = sent(&compat, &mut memory(regions));
        assert_eq!((s.addrs, s.payload), (vec![addr], data));
        // Memory that cannot be read: said, not guessed.
        let s = sent(&connect, &mut memory(Vec::new()));
        assert!(s.unreadable && s.addrs.is_empty());
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn every_abi_s_numbers_are_known() {
        let args = [1, 2, 3, 4, 5, 6];
        assert!(matches!(
            trapped(AUDIT_ARCH_X86_64, 42, args),
            Trapped::Call(Trap { call: Call::Connect, compat: false, .. })
        ));
        assert!(matches!(
            trapped(AUDIT_ARCH_X86_64, X32_BIT | 518, args),
            Trapped::Call(Trap { call: Call::SendMsg, compat: true, .. })
        ));
        assert!(matches!(
            trapped(AUDIT_ARCH_I386, 362, args),
            Trapped::Call(Trap { call: Call::Connect, compat: true, .. })
        ));
        assert_eq!(
            trapped(AUDIT_ARCH_I386, 102, [11, 0x80, 0, 0, 0, 0]),
            Trapped::Socketcall { call: Call::SendTo, argp: 0x80 }
        );
        assert_eq!(trapped(AUDIT_ARCH_I386, 102, [9, 0x80, 0, 0, 0, 0]), Trapped::Other, "SYS_SEND names no address");
        assert!(matches!(trapped(AUDIT_ARCH_X86_64, 49, args), Trapped::Call(Trap { call: Call::Bind, .. })));
        assert!(matches!(trapped(AUDIT_ARCH_X86_64, 50, args), Trapped::Call(Trap { call: Call::Listen, .. })));
        assert!(matches!(trapped(AUDIT_ARCH_I386, 363, args), Trapped::Call(Trap { call: Call::Listen, .. })));
        assert_eq!(
            trapped(AUDIT_ARCH_I386, 102, [4, 0x80, 0, 0, 0, 0]),
            Trapped::Socketcall { call: Call::Listen, argp: 0x80 }
        );
        assert_eq!(trapped(AUDIT_ARCH_X86_64, 0, args), Trapped::Other);
        let mut words = Vec::new();
        for w in [3u32, 0x1000, 16, 0, 0, 0] {
            words.extend(w.to_ne_bytes());
        }
        assert_eq!(socketcall_args(&words), Some([3, 0x1000, 16, 0, 0, 0]));
        assert_eq!(socketcall_args(&words[..20]), None);
    }

    fn query(names: &[&str]) -> Vec<u8> {
        let mut q = vec![0x12, 0x34, 0x01, 0x00];
        q.extend((names.len() as u16).to_be_bytes());
        q.extend([0u8; 6]);
        for n in names {
            for label in n.split('.') {
                q.push(label.len() as u8);
                q.extend(label.as_bytes());
            }
            q.extend([0, 0, 1, 0, 1]);
        }
        q
    }

    #[test]
    fn a_dns_query_s_names_are_read() {
        assert_eq!(dns_names(&query(&["API.example.com"])), ["api.example.com"]);
        assert_eq!(dns_names(&query(&["a.example", "b.example"])), ["a.example", "b.example"]);
        let mut answer = query(&["a.example"]);
        answer[2] |= 0x80;
        assert!(dns_names(&answer).is_empty(), "an answer is no query");
        assert!(dns_names(&query(&["a.example"])[..14]).is_empty(), "cut short");
        assert!(dns_names(b"GET / HTTP/1.1").is_empty());
        let odd = query(&["a\u{1}b.example"]);
        assert_eq!(dns_names(&odd), ["a\\x01b.example"]);
    }

    #[test]
    fn each_destination_is_said_as_what_it_was() {
        let tcp = observed(Dest::Inet("203.0.113.5:443".parse().expect("addr")), libc::SOCK_STREAM);
        assert_eq!(what(&tcp), "TCP connect to 203.0.113.5:443 by python3");
        let udp = Observed {
            call: Call::SendTo,
            ..observed(Dest::Inet("[2001:db8::1]:9".parse().expect("addr")), libc::SOCK_DGRAM)
        };
        assert_eq!(what(&udp), "UDP datagram to [2001:db8::1]:9 by python3");
        let dns = Observed {
            names: vec!["evil.example".into()],
            ..observed(Dest::Inet("127.0.0.53:53".parse().expect("addr")), libc::SOCK_DGRAM)
        };
        assert_eq!(what(&dns), "DNS lookup of evil.example through 127.0.0.53:53 by python3");
        let docker = Observed {
            resolved: Some("/run/docker.sock".into()),
            ..observed(Dest::UnixPath("/w/d.sock".into()), libc::SOCK_STREAM)
        };
        assert_eq!(what(&docker), "UNIX stream connect to /w/d.sock (a link to /run/docker.sock) by python3");
        let log = Observed { call: Call::SendMsg, ..observed(Dest::UnixPath("/dev/log".into()), libc::SOCK_DGRAM) };
        assert_eq!(what(&log), "UNIX datagram to /dev/log by python3");
        let bus = observed(Dest::UnixAbstract(b"/tmp/dbus-x\0".to_vec()), libc::SOCK_STREAM);
        assert_eq!(what(&bus), "UNIX stream connect to the abstract socket @/tmp/dbus-x@ by python3");
        let odd = Observed { program: "a\nb".into(), ..tcp.clone() };
        assert_eq!(what(&odd), "TCP connect to 203.0.113.5:443 by a\\nb");
        let fast = Observed { call: Call::SendTo, fastopen: true, ..tcp };
        assert_eq!(what(&fast), "TCP Fast Open connect to 203.0.113.5:443 by python3");
    }

    #[test]
    fn a_server_on_loopback_is_allowed_and_one_on_any_other_address_is_a_finding() {
        let at = |a: &str| a.parse::<SocketAddr>().expect("addr");
        for a in ["0.0.0.0:8080", "[::]:8080", "192.0.2.7:22", "[2001:db8::1]:443", "0.0.0.0:0"] {
            assert_eq!(judge_served(at(a), false), Verdict::Network, "{a}: reachable from other machines");
            assert_eq!(judge_served(at(a), true), Verdict::Allowed, "{a}: the machine's network is allowed");
        }
        for a in ["127.0.0.1:8080", "127.1.2.3:0", "[::1]:3000"] {
            assert_eq!(judge_served(at(a), false), Verdict::Allowed, "{a}: loopback");
        }
        // As the socket's address reads: a v4-mapped loopback is loopback.
        let mut mapped = (libc::AF_INET6 as u16).to_ne_bytes().to_vec();
        mapped.extend(8080u16.to_be_bytes());
        mapped.extend([0u8; 4]);
        mapped.extend(Ipv4Addr::LOCALHOST.to_ipv6_mapped().octets());
        mapped.extend([0u8; 4]);
        let Dest::Inet(local) = dest(&mapped) else { panic!("an IP address") };
        assert_eq!(judge_served(local, false), Verdict::Allowed);
        // Judged as a server whatever the network list says, and never by
        // names resolved.
        let list = rules(&["0.0.0.0:8080", "api.example.com"]);
        let a = Allowed { rules: &list, host_network: false, unix_sockets: false, inside: &[] };
        let listen = Observed { call: Call::Listen, ..observed(Dest::Inet(at("0.0.0.0:8080")), libc::SOCK_STREAM) };
        assert_eq!(judge(&listen, &a, &Machine::default(), &[]), Verdict::Network);
        assert!(!needs_names(&Observed { dest: Dest::Inet(at("192.0.2.7:80")), ..listen.clone() }, &a));
        let own = Observed { dest: Dest::Inet(at("127.0.0.1:8080")), ..listen.clone() };
        assert_eq!(judge(&own, &a, &Machine::default(), &[]), Verdict::Allowed);
        assert_eq!(what(&listen), "TCP listen on 0.0.0.0:8080 by python3");
        let udp = Observed { call: Call::Bind, ..observed(Dest::Inet(at("[::]:5353")), libc::SOCK_DGRAM) };
        assert_eq!(what(&udp), "UDP bind on [::]:5353 by python3");
        assert_eq!(judge(&udp, &a, &Machine::default(), &[]), Verdict::Network);
        let dns = Observed { dest: Dest::Inet(at("0.0.0.0:53")), ..udp };
        assert_eq!(what(&dns), "UDP bind on 0.0.0.0:53 by python3", "a server on port 53 is no lookup");
    }

    #[test]
    fn a_bind_is_recorded_for_datagrams_on_a_port_of_its_own_and_a_listen_on_an_ip_address() {
        let stream = Some(Sock { ty: libc::SOCK_STREAM, protocol: 0 });
        let dgram = Some(Sock { ty: libc::SOCK_DGRAM, protocol: 0 });
        let any = |port: u16| Dest::Inet(SocketAddr::new(Ipv4Addr::UNSPECIFIED.into(), port));
        assert!(worth_recording(Call::Listen, stream, false, &any(8080)));
        assert!(worth_recording(Call::Listen, stream, false, &any(0)), "as the socket says it");
        assert!(!worth_recording(Call::Listen, stream, false, &Dest::UnixPath("/w/s.sock".into())));
        assert!(worth_recording(Call::Bind, dgram, false, &any(5353)));
        assert!(!worth_recording(Call::Bind, dgram, false, &any(0)), "a client's port, the kernel's choice");
        assert!(!worth_recording(Call::Bind, stream, false, &any(8080)), "seen at its listen, if it listens");
        assert!(!worth_recording(Call::Bind, None, false, &any(5353)), "a socket of unknown kind");
        assert!(!worth_recording(Call::Bind, dgram, false, &Dest::UnixAbstract(b"x".to_vec())));
        // bind(fd, addr, len) reads its address as connect does; listen(fd,
        // backlog) names none.
        let addr = sockaddr_in([0, 0, 0, 0], 5353);
        let bind = Trap { call: Call::Bind, args: [7, 0x1000, 16, 0, 0, 0], compat: false };
        let s = sent(&bind, &mut memory(vec![(0x1000, addr.clone())]));
        assert_eq!((s.fd, s.addrs), (7, vec![addr]));
        let listen = Trap { call: Call::Listen, args: [7, 128, 0, 0, 0, 0], compat: false };
        let s = sent(&listen, &mut memory(Vec::new()));
        assert!(s.addrs.is_empty() && !s.unreadable && s.fd == 7, "{s:?}");
    }

    #[test]
    fn sends_on_a_connected_stream_and_what_reaches_nothing_are_not_recorded() {
        let stream = Some(Sock { ty: libc::SOCK_STREAM, protocol: 0 });
        let dgram = Some(Sock { ty: libc::SOCK_DGRAM, protocol: 0 });
        let out = Dest::Inet("203.0.113.5:443".parse().expect("addr"));
        assert!(worth_recording(Call::Connect, stream, false, &out));
        assert!(!worth_recording(Call::SendTo, stream, false, &out), "the kernel ignores the address");
        assert!(worth_recording(Call::SendTo, stream, true, &out), "fast open connects");
        assert!(worth_recording(Call::SendMsg, dgram, false, &out));
        assert!(worth_recording(Call::SendMsg, None, false, &out), "a socket of unknown kind");
        assert!(!worth_recording(Call::Connect, dgram, false, &Dest::Ignored));
    }

    #[test]
    fn what_the_other_modes_would_have_stopped_is_a_finding() {
        let list = rules(&["api.example.com", "127.0.0.1:8080", "*.pkg.example", "[2001:db8::7]:443"]);
        let inside = [PathBuf::from("/w"), PathBuf::from("/tmp/t")];
        let a = Allowed { rules: &list, host_network: false, unix_sockets: false, inside: &inside };
        let machine = Machine {
            tcp_ports: vec![5432, 8080],
            udp_ports: vec![53],
            abstract_names: vec!["@/tmp/.X11-unix/X0".into()],
            resolvers: vec!["127.0.0.53".parse().expect("ip")],
        };
        let resolved = vec![("api.example.com".to_string(), vec!["192.0.2.10".parse().expect("ip")])];
        let tcp = |addr: &str| observed(Dest::Inet(addr.parse().expect("addr")), libc::SOCK_STREAM);
        let udp = |addr: &str| observed(Dest::Inet(addr.parse().expect("addr")), libc::SOCK_DGRAM);
        let j = |o: &Observed| judge(o, &a, &machine, &resolved);
        assert_eq!(j(&tcp("203.0.113.5:443")), Verdict::Network, "not in the list");
        assert_eq!(j(&tcp("192.0.2.10:443")), Verdict::Allowed, "an allowed name resolves to it");
        assert_eq!(j(&tcp("192.0.2.10:22")), Verdict::Network, "an allowed name's address, not its port");
        assert_eq!(j(&tcp("[2001:db8::7]:443")), Verdict::Allowed, "an allowed address");
        assert_eq!(j(&tcp("127.0.0.1:8080")), Verdict::Allowed, "an allowed loopback port");
        assert_eq!(j(&tcp("127.0.0.1:5432")), Verdict::Network, "the machine's server");
        assert_eq!(j(&tcp("[::1]:5432")), Verdict::Network, "the machine's server, over IPv6");
        assert_eq!(j(&tcp("127.0.0.1:3000")), Verdict::Allowed, "a server the command started itself");
        assert_eq!(j(&udp("127.0.0.1:5432")), Verdict::Allowed, "nothing of the machine's there over UDP");
        assert_eq!(j(&udp("127.0.0.53:53")), Verdict::Allowed, "the machine's resolver, names not seen");
        let lookup = |n: &str| Observed { names: vec![n.to_string()], ..udp("127.0.0.53:53") };
        assert_eq!(j(&lookup("api.example.com")), Verdict::Allowed, "an allowed name");
        assert_eq!(j(&lookup("files.pkg.example")), Verdict::Allowed, "beneath an allowed domain");
        assert_eq!(j(&lookup("secret.evil.example")), Verdict::Network, "a name the list does not name");
        assert_eq!(j(&udp("8.8.8.8:53")), Verdict::Network, "DNS to another server");
        let unix = |p: &str| observed(Dest::UnixPath(p.into()), libc::SOCK_STREAM);
        assert_eq!(j(&unix("/run/docker.sock")), Verdict::UnixSocket);
        assert_eq!(j(&unix("/w/.lsp.sock")), Verdict::Allowed, "the command's own, in the worktree");
        assert_eq!(j(&unix("/tmp/t/x.sock")), Verdict::Allowed, "in its TMPDIR");
        assert_eq!(j(&unix("/tmp/tx.sock")), Verdict::UnixSocket, "beside its TMPDIR is outside");
        for names in ["/run/nscd/socket", "/run/systemd/userdb/io.systemd.Multiplexer"] {
            assert_eq!(j(&unix(names)), Verdict::Allowed, "{names}: the machine's name services");
        }
        let nscd = Observed { resolved: Some("/run/nscd/socket".into()), ..unix("/var/run/nscd/socket") };
        assert_eq!(j(&nscd), Verdict::Allowed, "by the path it resolves to");
        let link = Observed { resolved: Some("/run/docker.sock".into()), ..unix("/w/d.sock") };
        assert_eq!(j(&link), Verdict::UnixSocket, "a link in the worktree to a socket outside");
        let x11 = observed(Dest::UnixAbstract(b"/tmp/.X11-unix/X0".to_vec()), libc::SOCK_STREAM);
        assert_eq!(j(&x11), Verdict::UnixSocket, "the machine's abstract socket");
        assert_eq!(j(&observed(Dest::UnixAbstract(b"mine".to_vec()), libc::SOCK_STREAM)), Verdict::Allowed);
        assert_eq!(j(&observed(Dest::Vsock { cid: 2, port: 1 }, libc::SOCK_STREAM)), Verdict::Network);
        let sockets = Allowed { unix_sockets: true, ..a };
        assert_eq!(judge(&unix("/run/docker.sock"), &sockets, &machine, &resolved), Verdict::Allowed);
        assert_eq!(judge(&x11, &sockets, &machine, &resolved), Verdict::UnixSocket, "still the machine's namespace");
        let host = Allowed { host_network: true, unix_sockets: true, ..a };
        for o in [tcp("203.0.113.5:443"), tcp("127.0.0.1:5432"), x11] {
            assert_eq!(judge(&o, &host, &machine, &resolved), Verdict::Allowed, "{o:?}");
        }
    }

    #[test]
    fn names_are_resolved_once_and_only_when_an_address_needs_them() {
        let list = rules(&["api.example.com", "*.pkg.example", "localhost:3000", "10.0.0.1:22"]);
        let a = Allowed { rules: &list, host_network: false, unix_sockets: false, inside: &[] };
        let machine = Machine::default();
        let lookup = Observed {
            names: vec!["files.pkg.example".into(), "evil.example".into()],
            ..observed(Dest::Inet("8.8.8.8:53".parse().expect("addr")), libc::SOCK_DGRAM)
        };
        let out = observed(Dest::Inet("192.0.2.20:443".parse().expect("addr")), libc::SOCK_STREAM);
        let mut asked = Vec::new();
        let mut resolve = |names: &[String]| {
            asked.push(names.to_vec());
            vec![("files.pkg.example".to_string(), vec!["192.0.2.20".parse().expect("ip")])]
        };
        let lines = judge_all(&[(lookup.clone(), 1), (out.clone(), 2), (out, 1)], &a, &machine, &mut resolve);
        assert_eq!(asked, [vec!["api.example.com".to_string(), "files.pkg.example".to_string()]]);
        assert_eq!(
            lines,
            [
                Seen {
                    seen: "network".into(),
                    what: "DNS lookup of files.pkg.example, evil.example through 8.8.8.8:53 by python3".into(),
                    count: 1
                },
                Seen { seen: "allowed".into(), what: "TCP connect to 192.0.2.20:443 by python3".into(), count: 3 },
            ]
        );
        let mut never = |_: &[String]| -> Vec<(String, Vec<IpAddr>)> { panic!("nothing needed a name") };
        let local = observed(Dest::Inet("127.0.0.1:3000".parse().expect("addr")), libc::SOCK_STREAM);
        assert_eq!(judge_all(&[(local, 1)], &a, &machine, &mut never)[0].seen, "allowed");
    }

    #[test]
    fn the_log_s_findings_are_read_apart_from_its_other_lines() {
        let dir = tempfile::tempdir().expect("tempdir");
        let log = dir.path().join("network-agent.jsonl");
        let lines = [
            r#"{"host":"pypi.org","port":443,"allowed":false,"method":"CONNECT","bytes_up":0,"bytes_down":0,"ms":1}"#,
            r#"{"limit":"leftovers","max":1}"#,
            r#"{"seen":"network","what":"TCP connect to 203.0.113.5:443 by python3","count":2}"#,
            r#"{"seen":"allowed","what":"TCP connect to 192.0.2.10:443 by node","count":9}"#,
            r#"{"seen":"unix-socket","what":"UNIX stream connect to /run/docker.sock by curl","count":1}"#,
            "not json",
        ];
        std::fs::write(&log, lines.join("\n")).expect("write");
        let seen = network_seen(&log);
        assert_eq!(seen.iter().map(|s| s.seen.as_str()).collect::<Vec<_>>(), ["network", "unix-socket"]);
        assert!(proxy::read_log(&log).len() == 1, "the proxy's reader takes none of them as a connection");
        assert!(crate::limits_hit(&log).len() == 1, "nor the limits' reader");
    }
}
