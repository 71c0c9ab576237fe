//! retry-run: AI coding agents run in clean git worktrees, checked, retried.
//!
//! Each attempt runs the agent in a worktree of its own, checks what it
//! changed (scope, the project's checks, an optional verifier) and, when it
//! failed, hands the next attempt a short account of what went wrong; every
//! step is recorded in a hash-chained event log. The module map (pure core
//! and edges) is in `docs/design.md`.

pub mod agents;
pub mod checkout_watch;
pub mod clean;
pub mod cli;
pub mod config;
pub mod console;
pub mod context;
pub mod demo;
pub mod diagnostics;
pub mod diff;
pub mod enrich;
pub mod format;
pub mod git;
pub mod hash;
pub mod init;
pub mod integrity;
pub mod mcp;
pub mod model;
pub mod outcome;
pub mod pathfmt;
pub mod process;
pub mod project;
pub mod record;
pub mod remote;
pub mod report;
pub mod run;
pub mod sandbox;
pub mod scope;
pub mod stats;
pub mod summarize;
pub mod symbols;
pub mod syntax;
pub mod task;
pub mod test_results;
pub mod text;
pub mod verdict;
