//! What is found in a source file by its syntax: the scopes (functions,
//! classes, impls) that hold its lines, and its test functions.

use serde::{Deserialize, Serialize};

/// A function, class or other scope of a source file (docs/commands.md, `enrich`).
/// Lines are 1-based; `start_line` is the line of the defining keyword.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScopeSpan {
    /// `function`, `class` (Python); `function`, `impl`, `trait`, `mod`,
    /// `struct`, `enum` (Rust).
    pub kind: String,
    pub name: String,
    /// The enclosing scopes' names and this one, joined by `.` or `::`.
    pub qualified_name: String,
    pub start_line: usize,
    pub end_line: usize,
    /// The header, up to the body, on one line.
    pub signature: String,
}

/// The innermost scope that holds `line`, from spans sorted by start line.
pub fn innermost(spans: &[ScopeSpan], line: usize) -> Option<&ScopeSpan> {
    spans
        .iter()
        .filter(|s| s.start_line <= line && line <= s.end_line)
        .min_by_key(|s| (s.end_line - s.start_line, std::cmp::Reverse(s.start_line)))
}

/// One test function as found in a file (by `syntax::tests_in`, compared
/// by `integrity`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FoundTest {
    /// The function's own name.
    pub name: String,
    /// With its classes or modules: `TestCalc.test_add`, `tests::adds`.
    pub qualified: String,
    /// 1-based line of its definition.
    pub line: usize,
    /// The skip markers on it, as written (`pytest.mark.skip`, `#[ignore]`).
    pub skips: Vec<String>,
    /// Assertions in its body.
    pub assertions: usize,
}
