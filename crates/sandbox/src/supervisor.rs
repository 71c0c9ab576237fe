//! The inner supervisor: the process bubblewrap starts inside the
//! namespaces, in front of the command. It forwards 127.0.0.1 to the
//! outer process's proxy, sets the limits, confines itself with Landlock,
//! marks every descriptor it inherited close-on-exec, starts the command
//! under seccomp, waits for it, and writes how it ended where the outer
//! process ([`super::exec`]) reads it.
//!
//! It runs once per confined process, so it is an executable of its own,
//! `retry-run-supervisor` (`src/bin/retry-run-supervisor.rs`), installed
//! beside `retry-run`: a few megabytes that link only this layer, where
//! starting `retry-run` itself again (a program twenty times the size, with
//! 24,000 relocations to apply) cost about half a millisecond more per
//! confined process. Where it is missing (a `retry-run` copied alone),
//! `retry-run sandbox --inner` does the same.
//!
//! Its line is `--inner LINE -- CMD...`: [`InnerLine`], one JSON object the
//! outer process writes, then the command.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::exec::{self, Confined, Ended, ExecError, InnerLine};
use super::{Layers, landlock, namespaces, proxy, seccomp};

/// `--inner LINE -- CMD...` read into what confines the command in `dir`
/// and the descriptor to say on that it is done, or `None` when it is not
/// a line the outer process wrote. Pure.
pub fn read_line(args: &[OsString], dir: PathBuf) -> Option<(Confined, Option<i32>)> {
    let [flag, line, dashes, command @ ..] = args else {
        return None;
    };
    if flag != "--inner" || dashes != "--" || command.is_empty() {
        return None;
    }
    let line = InnerLine::parse(line.to_str()?).ok()?;
    let argv = command.iter().map(|a| a.to_str().map(str::to_string)).collect::<Option<Vec<_>>>()?;
    // Not one of the standard three, which the command gets.
    let done = line.done_fd.filter(|fd| *fd > 2);
    let confined = Confined {
        layers: Layers::Namespaces,
        dir,
        writable: line.writable,
        deny_read: line.deny_read,
        network: line.network,
        host_network: line.host_network,
        unix_sockets: line.unix_sockets,
        limits: line.limits,
        tmpdir: Some(PathBuf::from(line.tmpdir)),
        refuse_ports: line.refuse_ports,
        argv,
        ..Confined::default()
    };
    Some((confined, done))
}

/// `--outer LINE -- CMD...` (what `run` starts for each agent and check
/// process, [`exec::outer_argv`]) read into what confines the command in
/// `dir`, or `None` when it is not a line `run` wrote. Pure.
pub fn read_outer(args: &[OsString], dir: PathBuf) -> Option<Confined> {
    let [flag, line, dashes, command @ ..] = args else {
        return None;
    };
    if flag != "--outer" || dashes != "--" || command.is_empty() {
        return None;
    }
    let mut c: Confined = serde_json::from_str(line.to_str()?).ok()?;
    c.argv = command.iter().map(|a| a.to_str().map(str::to_string)).collect::<Option<Vec<_>>>()?;
    c.dir = dir;
    Some(c)
}

/// The supervisor's whole run: `args` are the words after the program's
/// (`--inner LINE -- CMD...` inside the namespaces, `--outer LINE --
/// CMD...` in `run`'s place of `retry-run sandbox`). Returns the exit
/// status: the command's, or an error's, printed on stderr as `retry-run
/// sandbox` prints it.
pub fn main(args: &[OsString]) -> i32 {
    let dir = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => {
            crate::console::errln!("retry-run: error: cannot read the current directory: {e}");
            return exec::ENVIRONMENT;
        }
    };
    if args.first().is_some_and(|a| a == "--outer") {
        let Some(confined) = read_outer(args, dir) else {
            return refused();
        };
        return ended(exec::run(&confined));
    }
    let Some((confined, done)) = read_line(args, dir) else {
        return refused();
    };
    // Given by the outer process, which made it; the directory as the
    // kernel names it, for Landlock's rules.
    let tmpdir = confined.tmpdir.clone().unwrap_or_else(std::env::temp_dir);
    let dir = std::fs::canonicalize(&confined.dir).unwrap_or_else(|_| confined.dir.clone());
    ended(supervise(&confined, &dir, &tmpdir, done))
}

