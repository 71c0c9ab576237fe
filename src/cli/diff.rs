//! `retry-run diff`: a diff summary for human reviewers.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::repo_args::{CompareArgs, open};
use super::{CliError, exit};
use crate::format::diff::{DiffFormat, write};
use crate::git::{DiffDepth, SymbolsFn};
use crate::model::{DiffSummary, FileVersions, SymbolChange};
use crate::symbols::changed_symbols;
use crate::syntax;
use crate::syntax::cache::ScopeCache;

/// Summarise what a change did: files, statuses, line counts, a bounded patch.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  retry-run diff --base origin/main --head HEAD --format markdown > comment.md\n  retry-run diff --format json --max-lines 0   # the working tree; no patch lines, only counts"
)]
pub struct DiffArgs {
    #[command(flatten)]
    pub compare: CompareArgs,

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

/// The scopes a file's change touched, for the languages of `syntax`.
struct FileSymbols {
    cache: Option<ScopeCache>,
}

impl SymbolsFn for FileSymbols {
    fn wants(&self, path: &[u8]) -> bool {
        syntax::language_for(path).is_some()
    }

    /// A version that cannot be parsed counts as having no scopes.
    fn changed(&self, f: &FileVersions) -> Vec<SymbolChange> {
        let Some(lang) = syntax::language_for(f.path) else { return Vec::new() };
        // The same bytes on both sides (a pure rename) touch no scope.
        if f.old.is_some() && f.old == f.new && f.old_changed.is_empty() && f.new_changed.is_empty() {
            return Vec::new();
        }
        let spans = |v: Option<&[u8]>, id: Option<&[u8]>| match (v, &self.cache) {
            (None, _) => Vec::new(),
            (Some(src), Some(cache)) => cache.scopes(lang, id, src),
            (Some(src), None) => syntax::scopes(lang, src).unwrap_or_default(),
        };
        changed_symbols(&spans(f.old, f.old_id), &spans(f.new, f.new_id), f.old_changed, f.new_changed)
    }
}

pub fn run(dir: &Path, args: DiffArgs) -> Result<i32, CliError> {
    let opened = open(dir, args.compare.config.as_deref())?;
    let depth = DiffDepth::Patch { max_lines: args.max_lines };
    let symbols = FileSymbols { cache: if args.no_cache { None } else { ScopeCache::open() } };
    let cmp = args.compare.compare(&opened, depth, Some(&symbols))?;
    let summary = DiffSummary::from(cmp);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    write(&mut out, args.format, &summary, args.max_lines)?;
    out.flush()?;
    Ok(exit::OK)
}
