//! `retry-run log <task>`: a task's events, and `--verify` of their chain.

use std::io::Write;
use std::path::Path;

use clap::Args;
use serde_json::Value;

use super::{CliError, exit};
use crate::git::Repo;
use crate::record::Store;
use crate::record::chain::Finding;
use crate::record::store::check_record_id;
use crate::text::{VisibleWriter, clip};

/// Print a task's event log; with --verify, check its hash chain.
///
/// --verify exits 1 and names the first line that was edited, removed,
/// reordered or inserted. A last line cut short by a crash is reported but
/// is not tampering (the next write records it).
#[derive(Debug, Args)]
pub struct LogArgs {
    /// The task id (as `retry-run status` lists them), or one of its lanes
    /// (`TASK/lanes/N`, `run --lanes`).
    pub task: String,

    /// Check the chain; exit 1 at the first broken line.
    #[arg(long)]
    pub verify: bool,

    /// One event per line, as stored.
    #[arg(long)]
    pub json: bool,
}

pub(super) fn run(dir: &Path, args: LogArgs) -> Result<i32, CliError> {
    check_record_id(&args.task)?;
    let repo = Repo::find(dir)?;
    let store = Store::new(repo.common_dir());
    let v = store.read(&args.task)?;
    let log_path = store.task(&args.task).events();
    // Events as the agent's text may have filled them: made visible, but
    // `--json` prints each line as stored.
    let mut out = VisibleWriter::new(std::io::BufWriter::new(std::io::stdout().lock()), !args.json);
    if !args.verify {
        for e in &v.events {
            if args.json {
                writeln!(out, "{}", e.value)?;
            } else {
                writeln!(out, "{}", human(&e.value))?;
            }
        }
    }
    for line in &v.repaired {
        crate::console::errln!(
            "retry-run: note: {}:{line}: cut short by a crash during an append; recorded by the LogRepaired event after it",
            log_path.display()
        );
    }
    if v.torn_tail {
        crate::console::errln!(
            "retry-run: warning: {}: the last line is cut short (a crash during an append); the next write to this task records it",
            log_path.display()
        );
    }
    out.flush()?;
    match v.broken {
        Some(Finding::Broken { line, what }) => {
            crate::console::errln!("retry-run: error: {}:{line}: line {line} {what}", log_path.display());
            Ok(exit::FOUND)
        }
        None => {
            if args.verify {
                writeln!(out, "{}: {} events, chain intact", log_path.display(), v.events.len())?;
                out.flush()?;
            }
            Ok(exit::OK)
        }
    }
}

/// `seq  ts  [attempt N]  Type  key=value ...`
fn human(v: &Value) -> String {
    let s = |k: &str| v.get(k).map(|x| x.as_str().map_or(x.to_string(), str::to_string)).unwrap_or_default();
    let mut line = format!("{:>4}  {}  ", s("seq"), s("ts"));
    if let Some(a) = v.get("attempt").and_then(Value::as_u64) {
        line.push_str(&format!("#{a} "));
    }
    line.push_str(&s("type"));
    if let Some(m) = v.as_object() {
        for (k, val) in m {
            if matches!(k.as_str(), "seq" | "ts" | "type" | "attempt" | "prev") {
                continue;
            }
            let text = val.as_str().map_or(val.to_string(), str::to_string);
            let text = if text.len() > 80 { clip(&text, 77, "...") } else { text.into() };
            line.push_str(&format!("  {k}={text}"));
        }
    }
    line
}
