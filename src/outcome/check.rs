//! A check judged against the base: failure keys that survive a shifted
//! line, an attempt's failures split into new ones and the base's own, and
//! the check's verdict under the baseline mode. Pure: the shell that runs
//! checks is `run::gates::checks`.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::config::CheckConfig;
use crate::diagnostics::Severity;
use crate::enrich;
use crate::judge::test_results::{RunnerFailure, TestRun};
use crate::model::{BaselineMode, CheckResult, ErrorItem, Failure};

/// Tools whose diagnostics are test failures (keyed by test id instead).
pub(crate) const TEST_TOOLS: [&str; 3] = ["pytest", "cargo-test", "python-traceback"];

/// One run of a check, parsed.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Parsed {
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
    /// Paths of the user's checkout the output points into ([`checkout_paths`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tested_checkout: Vec<String>,
    /// The test runner did not run the tests normally
    /// ([`crate::judge::test_results::runner_failure`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_failure: Option<RunnerFailure>,
}

impl Parsed {
    pub(crate) fn exited_ok(&self) -> bool {
        !self.timed_out && self.exit_code == Some(0)
    }
}

/// The base's result of a check, cached in the record.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Baseline {
    pub check: String,
    pub run: String,
    pub base: String,
    pub passed: bool,
    pub failures: Vec<Failure>,
    /// Tests run by the runners' totals (passed + failed), when printed.
    #[serde(default)]
    pub ran: Option<u64>,
    /// [`KEYS_VERSION`] when the keys were made.
    #[serde(default)]
    pub keys: u32,
    /// The runner did not run the tests normally on the base: its failures
    /// are unknown, and none of the attempt's counts as the base's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner_failure: Option<RunnerFailure>,
    /// How long the run took (what the order of an attempt's checks reads:
    /// [`super::schedule`]); absent from older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// A run of only the task's targets, kept while no attempt has reached
    /// the check's full suite (`run::gates::base`): it says nothing of the
    /// base's other tests.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub targets_only: bool,
}

impl Baseline {
    /// The base's result of `check` (run as `run` on commit `base`) from
    /// its parsed run.
    pub(crate) fn of(check: &str, run: &str, base: String, p: &Parsed) -> Baseline {
        Baseline {
            check: check.to_string(),
            run: run.to_string(),
            base,
            passed: p.exited_ok() && p.runner_failure.is_none(),
            failures: p.failures.clone(),
            ran: p.tests.ran,
            keys: KEYS_VERSION,
            duration_ms: Some(p.duration_ms),
            runner_failure: p.runner_failure.clone(),
            targets_only: false,
        }
    }
}

/// The failures of one run: failing tests by id, and error diagnostics of
/// lint and compiler tools by path, code and enclosing scope (never by
/// line, so a shifted line still matches). Pure.
pub(crate) fn failure_keys(failed_tests: &[String], enriched: &[enrich::Enriched]) -> Vec<Failure> {
    let mut out: Vec<Failure> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for entry in failed_tests {
        // The whole id, whatever the error: a base failure whose cause
        // changes keeps its key. A test is one failure however often the
        // output names it (a `-v` line and the short summary).
        let id = crate::judge::test_results::test_id_of(entry);
        if seen.insert(id.clone()) {
            out.push(Failure { key: id, label: entry.clone(), test: true, ..Default::default() });
        }
    }
    let tests_known = !out.is_empty();
    for e in enriched {
        let d = &e.diagnostic;
        // A failing test's traceback is that test's failure; an import
        // error stays one of its own (the module was not collected).
        if !counts(d.severity, enriched)
            || (tests_known && TEST_TOOLS.contains(&d.tool) && !is_import_error(&d.message))
        {
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
            target: false,
        });
    }
    out
}

/// An error that stops a module from being imported, so that its tests
/// never ran.
pub(crate) fn is_import_error(message: &str) -> bool {
    ["ModuleNotFoundError", "ImportError", "could not be collected"].iter().any(|m| message.contains(m))
}

