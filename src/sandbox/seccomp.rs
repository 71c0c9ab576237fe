//! Seccomp filters on the sockets a confined command may create.
//!
//! In its own namespaces ([`Deny`] `{ inet: false, unix: true }`) it may
//! create no UNIX socket (a named one outside, `$SSH_AUTH_SOCK` or
//! `docker.sock`, could otherwise be reached by its path) and no vsock.
//!
//! In the fallback, for machines that refuse user namespaces (so no
//! network namespace of our own; `{ inet: true, .. }`), the filter also
//! refuses what Landlock's TCP port rules ([`super::landlock::Net::Only`])
//! cannot see. Landlock decides which TCP ports may be connected to; this
//! filter makes sure that a plain TCP connection is the only network left
//! for Landlock to decide on.
//!
//! [`filter`] builds the program before a fork; [`Filter::install`] sets
//! `no_new_privs` and installs it on the calling thread, just before exec:
//! the program executed and all its descendants keep it, and none of them
//! can remove it. A refused call fails with `EPERM`, a permission error
//! programs already handle; nothing is killed for asking. What follows is
//! the fallback's filter.
//!
//! # What it refuses
//!
//! - `socket()` of every address family but `AF_INET`, `AF_INET6` and
//!   `AF_NETLINK`. That is `AF_UNIX` (so no named socket outside the
//!   sandbox can be reached: `$SSH_AUTH_SOCK`, `docker.sock`, D-Bus, X11,
//!   the journal), `AF_PACKET`, `AF_VSOCK` (the hypervisor's host),
//!   Bluetooth, `AF_ALG`, and every family a later kernel adds.
//! - `socket()` of `AF_INET` and `AF_INET6` unless it is a TCP stream
//!   (`SOCK_STREAM`, with or without `SOCK_NONBLOCK` and `SOCK_CLOEXEC`;
//!   protocol 0 or `IPPROTO_TCP`): no UDP (no DNS query, no QUIC, no
//!   datagram of any shape), no ICMP ping socket, no raw socket, no SCTP,
//!   and no MPTCP, whose connections Landlock's TCP rules let through to
//!   any port.
//! - `sendto`, `sendmsg` and `sendmmsg` with `MSG_FASTOPEN`: TCP Fast Open
//!   connects inside the send, and Landlock's connect rule does not see
//!   that connection either.
//! - `listen()`: on a socket never bound, the kernel binds it to a port of
//!   its choosing without a `bind()` for Landlock to refuse. With Landlock
//!   refusing every `bind()`, that was the only way left to listen.
//! - `io_uring_setup`, `io_uring_enter` and `io_uring_register`: an
//!   io_uring creates and connects sockets through its own queue, where
//!   this filter never sees the calls.
//! - On x86_64, every call made through the x32 ABI (numbers with bit 30
//!   set), which would otherwise reach the same calls under numbers the
//!   filter does not name. A 32-bit call (`int 0x80`) does not match the
//!   filter's architecture, and the kernel ends the process that makes it:
//!   32-bit programs cannot run under this fallback.
//!
//! - `ioctl(fd, TIOCSTI, ..)` and `ioctl(fd, TIOCLINUX, ..)`, in every
//!   filter, whatever else it refuses: pushing input into a terminal as if
//!   typed, reading the console's screen.
//! - `socketpair()` of the datagram type (with UNIX sockets refused): a
//!   datagram socket may `sendto` a named socket outside, or `connect` to
//!   one, by its path, which seccomp cannot see.
//! - With a protected process ([`Deny::protect`], the sandbox's
//!   supervisor): `ptrace`, `process_vm_readv`, `process_vm_writev` and
//!   `pidfd_open` on its pid. The supervisor itself runs under
//!   [`supervisor_filter`] (no `ptrace`, no `process_vm_*`, no
//!   `pidfd_getfd`, no terminal input), on all its threads.
//!
//! A stream or seqpacket `socketpair()` stays allowed: an unnamed pair of
//! connected UNIX sockets reaches nothing outside (a connected socket
//! cannot `sendto` a path), and many programs build the pipes between a
//! parent and its children from one (libuv's, for one). `AF_NETLINK` stays
//! too: it talks to the local kernel only (glibc asks it which addresses
//! the machine has), and changing anything through it needs a capability
//! that a confined process does not have.
//!
//! # What it cannot do
//!
//! - See an address. Seccomp reads the registers of a call, never the
//!   memory they point to, and a socket's address is such a pointer. The
//!   filter decides by family, type, protocol and flags alone; which TCP
//!   port is connected to is Landlock's to say (ABI 4, Linux 6.7, and
//!   newer), and which host no one's: an allowed port is allowed on every
//!   host.
//! - Tell named UNIX sockets apart. They are refused wholesale, the
//!   sandbox's own included, so a program that needs a named UNIX socket
//!   inside the sandbox breaks in this fallback: a server or a language
//!   server listening on a socket file, Python's `multiprocessing`
//!   managers, gpg-agent, an ssh control master, a test that starts a
//!   service on a socket path. The same goes for a program that listens on
//!   TCP, even on a port it was not given. The namespace confinement has
//!   neither limit.
//! - Take away a socket the process already holds: whatever is inherited
//!   across exec is the caller's to close (`exec` marks every inherited
//!   descriptor close-on-exec), and another process's sockets stay out of
//!   reach only because Landlock refuses `ptrace` and `pidfd_getfd` on
//!   processes outside the sandbox.
//! - Filter the other threads of the calling process: only the thread that
//!   installs it, and what that thread starts or executes afterwards.

