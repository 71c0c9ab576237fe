//! `--from-log FILE --check NAME`: a CI log judged as the output of a
//! configured check. The log is read once, in pieces, cleaned of what CI
//! adds ([`super::ci_log`]) and kept as a check's output is (its head and
//! tail); then it goes through what a local check's output goes through
//! (`crate::run::gates::checks::parse_output`: the format's parser, the
//! digest, the enrichment with enclosing scopes read from the judged
//! commit's files) and is judged without a base. What failed becomes a
//! rejection whose required change is the run's own sentence for that
//! check, said of CI.

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use super::SourceError;
use super::ci_log::{self, Cleaner};
use crate::config::Config;
use crate::git::{Oid, Repo};
use crate::model::{AttemptRecord, Channel, CheckResult, Outcome, Review, Verdict};
use crate::outcome::check::{Judging, judge};
use crate::process::Capture;
use crate::run::gates::checks::{CheckExit, parse_output};

/// Bytes of the cleaned log kept at its head and at its tail: what the run
/// keeps of a check's output.
const KEEP: usize = 2 * 1024 * 1024;

/// The rejection a CI log holds, read as the output of check `check`, its
/// places read from commit `commit`.
pub(crate) fn from_log(
    repo: &Repo,
    config: &Config,
    commit: Oid,
    file: &Path,
    check: &str,
) -> Result<Review, SourceError> {
    let Some(c) = config.checks.iter().find(|c| c.name == check) else {
        return Err(SourceError::UnknownCheck {
            check: check.to_string(),
            configured: config.checks.iter().map(|c| c.name.clone()).collect(),
        });
    };
    let unreadable = |source| SourceError::LogUnreadable { path: file.to_path_buf(), source };
    let (text, exit_code) = read_cleaned(file).map_err(unreadable)?;
    let text = ci_log::relative_to(&text, &ci_log::ci_roots(&text));
    let status = CheckExit { exit_code, signal: None, timed_out: false, duration: Duration::ZERO };
    let read = |rel: &str| repo.blob_at(commit, rel);
    let parsed = parse_output(c, &text, status, (Path::new("."), None), &read);
    let how = Judging { mode: c.baseline_mode(&config.retry), targets: &config.targets, renames: &[] };
    let result = judge(c, &parsed, None, how, 1, false);
    let name = file.file_name().map_or_else(|| file.display().to_string(), |n| n.to_string_lossy().into_owned());
    if let Some(why) = nothing_failed(&result, exit_code) {
        return Err(SourceError::NothingFailed { path: file.to_path_buf(), check: check.to_string(), why });
    }
    Ok(rejection(&name, result))
}

/// The log at `file`, cleaned, its head and tail kept; and the exit code
/// GitHub Actions gave the step, when it says.
fn read_cleaned(file: &Path) -> std::io::Result<(String, Option<i32>)> {
    let mut f = std::fs::File::open(file)?;
    if f.metadata()?.is_dir() {
        return Err(std::io::Error::new(std::io::ErrorKind::IsADirectory, "it is a directory"));
    }
    let mut cleaner = Cleaner::default();
    let mut kept = Capture::new(KEEP);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        cleaner.feed(&buf[..n], &mut |line| kept.push(line));
    }
    cleaner.finish(&mut |line| kept.push(line));
    Ok((String::from_utf8_lossy(&kept.bytes()).into_owned(), cleaner.exit_code))
}

/// Why a log judged as `result` holds no failure to reject with; `None`
/// when it does.
fn nothing_failed(result: &CheckResult, exit_code: Option<i32>) -> Option<String> {
    if result.passed {
        return Some(match exit_code {
            Some(code) => format!("the step exited with {code}"),
            None => "the check passed".into(),
        });
    }
    let found = !result.failures.is_empty() || !result.errors.is_empty();
    if found || exit_code.is_some_and(|c| c != 0) {
        return None;
    }
    let ran = result.tests_ran.map(|n| format!(" ({n} tests ran)")).unwrap_or_default();
    Some(format!("it names no failing test and no error{ran}"))
}

