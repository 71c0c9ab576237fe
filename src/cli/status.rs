//! `retry-run status`: every task, its state, attempts, base, last outcome,
//! the disk its worktree uses, and how its result stands with its
//! reviewers (reviewed, landed).

use std::io::Write;
use std::path::Path;

use clap::Args;
use serde_json::json;

use super::repo_args::open;
use super::{CliError, exit};
use crate::git::nofollow_fs::disk_usage;
use crate::model::refs::{lane_record, worktree_name};
use crate::record::Store;
use crate::record::state::{TaskState, state, status};
use crate::text::{VisibleWriter, human_bytes, visible};

/// List tasks: state, attempts, base, last outcome, worktree disk, review.
///
/// The review column: how the task's result stands with its reviewers
/// (approved, rejected, landed on a branch).
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// One JSON object per task.
    #[arg(long)]
    pub json: bool,
    /// The config file (default: retry-run.toml at the repository root).
    #[arg(long, value_name = "PATH")]
    pub config: Option<std::path::PathBuf>,
}

pub(super) fn run(dir: &Path, args: StatusArgs) -> Result<i32, CliError> {
    let o = open(dir, args.config.as_deref())?;
    let store = Store::new(o.repo.common_dir());
    let root = o.repo.worktrees_root(&o.config.worktree.root);
    let tasks = store.known_tasks(&root)?;
    let mut out = VisibleWriter::new(std::io::BufWriter::new(std::io::stdout().lock()), !args.json);
    if tasks.is_empty() && !args.json {
        writeln!(out, "no tasks yet")?;
    } else if !args.json {
        writeln!(out, "TASK\tSTATE\tATTEMPTS\tBASE\tLAST\tWORKTREE\tCOST\tREVIEW")?;
    }
    // Each worktree's share of the total: measured first, shown per task.
    let used_by = disk_used(&store, &root, &tasks);
    let total: u64 = used_by.iter().flatten().sum();
    let share = |b: u64| if total == 0 { 0.0 } else { 100.0 * b as f64 / total as f64 };
    let mut unreadable = 0;
    for (task, used) in tasks.into_iter().zip(used_by) {
        // A log that cannot be read is named on stderr and its task shown as
        // "unreadable"; the other tasks still show, and the exit code is 3.
        let (s, label) = match status(&store, &task) {
            Ok(Some(s)) => (Some(s.state), s.label),
            Ok(None) => (None, "no record"),
            Err(e) => {
                crate::console::errln!("retry-run: error: {}", visible(&e.to_string()));
                unreadable += 1;
                (None, "unreadable")
            }
        };
        let wt = root.join(&task);
        // A task run in lanes: its lanes' attempts and cost, summed.
        let s = s.map(|s| with_lanes(s, &lanes_of(&store, &task)));
        let share_of = used.map(share);
        if args.json {
            writeln!(out, "{}", json_row(&task, label, s.as_ref(), used, share_of, &wt))?;
        } else {
            writeln!(out, "{}", text_row(&task, label, s.as_ref(), used, share_of))?;
        }
    }
    if !args.json && total > 0 {
        writeln!(
            out,
            "worktrees use {} of [worktree] max_disk = {} in {}; `retry-run clean --ended` removes those of ended tasks (attempt commits stay)",
            human_bytes(total),
            o.config.worktree.max_disk.text,
            root.display()
        )?;
    }
    out.flush()?;
    Ok(if unreadable > 0 { exit::ENVIRONMENT } else { exit::OK })
}

/// The disk each task's worktree uses (a task run in lanes: its lanes'
/// worktrees together); `None` when it has none.
fn disk_used(store: &Store, root: &Path, tasks: &[String]) -> Vec<Option<u64>> {
    tasks
        .iter()
        .map(|t| {
            let mut names = vec![t.clone()];
            names.extend(lanes_of(store, t).iter().map(|(rec, _)| worktree_name(rec)));
            let sizes: Vec<u64> =
                names.iter().map(|n| root.join(n)).filter(|wt| wt.exists()).map(|wt| disk_usage(&wt)).collect();
            (!sizes.is_empty()).then(|| sizes.iter().sum())
        })
        .collect()
}