/// Why the filter was not installed.
#[derive(Debug, thiserror::Error)]
pub enum SeccompError {
    #[error("seccomp filters need Linux; this is {os}")]
    NotLinux { os: &'static str },
    #[error("the seccomp filter that refuses network sockets is written for x86_64 and aarch64, not for {arch}")]
    Architecture { arch: &'static str },
    #[cfg(target_os = "linux")]
    #[error("cannot build the seccomp filter that refuses network sockets: {0}")]
    Build(#[from] seccompiler::BackendError),
    #[error("cannot set no_new_privs (prctl PR_SET_NO_NEW_PRIVS), which installing a seccomp filter needs: {0}")]
    NoNewPrivs(std::io::Error),
    #[error("the kernel refused the seccomp filter that refuses network sockets: {0}")]
    Install(std::io::Error),
}

/// What a filter refuses. Every filter, whatever it is given here,
/// refuses the terminal's `TIOCSTI` and `TIOCLINUX` (pushing input into a
/// terminal, reading its screen).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Deny {
    /// Every socket but a plain TCP stream or netlink, `listen()`, TCP Fast
    /// Open and io_uring: the fallback without a network namespace.
    pub inet: bool,
    /// UNIX sockets (and `AF_VSOCK`, and io_uring, which could create
    /// either), and datagram socket pairs (the one socket left that could
    /// `sendto` or `connect` to a path): so no named socket outside is
    /// reachable.
    pub unix: bool,
    /// A process the command may not trace, nor read or write the memory
    /// of, nor signal (the sandbox's supervisor, by its id in the
    /// sandbox's PID namespace).
    pub protect: Option<libc::pid_t>,
}

/// A filter built before a fork, to be installed after it
/// ([`Filter::install`] allocates nothing).
#[derive(Debug, Clone, Default)]
pub struct Filter {
    #[cfg(target_os = "linux")]
    program: Option<seccompiler::BpfProgram>,
}

/// The filter for `deny`.
#[cfg(target_os = "linux")]
pub fn filter(deny: Deny) -> Result<Filter, SeccompError> {
    Ok(Filter { program: Some(program(deny)?) })
}

#[cfg(not(target_os = "linux"))]
pub fn filter(deny: Deny) -> Result<Filter, SeccompError> {
    if !deny.inet && !deny.unix {
        return Ok(Filter::default());
    }
    Err(SeccompError::NotLinux { os: std::env::consts::OS })
}

impl Filter {
    /// Sets `no_new_privs` and installs the filter on the calling thread:
    /// from now on it and every process it starts or becomes get `EPERM`
    /// from the calls refused. Only system calls on memory prepared before:
    /// safe between `fork` and `exec`.
    pub fn install(&self) -> Result<(), SeccompError> {
        self.install_with(0)
    }

    /// [`Filter::install`] on every thread of this process at once
    /// (`SECCOMP_FILTER_FLAG_TSYNC`): for the sandbox's supervisor, whose
    /// forwarding threads already run.
    pub fn install_all_threads(&self) -> Result<(), SeccompError> {
        #[cfg(target_os = "linux")]
        return self.install_with(libc::SECCOMP_FILTER_FLAG_TSYNC as libc::c_ulong);
        #[cfg(not(target_os = "linux"))]
        self.install_with(0)
    }

    /// `no_new_privs`, then the program with the seccomp `flags`: only
    /// system calls on memory prepared before.
    fn install_with(&self, flags: libc::c_ulong) -> Result<(), SeccompError> {
        #[cfg(target_os = "linux")]
        if let Some(program) = &self.program {
            let prog = libc::sock_fprog {
                len: program.len() as libc::c_ushort,
                filter: program.as_ptr() as *mut libc::sock_filter,
            };
            // SAFETY: prctl sets a flag of this thread; seccomp reads the
            // program through `prog`, which outlives the call (with TSYNC,
            // for every thread of the process).
            unsafe {
                if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                    return Err(SeccompError::NoNewPrivs(std::io::Error::last_os_error()));
                }
                if libc::syscall(libc::SYS_seccomp, libc::SECCOMP_SET_MODE_FILTER, flags, &prog) != 0 {
                    return Err(SeccompError::Install(std::io::Error::last_os_error()));
                }
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = flags;
        Ok(())
    }
}

/// The supervisor's own filter, installed on all its threads once its
/// sockets are made: no tracing of any process, no reading or writing of
/// another's memory, no terminal input pushed. A supervisor the command
/// took over (it cannot: the supervisor is not dumpable) still could not
/// do what the command may not.
pub fn supervisor_filter() -> Result<Filter, SeccompError> {
    #[cfg(target_os = "linux")]
    {
        let program = supervisor_program()?;
        Ok(Filter { program: Some(program) })
    }
    #[cfg(not(target_os = "linux"))]
    Err(SeccompError::NotLinux { os: std::env::consts::OS })
}

#[cfg(target_os = "linux")]
fn supervisor_program() -> Result<seccompiler::BpfProgram, SeccompError> {
    use seccompiler::{SeccompAction, SeccompFilter};
    let mut refused: std::collections::BTreeMap<i64, Vec<seccompiler::SeccompRule>> = [
        (libc::SYS_ptrace, Vec::new()),
        (libc::SYS_process_vm_writev, Vec::new()),
        (libc::SYS_process_vm_readv, Vec::new()),
        (libc::SYS_pidfd_getfd, Vec::new()),
    ]
    .into_iter()
    .collect();
    refused.insert(libc::SYS_ioctl, terminal_rules()?);
    let filter = SeccompFilter::new(refused, SeccompAction::Allow, SeccompAction::Errno(EPERM), target_arch()?)?;
    let program: seccompiler::BpfProgram = filter.try_into()?;
    Ok(refuse_x32(program))
}

#[cfg(target_os = "linux")]
fn target_arch() -> Result<seccompiler::TargetArch, SeccompError> {
    match std::env::consts::ARCH {
        "x86_64" => Ok(seccompiler::TargetArch::x86_64),
        "aarch64" => Ok(seccompiler::TargetArch::aarch64),
        arch => Err(SeccompError::Architecture { arch }),
    }
}

/// `ioctl(fd, TIOCSTI, ..)` (push a byte into a terminal's input, as if
/// typed) and `ioctl(fd, TIOCLINUX, ..)` (the Linux console's selection
/// and screen). Only the request's low 32 bits count (the kernel's own
/// `unsigned int cmd`).
#[cfg(target_os = "linux")]
fn terminal_rules() -> Result<Vec<seccompiler::SeccompRule>, SeccompError> {
    use seccompiler::{SeccompCmpOp, SeccompRule};
    [libc::TIOCSTI as u32, libc::TIOCLINUX as u32]
        .into_iter()
        .map(|req| Ok(SeccompRule::new(vec![arg(1, SeccompCmpOp::Eq, req)?])?))
        .collect()
}

/// Sets `no_new_privs` and installs, on the calling thread, the filter
/// described at the top of this module: from now on this thread and every
/// process it starts or becomes get `EPERM` from `socket()` for anything
/// but a TCP stream or a netlink socket, from `listen()`, from a send with
/// `MSG_FASTOPEN` and from io_uring.
pub fn deny_network_sockets() -> Result<(), SeccompError> {
    filter(Deny { inet: true, unix: true, protect: None })?.install()
}

/// The filter as a BPF program for the architecture this was built for.
#[cfg(target_os = "linux")]
fn program(deny: Deny) -> Result<seccompiler::BpfProgram, SeccompError> {
    use seccompiler::{SeccompAction, SeccompCmpOp, SeccompFilter, SeccompRule};
    use std::collections::BTreeMap;

    let arch = target_arch()?;
    // Refused when the flags argument `flags` has MSG_FASTOPEN.
    let fastopen = |flags: u8| -> Result<Vec<SeccompRule>, SeccompError> {
        let flag = libc::MSG_FASTOPEN as u32;
        Ok(vec![SeccompRule::new(vec![arg(flags, SeccompCmpOp::MaskedEq(flag.into()), flag)?])?])
    };
    let mut refused: BTreeMap<i64, Vec<SeccompRule>> = [(libc::SYS_ioctl, terminal_rules()?)].into_iter().collect();
    if deny.inet || deny.unix {
        refused.insert(libc::SYS_socket, socket_rules(deny)?);
        refused.insert(libc::SYS_io_uring_setup, Vec::new());
        refused.insert(libc::SYS_io_uring_enter, Vec::new());
        refused.insert(libc::SYS_io_uring_register, Vec::new());
    }
    if deny.unix {
        // socketpair(AF_UNIX, SOCK_DGRAM, ..): a datagram socket may
        // `sendto` any named socket outside, or `connect` to one; a
        // connected stream or seqpacket pair cannot (EISCONN).
        const TYPE: u8 = 1;
        let mask = 0xf_u32; // SOCK_TYPE_MASK: the flags above it are NONBLOCK, CLOEXEC
        refused.insert(
            libc::SYS_socketpair,
            vec![SeccompRule::new(vec![arg(TYPE, SeccompCmpOp::MaskedEq(mask.into()), libc::SOCK_DGRAM as u32)?])?],
        );
    }
    if let Some(pid) = deny.protect {
        // ptrace(request, pid, ..); process_vm_*(pid, ..); kill(pid, ..);
        // pidfd_open(pid, ..).
        let on = |index: u8| -> Result<Vec<SeccompRule>, SeccompError> {
            Ok(vec![SeccompRule::new(vec![arg(index, SeccompCmpOp::Eq, pid as u32)?])?])
        };
        refused.insert(libc::SYS_ptrace, on(1)?);
        refused.insert(libc::SYS_process_vm_writev, on(0)?);
        refused.insert(libc::SYS_process_vm_readv, on(0)?);
        refused.insert(libc::SYS_pidfd_open, on(0)?);
    }
    if deny.inet {
        // sendto(fd, buf, len, flags, ..), sendmsg(fd, msg, flags),
        // sendmmsg(fd, msgs, n, flags).
        refused.insert(libc::SYS_listen, Vec::new());
        refused.insert(libc::SYS_sendto, fastopen(3)?);
        refused.insert(libc::SYS_sendmsg, fastopen(2)?);
        refused.insert(libc::SYS_sendmmsg, fastopen(3)?);
    }
    let filter = SeccompFilter::new(refused, SeccompAction::Allow, SeccompAction::Errno(EPERM), arch)?;
    let program: seccompiler::BpfProgram = filter.try_into()?;
    Ok(refuse_x32(program))
}

/// What a refused call returns: `EPERM`.
#[cfg(target_os = "linux")]
const EPERM: u32 = libc::EPERM as u32;

/// A condition on a call's argument `index`, one of the C ints of the
/// calls refused here: only its low 32 bits count.
#[cfg(target_os = "linux")]
fn arg(index: u8, op: seccompiler::SeccompCmpOp, value: u32) -> Result<seccompiler::SeccompCondition, SeccompError> {
    Ok(seccompiler::SeccompCondition::new(index, seccompiler::SeccompCmpArgLen::Dword, op, value.into())?)
}

/// `program` behind three instructions that refuse every x32 call. The
/// x32 ABI shares x86_64's audit architecture, so the architecture check
/// lets its calls through, and numbers them with bit 30 set, so they match
/// none of the numbers the filter refuses. A range is beyond seccompiler's
/// rules, which name calls one number at a time; the program's jumps are
/// relative, so it runs unchanged behind these.
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn refuse_x32(program: seccompiler::BpfProgram) -> seccompiler::BpfProgram {
    use seccompiler::sock_filter;
    const X32_SYSCALL_BIT: u32 = 0x4000_0000;
    // seccomp_data starts with the call's number, a u32.
    const NR_OFFSET: u32 = 0;
    let op = |code: u32| code as u16;
    let mut out = vec![
        sock_filter { code: op(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS), jt: 0, jf: 0, k: NR_OFFSET },
        // Below the x32 numbers: skip the next instruction.
        sock_filter { code: op(libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K), jt: 0, jf: 1, k: X32_SYSCALL_BIT },
        sock_filter { code: op(libc::BPF_RET | libc::BPF_K), jt: 0, jf: 0, k: libc::SECCOMP_RET_ERRNO | EPERM },
    ];
    out.extend(program);
    out
}

#[cfg(all(target_os = "linux", not(target_arch = "x86_64")))]
fn refuse_x32(program: seccompiler::BpfProgram) -> seccompiler::BpfProgram {
    program
}

/// When `socket(family, type, protocol)` is refused: each rule is a set of
/// conditions that must all hold, and one rule that holds refuses the call.
#[cfg(target_os = "linux")]
fn socket_rules(deny: Deny) -> Result<Vec<seccompiler::SeccompRule>, SeccompError> {
    use seccompiler::{SeccompCmpOp, SeccompRule};
    const FAMILY: u8 = 0;
    const TYPE: u8 = 1;
    const PROTOCOL: u8 = 2;
    // The constants compared are positive C ints.
    let int = |index: u8, op: SeccompCmpOp, value: libc::c_int| arg(index, op, value as u32);
    if !deny.inet {
        // In a network namespace of its own: UNIX sockets, and vsock (the
        // hypervisor's host, which no network namespace hides).
        return Ok(vec![
            SeccompRule::new(vec![int(FAMILY, SeccompCmpOp::Eq, libc::AF_UNIX)?])?,
            SeccompRule::new(vec![int(FAMILY, SeccompCmpOp::Eq, libc::AF_VSOCK)?])?,
        ]);
    }
    // Any family but these three (four, with UNIX sockets allowed).
    let mut others = vec![
        int(FAMILY, SeccompCmpOp::Ne, libc::AF_INET)?,
        int(FAMILY, SeccompCmpOp::Ne, libc::AF_INET6)?,
        int(FAMILY, SeccompCmpOp::Ne, libc::AF_NETLINK)?,
    ];
    if !deny.unix {
        others.push(int(FAMILY, SeccompCmpOp::Ne, libc::AF_UNIX)?);
    }
    let mut rules = vec![SeccompRule::new(others)?];
    let stream = libc::SOCK_STREAM;
    let (nonblock, cloexec) = (libc::SOCK_NONBLOCK, libc::SOCK_CLOEXEC);
    for family in [libc::AF_INET, libc::AF_INET6] {
        // A type that is none of the four a TCP stream may be given (the
        // kernel takes no other flag there: any other value is not a
        // stream, or not valid at all).
        let mut not_a_stream = vec![int(FAMILY, SeccompCmpOp::Eq, family)?];
        for ty in [stream, stream | nonblock, stream | cloexec, stream | nonblock | cloexec] {
            not_a_stream.push(int(TYPE, SeccompCmpOp::Ne, ty)?);
        }
        rules.push(SeccompRule::new(not_a_stream)?);
        // A stream of another protocol: SCTP, MPTCP.
        rules.push(SeccompRule::new(vec![
            int(FAMILY, SeccompCmpOp::Eq, family)?,
            int(PROTOCOL, SeccompCmpOp::Ne, 0)?,
            int(PROTOCOL, SeccompCmpOp::Ne, libc::IPPROTO_TCP)?,
        ])?);
    }
    Ok(rules)
}

/// What the network tests of this module and of [`super::landlock`] share:
/// the test binary run again in a process of its own (confining the test
/// process itself would confine every test after it), told by its
/// environment to confine itself and try each kind of socket, one line of
/// output per try.
#[cfg(test)]
pub(super) mod probe {
    use std::collections::BTreeMap;
    use std::net::{TcpListener, TcpStream};

    /// The confinement the re-run test puts itself in.
    const MODE: &str = "RETRY_RUN_NET_PROBE";
    /// The two ports it gets: `allowed,other`.
    const PORTS: &str = "RETRY_RUN_NET_PROBE_PORTS";

    /// What one try did: `Ok`, or the errno it failed with.
    pub type Outcome = Result<(), i32>;

    /// In the re-run test binary told `mode`: the allowed port and the
    /// other one, each with a listener of the parent behind it.
    pub fn child(mode: &str) -> Option<(u16, u16)> {
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
    pub fn rerun(test: &str, mode: &str) -> BTreeMap<String, Outcome> {
        let allowed = TcpListener::bind("127.0.0.1:0").expect("listener");
        let other = TcpListener::bind("127.0.0.1:0").expect("listener");
        let port = |l: &TcpListener| l.local_addr().expect("bound").port();
        let test = test.split_once("::").map_or(test, |(_crate, rest)| rest);
        let exe = std::env::current_exe().expect("test binary");
        let spec = crate::process::Spec {
            argv: vec![
                exe.display().to_string(),
                test.to_string(),
                "--exact".into(),
                "--nocapture".into(),
                "--test-threads=1".into(),
            ],
            cwd: std::env::current_dir().expect("cwd"),
            env: vec![(MODE.into(), mode.into()), (PORTS.into(), format!("{},{}", port(&allowed), port(&other)))],
            unset: Vec::new(),
            stdin: None,
            timeout: std::time::Duration::from_secs(120),
            grace: std::time::Duration::from_secs(1),
            keep: 64 * 1024,
        };
        let done = crate::process::run(&spec).expect("re-run the test binary");
        let output = String::from_utf8_lossy(&done.output.bytes()).into_owned();
        assert!(done.success(), "the re-run test failed:\n{output}");
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
    pub fn try_all(allowed: u16, other: u16) {
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
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::probe::{self, Outcome};
    use super::*;
    use crate::sandbox::landlock::{self, Net};
    use std::collections::BTreeMap;

    const REFUSED: Outcome = Err(libc::EPERM);
    /// Landlock's refusal.
    const DENIED: Outcome = Err(libc::EACCES);

    fn assert_seen(seen: &BTreeMap<String, Outcome>, expected: &[(&str, Outcome)]) {
        for (name, outcome) in expected {
            assert_eq!(seen.get(*name), Some(outcome), "{name}, among {seen:?}");
        }
    }

    #[test]
    fn the_filter_builds_for_this_architecture() {
        assert!(!program(Deny { inet: true, unix: true, protect: None }).expect("filter").is_empty());
        assert!(!program(Deny { inet: false, unix: true, protect: Some(2) }).expect("filter").is_empty());
        // The terminal's ioctls are refused even when no socket is.
        assert!(!program(Deny::default()).expect("filter").is_empty());
        assert!(!supervisor_program().expect("filter").is_empty());
    }

    /// Seccomp alone: every socket but a TCP stream and netlink is refused,
    /// and so are the ways around Landlock's TCP rules (fast open, MPTCP,
    /// listen's own bind, io_uring); socketpair works, and so does TCP to
    /// any port (which port is Landlock's to say).
    #[test]
    fn only_tcp_and_netlink_sockets_are_left() {
        if let Some((allowed, other)) = probe::child("seccomp") {
            deny_network_sockets().expect("filter installed");
            probe::try_all(allowed, other);
            return;
        }
        let seen = probe::rerun(concat!(module_path!(), "::only_tcp_and_netlink_sockets_are_left"), "seccomp");
        assert_seen(
            &seen,
            &[
                ("udp", REFUSED),
                ("udp_nonblock_cloexec", REFUSED),
                ("udp6", REFUSED),
                ("std_udp", REFUSED),
                ("icmp", REFUSED),
                ("raw", REFUSED),
                ("sctp", REFUSED),
                ("mptcp", REFUSED),
                ("mptcp_other", REFUSED),
                ("packet", REFUSED),
                ("vsock", REFUSED),
                ("unix_stream", REFUSED),
                ("unix_dgram", REFUSED),
                ("unix_seqpacket", REFUSED),
                ("io_uring", REFUSED),
                ("fastopen_other", REFUSED),
                ("listen_unbound", REFUSED),
                ("socketpair_dgram", REFUSED),
                ("tiocsti", REFUSED),
                ("socketpair", Ok(())),
                ("netlink", Ok(())),
                ("tcp", Ok(())),
                ("tcp_flags", Ok(())),
                ("tcp6", Ok(())),
                ("connect_allowed", Ok(())),
                ("connect_other", Ok(())),
                ("bind_any", Ok(())),
            ],
        );
        #[cfg(target_arch = "x86_64")]
        assert_seen(&seen, &[("x32_getpid", REFUSED)]);
    }

    /// The whole fallback, Landlock's TCP rules and this filter: UDP and
    /// UNIX sockets refused, socketpair working, TCP to the allowed port
    /// only, no port bound.
    #[test]
    fn the_fallback_leaves_tcp_to_the_allowed_port_only() {
        if let Some((allowed, other)) = probe::child("fallback") {
            let c = landlock::confine_with(&[], &[], Net::Only(vec![allowed])).expect("confined");
            assert_eq!(c.net_enforced, c.abi >= 4, "{c:?}");
            deny_network_sockets().expect("filter installed");
            probe::try_all(allowed, other);
            return;
        }
        let seen =
            probe::rerun(concat!(module_path!(), "::the_fallback_leaves_tcp_to_the_allowed_port_only"), "fallback");
        assert_seen(
            &seen,
            &[
                ("udp", REFUSED),
                ("std_udp", REFUSED),
                ("unix_stream", REFUSED),
                ("unix_dgram", REFUSED),
                ("socketpair", Ok(())),
                ("connect_allowed", Ok(())),
                ("fastopen_other", REFUSED),
                ("mptcp_other", REFUSED),
                ("listen_unbound", REFUSED),
            ],
        );
        if landlock::abi() >= 4 {
            assert_seen(&seen, &[("connect_other", DENIED), ("bind_any", DENIED), ("bind_allowed", DENIED)]);
        }
    }
}
