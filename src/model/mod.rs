//! Shared types of the pure core, one file per subject. `model` depends on
//! nothing else in the crate; every other module may use it.
//!
//! - `change.rs`: what changed between a base and a head (`Change`,
//!   `ChangeSet`, `DiffSummary`, the symbols a change touched);
//! - `source.rs`: what is found in a source file (`ScopeSpan`, `FoundTest`);
//! - `attempt.rs`: what one attempt did (`AttemptRecord`, `Outcome`,
//!   `ScopeFinding`, ...), as written to `attempts/<n>/attempt.json`;
//! - `check.rs`: checks' kinds and results (`CheckKind`, `CheckResult`,
//!   `BaselineMode`);
//! - `usage.rs`: tokens, turns and cost an agent reported (`Usage`);
//! - `internals.rs`: the repository's internals an attempt changed
//!   (`InternalChange`), the objects it added and why an unconfined
//!   attempt was halted (`Halt`);
//! - `review.rs`: a reviewer's verdict on a task's result and where a land
//!   put it (`Review`, `LineComment`, `Landed`);
//! - [`refs`]: the names of the refs retry-run writes.

mod attempt;
mod change;
mod check;
mod internals;
mod network_seen;
pub(crate) mod refs;
mod review;
mod source;
mod usage;

pub(crate) use attempt::{
    AgentRun, AttemptRecord, FileChange, LandGate, MAX_TREE_DEPTH, Outcome, ProviderFailure, RetryOn, ScopeFinding,
    ScopeReason, SelfCheck, VerifierResult,
};
pub(crate) use change::{
    Change, ChangeSet, DiffSummary, EntryKind, FileVersions, Head, Side, Status, SymbolChange, SymbolChangeKind, Totals,
};
pub(crate) use check::{
    BaselineMode, CheckKind, CheckResult, ErrorItem, Failure, NotRun, Reused, TARGETS, TEST_INTEGRITY,
    WROTE_WORKTREE_KEY,
};
pub(crate) use internals::{Halt, HaltedAfter, InternalChange, ObjectsAdded, PartChange};
pub(crate) use network_seen::NetworkSeen;
pub(crate) use review::{Channel, LandHow, Landed, LineComment, Review, Verdict};
pub(crate) use source::{FoundTest, ScopeRef, ScopeSpan, innermost};
pub(crate) use usage::Usage;
