//! `retry-run summarize` on real runner logs (tests/summarize/captured/ and
//! tests/diagnostics/captured/) with their key facts (tests/summarize/facts/).

use std::path::{Path, PathBuf};

use crate::support::TestEnv;
use retry_run::summarize::{Summarizer, render::render, summarize};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// (log name, log path, facts) for every log with a facts file.
fn corpus() -> Vec<(String, PathBuf, Vec<String>)> {
    let mut out = Vec::new();
    for f in std::fs::read_dir(repo().join("tests/summarize/facts")).expect("facts dir") {
        let f = f.expect("entry").path();
        let name = f.file_stem().expect("stem").to_string_lossy().into_owned();
        let log = ["tests/summarize/captured", "tests/diagnostics/captured"]
            .iter()
            .map(|d| repo().join(d).join(format!("{name}.txt")))
            .find(|p| p.exists())
            .unwrap_or_else(|| panic!("no log for facts/{name}.txt"));
        let facts = std::fs::read_to_string(&f).expect("read facts").lines().map(str::to_string).collect();
        out.push((name, log, facts));
    }
    out.sort();
    out
}

#[test]
fn every_key_fact_of_the_corpus_is_in_the_default_digest() {
    let env = TestEnv::new();
    let corpus = corpus();
    assert!(corpus.len() >= 12);
    for (name, log, facts) in corpus {
        let run = env.run(&repo(), &["summarize", "--input", &log.to_string_lossy()]);
        run.assert_code(0);
        assert!(run.stdout.len() <= 500 * 4, "{name}: digest of {} bytes exceeds 500 tokens", run.stdout.len());
        for fact in &facts {
            assert!(run.stdout.contains(fact.as_str()), "{name}: digest lacks {fact:?}:\n{}", run.stdout);
        }
    }
}

#[test]
fn a_tight_budget_is_kept_and_says_what_it_cut() {
    let env = TestEnv::new();
    let log = repo().join("tests/diagnostics/captured/pytest.txt");
    for tokens in [10, 60, 100, 150] {
        let run =
            env.run(&repo(), &["summarize", "--input", &log.to_string_lossy(), "--max-tokens", &tokens.to_string()]);
        run.assert_code(0);
        assert!(run.stdout.len() <= tokens * 4, "{tokens} tokens: {} bytes:\n{}", run.stdout.len(), run.stdout);
        assert!(run.stdout.contains(" lines omitted]"), "{}", run.stdout);
    }
    // The counts, then failing tests before details: at 100 tokens the first failing test is kept.
    let run = env.run(&repo(), &["summarize", "--input", &log.to_string_lossy(), "--max-tokens", "100"]);
    assert!(
        run.stdout.starts_with("tests: 4 failed, 1 passed\nfailed tests (4):\n  tests/test_cart.py::test_total"),
        "{}",
        run.stdout
    );
}

#[test]
fn the_digest_does_not_depend_on_how_the_log_is_chunked() {
    for (name, log, _) in corpus() {
        let bytes = std::fs::read(&log).expect("read log");
        let whole = render(&summarize(&bytes), 500);
        for size in [1, 7, 64, 4096] {
            let mut s = Summarizer::new();
            bytes.chunks(size).for_each(|c| s.feed(c));
            assert_eq!(render(&s.finish(), 500), whole, "{name} in chunks of {size}");
        }
    }
}

#[test]
fn crlf_non_utf8_and_empty_logs() {
    let log = std::fs::read(repo().join("tests/diagnostics/captured/cargo-test.txt")).expect("read");
    let crlf: Vec<u8> = log.iter().flat_map(|&b| if b == b'\n' { vec![b'\r', b'\n'] } else { vec![b] }).collect();
    let a = render(&summarize(&crlf), 500);
    assert!(a.contains("src/lib.rs:66:9") && a.contains("tests::adds_up"), "{a}");
    let mut junk = b"\xff\xfe garbage \x00\n".repeat(100);
    junk.extend_from_slice(b"thread 'main' panicked at src/\xe9.rs:3:4:\nboom\n");
    assert!(render(&summarize(&junk), 500).contains(":3:4: panicked: boom"));
    assert_eq!(render(&summarize(b""), 500), "no failures found in 0 lines\n");
    let env = TestEnv::new();
    let run = env.run(&repo(), &["summarize", "--input", "no/such.log"]);
    run.assert_code(2);
    assert!(run.stderr.contains("no/such.log"), "{}", run.stderr);
}

