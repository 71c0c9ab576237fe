//! Patterns across attempts, found mechanically (docs/commands.md, `context`):
//! the same test failing in consecutive attempts, the same files modified, a
//! diff identical to an earlier one, and drift (consecutive diffs that share
//! little). Pure.

use serde::{Deserialize, Serialize};

use super::required::name_list;
use crate::model::AttemptRecord;
use crate::text::plural;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Pattern {
    /// `same-failing-test`, `same-files`, `identical-diff`, `drift`.
    pub kind: String,
    pub observation: String,
    pub suggestion: String,
}

/// The changed lines of a patch (`+`/`-` lines, without the file headers),
/// which is what similarity is measured on.
pub(crate) fn changed_lines(diff: &[String]) -> Vec<&str> {
    diff.iter()
        .map(String::as_str)
        .filter(|l| (l.starts_with('+') && !l.starts_with("+++")) || (l.starts_with('-') && !l.starts_with("---")))
        .collect()
}

/// How much two attempts' changes share, 0.0 to 1.0 (`similar`'s ratio
/// over their changed lines). Two empty changes are identical.
pub(crate) fn similarity(a: &[String], b: &[String]) -> f32 {
    let (a, b) = (changed_lines(a), changed_lines(b));
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    similar::TextDiff::configure().algorithm(similar::Algorithm::Myers).diff_slices(&a, &b).ratio()
}

/// Patterns over `attempts` (in order, oldest first); only pairs that
/// involve the most recent attempt are reported, so an observation is
/// news to the next attempt.
pub(crate) fn patterns(attempts: &[AttemptRecord], drift_threshold: f64) -> Vec<Pattern> {
    let mut out = Vec::new();
    let Some((last, earlier)) = attempts.split_last() else { return out };
    if let Some(prev) = earlier.last() {
        // The same test failing in consecutive attempts: how long the streak is.
        let now: Vec<&str> = last.failing_tests();
        let mut repeated: Vec<String> = Vec::new();
        for t in &now {
            if prev.failing_tests().contains(t) {
                let mut first = prev.number;
                for a in earlier.iter().rev().skip(1) {
                    if a.failing_tests().contains(t) {
                        first = a.number;
                    } else {
                        break;
                    }
                }
                repeated.push(format!("`{t}` (attempts {first} to {})", last.number));
            }
        }
        repeated.sort();
        repeated.dedup();
        if !repeated.is_empty() {
            out.push(Pattern {
                kind: "same-failing-test".into(),
                observation: format!("The same test{} failed in consecutive attempts: {}.", plural(repeated.len()), name_list(&repeated)),
                suggestion: "The last change did not alter the result: read the assertion and the code under test again before editing.".into(),
            });
        }
        let files = |a: &AttemptRecord| {
            let mut f: Vec<String> = a.files.iter().map(|f| f.path.clone()).collect();
            f.sort();
            f
        };
        if !last.files.is_empty() && files(last) == files(prev) {
            let names: Vec<String> = files(last).iter().map(|f| format!("`{f}`")).collect();
            out.push(Pattern {
                kind: "same-files".into(),
                observation: format!(
                    "Attempts {} and {} modified the same files: {}.",
                    prev.number,
                    last.number,
                    name_list(&names)
                ),
                suggestion: "If the fix belongs elsewhere, look beyond these files.".into(),
            });
        }
        if !last.diff.is_empty() && !prev.diff.is_empty() && last.diff != prev.diff {
            let ratio = similarity(&prev.diff, &last.diff);
            if f64::from(ratio) < drift_threshold {
                out.push(Pattern {
                    kind: "drift".into(),
                    observation: format!(
                        "Attempts {} and {} changed very different lines ({:.0}% in common).",
                        prev.number,
                        last.number,
                        ratio * 100.0
                    ),
                    suggestion: "The attempts are not converging: the task may be under-specified; re-read it and keep what the checks accepted.".into(),
                });
            }
        }
    }
    if !last.diff.is_empty()
        && let Some(same) = earlier.iter().rev().find(|a| a.diff == last.diff && a.diff_omitted == last.diff_omitted)
    {
        out.push(Pattern {
            kind: "identical-diff".into(),
            observation: format!("Attempt {}'s diff is identical to attempt {}'s.", last.number, same.number),
            suggestion: "Repeating a change gives the same result: try a different approach.".into(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CheckKind, CheckResult, Failure, FileChange, Outcome};

    fn attempt(n: u32, tests: &[&str], files: &[&str], diff: &[&str]) -> AttemptRecord {
        let mut r = AttemptRecord::new(n);
        r.outcome = Outcome::CheckFailure;
        r.files = files.iter().map(|f| FileChange { path: f.to_string(), ..FileChange::default() }).collect();
        r.diff = diff.iter().map(|s| s.to_string()).collect();
        r.checks.push(CheckResult {
            exit_code: Some(1),
            duration_ms: 1,
            failures: tests
                .iter()
                .map(|t| Failure { key: t.to_string(), label: t.to_string(), test: true, ..Default::default() })
                .collect(),
            ..CheckResult::new("pytest", CheckKind::Test, tests.is_empty())
        });
        r
    }

    #[test]
    fn same_failing_test_counts_the_streak() {
        let a = [
            attempt(1, &["t::a"], &["x.py"], &["+a"]),
            attempt(2, &["t::a", "t::b"], &["y.py"], &["+b"]),
            attempt(3, &["t::a"], &["z.py"], &["+c"]),
        ];
        let p = patterns(&a, 0.0);
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].observation, "The same test failed in consecutive attempts: `t::a` (attempts 1 to 3).");
    }

    #[test]
    fn same_files_identical_diff_and_drift() {
        let a = [
            attempt(1, &[], &["x.py"], &["--- a/x.py", "+++ b/x.py", "+one", "-two"]),
            attempt(2, &[], &["x.py"], &["--- a/x.py", "+++ b/x.py", "+three", "-four"]),
            attempt(3, &[], &["x.py"], &["--- a/x.py", "+++ b/x.py", "+one", "-two"]),
        ];
        let kinds: Vec<String> = patterns(&a, 0.3).into_iter().map(|p| p.kind).collect();
        assert_eq!(kinds, ["same-files", "drift", "identical-diff"]);
        let kinds: Vec<String> = patterns(&a[..1], 0.3).into_iter().map(|p| p.kind).collect();
        assert!(kinds.is_empty());
    }

    #[test]
    fn similarity_is_over_changed_lines() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(similarity(&s(&["+++ b/a", "+x"]), &s(&["+++ b/b", "+x"])), 1.0);
        assert_eq!(similarity(&s(&["+x"]), &s(&["+y"])), 0.0);
        assert!(similarity(&s(&["+x", "+y"]), &s(&["+x", "+z"])) == 0.5);
    }
}
