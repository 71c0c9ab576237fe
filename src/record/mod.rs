//! The record of tasks and attempts (docs/record.md).
//!
//! - [`chain`]: the hash chain of the event log, verification (pure).
//! - [`manifest`]: attempt manifests and canonical JSON (pure).
//! - [`store`]: the files under `<git-common-dir>/retry-run/`, appends with
//!   fsync, the task lock.

pub mod chain;
pub mod event;
pub mod manifest;
pub mod store;

pub use event::Event;
pub use store::{EventLog, RecordError, Store, TaskLock};
