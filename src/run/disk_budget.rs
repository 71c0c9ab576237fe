//! The disk budget of the repository's worktrees (`[worktree] max_disk`,
//! docs/worktrees.md): before a task's worktree is created, the worktrees
//! of ended tasks are removed, oldest first, until the new one fits; a
//! running or interrupted task's worktree is never touched. When that is
//! not enough, the task stops before its attempt starts.

use super::RunError;
use super::attempt::Fixed;
use super::recorder::Recorder;
use crate::git::nofollow_fs::disk_usage;
use crate::record::chain::parse_rfc3339;
use crate::record::state::status;
use crate::record::{Event, RecordError};
use crate::text::human_bytes;

/// A worktree the budget counts: its task, what it takes, and whether it
/// may go (its task ended and no process holds it), with when it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Held {
    pub task: String,
    pub bytes: u64,
    /// `Some(seconds since the epoch of its last event)` when it may go.
    pub ended_at: Option<u64>,
}

/// Which of `held` (indexes) go so that `need` more bytes fit under `max`:
/// ended tasks' worktrees, oldest first, only as many as needed. `Err`
/// with the bytes still missing when removing all of them is not enough.
/// Pure.
pub(super) fn evictions(held: &[Held], need: u64, max: u64) -> Result<Vec<usize>, u64> {
    let mut total: u64 = held.iter().map(|h| h.bytes).sum();
    let mut order: Vec<usize> = (0..held.len()).filter(|&i| held[i].ended_at.is_some()).collect();
    order.sort_by_key(|&i| (held[i].ended_at, held[i].task.clone()));
    let mut out = Vec::new();
    for i in order {
        if total.saturating_add(need) <= max {
            break;
        }
        total -= held[i].bytes;
        out.push(i);
    }
    let after = total.saturating_add(need);
    if after > max { Err(after - max) } else { Ok(out) }
}

/// Room for this task's new worktree under `[worktree] max_disk`: the
/// worktrees of ended tasks removed as [`evictions`] says, each
/// recorded in its task's log; `Err` (exit 3) before the attempt when
/// they are not enough.
pub(super) fn make_room(t: &Fixed<'_>) -> Result<(), RunError> {
    let max = t.plan.config.worktree.max_disk.clone();
    let need = t.repo.tracked_bytes();
    let held = held_worktrees(t);
    match evictions(&held, need, max.bytes) {
        Ok(gone) => {
            for i in gone {
                evict(t, &held[i], &max.text)?;
            }
            Ok(())
        }
        Err(short) => {
            let total: u64 = held.iter().map(|h| h.bytes).sum();
            let running: Vec<&str> = held.iter().filter(|h| h.ended_at.is_none()).map(|h| h.task.as_str()).collect();
            Err(RunError::DiskBudget(format!(
                "task {}: its worktree (about {}) would take retry-run's worktrees past [worktree] max_disk = {} \
                 by {} (they take {} now, {} of it for tasks that have not ended: {}); raise max_disk in \
                 retry-run.toml or remove worktrees with `retry-run clean <task>`",
                t.plan.id,
                human_bytes(need),
                max.text,
                human_bytes(short),
                human_bytes(total),
                human_bytes(held.iter().filter(|h| h.ended_at.is_none()).map(|h| h.bytes).sum()),
                if running.is_empty() { "none".to_string() } else { running.join(", ") },
            )))
        }
    }
}

/// Every other task's worktree under the root, with what it takes and
/// whether it may go.
fn held_worktrees(t: &Fixed<'_>) -> Vec<Held> {
    let Ok(entries) = std::fs::read_dir(&t.wt_root) else { return Vec::new() };
    let mut names: Vec<String> =
        entries.flatten().filter_map(|e| e.file_name().into_string().ok()).filter(|n| *n != t.plan.id).collect();
    names.sort();
    names
        .into_iter()
        .map(|task| {
            let bytes = disk_usage(&t.wt_root.join(&task));
            let ended_at = match status(t.store, &task) {
                Ok(Some(s)) if s.state.finished.is_some() && t.store.running(&task).is_none() => {
                    s.state.last_ts.as_deref().and_then(parse_rfc3339).or(Some(0))
                }
                _ => None,
            };
            Held { task, bytes, ended_at }
        })
        .collect()
}

/// Removes an ended task's worktree under its lock, recorded in its
/// log; a task another process took meanwhile is left.
fn evict(t: &Fixed<'_>, h: &Held, max: &str) -> Result<(), RunError> {
    let lock = match t.store.lock(&h.task) {
        Ok(l) => l,
        Err(RecordError::Locked { .. }) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    let path = t.wt_root.join(&h.task);
    t.repo.remove_worktree(&path, &h.task)?;
    let mut rec = Recorder { log: t.store.log(&h.task)?, json: false, label: None };
    let reason = format!("made room for task {} under [worktree] max_disk = {max}", t.plan.id);
    rec.event(None, Event::WorktreeRemoved { path: path.display().to_string(), bytes: h.bytes, reason })?;
    t.progress.say(&format!(
        "removed the worktree of ended task {} ({}) to stay under [worktree] max_disk = {max}",
        h.task,
        human_bytes(h.bytes)
    ));
    drop(lock);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(task: &str, bytes: u64, ended_at: Option<u64>) -> Held {
        Held { task: task.into(), bytes, ended_at }
    }

    #[test]
    fn the_oldest_ended_worktrees_go_first_and_only_as_many_as_needed() {
        let h = [held("new", 40, Some(300)), held("old", 40, Some(100)), held("mid", 40, Some(200))];
        assert_eq!(evictions(&h, 30, 200), Ok(vec![]));
        assert_eq!(evictions(&h, 50, 140), Ok(vec![1]));
        assert_eq!(evictions(&h, 50, 100), Ok(vec![1, 2]));
        assert_eq!(evictions(&h, 50, 60), Ok(vec![1, 2, 0]));
    }

    #[test]
    fn a_running_worktree_is_never_removed_and_a_shortfall_is_named() {
        let h = [held("running", 80, None), held("ended", 40, Some(1))];
        assert_eq!(evictions(&h, 10, 100), Ok(vec![1]));
        assert_eq!(evictions(&h, 30, 100), Err(10));
        assert_eq!(evictions(&[], 200, 100), Err(100));
    }
}
