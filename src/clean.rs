//! What `clean` removes: the worktrees of one task, of all tasks, of the
//! tasks that ended, or of tasks idle for a while, and with `state` their
//! records too, with the task's refs (`refs/retry-run/<task>/...`: attempt
//! commits, the shared record and lease) and its success branch
//! `retry-run/<task>` (unless it is checked out). Without `state` no ref or
//! branch is removed, and a task another process runs is skipped.
//!
//! Each `clean` also prunes the checks' reuse store
//! (`<git-common-dir>/retry-run/reuse/`, `crate::outcome::reuse`): the
//! stored runs of tasks whose record is gone, those that do not read, and
//! with `--older-than` those written longer ago than that
//! ([`reuse::pruned`]), and the base's shared cache
//! (`<git-common-dir>/retry-run/baselines/`): its entries that no longer
//! read and, with `--older-than`, the old ones. Removing a stored run only
//! costs a run later.

use std::path::{Path, PathBuf};

use crate::git::{GitError, Repo, nofollow_fs};
use crate::outcome::check;
use crate::outcome::reuse::{self, Stored};
use crate::record::chain::parse_rfc3339;
use crate::record::state::state;
use crate::record::store::check_task_name;
use crate::record::{RecordError, Store};

/// Which tasks to clean.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CleanWhich {
    Task(String),
    All,
    /// Tasks whose last event is at least this many seconds old.
    IdleFor {
        secs: u64,
    },
    /// Tasks that ended (succeeded or escalated): their worktree only.
    Ended,
}

/// One thing `clean` did, told as it happens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Cleaned {
    /// Another process holds the task.
    Skipped {
        task: String,
        why: String,
    },
    /// A worktree removed, and what it took on disk.
    Worktree(PathBuf, u64),
    Record(PathBuf),
    /// The task's refs removed: the prefix and how many.
    Refs(String, usize),
    /// The task's success branch removed.
    Branch(String),
    /// The task's success branch kept: it is checked out.
    BranchKept(String),
    /// Stored check runs removed from the reuse store `dir`: how many, and
    /// what they took on disk.
    Reused {
        dir: PathBuf,
        runs: usize,
        bytes: u64,
    },
}

