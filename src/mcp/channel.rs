//! How the MCP server inside the agent's sandbox reaches the run outside
//! it: files in a directory of the attempt's private TMPDIR (the only
//! place both sides can write; no socket crosses the sandbox). The server
//! writes a request `<id>.req` (by rename, so it is never seen half
//! written); the run takes it, answers with `<id>.res` (also by rename),
//! and the server reads and removes that.
//!
//! The directory is the agent's to write: the run reads and writes it only
//! through a descriptor opened when it made the directory, never follows a
//! link in it, and reads no request larger than [`MAX_REQUEST`]. What a
//! request says is read as untrusted input ([`super::tools::parse`]).

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rustix::fs::{AtFlags, Dir, FileType, Mode, OFlags};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The largest request read; a call's arguments are a few names.
pub(crate) const MAX_REQUEST: u64 = 64 * 1024;
/// How often each side looks for the other's file.
const POLL: Duration = Duration::from_millis(20);

/// A tool call as the server sends it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct ToolCall {
    pub tool: String,
    #[serde(default)]
    pub arguments: Value,
}

/// The run's answer: the text the agent reads, and whether the call failed
/// (a tool error the agent sees, not a protocol error).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Answer {
    pub text: String,
    #[serde(default)]
    pub is_error: bool,
}

impl Answer {
    pub(crate) fn error(text: impl Into<String>) -> Answer {
        Answer { text: text.into(), is_error: true }
    }
}

/// A request's id: letters, digits and `-` only, at most 64 bytes.
pub(crate) fn valid_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// Why a call got no answer from the run.
#[derive(Debug, thiserror::Error)]
pub(crate) enum AskError {
    #[error("cannot encode the call: {0}")]
    Encode(serde_json::Error),
    #[error("{}: cannot send the call to retry-run: {source}", dir.display())]
    Send { dir: PathBuf, source: std::io::Error },
    #[error("{}: unreadable answer: {source}", path.display())]
    Unreadable { path: PathBuf, source: serde_json::Error },
    #[error("{}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("retry-run no longer answers: the attempt's agent has ended")]
    Gone,
}

