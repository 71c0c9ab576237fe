//! The gates an attempt's change goes through, in order: the scope, the
//! configured checks (judged against the base), the built-in checks (the
//! task's targets, test integrity) and the verifier. A gate is one file.

pub mod baseline_cache;
pub mod builtin;
pub mod check_writes;
pub mod checks;
pub mod scope_gate;
pub mod verifier;
