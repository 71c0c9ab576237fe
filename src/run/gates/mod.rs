//! The gates an attempt's change goes through, in order: the scope, the
//! configured checks (judged against the base), the built-in checks (the
//! task's targets, test integrity) and the verifier. A gate is one file.

pub(crate) mod base;
pub(crate) mod base_aside;
pub(crate) mod baseline_cache;
pub(crate) mod builtin;
pub(crate) mod check_writes;
pub(crate) mod checks;
pub(crate) mod received;
pub(crate) mod reuse_store;
pub(crate) mod scope_gate;
pub(crate) mod stages;
pub(crate) mod verifier;

/// Reads a file of the attempt by its path in the worktree: from its
/// snapshot, or from the worktree as a self-check compared it.
pub(crate) type FileReader<'a> = &'a dyn Fn(&str) -> Option<Vec<u8>>;
