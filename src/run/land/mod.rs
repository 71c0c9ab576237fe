//! `retry-run land TASK`: the task's result brought onto a branch (the
//! current one, or `--onto BRANCH`), with every gate run again on what
//! actually lands when the branch moved past the task's base. The
//! decisions are pure ([`crate::outcome::land`]); the git parts are in
//! `git/land.rs`. The steps, in order, each in its own file:
//!
//! 1. here, `which`: the task's result (its latest successful attempt),
//!    refused when there is none, when its latest verdict is a rejection
//!    or when it landed already; the branch and its tip; a land killed
//!    after the branch moved is recognised by the tip's trailers and only
//!    recorded;
//! 2. here, `landed_commit`: a branch still at the task's base gets one
//!    new commit with the attempt's tree (the gates ran on this base);
//!    else the change is replayed onto the tip (a three-way merge of
//!    trees) and a conflict becomes a rejection (`reject.rs`);
//! 3. `gates.rs`: on a replay, every gate again (scope, the checks judged
//!    against the tip, targets, test integrity) in a record of the land's
//!    own; a failure becomes a rejection (`reject.rs`);
//! 4. `update.rs`: the branch moved, atomically, or as `git merge
//!    --ff-only` would where it is checked out (refused, with nothing
//!    changed, when a file it touches is dirty);
//! 5. `after.rs`: the task's worktree and branch removed, `--push`,
//!    `--pr`, and `TaskLanded` recorded.

mod after;
mod error;
mod gates;
mod reject;
mod request;
mod update;

use std::path::Path;

use crate::git::{Oid, Repo};
use crate::model::{LandHow, Landed};
use crate::outcome::land::{self as decide, LandRoute, ResultStanding};
use crate::record::state::state;
use crate::record::store::check_task_name;
use crate::record::{Event, Store};

pub(crate) use error::LandError;
use request::LandTarget;
pub(crate) use request::{LandEnded, LandOptions};

/// `retry-run land`.
pub(crate) fn land(dir: &Path, opts: &LandOptions) -> Result<LandEnded, LandError> {
    check_task_name(&opts.task)?;
    let gh = match opts.pr {
        true => Some(crate::process::find_program("gh").ok_or(LandError::NoGh)?),
        false => None,
    };
    let repo = Repo::find(dir)?;
    let store = Store::new(repo.common_dir());
    // A task never recorded is said so, before its lock makes its directory.
    store.read(&opts.task)?;
    let _lock = store.lock(&opts.task)?;
    let w = which(&repo, &store, opts)?;
    if let Some(landed) = finish_interrupted(&repo, &w) {
        let (landed, notes) = after::after(&repo, &store, &w, opts, gh.as_deref(), landed)?;
        return Ok(LandEnded::Landed { landed: Box::new(landed), notes, completed: true });
    }
    // A dirty checkout refuses before anything is written or run.
    update::refuse_if_dirty(&repo, &w)?;
    let route = decide::route(&w.base.to_string(), &w.tip.to_string());
    let how = decide::how(route, opts.merge);
    let message = decide::message(&w.title, &w.task, w.attempt, &w.record_sha256);
    let (commit, gates) = match route {
        LandRoute::Direct => {
            let tree = repo.tree_of(w.attempt_commit)?;
            (repo.land_commit(tree, &[w.tip], &message)?, Vec::new())
        }
        LandRoute::Replay => match repo.replay(w.base, w.tip, w.attempt_commit, &w.onto)? {
            crate::git::Replay::Conflicts { paths, hunks } => {
                let review = reject::conflict(&w, &paths, &hunks);
                reject::record(&store, &w.task, &review)?;
                let text = reject::told(&w, &review, &format!("the replay onto {} conflicts", w.onto));
                return Ok(LandEnded::Rejected { text });
            }
            crate::git::Replay::Clean { tree } => {
                if tree == repo.tree_of(w.tip)? {
                    return Err(LandError::Refused {
                        message: format!("{} already holds task {}'s change: there is nothing to land", w.onto, w.task),
                        hint: format!("`git log {}` shows it", w.onto),
                    });
                }
                let parents = decide::parents(how, &w.tip, &w.attempt_commit);
                let commit = repo.land_commit(tree, &parents, &message)?;
                let replayed = gates::Replayed {
                    task: &w.task,
                    attempt: w.attempt,
                    onto: &w.onto,
                    tip: w.tip,
                    commit,
                    config: opts.config_path.as_deref(),
                };
                let gated = gates::gates(&repo, &store, dir, &replayed)?;
                if !gated.passed() {
                    let review = reject::gates_failed(&w, &gated);
                    reject::record(&store, &w.task, &review)?;
                    let what = format!("the gates failed on the replay onto {} ({})", w.onto, gated.record.reason);
                    let text = reject::told(&w, &review, &what);
                    return Ok(LandEnded::Rejected { text });
                }
                (commit, gated.said)
            }
        },
    };
    update::move_branch(&repo, &w, commit)?;
    let landed = Landed {
        onto: w.onto.clone(),
        from: w.tip.to_string(),
        commit: commit.to_string(),
        how,
        attempt: w.attempt,
        attempt_commit: w.attempt_commit.to_string(),
        replayed: route == LandRoute::Replay,
        gates,
        record_sha256: w.record_sha256.clone(),
        pushed: None,
        pr: None,
        branch_removed: false,
    };
    let (landed, notes) = after::after(&repo, &store, &w, opts, gh.as_deref(), landed)?;
    Ok(LandEnded::Landed { landed: Box::new(landed), notes, completed: false })
}

