//! Several tasks at once (`run` with several tasks and `-j N`,
//! docs/fleets.md): a queue worked by N threads, each task with its own
//! lock, worktree and record; at the end, a table and one exit code.

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::progress::Shared;
use super::{Ending, Options, Placement, history, task};
use crate::git::Repo;
use crate::record::{Event, Store};

/// One task of the queue: its id and how to run it.
#[derive(Debug, Clone)]
pub(crate) struct Queued {
    pub id: String,
    pub opts: Options,
}

/// How one task of the queue ended: its run's [`Ending`] (and whether the
/// task had ended in an earlier run), or why it did not run.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TaskEnd {
    Succeeded {
        earlier: bool,
    },
    Escalated {
        earlier: bool,
    },
    /// Another run holds the task (here, or through the remote's lease).
    Held(String),
    /// The environment failed (or the task's input was bad).
    Failed(String),
    /// SIGINT or SIGTERM stopped it (or kept it from starting).
    Interrupted(i32),
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TaskResult {
    pub id: String,
    pub end: TaskEnd,
    /// Attempts of the task's latest round, when it ended.
    pub attempts: Option<u32>,
    pub time: Duration,
}

/// Runs `tasks`, at most `jobs` at once, in their order, their lines on
/// `shared`; every task runs to its end whatever the others do.
pub(crate) fn run_all(dir: &Path, tasks: Vec<Queued>, jobs: usize, shared: &Shared) -> Vec<TaskResult> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<TaskResult>>> = Mutex::new(vec![None; tasks.len()]);
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, tasks.len().max(1)) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(q) = tasks.get(i) else { break };
                    let r = run_one(dir, q, shared);
                    if let Ok(mut all) = results.lock() {
                        all[i] = Some(r);
                    }
                }
            });
        }
    });
    results.into_inner().unwrap_or_default().into_iter().flatten().collect()
}

fn run_one(dir: &Path, q: &Queued, shared: &Shared) -> TaskResult {
    let started = Instant::now();
    let end = match task::run(dir, &q.opts, Placement::Among(shared.clone())) {
        Ok(r) if r.ending == Ending::Succeeded => TaskEnd::Succeeded { earlier: r.earlier },
        Ok(r) => TaskEnd::Escalated { earlier: r.earlier },
        Err(e) => match (e.held_by(), e.interrupted_by()) {
            (Some(by), _) => TaskEnd::Held(by),
            (None, Some(sig)) => TaskEnd::Interrupted(sig),
            (None, None) => TaskEnd::Failed(e.one_line()),
        },
    };
    let attempts = match end {
        TaskEnd::Succeeded { .. } | TaskEnd::Escalated { .. } => attempts(dir, &q.id),
        _ => None,
    };
    TaskResult { id: q.id.clone(), end, attempts, time: started.elapsed() }
}

/// The attempts of the task's latest round, from its record.
fn attempts(dir: &Path, id: &str) -> Option<u32> {
    let repo = Repo::find(dir).ok()?;
    let verified = Store::new(repo.common_dir()).read(id).ok()?;
    let state = history::state(&verified.events);
    match state.finished? {
        (Event::TaskSucceeded { .. }, Some(n)) => Some(n + 1 - state.first_attempt.min(n)),
        (Event::TaskEscalated { attempts, .. }, _) => Some(attempts),
        _ => None,
    }
}

/// The queue's exit code: 128 + the signal when SIGINT or SIGTERM stopped
/// a task, else 3 when the environment failed for a task, else 1 when a
/// task escalated, else 0. A task another run holds does not count: that
/// run reports it.
pub(crate) fn exit_code(results: &[TaskResult]) -> i32 {
    if let Some(sig) = results.iter().find_map(|r| match r.end {
        TaskEnd::Interrupted(sig) => Some(sig),
        _ => None,
    }) {
        128 + sig
    } else if results.iter().any(|r| matches!(r.end, TaskEnd::Failed(_))) {
        3
    } else if results.iter().any(|r| matches!(r.end, TaskEnd::Escalated { .. })) {
        1
    } else {
        0
    }
}

fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 60.0 { format!("{s:.1}s") } else { format!("{}m{:02}s", (s / 60.0) as u64, s as u64 % 60) }
}

/// The table printed at the end: task, outcome, attempts, time.
pub(crate) fn table(results: &[TaskResult]) -> String {
    let rows: Vec<[String; 4]> = results
        .iter()
        .map(|r| {
            let outcome = match &r.end {
                TaskEnd::Succeeded { earlier: false } => "succeeded".to_string(),
                TaskEnd::Succeeded { earlier: true } => "succeeded (earlier)".to_string(),
                TaskEnd::Escalated { earlier: false } => "escalated".to_string(),
                TaskEnd::Escalated { earlier: true } => "escalated (earlier)".to_string(),
                TaskEnd::Held(by) => format!("skipped: held by {by}"),
                TaskEnd::Failed(why) => format!("failed: {}", crate::text::clip(why, 120, "...")),
                TaskEnd::Interrupted(sig) => format!("interrupted ({})", crate::process::signal_name(*sig)),
            };
            let attempts = r.attempts.map_or("-".to_string(), |n| n.to_string());
            [r.id.clone(), outcome, attempts, seconds(r.time)]
        })
        .collect();
    let head = ["task".to_string(), "outcome".into(), "attempts".into(), "time".into()];
    let width = |i: usize| rows.iter().chain([&head]).map(|r| r[i].chars().count()).max().unwrap_or(0);
    let (w0, w1, w2) = (width(0), width(1), width(2));
    let mut out = String::new();
    for r in std::iter::once(&head).chain(&rows) {
        out.push_str(&format!("{:<w0$}  {:<w1$}  {:>w2$}  {}\n", r[0], r[1], r[2], r[3]));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(id: &str, end: TaskEnd) -> TaskResult {
        TaskResult { id: id.into(), end, attempts: Some(2), time: Duration::from_millis(41_200) }
    }

    #[test]
    fn exit_code_prefers_environment_failures_then_escalations() {
        let ok = result("a", TaskEnd::Succeeded { earlier: true });
        let esc = result("b", TaskEnd::Escalated { earlier: false });
        let held = result("c", TaskEnd::Held("m1 (pid 3)".into()));
        let failed = result("d", TaskEnd::Failed("disk full".into()));
        assert_eq!(exit_code(&[ok.clone(), held.clone()]), 0);
        assert_eq!(exit_code(&[ok.clone(), esc.clone()]), 1);
        assert_eq!(exit_code(&[esc.clone(), failed.clone(), ok]), 3);
        assert_eq!(exit_code(&[esc, failed, result("e", TaskEnd::Interrupted(15))]), 143);
    }

    #[test]
    fn table_aligns_columns() {
        let t = table(&[
            result("fix-login", TaskEnd::Succeeded { earlier: false }),
            result("x", TaskEnd::Held("m1 (pid 3)".into())),
        ]);
        assert_eq!(
            t,
            "task       outcome                      attempts  time\n\
             fix-login  succeeded                           2  41.2s\n\
             x          skipped: held by m1 (pid 3)         2  41.2s\n"
        );
    }
}
