//! The built-in checks that run after the configured ones: `targets` (the
//! tests a task names must pass) and `test-integrity` (tests removed,
//! skipped or de-asserted). Each reads the results of the configured checks
//! and, for test integrity, the changed test files on both sides; the
//! decisions are pure, in [`crate::judge::test_results`] and [`crate::judge::integrity`].

use crate::config::WeakeningMode;
use crate::context::required::{TARGETS, TEST_INTEGRITY};
use crate::git::{Oid, Repo};
use crate::judge::integrity::{self, FileTests, TestPaths};
use crate::judge::test_results::{TargetStatus, TestRun, is_target, target_status};
use crate::model::Change;
use crate::model::{CheckKind, CheckResult, Failure};
use crate::outcome::check::TEST_TOOLS;
use crate::syntax::{language_for, tests_in::tests_in};

use super::super::RunError;
use super::super::attempt::{Attempt, Fixed};
use super::super::recorder::{CheckRun, Recorder};
use super::FileReader;
use crate::git::Comparison;
use crate::outcome::check::Baseline;

/// The targets result `r` with each target no check reported said to be
/// not run, when a check was left not run (`fail_fast`: an earlier one
/// failed): it was never judged, neither deleted nor the test's fault.
/// Pure.
pub(crate) fn not_run_first(mut r: CheckResult, not_run: &[crate::model::NotRun]) -> CheckResult {
    let Some(n) = not_run.first() else { return r };
    for f in r.failures.iter_mut().filter(|f| f.label.contains("was not reported by any check")) {
        f.label = format!("`{}` was not run: check {} was not run ({})", f.key, n.label, n.reason);
        // Not a failing test: never "the same test failed" (the test
        // may be wrong), since it never ran.
        f.test = false;
    }
    r
}

/// The `targets` check: every target must be reported passing by some
/// check, and failing by none. `None` when the task names no target.
pub(crate) fn targets(targets: &[String], checks: &[CheckResult]) -> Option<CheckResult> {
    if targets.is_empty() {
        return None;
    }
    let runs: Vec<TestRun> = checks
        .iter()
        .map(|c| TestRun { passed: c.passed_tests.clone(), failed: c.failed_tests.clone(), ran: c.tests_ran })
        .collect();
    let run_refs: Vec<&TestRun> = runs.iter().collect();
    // A failure the check did not count against the attempt (tolerated
    // or flaky) is still a failing target.
    let failed_keys: Vec<&str> = checks
        .iter()
        .filter(|c| !c.flaky)
        .flat_map(|c| c.failures.iter().chain(c.pre_existing.iter()))
        .filter(|f| f.test)
        .map(|f| f.key.as_str())
        .collect();
    // A check whose runner did not run the tests (a collection error, a
    // build failure) is why a target is not reported: say so.
    let runner_failed: Option<(&str, &str)> = checks.iter().find_map(|c| {
        c.failures.iter().find(|f| f.key.contains("|runner|")).map(|f| (c.name.as_str(), f.label.as_str()))
    });
    let mut result = CheckResult::new(TARGETS, CheckKind::Test, true);
    result.exit_code = None;
    result.duration_ms = 0;
    for t in targets {
        match target_status(t, &run_refs, &failed_keys) {
            TargetStatus::Passed => {}
            TargetStatus::Failed => {
                result.failures.push(Failure { key: t.clone(), label: format!("`{t}` failed"), test: true, target: true })
            }
            TargetStatus::NotReported => result.failures.push(Failure {
                key: t.clone(),
                label: match runner_failed {
                    Some((check, why)) => format!(
                        "`{t}` was not reported: check `{check}` did not run its tests ({why}); make the runner run them"
                    ),
                    None => format!(
                    "`{t}` was not reported by any check: it was deleted, renamed or not collected (or its runner prints no names of passing tests: jest needs --verbose, vitest --reporter=verbose, cargo test no -q; a -r of your own to pytest needs p or A)"
                    ),
                },
                test: true,
                target: true,
            }),
        }
    }
    result.passed = result.failures.is_empty();
    result.exit_code = Some(if result.passed { 0 } else { 1 });
    // What the runners said of the failing targets: the output and the
    // tracebacks of each check that reported one failing, which may itself
    // pass (it lets the base's failures be).
    let failing: Vec<&str> = result.failures.iter().map(|f| f.key.as_str()).collect();
    for c in checks.iter().filter(|c| !c.flaky) {
        let reported = c
            .failed_tests
            .iter()
            .map(String::as_str)
            .chain(c.failures.iter().chain(&c.pre_existing).filter(|f| f.test).map(|f| f.key.as_str()))
            .any(|id| failing.iter().any(|t| is_target(id, t)));
        if reported {
            result.digest.extend(c.digest.iter().cloned());
            result.errors.extend(c.errors.iter().filter(|e| TEST_TOOLS.contains(&e.tool.as_str())).cloned());
        }
    }
    result.output_lines = result.failures.len() + result.digest.len();
    Some(result)
}

/// What the `test-integrity` check reads: the change between two commits,
/// what counts as a test file and how weakening is judged, and the
/// configured checks' results on both sides.
pub(crate) struct IntegrityInput<'a> {
    pub base: Oid,
    /// The head side's files (a snapshot's, or a worktree's as compared).
    pub head: FileReader<'a>,
    pub changes: &'a [Change],
    pub paths: &'a TestPaths,
    pub mode: WeakeningMode,
    pub checks: &'a [CheckResult],
    pub baselines: &'a [Baseline],
}

