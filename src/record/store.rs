//! The record on disk (docs/record.md): `<git-common-dir>/retry-run/`
//! with `tasks/<task>/events.jsonl`, `tasks/<task>/attempts/<n>/` and the
//! task lock. Appends are written whole, flushed and fsynced.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::chain::{self, Verified, encode};
use super::layout::{AttemptDir, TaskDir};
use crate::hash::sha256_hex;

/// A failure of the record, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error(
        "task name {task:?}: use letters, digits, `.`, `_` and `-` (not starting with `.`or `-`), at most 100 characters"
    )]
    BadTaskName { task: String },
    #[error("task {task} is being run by process {pid} (lock {}); wait for it or stop it", lock.display())]
    Locked { task: String, pid: String, lock: PathBuf },
    #[error("no task {task:?} in {}; `retry-run status` lists the tasks", dir.display())]
    NoTask { task: String, dir: PathBuf },
    #[error("{}: not a regular file; an event log is a plain file: move this aside and restore the log", path.display())]
    NotAFile { path: PathBuf },
    #[error("cannot encode {}: {message}", path.display())]
    Encode { path: PathBuf, message: String },
}

impl RecordError {
    /// True for bad names (exit 2); false for environment failures (exit 3).
    pub fn is_usage(&self) -> bool {
        matches!(self, RecordError::BadTaskName { .. } | RecordError::NoTask { .. })
    }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> RecordError + '_ {
    move |source| RecordError::Io { path: path.to_path_buf(), source }
}

/// Checks a task name: it becomes a directory and part of a ref name.
pub(crate) fn check_task_name(task: &str) -> Result<(), RecordError> {
    let ok = !task.is_empty()
        && task.len() <= 100
        && !task.starts_with(['.', '-'])
        && !task.ends_with(".lock")
        && !task.contains("..")
        && task.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok { Ok(()) } else { Err(RecordError::BadTaskName { task: task.to_string() }) }
}

/// A record's name: a task's ([`check_task_name`]), or one of its lanes'
/// (`<task>/lanes/<n>`, `run --lanes`).
pub(crate) fn check_record_id(id: &str) -> Result<(), RecordError> {
    match crate::model::refs::parse_lane(id) {
        Some(lane) => check_task_name(lane.task),
        None => check_task_name(id),
    }
}

/// `<git-common-dir>/retry-run`.
#[derive(Debug, Clone)]
pub struct Store {
    pub root: PathBuf,
}

impl Store {
    pub fn new(common_dir: &Path) -> Store {
        Store { root: common_dir.join("retry-run") }
    }

    /// `tasks/`: the records of all tasks.
    fn tasks_dir(&self) -> PathBuf {
        self.root.join("tasks")
    }

    /// `tasks/<task>/`: a task's record, its files named by [`TaskDir`].
    pub fn task(&self, task: &str) -> TaskDir {
        TaskDir::new(self.tasks_dir().join(task))
    }

    /// `tasks/<task>/attempts/<n>/`: an attempt's files, named by [`AttemptDir`].
    pub fn attempt(&self, task: &str, attempt: u32) -> AttemptDir {
        self.task(task).attempt(attempt)
    }

    /// Every task with a record, sorted.
    pub fn tasks(&self) -> Result<Vec<String>, RecordError> {
        let dir = self.tasks_dir();
        let Ok(rd) = std::fs::read_dir(&dir) else { return Ok(Vec::new()) };
        let mut out: Vec<String> = rd
            .filter_map(Result::ok)
            .filter(|e| e.path().is_dir())
            .filter_map(|e| e.file_name().into_string().ok())
            .filter(|n| check_task_name(n).is_ok())
            .collect();
        out.sort();
        Ok(out)
    }

    /// Every task with a record here or a worktree under `worktrees` (a
    /// directory named after it), sorted.
    pub fn known_tasks(&self, worktrees: &Path) -> Result<Vec<String>, RecordError> {
        let mut tasks = self.tasks()?;
        if let Ok(rd) = std::fs::read_dir(worktrees) {
            tasks.extend(rd.flatten().filter_map(|e| e.file_name().into_string().ok()));
        }
        tasks.retain(|t| check_task_name(t).is_ok());
        tasks.sort();
        tasks.dedup();
        Ok(tasks)
    }

