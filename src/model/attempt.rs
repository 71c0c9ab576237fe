//! What one attempt did, as data: each gate's result and the outcome.
//!
//! The loop fills an [`AttemptRecord`] step by step and writes it as
//! `attempts/<n>/attempt.json` when the attempt completes; the retry context,
//! `report` and `stats` read it back. Pure: the gate order of docs/commands.md, `run` is
//! [`classify`], a function of the gates' results.

use serde::{Deserialize, Serialize};

use crate::config::{CheckKind, RetryOn};

/// Outcomes of an attempt (docs/commands.md, `run`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Outcome {
    Success,
    CheckFailure,
    ScopeViolation,
    VerifierRejection,
    EmptyDiff,
    Crash,
    Timeout,
    Unverified,
}

impl Outcome {
    pub const ALL: [Outcome; 8] = [
        Outcome::Success,
        Outcome::CheckFailure,
        Outcome::ScopeViolation,
        Outcome::VerifierRejection,
        Outcome::EmptyDiff,
        Outcome::Crash,
        Outcome::Timeout,
        Outcome::Unverified,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Success => "SUCCESS",
            Outcome::CheckFailure => "CHECK_FAILURE",
            Outcome::ScopeViolation => "SCOPE_VIOLATION",
            Outcome::VerifierRejection => "VERIFIER_REJECTION",
            Outcome::EmptyDiff => "EMPTY_DIFF",
            Outcome::Crash => "CRASH",
            Outcome::Timeout => "TIMEOUT",
            Outcome::Unverified => "UNVERIFIED",
        }
    }

    pub fn parse(s: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.as_str() == s)
    }

    /// The `retry.on` name of a failure; `None` for SUCCESS and UNVERIFIED,
    /// which are never retried.
    pub fn retry_key(self) -> Option<RetryOn> {
        Some(match self {
            Outcome::CheckFailure => RetryOn::CheckFailure,
            Outcome::ScopeViolation => RetryOn::ScopeViolation,
            Outcome::VerifierRejection => RetryOn::VerifierRejection,
            Outcome::EmptyDiff => RetryOn::EmptyDiff,
            Outcome::Crash => RetryOn::Crash,
            Outcome::Timeout => RetryOn::Timeout,
            Outcome::Success | Outcome::Unverified => return None,
        })
    }
}

/// How the agent process ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentRun {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub timeout_ms: u64,
    pub duration_ms: u64,
    pub output_bytes: u64,
    /// The newest file in the worktree when the agent stopped (timeouts).
    pub last_activity: Option<String>,
    /// The last lines of its output (for a crash).
    pub output_tail: Vec<String>,
    /// Paths outside the worktree its output says it was refused (the
    /// sandbox at work).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub refused: Vec<String>,
    /// Tokens, turns and cost, as the agent reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<crate::agents::output::Usage>,
    /// Its own final message (from its machine-readable output, else the
    /// tail of its output), bounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_message: Option<String>,
    /// Files it left in the worktree that are not part of the change
    /// (`[agent] ignore`), kept out of the snapshot.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ignored: Vec<String>,
}

impl AgentRun {
    pub fn crashed(&self) -> bool {
        !self.timed_out && self.exit_code != Some(0)
    }
}

/// One changed file of the attempt's snapshot.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChange {
    /// Quoted the way git quotes paths when not valid UTF-8.
    pub path: String,
    pub old_path: Option<String>,
    pub status: String,
    pub additions: usize,
    pub deletions: usize,
    pub binary: bool,
}

/// One scope violation.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScopeFinding {
    pub path: String,
    pub old_path: Option<String>,
    pub reason: String,
    pub rule: Option<String>,
}

/// A failure found in a check's output, with the key that compares it
/// with the base's failures (a test id, or path + code + enclosing scope).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub key: String,
    /// What to show: a test id with its reason, or `path:line: code message`.
    pub label: String,
    /// A failing test (as opposed to a diagnostic).
    pub test: bool,
}

/// A lint or compiler error with its enclosing scope, read from the
/// attempt's snapshot.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorItem {
    pub tool: String,
    pub path: String,
    pub line: Option<usize>,
    pub code: Option<String>,
    pub message: String,
    /// The qualified name of the enclosing function, class, impl, ...
    pub scope: Option<String>,
    pub snippet: Option<String>,
}