/// Errors are failures; warnings too when the output has no error (a lint
/// check that fails on warnings, `clippy -D warnings` aside).
pub(crate) fn counts(severity: Severity, all: &[enrich::Enriched]) -> bool {
    match severity {
        Severity::Error => true,
        Severity::Warning => {
            !all.iter().any(|e| e.diagnostic.severity == Severity::Error && e.diagnostic.path.is_some())
        }
        _ => false,
    }
}

/// The diagnostics a check's verdict counts ([`counts`], with a path):
/// what `run`'s gate judges and what `init` reports on the base.
pub(crate) fn counted(all: &[enrich::Enriched]) -> impl Iterator<Item = &enrich::Enriched> {
    all.iter().filter(|e| counts(e.diagnostic.severity, all) && e.diagnostic.path.is_some())
}

/// The baseline key of a diagnostic: path, code (or the message's start
/// when there is no code), enclosing scope and, with a code, the message's
/// start, digits blanked (`redefinition of x from line 3` must survive a
/// shift; two unused imports in one scope must not be one).
fn key(path: &str, code: Option<&str>, message: &str, scope: &str) -> String {
    let first = crate::text::clip(message.lines().next().unwrap_or(""), 80, "").into_owned();
    let blank = |s: &str| s.chars().map(|c| if c.is_ascii_digit() { '#' } else { c }).collect::<String>();
    match code {
        Some(c) => format!("{path}|{c}|{scope}|{}", blank(&first)),
        None => format!("{path}|{}|{scope}", blank(&first)),
    }
}

/// How failure keys are made: a cached baseline with another version is
/// run again.
pub(crate) const KEYS_VERSION: u32 = 3;

/// The base's shared cache under `<git-common-dir>/retry-run/`: one
/// `<key>.json` per check and base (`run::gates::baseline_cache`).
pub(crate) const BASE_CACHE_DIR: &str = "baselines";

/// Whether a file of the base's cache, as `clean` reads it, still serves a
/// run: it reads as a baseline made with today's failure keys (`keys`).
/// Pure.
pub(crate) fn base_cache_serves(keys: Option<u32>) -> bool {
    keys == Some(KEYS_VERSION)
}

fn error_key(e: &ErrorItem) -> String {
    key(&e.path, e.code.as_deref(), &e.message, e.scope.as_deref().unwrap_or(""))
}

/// The paths of the user's checkout (`checkout`, absolute, without a
/// trailing `/`) that `text` names outside the worktree (`worktree`, which
/// may lie beneath the checkout, in its `.git`): a check whose tracebacks or
/// diagnostics point there tested the checkout, not the attempt. At most
/// five, in order of appearance. Pure.
pub(crate) fn checkout_paths(text: &str, checkouts: &[&str], worktrees: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for checkout in checkouts.iter().filter(|c| c.len() > 1) {
        let prefix = format!("{checkout}/");
        let mut from = 0;
        while let Some(off) = text[from..].find(&prefix) {
            let at = from + off;
            from = at + prefix.len();
            let rest = &text[at..];
            let inside_worktree = worktrees.iter().any(|w| {
                rest.strip_prefix(w).is_some_and(|r| r.is_empty() || r.starts_with(['/', '"', '\'', ':', ' ']))
            });
            let end = rest.find(|c: char| c.is_whitespace() || "\"':,;()[]<>".contains(c)).unwrap_or(rest.len());
            let path = &rest[..end];
            let tail = &path[prefix.len()..];
            // Its git directory is retry-run's and git's own, not the code.
            if inside_worktree || tail.is_empty() || tail.starts_with(".git/") || tail == ".git" {
                continue;
            }
            if !out.iter().any(|p| p == path) {
                out.push(path.to_string());
                if out.len() == 5 {
                    return out;
                }
            }
        }
    }
    out
}

/// An attempt's failures, split by [`against_base`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AgainstBase {
    /// Failures the base does not have.
    pub new: Vec<Failure>,
    /// Failures the base has too.
    pub old: Vec<Failure>,
}

/// Splits an attempt's failures into new ones and ones the base has too,
/// one by one (a failure present twice on the attempt and once on the base
/// is new once). Pure.
#[cfg(test)]
pub(crate) fn against_base(attempt: &[Failure], base: &[Failure]) -> AgainstBase {
    against_base_renamed(attempt, base, &[])
}

