//! The supervisor's lines: the words that start it, the request `run`
//! gives it (`--request JSON`) and the one the outer process gives it
//! inside the namespaces (`--inner JSON`), read back.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::request::Request;

/// The supervisor's executable name, beside `retry-run`
/// (`src/bin/retry-run-supervisor.rs`, [`crate::supervisor`]).
pub const SUPERVISOR: &str = "retry-run-supervisor";

/// The words that start the supervisor for a `retry-run` at `exe`: its own
/// executable beside it, or, where that is missing (a `retry-run` copied
/// alone, or built by `cargo run`), `retry-run supervisor`, the same
/// supervisor served by `retry-run` itself.
pub fn supervisor_for(exe: &Path) -> Vec<String> {
    match supervisor_beside(exe) {
        Some(own) => vec![own.display().to_string()],
        None => vec![exe.display().to_string(), "supervisor".into()],
    }
}

/// The supervisor's executable beside `retry-run` at `exe`, when it is
/// installed there.
pub fn supervisor_beside(exe: &Path) -> Option<PathBuf> {
    let own = exe.with_file_name(SUPERVISOR);
    own.is_file().then_some(own)
}

/// The line that has the supervisor (`supervisor`: the words that start
/// it, [`supervisor_for`]) run `c`: `... --request JSON`, what `run`
/// starts for each agent and check process. Pure.
pub fn request_line(supervisor: &[String], c: &Request) -> Vec<String> {
    let mut argv = supervisor.to_vec();
    argv.extend(["--request".to_string(), c.to_json()]);
    argv
}

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
        let outer = request_line(&["/bin/retry-run".into(), "supervisor".into()], &request);
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
