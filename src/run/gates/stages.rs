//! An attempt's configured checks in the stages of [`schedule::plan`]
//! (docs/honest-success.md, "Order and fail-fast"): each stage's runs side
//! by side on up to `[retry] jobs` slots, each judged against the base,
//! its failing tests run again when they may be flaky, its writes into the
//! worktree found and put back, and recorded in the plan's order. A full
//! suite whose base is still being run aside ([`Aside`]) is run at once
//! and judged when that base is there.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use super::super::RunError;
use super::super::attempt::{Attempt, Fixed};
use super::super::recorder::{CheckRun, Recorder};
use super::super::slots;
use super::super::submodules::missing_submodules;
use super::base_aside::Aside;
use super::checks::{
    CheckExit, TargetsRun, as_map, import_root_env, inherited, network_seen, no_new_privs_note, parse, parse_output,
    relativize, run_once, targets_run, with,
};
use super::{base, check_writes, reuse_store};
use crate::config::{CheckConfig, FailFast};
use crate::git::{Oid, Repo};
use crate::judge::test_results;
use crate::judge::test_results::runners::{self, FailedRun, Rerun};
use crate::model::{CheckResult, NotRun};
use crate::outcome::check::{Baseline, Judging, judge};
use crate::outcome::reuse;
use crate::outcome::schedule::{self, CheckFacts, RunOfCheck, Step, StepEnded};
use crate::record::Event;
use crate::record::event::CheckRerun;

/// The configured checks of attempt `a`, in the stages of
/// [`schedule::plan`]: each stage's checks side by side (up to `[retry]
/// jobs`, one budget for the process: [`slots`]), each with its flaky
/// re-runs, judged against the base, and recorded in the plan's order
/// whatever order they end in. With `fail_fast = "targets"` a failing stage
/// ends them; the runs left are recorded as not run, with why. A check that
/// timed out shows `TIMEOUT`.
pub(in crate::run) fn configured_checks(
    t: &Fixed<'_>,
    rec: &mut Recorder,
    (baselines, aside): (&mut [Baseline], Option<&Aside>),
    a: &mut Attempt,
) -> Result<(), RunError> {
    let Some(commit) = a.commit else { return Ok(()) };
    let config = &t.plan.config;
    let checks = &config.checks;
    let fail_fast = config.retry.fail_fast;
    let selections = selections(t, a, baselines);
    let facts: Vec<CheckFacts> = checks
        .iter()
        .zip(&selections)
        .map(|(c, sel)| CheckFacts {
            kind: c.kind,
            selects_targets: sel.is_some(),
            // A targets-only run on the base says nothing of the full run's time.
            base_ms: baselines.iter().find(|b| b.check == c.name && !b.targets_only).and_then(|b| b.duration_ms),
        })
        .collect();
    let stages = schedule::plan(&facts, fail_fast);
    let mut finals: Vec<Option<CheckResult>> = vec![None; checks.len()];
    let mut left: Vec<(Step, String)> = Vec::new();
    for (at, stage) in stages.iter().enumerate() {
        let bases = Bases { known: baselines, aside };
        let ran = run_stage(t, a, (commit, &bases), stage, &selections, false)?;
        // The base's full runs this stage waited for, recorded before its
        // checks, in the stage's order.
        for step in stage.iter().filter(|s| s.part == RunOfCheck::Full) {
            let name = &checks[step.check].name;
            let waited = baselines.iter().any(|b| &b.check == name && b.targets_only);
            if let (true, Some(done)) = (waited, aside.and_then(|x| x.ready(name))) {
                let done = done.map_err(|e| RunError::CheckStart { check: name.clone(), message: e.to_string() })?;
                base::took_from_aside(t, rec, a.n, done, baselines)?;
            }
        }
        let mut ended: Vec<(String, RunOfCheck, bool)> = Vec::new();
        let mut done: Vec<Step> = Vec::new();
        for (step, r) in stage.iter().zip(ran) {
            let Some(StepRun { mut result, runs, window, failed }) = r else { continue };
            let check = &checks[step.check];
            if !result.passed {
                result.notes.extend(crate::outcome::check::submodule_notes(&missing_submodules(t)?));
            }
            let how = CheckRun::Configured {
                sandbox: Box::new(a.confinement.record()),
                env: runs.env,
                rerun: runs.rerun,
                part: (step.part == RunOfCheck::Targets).then(|| RunOfCheck::Targets.as_str().to_string()),
                window: Some(window),
            };
            rec.check_finished(a.n, &result, how)?;
            let label = schedule::label(&check.name, step.part, selections[step.check].is_some());
            let word = if failed && result.passed { "FAIL".to_string() } else { result.gate_word(&t.plan.id) };
            t.progress.gate(&format!("{label} {word}"));
            result.targets_only = step.part == RunOfCheck::Targets;
            ended.push((check.name.clone(), step.part, failed));
            done.push(*step);
            finals[step.check] = Some(result);
        }
        let ended: Vec<StepEnded<'_>> =
            ended.iter().map(|(check, part, failed)| StepEnded { check, part: *part, failed: *failed }).collect();
        if let Some(why) = schedule::stop_after(&ended, fail_fast) {
            left = schedule::not_run(&stages, at, &done, &why);
            break;
        }
    }
    record_not_run(t, rec, a, left, &selections)?;
    a.record.checks.extend(finals.into_iter().flatten());
    Ok(())
}

