//! The checks on the base (docs/honest-success.md, "The base"): each once
//! per task and base, from the shared cache in the record or run in the
//! worktree before the first attempt's agent. With `fail_fast =
//! "targets"`, a test check that can run the task's targets alone runs
//! only them there, and its full suite waits until an attempt first
//! reaches its full stage ([`full_runs`]): an attempt that fails on its
//! targets never waits for a suite it does not need.

use super::super::RunError;
use super::super::attempt::{Attempt, Fixed};
use super::super::recorder::Recorder;
use super::super::worktree::back_to_base;
use super::base_aside::{Aside, BaseRun, Done, stored};
use super::checks::{as_map, import_root_env, inherited, parse, relativize, run_once, with};
use super::{baseline_cache, received};
use crate::config::CheckConfig;
use crate::judge::test_results;
use crate::judge::test_results::runners;
use crate::outcome::check::Baseline;
use crate::process::Finished;
use crate::record::Event;
use crate::record::event::BaselineCache;

/// The checks on the base, once per task and base (cached in the
/// record), before the first attempt's agent; then the worktree back at
/// the base, unless it is kept.
///
/// Two things found there stop the run before the agent, as failures of
/// the environment or of the task, not the agent's: a check whose
/// program cannot start (exit 3) and a target no check reports (exit
/// 2, unless `--allow-new-target`). The attempt is closed as aborted.
pub(in crate::run) fn baseline_once(
    t: &Fixed<'_>,
    rec: &mut Recorder,
    (baselines, aside): (&mut Option<Vec<Baseline>>, &mut Option<Aside>),
    a: &Attempt,
    kept: bool,
) -> Result<(), RunError> {
    let config = &t.plan.config;
    let runs = config.checks.iter().any(|c| c.baseline_mode(&config.retry).runs());
    if !runs || baselines.is_some() {
        return Ok(());
    }
    t.progress.phase("checks on the base");
    let (found, tests, waiting) = baseline(t, rec, a)?;
    let on_the_base = targets_on_the_base(t, &found, &tests);
    *baselines = Some(found);
    if let Err(e) = on_the_base {
        rec.event(Some(a.n), Event::AttemptAborted { reason: e.to_string(), phase: "checks".into() })?;
        t.progress.done("aborted: a target no check reports on the base");
        t.publish()?;
        return Err(e);
    }
    if !waiting.is_empty() {
        *aside = Some(Aside::start(t, a, waiting)?);
    }
    if !kept {
        back_to_base(t, a.n)?;
    }
    Ok(())
}

/// Each check on the base, from the cache in
/// `tasks/<task>/baseline/<base>/<check>.json` or run and cached; a test
/// check whose full run may wait ([`may_wait`]) runs only the task's
/// targets, kept as its base while no attempt has reached its full suite.
///
/// With each, the tests its run named (`None` from a cache entry that
/// did not keep them); and the checks whose full run waits, with their
/// shared cache keys.
#[allow(clippy::type_complexity)]
fn baseline(
    t: &Fixed<'_>,
    rec: &mut Recorder,
    a: &Attempt,
) -> Result<(Vec<Baseline>, Vec<Option<test_results::TestRun>>, Vec<(CheckConfig, String)>), RunError> {
    let mut out = Vec::new();
    let mut seen = Vec::new();
    let mut waiting = Vec::new();
    let checks = t.plan.config.checks.clone();
    for check in &checks {
        if !check.baseline_mode(&t.plan.config.retry).runs() {
            continue;
        }
        let cached = cached(t, a, check)?;
        if cached.1.is_none()
            && may_wait(t)
            && let Some((b, tests)) = targets_alone(t, rec, a, check)?
        {
            out.push(b);
            seen.push(Some(tests));
            waiting.push((check.clone(), cached.0));
            continue;
        }
        let (b, tests) = one(t, rec, a, check, cached)?;
        out.push(b);
        seen.push(tests);
    }
    Ok((out, seen, waiting))
}

/// Whether a test check's full run on the base may wait, made aside
/// ([`Aside`]): only with `fail_fast = "targets"` (without it every
/// attempt runs every suite), targets given, and a worktree the aside can
/// make alike ([`super::base_aside::possible`]).
fn may_wait(t: &Fixed<'_>) -> bool {
    let config = &t.plan.config;
    config.retry.fail_fast == crate::config::FailFast::Targets
        && !config.targets.is_empty()
        && super::base_aside::possible(t)
}

/// What `check` receives in the task's worktree, with the runner
/// variables `added` ([`received`]).
fn seen_by(t: &Fixed<'_>, a: &Attempt, check: &CheckConfig, added: &[(String, String)]) -> received::ReceivedKeys {
    let keyed = baseline_cache::env_of(&with(added, &import_root_env(&t.wt)), &t.wt);
    received::seen(check, &t.wt, &keyed, &a.confinement, &t.plan.id)
}

