//! Test integrity: did an attempt weaken the tests instead of fixing the
//! code? The base's tests and the attempt's are compared one by one (found
//! by tree-sitter in `syntax::tests_in`), and the runners' totals with the
//! base's. Pure: the loop reads the files and runs the checks.
//!
//! Findings: a test removed or renamed (tests are matched across files, so
//! a moved test is not removed), a skip added, fewer assertions in a test,
//! and fewer tests run by a check than on the base.

use globset::{GlobBuilder, GlobSetBuilder};
use serde::{Deserialize, Serialize};

use crate::model::{Failure, FoundTest};
use crate::text::plural;

/// The tests of one file on one side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileTests {
    pub path: String,
    pub tests: Vec<FoundTest>,
}

/// What happened to a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum TestChange {
    Removed,
    SkipAdded,
    FewerAssertions,
    FewerRun,
    /// `.only` (`fit`, `fdescribe`) added: the file's other tests no
    /// longer run.
    OnlyAdded,
    /// A snapshot file (`__snapshots__/*.snap`) of the base rewritten.
    SnapshotRewritten,
}

impl TestChange {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            TestChange::Removed => "removed",
            TestChange::SkipAdded => "skip-added",
            TestChange::FewerAssertions => "fewer-assertions",
            TestChange::FewerRun => "fewer-run",
            TestChange::OnlyAdded => "only-added",
            TestChange::SnapshotRewritten => "snapshot-rewritten",
        }
    }
}

/// One weakening, naming the file, the test and what changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Weakening {
    pub kind: TestChange,
    /// The test file (on the base), or the check for `fewer-run`.
    pub path: String,
    /// The test's id (`tests/t.py::TestA::test_b`), or the check's name.
    pub test: String,
    pub detail: String,
}

impl Weakening {
    /// As a check failure: keyed without lines, labelled for people.
    pub(crate) fn failure(&self) -> Failure {
        Failure {
            key: format!("test-integrity|{}|{}", self.kind.as_str(), self.test),
            label: format!("`{}`: {}", self.test, self.detail),
            test: false,
            target: false,
        }
    }
}

/// A test's id as its runner names it: pytest's node id for Python
/// (`path::Class::test`), `path::mod::test` for Rust.
pub(crate) fn test_id(path: &str, t: &FoundTest) -> String {
    const JS: [&str; 8] = ["ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"];
    if path.rsplit_once('.').is_some_and(|(_, ext)| JS.contains(&ext)) {
        // jest and vitest: `file > suite > case`.
        format!("{path} > {}", t.qualified)
    } else if path.ends_with(".py") {
        format!("{path}::{}", t.qualified.replace('.', "::"))
    } else {
        format!("{path}::{}", t.qualified)
    }
}

/// Each base test's match among the attempt's (by index), and which of the
/// attempt's tests matched one: same file and name first, then the same
/// qualified name in another file (moved), then the same bare name (moved
/// into another module).
fn paired(base_all: &[(&str, &FoundTest)], head_all: &[(&str, &FoundTest)]) -> (Vec<Option<usize>>, Vec<bool>) {
    let mut head_used = vec![false; head_all.len()];
    let mut pairs: Vec<Option<usize>> = vec![None; base_all.len()];
    type Same = fn(&(&str, &FoundTest), &(&str, &FoundTest)) -> bool;
    let passes: [Same; 3] = [
        |b, h| b.0 == h.0 && b.1.qualified == h.1.qualified,
        |b, h| b.1.qualified == h.1.qualified,
        |b, h| b.1.name == h.1.name,
    ];
    for same in passes {
        for (i, b) in base_all.iter().enumerate() {
            if pairs[i].is_some() {
                continue;
            }
            if let Some(j) = (0..head_all.len()).find(|&j| !head_used[j] && same(b, &head_all[j])) {
                head_used[j] = true;
                pairs[i] = Some(j);
            }
        }
    }
    (pairs, head_used)
}