/// What runs each check's targets alone, where it can (`fail_fast =
/// "targets"`); with `fail_fast = "none"` every check runs in full only.
fn selections(t: &Fixed<'_>, a: &Attempt, baselines: &[Baseline]) -> Vec<Option<TargetsRun>> {
    let config = &t.plan.config;
    if config.retry.fail_fast != FailFast::Targets {
        return config.checks.iter().map(|_| None).collect();
    }
    let unset = a.confinement.unset();
    let inherited = inherited(&a.env, &unset);
    let base = |c: &CheckConfig| baselines.iter().find(|b| b.check == c.name);
    let scripts = super::checks::package_scripts(&t.wt);
    config.checks.iter().map(|c| targets_run(c, (&inherited, &scripts), &config.targets, base(c))).collect()
}

/// The runs a failing stage left, recorded as not run with why.
fn record_not_run(
    t: &Fixed<'_>,
    rec: &mut Recorder,
    a: &mut Attempt,
    left: Vec<(Step, String)>,
    selections: &[Option<TargetsRun>],
) -> Result<(), RunError> {
    for (step, reason) in left {
        let check = &t.plan.config.checks[step.check];
        let label = schedule::label(&check.name, step.part, selections[step.check].is_some());
        let part = step.part.as_str().to_string();
        rec.event(
            Some(a.n),
            Event::CheckNotRun { check: check.name.clone(), part: part.clone(), reason: reason.clone() },
        )?;
        t.progress.gate(&format!("{label} NOT RUN"));
        a.record.not_run.push(NotRun { check: check.name.clone(), part, label, reason });
    }
    Ok(())
}

/// What an attempt's checks are judged against: the base's runs known,
/// and those still being made aside.
struct Bases<'a> {
    known: &'a [Baseline],
    aside: Option<&'a Aside>,
}

impl Bases<'_> {
    /// The base of `check`'s `part` run: a full suite whose base so far is
    /// a targets-only run waits for its full run aside (lending its slot of
    /// `jobs`); a base not made (the aside stopped) is an error of the run.
    fn of(&self, check: &str, part: RunOfCheck, jobs: usize) -> Result<Option<Baseline>, RunError> {
        use schedule::{BaseFrom, BaseKnown};
        let known = self.known.iter().find(|b| b.check == check);
        let what = match known {
            None => BaseKnown::None,
            Some(b) if b.targets_only => BaseKnown::TargetsOnly,
            Some(_) => BaseKnown::Full,
        };
        match (schedule::base_from(what, part, self.aside.is_some()), self.aside) {
            (BaseFrom::Aside, Some(aside)) => aside
                .wait(check, jobs)
                .map(|d| Some(d.baseline))
                .map_err(|e| RunError::CheckStart { check: check.to_string(), message: e.to_string() }),
            (BaseFrom::Known, _) => Ok(known.cloned()),
            (BaseFrom::Without | BaseFrom::Aside, _) => Ok(None),
        }
    }
}

