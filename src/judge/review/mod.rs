//! The pure decisions of `retry-run review` (docs/review.md), over data:
//!
//! - [`comments`]: a line comment's `PATH:LINE[-LINE]` parsed and judged
//!   against the judged attempt's diff (accepted with the diff lines it
//!   covers, or refused naming the nearest changed lines);
//! - [`repeats`]: whether a required change repeats an earlier rejection's;
//! - [`check`]: what a verdict must hold (a one-sentence required change).

pub(crate) mod check;
pub(crate) mod comments;
pub(crate) mod repeats;
