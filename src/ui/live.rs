//! What wakes a task page's live updates: inotify on the task's record
//! directory (its log appended to, created or replaced), read through
//! tokio so that a waiting page holds no thread; where inotify cannot
//! watch it (no watches left, a directory not there yet, not Linux), a
//! look every 300 ms instead. Either way the caller compares the log's
//! stamp, so a wake for another file of the directory sends nothing.

use std::path::Path;
use std::time::Duration;

/// How often the log is looked at where inotify cannot watch it.
const POLL: Duration = Duration::from_millis(300);

/// The longest a watched page waits without looking (a lost wake, the
/// server being stopped).
const CEILING: Duration = Duration::from_secs(5);

/// Wakes when the directory it watches may have changed.
pub(crate) struct Wake {
    #[cfg(target_os = "linux")]
    fd: Option<tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>>,
}

impl Wake {
    /// Watches `dir` (a task's record directory) with inotify, or polls
    /// where it cannot. Needs a tokio runtime with I/O enabled.
    pub(crate) fn new(dir: &Path) -> Wake {
        #[cfg(target_os = "linux")]
        {
            Wake { fd: watch(dir).ok() }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = dir;
            Wake {}
        }
    }

    /// Whether inotify watches (else the poll).
    #[cfg(test)]
    pub(crate) fn watching(&self) -> bool {
        #[cfg(target_os = "linux")]
        {
            self.fd.is_some()
        }
        #[cfg(not(target_os = "linux"))]
        {
            false
        }
    }

    /// Resolves at the next write in the directory (its events read and
    /// dropped), or after [`CEILING`]; polling, after [`POLL`].
    pub(crate) async fn next(&mut self) {
        #[cfg(target_os = "linux")]
        if let Some(fd) = &self.fd {
            tokio::select! {
                ready = fd.readable() => {
                    if let Ok(mut guard) = ready {
                        drain(guard.get_inner());
                        guard.clear_ready();
                    }
                }
                () = tokio::time::sleep(CEILING) => {}
            }
            return;
        }
        tokio::time::sleep(POLL).await;
    }
}

/// An inotify descriptor (non-blocking) watching `dir` for a file written,
/// created, moved in or removed, registered with tokio's reactor.
#[cfg(target_os = "linux")]
fn watch(dir: &Path) -> std::io::Result<tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>> {
    use rustix::fs::inotify::{self, CreateFlags, WatchFlags};
    let fd = inotify::init(CreateFlags::NONBLOCK | CreateFlags::CLOEXEC)?;
    let mask = WatchFlags::MODIFY
        | WatchFlags::CLOSE_WRITE
        | WatchFlags::CREATE
        | WatchFlags::DELETE
        | WatchFlags::MOVED_TO
        | WatchFlags::DELETE_SELF
        | WatchFlags::MOVE_SELF
        | WatchFlags::ONLYDIR;
    inotify::add_watch(&fd, dir, mask)?;
    // SAFETY: the AsyncFd owns the OwnedFd, which stays open and is the
    // same descriptor until the AsyncFd is dropped.
    unsafe { tokio::io::unix::AsyncFd::register(fd) }.map_err(|e| e.into_parts().1)
}

/// Reads and drops every queued event (the caller looks at the log
/// itself); stops at an empty queue.
#[cfg(target_os = "linux")]
fn drain(fd: &std::os::fd::OwnedFd) {
    use rustix::fs::inotify::Reader;
    let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 4096];
    let mut events = Reader::new(fd, &mut buf[..]);
    while events.next().is_ok() {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_in_the_directory_wakes_it_and_a_missing_directory_polls() {
        let dir = std::env::temp_dir().join(format!("retry-run-ui-live-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("dir");
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        rt.block_on(async {
            let mut wake = Wake::new(&dir);
            assert_eq!(wake.watching(), cfg!(target_os = "linux"));
            let file = dir.join("events.jsonl");
            let t = std::time::Instant::now();
            let writer = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                std::fs::write(file, b"{}\n").expect("write");
            });
            wake.next().await;
            assert!(t.elapsed() < CEILING, "woken by the write, not by the ceiling");
            writer.join().expect("writer");
            let gone = Wake::new(&dir.join("not-there"));
            assert!(!gone.watching());
        });
        let _ = std::fs::remove_dir_all(&dir);
    }
}