/// One run of a stage, ended.
struct StepRun {
    result: CheckResult,
    runs: Runs,
    /// Unix milliseconds: when it started and ended.
    window: (u64, u64),
    /// It failed as the stop decision counts it.
    failed: bool,
}

/// Now, in Unix milliseconds.
fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// What a worker of a stage tells the thread that draws the progress line.
enum Told {
    Started(usize),
    StepEnded(usize, Box<Result<StepRun, RunError>>),
}

/// The runs of `stage`, side by side on up to `[retry] jobs` threads, each
/// with its own handle on the repository and a slot of the process's
/// budget. With `fail_fast = "targets"`, none starts after one failed: those
/// are `None`. The first error, in the stage's order, ends the attempt.
fn run_stage(
    t: &Fixed<'_>,
    a: &Attempt,
    (commit, bases): (Oid, &Bases<'_>),
    stage: &[Step],
    selections: &[Option<TargetsRun>],
    alone: bool,
) -> Result<Vec<Option<StepRun>>, RunError> {
    let config = &t.plan.config;
    let jobs = slots::jobs(config.retry.jobs);
    let workers = if alone { 1 } else { jobs.min(stage.len()).max(1) };
    // Side by side, a check's writes into the shared worktree cannot be
    // told from its neighbours' while they run: the worktree is compared
    // with the commit once, after them all (below).
    let deferred = workers > 1;
    // Run again one at a time after a write, every run of the stage runs:
    // each ran once already.
    let stop_early = !alone && config.retry.fail_fast == FailFast::Targets;
    let renames: Vec<(String, String)> =
        a.record.files.iter().filter_map(|f| Some((f.path.clone(), f.old_path.clone()?))).collect();
    let mut handles = Vec::new();
    for _ in 0..workers {
        handles.push(t.repo.reopen()?);
    }
    let (next, failed) = (AtomicUsize::new(0), AtomicBool::new(false));
    let lane = crate::process::lane_stop_flag();
    let (wt, task) = (&t.wt, &t.plan.id);
    let each = StageRuns { config, wt, task, a, commit, bases, selections, renames: &renames, jobs, deferred };
    let each = &each;
    let mut out: Vec<Option<Result<StepRun, RunError>>> = (0..stage.len()).map(|_| None).collect();
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel::<Told>();
        for repo in handles {
            let (tx, lane, next, failed) = (tx.clone(), lane.clone(), &next, &failed);
            s.spawn(move || {
                if let Some(flag) = lane {
                    crate::process::stop_lane_on(flag);
                }
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(step) = stage.get(i) else { break };
                    if stop_early && failed.load(Ordering::SeqCst) {
                        break;
                    }
                    let _slot = slots::take(jobs);
                    let _ = tx.send(Told::Started(i));
                    let r = each.step(&repo, *step);
                    if r.as_ref().map_or(true, |r| r.failed) {
                        failed.store(true, Ordering::SeqCst);
                    }
                    let _ = tx.send(Told::StepEnded(i, Box::new(r)));
                }
            });
        }
        drop(tx);
        let mut running: Vec<usize> = Vec::new();
        for told in rx {
            match told {
                Told::Started(i) => running.push(i),
                Told::StepEnded(i, r) => {
                    running.retain(|&x| x != i);
                    out[i] = Some(*r);
                }
            }
            if !running.is_empty() {
                show_running(t, (stage, selections), &running);
            }
        }
    });
    let out: Vec<Option<StepRun>> = out.into_iter().map(|r| r.transpose()).collect::<Result<_, _>>()?;
    if !deferred {
        return Ok(out);
    }
    writes_after((t, a), (commit, bases), stage, selections, out)
}

/// What every run of one stage shares: the task, the attempt and its
/// commit, the bases, the targets' selections, the attempt's renames, the
/// jobs, and whether the runs' writes are looked for after them all.
struct StageRuns<'a> {
    config: &'a crate::config::Config,
    wt: &'a Path,
    task: &'a str,
    a: &'a Attempt,
    commit: Oid,
    bases: &'a Bases<'a>,
    selections: &'a [Option<TargetsRun>],
    renames: &'a [(String, String)],
    jobs: usize,
    deferred: bool,
}

