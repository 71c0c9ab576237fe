//! The supervisor: the process that confines one command. Its line is
//! one of two, each one JSON object:
//!
//! - `--request JSON` ([`Request`]): outside, it does what `retry-run
//!   sandbox` does ([`crate::launch::run`]): `run` starts it for each agent
//!   and check process ([`crate::supervisor::line::request_line`]);
//! - `--inner JSON` ([`Inner`]): inside the namespaces, where bubblewrap
//!   starts it in front of the command, it forwards 127.0.0.1 to the outer
//!   process's proxy, sets the limits, confines itself with Landlock, marks
//!   every descriptor it inherited close-on-exec, starts the command under
//!   seccomp, waits for it, and writes how it ended where the outer
//!   process reads it.
//!
//! It runs once or twice per confined process, so it is an executable of
//! its own, `retry-run-supervisor`, installed beside `retry-run`: it links
//! this crate alone, where starting `retry-run` itself again (a program
//! twenty times the size) cost about half a millisecond more per confined
//! process. Where it is missing (a `retry-run` copied alone, or built by
//! `cargo run`), `retry-run supervisor` serves the same lines.

use std::ffi::OsString;

use std::path::{Path, PathBuf};

use crate::launch::allowed::rules;
use crate::launch::log::open_log;
use crate::launch::start::{Ended, command, end_as, start_and_wait};
use crate::launch::{self, ExecError};

use crate::request::Request;
use line::{Inner, Line, read_line};

pub mod line;

use crate::sys::process;

use crate::{layers::landlock, layers::namespaces, layers::seccomp, proxy};

/// The supervisor's executable's run: SIGPIPE ignored (a closed pipe is an
/// error to handle), its line read from its arguments.
pub fn start() -> i32 {
    crate::sys::process::ignore_sigpipe();
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    main(&args)
}

/// The supervisor's whole run: `args` are the words after the program's
/// (see the module's doc). Returns the exit status: the command's, or an
/// error's, printed on stderr as `retry-run sandbox` prints it.
pub fn main(args: &[OsString]) -> i32 {
    match read_line(args) {
        Some(Line::Outer(request)) => ended(launch::run(&request)),
        Some(Line::Inner(inner)) => {
            // Given by the outer process, which made it; the directory as
            // the kernel names it, for Landlock's rules.
            let r = &inner.request;
            let tmpdir = r.tmpdir.clone().unwrap_or_else(std::env::temp_dir);
            let dir = std::fs::canonicalize(&r.dir).unwrap_or_else(|_| r.dir.clone());
            ended(supervise(&inner, &dir, &tmpdir))
        }
        None => refused(),
    }
}

/// A line neither `retry-run sandbox` nor `run` wrote: exit 2.
fn refused() -> i32 {
    crate::console::errln!(
        "retry-run: error: {} runs for `retry-run sandbox` and `retry-run run`, which write its line (`--request JSON` or `--inner JSON`); run `retry-run sandbox -- CMD...` instead",
        line::SUPERVISOR
    );
    launch::USAGE
}

/// The exit status: the command's, or an error's, printed as `retry-run
/// sandbox` prints it.
fn ended(result: Result<i32, ExecError>) -> i32 {
    match result {
        Ok(code) => code,
        Err(e) => {
            crate::console::errln!("retry-run: error: {e}");
            if let Some(hint) = e.hint() {
                crate::console::errln!("hint: {hint}");
            }
            e.exit_code()
        }
    }
}

