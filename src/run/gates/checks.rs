//! The configured checks: each run confined in the worktree, with the
//! variables that make quiet test runners name their tests
//! ([`crate::judge::test_results::runners`]), its output parsed with the
//! diagnostics parsers and enriched from the attempt's files, judged against
//! the base ([`crate::outcome::check`]), its failing tests alone run again
//! when they may be flaky, and recorded. The checks on the base run once per
//! task and base, cached in the record.

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
use super::super::worktree::back_to_base;
use super::{FileReader, baseline_cache, check_writes, reuse_store};
use crate::config::{CheckConfig, FailFast};
use crate::diagnostics::{self, Format};
use crate::enrich::{self, load::load_with};
use crate::git::{Oid, Repo};
use crate::judge::test_results;
use crate::judge::test_results::runners::{self, FailedRun, Rerun};
use crate::model::{CheckKind, CheckResult, ErrorItem, NotRun};
use crate::outcome::check::{Baseline, Judging, KEYS_VERSION, Parsed, checkout_paths, counted, failure_keys, judge};
use crate::outcome::reuse;
use crate::outcome::schedule::{self, CheckFacts, Ended, Part, Step};
use crate::process::{self, Finished, Spec};
use crate::record::Event;
use crate::record::event::{BaselineCache, CheckRerun};
use crate::summarize;

/// Bytes of a check's output kept at the head and at the tail.
const KEEP: usize = 2 * 1024 * 1024;
/// Errors with snippets kept per check.
const MAX_ERRORS: usize = 30;
/// The digest's budget, in tokens, before the context's own limits.
const DIGEST_TOKENS: usize = 1500;

/// `path` with the worktree's absolute prefix removed, so the record and
/// the prompt hold no path of this machine.
pub(crate) fn relativize(text: &str, worktree: &Path) -> String {
    let mut out = text.to_string();
    let mut roots = vec![worktree.to_path_buf()];
    if let Ok(c) = std::fs::canonicalize(worktree)
        && c != worktree
    {
        roots.push(c);
    }
    for root in roots {
        let r = root.to_string_lossy();
        out = out.replace(&format!("{r}/"), "").replace(r.as_ref(), ".");
    }
    out
}

/// `PYTHONPATH` with the worktree's Python import root first, so that the
/// attempt's code is imported ahead of site-packages, where an editable
/// install of the user's checkout would otherwise win. Empty for a project
/// that is not Python.
pub(crate) fn import_root_env(worktree: &Path) -> Vec<(String, String)> {
    let Some(root) = crate::project::import_root_of(worktree) else { return Vec::new() };
    let existing = std::env::var("PYTHONPATH").ok();
    vec![("PYTHONPATH".into(), crate::project::python_path(&root.to_string_lossy(), existing.as_deref()))]
}

/// The value a check would get for `name` without retry-run's runner
/// variables: `env`'s, else retry-run's own unless the sandbox drops it.
fn inherited<'a>(env: &'a [(String, String)], unset: &'a [String]) -> impl Fn(&str) -> Option<String> + 'a {
    move |name| match env.iter().rev().find(|(k, _)| k == name) {
        Some((_, v)) => Some(v.clone()),
        None if unset.iter().any(|u| u == name) => None,
        None => std::env::var(name).ok(),
    }
}

/// `env` with `added` set over it.
fn with(env: &[(String, String)], added: &[(String, String)]) -> Vec<(String, String)> {
    env.iter().chain(added).cloned().collect()
}

/// Variables as recorded.
fn as_map(vars: &[(String, String)]) -> BTreeMap<String, String> {
    vars.iter().cloned().collect()
}

