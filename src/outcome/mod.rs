//! The loop's decisions, as pure functions of the record: which outcome an
//! attempt's gate results make ([`classify`]), whether the task's budget
//! allows another attempt ([`budget_spent`]), what happens after an attempt
//! ([`next_step`]; [`repeated_timeout`] stops a task whose timeouts
//! repeat), and which base failures a success tolerated
//! ([`tolerated`]). The loop in `run` calls these and acts on the answer.
//!
//! - [`check`]: a check's run judged against the base;
//! - [`internals`]: changes to the repository's internals judged, and what
//!   halts an attempt that nothing confines;
//! - [`resume`]: where a run of a task resumes (its attempt window, its base);
//! - [`land`]: whether and how a task's result lands (`retry-run land`);
//! - [`reuse`]: the key under which a check's earlier output stands for a
//!   run on unchanged inputs;
//! - [`schedule`]: the order of an attempt's checks, and when they stop.

pub(crate) mod check;
pub(crate) mod internals;
pub(crate) mod land;
pub(crate) mod new_target;
pub(crate) mod resume;
pub(crate) mod reuse;
pub(crate) mod schedule;

use crate::config::{RetryConfig, RetryOnList};
use crate::model::{AttemptRecord, Outcome, RetryOn, ScopeReason};
use crate::text::{exit_text, human_ms, plural};

/// An attempt's outcome, and the one-line reason for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Classified {
    pub outcome: Outcome,
    pub reason: String,
}

/// The gates in order (docs/commands.md, `run`): agent exit, empty diff, scope,
/// checks, verifier. Returns the outcome and a one-line reason. The verifier's
/// `escalate` is not an outcome of its own: it approves nothing, so the attempt
/// is VERIFIER_REJECTION and the loop escalates.
pub(crate) fn classify(r: &AttemptRecord) -> Classified {
    let (outcome, reason) = first_failed_gate(r);
    Classified { outcome, reason }
}

/// [`classify`]'s gates, one after another: the first that fails decides,
/// else the attempt succeeded.
fn first_failed_gate(r: &AttemptRecord) -> (Outcome, String) {
    if let Some(stopped) = stopped(r).or_else(|| changed(r)) {
        return stopped;
    }
    if let Some(c) = tested_checkout(r) {
        return (
            Outcome::Unverified,
            format!(
                "check `{}` tested your checkout, not the attempt: its output points into {}",
                c.name,
                name_few(&c.tested_checkout.iter().map(String::as_str).collect::<Vec<_>>())
            ),
        );
    }
    let failed: Vec<&str> = r.failed_checks().map(|c| c.name.as_str()).collect();
    if !failed.is_empty() {
        return (Outcome::CheckFailure, format!("check{} failed: {}", plural(failed.len()), failed.join(", ")));
    }
    // Runs left by `fail_fast` follow a failure; never a success without them.
    if let Some(n) = r.not_run.first() {
        return (Outcome::CheckFailure, format!("not run: {} ({})", n.label, n.reason));
    }
    if let Some(rejected) = r.verifier.as_ref().and_then(judged) {
        return rejected;
    }
    (Outcome::Success, "every gate passed".into())
}

/// The first gate: an attempt halted for changing what nothing confined,
/// or an agent that timed out or crashed.
fn stopped(r: &AttemptRecord) -> Option<(Outcome, String)> {
    if let Some(h) = &r.halted {
        return Some((
            Outcome::ScopeViolation,
            format!(
                "nothing confined the {} and it changed {}: no unconfined step ran after it",
                h.after,
                h.parts.join(", ")
            ),
        ));
    }
    if let Some(agent) = &r.agent {
        if agent.timed_out {
            return Some((Outcome::Timeout, format!("the agent ran past its {} limit", human_ms(agent.timeout_ms))));
        }
        if agent.crashed() {
            return Some((Outcome::Crash, format!("the agent {}", exit_text(agent.exit_code, agent.signal))));
        }
    }
    None
}

