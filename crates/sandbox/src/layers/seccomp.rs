//! Seccomp filters on the sockets a confined command may create.
//!
//! In its own namespaces ([`Deny`] `{ inet: false, unix: true }`) it may
//! create no UNIX socket (a named one outside, `$SSH_AUTH_SOCK` or
//! `docker.sock`, could otherwise be reached by its path) and no vsock.
//!
//! In the fallback, for machines that refuse user namespaces (so no
//! network namespace of our own; `{ inet: true, .. }`), the filter also
//! refuses what Landlock's TCP port rules ([`crate::layers::landlock::Net::Only`])
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
//!   `pidfd_getfd`, no terminal input), on each of its threads.
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
    /// Also what the supervisor refuses itself ([`supervisor_filter`]):
    /// one filter for the supervisor's thread that starts the command and
    /// for the command, in place of the two stacked (each filter installed
    /// costs the kernel a compilation and a pass over every system call).
    pub supervisor: bool,
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
        #[cfg(target_os = "linux")]
        if let Some(program) = &self.program {
            crate::sys::seccomp::no_new_privs().map_err(SeccompError::NoNewPrivs)?;
            crate::sys::seccomp::install(program).map_err(SeccompError::Install)?;
        }
        Ok(())
    }
}

/// The supervisor's own filter, which each of its threads installs on
/// itself once its sockets are made (the thread that starts the command,
/// merged with the command's: [`Deny::supervisor`]): no tracing of any process, no reading or writing of
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
    let refused = supervisor_refused()?;
    let filter = SeccompFilter::new(refused, SeccompAction::Allow, SeccompAction::Errno(EPERM), target_arch()?)?;
    let program: seccompiler::BpfProgram = filter.try_into()?;
    Ok(refuse_x32(program))
}

/// The calls the supervisor refuses itself, each with the rules that
/// refuse it (none: always).
#[cfg(target_os = "linux")]
fn supervisor_refused() -> Result<std::collections::BTreeMap<i64, Vec<seccompiler::SeccompRule>>, SeccompError> {
    let mut refused: std::collections::BTreeMap<i64, Vec<seccompiler::SeccompRule>> = [
        (libc::SYS_ptrace, Vec::new()),
        (libc::SYS_process_vm_writev, Vec::new()),
        (libc::SYS_process_vm_readv, Vec::new()),
        (libc::SYS_pidfd_getfd, Vec::new()),
    ]
    .into_iter()
    .collect();
    refused.insert(libc::SYS_ioctl, terminal_rules()?);
    Ok(refused)
}

/// `more` refused beside `refused`: a call is refused when either refuses
/// it (always, where either always does; else under either's rules, each
/// rule once). Pure.
#[cfg(target_os = "linux")]
fn refuse_also(
    refused: &mut std::collections::BTreeMap<i64, Vec<seccompiler::SeccompRule>>,
    more: std::collections::BTreeMap<i64, Vec<seccompiler::SeccompRule>>,
) {
    for (call, rules) in more {
        match refused.entry(call) {
            std::collections::btree_map::Entry::Vacant(v) => {
                v.insert(rules);
            }
            std::collections::btree_map::Entry::Occupied(mut o) => {
                let have = o.get_mut();
                if have.is_empty() || rules.is_empty() {
                    have.clear();
                } else {
                    for r in rules {
                        if !have.contains(&r) {
                            have.push(r);
                        }
                    }
                }
            }
        }
    }
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
/// `MSG_FASTOPEN` and from io_uring. (The tests install it; the confined
/// exec builds its own [`Deny`].)
#[cfg(test)]
pub fn deny_network_sockets() -> Result<(), SeccompError> {
    filter(Deny { inet: true, unix: true, protect: None, supervisor: false })?.install()
}

/// The filter as a BPF program for the architecture this was built for.
#[cfg(target_os = "linux")]
fn program(deny: Deny) -> Result<seccompiler::BpfProgram, SeccompError> {
    use seccompiler::{SeccompAction, SeccompFilter};
    let refused = refused_calls(deny)?;
    let filter = SeccompFilter::new(refused, SeccompAction::Allow, SeccompAction::Errno(EPERM), target_arch()?)?;
    let program: seccompiler::BpfProgram = filter.try_into()?;
    Ok(refuse_x32(program))
}

/// [`refused_calls`], for the tests.
#[cfg(all(test, target_os = "linux"))]
fn program_map(deny: Deny) -> std::collections::BTreeMap<i64, Vec<seccompiler::SeccompRule>> {
    refused_calls(deny).expect("rules")
}

/// The calls the filter for `deny` refuses, each with the rules that
/// refuse it (none: always).
#[cfg(target_os = "linux")]
fn refused_calls(deny: Deny) -> Result<std::collections::BTreeMap<i64, Vec<seccompiler::SeccompRule>>, SeccompError> {
    use seccompiler::{SeccompCmpOp, SeccompRule};
    use std::collections::BTreeMap;

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
    if deny.supervisor {
        refuse_also(&mut refused, supervisor_refused()?);
    }
    Ok(refused)
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

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use crate::sys::probe::{self, REFUSED, assert_seen};

    #[test]
    fn the_filter_builds_for_this_architecture() {
        assert!(
            !program(Deny { inet: true, unix: true, protect: None, supervisor: false }).expect("filter").is_empty()
        );
        assert!(
            !program(Deny { inet: false, unix: true, protect: Some(2), supervisor: true }).expect("filter").is_empty()
        );
        // The terminal's ioctls are refused even when no socket is.
        assert!(!program(Deny::default()).expect("filter").is_empty());
        assert!(!supervisor_program().expect("filter").is_empty());
    }

    /// One filter for the supervisor's thread and the command refuses what
    /// either would: a call always refused by one is always refused, and
    /// the rules of a call both refuse under rules are kept once each.
    #[test]
    fn the_supervisors_and_the_commands_refusals_are_one_filters() {
        use seccompiler::{SeccompCmpOp, SeccompRule};
        let rule = |v: u32| SeccompRule::new(vec![arg(0, SeccompCmpOp::Eq, v).expect("arg")]).expect("rule");
        let mut refused: std::collections::BTreeMap<i64, Vec<SeccompRule>> =
            [(1, vec![rule(7)]), (2, vec![rule(1)]), (3, Vec::new())].into_iter().collect();
        let more = [(1, Vec::new()), (2, vec![rule(1), rule(2)]), (3, vec![rule(5)]), (4, vec![rule(9)])];
        refuse_also(&mut refused, more.into_iter().collect());
        assert_eq!(refused[&1], Vec::new(), "always, where the other always refuses");
        assert_eq!(refused[&2], vec![rule(1), rule(2)], "either's rules, each once");
        assert_eq!(refused[&3], Vec::new(), "always, where this one always refuses");
        assert_eq!(refused[&4], vec![rule(9)], "what only the other refuses");
        let mut command = program_map(Deny { inet: false, unix: true, protect: Some(1), supervisor: false });
        refuse_also(&mut command, supervisor_refused().expect("rules"));
        assert_eq!(command, program_map(Deny { inet: false, unix: true, protect: Some(1), supervisor: true }));
        assert!(command[&libc::SYS_ptrace].is_empty() && command[&libc::SYS_pidfd_getfd].is_empty());
        assert_eq!(command[&libc::SYS_ioctl], terminal_rules().expect("rules"), "the terminal's rules once");
        assert!(!command[&libc::SYS_pidfd_open].is_empty(), "the command's own rule on the supervisor's pid");
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
}
