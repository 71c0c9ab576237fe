//! What a test runner's output says about each test: which ran and passed,
//! which failed, and the runner's own totals. Pure, line by line, so one
//! output may hold several runners (`cargo test` of many crates, `ruff &&
//! pytest`).
//!
//! Understood: pytest (`-v` lines and the `-rA`/`-rp` summary), `cargo
//! test`, `go test` (`-v` for passing tests), jest `--verbose` and vitest.
//! Targets (tests a task names) are matched against the ids found here with
//! [`target_status`]. What a configured check's environment adds so that
//! quiet runners still name their tests, and how a failed check's failing
//! tests alone are run again, is [`runners`].

use serde::{Deserialize, Serialize};

pub mod runners;

/// The runner whose line named a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Runner {
    Pytest,
    Cargo,
    Go,
    /// jest or vitest.
    Js,
}

/// Tests named in one output, and how many ran by the runners' totals.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestRun {
    pub passed: Vec<String>,
    pub failed: Vec<String>,
    /// Passed plus failed by the totals lines (skipped tests did not run);
    /// `None` when no runner printed totals.
    pub ran: Option<u64>,
}

/// Reads every line of `text`.
pub fn read(text: &str) -> TestRun {
    let mut run = TestRun::default();
    let mut ran: Option<u64> = None;
    let mut go_counted = 0u64;
    for line in text.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        match classify(line) {
            Some(Seen::Test { runner, id, passed }) => {
                go_counted += u64::from(runner == Runner::Go);
                if passed { run.passed.push(id) } else { run.failed.push(id) }
            }
            Some(Seen::Totals(n)) => *ran.get_or_insert(0) += n,
            None => {}
        }
    }
    if go_counted > 0 {
        *ran.get_or_insert(0) += go_counted;
    }
    run.passed.sort();
    run.passed.dedup();
    run.failed.sort();
    run.failed.dedup();
    run.ran = ran;
    run
}

