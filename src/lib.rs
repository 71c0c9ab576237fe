//! retry-run: AI coding agents run in clean git worktrees, checked, retried.
//!
//! Each attempt runs the agent in a worktree of its own, checks what it
//! changed (scope, the project's checks, an optional verifier) and, when it
//! failed, hands the next attempt a short account of what went wrong; every
//! step is recorded in a hash-chained event log.
//!
//! The modules are declared below in their layers, bottom up: a module
//! imports only modules of its own layer or below (`tests/it/architecture.rs`
//! holds the exact table; `docs/design.md` says what each holds).

// Foundations: shared types and helpers (pure, except the process,
// console, project and MCP edges).
pub mod console;
pub mod hash;
pub mod mcp;
pub mod model;
pub mod pathfmt;
pub mod process;
pub mod project;
pub mod text;

// Rules and parsers over those types.
pub mod agents;
pub mod config;
pub mod diagnostics;
pub mod judge;
pub mod summarize;
pub mod symbols;
pub mod syntax;
pub mod task;

// Edges: the record, the sandbox, the repository.
pub mod checkout_watch;
pub mod enrich;
pub mod git;
pub mod record;
pub mod remote;
pub mod sandbox;

// Decisions over the record, and what is shown of them (pure).
pub mod context;
pub mod format;
pub mod outcome;
pub mod report;
pub mod stats;

// Verbs: the only modules that combine edges and decisions.
pub mod clean;
pub mod demo;
pub mod diff;
pub mod init;
pub mod run;

// The command line.
pub mod cli;
