//! `retry-run mcp`: the self-check MCP server of an attempt, on stdio.

use std::path::Path;

use clap::Args;

use super::CliError;
use super::error::exit;

/// Serve the attempt's self-check tools as an MCP server (started for the agent).
///
/// Serve the self-check tools of the attempt under way (run_checks,
/// previous_attempts, task) as an MCP server on stdin and stdout. Started
/// for the agent, inside its sandbox: `retry-run run` gives the agent the
/// whole command line in RETRY_RUN_MCP_COMMAND (a JSON array) and wires it
/// into a preset's agent. Each call is answered by the run outside the
/// sandbox and recorded in the attempt; see docs/mcp.md.
#[derive(Debug, Args)]
#[command(
    after_help = "Example (what an agent's MCP settings hold):\n  retry-run mcp --channel .git/retry-run/tasks/fix-1/attempts/1/tmp/retry-run-mcp"
)]
pub struct McpArgs {
    /// The attempt's channel directory, where the run takes calls and
    /// leaves answers (given in RETRY_RUN_MCP_COMMAND).
    #[arg(long, value_name = "DIR")]
    pub channel: std::path::PathBuf,
}

pub(super) fn run(dir: &Path, args: McpArgs) -> Result<i32, CliError> {
    let channel = super::absolute(&args.channel, dir);
    if !channel.is_dir() {
        return Err(CliError::usage(format!(
            "{}: no such channel directory; `retry-run mcp` serves an attempt under way: start it from the command in RETRY_RUN_MCP_COMMAND",
            channel.display()
        )));
    }
    crate::mcp::server::serve(channel).map_err(|e| CliError::of(super::exit::ENVIRONMENT, e, None))?;
    Ok(exit::OK)
}