/// Runs a check once in `worktree`; its output goes to `out_file`.
pub(crate) fn run_once(
    check: &CheckConfig,
    worktree: &Path,
    env: &[(String, String)],
    out_file: &Path,
    confinement: &crate::sandbox::Confinement,
) -> Result<Finished, String> {
    let mut spec = Spec::shell(&check.run, worktree, check.timeout.value);
    // Each check reaches its own hosts, none by default; the proxy logs
    // beside its output.
    let mut confinement = confinement.clone();
    confinement.policy.network = check.network.clone();
    spec.argv = confinement.argv(spec.argv, Some(&out_file.with_extension("network.jsonl")));
    spec.env = env.to_vec();
    spec.env.extend(import_root_env(worktree));
    spec.unset = confinement.unset();
    spec.keep = KEEP;
    spec.grace = Duration::from_secs(2);
    let f = process::run(&spec).map_err(|e| e.to_string())?;
    let _ = crate::record::store::write_file(out_file, &f.output.bytes());
    Ok(f)
}

/// Parses a finished check: failures with their keys, the digest, and the
/// errors enriched from the files `read` gives (as the attempt left them).
pub(crate) fn parse(check: &CheckConfig, f: &Finished, worktree: &Path, repo: &Repo, read: FileReader<'_>) -> Parsed {
    let bytes = f.output.bytes();
    let raw = String::from_utf8_lossy(&bytes);
    let text = relativize(&raw, worktree);
    let status = Status { exit_code: f.exit_code, signal: f.signal, timed_out: f.timed_out, duration: f.duration };
    parse_output(check, &text, status, (worktree, repo.workdir()), read)
}

/// How a check's process ended.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Status {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub duration: Duration,
}

/// [`parse`] of a check's output `text` (its worktree paths already made
/// relative), run in `worktree` of the checkout `checkout`: everything that
/// judging a check reads from its output.
pub(crate) fn parse_output(
    check: &CheckConfig,
    text: &str,
    f: Status,
    (worktree, checkout): (&Path, Option<&Path>),
    read: FileReader<'_>,
) -> Parsed {
    let found = diagnostics::parse_as(Format::from_name(&check.format.0), text);
    // Locations (traceback frames, diagnostics) in the user's checkout: the
    // check ran the checkout's code. A path merely named in a message (a
    // refused write) is not a location.
    let tested_checkout = match checkout {
        Some(checkout) => {
            let located: Vec<&str> =
                found.iter().filter_map(|d| d.path.as_deref()).filter(|p| p.starts_with('/')).collect();
            let (checkouts, worktrees) = (both_spellings(checkout), both_spellings(worktree));
            let c: Vec<&str> = checkouts.iter().map(String::as_str).collect();
            let w: Vec<&str> = worktrees.iter().map(String::as_str).collect();
            checkout_paths(&located.join("\n"), &c, &w)
        }
        None => Vec::new(),
    };
    let root = Path::new(".");
    let files = enrich::files_to_read(&found, root, root);
    let sources = load_with(&files, read);
    let enriched = enrich::enrich(found, &sources, root, root);
    let digest = summarize::summarize(text.as_bytes());
    let digest_text = summarize::render::render(&digest, DIGEST_TOKENS);
    let tests = test_results::read(text);
    let runner_failure = if f.timed_out || !runs_tests(check) {
        None
    } else {
        test_results::runner_failure(text, f.exit_code, f.signal)
    };
    let mut digest_lines: Vec<String> = digest_text.lines().map(str::to_string).collect();
    if let Some(r) = &runner_failure {
        digest_lines.insert(0, r.line());
    }
    let failures = failure_keys(&digest.failed_tests.entries, &enriched);
    let errors = counted(&enriched)
        .take(MAX_ERRORS)
        .map(|e| ErrorItem {
            tool: e.diagnostic.tool.to_string(),
            path: e.diagnostic.path.clone().unwrap_or_default(),
            line: e.diagnostic.line,
            code: e.diagnostic.code.clone(),
            message: crate::text::clip(e.diagnostic.message.lines().next().unwrap_or(""), 300, "...").into_owned(),
            scope: e.scope.as_ref().map(|s| s.qualified_name.clone()),
            snippet: e.snippet.as_deref().map(String::from),
        })
        .collect();
    Parsed {
        exit_code: f.exit_code,
        signal: f.signal,
        timed_out: f.timed_out,
        duration_ms: f.duration.as_millis() as u64,
        failures,
        digest: digest_lines,
        output_lines: digest.lines as usize,
        errors,
        tests,
        tested_checkout,
        runner_failure,
    }
}