/// The key a failure of the attempt would have had on the base: its path
/// (before `|` or `::`) taken back through the attempt's renames
/// (`(new, old)` pairs), so that a renamed file keeps its old failures old.
pub(crate) fn base_key(key: &str, renames: &[(String, String)]) -> String {
    for (new, old) in renames {
        if let Some(rest) = key.strip_prefix(new.as_str())
            && (rest.starts_with('|') || rest.starts_with("::"))
        {
            return format!("{old}{rest}");
        }
    }
    key.to_string()
}

/// [`against_base`], with the attempt's failures keyed as on the base
/// ([`base_key`]).
pub(crate) fn against_base_renamed(attempt: &[Failure], base: &[Failure], renames: &[(String, String)]) -> AgainstBase {
    let mut left: HashMap<&str, usize> = HashMap::new();
    for f in base {
        *left.entry(f.key.as_str()).or_default() += 1;
    }
    let (mut new, mut old) = (Vec::new(), Vec::new());
    for f in attempt {
        let key = base_key(&f.key, renames);
        match left.get_mut(key.as_str()) {
            Some(n) if *n > 0 => {
                *n -= 1;
                old.push(f.clone());
            }
            _ => new.push(f.clone()),
        }
    }
    AgainstBase { new, old }
}

/// How a check is judged: its baseline mode and the task's targets.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Judging<'a> {
    pub mode: BaselineMode,
    pub targets: &'a [String],
    /// The attempt's renames, `(new path, old path)`.
    pub renames: &'a [(String, String)],
}

/// Whether the base's failures `old`, among an attempt's `all`, may be left
/// failing under `auto`: they are diagnostics with locations (there is at
/// least one failure to compare), or tests when the task names targets
/// (which the `targets` check holds to passing on their own).
fn auto_tolerates(all: &[Failure], old: &[Failure], targets: &[String]) -> bool {
    !all.is_empty() && old.iter().all(|f| !f.test || !targets.is_empty())
}

/// Judges a parsed run against the base. Pure.
///
/// With `label` a failure the base has too still fails the check (it is
/// kept apart, in `pre_existing`, to be labelled); with `tolerate` it does
/// not; with `auto` it does not when it is a diagnostic, or a test and the
/// task has targets ([`auto_tolerates`]). Without a base (`off`, or no
/// baseline yet) every failure is new. A failure that is one of the task's
/// targets is marked so.
pub(crate) fn judge(
    check: &CheckConfig,
    p: &Parsed,
    base: Option<&Baseline>,
    how: Judging<'_>,
    runs: u32,
    flaky: bool,
) -> CheckResult {
    let mode = how.mode;
    let base = base.filter(|_| mode.runs());
    // A base on which the runner did not run normally has no failures to
    // compare with: the attempt is judged on its own run.
    let broken_base = base.and_then(|b| b.runner_failure.as_ref());
    let runner_failed = p.runner_failure.as_ref().filter(|_| !p.timed_out);
    let Split { passed, failures, pre_existing, failing_on_base, tolerated } =
        split(p, base, how, runner_failed, broken_base.is_some());
    let mark = |mut v: Vec<Failure>| {
        for f in &mut v {
            f.target = f.test && how.targets.iter().any(|t| crate::judge::test_results::is_target(&f.key, t));
        }
        v
    };
    let (failures, pre_existing) = (mark(failures), mark(pre_existing));
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
    result.base_tolerated = failing_on_base && tolerated;
    result.baseline = Some(mode);
    result.tested_checkout = p.tested_checkout.clone();
    result.digest = p.digest.clone();
    result.output_lines = p.output_lines;
    result.tests_ran = p.tests.ran;
    // A runner that did not run normally passes no test, targets included.
    result.passed_tests = if runner_failed.is_some() { Vec::new() } else { p.tests.passed.clone() };
    if let Some(b) = broken_base {
        result.notes.push(format!(
            "on the base, {}; the base's failures are unknown, so none of this run's counts as the base's",
            b.line()
        ));
    }
    result.failed_tests = p.tests.failed.clone();
    // The errors behind the failures that fail the check are fed back: all
    // of them, unless the base's are tolerated.
    let only_new = failing_on_base && tolerated;
    result.errors = if flaky { Vec::new() } else { fed_back(p, &failures, &result.pre_existing, only_new) };
    result
}