/// The failing tests `text` names, each with its runner, sorted and
/// without duplicates.
pub fn failed_by_runner(text: &str) -> Vec<(Runner, String)> {
    let mut out: Vec<(Runner, String)> = text
        .lines()
        .filter_map(|line| match classify(line.strip_suffix('\r').unwrap_or(line)) {
            Some(Seen::Test { runner, id, passed: false }) => Some((runner, id)),
            _ => None,
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

enum Seen {
    Test { runner: Runner, id: String, passed: bool },
    Totals(u64),
}

fn test(runner: Runner, id: String, passed: bool) -> Option<Seen> {
    Some(Seen::Test { runner, id, passed })
}

fn classify(line: &str) -> Option<Seen> {
    let t = line.trim();
    // cargo test: `test tests::adds ... ok` / `... FAILED` / `... ignored`.
    if let Some(rest) = t.strip_prefix("test ")
        && let Some((id, result)) = rest.rsplit_once(" ... ")
    {
        let id = id.trim().to_string();
        return match result.trim() {
            "ok" => test(Runner::Cargo, id, true),
            "FAILED" => test(Runner::Cargo, id, false),
            _ => None,
        };
    }
    // cargo test totals: `test result: FAILED. 1 passed; 1 failed; 0 ignored; ...`.
    if let Some(rest) = t.strip_prefix("test result: ") {
        let n = count_of(rest, "passed") + count_of(rest, "failed");
        return Some(Seen::Totals(n));
    }
    // go test -v: `--- PASS: TestAdd (0.00s)`, subtests indented.
    for (mark, pass) in [("--- PASS: ", true), ("--- FAIL: ", false)] {
        if let Some(rest) = t.strip_prefix(mark) {
            let id = rest.split(" (").next().unwrap_or(rest).trim().to_string();
            return test(Runner::Go, id, pass);
        }
    }
    // pytest -rA summary: `PASSED tests/t.py::test_a`, `FAILED id - reason`.
    for (mark, pass) in [("PASSED ", true), ("FAILED ", false), ("ERROR ", false)] {
        if let Some(rest) = t.strip_prefix(mark) {
            let id = rest.split(" - ").next().unwrap_or(rest).trim();
            if id.contains("::") && !id.contains(char::is_whitespace) {
                return test(Runner::Pytest, id.to_string(), pass);
            }
        }
    }
    // pytest -v: `tests/t.py::test_a PASSED [ 50%]`.
    if let Some((id, rest)) = t.split_once(' ')
        && id.contains("::")
    {
        let word = rest.split_whitespace().next().unwrap_or("");
        match word {
            "PASSED" | "XPASS" => return test(Runner::Pytest, id.to_string(), true),
            "FAILED" | "ERROR" => return test(Runner::Pytest, id.to_string(), false),
            _ => {}
        }
    }
    // jest --verbose / vitest: `✓ name (3 ms)`, `✕ name`, `× name`.
    for (mark, pass) in [("✓ ", true), ("√ ", true), ("✕ ", false), ("× ", false)] {
        if let Some(rest) = t.strip_prefix(mark) {
            let id = strip_duration(rest).to_string();
            if !id.is_empty() {
                return test(Runner::Js, id, pass);
            }
        }
    }
    // jest totals: `Tests:       1 failed, 2 passed, 3 total`.
    if let Some(rest) = t.strip_prefix("Tests:") {
        return Some(Seen::Totals(count_of(rest, "passed") + count_of(rest, "failed")));
    }
    // vitest totals: `Tests  1 failed | 2 passed (3)`.
    if let Some(rest) = t.strip_prefix("Tests  ") {
        return Some(Seen::Totals(count_of(rest, "passed") + count_of(rest, "failed")));
    }
    // pytest totals: `==== 1 failed, 2 passed in 0.12s ====`, or `-q`'s bare line.
    let bare = t.trim_matches(|c: char| c == '=' || c.is_whitespace());
    if bare.contains(" in ")
        && bare.starts_with(|c: char| c.is_ascii_digit())
        && (bare.contains(" passed") || bare.contains(" failed") || bare.contains(" error"))
    {
        let n =
            count_of(bare, "passed") + count_of(bare, "failed") + count_of(bare, "error") + count_of(bare, "errors");
        return Some(Seen::Totals(n));
    }
    None
}

/// `N word` anywhere in `s` (words separated by `,`, `;`, `|`).
fn count_of(s: &str, word: &str) -> u64 {
    s.split([',', ';', '|', '.'])
        .filter_map(|part| {
            let mut w = part.split_whitespace();
            let n = w.next()?.parse::<u64>().ok()?;
            (w.next()? == word).then_some(n)
        })
        .sum()
}

/// A test name without jest's or vitest's trailing `(3 ms)` / `12ms`.
fn strip_duration(s: &str) -> &str {
    let s = s.trim();
    if let Some(open) = s.rfind(" (")
        && s.ends_with("ms)")
    {
        return s[..open].trim_end();
    }
    if let Some((head, last)) = s.rsplit_once(' ')
        && last.ends_with("ms")
        && last[..last.len() - 2].bytes().all(|b| b.is_ascii_digit())
        && last.len() > 2
    {
        return head.trim_end();
    }
    s
}

/// Where a task's target stands after an attempt's checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TargetStatus {
    Passed,
    Failed,
    /// No check reported it at all: deleted, renamed, not collected, or a
    /// runner that does not print test names.
    NotReported,
}

/// Whether `id` (as a runner printed it) is the target `target`: the same,
/// or one case of it (`test_a[1]` for `test_a`, a vitest `file > test`
/// ending in it).
pub fn is_target(id: &str, target: &str) -> bool {
    id == target
        || id.strip_prefix(target).is_some_and(|rest| rest.starts_with('['))
        || id.strip_suffix(target).is_some_and(|head| head.ends_with(" > "))
}

/// A target's status from every check's run: failed when any check saw it
/// fail, passed when one saw it pass, else not reported.
pub fn target_status(target: &str, runs: &[&TestRun], failed_keys: &[&str]) -> TargetStatus {
    let failed = failed_keys.iter().any(|k| is_target(k, target))
        || runs.iter().any(|r| r.failed.iter().any(|id| is_target(id, target)));
    if failed {
        return TargetStatus::Failed;
    }
    if runs.iter().any(|r| r.passed.iter().any(|id| is_target(id, target))) {
        TargetStatus::Passed
    } else {
        TargetStatus::NotReported
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runners_lines() {
        let text = "\
tests/test_calc.py::test_add FAILED                                      [ 50%]
tests/test_calc.py::test_mul PASSED                                      [100%]
tests/test_calc.py::test_p[1] PASSED
tests/test_calc.py::test_skip SKIPPED (nope)                             [100%]
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_add - assert -1 == 5
==================== 1 failed, 2 passed, 1 skipped in 0.03s ====================
test tests::adds ... ok
test tests::subs ... FAILED
test tests::slow ... ignored
test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s
--- PASS: TestAdd (0.00s)
    --- FAIL: TestAdd/neg (0.00s)
  ✓ adds numbers (3 ms)
  ✕ subtracts (1 ms)
Tests:       1 failed, 1 passed, 2 total
";
        let r = read(text);
        assert_eq!(
            r.passed,
            ["TestAdd", "adds numbers", "tests/test_calc.py::test_mul", "tests/test_calc.py::test_p[1]", "tests::adds"]
        );
        assert_eq!(r.failed, ["TestAdd/neg", "subtracts", "tests/test_calc.py::test_add", "tests::subs"]);
        // pytest 3, cargo 2, jest 2, go 2.
        assert_eq!(r.ran, Some(9));
    }

    #[test]
    fn pytest_quiet_totals_and_no_totals() {
        assert_eq!(read("..F\n1 failed, 2 passed in 0.01s\n").ran, Some(3));
        assert_eq!(read("3 passed, 2 skipped in 0.01s\n").ran, Some(3));
        assert_eq!(read("1 error in 0.2s\n").ran, Some(1));
        assert_eq!(read("nothing here\nFound 3 errors.\n").ran, None);
    }

    #[test]
    fn targets() {
        let run = read("t.py::test_a[1] PASSED\nt.py::test_b PASSED\n");
        let runs = [&run];
        assert_eq!(target_status("t.py::test_a", &runs, &[]), TargetStatus::Passed);
        assert_eq!(target_status("t.py::test_b", &runs, &["t.py::test_b"]), TargetStatus::Failed);
        assert_eq!(target_status("t.py::test_c", &runs, &[]), TargetStatus::NotReported);
        assert!(!is_target("t.py::test_ab", "t.py::test_a"));
        assert!(is_target("src/a.test.ts > math > adds", "math > adds"));
    }
}