/// Whether a check runs tests, so that a runner-level failure in its output
/// decides its verdict: its kind is `test`, or its command starts a test
/// runner. A lint or build check that fails to compile is judged by its
/// diagnostics instead.
fn runs_tests(check: &CheckConfig) -> bool {
    check.kind == CheckKind::Test
        || ["pytest", "cargo test", "cargo nextest", "go test", "jest", "vitest"].iter().any(|r| check.run.contains(r))
}

/// A directory as given and as resolved, without a trailing `/`.
fn both_spellings(dir: &Path) -> Vec<String> {
    let mut out = vec![dir.to_string_lossy().trim_end_matches('/').to_string()];
    if let Ok(c) = std::fs::canonicalize(dir) {
        let c = c.to_string_lossy().trim_end_matches('/').to_string();
        if !out.contains(&c) {
            out.push(c);
        }
    }
    out
}

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
    baselines: &mut Option<Vec<Baseline>>,
    a: &Attempt,
    kept: bool,
) -> Result<(), RunError> {
    let config = &t.plan.config;
    let runs = config.checks.iter().any(|c| c.baseline_mode(&config.retry).runs());
    if !runs || baselines.is_some() {
        return Ok(());
    }
    t.progress.phase("checks on the base");
    let (found, tests) = baseline(t, rec, a)?;
    let on_the_base = targets_on_the_base(t, &found, &tests);
    *baselines = Some(found);
    if let Err(e) = on_the_base {
        rec.event(Some(a.n), Event::AttemptAborted { reason: e.to_string(), phase: "checks".into() })?;
        t.progress.done("aborted: a target no check reports on the base");
        t.publish()?;
        return Err(e);
    }
    if !kept {
        back_to_base(t, a.n)?;
    }
    Ok(())
}

