//! One unconfined window at a time per repository. Where nothing confines
//! an attempt (`sandbox.mode = "detect"` or `"off"`), what changed outside
//! its worktree is known only by comparing before and after its agent (and
//! after its checks). Two such windows open at once (`run -j`, lanes, two
//! runs on one repository) would each be charged with the other's changes:
//! so each window holds `<git-common-dir>/retry-run/unconfined.lock`, an
//! OS file lock (released when the process dies), from the look before to
//! the look after. Other tasks prepare, snapshot and judge meanwhile; only
//! their agents and checks wait.

use std::fs::File;
use std::path::Path;
use std::time::Duration;

use super::RunError;

/// The window's lock, held until dropped.
pub(super) struct WindowLock {
    _file: File,
}

/// How often a waiting window asks for the lock again.
const POLL: Duration = Duration::from_millis(50);

/// The records (tasks, lanes) already told that they wait, in this process.
static TOLD: std::sync::Mutex<std::collections::BTreeSet<String>> =
    std::sync::Mutex::new(std::collections::BTreeSet::new());

/// Takes the repository's window lock (the repository's common git
/// directory `common`) for record `who`, waiting while another window
/// holds it; says that it waits once for each record. `stop` is asked
/// between tries: an interrupted run stops waiting. `None` when the lock
/// file cannot be made (a read-only record: the window goes on without
/// it, said).
pub(super) fn take(
    common: &Path,
    who: &str,
    say: &dyn Fn(&str),
    stop: &dyn Fn() -> Result<(), RunError>,
) -> Result<Option<WindowLock>, RunError> {
    let path = common.join("retry-run").join("unconfined.lock");
    let opened = std::fs::create_dir_all(common.join("retry-run"))
        .and_then(|()| std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path));
    let file = match opened {
        Ok(f) => f,
        Err(e) => {
            say(&format!(
                "{}: {e}; nothing confines this attempt and another one may run beside it, so changes outside its worktree may be another's",
                path.display()
            ));
            return Ok(None);
        }
    };
    let mut said = TOLD.lock().map_or(true, |mut told| !told.insert(format!("{}\0{who}", common.display())));
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(Some(WindowLock { _file: file })),
            Err(std::fs::TryLockError::WouldBlock) => {}
            Err(std::fs::TryLockError::Error(e)) => {
                say(&format!("{}: cannot take the lock ({e}); going on without it", path.display()));
                return Ok(None);
            }
        }
        if !said {
            say("waiting for another attempt's unconfined agent or checks in this repository to end \
                 (nothing confines them: one at a time, so that each change outside a worktree is charged to the attempt that made it)");
            said = true;
        }
        stop()?;
        std::thread::sleep(POLL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_window_at_a_time_across_threads() {
        let dir = tempfile::tempdir().expect("tempdir");
        let common = dir.path();
        let first = take(common, "a", &|_| {}, &|| Ok(())).expect("taken").expect("a lock");
        let (said, taken) = std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                let said = std::sync::Mutex::new(Vec::new());
                let w =
                    take(common, "b", &|m| said.lock().expect("lock").push(m.to_string()), &|| Ok(())).expect("taken");
                (said.into_inner().expect("said"), w.is_some())
            });
            std::thread::sleep(Duration::from_millis(200));
            drop(first);
            waiter.join().expect("joined")
        });
        assert!(taken);
        assert_eq!(said.len(), 1, "said once that it waits: {said:?}");
        // A stop asked while waiting ends the wait.
        let _held = take(common, "a", &|_| {}, &|| Ok(())).expect("taken");
        let stopped = take(common, "b", &|_| {}, &|| Err(RunError::LaneStopped { task: "t".into() }));
        assert!(stopped.is_err());
    }
}