/// The `test-integrity` check. `None` when it is off or the change touches
/// no test file.
pub(crate) fn test_integrity(repo: &Repo, input: IntegrityInput<'_>) -> Option<CheckResult> {
    let IntegrityInput { base, head, changes, paths, mode, checks, baselines } = input;
    if mode == WeakeningMode::Off {
        return None;
    }
    let started = std::time::Instant::now();
    let (mut before, mut after) = (Vec::new(), Vec::new());
    let mut touched = false;
    for c in changes {
        let old = c.old.as_ref().map(|s| String::from_utf8_lossy(&s.path).into_owned());
        let new = c.new.as_ref().map(|s| String::from_utf8_lossy(&s.path).into_owned());
        let at_base = |p: &str| repo.blob_at(base, p);
        let sides: [(&mut Vec<FileTests>, &Option<String>, FileReader<'_>); 2] =
            [(&mut before, &old, &at_base), (&mut after, &new, head)];
        for (side, path, read) in sides {
            let Some(path) = path else { continue };
            if !paths.matches(path) {
                continue;
            }
            let Some(def) = language_for(path.as_bytes()) else {
                // A test file of a language without test rules (Go):
                // only the runners' totals can tell.
                touched = true;
                continue;
            };
            let Some(bytes) = read(path) else { continue };
            let Some(tests) = tests_in(def, &bytes) else { continue };
            touched |= !tests.is_empty() || integrity::is_test_path(path);
            side.push(FileTests { path: path.clone(), tests });
        }
    }
    let snapshots = changes.iter().any(|c| {
        c.old.as_ref().is_some_and(|o| integrity::snapshot_rewritten(&String::from_utf8_lossy(&o.path)).is_some())
    });
    if !touched && !snapshots {
        return None;
    }
    let mut findings = integrity::compare(&before, &after);
    // Snapshots of the base the attempt rewrote (or removed).
    for c in changes {
        if let Some(old) = &c.old
            && let Some(f) = integrity::snapshot_rewritten(&String::from_utf8_lossy(&old.path))
        {
            findings.push(f);
        }
    }
    for c in checks {
        // A targets-only run, or a base known only by one, counts no suite's tests.
        if let Some(b) = baselines.iter().find(|b| b.check == c.name)
            && !c.targets_only
            && !b.targets_only
            && let Some(f) = integrity::fewer_run(&c.name, b.ran, c.tests_ran)
        {
            findings.push(f);
        }
    }
    let failures: Vec<Failure> = findings.iter().map(|f| f.failure()).collect();
    let mut result = CheckResult::new(TEST_INTEGRITY, CheckKind::Custom, true);
    result.duration_ms = started.elapsed().as_millis() as u64;
    result.digest = failures.iter().map(|f| format!("- {}", f.label)).collect();
    result.output_lines = result.digest.len();
    if mode == WeakeningMode::Fail && !failures.is_empty() {
        result.passed = false;
        result.exit_code = Some(1);
        result.failures = failures;
    } else {
        result.warnings = failures;
    }
    Some(result)
}

/// The built-in checks of attempt `a`, after the configured ones: the
/// task's targets and test integrity, recorded and added to its checks.
pub(in crate::run) fn builtin_checks(
    t: &Fixed<'_>,
    rec: &mut Recorder,
    baselines: &[Baseline],
    a: &mut Attempt,
    cmp: &Comparison<'_>,
) -> Result<(), RunError> {
    let Some(head) = a.commit else { return Ok(()) };
    let config = &t.plan.config;
    let integrity = test_integrity(
        t.repo,
        IntegrityInput {
            base: t.base.oid,
            head: &|p| t.repo.blob_at(head, p),
            changes: &cmp.changes.changes,
            paths: &t.plan.test_paths,
            mode: config.retry.test_weakening,
            checks: &a.record.checks,
            baselines,
        },
    );
    let targets = targets(&config.targets, &a.record.checks).map(|r| not_run_first(r, &a.record.not_run));
    for result in [targets, integrity].into_iter().flatten() {
        rec.check_finished(a.n, &result, CheckRun::Builtin)?;
        t.progress.gate(&format!(
            "{} {}",
            result.name,
            if !result.passed {
                "FAIL"
            } else if !result.warnings.is_empty() {
                "ok (warnings)"
            } else {
                "ok"
            }
        ));
        a.record.checks.push(result);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_target_not_reported_because_a_runner_did_not_run_says_so() {
        let mut pytest = CheckResult::new("pytest", CheckKind::Test, false);
        pytest.failures.push(Failure {
            key: "pytest|runner|interrupted".into(),
            label: "pytest was interrupted (exit 2): Interrupted: 1 error during collection".into(),
            test: false,
            target: false,
        });
        let t = targets(&["tests/t.py::test_x".to_string()], &[pytest]).expect("a targets check");
        assert!(!t.passed);
        assert_eq!(
            t.failures[0].label,
            "`tests/t.py::test_x` was not reported: check `pytest` did not run its tests (pytest was interrupted (exit 2): Interrupted: 1 error during collection); make the runner run them"
        );
        let quiet = CheckResult::new("pytest", CheckKind::Test, true);
        let t = targets(&["tests/t.py::test_x".to_string()], &[quiet]).expect("a targets check");
        let stopped = crate::model::NotRun {
            check: "pytest".into(),
            part: "full".into(),
            label: "`pytest`".into(),
            reason: "`ruff` failed first, fail_fast = \"targets\"".into(),
        };
        let said = not_run_first(t.clone(), &[stopped]);
        assert!(
            said.failures[0].label.contains("was not run: check `pytest` was not run (`ruff` failed first"),
            "{said:?}"
        );
        assert!(!said.failures[0].label.contains("deleted"), "{said:?}");
        assert!(t.failures[0].label.contains("was not reported by any check: it was deleted, renamed"));
    }
}
