//! `retry-run inspect <task>/<n>`: what one attempt received and did.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::json;

use super::{CliError, exit};
use crate::format::diff_output::{DiffFormat, write as write_diff};
use crate::git::{DiffDepth, Repo};
use crate::model::{DiffSummary, refs};
use crate::record::Store;
use crate::record::store::check_record_id;
use crate::text::VisibleWriter;

/// Show one attempt: its events and files, or one part of it.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// `<task>/<n>`, e.g. fix-login/2.
    pub attempt: String,
    /// The prompt the agent received (prompt.md).
    #[arg(long, group = "part")]
    pub prompt: bool,
    /// The retry context (context.json).
    #[arg(long, group = "part")]
    pub context: bool,
    /// The attempt's change: its snapshot commit against the base.
    #[arg(long, group = "part")]
    pub diff: bool,
    /// The output of each check.
    #[arg(long, group = "part")]
    pub checks: bool,
    /// Events, files and commit as JSON.
    #[arg(long, group = "part")]
    pub json: bool,
}

pub(super) fn run(dir: &Path, args: InspectArgs) -> Result<i32, CliError> {
    let bad = || CliError::usage(format!("{:?}: name an attempt as <task>/<n>, e.g. fix-login/2", args.attempt));
    let (task, n) = args.attempt.rsplit_once('/').ok_or_else(bad)?;
    let n: u32 = n.parse().map_err(|_| bad())?;
    check_record_id(task)?;
    let repo = Repo::find(dir)?;
    let store = Store::new(repo.common_dir());
    let verified = store.read(task)?;
    let events: Vec<_> = verified.events.iter().filter(|e| e.attempt == Some(n)).collect();
    let attempt = store.attempt(task, n);
    let adir = attempt.path();
    if events.is_empty() && !adir.is_dir() {
        return Err(CliError::usage(format!(
            "task {task} has no attempt {n}; `retry-run log {task}` lists its attempts"
        )));
    }
    let refname = refs::attempt(task, n);
    let commit = repo.resolve(&refname).ok();
    // What the attempt left is shown with control characters made visible;
    // JSON (`--json`, context.json) passes as it is.
    let raw = args.json || args.context;
    let mut out = VisibleWriter::new(std::io::BufWriter::new(std::io::stdout().lock()), !raw);
    let read = |p: PathBuf| {
        std::fs::read(&p)
            .map_err(|e| CliError::environment(format!("{}: {e} (the attempt's record is incomplete)", p.display())))
    };
    if args.prompt {
        out.write_all(&read(attempt.prompt())?)?;
    } else if args.context {
        out.write_all(&read(attempt.context_json())?)?;
    } else if args.diff {
        let head =
            commit.ok_or_else(|| CliError::usage(format!("attempt {n} of {task} has no snapshot ({refname})")))?;
        let base = repo.resolve(&format!("{refname}^"))?;
        let cmp = repo.compare_commits(&base, &head, DiffDepth::Patch { max_lines: 2000 }, None)?;
        let summary = DiffSummary::from(cmp);
        write_diff(&mut out, DiffFormat::Text, &summary, 2000)?;
    } else if args.checks {
        let files = attempt.check_outputs();
        if files.is_empty() {
            writeln!(out, "no check output recorded for attempt {n} of {task}")?;
        }
        for f in files {
            writeln!(out, "==> {} <==", f.file_name().map(|s| s.to_string_lossy()).unwrap_or_default())?;
            out.write_all(&std::fs::read(&f).unwrap_or_default())?;
        }
    } else {
        let files = attempt.entries();
        if args.json {
            let doc = json!({
                "task": task,
                "attempt": n,
                "commit": commit.map(|c| c.oid.to_string()),
                "dir": adir.display().to_string(),
                "files": files,
                "events": events.iter().map(|e| e.value.clone()).collect::<Vec<_>>(),
            });
            writeln!(out, "{doc}")?;
        } else {
            writeln!(out, "attempt {n} of {task}")?;
            writeln!(
                out,
                "  commit: {}",
                commit.map_or("none (no snapshot)".to_string(), |c| format!("{} ({refname})", c.oid))
            )?;
            if adir.is_dir() {
                writeln!(out, "  files:  {} {}", adir.display(), files.join(" "))?;
            } else {
                writeln!(out, "  files:  {} is missing (the events below are all that is recorded)", adir.display())?;
            }
            for e in events {
                writeln!(out, "  {:>4}  {}", e.seq, e.kind)?;
            }
        }
    }
    out.flush()?;
    Ok(exit::OK)
}
