//! `retry-run scope`: fail a change that writes outside its allowed paths.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::repo_args::{CompareArgs, open};
use super::{CliError, exit};
use crate::format::scope_output::{ScopeFormat, ScopeHeader, write};
use crate::git::DiffDepth;
use crate::judge::scope::{Rules, check, landing};
use crate::model::LandGate;
use crate::run::landing_gate;

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

    /// What a change to a file that acts once the change lands (CI
    /// workflows, .gitattributes, editor tasks, .envrc, ...) is: a
    /// violation (fail), a flag that does not fail (flag), or nothing
    /// (off). Default: [scope] acts_after_land, else fail. retry-run.toml
    /// is a violation in every mode unless an allow glob names it.
    #[arg(long, value_enum, value_name = "MODE")]
    pub acts_after_land: Option<LandGate>,

    /// How the findings are printed.
    #[arg(long, value_enum, default_value = "text")]
    pub format: ScopeFormat,
}

pub(super) fn run(dir: &Path, args: ScopeArgs) -> Result<i32, CliError> {
    let opened = open(dir, args.compare.config.as_deref())?;
    let scope = &opened.config.scope;
    let allow = if args.allow.is_empty() { &scope.allow } else { &args.allow };
    let deny = if args.deny.is_empty() { &scope.deny } else { &args.deny };
    // Compile the globs before any git work, so a bad glob fails fast.
    let mode = args.acts_after_land.unwrap_or(scope.acts_after_land);
    let gate = landing_gate(&opened.repo, args.compare.config.as_deref().as_slice(), dir, mode);
    let rules = Rules::compile(allow, deny)?.with_landing(gate);
    let cmp = args.compare.compare(&opened, DiffDepth::NameStatus, None)?;
    let mut report = check(&rules, &cmp.changes.changes, &cmp.head);
    let found = landing::check(rules.landing(), &rules, &cmp.changes.changes, &|| cmp.head.file(b".gitmodules"));
    landing::merge(&mut report, found);
    let header = ScopeHeader { base: &cmp.changes.base, head: &cmp.changes.head, rules: &rules };
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    write(&mut out, args.format, &header, &report)?;
    out.flush()?;
    Ok(if report.violations.is_empty() { exit::OK } else { exit::FOUND })
}
