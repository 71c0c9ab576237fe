//! The gates again, on a change replayed onto a branch that moved: the
//! scope (the task's rules on the change from the tip to the replayed
//! tree), then, when the config has checks, each check run confined in a
//! worktree of its own at the tip (what the replay is judged against) and
//! at the replayed tree, then the targets and test integrity. What they
//! found is kept in the land's own record, `tasks/<task>/lands/<k>/`
//! (laid out as an attempt's: `attempt.json`, `checks/<check>.out`, the
//! tip's runs in `base/<check>.out`), never among the task's attempts.
//! Without checks no worktree is made: the scope and test integrity read
//! trees.

use std::path::Path;

use super::super::gates::builtin::{IntegrityInput, targets, test_integrity};
use super::super::gates::checks::{base_run, run_and_judge};
use super::super::gates::scope_gate::change_findings;
use super::super::plan::Plan;
use super::super::{Options as RunOptions, plan, prepare, snapshot};
use super::LandError;
use crate::config::SubmodulePolicy;
use crate::git::{DiffDepth, Oid, Repo, Revision};
use crate::model::{AgentRun, AttemptRecord, Outcome, refs};
use crate::outcome;
use crate::outcome::check::{Baseline, Judging};
use crate::record::Store;
use crate::record::layout::{AttemptDir, file_name};
use crate::sandbox::{self, Effective};

/// Patch lines kept of the replayed change.
const DIFF_LINES: usize = 2000;

/// A change replayed onto a branch's tip, to be gated.
pub(super) struct Replayed<'a> {
    pub task: &'a str,
    pub attempt: u32,
    pub onto: &'a str,
    pub tip: Oid,
    /// The landed commit as it would be (its tree the replayed one).
    pub commit: Oid,
    /// `--config`.
    pub config: Option<&'a Path>,
}

/// What the gates said of a replay: the record (`attempt.json` of the
/// land's record, with its outcome classified as an attempt's would be),
/// one line per gate, and the land's number.
pub(super) struct Gated {
    pub record: AttemptRecord,
    pub said: Vec<String>,
    pub k: u32,
}

impl Gated {
    pub(super) fn passed(&self) -> bool {
        self.record.outcome == Outcome::Success
    }
}

/// Every gate on the replay `r`, recorded under `tasks/<task>/lands/<k>/`.
pub(super) fn gates(repo: &Repo, store: &Store, dir: &Path, r: &Replayed<'_>) -> Result<Gated, LandError> {
    let plan = plan_of(repo, store, dir, r)?;
    let k = next_land(store, r.task);
    let ldir = store.task(r.task).land(k);
    let tip = Revision { spec: r.onto.to_string(), oid: r.tip };
    let head = Revision { spec: r.commit.to_string(), oid: r.commit };
    let cmp = repo.compare_commits(&tip, &head, DiffDepth::Patch { max_lines: DIFF_LINES }, None)?;
    let mut record = AttemptRecord::new(r.attempt);
    // No agent ran: the change is the attempt's, as it ended well.
    record.agent = Some(AgentRun { exit_code: Some(0), ..AgentRun::default() });
    record.allow = plan.config.scope.allow.clone();
    record.commit = Some(r.commit.to_string());
    snapshot::fill(&mut record, &cmp);
    let mut said = Vec::new();
    if !record.files.is_empty() {
        let moves = plan.config.scope.submodules == SubmodulePolicy::Allow;
        let found = change_findings(&plan.rules, moves, &cmp, &[]);
        said.push(if found.violations.is_empty() {
            "scope ok".to_string()
        } else {
            format!(
                "scope VIOLATION: {}",
                found.violations.iter().map(|v| v.path.as_str()).collect::<Vec<_>>().join(", ")
            )
        });
        record.scope = found.violations;
        record.flagged = found.flagged;
    }
    if outcome::skip_checks(&record).is_none() {
        let baselines = if plan.config.checks.is_empty() {
            Vec::new()
        } else {
            checks_in_a_worktree(repo, &plan, &ldir, r, &mut record, &mut said)?
        };
        let integrity = test_integrity(
            repo,
            IntegrityInput {
                base: r.tip,
                head: &|p| repo.blob_at(r.commit, p),
                changes: &cmp.changes.changes,
                paths: &plan.test_paths,
                mode: plan.config.retry.test_weakening,
                checks: &record.checks,
                baselines: &baselines,
            },
        );
        let targets = targets(&plan.config.targets, &record.checks);
        for c in [targets, integrity].into_iter().flatten() {
            said.push(format!("{} {}", c.name, if c.passed { "passed" } else { "FAILED" }));
            record.checks.push(c);
        }
    }
    let classified = outcome::classify(&record);
    record.outcome = classified.outcome;
    record.reason = classified.reason;
    crate::record::store::write_json(&ldir.attempt_json(), &record)?;
    Ok(Gated { record, said, k })
}

