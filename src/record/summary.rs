//! A task's log summed up for a list of tasks ([`Summary`]: where it
//! stands, whether its chain verifies, how long it ran), and
//! [`Summaries`], which keeps each record's summary while its log stays
//! the same file with the same bytes.
//!
//! A log's identity ([`Stamp`]) is its device and inode, its length, its
//! modification time and its status-change time. An append changes the
//! length and both times; a rewrite (an editor's save, `sed -i`) makes a
//! new inode or changes the times; even a modification time set back by
//! hand changes the status-change time, which no user can set. Whenever
//! the stamp differs, the whole log is read and its chain verified again,
//! so a grown log shows its new events and a tampered one shows as broken
//! exactly as [`Store::read`] says; a log whose stamp is unchanged keeps
//! the verdict its bytes had.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::{Arc, Mutex};

use super::chain::Verified;
use super::state::{TaskState, elapsed_ms, state};
use super::{RecordError, Store};

/// What a list of tasks shows of one record.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// Where it stands, from its verified events.
    pub state: TaskState,
    /// Its chain does not verify (`retry-run log --verify` says where).
    pub broken: bool,
    /// From the log's first event to its last.
    pub duration_ms: u64,
    /// How many events verified.
    pub events: usize,
}

impl Summary {
    /// Pure: the summary of a verified log.
    pub fn of(v: &Verified) -> Summary {
        let duration_ms = match (v.events.first(), v.events.last()) {
            (Some(a), Some(b)) => elapsed_ms(a, b),
            _ => 0,
        };
        Summary { state: state(&v.events), broken: v.broken.is_some(), duration_ms, events: v.events.len() }
    }
}

/// The identity of a log file on disk: any write to it changes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    /// The stamp of the file at `path`, `None` when it cannot be stat'ed
    /// (not there yet).
    pub(crate) fn of(path: &Path) -> Option<Stamp> {
        let m = std::fs::metadata(path).ok()?;
        Some(Stamp {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        })
    }

    /// The length of the file.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }
}

/// Each record's summary, kept while its log's [`Stamp`] stays the same:
/// a list asked for again reads only the logs written since. Shared by
/// the threads that ask (a lock around the map, not around the reads).
#[derive(Debug)]
pub struct Summaries {
    store: Store,
    kept: Mutex<HashMap<String, (Stamp, Arc<Summary>)>>,
}

impl Summaries {
    pub fn new(store: Store) -> Summaries {
        Summaries { store, kept: Mutex::new(HashMap::new()) }
    }

    /// The summary of record `id` (a task's, or a lane's): the kept one
    /// when its log is the same file as when it was read, else read and
    /// verified anew ([`Store::read`]) and kept.
    pub fn get(&self, id: &str) -> Result<Arc<Summary>, RecordError> {
        // Stat'ed before the read: a write between the two leaves a stamp
        // older than the bytes read, and the next call reads them again.
        let stamp = Stamp::of(&self.store.task(id).events());
        if let Some(stamp) = stamp
            && let Some((kept, summary)) = self.lock().get(id)
            && *kept == stamp
        {
            return Ok(Arc::clone(summary));
        }
        let summary = Arc::new(Summary::of(&self.store.read(id)?));
        match stamp {
            Some(stamp) => {
                self.lock().insert(id.to_string(), (stamp, Arc::clone(&summary)));
            }
            None => {
                self.lock().remove(id);
            }
        }
        Ok(summary)
    }

    /// Reads the summaries of `ids` on as many threads as the machine has
    /// cores, so a first list of many logs (hashing and parsing each)
    /// is not read on one. What cannot be read is left to [`Self::get`]
    /// to report.
    pub fn warm(&self, ids: &[String]) {
        let threads = std::thread::available_parallelism().map_or(1, usize::from).min(ids.len().max(1));
        std::thread::scope(|s| {
            for first in 0..threads {
                s.spawn(move || {
                    for id in ids.iter().skip(first).step_by(threads) {
                        let _ = self.get(id);
                    }
                });
            }
        });
    }

