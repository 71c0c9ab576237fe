//! A run's lease on a task shared through a remote (`run --remote`,
//! docs/fleets.md): claimed before the task starts, renewed on another
//! thread every third of its duration, sent with the record at the start
//! and end of every attempt, given back at the end.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::RunError;
use crate::remote::lease_ref::Holder;
use crate::remote::{Lease, RemoteError};

pub(crate) struct HeldLease {
    lease: Arc<Mutex<Lease>>,
    stop: Arc<AtomicBool>,
    renewer: Option<JoinHandle<()>>,
}

impl HeldLease {
    /// Pulls the task's record and claims its lease; returns the holder of
    /// an expired lease this run took over.
    pub(crate) fn claim(
        dir: &std::path::Path,
        remote: &str,
        task: &str,
        duration: Duration,
    ) -> Result<(HeldLease, Option<Holder>), RunError> {
        let crate::remote::Claimed { lease, previous } = Lease::claim(dir, remote, task, duration)?;
        let lease = Arc::new(Mutex::new(lease));
        let stop = Arc::new(AtomicBool::new(false));
        let renewer = {
            let (lease, stop) = (Arc::clone(&lease), Arc::clone(&stop));
            std::thread::spawn(move || renew(&lease, &stop, duration / 3))
        };
        Ok((HeldLease { lease, stop, renewer: Some(renewer) }, previous))
    }

    /// The record sent with a renewed lease; refused once another run took
    /// the lease over.
    pub(crate) fn publish(&self) -> Result<(), RunError> {
        let mut lease = self.lease.lock().map_err(|_| RunError::LeaseRenewal)?;
        Ok(lease.publish()?)
    }

    /// The record sent and the lease given back (nothing is sent once the
    /// lease is lost).
    pub(crate) fn release(mut self) -> Result<(), RunError> {
        self.stop_renewing();
        let mut lease = self.lease.lock().map_err(|_| RunError::LeaseRenewal)?;
        if lease.is_lost() {
            return Ok(());
        }
        Ok(lease.release()?)
    }

    fn stop_renewing(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.renewer.take() {
            let _ = t.join();
        }
    }
}

impl std::fmt::Debug for HeldLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let task = self.lease.lock().map(|l| l.task.clone()).unwrap_or_default();
        f.debug_struct("HeldLease").field("task", &task).finish()
    }
}

impl Drop for HeldLease {
    fn drop(&mut self) {
        self.stop_renewing();
    }
}

/// Renews the lease every `every` until stopped or lost.
fn renew(lease: &Mutex<Lease>, stop: &AtomicBool, every: Duration) {
    let mut last = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(50).min(every));
        if last.elapsed() < every {
            continue;
        }
        last = Instant::now();
        let Ok(mut l) = lease.lock() else { return };
        match l.renew() {
            Err(RemoteError::LeaseLost { .. }) => return,
            // The remote unreachable for a moment: the next renewal tries again.
            _ => continue,
        }
    }
}