/// Each check on the base, from the cache in
/// `tasks/<task>/baseline/<base>/<check>.json` or run and cached.
///
/// With each, the tests its run named (`None` from a cache entry that
/// did not keep them).
fn baseline(
    t: &Fixed<'_>,
    rec: &mut Recorder,
    a: &Attempt,
) -> Result<(Vec<Baseline>, Vec<Option<test_results::TestRun>>), RunError> {
    let (base, wt) = (t.base.oid, t.wt.clone());
    let wt = &wt;
    let dir = t.store.task(&t.plan.id);
    let tree = t.repo.commit_tree(base)?.to_string();
    let mut out = Vec::new();
    let mut seen = Vec::new();
    let checks = t.plan.config.checks.clone();
    for check in &checks {
        if !check.baseline_mode(&t.plan.config.retry).runs() {
            continue;
        }
        let env = a.confinement.env();
        let added = runners::runner_env(&inherited(&env, &a.confinement.unset()));
        // The key: what retry-run gives the check, the base's tree,
        // the check and the programs it starts.
        let keyed = baseline_cache::env_of(&with(&added, &import_root_env(wt)), wt);
        let key = baseline_cache::key(&baseline_cache::parts(check, tree.clone(), keyed));
        let cached = if t.plan.fresh_baseline { None } else { baseline_cache::read(&t.store.root, &key) };
        let (b, cache) = match cached.filter(|e| e.baseline.run == check.run) {
            Some(e) => {
                seen.push(e.tests);
                let b = Baseline { check: check.name.clone(), base: base.to_string(), ..e.baseline };
                (b, BaselineCache { key, hit: true, from: Some(e.task) })
            }
            None => {
                let out_file = dir.baseline_out(base, &check.name);
                let f = run_once(check, wt, &with(&env, &added), &out_file, &a.confinement);
                // A check stopped by an interruption says nothing of the base.
                super::super::stop_if_interrupted(&t.plan.id)?;
                let f = f.map_err(|message| RunError::CheckStart { check: check.name.clone(), message })?;
                let p = parse(check, &f, wt, t.repo, &|rel| std::fs::read(wt.join(rel)).ok());
                stop_if_the_check_cannot_start(t, rec, a.n, check, &f)?;
                // What an attempt on the same inputs reuses (`inputs`).
                if reuse::using(check.reuse, a.reuse).store
                    && reuse::storable(p.timed_out, false, !p.tested_checkout.is_empty())
                {
                    let entry = reuse_store::Entry {
                        task: t.plan.id.clone(),
                        attempt: None,
                        exit_code: f.exit_code,
                        signal: f.signal,
                        duration_ms: p.duration_ms,
                        output: relativize(&String::from_utf8_lossy(&f.output.bytes()), wt),
                    };
                    let env = with(&added, &import_root_env(wt));
                    let rkey = reuse_store::key(t.repo, check, t.repo.commit_tree(base)?, &env, wt)?;
                    // Only a saving later: a store that cannot be written is no failure.
                    let _ = super::super::write_json(&reuse_store::file(&t.store.root, &rkey), &entry);
                }
                // A run cut short names only some of the base's tests.
                seen.push((!p.timed_out).then(|| p.tests.clone()));
                let b = Baseline {
                    check: check.name.clone(),
                    run: check.run.clone(),
                    base: base.to_string(),
                    passed: p.exited_ok() && p.runner_failure.is_none(),
                    failures: p.failures,
                    ran: p.tests.ran,
                    keys: KEYS_VERSION,
                    duration_ms: Some(p.duration_ms),
                    runner_failure: p.runner_failure,
                };
                // A timed-out run says nothing lasting of the base.
                if !p.timed_out {
                    let entry = baseline_cache::Entry {
                        baseline: b.clone(),
                        task: t.plan.id.clone(),
                        tests: Some(p.tests.clone()),
                    };
                    super::super::write_json(&baseline_cache::file(&t.store.root, &key), &entry)?;
                }
                (b, BaselineCache { key, hit: false, from: None })
            }
        };
        super::super::write_json(&dir.baseline_cache(base, &check.name), &b)?;
        rec.event(
            Some(a.n),
            Event::BaselineChecked {
                check: b.check.clone(),
                base: b.base.clone(),
                passed: b.passed,
                failures: b.failures.iter().map(|f| f.key.clone()).collect(),
                env: Some(as_map(&added)),
                cache: Some(cache),
            },
        )?;
        out.push(b);
    }
    Ok((out, seen))
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
    baselines: &[Baseline],
    a: &mut Attempt,
) -> Result<(), RunError> {
    let Some(commit) = a.commit else { return Ok(()) };
    let config = &t.plan.config;
    let checks = &config.checks;
    let fail_fast = config.retry.fail_fast;
    let unset = a.confinement.unset();
    let selections: Vec<Option<TargetsRun>> = {
        let inherited = inherited(&a.env, &unset);
        let base = |c: &CheckConfig| baselines.iter().find(|b| b.check == c.name);
        // With `fail_fast = "none"` every check runs in full only.
        let runs = |c| (fail_fast == FailFast::Targets).then(|| targets_run(c, &inherited, &config.targets, base(c)));
        checks.iter().map(|c| runs(c).flatten()).collect()
    };
    let facts: Vec<CheckFacts> = checks
        .iter()
        .zip(&selections)
        .map(|(c, sel)| CheckFacts {
            kind: c.kind,
            selects_targets: sel.is_some(),
            base_ms: baselines.iter().find(|b| b.check == c.name).and_then(|b| b.duration_ms),
        })
        .collect();
    let stages = schedule::plan(&facts, fail_fast);
    let mut finals: Vec<Option<CheckResult>> = vec![None; checks.len()];
    let mut left: Vec<(Step, String)> = Vec::new();
    for (at, stage) in stages.iter().enumerate() {
        let ran = run_stage(t, a, (commit, baselines), stage, &selections, false)?;
        let mut ended: Vec<(String, Part, bool)> = Vec::new();
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
                part: (step.part == Part::Targets).then(|| Part::Targets.as_str().to_string()),
                window: Some(window),
            };
            rec.check_finished(a.n, &result, how)?;
            let label = schedule::label(&check.name, step.part, selections[step.check].is_some());
            let word = if failed && result.passed { "FAIL".to_string() } else { result.gate_word(&t.plan.id) };
            t.progress.gate(&format!("{label} {word}"));
            result.targets_only = step.part == Part::Targets;
            ended.push((check.name.clone(), step.part, failed));
            done.push(*step);
            finals[step.check] = Some(result);
        }
        let ended: Vec<Ended<'_>> =
            ended.iter().map(|(check, part, failed)| Ended { check, part: *part, failed: *failed }).collect();
        if let Some(why) = schedule::stop_after(&ended, fail_fast) {
            left = schedule::not_run(&stages, at, &done, &why);
            break;
        }
    }
    for (step, reason) in left {
        let check = &checks[step.check];
        let label = schedule::label(&check.name, step.part, selections[step.check].is_some());
        rec.event(
            Some(a.n),
            Event::CheckNotRun {
                check: check.name.clone(),
                part: step.part.as_str().to_string(),
                reason: reason.clone(),
            },
        )?;
        t.progress.gate(&format!("{label} NOT RUN"));
        a.record.not_run.push(NotRun { check: check.name.clone(), part: step.part.as_str().into(), label, reason });
    }
    a.record.checks.extend(finals.into_iter().flatten());
    Ok(())
}

