//! What a run holds while it runs a task: the task's lock here (one run of
//! a task at a time) and, with `--remote`, its lease on the remote
//! ([`super::held_lease`]), given back whatever the end.

use std::path::Path;

use super::held_lease::HeldLease;
use super::progress::Progress;
use super::{Ending, Options, RunError};
use crate::record::{RecordError, Store, TaskLock};

/// The lease's default duration (`--lease`).
const DEFAULT_LEASE: std::time::Duration = std::time::Duration::from_secs(300);

/// The task's lock: one run of a task at a time.
pub(super) fn lock(store: &Store, id: &str) -> Result<TaskLock, RunError> {
    store.lock(id).map_err(|e| match e {
        RecordError::Locked { ref pid, .. } => {
            RunError::Held { by: format!("process {pid} here"), message: e.to_string() }
        }
        other => other.into(),
    })
}

/// With `--remote`, the task's lease claimed (saying whose expired lease
/// this run took over).
pub(super) fn claim_lease(
    dir: &Path,
    opts: &Options,
    id: &str,
    progress: &Progress,
) -> Result<Option<HeldLease>, RunError> {
    let Some(remote) = &opts.remote else { return Ok(None) };
    let (held, previous) = HeldLease::claim(dir, remote, id, opts.lease.unwrap_or(DEFAULT_LEASE))?;
    if let Some(h) = previous {
        progress.say(&format!("task {id}: took over the lease of {} (pid {}), which expired", h.host, h.pid));
    }
    Ok(Some(held))
}

/// The lease given back with the record's last state, whatever the end.
pub(super) fn release(lease: Option<HeldLease>, ended: Result<Ending, RunError>) -> Result<Ending, RunError> {
    let Some(lease) = lease else { return ended };
    let released = lease.release();
    match (ended, released) {
        (Ok(ending), Ok(())) => Ok(ending),
        (Ok(_), Err(e)) => Err(e),
        (Err(e), _) => Err(e),
    }
}
