//! The snapshot: the worktree as a commit on the base under
//! `refs/retry-run/<task>/<n>`, compared with the base; the attempt's files
//! and bounded diff recorded.

use super::RunError;
use super::attempt::{Attempt, Fixed};
use super::recorder::Recorder;
use crate::git::{Comparison, DiffDepth};
use crate::model::FileChange;
use crate::pathfmt::display;
use crate::record::Event;

/// Patch lines kept in an attempt's record (the context bounds it further).
const RECORD_DIFF_LINES: usize = 2000;

/// Attempt `a` as a commit, its change compared with the base.
pub(super) fn snapshot<'a>(t: &Fixed<'a>, rec: &mut Recorder, a: &mut Attempt) -> Result<Comparison<'a>, RunError> {
    t.progress.phase("snapshot");
    let (repo, id, n): (&'a crate::git::Repo, &str, u32) = (t.repo, &t.plan.id, a.n);
    let refname = crate::model::refs::attempt(id, n);
    // The index reads, and HEAD names a commit (the agent's own,
    // imported by now, or the base); else they are repaired and the
    // attempt charged.
    let (repaired, index) = repo.repair_worktree_git_keeping(id, t.base.oid)?;
    for part in repaired {
        a.cut.push(crate::model::ScopeFinding {
            path: part,
            old_path: None,
            reason: crate::model::ScopeReason::GitInternal,
            rule: None,
        });
    }
    let message = format!("retry-run {id} attempt {n}");
    // A tree deeper than git reads is cut where it is too deep (the
    // worktree is the attempt's, reset before the next), each directory
    // cut named as a violation of the attempt.
    let (snap, cut) = repo.snapshot_cutting(&t.wt, t.base.oid, &refname, &message, index)?;
    a.cut.extend(too_deep_findings(&cut));
    let commit = snap.commit;
    a.dirty_submodules = snap.dirty_submodules;
    let head = repo.resolve(&commit.to_string())?;
    let cmp = repo.compare_commits(&t.base, &head, DiffDepth::Patch { max_lines: RECORD_DIFF_LINES }, None)?;
    let record = &mut a.record;
    record.commit = Some(commit.to_string());
    fill(record, &cmp);
    let totals = cmp.changes.totals();
    rec.event(
        Some(n),
        Event::SnapshotTaken {
            commit: commit.to_string(),
            refname,
            files: totals.files as u64,
            additions: totals.additions as u64,
            deletions: totals.deletions as u64,
            paths: record.files.iter().map(|f| f.path.clone()).collect(),
        },
    )?;
    a.commit = Some(commit);
    Ok(cmp)
}

/// The cut directories named one by one in a record: the rest are
/// counted in the last one's rule (an agent may make a million).
const NAMED_CUTS: usize = 100;

/// The scope findings of the directories a snapshot cut (too deep).
fn too_deep_findings(cut: &[Vec<u8>]) -> Vec<crate::model::ScopeFinding> {
    let bound = format!("{} directory levels or more", crate::git::MAX_SCAN_DEPTH);
    let more = cut.len().saturating_sub(NAMED_CUTS);
    cut.iter()
        .take(NAMED_CUTS)
        .enumerate()
        .map(|(i, path)| crate::model::ScopeFinding {
            path: display(path).into_owned(),
            old_path: None,
            reason: crate::model::ScopeReason::TooDeep,
            rule: Some(if more > 0 && i + 1 == NAMED_CUTS {
                format!("{bound}; {more} more directories like it cut too")
            } else {
                bound.clone()
            }),
        })
        .collect()
}

/// The compared change's files and bounded patch into `record`.
pub(super) fn fill(record: &mut crate::model::AttemptRecord, cmp: &Comparison<'_>) {
    record.files = cmp
        .changes
        .changes
        .iter()
        .map(|c| FileChange {
            path: display(c.path()).into_owned(),
            old_path: c.old_path().map(|p| display(p).into_owned()),
            status: c.status.letter().to_string(),
            additions: c.additions,
            deletions: c.deletions,
            binary: c.binary,
        })
        .collect();
    let patch_lines: Vec<String> = cmp.patch.lines().map(str::to_string).collect();
    record.diff_omitted = cmp.patch_lines.saturating_sub(patch_lines.len());
    record.diff = patch_lines;
}

/// Patch lines kept of a self-check's change.
pub(super) const SELF_CHECK_DIFF_LINES: usize = RECORD_DIFF_LINES;

#[cfg(test)]
mod tests {
    #[test]
    fn past_a_hundred_cut_directories_the_rest_are_counted_not_named() {
        let cut: Vec<Vec<u8>> = (0..103).map(|i| format!("deep{i}").into_bytes()).collect();
        let found = super::too_deep_findings(&cut);
        assert_eq!(found.len(), 100);
        assert!(found.iter().all(|f| f.reason == crate::model::ScopeReason::TooDeep));
        assert_eq!(found[0].rule.as_deref(), Some("100 directory levels or more"));
        assert_eq!(found[99].path, "deep99");
        assert_eq!(found[99].rule.as_deref(), Some("100 directory levels or more; 3 more directories like it cut too"));
        assert!(super::too_deep_findings(&[]).is_empty());
    }
}
