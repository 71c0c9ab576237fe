//! The record of tasks and attempts (docs/record.md).
//!
//! - [`chain`]: the hash chain of the event log, verification (pure).
//! - [`event`]: the events of a task's log, typed (pure).
//! - [`confinement`]: how the events say a task and its processes were
//!   confined (pure).
//! - [`state`]: where a task stands, from its events (pure), and its
//!   attempts read back.
//! - [`layout`]: the file names of a task's and an attempt's directory
//!   (pure).
//! - [`manifest`]: attempt manifests and canonical JSON (pure).
//! - `compat` (tests): the logs captured in `tests/record/` read typed
//!   and are written back byte for byte.
//! - [`summary`]: a log summed up for a list of tasks, kept while the log
//!   file stays the same.
//! - [`store`]: the files under `<git-common-dir>/retry-run/`, appends with
//!   fsync, the task lock.

pub mod chain;
#[cfg(test)]
mod compat;
pub(crate) mod confinement;
pub(crate) mod event;
pub(crate) mod layout;
pub(crate) mod manifest;
pub(crate) mod state;
pub(crate) mod store;
pub(crate) mod summary;

pub use event::Event;
pub use layout::{AttemptDir, TaskDir};
pub use state::TaskState;
pub use store::{EventLog, RecordError, Store, TaskLock};
pub use summary::{Summaries, Summary};