/// A task's state with its lanes' attempts and cost summed in, when it ran
/// in lanes.
fn with_lanes(mut s: TaskState, lanes: &[(String, TaskState)]) -> TaskState {
    if !lanes.is_empty() {
        s.last_attempt = lanes.iter().map(|(_, l)| l.last_attempt).sum();
        let costs: Vec<f64> = lanes.iter().filter_map(|(_, l)| l.cost_usd).collect();
        s.cost_usd = (!costs.is_empty()).then(|| costs.iter().sum());
        s.last_outcome = Some(format!("{} lanes", lanes.len()));
    }
    s
}

/// One task as a `--json` line; `share` is its worktree's percentage of
/// all worktrees' disk.
fn json_row(
    task: &str,
    label: &str,
    s: Option<&TaskState>,
    used: Option<u64>,
    share: Option<f64>,
    wt: &Path,
) -> serde_json::Value {
    json!({
        "task": task,
        "state": label,
        "attempts": s.map_or(0, |s| s.last_attempt),
        "base": s.and_then(|s| s.base.clone()),
        "last_outcome": s.and_then(|s| s.last_outcome.clone()),
        "last_event": s.and_then(|s| s.last_ts.clone()),
        "worktree": used.map(|_| wt.display().to_string()),
        "worktree_bytes": used,
        "worktree_share_pct": share.map(|p| (p * 10.0).round() / 10.0),
        "cost_usd": s.and_then(|s| s.cost_usd),
        "review": s.and_then(TaskState::review_label),
        "landed": s.and_then(|s| s.landed.as_ref()).map(|l| json!({
            "onto": l.onto, "commit": l.commit, "how": l.how.as_str(), "attempt": l.attempt,
        })),
    })
}

/// One task as a line of the table.
fn text_row(task: &str, label: &str, s: Option<&TaskState>, used: Option<u64>, share: Option<f64>) -> String {
    let base = s.and_then(|s| s.base.as_deref()).map_or("-".to_string(), |b| b.get(..12).unwrap_or(b).to_string());
    format!(
        "{task}\t{label}\tattempts {}\tbase {base}\tlast {}\tworktree {}\tcost {}\treview {}",
        s.map_or(0, |s| s.last_attempt),
        s.and_then(|s| s.last_outcome.as_deref()).unwrap_or("-"),
        match (used, share) {
            (Some(b), Some(p)) => format!("{} ({p:.0}%)", human_bytes(b)),
            _ => "none".to_string(),
        },
        s.and_then(|s| s.cost_usd).map_or("-".to_string(), |c| format!("${c:.4}")),
        review_text(s),
    )
}

/// How the task's result stands with its reviewers: `approved`,
/// `rejected`, `landed on main`, or `-`.
fn review_text(s: Option<&TaskState>) -> String {
    match (s.and_then(TaskState::review_label), s.and_then(|s| s.landed.as_ref())) {
        (Some("landed"), Some(l)) => format!("landed on {}", l.onto),
        (Some(label), _) => label.to_string(),
        (None, _) => "-".to_string(),
    }
}

/// The lanes of `task` with their states, when it ran in lanes.
fn lanes_of(store: &Store, task: &str) -> Vec<(String, TaskState)> {
    let Some(k) = store.read(task).ok().and_then(|v| state(&v.events).lanes).filter(|k| *k > 1) else {
        return Vec::new();
    };
    (1..=k)
        .map(|l| lane_record(task, l))
        .map(|rec| {
            let s = store.read(&rec).map(|v| state(&v.events)).unwrap_or_default();
            (rec, s)
        })
        .collect()
}
