//! A check never changes what is judged (docs/honest-success.md, "Checks
//! that write"): after each run of a check on an attempt, the worktree is
//! compared with the attempt's commit (as the snapshot sees it: ignored
//! files do not count); what the check wrote is put back as the commit
//! has it, so that the next gate judges the commit, and the check fails
//! naming the files it changed.

use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use crate::git::{DiffDepth, Oid, Repo};
use crate::model::{CheckResult, EntryKind, Failure};

/// The files (worktree-relative, sorted) that differ between the worktree
/// at `wt` and `commit`, each put back as `commit` has it, and the
/// directories the check made too deep to read ([`crate::git::MAX_SCAN_DEPTH`]
/// levels or more), removed (with a trailing `/`). Empty when the check
/// wrote nothing the snapshot would see.
pub(crate) fn undo(repo: &Repo, wt: &Path, commit: Oid, task: &str) -> Result<Vec<String>, UndoError> {
    let scratch = format!("{}check-writes", crate::model::refs::task_prefix(task));
    let message = format!("retry-run {task}: the worktree after a check");
    // A tree the check made too deep to read is cut (it is no file of the
    // commit's) and named among its writes.
    let after = repo.snapshot_cutting(wt, commit, &scratch, &message, crate::git::IndexRead::default());
    let _ = repo.delete_ref(&scratch);
    let (after, cut) = match after.map_err(UndoError::Git) {
        Ok((a, cut)) => (a.commit, cut),
        // The check rewrote the worktree's link to its git directory: the
        // look at git's files after the checks halts the attempt and
        // names it.
        Err(_) if !link_intact(repo, wt, task) => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let cut: Vec<String> =
        cut.iter().filter(|p| counts(p, false)).map(|p| format!("{}/", String::from_utf8_lossy(p))).collect();
    if repo.commit_tree(after)? == repo.commit_tree(commit)? {
        return Ok(cut);
    }
    let (judged, now) = (resolve(repo, commit)?, resolve(repo, after)?);
    let cmp = repo.compare_commits(&judged, &now, DiffDepth::NameStatus, None)?;
    // Each path with what the commit has there (nothing for a new one).
    let mut paths: Vec<(Vec<u8>, Option<EntryKind>)> = Vec::new();
    for c in &cmp.changes.changes {
        let submodule = [&c.old, &c.new].into_iter().flatten().any(|s| s.kind == EntryKind::Submodule);
        if submodule {
            // A submodule's own changes are not the superproject's files.
            continue;
        }
        paths.extend(c.old.iter().map(|s| (s.path.clone(), Some(s.kind))));
        paths.extend(
            c.new.iter().filter(|n| c.old.as_ref().is_none_or(|o| o.path != n.path)).map(|s| (s.path.clone(), None)),
        );
    }
    paths.sort_by(|a, b| a.0.cmp(&b.0));
    paths.dedup_by(|a, b| a.0 == b.0);
    for (p, kind) in &paths {
        put_back(repo, wt, commit, p, *kind)?;
    }
    let mut wrote: Vec<String> = paths
        .iter()
        .filter(|(p, kind)| counts(p, kind.is_some()))
        .map(|(p, _)| String::from_utf8_lossy(p).into_owned())
        .collect();
    wrote.extend(cut);
    wrote.sort();
    Ok(wrote)
}

/// Whether the worktree's `.git` file still names the task's admin
/// directory.
fn link_intact(repo: &Repo, wt: &Path, task: &str) -> bool {
    let Ok(text) = std::fs::read_to_string(wt.join(".git")) else {
        return false;
    };
    let Some(named) = text.strip_prefix("gitdir: ").map(str::trim_end) else {
        return false;
    };
    let meta = repo.worktree_meta(task);
    let canon = |p: &Path| std::fs::canonicalize(p).ok();
    canon(Path::new(named)).is_some_and(|n| Some(n) == canon(&meta))
}

fn resolve(repo: &Repo, oid: Oid) -> Result<crate::git::Revision, UndoError> {
    Ok(repo.resolve(&oid.to_string())?)
}

/// Why what a check wrote could not be put back.
#[derive(Debug, thiserror::Error)]
pub(crate) enum UndoError {
    #[error(transparent)]
    Git(#[from] crate::git::GitError),
    #[error("{}: cannot put back what a check wrote: {source}", path.display())]
    Io { path: std::path::PathBuf, source: std::io::Error },
    #[error("{}: not a UTF-8 path", path.display())]
    NotUtf8 { path: std::path::PathBuf },
    #[error("{}: not in the attempt's commit", path.display())]
    NotInCommit { path: std::path::PathBuf },
}

/// `rel` as `commit` has it (a `kind` there), or nothing when it has none.
fn put_back(repo: &Repo, wt: &Path, commit: Oid, rel: &[u8], kind: Option<EntryKind>) -> Result<(), UndoError> {
    let path = Path::new(std::ffi::OsStr::from_bytes(rel));
    let failed = |source: std::io::Error| UndoError::Io { path: path.to_path_buf(), source };
    let bytes = match kind {
        None => return crate::git::nofollow_fs::remove_beneath(wt, path).map_err(failed),
        Some(_) => {
            let text = std::str::from_utf8(rel).map_err(|_| UndoError::NotUtf8 { path: path.to_path_buf() })?;
            repo.blob_at(commit, text).ok_or_else(|| UndoError::NotInCommit { path: path.to_path_buf() })?
        }
    };
    crate::git::nofollow_fs::clear_for_write(wt, path).map_err(failed)?;
    let full = wt.join(path);
    match kind {
        Some(EntryKind::Symlink) => {
            std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(&bytes), &full).map_err(failed)
        }
        _ => {
            use std::os::unix::fs::PermissionsExt;
            std::fs::write(&full, bytes).map_err(failed)?;
            let mode = if kind == Some(EntryKind::Executable) { 0o755 } else { 0o644 };
            std::fs::set_permissions(&full, std::fs::Permissions::from_mode(mode)).map_err(failed)
        }
    }
}

/// The directories tools fill with caches and builds of their own: a file
/// a check writes in one is put back as the commit has it without failing
/// the check, even when the attempt's commit holds it (an agent's own run
/// of the tests made the cache and the snapshot took it).
const CACHES: &[&str] = &[
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    ".coverage",
    ".tox",
    ".nox",
    ".eslintcache",
    "node_modules",
    "target",
    ".venv",
];

/// Lock files a build tool writes when the repository has none: a new one
/// does not fail the check, a committed one rewritten does.
const LOCKS: &[&str] = &["Cargo.lock", "uv.lock"];

/// Whether a check's write to `path` fails it (pure): a write in a tool's
/// cache never does; a lock file only when the commit has it; any other
/// file always.
pub(crate) fn counts(path: &[u8], in_commit: bool) -> bool {
    let mut parts = path.split(|&b| b == b'/');
    if parts.any(|part| CACHES.iter().any(|c| c.as_bytes() == part)) {
        return false;
    }
    let name = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
    in_commit || !LOCKS.iter().any(|l| l.as_bytes() == name)
}

/// The key of the failure a check's writes add.
pub(crate) const KEY: &str = crate::model::WROTE_WORKTREE_KEY;

/// `result` failed for writing `files` into the worktree: pure.
pub(crate) fn fail(result: &mut CheckResult, files: &[String]) {
    if files.is_empty() {
        return;
    }
    let named: Vec<String> = files.iter().map(|f| format!("`{f}`")).collect();
    result.passed = false;
    result.flaky = false;
    result.failures.push(Failure {
        key: format!("{KEY}: {}", files.join(", ")),
        label: format!(
            "the check changed {} in the worktree after the snapshot; retry-run put {} back, since it judges the attempt's commit: make that change in your own edit",
            crate::context::required::name_list(&named),
            if files.len() == 1 { "it" } else { "them" }
        ),
        test: false,
        target: false,
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::CheckKind;

    #[test]
    fn caches_of_tools_do_not_count_unless_committed() {
        assert!(!counts(b"pkg/__pycache__/m.cpython-311.pyc", false));
        assert!(!counts(b".pytest_cache/v/cache/nodeids", false));
        assert!(!counts(b"target/debug/.fingerprint/x", false));
        assert!(!counts(b"Cargo.lock", false));
        assert!(counts(b"Cargo.lock", true), "a committed lock file rewritten is a write");
        assert!(
            !counts(b"pkg/__pycache__/m.cpython-311.pyc", true),
            "a cache the agent's own test run left in its commit, rewritten by the check"
        );
        assert!(!counts(b"sub/Cargo.lock", false));
        assert!(counts(b"generated.py", false));
        assert!(counts(b"calc.py", true));
    }

    #[test]
    fn a_check_that_wrote_fails_naming_the_files() {
        let mut r = CheckResult::new("ruff", CheckKind::Lint, true);
        fail(&mut r, &[]);
        assert!(r.passed && r.failures.is_empty());
        fail(&mut r, &["calc.py".into(), "b.py".into()]);
        assert!(!r.passed);
        assert_eq!(r.failures.len(), 1);
        assert!(r.failures[0].label.contains("`calc.py` and `b.py`"), "{}", r.failures[0].label);
        assert!(r.failures[0].label.contains("your own edit"), "{}", r.failures[0].label);
    }
}
