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
    // Failing tests come before details: at 100 tokens the first failing test is kept.
    let run = env.run(&repo(), &["summarize", "--input", &log.to_string_lossy(), "--max-tokens", "100"]);
    assert!(run.stdout.starts_with("failed tests (4):\n  tests/test_cart.py::test_total"), "{}", run.stdout);
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