impl StageRuns<'_> {
    /// One run of the stage, on this worker's handle on the repository.
    fn step(&self, repo: &Repo, step: Step) -> Result<StepRun, RunError> {
        let config = self.config;
        let started = now_ms();
        let check = &config.checks[step.check];
        let how = Judging { mode: check.baseline_mode(&config.retry), targets: &config.targets, renames: self.renames };
        let base = || self.bases.of(&check.name, step.part, self.jobs);
        let sel = self.selections[step.check].as_ref().filter(|_| step.part == RunOfCheck::Targets);
        let stepping = Stepping {
            repo,
            at: (self.wt, self.a, self.commit),
            base: &base,
            how,
            task: self.task,
            flaky_reruns: config.retry.flaky_reruns,
            deferred: self.deferred,
        };
        run_step(&stepping, check, sel).map(|(result, runs)| {
            let fails = !result.passed || sel.is_some_and(|s| targets_fail(&s.tests, &result));
            StepRun { result, runs, window: (started, now_ms()), failed: fails }
        })
    }
}

/// The progress line: the runs of `stage` under way (`running`).
fn show_running(t: &Fixed<'_>, (stage, selections): (&[Step], &[Option<TargetsRun>]), running: &[usize]) {
    let names: Vec<String> = running
        .iter()
        .map(|&i| {
            let step = stage[i];
            let name = &t.plan.config.checks[step.check].name;
            schedule::label(name, step.part, selections[step.check].is_some())
        })
        .collect();
    t.progress.phase(&format!("check{} {}", crate::text::plural(names.len()), names.join(", ")));
}

/// After a stage's runs side by side: the worktree compared with the
/// commit once; untouched, the runs stand (and what they keep for reuse is
/// stored); written into, the stage runs again one check at a time.
fn writes_after(
    (t, a): (&Fixed<'_>, &Attempt),
    (commit, bases): (Oid, &Bases<'_>),
    stage: &[Step],
    selections: &[Option<TargetsRun>],
    out: Vec<Option<StepRun>>,
) -> Result<Vec<Option<StepRun>>, RunError> {
    let (wt, task, config) = (&t.wt, &t.plan.id, &t.plan.config);
    let names: Vec<&str> = stage.iter().map(|s| config.checks[s.check].name.as_str()).collect();
    let wrote = check_writes::undo(t.repo, wt, commit, task)
        .map_err(|e| RunError::CheckStart { check: names.join(", "), message: e.to_string() })?;
    if wrote.is_empty() {
        for (file, entry) in out.iter().flatten().filter_map(|r| r.runs.pending.as_ref()) {
            // Only a saving later: a store that cannot be written is no failure.
            let _ = crate::record::store::write_json(file, entry);
        }
        return Ok(out);
    }
    // One of them wrote into the worktree (now put back): which one, and
    // what its neighbours read meanwhile, only running them one at a time
    // tells; so they are, as with `jobs = 1`.
    t.progress.phase("checks again one at a time: one of them wrote into the worktree");
    let mut again = run_stage(t, a, (commit, bases), stage, selections, true)?;
    let note = format!(
        "run again on its own: run beside {}, a check changed {} in the worktree",
        crate::context::required::name_list(&names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>()),
        crate::context::required::name_list(&wrote.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>()),
    );
    for r in again.iter_mut().flatten() {
        r.result.notes.push(note.clone());
    }
    Ok(again)
}

/// Whether a target a targets run selected did not pass in it.
fn targets_fail(selected: &[String], result: &CheckResult) -> bool {
    super::builtin::targets(selected, std::slice::from_ref(result)).is_some_and(|r| !r.passed)
}

/// What every run of a stage's checks works with: the worktree, the
/// attempt and its commit; the check's base, asked for once its run has
/// ended; how it is judged; the task; how many times a failure is run
/// again; and whether its writes are looked for after the whole stage.
#[derive(Clone, Copy)]
struct Stepping<'a> {
    repo: &'a Repo,
    at: (&'a Path, &'a Attempt, Oid),
    base: BaseOf<'a>,
    how: Judging<'a>,
    task: &'a str,
    flaky_reruns: u32,
    deferred: bool,
}

impl Stepping<'_> {
    /// A run of `check` once it ended: an interruption stops here (the run
    /// is neither judged nor run again); a run that could not start is an
    /// error; and what it wrote in the worktree, put back, unless its
    /// writes are looked for after the whole stage (`deferred`).
    fn ended(
        &self,
        check: &CheckConfig,
        ran: Result<crate::process::Finished, crate::process::StartError>,
    ) -> Result<(crate::process::Finished, Vec<String>), RunError> {
        super::super::interrupt::stop_if_interrupted(self.task)?;
        let started = |message: String| RunError::CheckStart { check: check.name.clone(), message };
        let f = ran.map_err(|e| started(e.to_string()))?;
        let (repo, (wt, _, commit)) = (self.repo, self.at);
        let wrote = if self.deferred {
            Vec::new()
        } else {
            check_writes::undo(repo, wt, commit, self.task).map_err(|e| started(e.to_string()))?
        };
        Ok((f, wrote))
    }
}

