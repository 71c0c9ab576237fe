//! Preparing a task's worktree after it is created or reset: the files of
//! `worktree.include` and `.worktreeinclude` copied in from the user's
//! checkout, then `worktree.setup`.

use std::path::{Path, PathBuf};

use super::RunError;
use crate::git::nofollow_fs;
use crate::process::{self, Spec};
use crate::sandbox::Confinement;

/// How long `worktree.setup` may run.
const SETUP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30 * 60);

/// Copies `worktree.include` files from the user's checkout, then runs
/// `worktree.setup` (its failure is an environment error, exit 3),
/// confined by `setup` when given.
pub(crate) fn prepare(
    repo: &crate::git::Repo,
    config: &crate::config::Config,
    path: &Path,
    setup: Option<&Confinement>,
) -> Result<(), RunError> {
    if let Some(src_root) = repo.workdir() {
        let mut wanted: Vec<PathBuf> = Vec::new();
        for pattern in &config.worktree.include {
            wanted.extend(include_matches(src_root, pattern)?);
        }
        wanted.extend(worktreeinclude_matches(repo, src_root)?);
        wanted.sort();
        wanted.dedup();
        for rel in wanted {
            nofollow_fs::copy_in(&src_root.join(&rel), path, &rel)
                .map_err(|e| RunError::io(format!("cannot copy {} into the worktree", rel.display()), e))?;
        }
    }
    if let Some(cmd) = &config.worktree.setup {
        let mut spec = Spec::shell(cmd, path, SETUP_TIMEOUT);
        if let Some(c) = setup {
            let log = c.tmpdir.as_ref().map(|t| t.with_extension("network.jsonl"));
            spec.argv = c.argv(spec.argv, log.as_deref());
            spec.env = c.env();
            spec.unset = c.unset();
        }
        let f = process::run(&spec).map_err(|e| RunError::Setup(format!("worktree.setup: {e}")))?;
        if !f.success() {
            let text = String::from_utf8_lossy(&f.output.bytes()).into_owned();
            let tail: Vec<&str> = text.lines().rev().take(10).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            return Err(RunError::Setup(format!(
                "worktree.setup `{cmd}` failed in {} ({}); fix the setup command in retry-run.toml (it runs confined: `[worktree] setup_network` lists the hosts it may reach):\n{}",
                path.display(),
                if f.timed_out {
                    format!("TIMEOUT: still running after {}", crate::text::human_ms(SETUP_TIMEOUT.as_millis() as u64))
                } else {
                    crate::text::exit_text(f.exit_code, f.signal)
                },
                tail.join("\n")
            )));
        }
    }
    Ok(())
}

/// The files `.worktreeinclude` at the checkout's root names (gitignore
/// syntax, the convention of Claude Code and other worktree tools): files
/// git ignores that match it. A directory git ignores is entered only when
/// the file names it itself.
fn worktreeinclude_matches(repo: &crate::git::Repo, root: &Path) -> Result<Vec<PathBuf>, RunError> {
    let file = root.join(".worktreeinclude");
    if !file.is_file() {
        return Ok(Vec::new());
    }
    let mut b = ignore::gitignore::GitignoreBuilder::new(root);
    if let Some(e) = b.add(&file) {
        return Err(RunError::Include(format!("{}: {e}", file.display())));
    }
    let rules = b.build().map_err(|e| RunError::Include(format!("{}: {e}", file.display())))?;
    let listed = |p: &Path, dir: bool| rules.matched_path_or_any_parents(p, dir).is_ignore();
    Ok(walk_checkout(root, &|dir| !repo.is_ignored(dir) || listed(dir, true), &|f| {
        listed(f, false) && repo.is_ignored(f)
    }))
}

/// The files below `root` (not `.git`), relative to it, that `keep` takes,
/// entering only the directories `enter` takes.
fn walk_checkout(root: &Path, enter: &dyn Fn(&Path) -> bool, keep: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(root.join(&rel)) else { continue };
        for e in rd.flatten() {
            let child = rel.join(e.file_name());
            if child == Path::new(".git") {
                continue;
            }
            match e.file_type() {
                Ok(t) if t.is_dir() && enter(&child) => stack.push(child),
                Ok(t) if t.is_dir() => {}
                Ok(_) if keep(&child) => out.push(child),
                _ => {}
            }
        }
    }
    out
}

/// The files of the user's checkout an include pattern names: a plain path
/// is looked up directly; a glob walks the checkout (not `.git`).
fn include_matches(root: &Path, pattern: &str) -> Result<Vec<PathBuf>, RunError> {
    let bad = || {
        RunError::Include(format!("worktree.include {pattern:?}: use a path or glob relative to the repository root"))
    };
    if pattern.starts_with('/') || pattern.split('/').any(|c| c == "..") {
        return Err(bad());
    }
    if !pattern.contains(['*', '?', '[', '{']) {
        let p = PathBuf::from(pattern);
        return Ok(if std::fs::symlink_metadata(root.join(&p)).is_ok() { vec![p] } else { Vec::new() });
    }
    let glob = globset::GlobBuilder::new(pattern).literal_separator(true).build().map_err(|_| bad())?.compile_matcher();
    let mut out = walk_checkout(root, &|_| true, &|f| glob.is_match(f));
    out.sort();
    Ok(out)
}