/// A run of a check on only the task's targets
/// ([`crate::judge::test_results::select`]): the variables to add, the
/// command to run instead, and the targets it runs.
pub(crate) struct TargetsRun {
    pub env: Vec<(String, String)>,
    pub run: Option<String>,
    pub tests: Vec<String>,
}

/// How `check` runs only those of the task's `targets` it reported
/// failing on the base ([`test_results::select`]), or `None` when it
/// reported none there or its command cannot be narrowed (it has no
/// targets stage then). Its runner is the one `select` finds in the
/// command.
fn targets_run(
    check: &CheckConfig,
    inherited: &dyn Fn(&str) -> Option<String>,
    targets: &[String],
    base: Option<&Baseline>,
) -> Option<TargetsRun> {
    use test_results::Runner;
    use test_results::select::{Unselectable, select};
    let base = base?;
    let mine: Vec<String> = targets
        .iter()
        .filter(|t| base.failures.iter().any(|f| f.test && test_results::is_target(&f.key, t)))
        .cloned()
        .collect();
    if mine.is_empty() || check.kind == CheckKind::Lint {
        return None;
    }
    for runner in [Runner::Pytest, Runner::Go, Runner::Cargo, Runner::Js] {
        let tests: Vec<(Runner, String)> = mine.iter().map(|t| (runner, t.clone())).collect();
        match select(&check.run, inherited, &tests) {
            Ok(sel) => return Some(TargetsRun { env: sel.env, run: sel.run, tests: mine }),
            Err(Unselectable::OtherRunner { .. }) => continue,
            Err(_) => return None,
        }
    }
    None
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
    Ended(usize, Box<Result<StepRun, RunError>>),
}