/// The task's result and the branch: refused when the result may not land.
fn which(repo: &Repo, store: &Store, opts: &LandOptions) -> Result<LandTarget, LandError> {
    let task = opts.task.clone();
    let verified = super::start::verified_log(store, &task)?;
    let st = state(&verified.events);
    let refused = decide::refuse(ResultStanding {
        task: &task,
        result: st.result_attempt(),
        review: st.review_label(),
        landed: st.landed.as_ref(),
    });
    if let Some(r) = refused {
        return Err(LandError::Refused { message: r.message, hint: r.hint });
    }
    let (attempt, commit) = match &st.finished {
        Some((Event::TaskSucceeded { commit, .. }, Some(at))) => (*at, commit.clone()),
        _ => {
            return Err(LandError::Refused {
                message: format!("task {task} has no result to land"),
                hint: String::new(),
            });
        }
    };
    let bad_commit = |what: &str, c: &str| LandError::Refused {
        message: format!("task {task}'s {what} {c} is not in this repository"),
        hint: format!("fetch it, or `retry-run pull {task}` from the machine that ran it"),
    };
    let attempt_commit: Oid =
        commit.parse().ok().filter(|c| repo.has_object(*c)).ok_or_else(|| bad_commit("result", &commit))?;
    let base_text = st.base.clone().unwrap_or_default();
    let base: Oid =
        base_text.parse().ok().filter(|c| repo.has_object(*c)).ok_or_else(|| bad_commit("base", &base_text))?;
    let onto = match &opts.onto {
        Some(b) => b.strip_prefix("refs/heads/").unwrap_or(b).to_string(),
        None => repo.head_branch().ok_or(LandError::Detached)?,
    };
    let tip = repo.branch_tip(&onto).ok_or_else(|| LandError::NoBranch { branch: onto.clone() })?;
    let title = super::recorded_task(store, &task)?.title;
    let events = store.task(&task).events();
    let bytes = std::fs::read(&events).map_err(|source| LandError::Io { path: events.clone(), source })?;
    Ok(LandTarget {
        task,
        title,
        attempt,
        attempt_commit,
        base,
        onto,
        tip,
        record_sha256: crate::hash::sha256_hex(&bytes),
        state: st,
    })
}

/// A land of this result that moved the branch and was killed before it
/// was recorded: the tip's trailers name the task and the attempt. The
/// land as it can be read back from the tip.
fn finish_interrupted(repo: &Repo, w: &LandTarget) -> Option<Landed> {
    let t = decide::landed_already(&repo.commit_message(w.tip)?, &w.task, w.attempt)?;
    let parents: Vec<String> = repo.parents(w.tip).iter().map(Oid::to_string).collect();
    let how = decide::how_it_landed(&parents, &w.base.to_string());
    Some(Landed {
        onto: w.onto.clone(),
        from: parents.first().cloned().unwrap_or_default(),
        commit: w.tip.to_string(),
        how,
        attempt: w.attempt,
        attempt_commit: w.attempt_commit.to_string(),
        replayed: how != LandHow::FastForward,
        gates: Vec::new(),
        record_sha256: t.record_sha256,
        pushed: None,
        pr: None,
        branch_removed: false,
    })
}
