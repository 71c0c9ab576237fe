//! `retry-run status`: every task, its state, attempts, base, last outcome,
//! and the disk its worktree uses.

use std::io::Write;
use std::path::Path;

use clap::Args;
use serde_json::{Value, json};

use super::repo_args::open;
use super::{CliError, exit};
use crate::git::nofollow_fs::disk_usage;
use crate::record::Event;
use crate::record::chain::Verified;
use crate::record::store::check_task_name;
use crate::record::{RecordError, Store};
use crate::text::human_bytes;

/// List tasks: state, attempts, base, last outcome, worktree disk use.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// One JSON object per task.
    #[arg(long)]
    pub json: bool,
    #[arg(long, value_name = "PATH")]
    pub config: Option<std::path::PathBuf>,
}

/// What a task's events say.
pub struct TaskSummary {
    pub state: &'static str,
    pub attempts: u32,
    pub base: Option<String>,
    pub last_outcome: Option<String>,
    pub last_ts: Option<String>,
    /// The agent's cost, summed, where it reported one.
    pub cost_usd: Option<f64>,
}

/// Pure: the state of a task from its verified events.
pub fn summarize_task(v: &Verified, running: bool) -> TaskSummary {
    let typed: Vec<(Option<u32>, Event)> = v.events.iter().filter_map(|e| Some((e.attempt, e.typed()?))).collect();
    let base = typed.iter().rev().find_map(|(_, e)| match e {
        Event::TaskStarted { base, .. } => Some(base.clone()),
        _ => None,
    });
    let last_outcome = typed.iter().rev().find_map(|(_, e)| match e {
        Event::AttemptCompleted { outcome, .. } => Some(outcome.clone()),
        _ => None,
    });
    let attempts = typed
        .iter()
        .filter_map(|(n, e)| matches!(e, Event::AttemptStarted { .. }).then_some(*n).flatten())
        .max()
        .unwrap_or(0);
    let last = v.events.last().map(|e| e.typed());
    let state = if running {
        "running"
    } else if v.broken.is_some() {
        "log broken (retry-run log --verify)"
    } else {
        match last {
            Some(Some(Event::TaskSucceeded { .. })) => "succeeded",
            Some(Some(Event::TaskEscalated { .. })) => "escalated",
            None => "new",
            _ => "stopped",
        }
    };
    // The agent's cost as it reported it (AgentFinished.usage), all rounds.
    let costs: Vec<f64> = typed
        .iter()
        .filter_map(|(_, e)| match e {
            Event::AgentFinished { usage: Some(u), .. } => u.cost_usd,
            _ => None,
        })
        .collect();
    TaskSummary {
        cost_usd: (!costs.is_empty()).then(|| costs.iter().sum()),
        state,
        attempts,
        base,
        last_outcome,
        last_ts: v.events.last().and_then(|e| e.value.get("ts")).and_then(Value::as_str).map(str::to_string),
    }
}

/// Every task with a record or a worktree under `root`, sorted.
pub fn known_tasks(store: &Store, root: &Path) -> Result<Vec<String>, RecordError> {
    let mut tasks = store.tasks()?;
    if let Ok(rd) = std::fs::read_dir(root) {
        tasks.extend(rd.flatten().filter_map(|e| e.file_name().into_string().ok()));
    }
    tasks.retain(|t| check_task_name(t).is_ok());
    tasks.sort();
    tasks.dedup();
    Ok(tasks)
}

pub fn run(dir: &Path, args: StatusArgs) -> Result<i32, CliError> {
    let o = open(dir, args.config.as_deref())?;
    let store = Store::new(o.repo.common_dir());
    let root = o.repo.worktrees_root(&o.config.worktree.root);
    let tasks = known_tasks(&store, &root)?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if tasks.is_empty() && !args.json {
        writeln!(out, "no tasks yet")?;
    }
    let mut total = 0;
    let mut unreadable = 0;
    for task in tasks {
        // A log that cannot be read is named on stderr and its task shown as
        // "unreadable"; the other tasks still show, and the exit code is 3.
        let mut state_override = None;
        let verified = match store.read(&task) {
            Ok(v) => Some(v),
            Err(RecordError::NoTask { .. }) => None,
            Err(e) => {
                eprintln!("retry-run: error: {e}");
                unreadable += 1;
                state_override = Some("unreadable");
                None
            }
        };
        let running = verified.is_some() && store.running(&task).is_some();
        let s = verified.as_ref().map(|v| summarize_task(v, running));
        let wt = root.join(&task);
        let used = if wt.exists() { Some(disk_usage(&wt)) } else { None };
        total += used.unwrap_or(0);
        if args.json {
            let line = json!({
                "task": task,
                "state": state_override.unwrap_or(s.as_ref().map_or("no record", |s| s.state)),
                "attempts": s.as_ref().map_or(0, |s| s.attempts),
                "base": s.as_ref().and_then(|s| s.base.clone()),
                "last_outcome": s.as_ref().and_then(|s| s.last_outcome.clone()),
                "last_event": s.as_ref().and_then(|s| s.last_ts.clone()),
                "worktree": used.map(|_| wt.display().to_string()),
                "worktree_bytes": used,
                "cost_usd": s.as_ref().and_then(|s| s.cost_usd),
            });
            writeln!(out, "{line}")?;
        } else {
            let base = s
                .as_ref()
                .and_then(|s| s.base.as_deref())
                .map_or("-".to_string(), |b| b.get(..12).unwrap_or(b).to_string());
            writeln!(
                out,
                "{task}\t{}\tattempts {}\tbase {base}\tlast {}\tworktree {}\tcost {}",
                state_override.unwrap_or(s.as_ref().map_or("no record", |s| s.state)),
                s.as_ref().map_or(0, |s| s.attempts),
                s.as_ref().and_then(|s| s.last_outcome.as_deref()).unwrap_or("-"),
                used.map_or("none".to_string(), human_bytes),
                s.as_ref().and_then(|s| s.cost_usd).map_or("-".to_string(), |c| format!("${c:.4}")),
            )?;
        }
    }
    if !args.json && total > 0 {
        writeln!(
            out,
            "worktrees use {} in {}; `retry-run clean --all` removes them (attempt commits stay)",
            human_bytes(total),
            root.display()
        )?;
    }
    out.flush()?;
    Ok(if unreadable > 0 { exit::ENVIRONMENT } else { exit::OK })
}