/// One check's result on the attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    pub name: String,
    pub kind: CheckKind,
    /// After flaky re-runs and the baseline comparison.
    pub passed: bool,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    /// Failed, then passed on a re-run of the same tree.
    pub flaky: bool,
    pub runs: u32,
    pub duration_ms: u64,
    /// Failures the attempt added (all of them without a baseline).
    pub failures: Vec<Failure>,
    /// Failures the base has too: not the attempt's.
    pub pre_existing: Vec<Failure>,
    /// The check fails on the base as well.
    pub failing_on_base: bool,
    /// The summarized output (docs/commands.md, `summarize`), paths relative to the worktree.
    pub digest: Vec<String>,
    /// The output's line count.
    pub output_lines: usize,
    /// New errors with their scopes and snippets.
    pub errors: Vec<ErrorItem>,
    /// Tests run by the runners' totals, when printed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests_ran: Option<u64>,
    /// Findings that are reported without failing the check (the
    /// `test-integrity` check in `warn` mode).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Failure>,
    /// Tests the output names as passed and failed (for targets; not
    /// recorded).
    #[serde(skip)]
    pub passed_tests: Vec<String>,
    #[serde(skip)]
    pub failed_tests: Vec<String>,
}

impl CheckResult {
    /// A check that ran once and exited 0 (`passed`) or 1, with nothing parsed.
    pub fn new(name: &str, kind: CheckKind, passed: bool) -> CheckResult {
        CheckResult {
            name: name.into(),
            kind,
            passed,
            exit_code: Some(if passed { 0 } else { 1 }),
            signal: None,
            timed_out: false,
            flaky: false,
            runs: 1,
            duration_ms: 0,
            failures: Vec::new(),
            pre_existing: Vec::new(),
            failing_on_base: false,
            digest: Vec::new(),
            output_lines: 0,
            errors: Vec::new(),
            tests_ran: None,
            warnings: Vec::new(),
            passed_tests: Vec::new(),
            failed_tests: Vec::new(),
        }
    }
}

/// What the verifier said (docs/config.md, `[verifier]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VerifierResult {
    /// A valid verdict other than `retry` came back.
    pub answered: bool,
    pub calls: u32,
    pub verdict: Option<String>,
    pub confidence: Option<f64>,
    pub required_change: Option<String>,
    pub critique: Option<String>,
    /// Why calls that did not answer failed.
    pub problems: Vec<String>,
    pub min_confidence: f64,
}

impl VerifierResult {
    /// `needs_changes` with enough confidence.
    pub fn rejects(&self) -> bool {
        self.answered
            && self.verdict.as_deref() == Some("needs_changes")
            && self.confidence.unwrap_or(1.0) >= self.min_confidence
    }

    pub fn escalates(&self) -> bool {
        self.answered && self.verdict.as_deref() == Some("escalate")
    }
}

/// Everything one attempt did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptRecord {
    pub number: u32,
    pub duration_ms: u64,
    pub outcome: Outcome,
    /// One line: why the outcome is what it is.
    pub reason: String,
    /// `retry-run` was killed during the attempt.
    pub interrupted: bool,
    pub agent: Option<AgentRun>,
    /// The snapshot commit.
    pub commit: Option<String>,
    pub files: Vec<FileChange>,
    /// The patch of the snapshot against the base, bounded.
    pub diff: Vec<String>,
    /// Patch lines cut from `diff`.
    pub diff_omitted: usize,
    pub scope: Vec<ScopeFinding>,
    /// The allowed globs at the time (for the required change).
    pub allow: Vec<String>,
    pub checks: Vec<CheckResult>,
    pub verifier: Option<VerifierResult>,
    /// Parts of the repository's git machinery (config, hooks, info) the
    /// attempt changed and retry-run put back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub restored: Vec<String>,
}

impl AttemptRecord {
    pub fn new(number: u32) -> Self {
        AttemptRecord {
            number,
            duration_ms: 0,
            outcome: Outcome::Crash,
            reason: String::new(),
            interrupted: false,
            agent: None,
            commit: None,
            files: Vec::new(),
            diff: Vec::new(),
            diff_omitted: 0,
            scope: Vec::new(),
            allow: Vec::new(),
            checks: Vec::new(),
            verifier: None,
            restored: Vec::new(),
        }
    }