/// The diff and scope gates: writes outside the worktree, to git's
/// internals or submodules, no change at all, writes outside the scope.
fn changed(r: &AttemptRecord) -> Option<(Outcome, String)> {
    let outside = r.scope.iter().filter(|v| v.reason == ScopeReason::OutsideWorktree).count();
    if outside > 0 {
        return Some((
            Outcome::ScopeViolation,
            format!("{outside} path{} written outside the worktree", plural(outside)),
        ));
    }
    // What an unconfined attempt wrote beside the repository's internals
    // (a push, the checkout's git files, the record, retry-run's cache).
    let beside: Vec<String> = r
        .scope
        .iter()
        .filter(|v| v.reason.outside_words().is_some() && !v.reason.only_noted())
        .map(|v| format!("{} ({})", v.path, v.reason))
        .collect();
    if !beside.is_empty() {
        let beside: Vec<&str> = beside.iter().map(String::as_str).collect();
        return Some((Outcome::ScopeViolation, format!("written outside the worktree: {}", name_few(&beside))));
    }
    let internal: Vec<&str> =
        r.scope.iter().filter(|v| v.reason == ScopeReason::GitInternal).map(|v| v.path.as_str()).collect();
    if !internal.is_empty() {
        return Some((
            Outcome::ScopeViolation,
            format!("the repository's git internals changed: {}", name_few(&internal)),
        ));
    }
    let deep: Vec<std::borrow::Cow<'_, str>> =
        r.scope.iter().filter(|v| v.reason == ScopeReason::TooDeep).map(|v| crate::pathfmt::brief(&v.path)).collect();
    if !deep.is_empty() && deep.len() == r.scope.len() {
        let deep: Vec<&str> = deep.iter().map(|p| p.as_ref()).collect();
        // With a change or without one: the directories are why.
        return Some((
            Outcome::ScopeViolation,
            format!(
                "{} {} levels deep or more, cut out of the change: {}",
                if deep.len() == 1 { "a directory".to_string() } else { format!("{} directories", deep.len()) },
                crate::model::MAX_TREE_DEPTH,
                name_few(&deep)
            ),
        ));
    }
    let submodules: Vec<&str> =
        r.scope.iter().filter(|v| v.reason == ScopeReason::Submodule).map(|v| v.path.as_str()).collect();
    if r.files.is_empty() && !submodules.is_empty() {
        // Changes inside a submodule are no commit of the superproject: not an empty diff.
        return Some((Outcome::ScopeViolation, format!("the attempt changed submodule {}", name_few(&submodules))));
    }
    if r.files.is_empty() {
        return Some((Outcome::EmptyDiff, "the attempt changed no file".into()));
    }
    if !r.scope.is_empty() {
        let n = r.scope.len();
        let acting: Vec<&str> =
            r.scope.iter().filter(|v| v.reason == ScopeReason::ActsAfterLand).map(|v| v.path.as_str()).collect();
        if acting.len() == n {
            return Some((
                Outcome::ScopeViolation,
                format!(
                    "the change writes {} that act{} once it lands: {}",
                    plural_files(n),
                    if n == 1 { "s" } else { "" },
                    name_few(&acting)
                ),
            ));
        }
        return Some((Outcome::ScopeViolation, format!("{n} path{} written outside the allowed scope", plural(n))));
    }
    None
}

/// The verifier's gate: no answer, escalate, or changes asked for.
fn judged(v: &crate::model::VerifierResult) -> Option<(Outcome, String)> {
    if !v.answered {
        return Some((Outcome::Unverified, format!("the verifier never answered ({} calls)", v.calls)));
    }
    if v.escalates() {
        return Some((Outcome::VerifierRejection, "the verifier asked for a human (escalate)".into()));
    }
    if v.rejects() {
        return Some((
            Outcome::VerifierRejection,
            format!("the verifier asked for changes (confidence {:.2})", v.confidence.unwrap_or(1.0)),
        ));
    }
    None
}

/// The first check of attempt `r` whose output points into the user's
/// checkout: it tested the checkout, so it judges nothing of the attempt.
pub(crate) fn tested_checkout(r: &AttemptRecord) -> Option<&crate::model::CheckResult> {
    r.checks.iter().find(|c| !c.tested_checkout.is_empty())
}

/// What to change when a check tested the checkout instead of the attempt.
pub(crate) const TESTED_CHECKOUT_ADVICE: &str = "A package installed in editable mode from your checkout (`pip install -e .`, tox, a venv) or a check that names the checkout by an absolute path runs your checkout's code. retry-run puts the worktree's import root first on PYTHONPATH for Python checks; run the tool as `python -m TOOL` from the worktree, use paths relative to the check's working directory, or install the package without `-e`, then run the task again (`retry-run run --id TASK`)";

/// `a file`, `3 files`.
fn plural_files(n: usize) -> String {
    if n == 1 { "a file".into() } else { format!("{n} files") }
}

/// At most three names, then how many more.
fn name_few(names: &[&str]) -> String {
    match names {
        [a, b, c, _, ..] => format!("{a}, {b}, {c} and {} more", names.len() - 3),
        _ => names.join(", "),
    }
}

/// Why the gates that run code (the checks, then the built-in checks and
/// the verifier) do not run after an attempt's agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Skip {
    /// The agent timed out or crashed.
    AgentFailed,
    /// The attempt changed no file.
    NoChange,
    /// It wrote outside its worktree or its scope.
    ScopeViolation,
    /// Nothing confined it and it changed the git links or the machinery
    /// ([`AttemptRecord::halted`]): nothing unconfined runs after it.
    Halted,
}

/// Whether the checks run after the agent of attempt `r`, whose agent run,
/// files and scope findings are known: `None` when they run, else why not.
/// Pure.
pub(crate) fn skip_checks(r: &AttemptRecord) -> Option<Skip> {
    let agent_ok = r.agent.as_ref().is_some_and(|a| !a.timed_out && !a.crashed());
    if r.halted.is_some() {
        Some(Skip::Halted)
    } else if !agent_ok {
        Some(Skip::AgentFailed)
    } else if r.files.is_empty() {
        Some(Skip::NoChange)
    } else if !r.scope.is_empty() {
        Some(Skip::ScopeViolation)
    } else {
        None
    }
}