/// How base test `t` (`id`) is weaker as the attempt's `h` (in `hpath`):
/// `.only` added, skipped now, an inline snapshot of the base rewritten,
/// fewer assertions.
fn weakened(t: &FoundTest, hpath: &str, h: &FoundTest, id: String) -> Vec<Weakening> {
    let mut out = Vec::new();
    let only = |s: &&String| s.starts_with(ONLY);
    if let Some(o) = h.skips.iter().filter(only).find(|s| !t.skips.contains(s)) {
        out.push(only_added(hpath, id.clone(), o));
    }
    let new_skips: Vec<&String> = h.skips.iter().filter(|s| !only(s) && !t.skips.contains(s)).collect();
    if !new_skips.is_empty() {
        let what: Vec<String> = new_skips.iter().map(|s| format!("`{s}`")).collect();
        out.push(Weakening {
            kind: TestChange::SkipAdded,
            path: hpath.to_string(),
            test: id.clone(),
            detail: format!("skipped now ({})", what.join(", ")),
        });
    }
    // An inline snapshot of the base changed or removed (one the runner
    // fills in, empty on the base, is not).
    let rewritten = t.inline_snapshots.iter().enumerate().find(|(k, b)| {
        let written = b.trim_matches(|c| c == '(' || c == ')').trim();
        !written.is_empty() && h.inline_snapshots.get(*k) != Some(*b)
    });
    if let Some((k, _)) = rewritten {
        out.push(Weakening {
            kind: TestChange::SnapshotRewritten,
            path: hpath.to_string(),
            test: id.clone(),
            detail: format!(
                "its inline snapshot {} of the base rewritten: a failing expectation compared with it now passes",
                k + 1
            ),
        });
    }
    // A test skipped now (`it.todo` keeps no body) is said once.
    if h.assertions < t.assertions && new_skips.is_empty() {
        out.push(Weakening {
            kind: TestChange::FewerAssertions,
            path: hpath.to_string(),
            test: id,
            detail: format!("{} assertion{} on the base, {} now", t.assertions, plural(t.assertions), h.assertions),
        });
    }
    out
}

/// Compares the tests of the changed files on the base with the attempt's.
pub(crate) fn compare(base: &[FileTests], head: &[FileTests]) -> Vec<Weakening> {
    let base_all: Vec<(&str, &FoundTest)> =
        base.iter().flat_map(|f| f.tests.iter().map(move |t| (f.path.as_str(), t))).collect();
    let head_all: Vec<(&str, &FoundTest)> =
        head.iter().flat_map(|f| f.tests.iter().map(move |t| (f.path.as_str(), t))).collect();
    let (pairs, head_used) = paired(&base_all, &head_all);
    let mut out = Vec::new();
    for (i, (path, t)) in base_all.iter().enumerate() {
        let id = test_id(path, t);
        let Some(j) = pairs[i] else {
            out.push(Weakening {
                kind: TestChange::Removed,
                path: path.to_string(),
                test: id,
                detail: format!("removed or renamed (it was at line {} on the base)", t.line),
            });
            continue;
        };
        let (hpath, h) = head_all[j];
        out.extend(weakened(t, hpath, h, id));
    }
    // A new test marked `.only` narrows its file as much as an old one.
    for (j, (hpath, h)) in head_all.iter().enumerate() {
        if !head_used[j]
            && let Some(o) = h.skips.iter().find(|s| s.starts_with(ONLY))
        {
            out.push(only_added(hpath, test_id(hpath, h), o));
        }
    }
    out
}

/// How `tests_in` marks `.only`, `fit` and `fdescribe`.
const ONLY: &str = "only: ";

fn only_added(path: &str, test: String, marker: &str) -> Weakening {
    Weakening {
        kind: TestChange::OnlyAdded,
        path: path.to_string(),
        test,
        detail: format!(
            "`{}` added: the other tests of its file no longer run",
            marker.strip_prefix(ONLY).unwrap_or(marker)
        ),
    }
}

