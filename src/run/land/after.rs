//! Once the branch holds the result: the task's worktree removed (recorded
//! as `WorktreeRemoved`) and, unless `--keep-branch`, its branch
//! `retry-run/<task>`; `--push REMOTE` (`git push REMOTE BRANCH`); `--pr`
//! (`gh pr create`, its body the top of the task's report); then
//! `TaskLanded`, which a push or a pull request that failed does not
//! keep from being recorded (the land holds; the error says so, exit 3).

use std::path::{Path, PathBuf};

use super::{LandError, LandOptions, LandTarget};
use crate::git::Repo;
use crate::model::{Landed, refs};
use crate::record::{Event, Store};

/// What follows the branch's move; returns the land as recorded and
/// notes for the terminal.
pub(super) fn after(
    repo: &Repo,
    store: &Store,
    w: &LandTarget,
    opts: &LandOptions,
    gh: Option<&Path>,
    mut landed: Landed,
) -> Result<(Landed, Vec<String>), LandError> {
    let mut notes = Vec::new();
    let mut log = store.log(&w.task)?;
    if let Some((Event::TaskSucceeded { worktree, .. }, _)) = &w.state.finished
        && !worktree.is_empty()
        && Path::new(worktree).exists()
    {
        let path = PathBuf::from(worktree);
        let bytes = crate::git::nofollow_fs::disk_usage(&path);
        match repo.remove_worktree(&path, &w.task) {
            Ok(()) => {
                let e = Event::WorktreeRemoved { path: worktree.clone(), bytes, reason: "the task landed".into() };
                log.append(e.kind(), None, &e.fields())?;
                notes.push(format!("worktree {worktree} removed"));
            }
            Err(e) => notes.push(format!("its worktree stays at {worktree}: {e}")),
        }
    }
    let branch = refs::success_branch(&w.task);
    if !opts.keep_branch && branch != w.onto {
        if let Some(co) = repo.checked_out(&branch) {
            notes.push(format!("branch {branch} stays: it is checked out at {}", co.path.display()));
        } else {
            landed.branch_removed = repo.delete_branch(&branch)?;
            if landed.branch_removed {
                notes.push(format!("branch {branch} removed"));
            }
        }
    }
    let remote = opts.push.clone().or_else(|| opts.pr.then(|| "origin".to_string()));
    let mut failed = None;
    if let Some(remote) = remote {
        match repo.push_branch(&remote, &w.onto) {
            Ok(()) => landed.pushed = Some(remote),
            Err(e) => failed = Some(LandError::Push { remote, branch: w.onto.clone(), detail: e.to_string() }),
        }
    }
    if failed.is_none()
        && let Some(gh) = gh
    {
        match pull_request(repo, store, w, gh) {
            Ok(url) => landed.pr = Some(url),
            Err(e) => failed = Some(e),
        }
    }
    let e = Event::TaskLanded { landed: landed.clone() };
    log.append(e.kind(), Some(landed.attempt), &e.fields())?;
    match failed {
        Some(e) => Err(e),
        None => Ok((landed, notes)),
    }
}

/// `gh pr create` for the pushed branch: its title the task's, its body
/// the top of the task's report. Returns the URL gh printed.
fn pull_request(repo: &Repo, store: &Store, w: &LandTarget, gh: &Path) -> Result<String, LandError> {
    let body = report_summary(store, w)?;
    let file = store.task(&w.task).path().join("pull-request.md");
    crate::record::store::write_file(&file, body.as_bytes())?;
    let dir = repo.workdir().unwrap_or(repo.common_dir());
    let args: Vec<std::ffi::OsString> = vec![
        "pr".into(),
        "create".into(),
        "--title".into(),
        w.title.clone().into(),
        "--body-file".into(),
        file.clone().into_os_string(),
        "--head".into(),
        w.onto.clone().into(),
    ];
    let out = crate::process::output_with(&gh.to_string_lossy(), &args, dir, &[], &[], None)
        .map_err(|e| LandError::PullRequest { detail: format!("cannot start {}: {e}", gh.display()) })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let detail = err.trim().lines().last().unwrap_or("it failed").to_string();
        return Err(LandError::PullRequest { detail });
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    Ok(stdout.lines().rev().map(str::trim).find(|l| !l.is_empty()).unwrap_or_default().to_string())
}

/// The top of `retry-run report TASK`: the task, where it stands, and
/// what to look at first.
fn report_summary(store: &Store, w: &LandTarget) -> Result<String, LandError> {
    let verified = store.read(&w.task)?;
    let attempts = crate::record::state::attempts(store, &w.task, &verified.events);
    let task = super::super::recorded_task(store, &w.task)?;
    let text = crate::context::TaskText { id: w.task.clone(), title: task.title, text: task.text };
    let standing = crate::report::TaskStanding::Succeeded { attempt: w.attempt, branch: refs::success_branch(&w.task) };
    let verdicts = crate::report::Verdicts::default();
    let md =
        crate::report::render(&text, w.state.base.as_deref(), &attempts, &standing, &w.state.unconfined, &verdicts);
    Ok(crate::outcome::land::pr_body(&md))
}