/// A line neither `retry-run sandbox` nor `run` wrote: exit 2.
fn refused() -> i32 {
    crate::console::errln!(
        "retry-run: error: {} runs for `retry-run sandbox` and `retry-run run`, which write its line (`--inner` or `--outer LINE -- CMD...`); run `retry-run sandbox -- CMD...` instead",
        exec::SUPERVISOR
    );
    exec::USAGE
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
pub(super) fn supervise(c: &Confined, dir: &Path, tmpdir: &Path, done: Option<i32>) -> Result<i32, ExecError> {
    // Not dumpable: the command (the same user in the same namespaces)
    // can neither trace this process nor read or write its memory, its
    // descriptors or its /proc files.
    exec::not_dumpable();
    let port = forwarders(c)?;
    // Where this process says how the command ended, opened before Landlock
    // (which then keeps the command from writing there).
    let run = Path::new(namespaces::RUN_DIR);
    if !c.host_network
        && !c.refuse_ports.is_empty()
        && let Some(log) = exec::open_log(&run.join("log"))
    {
        proxy::refuse_direct(&c.refuse_ports, log);
    }
    // This process too: no tracing, no other process's memory, no
    // terminal input. The forwarding thread, if any, puts that filter on
    // itself first, before it serves anything, while this one goes on.
    let forwarding = proxy::start_inside(|| seccomp::supervisor_filter().and_then(|f| f.install()))
        .transpose()
        .map_err(ExecError::Proxy)?;
    let mut status = std::fs::File::create(run.join("status")).ok();
    let mut log = exec::open_log(&run.join("log"));
    exec::set_limits(&c.limits);
    // /tmp and /dev/shm are the namespace's own, empty and private.
    let private = ["/tmp", "/dev/shm"].map(PathBuf::from);
    let mut writable: Vec<PathBuf> =
        c.writable.iter().map(PathBuf::from).chain([dir.to_path_buf()]).chain(private).collect();
    writable.sort();
    writable.dedup();
    let hidden: Vec<PathBuf> = c.deny_read.iter().map(PathBuf::from).collect();
    if landlock::abi() > 0 {
        landlock::confine(&writable, &hidden)?;
    }
    exec::close_inherited();
    let mut cmd = exec::command(c, tmpdir, port);
    let me = std::process::id() as libc::pid_t;
    // This thread, which the command is started from and which it inherits
    // the filter of, gets the supervisor's filter and the command's as one:
    // what this thread does from here on (wait, end what is left, write the
    // status) it refuses nothing of. With no code to run between fork and
    // exec, the C library starts the command with vfork rather than
    // copying this process.
    let deny = seccomp::Deny { inet: false, unix: !c.unix_sockets, protect: Some(me), supervisor: true };
    seccomp::filter(deny)?.install()?;
    let ended = exec::start_and_wait(&mut cmd, true, &c.argv[0], log.as_mut())?;
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
        exec::say_done(fd);
    }
    Ok(exec::end_as(false, ended))
}

/// Inside, with a network: the proxy's socket forwarded from a TCP port of
/// the namespace's loopback (returned: the command's proxy), and each
/// allowed host on the machine's loopback forwarded from the same port
/// inside, for clients that never use a proxy for them.
fn forwarders(c: &Confined) -> Result<Option<u16>, ExecError> {
    let socket = PathBuf::from(namespaces::PROXY_SOCKET);
    if c.host_network || !socket.exists() {
        return Ok(None);
    }
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(ExecError::Proxy)?;
    let port = listener.local_addr().map_err(ExecError::Proxy)?.port();
    proxy::forward(listener, socket.clone(), None).map_err(ExecError::Proxy)?;
    for target in exec::rules(c)?.iter().filter_map(proxy::HostRule::loopback) {
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
    use crate::Limits;

    fn words(w: &[&str]) -> Vec<OsString> {
        w.iter().map(Into::into).collect()
    }

    /// The supervisor's line is what the outer process wrote, read back
    /// whole; anything else is refused.
    #[test]
    fn the_line_is_read_back_as_the_outer_process_wrote_it() {
        let written = InnerLine {
            tmpdir: "/tmp/t".into(),
            writable: vec!["/w".into(), "/tmp/t".into()],
            deny_read: vec!["/root/.ssh".into()],
            network: vec!["pypi.org".into()],
            limits: Limits { processes: 9, file_size: 4096 },
            host_network: false,
            unix_sockets: true,
            refuse_ports: vec![5432],
            done_fd: Some(7),
        };
        let json = serde_json::to_string(&written).expect("serialised");
        assert_eq!(InnerLine::parse(&json).expect("read"), written);
        let (c, done) = read_line(&words(&["--inner", &json, "--", "sh", "-c", "--help"]), "/w".into()).expect("read");
        assert_eq!(done, Some(7));
        for standard in [0, 1, 2] {
            let line = serde_json::to_string(&InnerLine { done_fd: Some(standard), ..written.clone() }).expect("json");
            let (_, done) = read_line(&words(&["--inner", &line, "--", "true"]), "/w".into()).expect("read");
            assert_eq!(done, None, "the command's own descriptor {standard} is never written to");
        }
        assert!(c.layers == Layers::Namespaces && c.tmpdir.as_deref() == Some(Path::new("/tmp/t")));
        assert!(c.writable == written.writable && c.deny_read == written.deny_read && c.network == written.network);
        assert!(c.limits == written.limits && c.unix_sockets && !c.host_network && !c.reap);
        assert!(c.refuse_ports == [5432] && c.argv == ["sh", "-c", "--help"] && c.dir == Path::new("/w"));
        for refused in [
            &["--inner", "{}", "--", "true"][..],
            &["--inner", &json, "true"],
            &["--inner", &json, "--"],
            &["--inner", "not json", "--", "true"],
            &["--outer", &json, "--", "true"],
            &[],
        ] {
            assert!(read_line(&words(refused), "/w".into()).is_none(), "{refused:?} is refused");
        }
    }
}
