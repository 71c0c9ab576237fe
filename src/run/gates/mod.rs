//! The gates an attempt's change goes through, in order: the scope, the
//! configured checks (judged against the base), the built-in checks (the
//! task's targets, test integrity) and the verifier. A gate is one file.

pub(crate) mod baseline_cache;
pub(crate) mod builtin;
pub(crate) mod check_writes;
pub(crate) mod checks;
pub(crate) mod reuse_store;
pub(crate) mod scope_gate;
pub(crate) mod verifier;