    /// An attempt that `retry-run` did not finish (it was killed).
    pub fn interrupted(number: u32, duration_ms: u64) -> Self {
        AttemptRecord {
            duration_ms,
            outcome: Outcome::Crash,
            reason: "interrupted: retry-run stopped before the attempt finished".into(),
            interrupted: true,
            ..AttemptRecord::new(number)
        }
    }

    /// The ids of the failing tests of every failed check.
    pub fn failing_tests(&self) -> Vec<&str> {
        self.checks
            .iter()
            .filter(|c| !c.passed)
            .flat_map(|c| &c.failures)
            .filter(|f| f.test)
            .map(|f| f.key.as_str())
            .collect()
    }

    pub fn failed_checks(&self) -> impl Iterator<Item = &CheckResult> {
        self.checks.iter().filter(|c| !c.passed)
    }
}

/// The failures still failing on a passed check because the base has them
/// too and `retry.baseline = "tolerate"` let them be: `check: label`.
pub fn tolerated(r: &AttemptRecord) -> Vec<String> {
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

/// Why no further attempt may start: the task's recorded agent cost or its
/// attempts' total time reached a bound of `retry`. Pure.
pub fn budget_spent(retry: &crate::config::RetryConfig, prior: &[AttemptRecord]) -> Option<String> {
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

/// The scope finding of a write into the user's checkout (or its git state).
pub const OUTSIDE_WORKTREE: &str = "outside-worktree";

/// The gates of docs/commands.md, `run`, in order: agent exit, empty diff, scope, checks,
/// verifier. Returns the outcome and a one-line reason. The verifier's
/// `escalate` is not an outcome of its own: it approves nothing, so the
/// attempt is VERIFIER_REJECTION and the loop escalates.
pub fn classify(r: &AttemptRecord) -> (Outcome, String) {
    if let Some(agent) = &r.agent {
        if agent.timed_out {
            return (Outcome::Timeout, format!("the agent ran past its {} limit", human_ms(agent.timeout_ms)));
        }
        if agent.crashed() {
            return (Outcome::Crash, format!("the agent {}", exit_text(agent.exit_code, agent.signal)));
        }
    }
    let outside = r.scope.iter().filter(|v| v.reason == OUTSIDE_WORKTREE).count();
    if outside > 0 {
        return (Outcome::ScopeViolation, format!("{outside} path{} written outside the worktree", plural(outside)));
    }
    if r.files.is_empty() {
        return (Outcome::EmptyDiff, "the attempt changed no file".into());
    }
    if !r.scope.is_empty() {
        let n = r.scope.len();
        return (Outcome::ScopeViolation, format!("{n} path{} written outside the allowed scope", plural(n)));
    }
    let failed: Vec<&str> = r.failed_checks().map(|c| c.name.as_str()).collect();
    if !failed.is_empty() {
        return (Outcome::CheckFailure, format!("check{} failed: {}", plural(failed.len()), failed.join(", ")));
    }
    if let Some(v) = &r.verifier {
        if !v.answered {
            return (Outcome::Unverified, format!("the verifier never answered ({} calls)", v.calls));
        }
        if v.escalates() {
            return (Outcome::VerifierRejection, "the verifier asked for a human (escalate)".into());
        }
        if v.rejects() {
            return (
                Outcome::VerifierRejection,
                format!("the verifier asked for changes (confidence {:.2})", v.confidence.unwrap_or(1.0)),
            );
        }
    }
    (Outcome::Success, "every gate passed".into())
}

/// `exited with code 2`, `was killed by signal 9 (SIGKILL)`.
pub fn exit_text(code: Option<i32>, signal: Option<i32>) -> String {
    match (code, signal) {
        (_, Some(s)) => format!("was killed by signal {s} ({})", signal_name(s)),
        (Some(c), None) => format!("exited with code {c}"),
        (None, None) => "ended without an exit status".into(),
    }
}

pub fn signal_name(s: i32) -> &'static str {
    match s {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        _ => "signal",
    }
}

/// `1.2s`, `3m 04s`, `1h 02m`.
pub fn human_ms(ms: u64) -> String {
    let s = ms / 1000;
    if s < 60 {
        format!("{}.{}s", s, (ms % 1000) / 100)
    } else if s < 3600 {
        format!("{}m {:02}s", s / 60, s % 60)
    } else {
        format!("{}h {:02}m", s / 3600, (s % 3600) / 60)
    }
}

pub fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(name: &str, passed: bool) -> CheckResult {
        CheckResult::new(name, CheckKind::Test, passed)
    }

    fn changed() -> AttemptRecord {
        let mut r = AttemptRecord::new(1);
        r.agent = Some(AgentRun { exit_code: Some(0), ..AgentRun::default() });
        r.files.push(FileChange { path: "a.py".into(), status: "M".into(), ..FileChange::default() });
        r
    }

    #[test]
    fn budgets_stop_further_attempts() {
        let mut retry = crate::config::RetryConfig::default();
        let spent = |cost: f64, ms: u64| {
            let mut a = AttemptRecord::new(1);
            a.duration_ms = ms;
            a.agent = Some(AgentRun {
                usage: Some(crate::agents::output::Usage { cost_usd: Some(cost), ..Default::default() }),
                ..AgentRun::default()
            });
            a
        };
        assert_eq!(budget_spent(&retry, &[spent(5.0, 9_000_000)]), None);
        retry.max_cost_usd = Some(0.5);
        assert!(budget_spent(&retry, &[spent(0.2, 0)]).is_none());
        let why = budget_spent(&retry, &[spent(0.2, 0), spent(0.3, 0)]).expect("spent");
        assert!(why.contains("retry.max_cost_usd"), "{why}");
        retry.max_cost_usd = None;
        retry.max_duration = Some(crate::config::DurationSpec::parse("1m").expect("duration"));
        assert!(budget_spent(&retry, &[spent(0.0, 30_000)]).is_none());
        assert!(budget_spent(&retry, &[spent(0.0, 30_000), spent(0.0, 30_000)]).expect("spent").contains("1m"));
    }

    #[test]
    fn gates_in_order() {
        let mut r = changed();
        assert_eq!(classify(&r).0, Outcome::Success);
        r.verifier = Some(VerifierResult {
            answered: true,
            verdict: Some("needs_changes".into()),
            confidence: Some(0.5),
            min_confidence: 0.6,
            ..VerifierResult::default()
        });
        assert_eq!(classify(&r).0, Outcome::Success, "low confidence does not fail");
        r.verifier.as_mut().unwrap().confidence = Some(0.9);
        assert_eq!(classify(&r).0, Outcome::VerifierRejection);
        r.checks.push(check("pytest", false));
        assert_eq!(classify(&r).0, Outcome::CheckFailure);
        r.scope.push(ScopeFinding { path: "x".into(), reason: "denied".into(), ..ScopeFinding::default() });
        assert_eq!(classify(&r).0, Outcome::ScopeViolation);
        r.files.clear();
        assert_eq!(classify(&r).0, Outcome::EmptyDiff);
        r.agent.as_mut().unwrap().exit_code = Some(2);
        assert_eq!(classify(&r), (Outcome::Crash, "the agent exited with code 2".into()));
        r.agent.as_mut().unwrap().timed_out = true;
        r.agent.as_mut().unwrap().timeout_ms = 90_000;
        assert_eq!(classify(&r).0, Outcome::Timeout);
    }

    #[test]
    fn a_silent_verifier_is_unverified_and_escalate_rejects() {
        let mut r = changed();
        r.verifier = Some(VerifierResult { answered: false, calls: 3, ..VerifierResult::default() });
        assert_eq!(classify(&r).0, Outcome::Unverified);
        r.verifier =
            Some(VerifierResult { answered: true, verdict: Some("escalate".into()), ..VerifierResult::default() });
        assert_eq!(classify(&r).0, Outcome::VerifierRejection);
        r.verifier =
            Some(VerifierResult { answered: true, verdict: Some("approved".into()), ..VerifierResult::default() });
        assert_eq!(classify(&r).0, Outcome::Success);
    }

    #[test]
    fn outcome_names_round_trip() {
        for o in Outcome::ALL {
            assert_eq!(Outcome::parse(o.as_str()), Some(o));
            assert_eq!(serde_json::to_string(&o).unwrap(), format!("\"{}\"", o.as_str()));
        }
        assert_eq!(Outcome::Unverified.retry_key(), None);
        assert_eq!(exit_text(None, Some(9)), "was killed by signal 9 (SIGKILL)");
        assert_eq!(human_ms(1234), "1.2s");
        assert_eq!(human_ms(184_000), "3m 04s");
    }
}
