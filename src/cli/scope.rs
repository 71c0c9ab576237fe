//! `retry-run scope`: fail a change that writes outside its allowed paths.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::repo_args::{CompareArgs, open};
use super::{CliError, exit};
use crate::format::scope::{ScopeFormat, ScopeHeader, write};
use crate::git::DiffDepth;
use crate::scope::{Rules, check};

/// Report every path the change writes that the scope does not allow.
///
/// Exit 0 when clean, 1 on violations, 2 on bad usage (unknown ref, invalid
/// glob, bad config), 3 when git or the environment fails.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  retry-run scope --base origin/main --head HEAD --allow 'src/**' --deny '**/*.lock' --format github\n  retry-run scope                      # the working tree against the default branch, globs from retry-run.toml"
)]
pub struct ScopeArgs {
    #[command(flatten)]
    pub compare: CompareArgs,

    /// A glob the change may write (repeatable; replaces [scope] allow).
    /// `*` stays in one directory, `**` crosses them; empty allows all.
    #[arg(long, value_name = "GLOB")]
    pub allow: Vec<String>,

    /// A glob the change may never write (repeatable; replaces [scope] deny).
    /// Deny wins over allow.
    #[arg(long, value_name = "GLOB")]
    pub deny: Vec<String>,

    /// How the findings are printed.
    #[arg(long, value_enum, default_value = "text")]
    pub format: ScopeFormat,
}

pub fn run(dir: &Path, args: ScopeArgs) -> Result<i32, CliError> {
    let opened = open(dir, args.compare.config.as_deref())?;
    let scope = &opened.config.scope;
    let allow = if args.allow.is_empty() { &scope.allow } else { &args.allow };
    let deny = if args.deny.is_empty() { &scope.deny } else { &args.deny };
    // Compile the globs before any git work, so a bad glob fails fast.
    let rules = Rules::compile(allow, deny)?;
    let cmp = args.compare.compare(&opened, DiffDepth::NameStatus, None)?;
    let report = check(&rules, &cmp.changes.changes, &cmp.head);
    let header = ScopeHeader { base: &cmp.changes.base, head: &cmp.changes.head, rules: &rules };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    write(&mut out, args.format, &header, &report)?;
    out.flush()?;
    Ok(if report.violations.is_empty() { exit::OK } else { exit::FOUND })
}