/// One run of a stage: the check in full, or (`sel`) its targets alone,
/// with the selection's variables and command and its output in
/// `<check>.targets.out`.
fn run_step(s: &Stepping<'_>, check: &CheckConfig, sel: Option<&TargetsRun>) -> Result<(CheckResult, Runs), RunError> {
    let (at, flaky_reruns) = (s.at, s.flaky_reruns);
    let (out, (mut result, runs)) = match sel {
        None => (check.name.clone(), run_check(s, check, (&[], &check.name))?),
        Some(sel) => {
            let narrowed = CheckConfig { run: sel.run.clone().unwrap_or_else(|| check.run.clone()), ..check.clone() };
            let out = format!("{}.targets", check.name);
            let (mut result, runs) = run_check(s, &narrowed, (&sel.env, &out))?;
            let by_targets = || {
                test_results::narrowed_run_passes(
                    &sel.tests,
                    &result.passed_tests,
                    &result.failed_tests,
                    result.errors.len(),
                )
            };
            if !result.passed && !result.timed_out && result.tested_checkout.is_empty() && by_targets() {
                result.passed = true;
                // No test failed and nothing was read: what is left is the exit status's.
                result.failures.clear();
                result.notes.push(format!(
                    "exit {} not counted: every target passed in this run narrowed to them; the full run judges the rest",
                    result.exit_code.map_or_else(|| "by a signal".to_string(), |c| c.to_string())
                ));
            }
            (out, (result, runs))
        }
    };
    let a = at.1;
    if result.reused.is_none() && a.confinement.effective == crate::sandbox::Effective::Detect {
        // What detect mode saw its runs reach: the first, its reruns (and,
        // run again alone after a write beside others, both times).
        let mut files = vec![a.dir.check_out(&out)];
        files.extend((1..=flaky_reruns).map(|i| a.dir.check_rerun_out(&out, i)));
        result.network_seen = network_seen(&files);
        if !result.passed {
            let text = std::fs::read(a.dir.check_out(&out)).unwrap_or_default();
            result.notes.extend(no_new_privs_note(&String::from_utf8_lossy(&text)));
        }
    }
    Ok((result, runs))
}

/// A check's base, asked for once its run has ended (it may still be in
/// the making: [`Bases::of`]).
type BaseOf<'a> = &'a dyn Fn() -> Result<Option<Baseline>, RunError>;

/// What retry-run added to a check's runs, for the record.
struct Runs {
    /// The runner variables of its first run.
    env: BTreeMap<String, String>,
    /// After a failure: the tests run again and the variables that selected
    /// them, or why nothing was run again.
    rerun: Option<CheckRerun>,
    /// The run to keep for reuse once the worktree is known untouched (a
    /// run beside others: [`run_stage`] compares it after them all).
    pending: Option<(std::path::PathBuf, reuse_store::StoredRun)>,
}

/// Environment variables, in order.
type Vars<'a> = &'a [(String, String)];