    /// How many summaries are kept.
    pub fn kept(&self) -> usize {
        self.lock().len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Stamp, Arc<Summary>)>> {
        // A panic while the lock was held leaves a map that is still whole.
        self.kept.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use serde_json::json;

    use super::*;
    use crate::record::Event;

    /// A store in a directory of its own under the system's temporary one.
    fn store(name: &str) -> (Store, std::path::PathBuf) {
        let dir = std::env::temp_dir().join(format!("retry-run-summaries-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        (Store::new(&dir), dir)
    }

    fn append(store: &Store, id: &str, e: &Event, attempt: Option<u32>) {
        store.log(id).expect("log").append(e.kind(), attempt, &e.fields()).expect("append");
    }

    fn started() -> Event {
        Event::AttemptStarted { max_attempts: 3 }
    }

    #[test]
    fn summary_of_a_log_reads_its_state_and_its_chain() {
        let cases: &[(&[u8], bool, usize)] = &[
            (b"", false, 0),
            (b"not json\n", true, 0),
            (b"{\"seq\":1,\"ts\":\"2026-11-22T10:00:00Z\",\"type\":\"X\",\"prev\":\"nope\"}\n", true, 0),
        ];
        for (bytes, broken, events) in cases {
            let s = Summary::of(&crate::record::chain::verify(bytes));
            assert_eq!((s.broken, s.events), (*broken, *events), "{:?}", String::from_utf8_lossy(bytes));
        }
    }

    #[test]
    fn a_grown_log_is_read_again_and_an_unchanged_one_is_kept() {
        let (store, dir) = store("grown");
        append(&store, "t", &started(), Some(1));
        let cache = Summaries::new(store.clone());
        let first = cache.get("t").expect("read");
        assert_eq!((first.state.last_attempt, first.events), (1, 1));
        let again = cache.get("t").expect("read");
        assert!(Arc::ptr_eq(&first, &again), "an unchanged log is not read again");
        append(&store, "t", &started(), Some(2));
        let grown = cache.get("t").expect("read");
        assert_eq!((grown.state.last_attempt, grown.events, grown.broken), (2, 2, false));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn warming_many_logs_on_threads_keeps_each_as_a_read_of_its_own_would() {
        let (store, dir) = store("warm");
        let ids: Vec<String> = (0..9).map(|i| format!("t{i}")).collect();
        for (i, id) in ids.iter().enumerate() {
            for n in 0..=i as u32 {
                append(&store, id, &started(), Some(n + 1));
            }
        }
        let warmed = Summaries::new(store.clone());
        warmed.warm(&ids);
        assert_eq!(warmed.kept(), ids.len());
        let one_by_one = Summaries::new(store.clone());
        for id in &ids {
            let (a, b) = (warmed.get(id).expect("read"), one_by_one.get(id).expect("read"));
            assert_eq!((a.state.last_attempt, a.events, a.broken), (b.state.last_attempt, b.events, b.broken), "{id}");
        }
        warmed.warm(&[]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_rewritten_log_is_read_again_and_a_tampered_one_shows_broken() {
        let (store, dir) = store("rewritten");
        append(&store, "t", &started(), Some(1));
        append(&store, "t", &started(), Some(2));
        let cache = Summaries::new(store.clone());
        assert!(!cache.get("t").expect("read").broken);
        let path = store.task("t").events();
        let text = std::fs::read_to_string(&path).expect("log");
        let mtime = std::fs::metadata(&path).and_then(|m| m.modified()).expect("mtime");
        // The same length, edited in place, its modification time put back.
        let edited = text.replacen("\"attempt\":1", "\"attempt\":7", 1);
        assert_eq!(edited.len(), text.len());
        let mut f = std::fs::OpenOptions::new().write(true).open(&path).expect("open");
        f.write_all(edited.as_bytes()).expect("write");
        f.set_modified(mtime).expect("set mtime");
        drop(f);
        let tampered = cache.get("t").expect("read");
        assert!(tampered.broken, "an edit in place shows, its mtime put back or not");
        assert_eq!(tampered.events, 1, "the break shows where line 2 no longer follows line 1");
        // Replaced by another file (a new inode), whole again.
        let tmp = path.with_extension("new");
        std::fs::write(&tmp, &text).expect("write");
        std::fs::rename(&tmp, &path).expect("rename");
        let whole = cache.get("t").expect("read");
        assert_eq!((whole.broken, whole.events), (false, 2));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_broken_log_stays_broken_and_a_missing_record_is_no_task() {
        let (store, dir) = store("broken");
        append(&store, "t", &started(), Some(1));
        let path = store.task("t").events();
        let mut f = std::fs::OpenOptions::new().append(true).open(&path).expect("open");
        f.write_all(format!("{}\n", json!({"seq": 5, "ts": "t", "type": "X", "prev": "0"})).as_bytes()).expect("write");
        drop(f);
        let cache = Summaries::new(store.clone());
        for _ in 0..2 {
            let s = cache.get("t").expect("read");
            assert_eq!((s.broken, s.events), (true, 1));
        }
        assert_eq!(cache.kept(), 1);
        assert!(matches!(cache.get("nothing"), Err(RecordError::NoTask { .. })));
        // A record whose directory holds no log yet: nothing kept for it.
        std::fs::create_dir_all(store.task("empty").path()).expect("mkdir");
        assert_eq!(cache.get("empty").expect("read").events, 0);
        assert_eq!(cache.kept(), 1);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