/// The shared cache's key for `check` on the base (what it receives
/// included, [`received`]), and its entry there (none with
/// `--fresh-baseline`).
fn cached(
    t: &Fixed<'_>,
    a: &Attempt,
    check: &CheckConfig,
) -> Result<(String, Option<baseline_cache::CachedBaseline>), RunError> {
    let wt = &t.wt;
    let tree = t.repo.commit_tree(t.base.oid)?.to_string();
    let added = runners::runner_env(&inherited(&a.confinement.env(), &a.confinement.unset()));
    // The key: what retry-run gives the check, the base's tree,
    // the check and the programs it starts.
    let keyed = baseline_cache::env_of(&with(&added, &import_root_env(wt)), wt);
    let seen = received::seen(check, wt, &keyed, &a.confinement, &t.plan.id);
    let key = baseline_cache::key(&baseline_cache::parts(check, tree, keyed, &seen.digest));
    let entry = if t.plan.fresh_baseline { None } else { baseline_cache::read(&t.store.root, &key) };
    Ok((key.clone(), entry.filter(|e| e.baseline.run == check.run)))
}

/// `check` on the base with only the task's targets selected (all of
/// them: which check reports which is not known yet), recorded with
/// `part: "targets"`. `None` when its command cannot select them, or when
/// the run does not report every target (another runner's id, a typo):
/// then its full run is made at once, as without the wait.
fn targets_alone(
    t: &Fixed<'_>,
    rec: &mut Recorder,
    a: &Attempt,
    check: &CheckConfig,
) -> Result<Option<(Baseline, test_results::TestRun)>, RunError> {
    let (env, unset) = (a.confinement.env(), a.confinement.unset());
    let inherited = inherited(&env, &unset);
    let targets = &t.plan.config.targets;
    let scripts = super::checks::package_scripts(&t.wt);
    let Some(sel) = super::checks::selection(check, (&inherited, &scripts), targets.clone()) else { return Ok(None) };
    let (base, wt) = (t.base.oid, &t.wt);
    let added = runners::runner_env(&inherited);
    let narrowed = CheckConfig { run: sel.run.clone().unwrap_or_else(|| check.run.clone()), ..check.clone() };
    let out_file = t.store.task(&t.plan.id).baseline_out(base, &format!("{}.targets", check.name));
    let f = run_once(&narrowed, wt, &with(&with(&env, &added), &sel.env), &out_file, &a.confinement);
    super::super::interrupt::stop_if_interrupted(&t.plan.id)?;
    let f = f.map_err(|e| RunError::CheckStart { check: check.name.clone(), message: e.to_string() })?;
    stop_if_the_check_cannot_start(t, rec, a.n, check, &f)?;
    let p = parse(check, &f, wt, t.repo, &|rel| std::fs::read(wt.join(rel)).ok());
    // Each target failing there, as the attempt's targets stage selects them.
    let all_fail = targets.iter().all(|x| p.failures.iter().any(|f| f.test && test_results::is_target(&f.key, x)));
    if p.timed_out || p.runner_failure.is_some() || !all_fail {
        return Ok(None);
    }
    let mut b = Baseline::of(&check.name, &check.run, base.to_string(), &p);
    b.targets_only = true;
    rec.event(
        Some(a.n),
        Event::BaselineChecked {
            check: b.check.clone(),
            base: b.base.clone(),
            passed: b.passed,
            failures: b.failures.iter().map(|f| f.key.clone()).collect(),
            env: Some(as_map(&with(&added, &sel.env))),
            cache: None,
            part: Some(crate::outcome::schedule::RunOfCheck::Targets.as_str().to_string()),
        },
    )?;
    Ok(Some((b, p.tests)))
}

/// `check`'s full run on the base: the cache's entry (`cached`), or run in
/// the worktree (at the base) and stored in the cache and the reuse store;
/// recorded. With it, the tests the run named.
fn one(
    t: &Fixed<'_>,
    rec: &mut Recorder,
    a: &Attempt,
    check: &CheckConfig,
    (key, cached): (String, Option<baseline_cache::CachedBaseline>),
) -> Result<(Baseline, Option<test_results::TestRun>), RunError> {
    let (base, wt) = (t.base.oid, &t.wt);
    let dir = t.store.task(&t.plan.id);
    let env = a.confinement.env();
    let added = runners::runner_env(&inherited(&env, &a.confinement.unset()));
    let (b, cache, tests) = match cached {
        Some(e) => {
            let b = Baseline { check: check.name.clone(), base: base.to_string(), ..e.baseline };
            (b, BaselineCache { key, hit: true, from: Some(e.task), environment: e.environment }, e.tests)
        }
        None => {
            let out_file = dir.baseline_out(base, &check.name);
            let f = run_once(check, wt, &with(&env, &added), &out_file, &a.confinement);
            // A check stopped by an interruption says nothing of the base.
            super::super::interrupt::stop_if_interrupted(&t.plan.id)?;
            let f = f.map_err(|e| RunError::CheckStart { check: check.name.clone(), message: e.to_string() })?;
            let p = parse(check, &f, wt, t.repo, &|rel| std::fs::read(wt.join(rel)).ok());
            stop_if_the_check_cannot_start(t, rec, a.n, check, &f)?;
            let at = (t.store.root.as_path(), t.plan.id.as_str(), t.plan.config.retry.reuse);
            let seen = seen_by(t, a, check, &added);
            let ran = BaseRun { finished: &f, parsed: &p, added: &added, key: &key, seen: &seen };
            let b = stored(t.repo, at, check, (base, wt), &ran)?;
            // A run cut short names only some of the base's tests.
            let tests = (!p.timed_out).then(|| p.tests.clone());
            (b, BaselineCache { key, hit: false, from: None, environment: Some(seen.summary) }, tests)
        }
    };
    recorded(t, rec, a.n, &b, &added, cache)?;
    Ok((b, tests))
}

