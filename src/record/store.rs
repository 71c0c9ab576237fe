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
        let mut log = EventLog { path: path.to_path_buf(), file, last_seq: t.last_seq, prev: t.prev, lines: t.lines };
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
        let seq = self.last_seq + 1;
        let line = encode(seq, &now(), kind, attempt, &self.prev, fields);
        let mut bytes = line.clone().into_bytes();
        bytes.push(b'\n');
        self.write_raw(&bytes)?;
        self.last_seq = seq;
        self.prev = sha256_hex(line.as_bytes());
        self.lines += 1;
        Ok(line)
    }

    fn write_raw(&mut self, bytes: &[u8]) -> Result<(), RecordError> {
        self.file.write_all(bytes).map_err(io(&self.path))?;
        self.file.flush().map_err(io(&self.path))?;
        self.file.sync_data().map_err(io(&self.path))
    }
}

/// Now, UTC, RFC 3339 with milliseconds.
pub(crate) fn now() -> String {
    let d = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    chain::rfc3339(d.as_secs(), d.subsec_millis())
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
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;

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