    /// Reads and verifies a task's log.
    pub fn read(&self, task: &str) -> Result<Verified, RecordError> {
        let dir = self.task(task);
        let path = dir.events();
        let read = || -> std::io::Result<Option<Vec<u8>>> {
            let mut file = File::open(&path)?;
            if !file.metadata()?.is_file() {
                return Ok(None);
            }
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes)?;
            Ok(Some(bytes))
        };
        match read() {
            Ok(Some(bytes)) => Ok(chain::verify(&bytes)),
            Ok(None) => Err(RecordError::NotAFile { path }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if dir.path().is_dir() {
                    Ok(chain::verify(b""))
                } else {
                    Err(RecordError::NoTask { task: task.to_string(), dir: self.tasks_dir() })
                }
            }
            Err(e) => Err(io(&path)(e)),
        }
    }

    /// Opens a task's log for appending (creating the task's directory).
    pub fn log(&self, task: &str) -> Result<EventLog, RecordError> {
        check_record_id(task)?;
        let dir = self.task(task);
        std::fs::create_dir_all(dir.path()).map_err(io(dir.path()))?;
        EventLog::open(&dir.events())
    }

    /// Takes the task's lock: one `run` per task at a time. The lock is an
    /// OS file lock, released when the process dies, so a killed run leaves
    /// no stale lock.
    pub fn lock(&self, task: &str) -> Result<TaskLock, RecordError> {
        check_record_id(task)?;
        let dir = self.task(task);
        std::fs::create_dir_all(dir.path()).map_err(io(dir.path()))?;
        let path = dir.lock();
        let mut file =
            OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path).map_err(io(&path))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(RecordError::Locked { task: task.to_string(), pid: holder(&mut file), lock: path });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(io(&path)(e)),
        }
        file.set_len(0).map_err(io(&path))?;
        file.write_all(format!("{}\n", std::process::id()).as_bytes()).map_err(io(&path))?;
        Ok(TaskLock { _file: file })
    }
}

impl Store {
    /// The PID of the process running `task`, if one holds its lock.
    /// Reads only: it neither creates nor writes the lock file.
    pub fn running(&self, task: &str) -> Option<String> {
        let path = self.task(task).lock();
        let mut file = File::open(&path).ok()?;
        match file.try_lock_shared() {
            Err(std::fs::TryLockError::WouldBlock) => Some(holder(&mut file)),
            _ => None,
        }
    }
}

/// The PID the lock's holder wrote into the lock file.
fn holder(file: &mut File) -> String {
    let mut pid = String::new();
    let _ = file.read_to_string(&mut pid);
    if pid.trim().is_empty() { "unknown".to_string() } else { pid.trim().to_string() }
}

/// Held while a task runs; dropping it (or dying) releases the lock.
pub struct TaskLock {
    _file: File,
}

/// An open event log, positioned for appending.
pub struct EventLog {
    path: PathBuf,
    file: File,
    last_seq: u64,
    prev: String,
    lines: usize,
    /// The bytes of its last line, its newline included (0: none).
    tail_len: u64,
    /// The log as retry-run's last write left it, once it is watched for
    /// writes of others ([`EventLog::watch_foreign`]).
    left: Option<Left>,
    /// What others wrote to it, found since [`EventLog::take_foreign`].
    foreign: Vec<ForeignWrite>,
}

/// The log's file as retry-run's last write left it: its inode, its
/// length and its status-change time (which no process can set back).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Left {
    ino: u64,
    len: u64,
    ctime: (i64, i64),
}

impl Left {
    fn of(m: &std::fs::Metadata) -> Left {
        use std::os::unix::fs::MetadataExt;
        Left { ino: m.ino(), len: m.len(), ctime: (m.ctime(), m.ctime_nsec()) }
    }
}

/// A write to an event log that retry-run did not make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForeignWrite {
    /// What was done to it (`2 lines appended that retry-run did not write`).
    pub what: String,
    /// Whether the log was put back as retry-run had written it.
    pub put_back: bool,
}

