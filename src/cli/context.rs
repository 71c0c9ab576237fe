//! `retry-run context <task>`: the prompt the next attempt would get,
//! rendered from the record without running anything.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;

use super::{CliError, exit};
use crate::git::Repo;
use crate::record::Store;
use crate::record::store::check_task_name;
use crate::run::next_context;
use crate::text::VisibleWriter;

/// Render the prompt the next attempt of a task would get.
///
/// Render the prompt the next attempt of a task would get (also after the
/// task has ended). The same record always gives the same bytes.
#[derive(Debug, Args)]
pub struct ContextArgs {
    /// The task id (as `retry-run status` lists them).
    pub task: String,
    /// The assembled structure (what context.json holds) instead of the prompt.
    #[arg(long)]
    pub json: bool,
    /// The config file (default: retry-run.toml at the repository root).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
}

pub(super) fn run(dir: &Path, args: ContextArgs) -> Result<i32, CliError> {
    check_task_name(&args.task)?;
    let repo = Repo::find(dir)?;
    let store = Store::new(repo.common_dir());
    let config = args.config.map(|p| super::absolute(&p, dir));
    let crate::run::NextContext { context: ctx, rendered } =
        next_context(&repo, &store, &args.task, config.as_deref())?;
    // The prompt, for a person: control characters made visible; the JSON
    // as serde wrote it.
    let mut out = VisibleWriter::new(std::io::stdout().lock(), !args.json);
    if args.json {
        let v = serde_json::to_string_pretty(&ctx)
            .map_err(|e| CliError::environment(format!("cannot encode the context: {e}")))?;
        writeln!(out, "{v}")?;
    } else {
        out.write_all(rendered.prompt.as_bytes())?;
    }
    out.flush()?;
    Ok(exit::OK)
}
