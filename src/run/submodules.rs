//! The worktree's submodules before each attempt (docs/repositories.md,
//! "Submodules"): put back as the base records them, and those the user's
//! checkout has initialised filled in from the checkout's own objects by
//! `git submodule update`, without the network and without running any
//! hook.

use std::path::Path;

use super::RunError;
use super::attempt::Fixed;
use crate::git::Submodule;
use crate::outcome::check::MissingSubmodule;

/// The task's worktree's submodules as the base records them: those the
/// checkout has, checked out at the base's commit and clean; the others
/// empty.
pub(super) fn submodules_ready(t: &Fixed<'_>) -> Result<(), RunError> {
    let subs = t.repo.submodules_at(t.base.oid)?;
    if subs.is_empty() {
        return Ok(());
    }
    for s in t.repo.reset_submodules(&t.wt, &t.plan.id, &subs)? {
        fill_from_checkout(&t.wt, s)?;
    }
    Ok(())
}

/// The base's submodules the task's worktree does not have (no repository
/// in their directory), and whether the checkout has each.
pub(super) fn missing_submodules(t: &Fixed<'_>) -> Result<Vec<MissingSubmodule>, RunError> {
    let subs = t.repo.submodules_at(t.base.oid)?;
    Ok(subs
        .into_iter()
        .filter(|s| std::fs::symlink_metadata(t.wt.join(&s.path).join(".git")).is_err())
        .map(|s| MissingSubmodule {
            in_checkout: t.repo.workdir().is_some_and(|w| w.join(&s.path).join(".git").exists()),
            path: s.path,
        })
        .collect())
}

/// `git submodule update` of one submodule in the worktree `wt`, its URL
/// the checkout's copy (given on the command line: no config is written),
/// checked out whatever `submodule.<name>.update` says.
fn fill_from_checkout(wt: &Path, s: &Submodule) -> Result<(), RunError> {
    let Some(source) = &s.source else { return Ok(()) };
    let name = &s.name;
    let args: Vec<String> = vec![
        "-C".into(),
        wt.display().to_string(),
        "-c".into(),
        "core.hooksPath=/dev/null".into(),
        "-c".into(),
        "core.fsmonitor=false".into(),
        "-c".into(),
        "protocol.file.allow=always".into(),
        "-c".into(),
        format!("submodule.{name}.url={}", source.display()),
        "-c".into(),
        format!("submodule.{name}.update=checkout"),
        "submodule".into(),
        "--quiet".into(),
        "update".into(),
        "--".into(),
        s.path.clone(),
    ];
    let out = crate::process::output("git", &args, None)
        .map_err(|e| RunError::io(format!("cannot run git for submodule `{}`", s.path), e))?;
    if !out.status.success() {
        return Err(RunError::Submodule(format!(
            "cannot fill in submodule `{}` of the worktree from your checkout ({}): {}",
            s.path,
            source.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}