/// What the loop does after an attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Next {
    /// The attempt passed every gate: the task succeeds with it.
    Succeed,
    /// No further attempt: a human takes the task over, for this reason.
    Escalate(String),
    /// Another attempt, when one is left.
    Retry,
}

/// What happens after the attempt `record`: success, escalation (the
/// verifier never answered, asked for a human, or the outcome is one that
/// `retry.on` does not retry), or another attempt. `kept` is the ref the
/// attempt is kept under (`refs/retry-run/<task>/<n>`), named when the
/// verifier never answered.
pub(crate) fn next_step(record: &AttemptRecord, retry_on: &[RetryOn], kept: &str) -> Next {
    let n = record.number;
    if let Some(h) = &record.halted {
        return Next::Escalate(format!(
            "nothing confined attempt {n} and its {} changed {}; retry-run runs no unconfined step after that (no check, no verifier, no further attempt and its worktree.setup)",
            h.after,
            h.parts.join(", ")
        ));
    }
    match record.outcome {
        Outcome::Success => Next::Succeed,
        Outcome::Unverified => match tested_checkout(record) {
            Some(c) => Next::Escalate(format!(
                "check `{}` on attempt {n} tested your checkout, not the attempt, so the attempt is neither failed nor passed; it is kept ({kept}). {TESTED_CHECKOUT_ADVICE}",
                c.name
            )),
            None => Next::Escalate(format!("the verifier never answered on attempt {n}; the attempt is kept ({kept})")),
        },
        Outcome::VerifierRejection if record.verifier.as_ref().is_some_and(|v| v.escalates()) => {
            Next::Escalate(format!("the verifier asked for a human on attempt {n}"))
        }
        o => match o.retry_key() {
            Some(key) if !retry_on.contains(&key) => {
                Next::Escalate(format!("attempt {n} ended with {}, which retry.on does not retry", o.as_str()))
            }
            _ => Next::Retry,
        },
    }
}

/// A timeout that repeats the one before it: attempt `r` and `prev`, the
/// attempt before it, both ran into the agent's time limit, and `r` left
/// no change or the same one as `prev` (`same_change`: their snapshots'
/// trees are one). Another attempt would spend its time the same way, so
/// the task stops, told what to raise. `None` otherwise, and when the
/// user's own `retry.on` lists `timeout` (timeouts retried on purpose).
/// Pure.
pub(crate) fn repeated_timeout(
    prev: Option<&AttemptRecord>,
    r: &AttemptRecord,
    same_change: bool,
    retry_on: &RetryOnList,
) -> Option<String> {
    let prev = prev.filter(|p| p.outcome == Outcome::Timeout)?;
    if r.outcome != Outcome::Timeout || retry_on.keeps_timeouts() {
        return None;
    }
    let (p, n) = (prev.number, r.number);
    let left = if r.files.is_empty() {
        "no change".to_string()
    } else if same_change {
        format!("the same change as attempt {p}")
    } else {
        return None;
    };
    let limit = r.agent.as_ref().map_or_else(|| "time".to_string(), |a| human_ms(a.timeout_ms));
    Some(format!(
        "attempts {p} and {n} both ran into the agent's {limit} limit, and attempt {n} left {left}: another attempt would spend its time the same way. Raise `[agent] timeout` in retry-run.toml if the task needs longer, or split the task into smaller ones; a `[retry] on` of your own that lists \"timeout\" keeps retrying timeouts"
    ))
}

/// Why no further attempt may start: the task's recorded agent cost or its
/// attempts' total time reached a bound of `retry`.
pub(crate) fn budget_spent(retry: &RetryConfig, prior: &[AttemptRecord]) -> Option<String> {
    if let Some(max) = retry.max_cost_usd {
        let cost: f64 = prior.iter().filter_map(|a| a.agent.as_ref()?.usage.as_ref()?.cost_usd).sum();
        if cost >= max {
            return Some(format!("the task's agent cost ${cost:.4} reached retry.max_cost_usd (${max})"));
        }
    }
    if let Some(max) = &retry.max_duration {
        let ms: u64 = prior.iter().map(|a| a.duration_ms).sum();
        if ms >= max.value.as_millis() as u64 {
            return Some(format!(
                "the task's attempts took {} in all, reaching retry.max_duration ({})",
                human_ms(ms),
                max.text
            ));
        }
    }
    None
}

/// An attempt that came close: every test check and the task's targets
/// passed (at least one ran), and it failed only on new diagnostics of
/// lint checks, or only on the reviewer's remark. Its diff is worth
/// keeping for the next attempt. Returns what it failed on. Pure.
pub(crate) fn near_miss(r: &AttemptRecord) -> Option<String> {
    use crate::model::CheckKind;
    let tests: Vec<_> = r.checks.iter().filter(|c| c.kind == CheckKind::Test).collect();
    // A suite not run in full (`fail_fast`) says nothing of every test.
    if tests.is_empty() || !tests.iter().all(|c| c.passed && !c.targets_only) || !r.not_run.is_empty() {
        return None;
    }
    match r.outcome {
        Outcome::CheckFailure => {
            let failed: Vec<_> = r.failed_checks().collect();
            let lint_only = failed.iter().all(|c| {
                matches!(c.kind, CheckKind::Lint | CheckKind::Custom)
                    && c.name != "test-integrity"
                    && !c.timed_out
                    && !c.failures.is_empty()
                    && c.failures.iter().all(|f| !f.test)
            });
            if !lint_only {
                return None;
            }
            let n: usize = failed.iter().map(|c| c.failures.len()).sum();
            let names: Vec<String> = failed.iter().map(|c| format!("`{}`", c.name)).collect();
            Some(format!("{n} new diagnostic{} of {}", plural(n), names.join(", ")))
        }
        Outcome::VerifierRejection if r.checks.iter().all(|c| c.passed) => Some("the reviewer's remarks".into()),
        _ => None,
    }
}

