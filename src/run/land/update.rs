//! The branch moved to the landed commit. A branch no checkout has is
//! moved by a compare-and-swap of its ref (it must still be at the tip
//! the land started from; atomic; a reflog line). A branch checked out in
//! the user's checkout or a linked worktree is moved exactly as `git merge
//! --ff-only` moves it there, and only when no file the move touches has
//! changes of the user's (or an untracked file in the way): else nothing
//! is changed. The user's uncommitted work is never touched.

use super::{LandError, LandTarget};
use crate::git::{GitError, Oid, Repo};

/// Refused (nothing changed) when the branch is checked out and a file
/// the land may touch (one the task's change touches: the landed commit
/// differs from the tip in those alone) is dirty there. Read before
/// anything is written, and again right before the branch moves.
pub(super) fn refuse_if_dirty(repo: &Repo, w: &LandTarget) -> Result<(), LandError> {
    let Some(co) = repo.checked_out(&w.onto) else { return Ok(()) };
    let files = repo.dirty_in_the_way(&co.path, w.base, w.attempt_commit)?;
    if files.is_empty() { Ok(()) } else { Err(LandError::Dirty { checkout: co.path, files }) }
}

/// `w.onto` moved from `w.tip` to `commit`.
pub(super) fn move_branch(repo: &Repo, w: &LandTarget, commit: Oid) -> Result<(), LandError> {
    let moved = || LandError::Moved { branch: w.onto.clone(), expected: w.tip.to_string() };
    match repo.checked_out(&w.onto) {
        None => {
            let why = format!("retry-run land: task {} attempt {}", w.task, w.attempt);
            repo.move_branch(&w.onto, w.tip, commit, &why).map_err(|e| match repo.branch_tip(&w.onto) {
                Some(now) if now != w.tip => moved(),
                _ => LandError::Git(e),
            })
        }
        Some(co) => {
            refuse_if_dirty(repo, w)?;
            if repo.branch_tip(&w.onto) != Some(w.tip) {
                return Err(moved());
            }
            repo.fast_forward_checkout(&co.path, commit).map_err(|e| match e {
                GitError::GitProgram { .. } if repo.branch_tip(&w.onto) != Some(w.tip) => moved(),
                e => LandError::Git(e),
            })
        }
    }
}