/// A full run on the base, kept in the task's record
/// (`baseline/<base>/<check>.json`) and recorded as `BaselineChecked`
/// under attempt `n`.
fn recorded(
    t: &Fixed<'_>,
    rec: &mut Recorder,
    n: u32,
    b: &Baseline,
    added: &[(String, String)],
    cache: BaselineCache,
) -> Result<(), RunError> {
    crate::record::store::write_json(&t.store.task(&t.plan.id).baseline_cache(&b.base, &b.check), b)?;
    rec.event(
        Some(n),
        Event::BaselineChecked {
            check: b.check.clone(),
            base: b.base.clone(),
            passed: b.passed,
            failures: b.failures.iter().map(|f| f.key.clone()).collect(),
            env: Some(as_map(added)),
            cache: Some(cache),
            part: None,
        },
    )?;
    Ok(())
}

/// A full run made aside ([`Aside`]), read by attempt `n`'s stage:
/// recorded as if made then, and put in `baselines` in place of the
/// check's targets-only run.
pub(in crate::run) fn took_from_aside(
    t: &Fixed<'_>,
    rec: &mut Recorder,
    n: u32,
    done: Done,
    baselines: &mut [Baseline],
) -> Result<(), RunError> {
    recorded(t, rec, n, &done.baseline, &done.added, done.cache)?;
    if let Some(slot) = baselines.iter_mut().find(|x| x.check == done.baseline.check) {
        *slot = done.baseline;
    }
    Ok(())
}

/// A check on the base whose program could not start (126 or 127, and
/// the shell says which program): the environment's failure, named
/// with the shell's line, which stops the run (exit 3) before any agent
/// is handed it. The attempt is closed as aborted, spending nothing.
fn stop_if_the_check_cannot_start(
    t: &Fixed<'_>,
    rec: &mut Recorder,
    n: u32,
    check: &CheckConfig,
    f: &Finished,
) -> Result<(), RunError> {
    let bytes = f.output.bytes();
    let lines: Vec<String> = String::from_utf8_lossy(&bytes).lines().map(|l| relativize(l, &t.wt)).collect();
    let Some(line) = super::super::agent_start::shell_cannot_start(f.exit_code, &lines) else { return Ok(()) };
    let message = format!(
        "check {} cannot start on the base: `{}` exited with {} ({line}); install the program or fix [[check]] run in the config, then `{}`",
        check.name,
        check.run,
        f.exit_code.unwrap_or_default(),
        t.resume_command(""),
    );
    rec.event(Some(n), Event::AttemptAborted { reason: message.clone(), phase: "checks".into() })?;
    t.progress.done("aborted: a check cannot start");
    t.publish()?;
    Err(RunError::CheckStart { check: check.name.clone(), message })
}

/// The task's targets against the tests the checks named on the base:
/// one none of them reports stops the run (exit 2) with the nearest ids,
/// unless `--allow-new-target`. Not judged when what the base holds is
/// not known whole: a check not run on the base, one that timed out or
/// came from an old cache entry, or checks that named no test at all (a
/// runner that stopped before its tests, which the agent may be there
/// to fix).
fn targets_on_the_base(
    t: &Fixed<'_>,
    baselines: &[Baseline],
    seen: &[Option<test_results::TestRun>],
) -> Result<(), RunError> {
    let config = &t.plan.config;
    let targets = &config.targets;
    let all_on_base = config.checks.iter().all(|c| c.baseline_mode(&config.retry).runs());
    if targets.is_empty() || t.plan.allow_new_target || !all_on_base || seen.iter().any(Option::is_none) {
        return Ok(());
    }
    let runs: Vec<&test_results::TestRun> = seen.iter().flatten().collect();
    let failed: Vec<&str> =
        baselines.iter().flat_map(|b| b.failures.iter().filter(|f| f.test).map(|f| f.key.as_str())).collect();
    let ids: Vec<String> = runs.iter().flat_map(|r| r.passed.iter().chain(&r.failed).cloned()).collect();
    if ids.is_empty() {
        return Ok(());
    }
    let missing: Vec<(String, Vec<&str>)> = targets
        .iter()
        .filter(|t| test_results::target_status(t, &runs, &failed) == test_results::TargetStatus::NotReported)
        .map(|t| (t.clone(), crate::outcome::new_target::nearest(t, &ids, 3)))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let checks: Vec<String> = t.plan.config.checks.iter().map(|c| c.name.clone()).collect();
    Err(RunError::MissingTarget {
        task: t.plan.id.clone(),
        message: crate::outcome::new_target::message(&missing, &checks),
    })
}
