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
    /// The first line of what decorates it: decorators (Python), outer
    /// attributes and `///` doc comments, visibility (Rust); `start_line`
    /// when nothing does. A change there is a change to this scope. Not
    /// recorded (0 when read back: see [`ScopeSpan::head`]).
    #[serde(skip)]
    pub head_line: usize,
}

/// A scope's names and lines, borrowed (from a [`ScopeSpan`], or from the
/// bytes of a cache entry without a copy of each name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScopeRef<'a> {
    pub kind: &'a str,
    pub name: &'a str,
    pub qualified_name: &'a str,
    pub start_line: usize,
    pub end_line: usize,
    /// See [`ScopeSpan::head_line`].
    pub head_line: usize,
}

impl ScopeSpan {
    pub fn as_ref(&self) -> ScopeRef<'_> {
        ScopeRef {
            kind: &self.kind,
            name: &self.name,
            qualified_name: &self.qualified_name,
            start_line: self.start_line,
            end_line: self.end_line,
            head_line: self.head(),
        }
    }

    /// [`ScopeSpan::head_line`], or `start_line` when unknown.
    pub fn head(&self) -> usize {
        if (1..=self.start_line).contains(&self.head_line) { self.head_line } else { self.start_line }
    }
}

/// The first and last line of a scope, for [`innermost`].
pub(crate) trait Lines {
    fn lines(&self) -> (usize, usize);
}

impl Lines for ScopeSpan {
    fn lines(&self) -> (usize, usize) {
        (self.start_line, self.end_line)
    }
}

impl Lines for ScopeRef<'_> {
    fn lines(&self) -> (usize, usize) {
        (self.start_line, self.end_line)
    }
}

/// The innermost scope that holds `line`, from spans sorted by start line.
pub(crate) fn innermost<S: Lines>(spans: &[S], line: usize) -> Option<&S> {
    spans
        .iter()
        .filter(|s| {
            let (start, end) = s.lines();
            start <= line && line <= end
        })
        .min_by_key(|s| {
            let (start, end) = s.lines();
            (end - start, std::cmp::Reverse(start))
        })
}

/// One test function as found in a file (by `syntax::tests_in`, compared
/// by `integrity`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct FoundTest {
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
    /// jest's and vitest's inline snapshots in its body, as written
    /// (`toMatchInlineSnapshot(`...`)`'s argument), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub inline_snapshots: Vec<String>,
}
