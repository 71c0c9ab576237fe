//! Checks as data: their kinds, how the base's failures count, and what
//! one check found on an attempt.

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};

/// The built-in check of a task's targets.
pub(crate) const TARGETS: &str = "targets";
/// The built-in check of removed, skipped or de-asserted tests.
pub(crate) const TEST_INTEGRITY: &str = "test-integrity";

/// What a check is (`[[check]] kind`); `lint` and `build` errors and
/// `test` failures are reported differently.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CheckKind {
    Lint,
    Test,
    Build,
    #[default]
    Custom,
}

/// How failures the base already has are treated (`retry.baseline`, and
/// `[[check]] baseline` for one check).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum BaselineMode {
    /// By what the failures are (docs/honest-success.md): lint and compiler
    /// diagnostics already on the base do not fail a check, new ones do;
    /// a test already failing on the base does not fail it when the task
    /// has targets and the test is not one of them; otherwise as `Label`.
    #[default]
    Auto,
    /// The base's failures still fail a check; the feedback labels them
    /// "already failing on the base".
    Label,
    /// The base's failures do not fail a check (only new ones do).
    Tolerate,
    /// The checks are not run on the base.
    Off,
}

impl BaselineMode {
    pub fn as_str(self) -> &'static str {
        match self {
            BaselineMode::Auto => "auto",
            BaselineMode::Label => "label",
            BaselineMode::Tolerate => "tolerate",
            BaselineMode::Off => "off",
        }
    }

    /// Whether the checks run on the base at all.
    pub fn runs(self) -> bool {
        self != BaselineMode::Off
    }
}

impl<'de> Deserialize<'de> for BaselineMode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Bool(bool),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::Bool(true) => Ok(BaselineMode::Tolerate),
            Raw::Bool(false) => Ok(BaselineMode::Off),
            Raw::Text(t) => match t.as_str() {
                "auto" => Ok(BaselineMode::Auto),
                "label" => Ok(BaselineMode::Label),
                "tolerate" => Ok(BaselineMode::Tolerate),
                "off" => Ok(BaselineMode::Off),
                other => Err(de::Error::custom(format!(
                    "unknown baseline mode {other:?}: use \"auto\", \"label\", \"tolerate\" or \"off\""
                ))),
            },
        }
    }
}

/// The key of the failure a check gets for changing the worktree after
/// the snapshot (`run/gates/check_writes.rs`): retry-run's finding, not a
/// line of the check's output.
pub(crate) const WROTE_WORKTREE_KEY: &str = "check-wrote-worktree";

/// A failure found in a check's output, with the key that compares it
/// with the base's failures (a test id, or path + code + enclosing scope).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Failure {
    pub key: String,
    /// What to show: a test id with its reason, or `path:line: code message`.
    pub label: String,
    /// A failing test (as opposed to a diagnostic).
    pub test: bool,
    /// One of the task's targets: a test meant to fail on the base.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub target: bool,
}

/// A lint or compiler error with its enclosing scope, read from the
/// attempt's snapshot.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ErrorItem {
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
pub(crate) struct CheckResult {
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
    /// The base's failures (`pre_existing`) do not fail this check (baseline
    /// `auto` for diagnostics and non-target tests, or `tolerate`): they are
    /// counted, never fed back as work to do.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub base_tolerated: bool,
    /// The baseline mode it was judged under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<BaselineMode>,
    /// Paths of the user's checkout (outside the worktree) that the check's
    /// output points into: it tested the checkout, not the attempt, and
    /// its result counts neither way.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tested_checkout: Vec<String>,
    /// What retry-run knows that may explain a failure (a submodule the
    /// worktree lacks), one sentence each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
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
    /// Only the task's targets ran (`fail_fast`'s first stage), not the
    /// check as configured: its full run is among the attempt's `not_run`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub targets_only: bool,
    /// Not run: the output of an earlier run on the same inputs was
    /// judged again (`[[check]] inputs`, docs/config.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reused: Option<Reused>,
    /// Run although an earlier run may have stood for it: the setting
    /// that said so (`[[check]] reuse = false`, `run --fresh-baseline`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_reused: Option<String>,
    /// Detect mode: what its runs reached that the other modes would have
    /// stopped (a connection out, a UNIX socket, a server on an address
    /// other than loopback), or why nothing could be seen. Recorded and
    /// told, never failing the check by itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub network_seen: Vec<super::NetworkSeen>,
}