#[test]
fn the_log_is_an_operand_as_well_as_input_and_a_dash_is_stdin() {
    let env = TestEnv::new();
    let rel = "tests/diagnostics/captured/pytest.txt";
    let log = repo().join(rel);
    let log = log.to_str().expect("utf-8");
    let by_input = env.run(&repo(), &["summarize", "--input", log]);
    by_input.assert_code(0);
    assert!(by_input.stdout.contains("tests/test_cart.py::test_total"), "{}", by_input.stdout);
    // The operand, absolute or relative to the working directory, with the options after it.
    for args in [vec!["summarize", log], vec!["summarize", rel], vec!["summarize", rel, "--max-tokens", "500"]] {
        let run = env.run(&repo(), &args);
        run.assert_code(0);
        assert_eq!(run.stdout, by_input.stdout, "{args:?}");
    }
    // `-` (as the operand or after --input), or nothing: stdin.
    let bytes = std::fs::read(repo().join(rel)).expect("the log");
    for args in [vec!["summarize", "-"], vec!["summarize", "--input", "-"], vec!["summarize"]] {
        let run = env.run_with_stdin(env.root(), &args, &bytes);
        run.assert_code(0);
        assert_eq!(run.stdout, by_input.stdout, "{args:?}");
    }
    // Both the operand and --input: a usage error.
    let run = env.run(&repo(), &["summarize", rel, "--input", rel]);
    run.assert_code(2);
    assert!(run.stderr.contains("cannot be used with") && run.stderr.contains("--input"), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    // A missing file is named as it was given.
    let run = env.run(&repo(), &["summarize", "no/such.log"]);
    run.assert_code(2);
    assert!(run.error_line().contains("no/such.log"), "{}", run.stderr);
}

#[test]
fn failures_at_the_start_and_the_end_of_a_long_log_are_both_found() {
    let mut s = Summarizer::new();
    s.feed(b"test early::one ... FAILED\n");
    let filler =
        "test module::case_ok ... ok\n2026-11-22T10:00:00Z INFO worker 3 processed batch in 4ms\n".repeat(20_000);
    for _ in 0..10 {
        s.feed(filler.as_bytes());
    }
    s.feed(b"---- late::two stdout ----\nthread 'late::two' panicked at src/late.rs:9:1:\nassertion failed: x\n\ntest result: FAILED. 1 passed; 2 failed\n");
    let d = s.finish();
    let text = render(&d, 500);
    for want in ["early::one", "late::two", "src/late.rs:9:1", "test result: FAILED"] {
        assert!(text.contains(want), "{want} missing:\n{text}");
    }
    assert_eq!(d.lines, 1 + 400_000 + 5);
}

/// The totals a runner printed, read from its log independently of
/// `summarize`: (failed, passed, errors); `passed` is `None` when the runner
/// does not say (go test without `-v`).
fn runner_totals(name: &str, log: &str) -> (u64, Option<u64>, u64) {
    // `N word` pairs of one summary line, in any of the runners' separators.
    let pairs = |line: &str| -> Vec<(u64, String)> {
        let words: Vec<&str> = line.split([' ', ',', ';', '|', '(', ')']).filter(|w| !w.is_empty()).collect();
        words
            .windows(2)
            .filter_map(|w| Some((w[0].parse::<u64>().ok()?, w[1].trim_end_matches('.').to_string())))
            .collect()
    };
    let sum = |lines: Vec<&str>| {
        let (mut f, mut p, mut e) = (0, 0, 0);
        for l in lines {
            for (n, w) in pairs(l) {
                match w.as_str() {
                    "failed" => f += n,
                    "passed" => p += n,
                    "error" | "errors" => e += n,
                    _ => {}
                }
            }
        }
        (f, Some(p), e)
    };
    let lines: Vec<&str> = log.lines().collect();
    if name.starts_with("pytest") {
        // The last line: `==== 4 failed, 7 passed, 3 errors in 0.1s ====` (or bare with -q).
        let last = lines.iter().rev().find(|l| !l.trim().is_empty()).expect("a last line");
        assert!(last.contains(" in ") && last.trim_end().ends_with(['s', '=']), "{name}: {last}");
        sum(vec![last])
    } else if name.starts_with("cargo-test") {
        sum(lines.into_iter().filter(|l| l.starts_with("test result: ")).collect())
    } else if name.starts_with("jest") {
        sum(lines.into_iter().filter(|l| l.starts_with("Tests:")).collect())
    } else if name.starts_with("vitest") {
        sum(lines.into_iter().filter(|l| l.trim_start().starts_with("Tests ")).collect())
    } else if name.starts_with("go-counts") {
        // go prints no totals: its -json events of the same run are counted.
        let json = std::fs::read_to_string(repo().join("tests/summarize/captured/go-counts-json.txt")).expect("json");
        let count = |action: &str| {
            json.lines().filter(|l| l.contains(&format!("\"Action\":\"{action}\"")) && l.contains("\"Test\":")).count()
                as u64
        };
        (count("fail"), name.ends_with("-v").then(|| count("pass")), 0)
    } else {
        panic!("no totals reader for {name}")
    }
}

fn counts_line((failed, passed, errors): (u64, Option<u64>, u64)) -> String {
    let mut s = format!("tests: {failed} failed");
    if let Some(p) = passed {
        s.push_str(&format!(", {p} passed"));
    }
    if errors > 0 {
        s.push_str(&format!(", {errors} error{}", if errors == 1 { "" } else { "s" }));
    }
    s
}

const COUNTED: &[&str] = &[
    "pytest-counts-q",
    "pytest-counts-v",
    "pytest-counts-ra",
    "pytest-many-v",
    "cargo-test-counts",
    "cargo-test-counts-q",
    "cargo-test-many",
    "go-counts",
    "go-counts-v",
    "jest",
    "jest-counts",
    "jest-counts-verbose",
    "vitest",
    "vitest-counts",
    "vitest-counts-verbose",
];

#[test]
fn the_digest_reports_the_runners_own_totals() {
    for name in COUNTED {
        let log = std::fs::read_to_string(repo().join(format!("tests/summarize/captured/{name}.txt"))).expect("log");
        let want = counts_line(runner_totals(name, &log));
        let digest = render(&summarize(log.as_bytes()), 500);
        assert_eq!(digest.lines().next(), Some(want.as_str()), "{name}: the digest's first line:\n{digest}");
    }
}

/// pytest `-v` names a failing test on its verbose line and again in the
/// short summary (`FAILED id - reason`): one test, listed once, with its reason.
#[test]
fn a_failing_test_is_listed_once_with_its_reason() {
    let log = std::fs::read(repo().join("tests/summarize/captured/pytest-many-v.txt")).expect("log");
    let d = summarize(&log);
    assert_eq!(
        d.failed_tests.entries,
        [
            "test_many.py::test_round_trip[7] - AssertionError: assert 707 == 770",
            "test_many.py::test_round_trip[211] - AssertionError: assert 21101 == 2...",
            "test_many.py::test_round_trip[396] - AssertionError: assert 39606 == 3...",
        ]
    );
    // Failures and errors (setup, teardown) of one test are one entry; ids with spaces are read whole.
    let log = std::fs::read(repo().join("tests/summarize/captured/pytest-counts-v.txt")).expect("log");
    let ids: Vec<String> =
        summarize(&log).failed_tests.entries.iter().map(|e| e.split(" - ").next().unwrap_or(e).to_string()).collect();
    let mut want: Vec<&str> = vec![
        "test_counts.py::test_parse_values[x error-3]",
        "test_counts.py::test_parse_values[4-40]",
        "test_counts.py::test_plain_failure",
        "test_counts.py::test_needs_broken_setup",
        "test_counts.py::test_passes_then_teardown_errors",
        "test_counts.py::test_fails_then_teardown_errors",
    ];
    let mut got: Vec<&str> = ids.iter().map(String::as_str).collect();
    got.sort();
    want.sort();
    assert_eq!(got, want);
    // cargo test names its failing tests again under `failures:`: not a detail.
    let log = std::fs::read(repo().join("tests/summarize/captured/cargo-test-counts.txt")).expect("log");
    let d = summarize(&log);
    assert_eq!(
        d.failed_tests.entries,
        ["tests::error_on_spaces", "api_total_of_failed_inputs", "src/lib.rs - parse (line 11)"]
    );
    assert!(!d.details.entries.iter().any(|e| d.failed_tests.entries.contains(e)), "{:?}", d.details.entries);
}

/// A line saying a test passed (or was skipped) is never in the digest,
/// whatever the test's name says (`parse_error_is_reported ... ok`).
#[test]
fn no_passing_or_skipped_test_line_is_listed() {
    let passing = |l: &str| {
        let t = l.trim();
        (t.starts_with("test ") && (t.ends_with(" ... ok") || t.contains(" ... ignored")))
            || t.starts_with("--- PASS: ")
            || t.starts_with("--- SKIP: ")
            || t.starts_with("PASSED ")
            || t.starts_with("SKIPPED ")
            || t.starts_with("XFAIL ")
            || t.starts_with("XPASS ")
            || (t.contains("::") && [" PASSED", " SKIPPED", " XFAIL", " XPASS"].iter().any(|w| t.contains(w)))
            || ["✓ ", "○ ", "✎ ", "↓ ", "□ "].iter().any(|m| t.starts_with(m))
    };
    for name in COUNTED.iter().chain(&["go-test", "go-test-v"]) {
        let log = std::fs::read_to_string(repo().join(format!("tests/summarize/captured/{name}.txt"))).expect("log");
        let passing_lines: Vec<&str> = log.lines().filter(|l| passing(l)).map(str::trim).collect();
        assert!(!passing_lines.is_empty() || !name.contains("-v"), "{name}: no passing line to check");
        let digest = render(&summarize(log.as_bytes()), 100_000);
        // go -v prints a skipped test's log line before its `--- SKIP`.
        assert!(!digest.contains("error paths not ready"), "{name}: a skipped test's reason is listed:\n{digest}");
        for line in digest.lines() {
            let entry = line.trim();
            assert!(
                !passing_lines.iter().any(|p| !entry.is_empty() && *p == entry),
                "{name}: the digest lists a passing test's line {entry:?}:\n{digest}"
            );
        }
    }
}
