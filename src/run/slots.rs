//! One budget of checks running at once for the whole process: every
//! configured check of every task and lane takes a slot while it runs
//! (`[retry] jobs`, default the machine's cores), so that `run -j N` and
//! `--lanes` do not multiply it.

use std::sync::{Condvar, Mutex};

/// Checks running now, across the process.
static RUNNING: Mutex<usize> = Mutex::new(0);
static FREED: Condvar = Condvar::new();

/// A slot held; given back when dropped.
pub(crate) struct Slot(());

impl Drop for Slot {
    fn drop(&mut self) {
        if let Ok(mut n) = RUNNING.lock() {
            *n = n.saturating_sub(1);
        }
        FREED.notify_all();
    }
}

/// Waits until fewer than `jobs` checks run in the process, then takes a
/// slot. A task with a smaller `jobs` than another's waits for its own.
pub(crate) fn take(jobs: usize) -> Slot {
    let jobs = jobs.max(1);
    let Ok(mut n) = RUNNING.lock() else { return Slot(()) };
    while *n >= jobs {
        n = match FREED.wait(n) {
            Ok(n) => n,
            Err(_) => return Slot(()),
        };
    }
    *n += 1;
    Slot(())
}

/// `f` run with one of this thread's slots given back meanwhile (it
/// waits for a run that needs a slot of its own), then taken again: the
/// slot held before is still the caller's to drop.
pub(crate) fn lent<T>(jobs: usize, f: impl FnOnce() -> T) -> T {
    if let Ok(mut n) = RUNNING.lock() {
        *n = n.saturating_sub(1);
    }
    FREED.notify_all();
    let out = f();
    // Counted again; the caller's `Slot` gives it back.
    std::mem::forget(take(jobs));
    out
}

/// `[retry] jobs`, else the machine's cores.
pub(crate) fn jobs(configured: Option<u32>) -> usize {
    configured
        .map(|j| j as usize)
        .unwrap_or_else(|| std::thread::available_parallelism().map(std::num::NonZeroUsize::get).unwrap_or(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_more_than_jobs_at_once() {
        let (peak, now) = (std::sync::atomic::AtomicUsize::new(0), std::sync::atomic::AtomicUsize::new(0));
        std::thread::scope(|s| {
            for _ in 0..6 {
                s.spawn(|| {
                    let _slot = take(2);
                    let n = now.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
                    peak.fetch_max(n, std::sync::atomic::Ordering::SeqCst);
                    std::thread::sleep(std::time::Duration::from_millis(20));
                    now.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                });
            }
        });
        assert!(peak.into_inner() <= 2);
        // A slot lent while waiting lets another take it: with one job, the
        // waiter holds none while the other runs.
        let slot = take(1);
        let other = lent(1, || std::thread::spawn(|| drop(take(1))).join().is_ok());
        assert!(other);
        drop(slot);
        assert_eq!(*RUNNING.lock().unwrap(), 0);
        assert_eq!(jobs(Some(3)), 3);
        assert!(jobs(None) >= 1);
    }
}
