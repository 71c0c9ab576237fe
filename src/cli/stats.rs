//! `retry-run stats`: attempts per task and success rates, from the logs.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::{CliError, exit};
use crate::git::Repo;
use crate::record::Store;
use crate::record::state::attempts;
use crate::stats::{render, stats};

/// Attempts per task; success rate by attempt number and by the kind of
/// feedback the attempt was given.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// The figures as one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

pub fn run(dir: &Path, args: StatsArgs) -> Result<i32, CliError> {
    let repo = Repo::find(dir)?;
    let store = Store::new(repo.common_dir());
    let mut tasks = Vec::new();
    for id in store.tasks()? {
        let verified = store.read(&id)?;
        tasks.push((id.clone(), attempts(&store, &id, &verified.events)));
    }
    let s = stats(&tasks);
    let mut out = std::io::stdout().lock();
    if args.json {
        let v = serde_json::to_string(&s).map_err(|e| CliError::environment(format!("cannot encode: {e}")))?;
        writeln!(out, "{v}")?;
    } else {
        out.write_all(render(&s).as_bytes())?;
    }
    Ok(exit::OK)
}