/// What a check's first run (or the earlier run it reuses) gave: what was
/// read of its output, the output with the worktree's path made relative,
/// what it wrote in the worktree, and the run it reused.
struct FirstRun {
    parsed: crate::outcome::check::Parsed,
    text: String,
    wrote: Vec<String>,
    reused: Option<crate::model::Reused>,
}

/// Runs a check and judges it against the base. A failure is run again,
/// up to `flaky_reruns` times, with only its failing tests selected, where
/// its runner can select them by environment ([`runners::rerun`]); a rerun
/// in which they all pass makes the check flaky. Anything else (a timeout,
/// a lint error, a runner that cannot select) runs once. `selected`: the
/// variables a targets run adds; `out_name`: whose output files it writes.
fn run_check(
    s: &Stepping<'_>,
    check: &CheckConfig,
    (selected_env, out_name): (&[(String, String)], &str),
) -> Result<(CheckResult, Runs), RunError> {
    let (a, task) = (s.at.1, s.task);
    let unset = a.confinement.unset();
    let inherited = inherited(&a.env, &unset);
    let added = runners::runner_env(&inherited);
    let mut runs = Runs { env: as_map(&with(&added, selected_env)), rerun: None, pending: None };
    let lookup = reuse::using(check.reuse, a.reuse);
    let first = first_run(s, check, (&added, selected_env), out_name, lookup, &mut runs)?;
    let marked = |mut r: CheckResult| {
        if let Some(reused) = &first.reused {
            r.duration_ms = 0;
            r.reused = Some(reused.clone());
        }
        r.not_reused = lookup.off.map(|off| off.reason().to_string());
        r
    };
    // Run first, then judged: its base may have been in the making meanwhile.
    let base = match (s.base)() {
        Ok(b) => b,
        // Not made because the run was interrupted: that, not the base.
        Err(e) => return Err(super::super::interrupt::stop_if_interrupted(task).err().unwrap_or(e)),
    };
    let judged = marked(judge(check, &first.parsed, base.as_ref(), s.how, 1, false));
    let mut result = judged;
    check_writes::fail(&mut result, &first.wrote);
    // A check that wrote in the worktree or tested the checkout says
    // nothing of the attempt, however often it runs; a runner that did not
    // run the tests is no flaky test.
    let parsed = &first.parsed;
    if !first.wrote.is_empty() || result.passed || !result.tested_checkout.is_empty() || parsed.runner_failure.is_some()
    {
        return Ok((result, runs));
    }
    let failed_tests = test_results::failed_by_runner(&first.text);
    let scripts = super::checks::package_scripts(s.at.0);
    let failed = FailedRun {
        run: &check.run,
        timed_out: parsed.timed_out,
        other_failures: parsed.failures.iter().any(|f| !f.test),
        tests: &failed_tests,
        scripts: &scripts,
    };
    let rerun = match runners::rerun(failed, &inherited) {
        Ok(r) if s.flaky_reruns > 0 => r,
        Ok(_) => {
            runs.rerun = Some(CheckRerun::NotRun { none: "flaky_reruns = 0".into() });
            return Ok((result, runs));
        }
        Err(why) => {
            runs.rerun = Some(CheckRerun::NotRun { none: why.reason() });
            return Ok((result, runs));
        }
    };
    let env = with(&with(&a.env, &added), selected_env);
    let flaky_at = rerun_failing(s, check, (&env, out_name), rerun, &mut runs, base.as_ref())?;
    Ok(match flaky_at {
        // Failed, then passed on the same tree: flaky, recorded, not the agent's fault.
        Some(run) => (marked(judge(check, parsed, base.as_ref(), s.how, run, true)), runs),
        None => (CheckResult { runs: s.flaky_reruns + 1, ..result }, runs),
    })
}