/// The runs of `stage`, side by side on up to `[retry] jobs` threads, each
/// with its own handle on the repository and a slot of the process's
/// budget. With `fail_fast = "targets"`, none starts after one failed: those
/// are `None`. The first error, in the stage's order, ends the attempt.
fn run_stage(
    t: &Fixed<'_>,
    a: &Attempt,
    (commit, baselines): (Oid, &[Baseline]),
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
    let (wt, task, renames) = (&t.wt, &t.plan.id, &renames);
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
                    let started = now_ms();
                    let check = &config.checks[step.check];
                    let how = Judging { mode: check.baseline_mode(&config.retry), targets: &config.targets, renames };
                    let base = baselines.iter().find(|x| x.check == check.name);
                    let sel = selections[step.check].as_ref().filter(|_| step.part == Part::Targets);
                    let r = run_step(
                        &repo,
                        check,
                        sel,
                        (wt, a, commit),
                        base,
                        how,
                        task,
                        (config.retry.flaky_reruns, deferred),
                    )
                    .map(|(result, runs)| {
                        let fails = !result.passed || sel.is_some_and(|s| targets_fail(&s.tests, &result));
                        StepRun { result, runs, window: (started, now_ms()), failed: fails }
                    });
                    if r.as_ref().map_or(true, |r| r.failed) {
                        failed.store(true, Ordering::SeqCst);
                    }
                    let _ = tx.send(Told::Ended(i, Box::new(r)));
                }
            });
        }
        drop(tx);
        let mut running: Vec<usize> = Vec::new();
        for told in rx {
            match told {
                Told::Started(i) => running.push(i),
                Told::Ended(i, r) => {
                    running.retain(|&x| x != i);
                    out[i] = Some(*r);
                }
            }
            if !running.is_empty() {
                let names: Vec<String> = running
                    .iter()
                    .map(|&i| {
                        let step = stage[i];
                        let name = &config.checks[step.check].name;
                        schedule::label(name, step.part, selections[step.check].is_some())
                    })
                    .collect();
                t.progress.phase(&format!("check{} {}", if names.len() == 1 { "" } else { "s" }, names.join(", ")));
            }
        }
    });
    let out: Vec<Option<StepRun>> = out.into_iter().map(|r| r.transpose()).collect::<Result<_, _>>()?;
    if !deferred {
        return Ok(out);
    }
    let names: Vec<&str> = stage.iter().map(|s| config.checks[s.check].name.as_str()).collect();
    let wrote = check_writes::undo(t.repo, wt, commit, task)
        .map_err(|e| RunError::CheckStart { check: names.join(", "), message: e.to_string() })?;
    if wrote.is_empty() {
        for (file, entry) in out.iter().flatten().filter_map(|r| r.runs.pending.as_ref()) {
            // Only a saving later: a store that cannot be written is no failure.
            let _ = super::super::write_json(file, entry);
        }
        return Ok(out);
    }
    // One of them wrote into the worktree (now put back): which one, and
    // what its neighbours read meanwhile, only running them one at a time
    // tells; so they are, as with `jobs = 1`.
    t.progress.phase("checks again one at a time: one of them wrote into the worktree");
    let mut again = run_stage(t, a, (commit, baselines), stage, selections, true)?;
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

/// One run of a stage: the check in full, or (`sel`) its targets alone,
/// with the selection's variables and command and its output in
/// `<check>.targets.out`.
#[allow(clippy::too_many_arguments)]
fn run_step(
    repo: &Repo,
    check: &CheckConfig,
    sel: Option<&TargetsRun>,
    at: (&Path, &Attempt, Oid),
    base: Option<&Baseline>,
    how: Judging<'_>,
    task: &str,
    (flaky_reruns, deferred): (u32, bool),
) -> Result<(CheckResult, Runs), RunError> {
    match sel {
        None => run_check(repo, check, at, base, how, flaky_reruns, task, (&[], &check.name, deferred)),
        Some(sel) => {
            let narrowed = CheckConfig { run: sel.run.clone().unwrap_or_else(|| check.run.clone()), ..check.clone() };
            let out = format!("{}.targets", check.name);
            run_check(repo, &narrowed, at, base, how, flaky_reruns, task, (&sel.env, &out, deferred))
        }
    }
}

/// A self-check's run of `check` (docs/mcp.md): once, confined as the
/// real gate runs it, with the same runner variables, its output in
/// `out_file`, judged against the base. No flaky re-runs: the real gate
/// does those.
pub(crate) fn run_and_judge(
    repo: &Repo,
    check: &CheckConfig,
    (wt, env, confinement): (&Path, &[(String, String)], &crate::sandbox::Confinement),
    out_file: &Path,
    (base, how, read): (Option<&Baseline>, Judging<'_>, FileReader<'_>),
) -> Result<CheckResult, String> {
    let unset = confinement.unset();
    let added = runners::runner_env(&inherited(env, &unset));
    let f = run_once(check, wt, &with(env, &added), out_file, confinement)?;
    let parsed = parse(check, &f, wt, repo, read);
    Ok(judge(check, &parsed, base, how, 1, false))
}

