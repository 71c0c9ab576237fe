//! `retry-run enrich`: lint, compiler and test output with the function or
//! class around each error.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use clap::Args;

use super::{CliError, exit};
use crate::diagnostics::{self, Format};
use crate::enrich::{self, load::load};
use crate::format::enrich_output::{EnrichFormat, write};

/// Show each diagnostic inside the function or class that holds it.
///
/// Reads the output of ruff, flake8, pylint, mypy, pyright, pytest, Python
/// tracebacks, rustc/cargo/clippy (human, short or JSON), cargo test panics,
/// tsc, ESLint, Biome, oxlint, or any `path:line[:col]: message` tool. Exit
/// 0 whenever the input was read.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  ruff check . | retry-run enrich\n  cargo clippy --message-format=json 2>/dev/null | retry-run enrich --format json\n  retry-run enrich pytest.log --input-format pytest --root services/api"
)]
pub struct EnrichArgs {
    /// The tool output to read; `-` or none for stdin.
    #[arg(value_name = "FILE", conflicts_with = "input")]
    pub file: Option<PathBuf>,

    /// Read the tool output from FILE instead of stdin (as the FILE operand
    /// does).
    #[arg(long, value_name = "FILE")]
    pub input: Option<PathBuf>,

    /// The input format, or `auto` to detect it: ruff, flake8, pylint,
    /// mypy, pyright, pytest, python-traceback, rustc, cargo-json,
    /// cargo-test, tsc, eslint, biome, oxlint, generic.
    #[arg(long, value_name = "NAME", default_value = "auto")]
    pub input_format: String,

    /// How the diagnostics are printed.
    #[arg(long, value_enum, default_value = "text")]
    pub format: EnrichFormat,

    /// Where relative paths in the output are resolved [default: the
    /// current directory].
    #[arg(long, value_name = "DIR")]
    pub root: Option<PathBuf>,
}

pub(super) fn run(dir: &Path, args: EnrichArgs) -> Result<i32, CliError> {
    let format = match args.input_format.as_str() {
        "auto" => None,
        name => Some(Format::from_name(name).ok_or_else(|| {
            let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
            CliError::usage(format!("unknown --input-format {name:?}; use auto or one of {}", names.join(", ")))
        })?),
    };
    let root = super::absolute(args.root.as_deref().unwrap_or(Path::new(".")), dir);
    if !root.is_dir() {
        return Err(CliError::usage(format!("--root {}: not a directory", root.display())));
    }
    let canonical_root = std::fs::canonicalize(&root).unwrap_or_else(|_| root.clone());
    let bytes = read_input(dir, super::input_file(args.file.as_deref(), args.input.as_deref()))?;
    // Tool output that is not UTF-8 (a path, a test's stdout) is read lossily.
    let text = String::from_utf8_lossy(&bytes);
    let found = diagnostics::parse_as(format, &text);
    let files = enrich::files_to_read(&found, &root, &canonical_root);
    let near = enrich::lines_of_interest(&found, &root, &canonical_root);
    let sources = load(&root, &files, &near);
    let items = enrich::enrich(found, &sources, &root, &canonical_root);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    write(&mut out, args.format, &items)?;
    out.flush()?;
    Ok(exit::OK)
}

/// The bytes of the file (with how an error names it), else of stdin.
fn read_input(dir: &Path, input: Option<(&Path, String)>) -> Result<Vec<u8>, CliError> {
    match input {
        Some((p, named)) => {
            let path = super::absolute(p, dir);
            std::fs::read(&path).map_err(|e| CliError::usage(format!("{named}: {e}")))
        }
        None => {
            let mut buf = Vec::new();
            std::io::stdin()
                .read_to_end(&mut buf)
                .map_err(|e| CliError::environment(format!("cannot read stdin: {e}")))?;
            Ok(buf)
        }
    }
}
