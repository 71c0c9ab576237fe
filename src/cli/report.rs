//! `retry-run report <task>`: Markdown for the human who takes the task.

use std::io::Write;
use std::path::Path;

use crate::record::Event;
use clap::Args;

use super::{CliError, exit};
use crate::context::TaskText;
use crate::git::Repo;
use crate::model::Outcome;
use crate::model::refs;
use crate::record::Store;
use crate::record::chain::LogLine;
use crate::record::state::{attempts, state};
use crate::record::store::check_record_id;
use crate::report::{LaneSection, TaskStanding, Verdicts, WorktreeNow, lanes_section, render, worktree_section};
use crate::run::recorded_task;

/// A Markdown report of a task: attempts, reviews, the land, what to do.
///
/// Every attempt, every review of its results in order, the land, and what
/// to look at first (after a verdict: what to do next).
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// The task id (as `retry-run status` lists them).
    pub task: String,
}

pub(super) fn run(dir: &Path, args: ReportArgs) -> Result<i32, CliError> {
    check_record_id(&args.task)?;
    let repo = Repo::find(dir)?;
    let store = Store::new(repo.common_dir());
    let verified = store.read(&args.task)?;
    let task = recorded_task(&store, &args.task)?;
    let state = state(&verified.events);
    let attempts = attempts(&store, &args.task, &verified.events);
    let standing = match &state.finished {
        Some((Event::TaskSucceeded { branch, .. }, at)) => {
            TaskStanding::Succeeded { attempt: at.unwrap_or(0), branch: branch.clone() }
        }
        Some((Event::TaskEscalated { reason, .. }, _)) => TaskStanding::Escalated { reason: reason.clone() },
        _ => match &state.stopped {
            Some((attempt, reason)) => TaskStanding::Stopped { attempt: *attempt, reason: reason.clone() },
            None => TaskStanding::Open,
        },
    };
    let text = TaskText { id: args.task.clone(), title: task.title, text: task.text };
    let verdicts = Verdicts { reviews: &state.reviews, landed: state.landed.as_ref() };
    let mut md = render(&text, state.base.as_deref(), &attempts, &standing, &state.unconfined, &verdicts);
    if let Some(k) = state.lanes.filter(|k| *k > 1) {
        md.push_str(&lanes(&store, &args.task, k, &verified.events));
    }
    // Interrupted before its snapshot: what its worktree holds is told.
    let interrupted =
        attempts.last().is_some_and(|a| a.interrupted && a.commit.is_none() && a.outcome == Outcome::Crash);
    if standing == TaskStanding::Open && interrupted {
        let now = worktree_now(dir, &args.task, state.base.as_deref());
        md.push_str(&worktree_section(now.as_ref()));
    }
    let mut out = std::io::stdout().lock();
    out.write_all(md.as_bytes())?;
    out.flush()?;
    Ok(exit::OK)
}

/// The lanes of task `id` side by side, from their records and the
/// task's `LaneEnded` and `LaneChosen`.
fn lanes(store: &Store, id: &str, k: u32, events: &[LogLine]) -> String {
    let typed: Vec<Event> = events.iter().filter_map(LogLine::typed).collect();
    let views: Vec<LaneSection> = (1..=k)
        .map(|lane| {
            let rid = refs::lane_record(id, lane);
            let lane_attempts = store.read(&rid).map(|v| attempts(store, &rid, &v.events)).unwrap_or_default();
            let ended = typed.iter().rev().find_map(|e| match e {
                Event::LaneEnded { lane: l, ending, agent, .. } if *l == lane => Some((ending.clone(), agent.clone())),
                _ => None,
            });
            let (ending, agent) = ended.unwrap_or(("unfinished".into(), "?".into()));
            LaneSection { lane, agent, ending, attempts: lane_attempts }
        })
        .collect();
    let chosen = typed.iter().rev().find_map(|e| match e {
        Event::LaneChosen { lane, why, .. } => Some((*lane, why.as_str())),
        _ => None,
    });
    lanes_section(&views, chosen)
}

/// The task's worktree and what it holds against `base`, when it exists.
fn worktree_now(dir: &Path, task: &str, base: Option<&str>) -> Option<WorktreeNow> {
    let root = match super::repo_args::open(dir, None) {
        Ok(o) => o.repo.worktrees_root(&o.config.worktree.root),
        Err(_) => Repo::find(dir).ok()?.worktrees_root(&crate::config::Config::default().worktree.root),
    };
    let wt = root.join(refs::worktree_name(task));
    if !wt.is_dir() {
        return None;
    }
    let repo = Repo::find(&wt).ok()?;
    let base = repo.resolve(base?).ok()?;
    let cmp = repo.compare_worktree(&base, crate::git::DiffDepth::NameStatus, None).ok()?;
    let changes = cmp
        .changes
        .changes
        .iter()
        .map(|c| (c.status.letter().to_string(), String::from_utf8_lossy(c.path()).into_owned()))
        .collect();
    Some(WorktreeNow { path: wt.display().to_string(), changes })
}