/// The draft rejection of check result `c`, read from the log `name`.
fn rejection(name: &str, c: CheckResult) -> Review {
    let mut attempt = AttemptRecord::new(0);
    attempt.outcome = Outcome::CheckFailure;
    attempt.checks = vec![c];
    let run = crate::context::required_change(&attempt).text;
    let c = &attempt.checks[0];
    Review {
        verdict: Verdict::Rejected,
        channel: Channel::Log,
        required_change: Some(ci_log::required_change(&run, c)),
        failures: c.failures.iter().chain(&c.pre_existing).map(|f| f.label.clone()).collect(),
        output: ci_log::output_lines(c),
        source: Some(format!("{name} (check {})", c.name)),
        ..Review::default()
    }
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use super::*;

    fn fixtures() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/review/ci-log")
    }

    /// A repository whose one commit holds the captured project, and the
    /// config with a `pytest` check.
    fn project() -> (tempfile::TempDir, Repo, Oid, Config) {
        let dir = tempfile::tempdir().expect("tempdir");
        let from = fixtures().join("project");
        for rel in ["pyproject.toml", "shop/__init__.py", "shop/cart.py", "tests/test_cart.py"] {
            let to = dir.path().join(rel);
            std::fs::create_dir_all(to.parent().expect("a parent")).expect("mkdir");
            std::fs::copy(from.join(rel), &to).expect("copy");
        }
        let git = |args: &[&str]| {
            let mut all = vec!["-c", "user.name=T", "-c", "user.email=t@example.com"];
            all.extend_from_slice(args);
            let out = crate::process::output("git", &all, Some(dir.path())).expect("git runs");
            assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        };
        git(&["init", "-q"]);
        git(&["add", "."]);
        git(&["commit", "-q", "-m", "shop"]);
        let repo = Repo::discover(dir.path()).expect("a repository");
        let commit = repo.head().expect("HEAD").oid;
        let config = Config::parse(
            "[[check]]\nname = \"pytest\"\nrun = \"python -m pytest\"\nkind = \"test\"\n",
            Path::new("retry-run.toml"),
        )
        .expect("config");
        (dir, repo, commit, config)
    }

    #[test]
    fn a_captured_pytest_log_is_a_rejection_naming_the_failing_tests_and_their_scopes() {
        let (_dir, repo, commit, config) = project();
        for log in ["pytest.log", "actions.log", "gh-run-log.log"] {
            let r = from_log(&repo, &config, commit, &fixtures().join(log), "pytest").expect(log);
            assert_eq!((r.verdict, r.channel), (Verdict::Rejected, Channel::Log), "{log}");
            assert_eq!(r.source.as_deref(), Some(format!("{log} (check pytest)").as_str()));
            let required = r.required_change.clone().unwrap_or_default();
            assert!(
                required.starts_with(
                    "Make the failing tests pass: `tests/test_cart.py::test_total_applies_a_percentage_discount` and `tests/test_cart.py::test_parse_price_reads_whole_numbers`; they fail in CI"
                ),
                "{log}: {required}"
            );
            assert!(
                r.failures
                    .iter()
                    .any(|f| f.starts_with("tests/test_cart.py::test_total_applies_a_percentage_discount")),
                "{log}: {:?}",
                r.failures
            );
            let output = r.output.join("\n");
            assert!(output.contains("(in `parse_price`)"), "{log}: the enclosing scope from the commit:\n{output}");
            assert!(
                !output.contains("\u{1b}") && !output.contains("##[") && !output.contains("2026-05-01T"),
                "{output}"
            );
            assert!(!output.contains("/home/runner") && !output.contains("/builds/"), "{output}");
        }
    }

    #[test]
    fn a_log_in_which_the_check_passed_is_refused() {
        let (_dir, repo, commit, config) = project();
        let e = from_log(&repo, &config, commit, &fixtures().join("passed.log"), "pytest").expect_err("refused");
        assert!(matches!(e, SourceError::NothingFailed { .. }), "{e}");
        assert!(e.to_string().contains("nothing failed in it"), "{e}");
        assert!(e.is_usage());
    }

    #[test]
    fn an_unknown_check_or_a_missing_log_is_refused_naming_it() {
        let (dir, repo, commit, config) = project();
        let e = from_log(&repo, &config, commit, &fixtures().join("pytest.log"), "tests").expect_err("refused");
        assert_eq!(e.to_string(), "--check tests: the config has no check named `tests` (its checks: `pytest`)");
        let missing = dir.path().join("ci.log");
        let e = from_log(&repo, &config, commit, &missing, "pytest").expect_err("refused");
        assert!(e.to_string().starts_with(&format!("{}: cannot read the CI log", missing.display())), "{e}");
        assert!(e.is_usage());
    }

    #[test]
    fn a_huge_log_is_read_in_bounded_memory_and_still_parsed() {
        let (dir, repo, commit, config) = project();
        let captured = std::fs::read(fixtures().join("pytest.log")).expect("fixture");
        // 40 MiB of noise before the run's output: kept are the head and the tail.
        let noise = b"2026-05-01T12:00:00.0000000Z Downloading a dependency, one line of many\n".repeat(600_000);
        let big = dir.path().join("big.log");
        std::fs::write(&big, [noise.as_slice(), captured.as_slice()].concat()).expect("write");
        let (text, _) = read_cleaned(&big).expect("read");
        assert!(text.len() <= 2 * KEEP + 100, "{} bytes kept", text.len());
        let r = from_log(&repo, &config, commit, &big, "pytest").expect("a rejection");
        assert!(r.failures.len() >= 2, "{:?}", r.failures);
    }
}