/// The server's side: sends `request` through `dir` and waits for the
/// answer, for as long as the directory exists.
pub(crate) fn ask(dir: &Path, request: &ToolCall) -> Result<Answer, AskError> {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let id = format!("{}-{}-{nanos}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    let bytes = serde_json::to_vec(request).map_err(AskError::Encode)?;
    let tmp = dir.join(format!("{id}.tmp"));
    std::fs::write(&tmp, &bytes)
        .and_then(|()| std::fs::rename(&tmp, dir.join(format!("{id}.req"))))
        .map_err(|source| AskError::Send { dir: dir.to_path_buf(), source })?;
    let res = dir.join(format!("{id}.res"));
    let started = Instant::now();
    loop {
        match std::fs::read(&res) {
            Ok(b) => {
                let _ = std::fs::remove_file(&res);
                return serde_json::from_slice(&b).map_err(|source| AskError::Unreadable { path: res, source });
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(AskError::Read { path: res, source }),
        }
        if !dir.is_dir() {
            return Err(AskError::Gone);
        }
        // Quick answers (`task`) come back in a few milliseconds; checks
        // take seconds, where a slower look costs nothing.
        std::thread::sleep(if started.elapsed() < Duration::from_secs(1) { POLL / 4 } else { POLL });
    }
}

/// The run's side: the directory, held open.
pub(crate) struct Desk {
    dir: OwnedFd,
}

/// A request taken from the directory: its id, and the call or why it
/// cannot be read.
#[derive(Debug)]
pub(crate) struct TakenCall {
    pub id: String,
    pub request: Result<ToolCall, TakeError>,
}

/// Why a request taken from the directory cannot be read (the agent is
/// answered with it).
#[derive(Debug, thiserror::Error)]
pub(crate) enum TakeError {
    #[error("{name}: {source}")]
    Open { name: String, source: rustix::io::Errno },
    #[error("{name}: not a regular file")]
    NotAFile { name: String },
    #[error("{name}: {source}")]
    Read { name: String, source: std::io::Error },
    #[error("the call is larger than {MAX_REQUEST} bytes")]
    TooLarge,
    #[error("the call is not a request: {source}")]
    NotARequest { source: serde_json::Error },
}

impl Desk {
    /// Makes `path` (a new, private directory) and holds it open.
    pub(crate) fn make(path: &Path) -> std::io::Result<Desk> {
        let _ = std::fs::remove_dir_all(path);
        std::fs::DirBuilder::new().mode(0o700).create(path)?;
        let dir = rustix::fs::open(path, OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC, Mode::empty())?;
        Ok(Desk { dir })
    }

    /// The requests that arrived since the last look, each removed.
    pub(crate) fn take(&self) -> Vec<TakenCall> {
        let mut names = Vec::new();
        let Ok(fd) = rustix::fs::openat(&self.dir, ".", OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty()) else {
            return Vec::new();
        };
        let Ok(mut entries) = Dir::new(fd) else { return Vec::new() };
        for e in entries.by_ref().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(id) = name.strip_suffix(".req") {
                names.push((id.to_string(), name.clone()));
            }
        }
        names.sort();
        names
            .into_iter()
            .map(|(id, name)| {
                let read = self.read(&name);
                let _ = rustix::fs::unlinkat(&self.dir, name.as_str(), AtFlags::empty());
                let request = read.and_then(|b| {
                    serde_json::from_slice::<ToolCall>(&b).map_err(|source| TakeError::NotARequest { source })
                });
                TakenCall { id, request }
            })
            .collect()
    }

    fn read(&self, name: &str) -> Result<Vec<u8>, TakeError> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let open = |source| TakeError::Open { name: name.to_string(), source };
        let fd = rustix::fs::openat(&self.dir, name, flags, Mode::empty()).map_err(open)?;
        let st = rustix::fs::fstat(&fd).map_err(open)?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
            return Err(TakeError::NotAFile { name: name.to_string() });
        }
        let mut bytes = Vec::new();
        std::fs::File::from(fd)
            .take(MAX_REQUEST + 1)
            .read_to_end(&mut bytes)
            .map_err(|source| TakeError::Read { name: name.to_string(), source })?;
        if bytes.len() as u64 > MAX_REQUEST {
            return Err(TakeError::TooLarge);
        }
        Ok(bytes)
    }

    /// Answers request `id` (a [`valid_id`]).
    pub(crate) fn answer(&self, id: &str, answer: &Answer) -> std::io::Result<()> {
        if !valid_id(id) {
            return Err(std::io::Error::other(format!("{id:?} is not a request id")));
        }
        let tmp = format!("{id}.res-tmp");
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let _ = rustix::fs::unlinkat(&self.dir, tmp.as_str(), AtFlags::empty());
        let fd = rustix::fs::openat(&self.dir, tmp.as_str(), flags, Mode::from_raw_mode(0o600))?;
        std::fs::File::from(fd).write_all(&serde_json::to_vec(answer).unwrap_or_default())?;
        rustix::fs::renameat(&self.dir, tmp.as_str(), &self.dir, format!("{id}.res").as_str())?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_goes_through_and_comes_back() {
        let t = tempfile::tempdir().expect("tmp");
        let path = t.path().join("mcp");
        let desk = Desk::make(&path).expect("desk");
        let asker =
            std::thread::spawn(move || ask(&path, &ToolCall { tool: "task".into(), arguments: serde_json::json!({}) }));
        let TakenCall { id, request: req } = loop {
            if let Some(t) = desk.take().pop() {
                break t;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        assert_eq!(req.expect("request").tool, "task");
        desk.answer(&id, &Answer { text: "the task".into(), is_error: false }).expect("answer");
        let got = asker.join().expect("thread").expect("answer");
        assert_eq!(got.text, "the task");
        assert!(desk.take().is_empty());
    }

    #[test]
    fn what_is_not_a_request_is_refused_and_links_are_not_followed() {
        let t = tempfile::tempdir().expect("tmp");
        let at = t.path().join("mcp");
        let desk = Desk::make(&at).expect("desk");
        let secret = t.path().join("secret");
        std::fs::write(&secret, "{\"tool\":\"task\"}").expect("write");
        std::os::unix::fs::symlink(&secret, at.join("a.req")).expect("link");
        std::fs::write(at.join("b.req"), "not json").expect("write");
        std::fs::write(at.join("c.req"), vec![b' '; MAX_REQUEST as usize + 10]).expect("write");
        let taken = desk.take();
        assert_eq!(taken.len(), 3);
        let why: Vec<_> = taken.iter().map(|t| t.request.as_ref().map(|r| r.tool.clone())).collect();
        assert!(matches!(why[0], Err(TakeError::Open { .. })), "{taken:?}");
        assert!(matches!(why[1], Err(TakeError::NotARequest { .. })), "{taken:?}");
        assert!(matches!(why[2], Err(TakeError::TooLarge)), "{taken:?}");
        assert!(desk.answer("../x", &Answer::error("no")).is_err());
        // The directory replaced by a link: the desk still writes in the one it made.
        let moved = t.path().join("moved");
        std::fs::rename(&at, &moved).expect("rename");
        std::os::unix::fs::symlink(t.path(), &at).expect("link");
        desk.answer("x-1", &Answer::error("no")).expect("answer");
        assert!(moved.join("x-1.res").exists());
        assert!(!t.path().join("x-1.res").exists());
    }
}
