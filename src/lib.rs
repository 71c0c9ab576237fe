//! retry-run: run an AI coding agent in clean git worktrees, check what it
//! changed, and hand the next attempt a short account of what went wrong.
//!
//! The pure core (`model`, `config`, `outcome`, `scope`, `pathfmt`,
//! `format`, `text`, `hash`) never touches the filesystem, processes or
//! git; the edges (`git`, `checkout_watch`, `process`, `run`, `cli`) do.

pub mod agents;
pub mod checkout_watch;
pub mod clean;
pub mod cli;
pub mod config;
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
pub mod model;
pub mod outcome;
pub mod pathfmt;
pub mod process;
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
