//! A check judged against the base: failure keys that survive a shifted
//! line, an attempt's failures split into new ones and the base's own, and
//! the check's verdict under the baseline mode. Pure: the shell that runs
//! checks is `run::gates::checks`.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::config::CheckConfig;
use crate::diagnostics::Severity;
use crate::enrich;
use crate::model::{BaselineMode, CheckResult, ErrorItem, Failure};
use crate::test_results::TestRun;

/// Tools whose diagnostics are test failures (keyed by test id instead).
pub const TEST_TOOLS: [&str; 3] = ["pytest", "cargo-test", "python-traceback"];

/// One run of a check, parsed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Parsed {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub timed_out: bool,
    pub duration_ms: u64,
    pub failures: Vec<Failure>,
    pub digest: Vec<String>,
    pub output_lines: usize,
    pub errors: Vec<ErrorItem>,
    /// The tests the output names as passed and failed, and the totals.
    #[serde(default)]
    pub tests: TestRun,
}

impl Parsed {
    pub fn exited_ok(&self) -> bool {
        !self.timed_out && self.exit_code == Some(0)
    }
}

/// The base's result of a check, cached in the record.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Baseline {
    pub check: String,
    pub run: String,
    pub base: String,
    pub passed: bool,
    pub failures: Vec<Failure>,
    /// Tests run by the runners' totals (passed + failed), when printed.
    #[serde(default)]
    pub ran: Option<u64>,
}

/// The failures of one run: failing tests by id, and error diagnostics of
/// lint and compiler tools by path, code and enclosing scope (never by
/// line, so a shifted line still matches). Pure.
pub fn failure_keys(failed_tests: &[String], enriched: &[enrich::Enriched]) -> Vec<Failure> {
    let mut out: Vec<Failure> = failed_tests
        .iter()
        .map(|entry| {
            let id = entry.split(" - ").next().unwrap_or(entry).trim().to_string();
            Failure { key: id, label: entry.clone(), test: true }
        })
        .collect();
    let tests_known = !out.is_empty();
    for e in enriched {
        let d = &e.diagnostic;
        if !counts(d.severity, enriched) || (tests_known && TEST_TOOLS.contains(&d.tool)) {
            continue;
        }
        let path = d.path.clone().unwrap_or_default();
        let scope = e.scope.as_ref().map(|s| s.qualified_name.clone()).unwrap_or_default();
        let at = match d.line {
            Some(l) => format!("{path}:{l}"),
            None => path.clone(),
        };
        let code = d.code.as_ref().map(|c| format!(" {c}")).unwrap_or_default();
        let in_scope = if scope.is_empty() { String::new() } else { format!(" (in {scope})") };
        out.push(Failure {
            key: key(&path, d.code.as_deref(), &d.message, &scope),
            label: format!(
                "{at}:{code} {}{in_scope}",
                crate::text::clip(d.message.lines().next().unwrap_or(""), 200, "...")
            ),
            test: false,
        });
    }
    out
}

/// Errors are failures; warnings too when the output has no error (a lint
/// check that fails on warnings, `clippy -D warnings` aside).
pub fn counts(severity: Severity, all: &[enrich::Enriched]) -> bool {
    match severity {
        Severity::Error => true,
        Severity::Warning => {
            !all.iter().any(|e| e.diagnostic.severity == Severity::Error && e.diagnostic.path.is_some())
        }
        _ => false,
    }
}

/// The baseline key of a diagnostic: path, code (or the message's start
/// when there is no code) and enclosing scope.
fn key(path: &str, code: Option<&str>, message: &str, scope: &str) -> String {
    let what = match code {
        Some(c) => c.to_string(),
        None => crate::text::clip(message.lines().next().unwrap_or(""), 80, "").into_owned(),
    };
    format!("{path}|{what}|{scope}")
}

fn error_key(e: &ErrorItem) -> String {
    key(&e.path, e.code.as_deref(), &e.message, e.scope.as_deref().unwrap_or(""))
}

/// Splits an attempt's failures into new ones and ones the base has too,
/// one by one (a failure present twice on the attempt and once on the base
/// is new once). Pure.
pub fn against_base(attempt: &[Failure], base: &[Failure]) -> (Vec<Failure>, Vec<Failure>) {
    let mut left: HashMap<&str, usize> = HashMap::new();
    for f in base {
        *left.entry(f.key.as_str()).or_default() += 1;
    }
    let (mut new, mut old) = (Vec::new(), Vec::new());
    for f in attempt {
        match left.get_mut(f.key.as_str()) {
            Some(n) if *n > 0 => {
                *n -= 1;
                old.push(f.clone());
            }
            _ => new.push(f.clone()),
        }
    }
    (new, old)
}