/// The check's first run, or (`lookup`) the earlier run on the same
/// command, environment and inputs whose output it reuses (the base's, an
/// earlier attempt's): judged again, not run. Neither read nor stored
/// (`reuse = false`): no key, no walk of the tree. A run stored for reuse
/// is kept in `runs.pending` when its writes are looked for later.
fn first_run(
    s: &Stepping<'_>,
    check: &CheckConfig,
    (added, selected_env): (Vars<'_>, Vars<'_>),
    out_name: &str,
    lookup: reuse::Use,
    runs: &mut Runs,
) -> Result<FirstRun, RunError> {
    let Stepping { repo, at: (wt, a, commit), task, deferred, .. } = *s;
    let file = a.dir.check_out(out_name);
    let at_commit = |rel: &str| repo.blob_at(commit, rel);
    let root = reuse_store::root_of(repo);
    let (key, seen) = if lookup.read || lookup.store {
        let env = with(&with(added, selected_env), &import_root_env(wt));
        let keyed = super::baseline_cache::env_of(&env, wt);
        let seen = super::received::seen(check, wt, &keyed, &a.confinement, task);
        (reuse_store::key(repo, check, repo.commit_tree(commit)?, &env, wt, &seen.digest)?, seen)
    } else {
        (String::new(), super::received::ReceivedKeys::default())
    };
    if let Some(e) = lookup.read.then(|| reuse_store::read(&root, &key)).flatten() {
        let _ = crate::record::store::write_file(&file, e.output.as_bytes());
        let status = CheckExit {
            exit_code: e.exit_code,
            signal: e.signal,
            timed_out: false,
            duration: Duration::from_millis(e.duration_ms),
        };
        let parsed = parse_output(check, &e.output, status, (wt, repo.workdir()), &at_commit);
        return Ok(FirstRun { parsed, text: e.output.clone(), wrote: Vec::new(), reused: Some(e.reused(&key)) });
    }
    let env = with(&with(&a.env, added), selected_env);
    let (f, wrote) = s.ended(check, run_once(check, wt, &env, &file, &a.confinement))?;
    let parsed = parse(check, &f, wt, repo, &at_commit);
    let text = relativize(&String::from_utf8_lossy(&f.output.bytes()), wt);
    if lookup.store && reuse::storable(parsed.timed_out, !wrote.is_empty(), !parsed.tested_checkout.is_empty()) {
        let entry = reuse_store::StoredRun {
            task: task.to_string(),
            attempt: Some(a.n),
            exit_code: f.exit_code,
            signal: f.signal,
            duration_ms: parsed.duration_ms,
            output: text.clone(),
            environment: seen.summary.clone(),
        };
        if deferred {
            runs.pending = Some((reuse_store::file(&root, &key), entry));
        } else {
            // Only a saving later: a store that cannot be written is no failure.
            let _ = crate::record::store::write_json(&reuse_store::file(&root, &key), &entry);
        }
    }
    Ok(FirstRun { parsed, text, wrote, reused: None })
}

/// A failing check run again, up to `flaky_reruns` times, with only its
/// failing tests selected (`rerun`), in `env`; the number of the run in
/// which they all passed (the check is flaky), or `None`.
fn rerun_failing(
    s: &Stepping<'_>,
    check: &CheckConfig,
    (env, out_name): (&[(String, String)], &str),
    Rerun { env: selected, tests, run }: Rerun,
    runs: &mut Runs,
    base: Option<&Baseline>,
) -> Result<Option<u32>, RunError> {
    let Stepping { repo, at: (wt, a, commit), .. } = *s;
    let at_commit = |rel: &str| repo.blob_at(commit, rel);
    let rerun_env = with(env, &selected);
    // cargo test, jest and vitest select on the command line.
    let selecting = CheckConfig { run: run.clone().unwrap_or_else(|| check.run.clone()), ..check.clone() };
    runs.rerun = Some(CheckRerun::Ran { tests, env: as_map(&selected), run });
    for i in 1..=s.flaky_reruns {
        let rerun_file = a.dir.check_rerun_out(out_name, i);
        let (f, wrote) = s.ended(check, run_once(&selecting, wt, &rerun_env, &rerun_file, &a.confinement))?;
        if !wrote.is_empty() {
            break;
        }
        let p = parse(check, &f, wt, repo, &at_commit);
        if judge(check, &p, base, s.how, i + 1, false).passed {
            return Ok(Some(i + 1));
        }
    }
    Ok(None)
}
