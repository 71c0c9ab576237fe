//! retry-run: AI coding agents run in clean git worktrees, checked, retried.
//!
//! Each attempt runs the agent in a worktree of its own, checks what it
//! changed (scope, the project's checks, an optional verifier) and, when it
//! failed, hands the next attempt a short account of what went wrong; every
//! step is recorded in a hash-chained event log.
//!
//! The modules are declared below in their layers, bottom up: a module
//! imports only modules of its own layer or below (`tests/it/architecture.rs`
//! holds the exact table; `docs/design.md` says what each holds). A module
//! is `pub` only where the integration tests (`tests/it`) or the binary
//! reach into it; everything else is `pub(crate)`, so the compiler reports
//! what nothing uses.

// Foundations: shared types and helpers (pure, except the process,
// console, project and MCP edges).
pub(crate) mod console;
pub mod hash;
pub(crate) mod mcp;
pub(crate) mod model;
pub mod pathfmt;
pub(crate) mod process;
pub(crate) mod project;
pub(crate) mod text;

// Rules and parsers over those types.
pub mod agents;
pub mod config;
pub mod diagnostics;
pub mod judge;
pub mod summarize;
pub(crate) mod symbols;
pub mod syntax;
pub mod task;

// Edges: the record, the sandbox, the repository.
pub(crate) mod checkout_watch;
pub(crate) mod enrich;
pub mod git;
pub mod record;
pub(crate) mod remote;
// The sandbox is a crate of its own (crates/sandbox), named here as before.
pub use retry_run_sandbox as sandbox;

// Decisions over the record, and what is shown of them (pure).
pub(crate) mod context;
pub(crate) mod format;
pub(crate) mod outcome;
pub(crate) mod report;
pub(crate) mod stats;
pub(crate) mod stats_reader;

// Verbs: the only modules that combine edges and decisions.
pub(crate) mod clean;
pub(crate) mod demo;
pub(crate) mod diff;
pub(crate) mod init;
pub(crate) mod review;
pub(crate) mod run;
pub(crate) mod ui;

// The command line.
pub mod cli;