/// One entry per failure a passed check left failing as on the base:
/// tests by name (`pytest: tests/t.py::test_a`, at most five a check),
/// diagnostics counted (`ruff: 202 already on the base, 0 new`). Pure.
pub(crate) fn base_counts(r: &AttemptRecord) -> Vec<String> {
    let mut out = Vec::new();
    for c in r.checks.iter().filter(|c| c.passed && !c.flaky && c.failing_on_base) {
        let theirs: Vec<&crate::model::Failure> = c.pre_existing.iter().filter(|f| !f.target).collect();
        let (tests, diagnostics): (Vec<&crate::model::Failure>, Vec<&crate::model::Failure>) =
            theirs.iter().copied().partition(|f| f.test);
        for f in tests.iter().take(5) {
            out.push(format!("{}: {}", c.name, f.key));
        }
        if tests.len() > 5 {
            out.push(format!("{}: {} more tests", c.name, tests.len() - 5));
        }
        if !diagnostics.is_empty() {
            out.push(format!("{}: {} already on the base, {} new", c.name, diagnostics.len(), c.failures.len()));
        }
        if c.pre_existing.is_empty() && !c.timed_out && c.exit_code != Some(0) {
            out.push(format!("{}: still {}, as on the base", c.name, exit_text(c.exit_code, c.signal)));
        }
    }
    out
}

/// How the checks of `r` that left the base's failures failing were told
/// to: `retry.baseline = "tolerate"`, or `auto` (diagnostics and tests
/// that are not targets). Pure.
pub(crate) fn tolerated_by(r: &AttemptRecord) -> String {
    use crate::model::BaselineMode;
    let modes: Vec<BaselineMode> =
        r.checks.iter().filter(|c| c.passed && c.failing_on_base).filter_map(|c| c.baseline).collect();
    if modes.contains(&BaselineMode::Tolerate) {
        "tolerated by `retry.baseline = \"tolerate\"`".into()
    } else {
        "not this task's under the baseline `auto` (diagnostics, and tests that are not targets, already on the base do not count)".into()
    }
}

