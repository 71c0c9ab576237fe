//! `retry-run init`: write a `retry-run.toml` for this repository. The
//! flow is [`crate::init::write_config`]; this file parses the flags and
//! prints what it did.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::{CliError, exit};
use crate::init::{InitError, Options, write_config};

/// Write a retry-run.toml for this repository, after trying its checks.
///
/// Write a retry-run.toml for this repository. Finds the project's own
/// Python interpreter (.venv, venv, uv, poetry, hatch, else python3) and
/// keeps the first that can import pytest; its lint tools (ruff, flake8,
/// mypy, where configured); package.json's test and lint scripts (npm,
/// pnpm or yarn by lock file); cargo test and clippy; go test and go vet.
/// Runs each proposed check once on HEAD, confined in a throwaway
/// worktree, says what it found (test totals, failing tests, diagnostics
/// already there), and comments out a check that cannot work here. The scope
/// comes from the source and test directories, the agent preset from the
/// agent CLIs on PATH. An existing file is kept unless --force.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// Overwrite an existing retry-run.toml.
    #[arg(long)]
    pub force: bool,
    /// Run nothing: propose the checks without trying them on the base.
    #[arg(long)]
    pub no_run: bool,
}

pub(super) fn run(dir: &Path, args: InitArgs) -> Result<i32, CliError> {
    let mut out = std::io::stdout().lock();
    let options = Options { force: args.force, no_run: args.no_run };
    let written = write_config(dir, options, &mut out).map_err(cli_error)?;
    writeln!(out, "wrote {}", written.path.display())?;
    for w in &written.said {
        writeln!(out, "  {w}")?;
    }
    Ok(exit::OK)
}

/// `init`'s error with its exit code.
fn cli_error(e: InitError) -> CliError {
    match e {
        InitError::Git(e) => e.into(),
        InitError::Progress(e) => e.into(),
        e if e.is_usage() => CliError::of(super::exit::USAGE, e, None),
        e => CliError::of(super::exit::ENVIRONMENT, e, None),
    }
}
