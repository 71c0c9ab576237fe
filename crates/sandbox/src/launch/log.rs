//! The sandbox's log: the limits a command hit, appended beside the
//! proxy's connections.

use std::path::Path;

use super::start::Ended;
use crate::layers::limits;
use crate::request::Request;

/// Appends to the sandbox's log the limits the command hit: the process
/// limit (as often as its cgroup refused a process) and the file size
/// limit (it ended by `SIGXFSZ`).
pub(crate) fn log_limits(c: &Request, cgroup: Option<&limits::PidsCgroup>, ended: Option<Ended>) {
    let Some(log) = &c.log else { return };
    let mut lines = String::new();
    if let Some(refused) = cgroup.map(limits::PidsCgroup::refused).filter(|n| *n > 0) {
        lines +=
            &format!("{}\n", serde_json::json!({"limit": "processes", "max": c.limits.processes, "refused": refused}));
    }
    if ended == Some(Ended::Signal(libc::SIGXFSZ)) {
        lines += &format!("{}\n", serde_json::json!({"limit": "file_size", "max": c.limits.file_size}));
    }
    if !lines.is_empty() {
        append(log, lines.trim_end());
    }
}

/// `log` opened to append (quietly: the log is a record, not a reason to
/// fail the command).
pub(crate) fn open_log(log: &Path) -> Option<std::fs::File> {
    std::fs::OpenOptions::new().create(true).append(true).open(log).ok()
}

/// Appends `line` and a newline to `log` (quietly: the log is a record,
/// not a reason to fail the command).
pub(crate) fn append(log: &Path, line: &str) {
    use std::io::Write as _;
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(log) {
        let _ = writeln!(f, "{line}");
    }
}