/// A run of `check` on a base (commit `base`, checked out in `wt`), once,
/// confined and with the runner variables as the checks on a task's base
/// get them, its output in `out_file`: what the checks on the replayed tree
/// are judged against (`retry-run land`). Not cached: the base is a
/// branch's tip.
pub(crate) fn base_run(
    repo: &Repo,
    check: &CheckConfig,
    (wt, env, confinement): (&Path, &[(String, String)], &crate::sandbox::Confinement),
    out_file: &Path,
    base: Oid,
) -> Result<Baseline, String> {
    let added = runners::runner_env(&inherited(env, &confinement.unset()));
    let f = run_once(check, wt, &with(env, &added), out_file, confinement)?;
    let p = parse(check, &f, wt, repo, &|rel| std::fs::read(wt.join(rel)).ok());
    Ok(Baseline {
        check: check.name.clone(),
        run: check.run.clone(),
        base: base.to_string(),
        passed: p.exited_ok() && p.runner_failure.is_none(),
        failures: p.failures,
        ran: p.tests.ran,
        keys: KEYS_VERSION,
        duration_ms: Some(p.duration_ms),
        runner_failure: p.runner_failure,
    })
}

/// What retry-run added to a check's runs, for the record.
struct Runs {
    /// The runner variables of its first run.
    env: BTreeMap<String, String>,
    /// After a failure: the tests run again and the variables that selected
    /// them, or why nothing was run again.
    rerun: Option<CheckRerun>,
    /// The run to keep for reuse once the worktree is known untouched (a
    /// run beside others: [`run_stage`] compares it after them all).
    pending: Option<(std::path::PathBuf, reuse_store::Entry)>,
}

