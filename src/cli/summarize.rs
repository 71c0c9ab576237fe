//! `retry-run summarize`: what failed in a log of any size.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use clap::Args;

use super::{CliError, exit};
use crate::summarize::{Summarizer, render::render};

/// Bytes read at a time: the log is never held in memory whole.
const CHUNK: usize = 1 << 20;

/// Print a digest of what failed in a test, build or lint log.
///
/// Print a digest of what failed in a test, build or lint log: failing
/// tests, errors with their locations, the runner's totals, key details.
///
/// Understands pytest, cargo test, rustc/cargo build, jest, vitest and go
/// test output, and falls back to lines that look like errors. Reads the log
/// as a stream, in bounded memory, whatever its size. Exit 0 whenever the
/// input was read.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  cargo test 2>&1 | retry-run summarize\n  retry-run summarize ci.log --max-tokens 200"
)]
pub struct SummarizeArgs {
    /// The log to read; `-` or none for stdin.
    #[arg(value_name = "FILE", conflicts_with = "input")]
    pub file: Option<PathBuf>,

    /// Read the log from FILE instead of stdin (as the FILE operand does).
    #[arg(long, value_name = "FILE")]
    pub input: Option<PathBuf>,

    /// Budget for the digest, in tokens (estimated as bytes / 4).
    #[arg(long, value_name = "N", default_value_t = 500, value_parser = super::numbers::at_least_one)]
    pub max_tokens: usize,
}

pub(super) fn run(dir: &Path, args: SummarizeArgs) -> Result<i32, CliError> {
    let file = super::input_file(args.file.as_deref(), args.input.as_deref());
    let mut reader: Box<dyn Read> = match &file {
        Some((p, named)) => {
            let path = super::absolute(p, dir);
            Box::new(std::fs::File::open(&path).map_err(|e| CliError::usage(format!("{named}: {e}")))?)
        }
        None => Box::new(std::io::stdin().lock()),
    };
    let what = file.as_ref().map_or("stdin".to_string(), |(p, _)| p.display().to_string());
    let mut summarizer = Summarizer::new();
    let mut buf = vec![0u8; CHUNK];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => summarizer.feed(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(CliError::environment(format!("cannot read {what}: {e}"))),
        }
    }
    let digest = summarizer.finish();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    out.write_all(crate::text::visible(&render(&digest, args.max_tokens)).as_bytes())?;
    out.flush()?;
    Ok(exit::OK)
}
