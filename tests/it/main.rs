//! One integration-test binary: every test runs the real `retry-run` binary
//! on real git repositories built by `support`.

mod action;
mod agents;
mod architecture;
mod checkout;
mod completions;
mod diff_oracle;
mod docs;
mod enrich;
mod errors;
mod events;
mod fleet;
mod formats;
mod honest;
mod init;
mod record;
mod revisions;
mod run;
mod sandbox;
mod scope_fixtures;
mod submodules;
mod summarize;
mod support;
mod symbols;
mod syntax_oracle;
mod worktree;