/// Runs a check and judges it against the base. A failure is run again,
/// up to `flaky_reruns` times, with only its failing tests selected, where
/// its runner can select them by environment ([`runners::rerun`]); a rerun
/// in which they all pass makes the check flaky. Anything else (a timeout,
/// a lint error, a runner that cannot select) runs once. `selected`: the
/// variables a targets run adds; `out_name`: whose output files it writes.
#[allow(clippy::too_many_arguments)]
fn run_check(
    repo: &Repo,
    check: &CheckConfig,
    (wt, a, commit): (&Path, &Attempt, Oid),
    base: Option<&Baseline>,
    how: Judging<'_>,
    flaky_reruns: u32,
    task: &str,
    (selected_env, out_name, deferred): (&[(String, String)], &str, bool),
) -> Result<(CheckResult, Runs), RunError> {
    let mode = how;
    // A check stopped by an interruption is neither judged nor run again.
    let stop = || super::super::stop_if_interrupted(task);
    let file = a.dir.check_out(out_name);
    let started = |message| RunError::CheckStart { check: check.name.clone(), message };
    let unset = a.confinement.unset();
    let inherited = inherited(&a.env, &unset);
    let added = runners::runner_env(&inherited);
    let env = with(&with(&a.env, &added), selected_env);
    let mut runs = Runs { env: as_map(&with(&added, selected_env)), rerun: None, pending: None };
    // Run beside other checks, its writes are looked for after them all.
    let undo = |task| if deferred { Ok(Vec::new()) } else { check_writes::undo(repo, wt, commit, task) };
    let at_commit = |rel: &str| repo.blob_at(commit, rel);
    // The same command, environment and inputs as an earlier run (the
    // base's, an earlier attempt's): its output, judged again, not run.
    // Neither read nor stored (`reuse = false`): no key, no walk of the tree.
    let root = reuse_store::root_of(repo);
    let lookup = reuse::using(check.reuse, a.reuse);
    let key = if lookup.read || lookup.store {
        let env = with(&with(&added, selected_env), &import_root_env(wt));
        reuse_store::key(repo, check, repo.commit_tree(commit)?, &env, wt)?
    } else {
        String::new()
    };
    let (parsed, text, wrote, reused) = match lookup.read.then(|| reuse_store::read(&root, &key)).flatten() {
        Some(e) => {
            let _ = crate::record::store::write_file(&file, e.output.as_bytes());
            let status = Status {
                exit_code: e.exit_code,
                signal: e.signal,
                timed_out: false,
                duration: Duration::from_millis(e.duration_ms),
            };
            let parsed = parse_output(check, &e.output, status, (wt, repo.workdir()), &at_commit);
            (parsed, e.output.clone(), Vec::new(), Some(e.reused(&key)))
        }
        None => {
            let f = run_once(check, wt, &env, &file, &a.confinement);
            stop()?;
            let f = f.map_err(started)?;
            let wrote = undo(task).map_err(|e| started(e.to_string()))?;
            let parsed = parse(check, &f, wt, repo, &at_commit);
            let text = relativize(&String::from_utf8_lossy(&f.output.bytes()), wt);
            if lookup.store && reuse::storable(parsed.timed_out, !wrote.is_empty(), !parsed.tested_checkout.is_empty())
            {
                let entry = reuse_store::Entry {
                    task: task.to_string(),
                    attempt: Some(a.n),
                    exit_code: f.exit_code,
                    signal: f.signal,
                    duration_ms: parsed.duration_ms,
                    output: text.clone(),
                };
                if deferred {
                    runs.pending = Some((reuse_store::file(&root, &key), entry));
                } else {
                    // Only a saving later: a store that cannot be written is no failure.
                    let _ = super::super::write_json(&reuse_store::file(&root, &key), &entry);
                }
            }
            (parsed, text, wrote, None)
        }
    };
    let marked = |mut r: CheckResult| {
        if let Some(reused) = &reused {
            r.duration_ms = 0;
            r.reused = Some(reused.clone());
        }
        r.not_reused = lookup.off.map(|off| off.reason().to_string());
        r
    };
    let mut first = marked(judge(check, &parsed, base, mode, 1, false));
    check_writes::fail(&mut first, &wrote);
    if !wrote.is_empty() {
        return Ok((first, runs));
    }
    // A check that tested the checkout says nothing of the attempt, however
    // often it runs; a runner that did not run the tests is no flaky test.
    if first.passed || !first.tested_checkout.is_empty() || parsed.runner_failure.is_some() {
        return Ok((first, runs));
    }
    let failed_tests = test_results::failed_by_runner(&text);
    let failed = FailedRun {
        run: &check.run,
        timed_out: parsed.timed_out,
        other_failures: parsed.failures.iter().any(|f| !f.test),
        tests: &failed_tests,
    };
    let Rerun { env: selected, tests, run } = match runners::rerun(failed, &inherited) {
        Ok(r) if flaky_reruns > 0 => r,
        Ok(_) => {
            runs.rerun = Some(CheckRerun::NotRun { none: "flaky_reruns = 0".into() });
            return Ok((first, runs));
        }
        Err(why) => {
            runs.rerun = Some(CheckRerun::NotRun { none: why.reason() });
            return Ok((first, runs));
        }
    };
    let rerun_env = with(&env, &selected);
    // cargo test, jest and vitest select on the command line.
    let selecting = CheckConfig { run: run.clone().unwrap_or_else(|| check.run.clone()), ..check.clone() };
    runs.rerun = Some(CheckRerun::Ran { tests: tests.clone(), env: as_map(&selected), run });
    for i in 1..=flaky_reruns {
        let rerun_file = a.dir.check_rerun_out(out_name, i);
        let f = run_once(&selecting, wt, &rerun_env, &rerun_file, &a.confinement);
        stop()?;
        let f = f.map_err(started)?;
        if !undo(task).map_err(|e| started(e.to_string()))?.is_empty() {
            break;
        }
        let p = parse(check, &f, wt, repo, &at_commit);
        if judge(check, &p, base, mode, i + 1, false).passed {
            // Failed, then passed on the same tree: flaky, recorded, not the agent's fault.
            return Ok((marked(judge(check, &parsed, base, mode, i + 1, true)), runs));
        }
    }
    Ok((CheckResult { runs: flaky_reruns + 1, ..first }, runs))
}