/// A snapshot file of the base (`__snapshots__/*.snap`) that the attempt
/// changed or removed: what a failing expectation is compared with,
/// rewritten.
pub(crate) fn snapshot_rewritten(path: &str) -> Option<Weakening> {
    (path.contains("__snapshots__/") && path.ends_with(".snap")).then(|| Weakening {
        kind: TestChange::SnapshotRewritten,
        path: path.to_string(),
        test: path.to_string(),
        detail: "a snapshot of the base rewritten: a failing expectation compared with it now passes".into(),
    })
}

/// A check that ran fewer tests than on the base.
pub(crate) fn fewer_run(check: &str, base_ran: Option<u64>, ran: Option<u64>) -> Option<Weakening> {
    let (b, n) = (base_ran?, ran?);
    (n < b).then(|| Weakening {
        kind: TestChange::FewerRun,
        path: check.to_string(),
        test: check.to_string(),
        detail: format!("the check ran {n} test{} where the base ran {b}", plural(n as usize)),
    })
}

/// Whether `path` is a test file by the usual conventions: a `tests/` or
/// `test/` directory, `test_*.py`, `*_test.py`, `*_test.go`,
/// `*.test.{js,ts,...}`, `*.spec.{js,ts,...}`.
pub(crate) fn is_test_path(path: &str) -> bool {
    let mut parts: Vec<&str> = path.split('/').collect();
    let name = parts.pop().unwrap_or("");
    if parts.iter().any(|d| *d == "tests" || *d == "test" || *d == "__tests__") {
        return true;
    }
    if name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py")) {
        return true;
    }
    if name.ends_with("_test.go") {
        return true;
    }
    let js = ["js", "jsx", "ts", "tsx", "mjs", "cjs", "mts", "cts"];
    if let Some((stem, ext)) = name.rsplit_once('.')
        && js.contains(&ext)
        && (stem.ends_with(".test") || stem.ends_with(".spec"))
    {
        return true;
    }
    false
}

/// A `retry.test_paths` glob that does not compile.
#[derive(Debug, thiserror::Error)]
#[error("retry.test_paths: {}{source}", glob.as_ref().map(|g| format!("invalid glob {g:?}: ")).unwrap_or_default())]
pub struct TestPathsError {
    pub glob: Option<String>,
    pub source: globset::Error,
}

/// Which changed paths are test files: `test_paths` globs, or else the
/// conventions of [`is_test_path`] and every Rust file (whose
/// `#[cfg(test)]` modules hold tests).
pub(crate) struct TestPaths {
    globs: Option<globset::GlobSet>,
}

impl TestPaths {
    pub(crate) fn new(globs: &[String]) -> Result<TestPaths, TestPathsError> {
        if globs.is_empty() {
            return Ok(TestPaths { globs: None });
        }
        let mut b = GlobSetBuilder::new();
        for g in globs {
            let glob = GlobBuilder::new(g.trim_start_matches("./"))
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map_err(|source| TestPathsError { glob: Some(g.clone()), source })?;
            b.add(glob);
        }
        Ok(TestPaths { globs: Some(b.build().map_err(|source| TestPathsError { glob: None, source })?) })
    }

