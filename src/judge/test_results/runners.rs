//! What retry-run adds to a configured check's environment so that a quiet
//! test runner still names the tests that passed (for the task's targets),
//! and how a failed check's failing tests alone are run again (to tell a
//! flaky test from a deterministic failure). Pure: the caller gives the
//! values the check would otherwise get.
//!
//! For every run only variables that the runners themselves read are set,
//! and retry-run's own options come first in them, so the user's (in the
//! same variable, then on the command line) win. A rerun of cargo test,
//! jest or vitest, which read no such variable, runs the check's command
//! with the runner's own selection added ([`super::select`]). What is
//! added, by runner:
//!
//! | runner | every run | a rerun of the failing tests |
//! |---|---|---|
//! | pytest | `PYTEST_ADDOPTS=-rfEp` | `PYTEST_ADDOPTS=-rfEp --lf --lfnf=none` |
//! | go test | `GOFLAGS=-v` | `GOFLAGS=-v -run=^(TestA\|TestB)$` |
//! | cargo test | nothing: it reads no output option from the environment | the command with `-- --exact NAME...` |
//! | jest, vitest | nothing | the command with `-t '^(?:full name\|...)$'` |
//! | mocha, `node --test` | nothing | the command with `--grep`, `--test-name-pattern` |
//!
//! Documented for users in `docs/honest-success.md` (Targets; Flaky tests).

use super::Runner;
use super::select::{self, Unselectable};
pub(crate) use super::select::{GO_VERBOSE, GOFLAGS, PYTEST_ADDOPTS, PYTEST_REPORT};

/// pytest's own selection of the tests that failed in its last run (its
/// cache, `.pytest_cache`, written by that run); with none recorded, it runs
/// nothing rather than every test.
pub(crate) const PYTEST_LAST_FAILED: &str = "--lf --lfnf=none";

/// The variables added to every configured check's run, and to the checks
/// on the base: ours first, then the value the check would otherwise get
/// (`inherited`); and no colours (`NO_COLOR=1`, `FORCE_COLOR=0`: vitest,
/// jest, ESLint and most Node tools read them), whatever the user's.
pub(crate) fn runner_env(inherited: &dyn Fn(&str) -> Option<String>) -> Vec<(String, String)> {
    vec![
        added(PYTEST_ADDOPTS, PYTEST_REPORT, inherited),
        added(GOFLAGS, GO_VERBOSE, inherited),
        ("NO_COLOR".to_string(), "1".to_string()),
        ("FORCE_COLOR".to_string(), "0".to_string()),
    ]
}

fn added(name: &str, ours: &str, inherited: &dyn Fn(&str) -> Option<String>) -> (String, String) {
    let value = match inherited(name).filter(|v| !v.trim().is_empty()) {
        Some(theirs) => format!("{ours} {theirs}"),
        None => ours.to_string(),
    };
    (name.to_string(), value)
}

/// A failed run of a check, as far as a rerun is concerned.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FailedRun<'a> {
    /// The check's command line.
    pub run: &'a str,
    pub timed_out: bool,
    /// Some failure is no test's: a lint or compiler error.
    pub other_failures: bool,
    /// The failing tests its output names, by runner
    /// ([`super::failed_by_runner`]).
    pub tests: &'a [(Runner, String)],
    /// The project's `package.json` scripts (name, text), for a check that
    /// runs one ([`select::select_in`]).
    pub scripts: &'a [(String, String)],
}

/// How to run a failed check again with only its failing tests selected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rerun {
    /// The variables to set, over those of [`runner_env`].
    pub env: Vec<(String, String)>,
    /// The failing tests it runs again.
    pub tests: Vec<String>,
    /// The command line to run instead of the check's (cargo test, jest,
    /// vitest: the selection is on the command line).
    pub run: Option<String>,
}

