//! One integration-test binary: every test runs the real `retry-run` binary
//! on real git repositories built by `support`. Each file covers one
//! command or feature.

mod action;
mod acts_after_land;
mod agents;
mod architecture;
mod baseline_cache;
mod check_writes;
mod completions;
mod containment;
mod containment_outside;
mod demo;
mod detect;
mod diff;
mod docs;
mod ended_worktrees;
mod enrich;
mod fleet;
mod flow;
mod honest_success;
mod init;
mod land;
mod lanes;
mod mcp;
mod real_projects;
mod record;
mod repositories;
mod review;
mod review_report;
mod review_sources;
mod run;
mod runner_verdicts;
mod runners;
mod sandbox;
mod scope;
mod signals;
mod submodules;
mod summarize;
mod support;
mod symbols;
mod syntax;
mod terminal_output;
mod ui_browser;
mod ui_server;
mod words;
mod worktree;