/// A run's failures against the base: whether the check passes, its new
/// failures, the base's, and whether the base fails it and they may be
/// left failing.
struct Split {
    passed: bool,
    failures: Vec<Failure>,
    pre_existing: Vec<Failure>,
    failing_on_base: bool,
    tolerated: bool,
}

/// Splits run `p` against `base` (`None` when there is none to compare
/// with); `broken_base` when the runner did not run normally on the base.
fn split(
    p: &Parsed,
    base: Option<&Baseline>,
    how: Judging<'_>,
    runner_failed: Option<&RunnerFailure>,
    broken_base: bool,
) -> Split {
    let (passed, failures, pre_existing, failing_on_base, tolerated) = match base {
        _ if runner_failed.is_some() => {
            let mut failures = vec![runner_failure_key(runner_failed.expect("checked above"))];
            failures.extend(p.failures.iter().cloned());
            (false, failures, Vec::new(), base.is_some_and(|b| !b.passed), false)
        }
        _ if p.exited_ok() => (true, Vec::new(), Vec::new(), base.is_some_and(|b| !b.passed), false),
        Some(_) if broken_base => (false, p.failures.clone(), Vec::new(), true, false),
        Some(b) if !b.passed && !p.timed_out => {
            let AgainstBase { new, old } = against_base_renamed(&p.failures, &b.failures, how.renames);
            let tolerated = match how.mode {
                BaselineMode::Tolerate => true,
                BaselineMode::Auto => auto_tolerates(&p.failures, &old, how.targets),
                BaselineMode::Label | BaselineMode::Off => false,
            };
            (new.is_empty() && tolerated, new, old, true, tolerated)
        }
        _ => (false, p.failures.clone(), Vec::new(), false, false),
    };
    Split { passed, failures, pre_existing, failing_on_base, tolerated }
}

/// The errors behind the failures that fail the check: all of them, or,
/// when the base's are tolerated (`only_new`), those behind the new
/// failures and, when a test fails anew, the test tools' tracebacks.
fn fed_back(p: &Parsed, failures: &[Failure], pre_existing: &[Failure], only_new: bool) -> Vec<ErrorItem> {
    let new_keys: Vec<&str> = failures.iter().map(|f| f.key.as_str()).collect();
    // A failing target's traceback is fed back too (by `targets`), even
    // when this check lets it be as the base's.
    let new_tests = failures.iter().any(|f| f.test) || pre_existing.iter().any(|f| f.target);
    p.errors
        .iter()
        .filter(|e| {
            !only_new
                || (new_tests && TEST_TOOLS.contains(&e.tool.as_str()))
                || new_keys.contains(&error_key(e).as_str())
        })
        .cloned()
        .collect()
}

/// The failure that stands for a runner that did not run the tests
/// normally: keyed by the runner, labelled in its own words. Never one of
/// the base's.
pub(crate) fn runner_failure_key(r: &RunnerFailure) -> Failure {
    Failure {
        key: format!("{}|runner|{}", r.runner, r.what),
        label: crate::text::clip(&r.line(), 300, "...").into_owned(),
        test: false,
        target: false,
    }
}

/// A submodule of the base that a task worktree lacks: its path, and
/// whether the user's checkout has it initialised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MissingSubmodule {
    pub path: String,
    pub in_checkout: bool,
}