/// Why a failed check is not run again: each is deterministic, or cannot
/// be narrowed to its failing tests (and running it whole again doubled
/// the cost of every deterministic failure).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NoRerun {
    /// It timed out; a rerun would cost as much again.
    TimedOut,
    /// A lint or compiler error, not a test, failed it.
    NotATest,
    /// Its output names no failing test (its exit status alone failed it).
    NoTestNamed,
    /// Its failing tests cannot be run alone ([`select::select`] says why:
    /// a command that is not one runner's invocation, ...).
    CannotSelect(Unselectable),
    /// pytest without its cache plugin (`no:cacheprovider`), which `--lf`
    /// needs.
    NoPytestCache,
}

impl NoRerun {
    /// Why, for the record and the docs.
    pub(crate) fn reason(&self) -> String {
        match self {
            NoRerun::TimedOut => "timed out".into(),
            NoRerun::NotATest => "a failure that is no test's".into(),
            NoRerun::NoTestNamed => "no failing test named".into(),
            NoRerun::CannotSelect(why) => why.to_string(),
            NoRerun::NoPytestCache => "pytest runs without its cache (no:cacheprovider), which --lf needs".into(),
        }
    }
}

/// How to run again only the failing tests of a failed run: pytest's
/// last-failed selection, a `-run` of the failing go tests (top-level
/// names: a failing subtest reruns its parent), both by environment (so
/// through a wrapper such as `make test` too); cargo test's and jest's or
/// vitest's by [`select::select`] on the check's command; `Err` says why
/// it is not run again at all.
pub(crate) fn rerun(failed: FailedRun<'_>, inherited: &dyn Fn(&str) -> Option<String>) -> Result<Rerun, NoRerun> {
    if failed.timed_out {
        return Err(NoRerun::TimedOut);
    }
    if failed.other_failures {
        return Err(NoRerun::NotATest);
    }
    if failed.tests.is_empty() {
        return Err(NoRerun::NoTestNamed);
    }
    if failed.tests.iter().any(|(r, _)| !matches!(r, Runner::Pytest | Runner::Go)) {
        let selected =
            select::select_in(failed.run, inherited, failed.scripts, failed.tests).map_err(NoRerun::CannotSelect)?;
        let tests = failed.tests.iter().map(|(_, id)| id.clone()).collect();
        return Ok(Rerun { env: selected.env, tests, run: selected.run });
    }
    let of = |runner: Runner| failed.tests.iter().filter(move |(r, _)| *r == runner).map(|(_, id)| id.as_str());
    let mut env = Vec::new();
    if of(Runner::Pytest).next().is_some() {
        let theirs = inherited(PYTEST_ADDOPTS).unwrap_or_default();
        if failed.run.contains("no:cacheprovider") || theirs.contains("no:cacheprovider") {
            return Err(NoRerun::NoPytestCache);
        }
        env.push(added(PYTEST_ADDOPTS, &format!("{PYTEST_REPORT} {PYTEST_LAST_FAILED}"), inherited));
    }
    let mut go: Vec<&str> = of(Runner::Go).map(|id| id.split('/').next().unwrap_or(id)).collect();
    go.dedup();
    if !go.is_empty() {
        // Go test names are identifiers: nothing to escape in the pattern.
        if go.iter().any(|n| n.is_empty() || !n.chars().all(|c| c.is_alphanumeric() || c == '_')) {
            let id = go.iter().find(|n| n.is_empty() || !n.chars().all(|c| c.is_alphanumeric() || c == '_'));
            let id = id.map(|n| n.to_string()).unwrap_or_default();
            return Err(NoRerun::CannotSelect(Unselectable::Id { id, why: "a go test's name is an identifier" }));
        }
        env.push(added(GOFLAGS, &format!("{GO_VERBOSE} -run=^({})$", go.join("|")), inherited));
    }
    Ok(Rerun { env, tests: failed.tests.iter().map(|(_, id)| id.clone()).collect(), run: None })
}

#[cfg(test)]
mod tests {
    use super::super::{TargetStatus, failed_by_runner, read, target_status};
    use super::*;

    /// Output captured from the real runners: `tests/runners/captured/README.md`.
    macro_rules! captured {
        ($name:literal) => {
            include_str!(concat!("../../../tests/runners/captured/", $name))
        };
    }