/// Inside the namespaces: see the module's doc. `dir`: the directory it
/// may write beneath; `tmpdir`: the command's TMPDIR; `done`: the
/// descriptor to write a byte on once the command and all it left have
/// ended and the status is written (the outer process then ends without
/// waiting for the namespaces to come down).
fn supervise(inner: &Inner, dir: &Path, tmpdir: &Path) -> Result<i32, ExecError> {
    let (c, done) = (&inner.request, inner.done_fd);
    // Not dumpable: the command (the same user in the same namespaces)
    // can neither trace this process nor read or write its memory, its
    // descriptors or its /proc files.
    process::not_dumpable();
    let port = forwarders(c)?;
    // Where this process says how the command ended, opened before Landlock
    // (which then keeps the command from writing there).
    let run = Path::new(namespaces::RUN_DIR);
    if !c.network.host
        && !inner.refuse_ports.is_empty()
        && let Some(log) = open_log(&run.join("log"))
    {
        proxy::refuse_direct(&inner.refuse_ports, log);
    }
    // This process too: no tracing, no other process's memory, no
    // terminal input. The forwarding thread, if any, puts that filter on
    // itself first, before it serves anything, while this one goes on.
    let forwarding = proxy::start_inside(|| seccomp::supervisor_filter().and_then(|f| f.install()))
        .transpose()
        .map_err(ExecError::Proxy)?;
    let mut status = std::fs::File::create(run.join("status")).ok();
    let mut log = open_log(&run.join("log"));
    process::set_limits(&c.limits);
    // /tmp and /dev/shm are the namespace's own, empty and private.
    let private = ["/tmp", "/dev/shm"].map(PathBuf::from);
    let mut writable: Vec<PathBuf> =
        c.paths.writable.iter().map(PathBuf::from).chain([dir.to_path_buf()]).chain(private).collect();
    writable.sort();
    writable.dedup();
    let hidden: Vec<PathBuf> = c.paths.deny_read.iter().map(PathBuf::from).collect();
    if landlock::abi() > 0 {
        landlock::confine(&writable, &hidden)?;
    }
    process::close_inherited();
    let mut cmd = command(c, tmpdir, port);
    let me = std::process::id() as libc::pid_t;
    // This thread, which the command is started from and which it inherits
    // the filter of, gets the supervisor's filter and the command's as one:
    // what this thread does from here on (wait, end what is left, write the
    // status) it refuses nothing of. With no code to run between fork and
    // exec, the C library starts the command with vfork rather than
    // copying this process.
    let deny = seccomp::Deny { inet: false, unix: !c.network.unix_sockets, protect: Some(me), supervisor: true };
    seccomp::filter(deny)?.install()?;
    let ended = start_and_wait(&mut cmd, true, &c.argv[0], log.as_mut())?;
    // The forwarding thread confined itself before it served anything (it
    // has long since); had that failed, it served nothing, its listeners
    // closed: said now, in the place of the command's status.
    if let Some(confined) = forwarding {
        confined.recv().map_err(|_| ExecError::Proxy(std::io::Error::other("the forwarding thread ended")))??;
    }
    // Every process of the namespace but this one has ended and been
    // reaped (`start_and_wait` ends what the command left): said once the
    // status is written, and only then.
    if let Some(fd) = done.filter(|_| write_status(status.as_mut(), ended)) {
        process::say_done(fd);
    }
    Ok(end_as(false, ended))
}

/// Inside, with a network: the proxy's socket forwarded from a TCP port of
/// the namespace's loopback (returned: the command's proxy), and each
/// allowed host on the machine's loopback forwarded from the same port
/// inside, for clients that never use a proxy for them.
fn forwarders(c: &Request) -> Result<Option<u16>, ExecError> {
    let socket = PathBuf::from(namespaces::PROXY_SOCKET);
    if c.network.host || !socket.exists() {
        return Ok(None);
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(ExecError::Proxy)?;
    let port = listener.local_addr().map_err(ExecError::Proxy)?.port();
    proxy::forward(listener, socket.clone(), None).map_err(ExecError::Proxy)?;
    for target in rules(c)?.iter().filter_map(proxy::HostRule::loopback) {
        if let Ok(l) = std::net::TcpListener::bind(("127.0.0.1", target.port)) {
            proxy::forward(l, socket.clone(), Some(target)).map_err(ExecError::Proxy)?;
        }
    }
    Ok(Some(port))
}

/// How the command ended, written to the status file; whether it was.
fn write_status(status: Option<&mut std::fs::File>, ended: Ended) -> bool {
    let line = match ended {
        Ended::Code(n) => format!("exit {n}"),
        Ended::Signal(n) => format!("signal {n}"),
    };
    status.is_some_and(|f| {
        use std::io::Write as _;
        f.write_all(line.as_bytes()).is_ok()
    })
}
