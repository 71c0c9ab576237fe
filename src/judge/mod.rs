//! The pure judges of an attempt's gates, each a decision over data:
//!
//! - [`scope`]: the change set against the allow and deny globs, and the
//!   files that act once a change lands (`scope/landing.rs`);
//! - [`integrity`]: tests removed, skipped or weakened between two
//!   versions of a file, and which paths are test files;
//! - [`test_results`]: which tests a runner's output names as passed or
//!   failed, whether the runner itself failed, and the task's targets
//!   among them (`test_results/runners.rs`: the variables a check gets and
//!   how a failed check's failing tests alone run again);
//! - [`verdict`]: the verifier's JSON verdict and its pick among lanes.
//! - [`review`]: a reviewer's line comments against the judged diff, a
//!   repeated required change, what a rejection must hold.

pub(crate) mod integrity;
pub(crate) mod review;
pub mod scope;
pub(crate) mod test_results;
pub(crate) mod verdict;