    fn none(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn every_check_gets_the_runner_options_first_and_keeps_the_users() {
        assert_eq!(
            runner_env(&none),
            [
                ("PYTEST_ADDOPTS".to_string(), "-rfEp".to_string()),
                ("GOFLAGS".to_string(), "-v".to_string()),
                ("NO_COLOR".to_string(), "1".to_string()),
                ("FORCE_COLOR".to_string(), "0".to_string()),
            ]
        );
        let theirs = |name: &str| (name == PYTEST_ADDOPTS).then(|| "-x --tb=short".to_string());
        assert_eq!(runner_env(&theirs)[0].1, "-rfEp -x --tb=short");
        let blank = |_: &str| Some(" ".to_string());
        assert_eq!(runner_env(&blank)[1].1, "-v");
    }

    #[test]
    fn quiet_pytest_names_passing_tests_with_the_added_report_chars() {
        let target = "tests/test_calc.py::test_add";
        // `pytest -q` alone: dots, the passing target is not reported.
        let quiet = read(captured!("pytest-9.2.0-q.txt"));
        assert_eq!(target_status(target, &[&quiet], &[]), TargetStatus::NotReported);
        assert_eq!(quiet.ran, Some(6));
        // With PYTEST_ADDOPTS=-rfEp: `PASSED <id>` lines.
        let named = read(captured!("pytest-9.2.0-q-rfEp.txt"));
        assert_eq!(target_status(target, &[&named], &[]), TargetStatus::Passed);
        assert_eq!(target_status("tests/test_calc.py::test_p", &[&named], &[]), TargetStatus::Passed);
        assert_eq!(target_status("tests/test_calc.py::test_bad", &[&named], &[]), TargetStatus::Failed);
        assert_eq!(named.ran, Some(6));
    }

    #[test]
    fn go_test_names_passing_tests_with_goflags_v_and_failing_ones_without() {
        let plain = read(captured!("go-1.19.8-test.txt"));
        assert!(plain.passed.is_empty());
        assert_eq!(plain.failed, ["TestBad", "TestBad/neg"]);
        let verbose = read(captured!("go-1.19.8-test-v.txt"));
        assert_eq!(verbose.passed, ["TestAdd", "TestBad/pos", "TestSub"]);
        assert_eq!(target_status("TestAdd", &[&verbose], &[]), TargetStatus::Passed);
    }

    #[test]
    fn jest_vitest_and_quiet_cargo_test_name_no_passing_test_of_a_passing_file() {
        // jest without --verbose, two files: no test names but the failing one's.
        let jest = read(captured!("jest-30.5.2.txt"));
        assert!(jest.passed.is_empty(), "{jest:?}");
        assert_eq!(jest.ran, Some(4));
        // vitest's default reporter lists the tests of a failing file only.
        let vitest = read(captured!("vitest-4.1.12.txt"));
        assert_eq!(vitest.passed, ["adds"]);
        assert_eq!(vitest.failed, ["vt/calc.test.js > math > bad"]);
        // cargo test -q: dots, and the failing test's name in its own shape.
        let cargo = read(captured!("cargo-test-q.txt"));
        assert!(cargo.passed.is_empty(), "{cargo:?}");
        assert_eq!(cargo.ran, Some(2));
    }

    fn failed<'a>(run: &'a str, tests: &'a [(Runner, String)]) -> FailedRun<'a> {
        FailedRun { run, timed_out: false, other_failures: false, tests, scripts: &[] }
    }

    #[test]
    fn a_failing_pytest_run_is_narrowed_to_its_last_failed_tests() {
        let first = captured!("pytest-9.2.0-q-rfEp.txt");
        let tests = failed_by_runner(first);
        assert_eq!(
            tests,
            [
                (Runner::Pytest, "tests/test_calc.py::test_bad".to_string()),
                (Runner::Pytest, "tests/test_calc.py::test_flaky".to_string())
            ]
        );
        let r = rerun(failed("python3 -m pytest -q", &tests), &none).expect("a rerun");
        assert_eq!(r.env, [("PYTEST_ADDOPTS".to_string(), "-rfEp --lf --lfnf=none".to_string())]);
        assert_eq!(r.tests, ["tests/test_calc.py::test_bad", "tests/test_calc.py::test_flaky"]);
        // The real rerun with that variable ran the two failing tests only.
        let again = read(captured!("pytest-9.2.0-q-rfEp-lf.txt"));
        assert_eq!(again.ran, Some(2));
        assert_eq!(again.passed, ["tests/test_calc.py::test_flaky"]);
        assert_eq!(again.failed, ["tests/test_calc.py::test_bad"]);
        // Without a cache it runs nothing (`6 deselected`), not everything.
        assert_eq!(read(captured!("pytest-9.2.0-q-lf-no-cache.txt")).ran, None);
        // Without the cache plugin, no rerun.
        let off = rerun(failed("pytest -p no:cacheprovider -q", &tests), &none);
        assert_eq!(off, Err(NoRerun::NoPytestCache));
    }

    #[test]
    fn a_failing_go_test_is_rerun_by_its_top_level_name() {
        let tests = failed_by_runner(captured!("go-1.19.8-test.txt"));
        let r = rerun(failed("go test ./...", &tests), &none).expect("a rerun");
        assert_eq!(r.env, [("GOFLAGS".to_string(), "-v -run=^(TestBad)$".to_string())]);
        let theirs = |_: &str| Some("-mod=vendor".to_string());
        let r = rerun(failed("go test ./...", &tests), &theirs).expect("a rerun");
        assert_eq!(r.env[0].1, "-v -run=^(TestBad)$ -mod=vendor");
        // The real rerun with that variable ran TestBad alone.
        let again = read(captured!("go-1.19.8-test-v-run.txt"));
        assert_eq!(again.failed, ["TestBad", "TestBad/neg"]);
        assert_eq!(again.passed, ["TestBad/pos"]);
    }

    #[test]
    fn a_failing_cargo_test_is_rerun_alone_by_its_exact_name() {
        let cargo = failed_by_runner(captured!("cargo-test-q.txt"));
        assert_eq!(cargo, [(Runner::Cargo, "tests::bad".to_string())]);
        let r = rerun(failed("cargo test -q", &cargo), &none).expect("a rerun");
        assert_eq!(r.run.as_deref(), Some("cargo test -q -- --exact tests::bad"));
        assert!(r.env.is_empty());
        // A first run with a failing and a flaky test, then the real rerun
        // of the command retry-run chose: the two alone, the flaky passes.
        let first = read(captured!("cargo-test-flaky.txt"));
        assert_eq!(first.failed, ["tests::bad", "tests::flaky"]);
        let tests = failed_by_runner(captured!("cargo-test-flaky.txt"));
        let r = rerun(failed("cargo test", &tests), &none).expect("a rerun");
        assert_eq!(r.run.as_deref(), Some("cargo test -- --exact tests::bad tests::flaky"));
        let again = read(captured!("cargo-test-flaky-exact.txt"));
        assert_eq!(again.ran, Some(2));
        assert_eq!(again.passed, ["tests::flaky"]);
        assert_eq!(again.failed, ["tests::bad"]);
    }

    #[test]
    fn a_failing_jest_or_vitest_test_is_rerun_alone_by_its_full_name() {
        let tests = failed_by_runner(captured!("jest-30.5.2-flaky.txt"));
        assert_eq!(
            tests,
            [(Runner::Js, "cart > is bad".to_string()), (Runner::Js, "cart > when empty > is flaky".to_string())]
        );
        let r = rerun(failed("npx jest", &tests), &none).expect("a rerun");
        assert_eq!(r.run.as_deref(), Some("npx jest -t '^(?:cart is bad|cart when empty is flaky)$'"));
        // The real rerun: two ran (`2 skipped`), the flaky one passed.
        let again = read(captured!("jest-30.5.2-flaky-t.txt"));
        assert_eq!(again.ran, Some(2));
        assert_eq!(again.failed, ["cart > is bad"]);
        let tests = failed_by_runner(captured!("vitest-4.1.12-flaky.txt"));
        assert_eq!(
            tests,
            [
                (Runner::Js, "calc.test.js > math > is bad".to_string()),
                (Runner::Js, "calc.test.js > math > when empty > is flaky".to_string())
            ]
        );
        let r = rerun(failed("npx vitest run", &tests), &none).expect("a rerun");
        assert_eq!(r.run.as_deref(), Some("npx vitest run -t '^(?:math is bad|math when empty is flaky)$'"));
        let again = read(captured!("vitest-4.1.12-flaky-t.txt"));
        assert_eq!(again.ran, Some(2));
        assert_eq!(again.passed, ["is flaky"]);
        assert_eq!(again.failed, ["calc.test.js > math > is bad"]);
    }

    #[test]
    fn a_failing_mocha_or_node_test_is_rerun_alone_by_its_name() {
        let tests = failed_by_runner(captured!("mocha-12.0.3-default.txt"));
        assert_eq!(tests[0], (Runner::Js, "cart > totals zero".to_string()));
        let r = rerun(failed("npx mocha --reporter spec", &tests[..1]), &none).expect("a rerun");
        assert_eq!(r.run.as_deref(), Some("npx mocha --reporter spec --grep '^(?:cart totals zero)$'"));
        let again = read(captured!("mocha-12.0.3-grep.txt"));
        assert_eq!(again.failed, ["cart > totals zero"]);
        let tests = failed_by_runner(captured!("node-20.20.2-test-spec.txt"));
        let r = rerun(failed("node --test test/", &tests[..1]), &none).expect("a rerun");
        assert_eq!(
            r.run.as_deref(),
            Some("node --test --test-name-pattern='^(?:totals zero|cart totals zero)$' test/")
        );
        // Through a package script that starts the runner.
        let scripts = [("test".to_string(), "cross-env TZ=UTC jest --coverage".to_string())];
        let jest = [(Runner::Js, "cart > adds".to_string())];
        let through = |run| rerun(FailedRun { scripts: &scripts, ..failed(run, &jest) }, &none).map(|r| r.run);
        assert_eq!(through("npm run --silent test"), Ok(Some("npm run --silent test -- -t '^(?:cart adds)$'".into())));
        assert_eq!(
            through("npm run --silent test -- --verbose"),
            Ok(Some("npm run --silent test -- --verbose -t '^(?:cart adds)$'".into()))
        );
        assert_eq!(through("pnpm test"), Ok(Some("pnpm test -t '^(?:cart adds)$'".into())));
        assert!(through("pnpm run test -- --verbose").is_err());
        assert!(through("npm run lint").is_err());
        let refused = rerun(failed("mocha -g cart", &tests[..1]), &none);
        assert_eq!(refused, Err(NoRerun::CannotSelect(Unselectable::Selects("-g".to_string()))));
        let refused = rerun(failed("node test.js", &tests[..1]), &none);
        assert!(matches!(refused, Err(NoRerun::CannotSelect(Unselectable::NotARunner(_)))), "{refused:?}");
    }

    #[test]
    fn what_is_not_run_again() {
        let cargo = [(Runner::Cargo, "tests::bad".to_string())];
        let piped = rerun(failed("cargo test | tee out", &cargo), &none);
        assert_eq!(piped, Err(NoRerun::CannotSelect(Unselectable::NotPlain("a pipe or `||`"))));
        let jest = failed_by_runner(captured!("vitest-4.1.12.txt"));
        let script = rerun(failed("npm test", &jest), &none);
        assert_eq!(script, Err(NoRerun::CannotSelect(Unselectable::NotARunner("npm run test".into()))));
        assert!(script.expect_err("no rerun").reason().starts_with("`npm run test` is no runner"));
        assert_eq!(rerun(failed("ruff check .", &[]), &none), Err(NoRerun::NoTestNamed));
        let py = [(Runner::Pytest, "t.py::test_a".to_string())];
        let lint = FailedRun { other_failures: true, ..failed("ruff check . && pytest", &py) };
        assert_eq!(rerun(lint, &none), Err(NoRerun::NotATest));
        let slow = FailedRun { timed_out: true, ..failed("pytest", &py) };
        assert_eq!(rerun(slow, &none), Err(NoRerun::TimedOut));
    }
}