/// A run of a check an attempt did not make, because a check before it
/// failed (`[retry] fail_fast`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct NotRun {
    pub check: String,
    /// `targets` (its targets alone) or `full` (the check as configured).
    pub part: String,
    /// As the user reads it: `tests (full suite)`, `ruff`.
    pub label: String,
    /// Why: which checks failed first, and the setting.
    pub reason: String,
}

/// Which run a reused check's output came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reused {
    /// The task whose run it was.
    pub task: String,
    /// Its attempt; `None`: the checks on the base.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    /// The reuse key (docs/config.md, `inputs`).
    pub key: String,
    /// How long that run took.
    pub duration_ms: u64,
    /// The environment that run received, in words (the key holds its
    /// digest: the user's variables, installed packages, toolchains).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<String>,
}

impl Reused {
    /// `the base's run` or `attempt 2`, with the task when it is another's.
    pub(crate) fn describe(&self, task: &str) -> String {
        let run = match self.attempt {
            Some(n) => format!("attempt {n}"),
            None => "the base's run".to_string(),
        };
        if self.task == task { run } else { format!("{run} of task {}", self.task) }
    }
}

/// How a check ended ([`CheckResult::verdict`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CheckVerdict {
    Flaky,
    Passed,
    TimedOut,
    Failed,
}

impl CheckVerdict {
    /// As the progress line says it, and as the report does.
    pub(crate) fn words(self) -> (&'static str, &'static str) {
        match self {
            CheckVerdict::Flaky => ("ok (flaky)", "passed (flaky)"),
            CheckVerdict::Passed => ("ok", "passed"),
            CheckVerdict::TimedOut => ("TIMEOUT", "TIMEOUT"),
            CheckVerdict::Failed => ("FAIL", "FAILED"),
        }
    }
}

impl CheckResult {
    /// A check that ran once and exited 0 (`passed`) or 1, with nothing parsed.
    pub(crate) fn new(name: &str, kind: CheckKind, passed: bool) -> CheckResult {
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
            base_tolerated: false,
            baseline: None,
            tested_checkout: Vec::new(),
            notes: Vec::new(),
            digest: Vec::new(),
            output_lines: 0,
            errors: Vec::new(),
            tests_ran: None,
            warnings: Vec::new(),
            passed_tests: Vec::new(),
            failed_tests: Vec::new(),
            targets_only: false,
            reused: None,
            not_reused: None,
            network_seen: Vec::new(),
        }
    }

    /// How it ended, as the progress line and the report say it.
    pub(crate) fn verdict(&self) -> CheckVerdict {
        if self.flaky {
            CheckVerdict::Flaky
        } else if self.passed {
            CheckVerdict::Passed
        } else if self.timed_out {
            CheckVerdict::TimedOut
        } else {
            CheckVerdict::Failed
        }
    }

    /// The word the progress line shows for it: `ok`, `ok (flaky)`,
    /// `TIMEOUT`, `FAIL`, and `(reused from ...)` when it was not run.
    pub(crate) fn gate_word(&self, task: &str) -> String {
        let word = self.verdict().words().0;
        match &self.reused {
            Some(r) => format!("{word} (reused from {})", r.describe(task)),
            None => word.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reused_check_names_the_run_it_came_from() {
        let reused = |task: &str, attempt| Reused {
            task: task.into(),
            attempt,
            key: "k".into(),
            duration_ms: 5,
            environment: None,
        };
        let cases = [
            (reused("t", None), "t", "the base's run"),
            (reused("t", Some(2)), "t", "attempt 2"),
            (reused("other", None), "t", "the base's run of task other"),
            (reused("other", Some(1)), "t", "attempt 1 of task other"),
        ];
        for (r, task, want) in cases {
            assert_eq!(r.describe(task), want);
        }
        let mut c = CheckResult::new("pytest", CheckKind::Test, true);
        assert_eq!(c.gate_word("t"), "ok");
        c.reused = Some(reused("t", None));
        assert_eq!(c.gate_word("t"), "ok (reused from the base's run)");
        c.passed = false;
        c.reused = Some(reused("t", Some(1)));
        assert_eq!(c.gate_word("t"), "FAIL (reused from attempt 1)");
        c.timed_out = true;
        c.reused = None;
        assert_eq!(c.gate_word("t"), "TIMEOUT");
        c.flaky = true;
        assert_eq!(c.gate_word("t"), "ok (flaky)");
    }
}
