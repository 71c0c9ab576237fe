//! `retry-run demo`: the whole loop on a repository carried in the binary.

use std::path::Path;

use clap::Args;

use super::CliError;

/// Run the whole loop on a built-in repository with a scripted agent.
///
/// Run the loop on a built-in repository (a failing test and a lint error)
/// with a scripted agent that fails once, then fixes both from the prompt.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Keep the temporary directory (repository, record, worktree).
    #[arg(long)]
    pub keep: bool,
}

pub(super) fn run(_dir: &Path, args: DemoArgs) -> Result<i32, CliError> {
    Ok(super::exit::ending(crate::demo::demo(args.keep)?))
}
