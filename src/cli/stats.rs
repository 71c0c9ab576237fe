//! `retry-run stats`: attempts per task and success rates, reviews and
//! lands, from the logs.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::{CliError, exit};
use crate::git::Repo;
use crate::record::Store;
use crate::stats::render;
use crate::text::VisibleWriter;

/// Attempts per task and success rates; reviews and lands.
///
/// Attempts per task, also as a histogram; success rate by attempt number
/// and by the kind of feedback the attempt was given; for tasks run in
/// lanes, success by lane count, pass@k and success by agent; rejections
/// per task, repeated critiques, and the time from a task's first attempt
/// to its land.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// The figures as one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

pub(super) fn run(dir: &Path, args: StatsArgs) -> Result<i32, CliError> {
    let repo = Repo::find(dir)?;
    let s = crate::stats_reader::read(&Store::new(repo.common_dir()))?;
    let mut out = VisibleWriter::new(std::io::stdout().lock(), !args.json);
    if args.json {
        let v = serde_json::to_string(&s).map_err(|e| CliError::environment(format!("cannot encode: {e}")))?;
        writeln!(out, "{v}")?;
    } else {
        out.write_all(render(&s).as_bytes())?;
    }
    Ok(exit::OK)
}