impl EventLog {
    fn open(path: &Path) -> Result<EventLog, RecordError> {
        let mut file = OpenOptions::new().read(true).append(true).create(true).open(path).map_err(io(path))?;
        // A device or fifo here (a link to /dev/full reads zeros forever)
        // would never end a read.
        if !file.metadata().map_err(io(path))?.is_file() {
            return Err(RecordError::NotAFile { path: path.to_path_buf() });
        }
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes).map_err(io(path))?;
        let t = chain::tail(&bytes);
        let body = bytes.strip_suffix(b"\n").unwrap_or(&bytes);
        let tail_len = match body.iter().rposition(|&b| b == b'\n') {
            _ if t.lines == 0 || t.torn.is_some() => 0,
            Some(i) => (body.len() - i) as u64,
            None => body.len() as u64 + 1,
        };
        let mut log = EventLog {
            path: path.to_path_buf(),
            file,
            last_seq: t.last_seq,
            prev: t.prev,
            lines: t.lines,
            tail_len,
            left: None,
            foreign: Vec::new(),
        };
        if let Some(torn) = t.torn {
            // End the torn line, then record it: never dropped, never merged.
            log.write_raw(b"\n")?;
            log.lines += 1;
            log.prev = sha256_hex(&torn);
            let repaired = super::Event::LogRepaired {
                torn_line: log.lines as u64,
                torn_bytes: torn.len() as u64,
                torn_sha256: sha256_hex(&torn),
                note: "the previous line was cut short by a crash during an append".into(),
            };
            log.append(repaired.kind(), None, &repaired.fields())?;
        }
        Ok(log)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// Appends one event: written in one call, flushed and fsynced before
    /// this returns. Returns its seq.
    pub fn append(&mut self, kind: &str, attempt: Option<u32>, fields: &Value) -> Result<u64, RecordError> {
        self.append_line(kind, attempt, fields).map(|_| self.last_seq)
    }

    /// Like [`EventLog::append`], returning the line written (without its newline).
    pub fn append_line(&mut self, kind: &str, attempt: Option<u32>, fields: &Value) -> Result<String, RecordError> {
        // A line of another's is put back before this one follows it.
        self.check_foreign();
        let seq = self.last_seq + 1;
        let line = encode(seq, &now(), kind, attempt, &self.prev, fields);
        let mut bytes = line.clone().into_bytes();
        bytes.push(b'\n');
        self.write_raw(&bytes)?;
        self.last_seq = seq;
        self.prev = sha256_hex(line.as_bytes());
        self.lines += 1;
        self.tail_len = bytes.len() as u64;
        Ok(line)
    }

    fn write_raw(&mut self, bytes: &[u8]) -> Result<(), RecordError> {
        self.file.write_all(bytes).map_err(io(&self.path))?;
        self.file.flush().map_err(io(&self.path))?;
        self.file.sync_data().map_err(io(&self.path))?;
        if let Ok(m) = self.file.metadata() {
            wrote_here(&self.path, &m);
            if self.left.is_some() {
                self.left = Some(Left::of(&m));
            }
        }
        Ok(())
    }

    /// From now on, every write of another process to the log (where
    /// nothing confines the agent: an agent that forges events) is found
    /// before retry-run's next line, and put back where it can be: lines
    /// appended are cut off, a log replaced or removed is written again
    /// from the file retry-run holds open. [`EventLog::take_foreign`] says
    /// what was found.
    pub fn watch_foreign(&mut self) {
        if self.left.is_none() {
            self.left = self.file.metadata().ok().map(|m| Left::of(&m));
        }
    }

    /// What others wrote to the log since the last call (looking at it
    /// now), each put back where it could be.
    pub fn take_foreign(&mut self) -> Vec<ForeignWrite> {
        self.check_foreign();
        std::mem::take(&mut self.foreign)
    }

    /// Looks at the log's file: when it is not as retry-run's last write
    /// left it, says how and puts it back where it can.
    fn check_foreign(&mut self) {
        let Some(left) = self.left else { return };
        let now = std::fs::symlink_metadata(&self.path);
        if now.as_ref().is_ok_and(|m| m.is_file() && Left::of(m) == left) {
            return;
        }
        // Another log of this process on the same file (none is opened so
        // today, but it would be retry-run's line, not another's).
        if let Ok(m) = &now
            && m.is_file()
            && Left::of(m).ino == left.ino
            && written_here(&self.path, m)
        {
            self.left = Some(Left::of(m));
            return;
        }
        let found = match &now {
            Err(_) => self.write_again("removed"),
            Ok(m) if !m.is_file() || Left::of(m).ino != left.ino => self.write_again("replaced by another file"),
            Ok(m) if m.len() > left.len && self.tail_intact(left.len) => {
                let extra = self.read_at(left.len, (m.len() - left.len).min(1 << 20));
                let lines = extra.iter().filter(|&&b| b == b'\n').count().max(1);
                let what = format!(
                    "{lines} line{} ({} bytes) appended that retry-run did not write",
                    crate::text::plural(lines),
                    m.len() - left.len
                );
                let cut = self.file.set_len(left.len).and_then(|()| self.file.sync_data());
                ForeignWrite { what, put_back: cut.is_ok() }
            }
            Ok(m) if m.len() < left.len => {
                ForeignWrite { what: format!("cut short from {} to {} bytes", left.len, m.len()), put_back: false }
            }
            Ok(_) => ForeignWrite { what: "rewritten in place".into(), put_back: false },
        };
        self.foreign.push(found);
        self.left = self.file.metadata().ok().map(|m| Left::of(&m));
    }