/// The task's plan as a run of it would make it (its config, rules and
/// sandbox); the land runs no agent, so none is looked for.
fn plan_of(repo: &Repo, store: &Store, dir: &Path, r: &Replayed<'_>) -> Result<Plan, LandError> {
    let opts = RunOptions {
        id: Some(r.task.to_string()),
        config_path: r.config.map(Path::to_path_buf),
        agent: vec!["true".to_string()],
        ..RunOptions::default()
    };
    Ok(plan::take_task(repo, store, dir, &opts, None)?)
}

/// The number of the next land's record: one past the highest there.
fn next_land(store: &Store, task: &str) -> u32 {
    let lands = store.task(task).lands();
    let highest = std::fs::read_dir(lands)
        .map(|rd| rd.flatten().filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok()).max().unwrap_or(0))
        .unwrap_or(0);
    highest + 1
}

/// The configured checks, run confined in a worktree of the land's own:
/// first at the tip (the base they are judged against), then at the
/// replayed tree. The worktree is removed after, whatever happened.
fn checks_in_a_worktree(
    repo: &Repo,
    plan: &Plan,
    ldir: &AttemptDir,
    r: &Replayed<'_>,
    record: &mut AttemptRecord,
    said: &mut Vec<String>,
) -> Result<Vec<Baseline>, LandError> {
    let name = refs::land_worktree(r.task);
    let wt = repo.worktrees_root(&plan.config.worktree.root).join(&name);
    repo.create_worktree(&wt, &name, r.tip)?;
    let ran = run_checks(repo, plan, ldir, r, (&wt, &name), record, said);
    let _ = repo.remove_worktree(&wt, &name);
    let _ = std::fs::remove_dir_all(ldir.tmp());
    ran
}

fn run_checks(
    repo: &Repo,
    plan: &Plan,
    ldir: &AttemptDir,
    r: &Replayed<'_>,
    (wt, name): (&Path, &str),
    record: &mut AttemptRecord,
    said: &mut Vec<String>,
) -> Result<Vec<Baseline>, LandError> {
    let config = &plan.config;
    let tmp = ldir.tmp();
    let git_paths = sandbox::GitPaths {
        objects: repo.common_dir().join("objects"),
        admin: repo.worktree_meta(name),
        quarantine: tmp.join("objects"),
        submodule_objects: repo.worktree_module_objects(name),
    };
    for d in [&tmp, &git_paths.quarantine] {
        std::fs::create_dir_all(d).map_err(|source| LandError::Io { path: d.clone(), source })?;
    }
    let policy = sandbox::policy(wt, &tmp, config.sandbox.git, &git_paths, &plan.extra_writable);
    let tmpdir = (plan.confined != Effective::Off).then(|| tmp.clone());
    let confinement = super::super::confine::confinement_of(repo, plan, wt, tmpdir, policy, &git_paths);
    // `worktree.setup` confined as before an attempt: like a check, with
    // `worktree.setup_network`, unless the config asks otherwise.
    let setup = (config.worktree.setup.is_some()
        && !config.worktree.setup_unconfined
        && plan.confined != Effective::Off)
        .then(|| {
            let mut c = confinement.clone();
            c.policy.network = config.worktree.setup_network.clone();
            c
        });
    prepare::prepare(repo, config, wt, setup.as_ref())?;
    let env = confinement.env();
    let mut baselines = Vec::new();
    for check in &config.checks {
        if !check.baseline_mode(&config.retry).runs() {
            continue;
        }
        let out = ldir.path().join("base").join(format!("{}.out", file_name(&check.name)));
        let b = base_run(repo, check, (wt, &env, &confinement), &out, r.tip).map_err(|e| {
            LandError::Run(super::super::RunError::CheckStart { check: check.name.clone(), message: e.to_string() })
        })?;
        baselines.push(b);
    }
    repo.reset_worktree(wt, name, r.commit)?;
    prepare::prepare(repo, config, wt, setup.as_ref())?;
    let renames: Vec<(String, String)> =
        record.files.iter().filter_map(|f| Some((f.path.clone(), f.old_path.clone()?))).collect();
    for check in &config.checks {
        let base = baselines.iter().find(|b| b.check == check.name);
        let how = Judging { mode: check.baseline_mode(&config.retry), targets: &config.targets, renames: &renames };
        let read = |rel: &str| repo.blob_at(r.commit, rel);
        let result =
            run_and_judge(repo, check, (wt, &env, &confinement), &ldir.check_out(&check.name), (base, how, &read))
                .map_err(|e| {
                    LandError::Run(super::super::RunError::CheckStart {
                        check: check.name.clone(),
                        message: e.to_string(),
                    })
                })?;
        said.push(format!("{} {}", check.name, if result.passed { "passed" } else { "FAILED" }));
        record.checks.push(result);
    }
    Ok(baselines)
}