/// The notes a failing check gets when the worktree lacks submodules: one
/// sentence each, saying where the submodule would come from.
pub(crate) fn submodule_notes(missing: &[MissingSubmodule]) -> Vec<String> {
    missing
        .iter()
        .map(|m| {
            if m.in_checkout {
                format!(
                    "submodule `{}` is not initialised in the worktree (your checkout has it, but not at the commit the base records): run `git submodule update` in your checkout, or set worktree.setup",
                    m.path
                )
            } else {
                format!(
                    "submodule `{}` is not initialised in the worktree (it is not in your checkout either): run `git submodule update --init` in your checkout, or set worktree.setup",
                    m.path
                )
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::{self, Format};

    fn f(key: &str) -> Failure {
        Failure { key: key.into(), label: key.into(), test: true, ..Default::default() }
    }

    #[test]
    fn output_that_points_into_the_checkout() {
        let text = "  File \"/home/u/proj/src/pkg/core.py\", line 3, in f\n\
                    /home/u/proj/.git/retry-run/worktrees/t/src/pkg/core.py:3: in f\n\
                    /home/u/proj/.git/config:1 is fine\n\
                    /home/u/project2/x.py:1: other project\n\
                    /home/u/proj/src/pkg/core.py:9: E1 again\n";
        let wt = "/home/u/proj/.git/retry-run/worktrees/t";
        assert_eq!(checkout_paths(text, &["/home/u/proj"], &[wt]), ["/home/u/proj/src/pkg/core.py"]);
        assert!(
            checkout_paths("/home/u/proj/.git/retry-run/worktrees/t/a.py:1: x\n", &["/home/u/proj"], &[wt]).is_empty()
        );
        // A worktree outside the checkout: every checkout path counts.
        assert_eq!(
            checkout_paths("/srv/wt/a.py /home/u/proj/tests/t.py:2", &["/home/u/proj"], &["/srv/wt"]),
            ["/home/u/proj/tests/t.py"]
        );
    }

    #[test]
    fn a_renamed_file_keeps_its_failures_old() {
        let renames = [("src/new.py".to_string(), "src/old.py".to_string())];
        assert_eq!(base_key("src/new.py|F401|", &renames), "src/old.py|F401|");
        assert_eq!(base_key("src/new.py::test_a", &renames), "src/old.py::test_a");
        assert_eq!(base_key("src/new.pyx|F401|", &renames), "src/new.pyx|F401|");
        let AgainstBase { new, old } =
            against_base_renamed(&[f("src/new.py|F401|")], &[f("src/old.py|F401|")], &renames);
        assert!(new.is_empty());
        assert_eq!(old[0].key, "src/new.py|F401|", "the attempt's own key is kept");
    }

    #[test]
    fn auto_judges_diagnostics_and_tests_by_the_task() {
        let lint: CheckConfig = toml::from_str("name = \"ruff\"\nrun = \"x\"\nkind = \"lint\"").unwrap();
        let diag = |k: &str| Failure { key: k.into(), label: k.into(), test: false, target: false };
        let run = |fails: Vec<Failure>| Parsed {
            exit_code: Some(1),
            signal: None,
            timed_out: false,
            duration_ms: 1,
            failures: fails,
            digest: Vec::new(),
            output_lines: 0,
            errors: Vec::new(),
            tests: TestRun::default(),
            tested_checkout: Vec::new(),
            runner_failure: None,
        };
        let base = |fails: Vec<Failure>| Baseline {
            check: "x".into(),
            run: "x".into(),
            base: "b".into(),
            passed: false,
            failures: fails,
            ran: None,
            keys: KEYS_VERSION,
            runner_failure: None,
            duration_ms: None,
            targets_only: false,
        };
        let auto = Judging { mode: BaselineMode::Auto, targets: &[], renames: &[] };
        // Old diagnostics pass, a new one fails, and only it is fed back.
        let old = judge(&lint, &run(vec![diag("a|F401|")]), Some(&base(vec![diag("a|F401|")])), auto, 1, false);
        assert!(old.passed && old.base_tolerated && old.pre_existing.len() == 1);
        let new = judge(
            &lint,
            &run(vec![diag("a|F401|"), diag("b|E501|")]),
            Some(&base(vec![diag("a|F401|")])),
            auto,
            1,
            false,
        );
        assert!(!new.passed && new.base_tolerated);
        assert_eq!(new.failures.iter().map(|x| x.key.as_str()).collect::<Vec<_>>(), ["b|E501|"]);
        // A non-zero exit with nothing located is not tolerated.
        let unparsed = judge(&lint, &run(Vec::new()), Some(&base(Vec::new())), auto, 1, false);
        assert!(!unparsed.passed);
        // Tests: the base's failures count unless the task has targets.
        let test: CheckConfig = toml::from_str("name = \"t\"\nrun = \"x\"\nkind = \"test\"").unwrap();
        let on_base = base(vec![f("t.py::test_old"), f("t.py::test_target")]);
        let attempt = run(vec![f("t.py::test_old")]);
        assert!(!judge(&test, &attempt, Some(&on_base), auto, 1, false).passed);
        let targets = ["t.py::test_target".to_string()];
        let with = Judging { targets: &targets, ..auto };
        let judged = judge(&test, &attempt, Some(&on_base), with, 1, false);
        assert!(judged.passed && !judged.pre_existing[0].target);
        let still = judge(&test, &run(vec![f("t.py::test_target")]), Some(&on_base), with, 1, false);
        assert!(still.pre_existing[0].target, "the target is marked, and the targets check fails it");
        // A test that passed on the base and fails now fails the check.
        let broke = judge(&test, &run(vec![f("t.py::test_new")]), Some(&on_base), with, 1, false);
        assert!(!broke.passed);
    }

    /// The failure keys of a real runner's output, as `run::gates::checks`
    /// makes them (no source files to enrich from).
    fn keys_of(text: &str) -> Vec<Failure> {
        let found = diagnostics::parse_as(None, text);
        let enriched: Vec<enrich::Enriched> =
            found.into_iter().map(|diagnostic| enrich::Enriched { diagnostic, scope: None, snippet: None }).collect();
        let digest = crate::summarize::summarize(text.as_bytes());
        failure_keys(&digest.failed_tests.entries, &enriched)
    }

    #[test]
    fn a_base_failure_whose_cause_changes_stays_old_and_a_newly_failing_test_is_new() {
        // Captured by tests/runners/capture.sh: test_get fails with an
        // AssertionError on the base, with a KeyError in the attempt (raised
        // in calc.py); test_one passes on the base and fails in the attempt.
        // The same in go test (another message at another line) and jest (a
        // TypeError instead of a matcher's error).
        macro_rules! captured {
            ($name:literal) => {
                include_str!(concat!("../../tests/runners/captured/", $name, ".txt"))
            };
        }
        let keys = |v: &[Failure]| v.iter().map(|f| f.key.clone()).collect::<Vec<_>>();
        for (base, attempt, newly, still) in [
            (
                captured!("pytest-cause-base"),
                captured!("pytest-cause-attempt"),
                "tests/test_calc.py::test_one",
                "tests/test_calc.py::test_get",
            ),
            (captured!("go-cause-base"), captured!("go-cause-attempt"), "TestOne", "TestGet"),
            (
                captured!("jest-cause-base"),
                captured!("jest-cause-attempt"),
                "top level",
                "cart > when empty > totals zero",
            ),
        ] {
            let (base, attempt) = (keys_of(base), keys_of(attempt));
            let AgainstBase { new, old } = against_base(&attempt, &base);
            assert_eq!(keys(&new), [newly], "base {base:?}, attempt {attempt:?}");
            assert!(keys(&old).iter().any(|k| k == still), "base {base:?}, attempt {attempt:?}");
            assert!(!keys(&new).iter().any(|k| k == still), "base {base:?}, attempt {attempt:?}");
        }
    }

    #[test]
    fn a_test_that_passed_on_the_base_is_new_even_when_its_id_shares_a_prefix_with_a_base_failure() {
        // Parameters holding ` - `: two tests, not one.
        let base = failure_keys(&["tests/t.py::test_x[a - b] - AssertionError: 1".into()], &[]);
        let attempt = failure_keys(
            &[
                "tests/t.py::test_x[a - b] - KeyError: 'k'".into(),
                "tests/t.py::test_x[a - c] - AssertionError: 2".into(),
            ],
            &[],
        );
        let AgainstBase { new, old } = against_base(&attempt, &base);
        assert_eq!(new.iter().map(|f| f.key.as_str()).collect::<Vec<_>>(), ["tests/t.py::test_x[a - c]"]);
        assert_eq!(old.iter().map(|f| f.key.as_str()).collect::<Vec<_>>(), ["tests/t.py::test_x[a - b]"]);
    }

    #[test]
    fn failures_are_compared_one_by_one() {
        let AgainstBase { new, old } = against_base(&[f("a"), f("b"), f("b"), f("c")], &[f("b"), f("c"), f("d")]);
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
        assert_eq!(keys(text_a), ["src/a.py|F401||`os` imported but unused"]);
        let tests = failure_keys(&["tests/t.py::test_x - AssertionError: 1 != 2".into()], &[]);
        assert_eq!(tests[0].key, "tests/t.py::test_x");
        // Named twice (a `-v` line, the short summary): one failure.
        let twice = failure_keys(&["tests/t.py::test_x".into(), "tests/t.py::test_x - AssertionError".into()], &[]);
        assert_eq!(twice.len(), 1);
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
            tested_checkout: Vec::new(),
            runner_failure: None,
        };
        let base = Baseline {
            check: "t".into(),
            run: "x".into(),
            base: "b".into(),
            passed: false,
            failures: vec![f("old")],
            ran: None,
            keys: KEYS_VERSION,
            runner_failure: None,
            duration_ms: None,
            targets_only: false,
        };
        use BaselineMode::*;
        // tolerate: the base's own failure does not fail the check.
        let j = |mode| Judging { mode, targets: &[], renames: &[] };
        let same = judge(&check, &parsed(1, &["old"]), Some(&base), j(Tolerate), 1, false);
        assert!(same.passed && same.failing_on_base && same.pre_existing.len() == 1);
        // label: it still fails, kept apart to be labelled.
        let labelled = judge(&check, &parsed(1, &["old"]), Some(&base), j(Label), 1, false);
        assert!(!labelled.passed && labelled.failing_on_base && labelled.failures.is_empty());
        assert_eq!(labelled.pre_existing.len(), 1);
        // off: no comparison at all.
        let off = judge(&check, &parsed(1, &["old"]), Some(&base), j(Off), 1, false);
        assert!(!off.passed && !off.failing_on_base && off.failures.len() == 1);
        for mode in [Label, Tolerate] {
            let worse = judge(&check, &parsed(1, &["old", "new"]), Some(&base), j(mode), 1, false);
            assert!(!worse.passed);
            assert_eq!(worse.failures.iter().map(|x| x.key.as_str()).collect::<Vec<_>>(), ["new"]);
            let fixed = judge(&check, &parsed(0, &[]), Some(&base), j(mode), 1, false);
            assert!(fixed.passed && fixed.failing_on_base);
        }
        let no_base = judge(&check, &parsed(1, &["old"]), None, j(Tolerate), 1, false);
        assert!(!no_base.passed);
        let flaky = judge(&check, &parsed(1, &["x"]), None, j(Label), 2, true);
        assert!(flaky.passed && flaky.flaky && flaky.failures.is_empty());
    }

    #[test]
    fn a_missing_submodule_says_where_it_would_come_from() {
        let missing = [
            MissingSubmodule { path: "vendor/lib".into(), in_checkout: false },
            MissingSubmodule { path: "ext".into(), in_checkout: true },
        ];
        let notes = submodule_notes(&missing);
        assert_eq!(
            notes[0],
            "submodule `vendor/lib` is not initialised in the worktree (it is not in your checkout either): run `git submodule update --init` in your checkout, or set worktree.setup"
        );
        assert!(notes[1].starts_with("submodule `ext` is not initialised in the worktree (your checkout has it"));
        assert!(submodule_notes(&[]).is_empty());
    }

    #[test]
    fn a_base_cache_entry_serves_only_with_todays_failure_keys() {
        for (keys, want) in [(Some(KEYS_VERSION), true), (Some(KEYS_VERSION - 1), false), (None, false)] {
            assert_eq!(base_cache_serves(keys), want, "{keys:?}");
        }
    }
}
