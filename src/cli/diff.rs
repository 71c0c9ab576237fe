//! `retry-run diff`: a diff summary for human reviewers.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::repo_args::{CompareArgs, open};
use super::{CliError, exit};
use crate::diff::{CompareOptions, summarize};
use crate::format::diff_output::{DiffFormat, write};

/// Summarise what a change did: files, statuses, line counts, a bounded patch.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  retry-run diff --base origin/main --head HEAD --format markdown > comment.md\n  retry-run diff --format json --max-lines 0   # the working tree; no patch lines, only counts"
)]
pub struct DiffArgs {
    #[command(flatten)]
    pub compare: CompareArgs,

    /// How the change is printed.
    #[arg(long, value_enum, default_value = "text")]
    pub format: DiffFormat,

    /// Keep at most this many patch lines; the rest is replaced by
    /// `[... N lines omitted]`.
    #[arg(long, value_name = "N", default_value_t = 500)]
    pub max_lines: usize,

    /// Parse every file's scopes anew instead of using (and filling) the
    /// cache of scopes by blob id (~/.cache/retry-run/scopes).
    #[arg(long)]
    pub no_cache: bool,
}

pub(super) fn run(dir: &Path, args: DiffArgs) -> Result<i32, CliError> {
    let opened = open(dir, args.compare.config.as_deref())?;
    let options = CompareOptions {
        base: args.compare.base_spec(&opened),
        head: args.compare.head.as_deref(),
        max_lines: args.max_lines,
        cache: !args.no_cache,
    };
    let summary = summarize(&opened.repo, &options)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    write(&mut out, args.format, &summary, args.max_lines)?;
    out.flush()?;
    // The process ends next and its memory goes back whole: freeing the
    // summary's strings one by one (a few per changed file and symbol)
    // would only cost time.
    std::mem::forget(summary);
    Ok(exit::OK)
}