#[derive(Debug, thiserror::Error)]
pub enum CleanError {
    #[error(transparent)]
    Record(#[from] RecordError),
    #[error(transparent)]
    Git(#[from] GitError),
    #[error("{}: {source}", path.display())]
    Remove { path: PathBuf, source: std::io::Error },
}

impl CleanError {
    /// Whether the user's input, rather than the environment, is at fault.
    pub fn is_usage(&self) -> bool {
        match self {
            CleanError::Record(e) => e.is_usage(),
            CleanError::Git(e) => e.is_usage(),
            CleanError::Remove { .. } => false,
        }
    }
}

/// Removes what `which` names under `worktrees` (and the records, with
/// `records`), calling `told` after each removal. `now` is the time in
/// seconds since the epoch, against which idleness is measured.
pub(crate) fn clean(
    repo: &Repo,
    worktrees: &Path,
    which: &CleanWhich,
    remove_records: bool,
    now: u64,
    told: &mut dyn FnMut(Cleaned),
) -> Result<(), CleanError> {
    let store = Store::new(repo.common_dir());
    let tasks: Vec<String> = match which {
        CleanWhich::Task(t) => {
            check_task_name(t)?;
            vec![t.clone()]
        }
        CleanWhich::All | CleanWhich::IdleFor { .. } | CleanWhich::Ended => store.known_tasks(worktrees)?,
    };
    for task in tasks {
        let of = || store.read(&task).ok().map(|v| state(&v.events));
        match which {
            CleanWhich::IdleFor { secs } => {
                let last = of().and_then(|s| s.last_ts).and_then(|ts| parse_rfc3339(&ts));
                match last {
                    Some(t) if now.saturating_sub(t) >= *secs => {}
                    _ => continue,
                }
            }
            CleanWhich::Ended if of().is_none_or(|s| s.finished.is_none()) => continue,
            _ => {}
        }
        let lock = match store.lock(&task) {
            Ok(l) => l,
            Err(e @ RecordError::Locked { .. }) => {
                told(Cleaned::Skipped { task, why: e.to_string() });
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        let lanes = of().and_then(|s| s.lanes).unwrap_or(0);
        remove_worktrees((repo, &store, worktrees), &task, lanes, told)?;
        drop(lock);
        let record = store.task(&task);
        if remove_records && record.path().exists() {
            let path = record.path().to_path_buf();
            nofollow_fs::remove_any(&path).map_err(|source| CleanError::Remove { path: path.clone(), source })?;
            told(Cleaned::Record(path));
        }
        if remove_records {
            remove_refs(repo, &task, told)?;
        }
    }
    let older_than = match which {
        CleanWhich::IdleFor { secs } => Some(*secs),
        _ => None,
    };
    prune_reused(&store, older_than, now, told)?;
    prune_base_cache(&store, older_than, now, told)
}

/// The worktrees of `task` (whose lock is held): its own and its `lanes`
/// lanes' (`run --lanes`), each under its own lock; the one a killed run
/// left where it made the base's runs aside; and the one a land killed
/// during its checks left (`retry-run land`).
fn remove_worktrees(
    (repo, store, worktrees): (&Repo, &Store, &Path),
    task: &str,
    lanes: u32,
    told: &mut dyn FnMut(Cleaned),
) -> Result<(), CleanError> {
    fn remove(repo: &Repo, name: &str, wt: PathBuf, told: &mut dyn FnMut(Cleaned)) -> Result<(), CleanError> {
        if wt.exists() || repo.worktree_meta(name).exists() {
            let bytes = nofollow_fs::disk_usage(&wt);
            repo.remove_worktree(&wt, name)?;
            told(Cleaned::Worktree(wt, bytes));
        }
        Ok(())
    }
    let mut records = vec![task.to_string()];
    records.extend((1..=lanes).map(|l| crate::model::refs::lane_record(task, l)));
    for rec in &records {
        // The task's own lock is held already.
        let _lane_lock = match (rec != task).then(|| store.lock(rec)).transpose() {
            Ok(l) => l,
            Err(e @ RecordError::Locked { .. }) => {
                told(Cleaned::Skipped { task: rec.clone(), why: e.to_string() });
                continue;
            }
            Err(e) => return Err(e.into()),
        };
        for name in [rec.clone(), crate::model::refs::base_worktree(rec)] {
            remove(repo, &name, worktrees.join(crate::model::refs::worktree_name(&name)), told)?;
        }
    }
    let land = crate::model::refs::land_worktree(task);
    remove(repo, &land, worktrees.join(&land), told)
}

/// The runs of the reuse store that [`reuse::pruned`] removes: those of
/// tasks whose record is gone, those that do not read, and (`older_than`
/// seconds) those written longer ago than that.
fn prune_reused(
    store: &Store,
    older_than: Option<u64>,
    now: u64,
    told: &mut dyn FnMut(Cleaned),
) -> Result<(), CleanError> {
    prune_store(store.root.join(reuse::STORE_DIR), older_than, now, told, &mut |bytes| {
        serde_json::from_slice::<reuse::StoredRun>(bytes).ok().map(|e| record_kept(store, &e.task))
    })
}

/// The base's shared cache (`baselines/`): an entry serves every task and
/// later run on its base, so it goes only when it no longer reads as one
/// ([`check::base_cache_serves`]) or, with `older_than`, when it was written
/// longer ago than that; the task that made it may be gone.
fn prune_base_cache(
    store: &Store,
    older_than: Option<u64>,
    now: u64,
    told: &mut dyn FnMut(Cleaned),
) -> Result<(), CleanError> {
    #[derive(serde::Deserialize)]
    struct Keys {
        keys: u32,
    }
    #[derive(serde::Deserialize)]
    struct StoredRun {
        baseline: Keys,
    }
    prune_store(store.root.join(check::BASE_CACHE_DIR), older_than, now, told, &mut |bytes| {
        check::base_cache_serves(serde_json::from_slice::<StoredRun>(bytes).ok().map(|e| e.baseline.keys))
            .then_some(true)
    })
}

/// Removes the `<key>.json` files of `dir` that [`reuse::pruned`] removes,
/// `kept` telling of a file's bytes whether they read as an entry
/// (`Some`) and whether what it belongs to is still there, and tells how
/// many went and what they took. A file being written (not yet
/// `<key>.json`) is left alone.
fn prune_store(
    dir: PathBuf,
    older_than: Option<u64>,
    now: u64,
    told: &mut dyn FnMut(Cleaned),
    kept: &mut dyn FnMut(&[u8]) -> Option<bool>,
) -> Result<(), CleanError> {
    let Ok(entries) = std::fs::read_dir(&dir) else { return Ok(()) };
    let (mut runs, mut bytes) = (0usize, 0u64);
    for e in entries.flatten() {
        let path = e.path();
        if path.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
        if !meta.is_file() {
            continue;
        }
        let written = meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
        let age = written.map_or(0, |t| now.saturating_sub(t.as_secs()));
        let stored = match std::fs::read(&path).ok().and_then(|b| kept(&b)) {
            Some(kept) => Stored::Of { kept },
            None => Stored::Unreadable,
        };
        if !reuse::pruned(stored, age, older_than) {
            continue;
        }
        match std::fs::remove_file(&path) {
            Ok(()) => {
                runs += 1;
                bytes += meta.len();
            }
            // Removed meanwhile by another clean.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => return Err(CleanError::Remove { path, source }),
        }
    }
    if runs > 0 {
        told(Cleaned::Reused { dir, runs, bytes });
    }
    Ok(())
}

/// Whether the record of `task` (a task's, or a lane's `<task>/lanes/<n>`)
/// is still there.
fn record_kept(store: &Store, task: &str) -> bool {
    let owner = crate::model::refs::parse_lane(task).map_or(task, |l| l.task);
    check_task_name(owner).is_ok() && store.task(task).path().is_dir()
}

/// The refs of `task` (`refs/retry-run/<task>/`, its lanes' too) and its
/// success branch, unless that branch is checked out here.
fn remove_refs(repo: &Repo, task: &str, told: &mut dyn FnMut(Cleaned)) -> Result<(), CleanError> {
    let prefix = crate::model::refs::task_prefix(task);
    let refs = repo.refs_under(&prefix)?;
    for (name, _) in &refs {
        repo.delete_ref(name)?;
    }
    if !refs.is_empty() {
        told(Cleaned::Refs(prefix, refs.len()));
    }
    let branch = crate::model::refs::success_branch(task);
    let full = format!("refs/heads/{branch}");
    if repo.ref_target(&full).is_some() {
        if repo.head_branch().as_deref() == Some(branch.as_str()) {
            told(Cleaned::BranchKept(branch));
        } else {
            repo.delete_ref(&full)?;
            told(Cleaned::Branch(branch));
        }
    }
    Ok(())
}