    pub(crate) fn matches(&self, path: &str) -> bool {
        match &self.globs {
            Some(set) => set.is_match(path),
            None => is_test_path(path) || path.ends_with(".rs"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(name: &str, qualified: &str, skips: &[&str], assertions: usize) -> FoundTest {
        FoundTest {
            name: name.into(),
            qualified: qualified.into(),
            line: 3,
            skips: skips.iter().map(|s| s.to_string()).collect(),
            assertions,
            inline_snapshots: Vec::new(),
        }
    }

    fn file(path: &str, tests: Vec<FoundTest>) -> FileTests {
        FileTests { path: path.into(), tests }
    }

    #[test]
    fn an_inline_snapshot_of_the_base_rewritten_is_caught_one_filled_in_is_not() {
        let with = |snaps: &[&str]| {
            let mut t = t("totals", "cart > totals", &[], 1);
            t.inline_snapshots = snaps.iter().map(|s| s.to_string()).collect();
            vec![file("cart.test.ts", vec![t])]
        };
        let found = compare(&with(&["(`5`)"]), &with(&["(`4`)"]));
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].kind, TestChange::SnapshotRewritten);
        assert_eq!(found[0].test, "cart.test.ts > cart > totals");
        assert!(compare(&with(&["(`5`)"]), &with(&[])).iter().any(|f| f.kind == TestChange::SnapshotRewritten));
        assert!(compare(&with(&["()"]), &with(&["(`4`)"])).is_empty());
        assert!(compare(&with(&["(`5`)"]), &with(&["(`5`)", "(`6`)"])).is_empty());
    }

    #[test]
    fn removed_skipped_and_de_asserted() {
        let base = [file(
            "tests/test_c.py",
            vec![t("test_a", "test_a", &[], 2), t("test_b", "test_b", &[], 1), t("test_c", "test_c", &[], 1)],
        )];
        let head = [file(
            "tests/test_c.py",
            vec![t("test_a", "test_a", &[], 1), t("test_c", "test_c", &["pytest.mark.skip"], 1)],
        )];
        let found: Vec<(TestChange, String)> = compare(&base, &head).into_iter().map(|f| (f.kind, f.test)).collect();
        assert_eq!(
            found,
            vec![
                (TestChange::FewerAssertions, "tests/test_c.py::test_a".to_string()),
                (TestChange::Removed, "tests/test_c.py::test_b".to_string()),
                (TestChange::SkipAdded, "tests/test_c.py::test_c".to_string()),
            ]
        );
    }

    #[test]
    fn moved_tests_are_not_removed() {
        let base = [
            file("tests/test_a.py", vec![t("test_x", "TestA.test_x", &[], 1)]),
            file("src/lib.rs", vec![t("adds", "tests::adds", &[], 1)]),
            file("tests/test_b.py", vec![]),
        ];
        let head = [
            file("tests/test_a.py", vec![]),
            file("tests/test_b.py", vec![t("test_x", "TestA.test_x", &[], 1)]),
            file("tests/calc.rs", vec![t("adds", "adds", &[], 1)]),
        ];
        assert_eq!(compare(&base, &head), vec![]);
        // Adding tests, or assertions, is never a finding.
        let more = [file("tests/test_a.py", vec![t("test_x", "TestA.test_x", &[], 3), t("test_y", "test_y", &[], 1)])];
        assert_eq!(compare(&base[..1], &more), vec![]);
    }

    #[test]
    fn ids_fewer_run_and_paths() {
        assert_eq!(test_id("tests/t.py", &t("test_b", "TestA.test_b", &[], 0)), "tests/t.py::TestA::test_b");
        assert_eq!(test_id("src/lib.rs", &t("adds", "tests::adds", &[], 0)), "src/lib.rs::tests::adds");
        assert_eq!(fewer_run("pytest", Some(5), Some(4)).map(|f| f.kind), Some(TestChange::FewerRun));
        assert_eq!(fewer_run("pytest", Some(5), Some(5)), None);
        assert_eq!(fewer_run("pytest", None, Some(1)), None);
        for yes in ["tests/x.py", "pkg/test_x.py", "pkg/x_test.py", "a/b_test.go", "src/a.test.ts", "web/a.spec.jsx"] {
            assert!(is_test_path(yes), "{yes}");
        }
        for no in ["src/calc.py", "src/testing.py", "contest.py", "src/a.ts", "src/lib.rs"] {
            assert!(!is_test_path(no), "{no}");
        }
    }
}