/// Judges a parsed run against the base. Pure.
///
/// With `label` a failure the base has too still fails the check (it is
/// kept apart, in `pre_existing`, to be labelled); with `tolerate` it does
/// not. Without a base (`off`, or no baseline yet) every failure is new.
pub fn judge(
    check: &CheckConfig,
    p: &Parsed,
    base: Option<&Baseline>,
    mode: BaselineMode,
    runs: u32,
    flaky: bool,
) -> CheckResult {
    let base = base.filter(|_| mode.runs());
    let (passed, failures, pre_existing, failing_on_base) = match base {
        _ if p.exited_ok() => (true, Vec::new(), Vec::new(), base.is_some_and(|b| !b.passed)),
        Some(b) if !b.passed && !p.timed_out => {
            let (new, old) = against_base(&p.failures, &b.failures);
            (new.is_empty() && mode == BaselineMode::Tolerate, new, old, true)
        }
        _ => (false, p.failures.clone(), Vec::new(), false),
    };
    let new_keys: Vec<&str> = failures.iter().map(|f| f.key.as_str()).collect();
    let mut result = CheckResult::new(&check.name, check.kind, passed || flaky);
    result.exit_code = p.exit_code;
    result.signal = p.signal;
    result.timed_out = p.timed_out;
    result.flaky = flaky;
    result.runs = runs;
    result.duration_ms = p.duration_ms;
    result.failures = if flaky { Vec::new() } else { failures.clone() };
    result.pre_existing = pre_existing;
    result.failing_on_base = failing_on_base;
    result.digest = p.digest.clone();
    result.output_lines = p.output_lines;
    result.tests_ran = p.tests.ran;
    result.passed_tests = p.tests.passed.clone();
    result.failed_tests = p.tests.failed.clone();
    // The errors behind the failures that fail the check are fed back: all
    // of them, unless the base's are tolerated.
    let only_new = failing_on_base && mode == BaselineMode::Tolerate;
    result.errors = if flaky {
        Vec::new()
    } else {
        let new_tests = failures.iter().any(|f| f.test);
        p.errors
            .iter()
            .filter(|e| {
                !only_new
                    || (new_tests && TEST_TOOLS.contains(&e.tool.as_str()))
                    || new_keys.contains(&error_key(e).as_str())
            })
            .cloned()
            .collect()
    };
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::{self, Format};

    fn f(key: &str) -> Failure {
        Failure { key: key.into(), label: key.into(), test: true }
    }

    #[test]
    fn failures_are_compared_one_by_one() {
        let (new, old) = against_base(&[f("a"), f("b"), f("b"), f("c")], &[f("b"), f("c"), f("d")]);
        assert_eq!(new.iter().map(|x| x.key.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(old.iter().map(|x| x.key.as_str()).collect::<Vec<_>>(), ["b", "c"]);
    }

    #[test]
    fn lint_keys_ignore_the_line() {
        let text_a = "src/a.py:3:1: F401 [*] `os` imported but unused\n";
        let text_b = "src/a.py:9:1: F401 [*] `os` imported but unused\n";
        let keys = |t: &str| {
            let d = diagnostics::parse(Format::Ruff, t);
            let e: Vec<enrich::Enriched> =
                d.into_iter().map(|diagnostic| enrich::Enriched { diagnostic, scope: None, snippet: None }).collect();
            failure_keys(&[], &e).into_iter().map(|f| f.key).collect::<Vec<_>>()
        };
        assert_eq!(keys(text_a), keys(text_b));
        assert_eq!(keys(text_a), ["src/a.py|F401|"]);
        let tests = failure_keys(&["tests/t.py::test_x - AssertionError: 1 != 2".into()], &[]);
        assert_eq!(tests[0].key, "tests/t.py::test_x");
    }

    #[test]
    fn baseline_judgement() {
        let check: CheckConfig = toml::from_str("name = \"t\"\nrun = \"x\"\nkind = \"test\"").unwrap();
        let parsed = |code: i32, fails: &[&str]| Parsed {
            exit_code: Some(code),
            signal: None,
            timed_out: false,
            duration_ms: 1,
            failures: fails.iter().map(|k| f(k)).collect(),
            digest: Vec::new(),
            output_lines: 0,
            errors: Vec::new(),
            tests: TestRun::default(),
        };
        let base = Baseline {
            check: "t".into(),
            run: "x".into(),
            base: "b".into(),
            passed: false,
            failures: vec![f("old")],
            ran: None,
        };
        use BaselineMode::*;
        // tolerate: the base's own failure does not fail the check.
        let same = judge(&check, &parsed(1, &["old"]), Some(&base), Tolerate, 1, false);
        assert!(same.passed && same.failing_on_base && same.pre_existing.len() == 1);
        // label: it still fails, kept apart to be labelled.
        let labelled = judge(&check, &parsed(1, &["old"]), Some(&base), Label, 1, false);
        assert!(!labelled.passed && labelled.failing_on_base && labelled.failures.is_empty());
        assert_eq!(labelled.pre_existing.len(), 1);
        // off: no comparison at all.
        let off = judge(&check, &parsed(1, &["old"]), Some(&base), Off, 1, false);
        assert!(!off.passed && !off.failing_on_base && off.failures.len() == 1);
        for mode in [Label, Tolerate] {
            let worse = judge(&check, &parsed(1, &["old", "new"]), Some(&base), mode, 1, false);
            assert!(!worse.passed);
            assert_eq!(worse.failures.iter().map(|x| x.key.as_str()).collect::<Vec<_>>(), ["new"]);
            let fixed = judge(&check, &parsed(0, &[]), Some(&base), mode, 1, false);
            assert!(fixed.passed && fixed.failing_on_base);
        }
        let no_base = judge(&check, &parsed(1, &["old"]), None, Tolerate, 1, false);
        assert!(!no_base.passed);
        let flaky = judge(&check, &parsed(1, &["x"]), None, Label, 2, true);
        assert!(flaky.passed && flaky.flaky && flaky.failures.is_empty());
    }
}