    /// Whether the log's last line, ending at `len`, is still the one
    /// retry-run wrote (its hash is the chain's last).
    fn tail_intact(&self, len: u64) -> bool {
        if self.tail_len == 0 {
            return len == 0;
        }
        let line = self.read_at(len.saturating_sub(self.tail_len), self.tail_len);
        line.len() as u64 == self.tail_len && line.ends_with(b"\n") && sha256_hex(&line[..line.len() - 1]) == self.prev
    }

    /// Up to `n` bytes of the open file from `offset`.
    fn read_at(&self, offset: u64, n: u64) -> Vec<u8> {
        use std::os::unix::fs::FileExt;
        let mut buf = vec![0u8; n as usize];
        let mut got = 0;
        while got < buf.len() {
            match self.file.read_at(&mut buf[got..], offset + got as u64) {
                Ok(0) | Err(_) => break,
                Ok(k) => got += k,
            }
        }
        buf.truncate(got);
        buf
    }

    /// The log written again at its path from the file retry-run holds
    /// open (its own lines, as it wrote them), then reopened there.
    fn write_again(&mut self, what: &str) -> ForeignWrite {
        let Some(left) = self.left else { return ForeignWrite { what: what.into(), put_back: false } };
        let bytes = self.read_at(0, left.len);
        let whole = bytes.len() as u64 == left.len && self.tail_intact(left.len);
        let reopened = whole
            && write_file(&self.path, &bytes).is_ok()
            && match OpenOptions::new().read(true).append(true).open(&self.path) {
                Ok(f) if f.metadata().is_ok_and(|m| m.is_file() && m.len() == left.len) => {
                    self.file = f;
                    true
                }
                _ => false,
            };
        ForeignWrite { what: what.into(), put_back: reopened }
    }
}

/// The record's files this process wrote, each as its last write left it.
static WRITTEN: std::sync::Mutex<std::collections::BTreeMap<PathBuf, Left>> =
    std::sync::Mutex::new(std::collections::BTreeMap::new());

/// Notes that this process wrote `path`, now as `m` says.
fn wrote_here(path: &Path, m: &std::fs::Metadata) {
    if let Ok(mut w) = WRITTEN.lock() {
        w.insert(path.to_path_buf(), Left::of(m));
    }
}

/// Whether the record's file at `path` is as this process's last write of
/// it left it (`m`, its stat data now): what another task of this run
/// wrote meanwhile (an event appended, a file of its record) is this
/// run's, not an unconfined agent's.
pub(crate) fn written_here(path: &Path, m: &std::fs::Metadata) -> bool {
    WRITTEN.lock().is_ok_and(|w| w.get(path) == Some(&Left::of(m)))
}

/// Now, UTC, RFC 3339 with milliseconds.
pub(crate) fn now() -> String {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    chain::rfc3339(d.as_secs(), d.subsec_millis())
}

/// `v` as pretty JSON at `path`, written as [`write_file`] writes.
pub(crate) fn write_json<T: serde::Serialize>(path: &Path, v: &T) -> Result<(), RecordError> {
    let bytes = serde_json::to_vec_pretty(v)
        .map_err(|e| RecordError::Encode { path: path.to_path_buf(), message: e.to_string() })?;
    write_file(path, &bytes)
}

