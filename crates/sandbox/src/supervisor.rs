//! The supervisor: the process that confines one command. Its line is
//! one of two, each one JSON object:
//!
//! - `--request JSON` ([`Request`]): outside, it does what `retry-run
//!   sandbox` does ([`crate::launch::run`]): `run` starts it for each agent
//!   and check process ([`crate::launch::line`]);
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

use crate::launch::{self, Ended, ExecError};
use crate::request::Request;
use crate::sys::process;
use crate::{layers::landlock, layers::namespaces, layers::seccomp, proxy};

/// What the outer process asks of the supervisor inside the namespaces:
/// the request with its paths resolved (`paths.writable` and
/// `paths.deny_read` as the kernel names them, the whole list), its
/// TMPDIR, the loopback ports a direct connection to is recorded as
/// refused, and the descriptor to say on, with one byte, that the command
/// and all it left have ended and the status is written.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Inner {
    pub request: Request,
    pub refuse_ports: Vec<u16>,
    pub done_fd: Option<i32>,
}

/// The line that starts the supervisor (`supervisor`: the words that start
/// it) inside with `inner`, saying it is done on `done_fd`. Pure.
pub fn inner_line(supervisor: &[String], inner: Inner, done_fd: i32) -> Vec<String> {
    let inner = Inner { done_fd: Some(done_fd), ..inner };
    let mut argv = supervisor.to_vec();
    // Strings, numbers, booleans and enums: serialising cannot fail.
    argv.extend(["--inner".to_string(), serde_json::to_string(&inner).unwrap_or_default()]);
    argv
}

/// The supervisor's line, read.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// `--request JSON`.
    Outer(Request),
    /// `--inner JSON`, its done descriptor one of the command's own three
    /// dropped.
    Inner(Inner),
}

/// `args` (the words after the program's) read, or `None` when they are
/// not a line `run`, `retry-run sandbox` or the outer process wrote. Pure.
pub fn read_line(args: &[OsString]) -> Option<Line> {
    let [flag, json] = args else {
        return None;
    };
    let json = json.to_str()?;
    let line = match flag.to_str()? {
        "--request" => Line::Outer(Request::from_json(json).ok()?),
        "--inner" => {
            let mut inner: Inner = serde_json::from_str(json).ok()?;
            // Not one of the standard three, which the command gets.
            inner.done_fd = inner.done_fd.filter(|fd| *fd > 2);
            Line::Inner(inner)
        }
        _ => return None,
    };
    let argv = match &line {
        Line::Outer(r) => &r.argv,
        Line::Inner(i) => &i.request.argv,
    };
    (!argv.is_empty()).then_some(line)
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
        launch::SUPERVISOR
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
        && let Some(log) = launch::open_log(&run.join("log"))
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
    let mut log = launch::open_log(&run.join("log"));
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
    let mut cmd = launch::command(c, tmpdir, port);
    let me = std::process::id() as libc::pid_t;
    // This thread, which the command is started from and which it inherits
    // the filter of, gets the supervisor's filter and the command's as one:
    // what this thread does from here on (wait, end what is left, write the
    // status) it refuses nothing of. With no code to run between fork and
    // exec, the C library starts the command with vfork rather than
    // copying this process.
    let deny = seccomp::Deny { inet: false, unix: !c.network.unix_sockets, protect: Some(me), supervisor: true };
    seccomp::filter(deny)?.install()?;
    let ended = launch::start_and_wait(&mut cmd, true, &c.argv[0], log.as_mut())?;
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
    Ok(launch::end_as(false, ended))
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
    for target in launch::rules(c)?.iter().filter_map(proxy::HostRule::loopback) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Layers, Limits};

    fn words(w: &[&str]) -> Vec<OsString> {
        w.iter().map(Into::into).collect()
    }

    /// The supervisor's line is what `run` or the outer process wrote,
    /// read back whole; anything else is refused.
    #[test]
    fn the_line_is_read_back_as_it_was_written() {
        let mut request =
            Request::new(vec!["sh".into(), "-c".into(), "--help".into()], "/w".into(), Layers::Namespaces);
        request.paths.writable = vec!["/w".into(), "/tmp/t".into()];
        request.paths.deny_read = vec!["/root/.ssh".into()];
        request.network.hosts = vec!["pypi.org".into()];
        request.limits = Limits { processes: 9, file_size: 4096 };
        request.tmpdir = Some("/tmp/t".into());
        let written = Inner { request: request.clone(), refuse_ports: vec![5432], done_fd: None };
        let line = inner_line(&["/bin/retry-run-supervisor".into()], written.clone(), 7);
        assert_eq!(line[..2], ["/bin/retry-run-supervisor", "--inner"]);
        let read = read_line(&words(&[&line[1], &line[2]])).expect("read");
        assert_eq!(read, Line::Inner(Inner { done_fd: Some(7), ..written.clone() }));
        for standard in [0, 1, 2] {
            let line = inner_line(&["s".into()], written.clone(), standard);
            let Some(Line::Inner(read)) = read_line(&words(&[&line[1], &line[2]])) else { panic!("read") };
            assert_eq!(read.done_fd, None, "the command's own descriptor {standard} is never written to");
        }
        let outer = launch::line(&["/bin/retry-run".into(), "supervisor".into()], &request);
        assert_eq!(outer[..3], ["/bin/retry-run", "supervisor", "--request"]);
        assert_eq!(read_line(&words(&[&outer[2], &outer[3]])), Some(Line::Outer(request.clone())));
        let inner_json = line[2].clone();
        let no_command = Request::new(Vec::new(), "/w".into(), Layers::Landlock).to_json();
        for refused in [
            &["--inner", "{}"][..],
            &["--request", &inner_json],
            &["--inner", &outer[3]],
            &["--request", &no_command],
            &["--inner", &inner_json, "--", "true"],
            &["--outer", &outer[3]],
            &["--request", "not json"],
            &[],
        ] {
            assert!(read_line(&words(refused)).is_none(), "{refused:?} is refused");
        }
    }
}