/// The failures still failing on a passed check because the base has them
/// too and the baseline let them be: `check: key`.
pub(crate) fn tolerated(r: &AttemptRecord) -> Vec<String> {
    r.checks
        .iter()
        .filter(|c| c.passed && !c.flaky)
        .flat_map(|c| {
            let mut names: Vec<String> = c.pre_existing.iter().map(|f| format!("{}: {}", c.name, f.key)).collect();
            // A check that fails as on the base with nothing parsed from its output.
            if names.is_empty() && c.failing_on_base && !c.timed_out && c.exit_code != Some(0) {
                names.push(format!("{}: still {}, as on the base", c.name, exit_text(c.exit_code, c.signal)));
            }
            names
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DurationSpec;
    use crate::model::{
        AgentRun, CheckKind, CheckResult, Failure, FileChange, Halt, HaltedAfter, ScopeFinding, Usage, VerifierResult,
    };

    /// An attempt whose agent exited 0 and changed one file: every gate passes.
    fn changed() -> AttemptRecord {
        let mut r = AttemptRecord::new(1);
        r.agent = Some(AgentRun { exit_code: Some(0), ..AgentRun::default() });
        r.files.push(FileChange { path: "a.py".into(), status: "M".into(), ..FileChange::default() });
        r
    }

    fn finding(reason: ScopeReason) -> ScopeFinding {
        ScopeFinding { path: "x".into(), old_path: None, reason, rule: None }
    }

    fn verifier(answered: bool, verdict: &str, confidence: Option<f64>) -> VerifierResult {
        VerifierResult {
            answered,
            calls: 3,
            verdict: Some(verdict.into()),
            confidence,
            min_confidence: 0.6,
            ..VerifierResult::default()
        }
    }

    #[test]
    fn gates_in_order() {
        type Edit = fn(&mut AttemptRecord);
        let cases: &[(&str, Edit, Outcome, &str)] = &[
            ("every gate passes", |_| {}, Outcome::Success, "every gate passed"),
            (
                "the agent timed out",
                |r| {
                    let a = r.agent.as_mut().expect("agent");
                    a.timed_out = true;
                    a.exit_code = Some(2);
                    a.timeout_ms = 90_000;
                },
                Outcome::Timeout,
                "the agent ran past its 1m 30s limit",
            ),
            (
                "the agent crashed, before an empty diff",
                |r| {
                    r.agent.as_mut().expect("agent").exit_code = Some(2);
                    r.files.clear();
                },
                Outcome::Crash,
                "the agent exited with code 2",
            ),
            (
                "killed by a signal",
                |r| {
                    let a = r.agent.as_mut().expect("agent");
                    (a.exit_code, a.signal) = (None, Some(9));
                },
                Outcome::Crash,
                "the agent was killed by signal 9 (SIGKILL)",
            ),
            (
                "a write into the checkout, before an empty diff",
                |r| {
                    r.files.clear();
                    r.scope.push(finding(ScopeReason::OutsideWorktree));
                    r.scope.push(finding(ScopeReason::OutsideWorktree));
                },
                Outcome::ScopeViolation,
                "2 paths written outside the worktree",
            ),
            (
                "git internals changed, before an empty diff",
                |r| {
                    r.files.clear();
                    r.scope.push(ScopeFinding {
                        path: "objects/info/alternates".into(),
                        ..finding(ScopeReason::GitInternal)
                    });
                },
                Outcome::ScopeViolation,
                "the repository's git internals changed: objects/info/alternates",
            ),
            (
                "a push and a lock of the checkout, before git internals and an empty diff",
                |r| {
                    r.files.clear();
                    r.scope.push(ScopeFinding {
                        path: "objects/info/alternates".into(),
                        ..finding(ScopeReason::GitInternal)
                    });
                    r.scope
                        .push(ScopeFinding { path: "origin:refs/heads/main".into(), ..finding(ScopeReason::Pushed) });
                    r.scope.push(ScopeFinding { path: ".git/index.lock".into(), ..finding(ScopeReason::CheckoutGit) });
                },
                Outcome::ScopeViolation,
                "written outside the worktree: origin:refs/heads/main (pushed), .git/index.lock (checkout-git)",
            ),
            (
                "many git internals are named by the first three",
                |r| {
                    for p in ["a", "b", "c", "d", "e"] {
                        r.scope.push(ScopeFinding { path: p.into(), ..finding(ScopeReason::GitInternal) });
                    }
                },
                Outcome::ScopeViolation,
                "the repository's git internals changed: a, b, c and 2 more",
            ),
            (
                "halted, before everything else",
                |r| {
                    r.agent.as_mut().expect("agent").exit_code = Some(1);
                    r.files.clear();
                    r.halted = Some(Halt { after: HaltedAfter::Agent, parts: vec!["worktree/.git".into()] });
                },
                Outcome::ScopeViolation,
                "nothing confined the agent and it changed worktree/.git: no unconfined step ran after it",
            ),
            (
                "no file changed, before other scope findings",
                |r| {
                    r.files.clear();
                    r.scope.push(finding(ScopeReason::Denied));
                },
                Outcome::EmptyDiff,
                "the attempt changed no file",
            ),
            (
                "directories too deep and nothing else: no empty diff, the directories are why",
                |r| {
                    r.files.clear();
                    let deep = ["deep0", "deep1"].map(|top| format!("{top}{}", "/d".repeat(99)));
                    for path in deep {
                        r.scope.push(ScopeFinding { path, ..finding(ScopeReason::TooDeep) });
                    }
                },
                Outcome::ScopeViolation,
                "2 directories 100 levels deep or more, cut out of the change: deep0/d/d/…/d, deep1/d/d/…/d",
            ),
            (
                "outside the allowed scope, before checks",
                |r| {
                    r.scope.push(finding(ScopeReason::OutsideAllow));
                    r.checks.push(CheckResult::new("pytest", CheckKind::Test, false));
                },
                Outcome::ScopeViolation,
                "1 path written outside the allowed scope",
            ),
            (
                "failed checks, before the verifier",
                |r| {
                    r.checks.push(CheckResult::new("ruff", CheckKind::Lint, false));
                    r.checks.push(CheckResult::new("mypy", CheckKind::Lint, true));
                    r.checks.push(CheckResult::new("pytest", CheckKind::Test, false));
                    r.verifier = Some(verifier(true, "needs_changes", Some(0.9)));
                },
                Outcome::CheckFailure,
                "checks failed: ruff, pytest",
            ),
            (
                "a silent verifier",
                |r| r.verifier = Some(VerifierResult { answered: false, calls: 3, ..VerifierResult::default() }),
                Outcome::Unverified,
                "the verifier never answered (3 calls)",
            ),
            (
                "the verifier escalates",
                |r| r.verifier = Some(verifier(true, "escalate", None)),
                Outcome::VerifierRejection,
                "the verifier asked for a human (escalate)",
            ),
            (
                "the verifier asks for changes",
                |r| r.verifier = Some(verifier(true, "needs_changes", Some(0.9))),
                Outcome::VerifierRejection,
                "the verifier asked for changes (confidence 0.90)",
            ),
            (
                "too little confidence does not fail",
                |r| r.verifier = Some(verifier(true, "needs_changes", Some(0.5))),
                Outcome::Success,
                "every gate passed",
            ),
            (
                "the verifier approves",
                |r| r.verifier = Some(verifier(true, "approved", Some(0.9))),
                Outcome::Success,
                "every gate passed",
            ),
        ];
        for (what, edit, outcome, reason) in cases {
            let mut r = changed();
            edit(&mut r);
            assert_eq!(classify(&r), Classified { outcome: *outcome, reason: reason.to_string() }, "{what}");
        }
    }

    #[test]
    fn what_happens_after_each_outcome() {
        use Outcome::*;
        #[derive(Debug)]
        enum Want {
            Succeed,
            Retry,
            Escalate(&'static str),
        }
        const NOT_RETRIED: &str = "which retry.on does not retry";
        const SILENT: &str = "the verifier never answered on attempt 2; the attempt is kept (refs/retry-run/t/2)";
        const HUMAN: &str = "the verifier asked for a human on attempt 2";
        // outcome, its retry.on key listed, the verifier said `escalate`, what happens.
        let cases: &[(Outcome, bool, bool, Want)] = &[
            (Success, true, false, Want::Succeed),
            (Success, false, false, Want::Succeed),
            (Success, true, true, Want::Succeed),
            (Success, false, true, Want::Succeed),
            (CheckFailure, true, false, Want::Retry),
            (CheckFailure, false, false, Want::Escalate(NOT_RETRIED)),
            (CheckFailure, true, true, Want::Retry),
            (CheckFailure, false, true, Want::Escalate(NOT_RETRIED)),
            (ScopeViolation, true, false, Want::Retry),
            (ScopeViolation, false, false, Want::Escalate(NOT_RETRIED)),
            (ScopeViolation, true, true, Want::Retry),
            (ScopeViolation, false, true, Want::Escalate(NOT_RETRIED)),
            (VerifierRejection, true, false, Want::Retry),
            (VerifierRejection, false, false, Want::Escalate(NOT_RETRIED)),
            (VerifierRejection, true, true, Want::Escalate(HUMAN)),
            (VerifierRejection, false, true, Want::Escalate(HUMAN)),
            (EmptyDiff, true, false, Want::Retry),
            (EmptyDiff, false, false, Want::Escalate(NOT_RETRIED)),
            (EmptyDiff, true, true, Want::Retry),
            (EmptyDiff, false, true, Want::Escalate(NOT_RETRIED)),
            (Crash, true, false, Want::Retry),
            (Crash, false, false, Want::Escalate(NOT_RETRIED)),
            (Crash, true, true, Want::Retry),
            (Crash, false, true, Want::Escalate(NOT_RETRIED)),
            (Timeout, true, false, Want::Retry),
            (Timeout, false, false, Want::Escalate(NOT_RETRIED)),
            (Timeout, true, true, Want::Retry),
            (Timeout, false, true, Want::Escalate(NOT_RETRIED)),
            (Unverified, true, false, Want::Escalate(SILENT)),
            (Unverified, false, false, Want::Escalate(SILENT)),
            (Unverified, true, true, Want::Escalate(SILENT)),
            (Unverified, false, true, Want::Escalate(SILENT)),
            // A lane's stopped attempt never reaches this: the lane ends.
            (Stopped, true, false, Want::Retry),
            (Stopped, false, false, Want::Retry),
            (Stopped, true, true, Want::Retry),
            (Stopped, false, true, Want::Retry),
        ];
        assert_eq!(cases.len(), Outcome::ALL.len() * 4, "every outcome, retried or not, escalating or not");
        let all = RetryConfig::default().on;
        for (outcome, listed, escalates, want) in cases {
            let mut r = AttemptRecord::new(2);
            r.outcome = *outcome;
            if *escalates {
                r.verifier = Some(verifier(true, "escalate", None));
            }
            let retry_on: Vec<RetryOn> =
                all.iter().copied().filter(|k| *listed || Some(*k) != outcome.retry_key()).collect();
            let got = next_step(&r, &retry_on, "refs/retry-run/t/2");
            let ok = match (&got, want) {
                (Next::Succeed, Want::Succeed) | (Next::Retry, Want::Retry) => true,
                (Next::Escalate(why), Want::Escalate(NOT_RETRIED)) => {
                    *why == format!("attempt 2 ended with {}, {NOT_RETRIED}", outcome.as_str())
                }
                (Next::Escalate(why), Want::Escalate(text)) => why == text,
                _ => false,
            };
            assert!(ok, "{outcome:?} listed={listed} escalates={escalates}: got {got:?}, want {want:?}");
        }
    }

    #[test]
    fn a_second_timeout_with_no_new_change_stops_the_task_unless_the_user_retries_timeouts() {
        fn rec(n: u32, outcome: Outcome, files: &[&str]) -> AttemptRecord {
            let mut r = AttemptRecord::new(n);
            r.outcome = outcome;
            r.agent = Some(crate::model::AgentRun {
                timed_out: outcome == Outcome::Timeout,
                timeout_ms: 1000,
                ..Default::default()
            });
            r.files = files
                .iter()
                .map(|p| crate::model::FileChange {
                    path: p.to_string(),
                    old_path: None,
                    status: "M".into(),
                    additions: 1,
                    deletions: 0,
                    binary: false,
                })
                .collect();
            r
        }
        let default = RetryOnList::default();
        let mine = RetryOnList { explicit: true, ..RetryOnList::default() };
        let mine_without = RetryOnList { kinds: vec![RetryOn::CheckFailure], explicit: true };
        let (t1, t1_changed) = (rec(1, Outcome::Timeout, &[]), rec(1, Outcome::Timeout, &["a.py"]));
        let (t2, t2_changed) = (rec(2, Outcome::Timeout, &[]), rec(2, Outcome::Timeout, &["a.py"]));
        let stops = |why: Option<String>, left: &str| {
            let why = why.unwrap_or_else(|| panic!("stops, having left {left}"));
            assert!(why.starts_with("attempts 1 and 2 both ran into the agent's 1.0s limit"), "{why}");
            assert!(why.contains(&format!("attempt 2 left {left}:")), "{why}");
            assert!(why.contains("`[agent] timeout`") && why.contains("split the task"), "{why}");
        };
        // No change, twice; no change after a change; the same change again.
        stops(repeated_timeout(Some(&t1), &t2, false, &default), "no change");
        stops(repeated_timeout(Some(&t1_changed), &t2, false, &default), "no change");
        stops(repeated_timeout(Some(&t1_changed), &t2_changed, true, &default), "the same change as attempt 1");
        // A new change, a first timeout, a timeout after another outcome: on.
        assert_eq!(repeated_timeout(Some(&t1_changed), &t2_changed, false, &default), None);
        assert_eq!(repeated_timeout(Some(&t1), &t2_changed, false, &default), None);
        assert_eq!(repeated_timeout(None, &t2, false, &default), None);
        assert_eq!(repeated_timeout(Some(&rec(1, Outcome::Crash, &[])), &t2, false, &default), None);
        assert_eq!(repeated_timeout(Some(&t1), &rec(2, Outcome::Crash, &[]), false, &default), None);
        // The user's own `retry.on` with `timeout` keeps retrying them;
        // one without it (which escalates a first timeout anyway) does not.
        assert_eq!(repeated_timeout(Some(&t1), &t2, true, &mine), None);
        stops(repeated_timeout(Some(&t1), &t2, false, &mine_without), "no change");
    }

    #[test]
    fn when_the_checks_run_after_the_agent() {
        type Edit = fn(&mut AttemptRecord);
        fn halt() -> Option<Halt> {
            Some(Halt { after: HaltedAfter::Agent, parts: vec!["config".into()] })
        }
        let cases: &[(&str, Edit, Option<Skip>)] = &[
            ("every gate so far passed", |_| {}, None),
            ("the agent crashed", |r| r.agent.as_mut().expect("agent").exit_code = Some(1), Some(Skip::AgentFailed)),
            ("the agent timed out", |r| r.agent.as_mut().expect("agent").timed_out = true, Some(Skip::AgentFailed)),
            ("no agent ran", |r| r.agent = None, Some(Skip::AgentFailed)),
            ("no file changed", |r| r.files.clear(), Some(Skip::NoChange)),
            ("a scope finding", |r| r.scope.push(finding(ScopeReason::Denied)), Some(Skip::ScopeViolation)),
            ("git internals changed", |r| r.scope.push(finding(ScopeReason::GitInternal)), Some(Skip::ScopeViolation)),
            ("halted", |r| r.halted = halt(), Some(Skip::Halted)),
            (
                "halted, whatever else",
                |r| {
                    r.halted = halt();
                    r.files.clear();
                    r.agent.as_mut().expect("agent").exit_code = Some(1);
                },
                Some(Skip::Halted),
            ),
        ];
        for (what, edit, want) in cases {
            let mut r = changed();
            edit(&mut r);
            assert_eq!(skip_checks(&r), *want, "{what}");
        }
    }

    #[test]
    fn a_halted_attempt_is_the_last_whatever_retry_on_says() {
        let mut r = AttemptRecord::new(2);
        r.halted = Some(Halt { after: HaltedAfter::Checks, parts: vec!["hooks/pre-commit".into()] });
        r.outcome = classify(&r).outcome;
        assert_eq!(r.outcome, Outcome::ScopeViolation);
        match next_step(&r, &RetryConfig::default().on, "refs/retry-run/t/2") {
            Next::Escalate(why) => {
                assert!(why.starts_with("nothing confined attempt 2 and its checks changed hooks/pre-commit;"), "{why}")
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn budgets_stop_further_attempts() {
        let spent = |cost: f64, ms: u64| {
            let mut a = AttemptRecord::new(1);
            a.duration_ms = ms;
            a.agent = Some(AgentRun {
                usage: Some(Usage { cost_usd: Some(cost), ..Usage::default() }),
                ..AgentRun::default()
            });
            a
        };
        let minute = || Some(DurationSpec::parse("1m").expect("duration"));
        /// Max cost, max duration, the attempts' (cost, ms), the reason (a part of it) or None.
        type Case = (Option<f64>, Option<DurationSpec>, &'static [(f64, u64)], Option<&'static str>);
        let cases: &[Case] = &[
            (None, None, &[(5.0, 9_000_000)], None),
            (Some(0.5), None, &[(0.2, 0)], None),
            (Some(0.5), None, &[(0.2, 0), (0.3, 0)], Some("the task's agent cost $0.5000 reached retry.max_cost_usd")),
            (None, minute(), &[(0.0, 30_000)], None),
            (
                None,
                minute(),
                &[(0.0, 30_000), (0.0, 30_000)],
                Some("the task's attempts took 1m 00s in all, reaching retry.max_duration (1m)"),
            ),
            (Some(9.0), minute(), &[(1.0, 90_000)], Some("retry.max_duration")),
        ];
        for (max_cost, max_duration, attempts, want) in cases {
            let retry =
                RetryConfig { max_cost_usd: *max_cost, max_duration: max_duration.clone(), ..RetryConfig::default() };
            let prior: Vec<AttemptRecord> = attempts.iter().map(|&(c, ms)| spent(c, ms)).collect();
            let got = budget_spent(&retry, &prior);
            match want {
                None => assert_eq!(got, None, "{attempts:?}"),
                Some(part) => assert!(got.as_deref().is_some_and(|g| g.contains(part)), "{got:?} lacks {part:?}"),
            }
        }
    }

    #[test]
    fn near_misses_and_base_counts() {
        let diag = |k: &str| Failure { key: k.into(), label: k.into(), test: false, ..Default::default() };
        let mut r = changed();
        r.checks.push(CheckResult::new("pytest", CheckKind::Test, true));
        let mut ruff = CheckResult::new("ruff", CheckKind::Lint, false);
        ruff.failures = vec![diag("a.py|F401||x")];
        ruff.pre_existing = vec![diag("b.py|E741||y"), diag("c.py|F401||z")];
        ruff.failing_on_base = true;
        ruff.base_tolerated = true;
        r.checks.push(ruff);
        r.outcome = classify(&r).outcome;
        assert_eq!(near_miss(&r).as_deref(), Some("1 new diagnostic of `ruff`"));
        // A failing test (or no test at all) is no near miss.
        let mut broken = r.clone();
        broken.checks[0].passed = false;
        broken.checks[0].failures = vec![Failure { key: "t::a".into(), test: true, ..Default::default() }];
        broken.outcome = classify(&broken).outcome;
        assert_eq!(near_miss(&broken), None);
        let mut untested = r.clone();
        untested.checks.remove(0);
        assert_eq!(near_miss(&untested), None);
        // Passed with the base's diagnostics left: counted, not listed.
        let mut ok = r.clone();
        ok.checks[1].passed = true;
        ok.checks[1].failures.clear();
        assert_eq!(base_counts(&ok), ["ruff: 2 already on the base, 0 new"]);
        assert!(tolerated_by(&ok).contains("auto"));
    }

    #[test]
    fn tolerated_failures_of_passed_checks() {
        fn failure(key: &str) -> Failure {
            Failure { key: key.into(), label: key.into(), test: true, ..Default::default() }
        }
        type Edit = fn(&mut CheckResult);
        let cases: &[(&str, Edit, &[&str])] = &[
            ("a clean pass", |_| {}, &[]),
            (
                "base failures listed",
                |c| c.pre_existing = vec![failure("t.py::a"), failure("t.py::b")],
                &["pytest: t.py::a", "pytest: t.py::b"],
            ),
            (
                "failing as on the base, nothing parsed",
                |c| {
                    c.failing_on_base = true;
                    c.exit_code = Some(1);
                },
                &["pytest: still exited with code 1, as on the base"],
            ),
            (
                "a flaky pass tolerates nothing",
                |c| {
                    c.flaky = true;
                    c.pre_existing = vec![failure("t.py::a")];
                },
                &[],
            ),
            (
                "a failed check tolerates nothing",
                |c| {
                    c.passed = false;
                    c.pre_existing = vec![failure("t.py::a")];
                },
                &[],
            ),
            (
                "a timeout on the base is not tolerated",
                |c| {
                    c.failing_on_base = true;
                    c.timed_out = true;
                    c.exit_code = None;
                },
                &[],
            ),
        ];
        for (what, edit, want) in cases {
            let mut r = changed();
            let mut c = CheckResult::new("pytest", CheckKind::Test, true);
            edit(&mut c);
            r.checks.push(c);
            assert_eq!(tolerated(&r), *want, "{what}");
        }
    }

    #[test]
    fn runs_left_by_fail_fast_never_make_a_success_nor_a_near_miss() {
        use crate::model::NotRun;
        let mut r = changed();
        let mut targets = CheckResult::new("tests", CheckKind::Test, true);
        targets.targets_only = true;
        r.checks.push(targets);
        r.not_run.push(NotRun {
            check: "tests".into(),
            part: "full".into(),
            label: "tests (full suite)".into(),
            reason: "`ruff` failed first; fail_fast = \"targets\"".into(),
        });
        let c = classify(&r);
        assert_eq!(c.outcome, Outcome::CheckFailure);
        assert!(c.reason.starts_with("not run: tests (full suite)"), "{}", c.reason);
        r.checks.push(CheckResult::new("ruff", CheckKind::Lint, false));
        r.outcome = classify(&r).outcome;
        assert_eq!(classify(&r).reason, "check failed: ruff");
        assert_eq!(near_miss(&r), None, "the full suite did not run: no test is known to pass");
    }
}