/// Writes a file of the record: to a temporary name, fsynced, then renamed,
/// so a crash never leaves half a file.
pub(crate) fn write_file(path: &Path, bytes: &[u8]) -> Result<(), RecordError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
    }
    // A name of its own for each write: two writers of one file (lanes or
    // tasks of one base caching its checks at once) must not rename each
    // other's file away.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_extension(format!("{}-{n}.tmp", std::process::id()));
    let written = File::create(&tmp)
        .and_then(|mut f| f.write_all(bytes).and_then(|()| f.sync_all()))
        .map_err(io(&tmp))
        .and_then(|()| std::fs::rename(&tmp, path).map_err(io(path)));
    match &written {
        Ok(()) => {
            if let Ok(m) = std::fs::symlink_metadata(path) {
                wrote_here(path, &m);
            }
        }
        Err(_) => {
            let _ = std::fs::remove_file(&tmp);
        }
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A log of two events, watched for others' writes.
    fn watched(dir: &Path) -> EventLog {
        let mut log = EventLog::open(&dir.join(super::super::layout::EVENTS)).expect("open");
        log.append("A", None, &serde_json::json!({})).expect("append");
        log.append("B", Some(1), &serde_json::json!({"x": 1})).expect("append");
        log.watch_foreign();
        log
    }

    #[test]
    fn lines_others_append_are_found_and_cut_off_before_the_next() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut log = watched(dir.path());
        assert!(log.take_foreign().is_empty(), "retry-run's own lines are no one else's");
        let path = log.path().to_path_buf();
        let ours = std::fs::read(&path).expect("read");
        let mut f = OpenOptions::new().append(true).open(&path).expect("open");
        f.write_all(b"{\"seq\":3,\"type\":\"TaskSucceeded\"}\n{\"x\":1}\n").expect("forge");
        drop(f);
        // retry-run's next line finds them first, and puts the log back.
        log.append("C", Some(1), &serde_json::json!({})).expect("append");
        let found = log.take_foreign();
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].what.starts_with("2 lines (") && found[0].put_back, "{found:?}");
        let now = std::fs::read(&path).expect("read");
        assert!(now.starts_with(&ours) && !String::from_utf8_lossy(&now).contains("TaskSucceeded"));
        let v = super::super::chain::verify(&now);
        assert!(v.broken.is_none() && v.events.len() == 3, "the chain holds: {:?}", v.broken);
        assert!(log.take_foreign().is_empty());
    }

    #[test]
    fn a_log_replaced_or_removed_is_written_again_and_one_rewritten_in_place_is_said() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut log = watched(dir.path());
        let path = log.path().to_path_buf();
        let ours = std::fs::read(&path).expect("read");
        std::fs::write(dir.path().join("forged"), b"{\"seq\":1}\n").expect("write");
        std::fs::rename(dir.path().join("forged"), &path).expect("replace");
        let found = log.take_foreign();
        assert_eq!(found, [ForeignWrite { what: "replaced by another file".into(), put_back: true }]);
        assert_eq!(std::fs::read(&path).expect("read"), ours);
        std::fs::remove_file(&path).expect("remove");
        assert_eq!(log.take_foreign(), [ForeignWrite { what: "removed".into(), put_back: true }]);
        log.append("C", None, &serde_json::json!({})).expect("append");
        assert!(super::super::chain::verify(&std::fs::read(&path).expect("read")).broken.is_none());
        // Same size, other bytes: said, not put back (retry-run keeps no copy).
        let mut bytes = std::fs::read(&path).expect("read");
        bytes[2] = b'X';
        let f = OpenOptions::new().write(true).open(&path).expect("open");
        std::os::unix::fs::FileExt::write_at(&f, &bytes[..3], 0).expect("write");
        assert_eq!(log.take_foreign(), [ForeignWrite { what: "rewritten in place".into(), put_back: false }]);
    }

    #[test]
    fn writers_of_one_file_at_once_each_write_it_whole() {
        let dir = std::env::temp_dir().join(format!("retry-run-write-file-{}", std::process::id()));
        let path = dir.join("baselines").join("key.json");
        std::thread::scope(|s| {
            for i in 0..8 {
                let path = &path;
                s.spawn(move || {
                    for _ in 0..20 {
                        write_file(path, format!("writer {i}\n").repeat(100).as_bytes()).expect("every write lands");
                    }
                });
            }
        });
        let text = std::fs::read_to_string(&path).expect("read");
        assert!(text.lines().all(|l| l == text.lines().next().unwrap_or("")), "one writer's bytes, whole");
        let left: Vec<_> = std::fs::read_dir(path.parent().expect("dir")).expect("ls").flatten().collect();
        assert_eq!(left.len(), 1, "no temporary file is left: {left:?}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
