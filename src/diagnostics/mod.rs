//! Diagnostics read from the output of lint, compiler and test tools
//! (docs/commands.md, `enrich`): one file per input format, plus `detect` for
//! auto-detection. Pure: text in, diagnostics out.
//!
//! Every parser is total: any input, however garbled, yields a (possibly
//! empty) list, never a panic.

mod biome;
mod cargo_json;
mod cargo_test;
pub mod detect;
mod eslint;
mod flake8;
mod generic;
mod mypy;
mod oxlint;
mod pylint;
mod pyright;
mod pytest;
mod python_traceback;
mod ruff;
mod rustc;
mod tsc;

use serde::Serialize;

/// One finding of a tool: a location (when the tool gave one) and a message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// The tool or format that printed it: `ruff`, `mypy`, `pytest`, ...
    pub tool: &'static str,
    /// The path as the tool printed it.
    pub path: Option<String>,
    /// 1-based.
    pub line: Option<usize>,
    /// 1-based, when the tool printed one.
    pub column: Option<usize>,
    pub code: Option<String>,
    pub severity: Severity,
    pub message: String,
    /// Frames of one traceback share a number: enrichment makes the last
    /// frame inside the tree the `error` and the others `note`s.
    #[serde(skip)]
    pub traceback: Option<usize>,
    /// A qualified name to look up when the tool named a test but gave no
    /// line (pytest's short summary): `TestDiscount.test_half`.
    #[serde(skip)]
    pub symbol: Option<String>,
}

impl Diagnostic {
    fn new(tool: &'static str, severity: Severity, message: impl Into<String>) -> Self {
        Diagnostic {
            tool,
            path: None,
            line: None,
            column: None,
            code: None,
            severity,
            message: message.into(),
            traceback: None,
            symbol: None,
        }
    }

    fn at(mut self, path: &str, line: Option<usize>, column: Option<usize>) -> Self {
        self.path = Some(path.to_string());
        self.line = line.filter(|&l| l > 0);
        self.column = column.filter(|&c| c > 0);
        self
    }

    fn code(mut self, code: Option<&str>) -> Self {
        self.code = code.map(str::to_string).filter(|c| !c.is_empty());
        self
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
    Info,
    Note,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
            Severity::Note => "note",
        }
    }

    /// `error`, `warning`, `note`, `info`/`information`/`help`, as tools print them.
    fn parse(word: &str) -> Severity {
        match word.to_ascii_lowercase().as_str() {
            "error" | "fatal" | "fatal error" | "failure" => Severity::Error,
            "warning" | "warn" => Severity::Warning,
            "note" => Severity::Note,
            _ => Severity::Info,
        }
    }
}

/// The input formats of `enrich` (docs/commands.md), by their
/// `--input-format` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    Ruff,
    Flake8,
    Pylint,
    Mypy,
    Pyright,
    Pytest,
    PythonTraceback,
    Rustc,
    CargoJson,
    CargoTest,
    Tsc,
    Eslint,
    Biome,
    Oxlint,
    Generic,
}

impl Format {
    pub const ALL: [Format; 15] = [
        Format::Ruff,
        Format::Flake8,
        Format::Pylint,
        Format::Mypy,
        Format::Pyright,
        Format::Pytest,
        Format::PythonTraceback,
        Format::Rustc,
        Format::CargoJson,
        Format::CargoTest,
        Format::Tsc,
        Format::Eslint,
        Format::Biome,
        Format::Oxlint,
        Format::Generic,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Format::Ruff => "ruff",
            Format::Flake8 => "flake8",
            Format::Pylint => "pylint",
            Format::Mypy => "mypy",
            Format::Pyright => "pyright",
            Format::Pytest => "pytest",
            Format::PythonTraceback => "python-traceback",
            Format::Rustc => "rustc",
            Format::CargoJson => "cargo-json",
            Format::CargoTest => "cargo-test",
            Format::Tsc => "tsc",
            Format::Eslint => "eslint",
            Format::Biome => "biome",
            Format::Oxlint => "oxlint",
            Format::Generic => "generic",
        }
    }

    pub fn from_name(name: &str) -> Option<Format> {
        Format::ALL.into_iter().find(|f| f.name() == name)
    }
}

/// Every diagnostic in `text`, read as `format`.
pub fn parse(format: Format, text: &str) -> Vec<Diagnostic> {
    match format {
        Format::Ruff => ruff::parse(text),
        Format::Flake8 => flake8::parse(text),
        Format::Pylint => pylint::parse(text),
        Format::Mypy => mypy::parse(text),
        Format::Pyright => pyright::parse(text),
        Format::Pytest => pytest::parse(text),
        Format::PythonTraceback => python_traceback::parse(text),
        Format::Rustc => rustc::parse(text),
        Format::CargoJson => cargo_json::parse(text),
        Format::CargoTest => cargo_test::parse(text),
        Format::Tsc => tsc::parse(text),
        Format::Eslint => eslint::parse(text),
        Format::Biome => biome::parse(text),
        Format::Oxlint => oxlint::parse(text),
        Format::Generic => generic::parse(text),
    }
}

/// The formats tried on every output, most specific first; the detected
/// format goes before all of them.
const PRECEDENCE: [Format; 15] = [
    Format::CargoJson,
    Format::Pytest,
    Format::CargoTest,
    Format::Tsc,
    Format::Eslint,
    Format::Biome,
    Format::Oxlint,
    Format::Rustc,
    Format::Ruff,
    Format::Mypy,
    Format::Pyright,
    Format::Pylint,
    Format::Flake8,
    Format::PythonTraceback,
    Format::Generic,
];

/// Every diagnostic in `text` whatever tools printed it: each line is read
/// by every format, so one output may hold several tools (`ruff check . ;
/// pytest`), compiler warnings before test panics, and several tracebacks.
///
/// Auto-detection only breaks ties, when two formats read the same line:
/// the detected format's reading wins, then the more specific format's.
/// Two readings are the same line when they are both traces (pytest,
/// tracebacks, panics) at one location, both lint or compiler findings at
/// one location with one code, or a `generic` one (or one without a code)
/// at any location already found. Diagnostics without a location come from the detected format
/// alone. Traceback groups stay apart per format.
pub fn parse_auto(text: &str) -> Vec<Diagnostic> {
    use std::collections::HashSet;
    use std::hash::{Hash, Hasher};
    // Locations as hashes: no path is copied, however many lines are read.
    let hash = |path: &str, line: usize, code: Option<&str>| {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (path, line, code).hash(&mut h);
        h.finish()
    };
    let first = detect::detect(text);
    let order = std::iter::once(first).chain(PRECEDENCE.into_iter().filter(|f| *f != first));
    let mut out: Vec<Diagnostic> = Vec::new();
    let (mut at, mut trace_at, mut lint_at) = (HashSet::new(), HashSet::new(), HashSet::new());
    for (i, format) in order.enumerate() {
        let trace = matches!(format, Format::Pytest | Format::PythonTraceback | Format::CargoTest);
        let mut keys: Vec<(u64, u64)> = Vec::new();
        for mut d in parse(format, text) {
            let Some(path) = d.path.as_deref() else {
                if i == 0 {
                    out.push(d);
                }
                continue;
            };
            let line = d.line.unwrap_or(0);
            let (loc, coded) = (hash(path, line, None), hash(path, line, d.code.as_deref()));
            if i > 0 {
                let dup = match format {
                    // Without a code, a reading tells nothing a trace did not.
                    _ if format == Format::Generic || (!trace && d.code.is_none()) => at.contains(&loc),
                    _ if trace => trace_at.contains(&loc),
                    _ => lint_at.contains(&coded),
                };
                // A path with spaces or quotes is a sentence another format's
                // loose reading took for a path (`thread 'x' panicked at a.rs`).
                if dup || path.contains(char::is_whitespace) || path.contains(['\'', '"']) {
                    continue;
                }
            }
            keys.push((loc, coded));
            d.traceback = d.traceback.map(|g| g + i * 1_000_000);
            out.push(d);
        }
        for (loc, coded) in keys {
            at.insert(loc);
            if trace {
                trace_at.insert(loc);
            } else {
                lint_at.insert(coded);
            }
        }
    }
    out
}

/// `parse` with the format given, else [`parse_auto`].
/// Terminal escapes (colours a tool forced into a pipe) are taken out
/// first.
pub fn parse_as(format: Option<Format>, text: &str) -> Vec<Diagnostic> {
    let text = crate::text::plain(text);
    match format {
        Some(f) => parse(f, &text),
        None => parse_auto(&text),
    }
}

/// Lines without their `\r`, so that CRLF output reads like LF output.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().map(|l| l.strip_suffix('\r').unwrap_or(l))
}

/// A `path:line[:col]` location at the start of `s`, and the rest after the
/// colon that ends it. The path may hold colons (`C:\x.py`, `a:b.py`): the
/// location ends at the first `:digits` followed by `:`, whitespace or the end.
fn location_prefix(s: &str) -> Option<(&str, usize, Option<usize>, &str)> {
    let bytes = s.as_bytes();
    let mut search = 0;
    while let Some(off) = s[search..].find(':') {
        let colon = search + off;
        let digits = bytes[colon + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
        let after = colon + 1 + digits;
        let ends_ok = after == bytes.len() || bytes[after] == b':' || bytes[after].is_ascii_whitespace();
        if digits > 0 && ends_ok && colon > 0 {
            let path = &s[..colon];
            if path.starts_with(char::is_whitespace) {
                return None;
            }
            let line = s[colon + 1..after].parse().ok()?;
            let mut rest = &s[after..];
            let mut column = None;
            if let Some(r) = rest.strip_prefix(':') {
                let cd = r.bytes().take_while(|b| b.is_ascii_digit()).count();
                if cd > 0 && (cd == r.len() || r.as_bytes()[cd] == b':' || r.as_bytes()[cd].is_ascii_whitespace()) {
                    column = r[..cd].parse().ok();
                    rest = &r[cd..];
                    rest = rest.strip_prefix(':').unwrap_or(rest);
                } else {
                    rest = r;
                }
            }
            return Some((path, line, column, rest.trim_start()));
        }
        search = colon + 1;
    }
    None
}

/// `[code]` at the end of a message (mypy, gcc): the message without it,
/// and the code.
fn trailing_bracket_code(message: &str) -> (&str, Option<&str>) {
    let m = message.trim_end();
    if let Some(body) = m.strip_suffix(']')
        && let Some(open) = body.rfind('[')
    {
        let code = &body[open + 1..];
        if !code.is_empty() && !code.contains(char::is_whitespace) {
            return (body[..open].trim_end(), Some(code));
        }
    }
    (m, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn location_prefixes() {
        assert_eq!(location_prefix("a.py:3:5: E1 x"), Some(("a.py", 3, Some(5), "E1 x")));
        assert_eq!(location_prefix("a.py:3: error: x"), Some(("a.py", 3, None, "error: x")));
        assert_eq!(location_prefix(r"C:\src\a.py:3:1: x"), Some((r"C:\src\a.py", 3, Some(1), "x")));
        assert_eq!(location_prefix("weird:name.py:10:2: m"), Some(("weird:name.py", 10, Some(2), "m")));
        assert_eq!(location_prefix("a.py:12"), Some(("a.py", 12, None, "")));
        assert_eq!(location_prefix("no location here"), None);
        assert_eq!(location_prefix("  indented.py:3: x"), None);
        assert_eq!(location_prefix("time: 3s"), None);
    }

    #[test]
    fn mixed_output_reads_every_tool_once() {
        let text = "a.py:3:1: F401 [*] `os` imported but unused\n\
                    Found 1 error.\n\
                    Traceback (most recent call last):\n  File \"a.py\", line 9, in f\n    g()\nKeyError: 'x'\n\
                    Traceback (most recent call last):\n  File \"b.py\", line 2, in <module>\n    h()\nValueError: y\n\
                    thread 'main' panicked at src/main.rs:4:5:\nboom\n";
        let got: Vec<(&str, String)> = parse_auto(text)
            .iter()
            .map(|d| (d.tool, format!("{}:{}", d.path.as_deref().unwrap_or("-"), d.line.unwrap_or(0))))
            .collect();
        let want = [
            ("cargo-test", "src/main.rs:4"),
            ("ruff", "a.py:3"),
            ("python-traceback", "a.py:9"),
            ("python-traceback", "b.py:2"),
        ];
        assert_eq!(got.len(), want.len(), "{got:?}");
        for w in want {
            assert!(got.iter().any(|(t, at)| *t == w.0 && at == w.1), "{w:?} missing from {got:?}");
        }
        // Two tracebacks stay two groups.
        let groups: std::collections::HashSet<_> = parse_auto(text).iter().filter_map(|d| d.traceback).collect();
        assert_eq!(groups.len(), 2);
    }

    #[test]
    fn bracket_codes() {
        assert_eq!(trailing_bracket_code("bad  [return-value]"), ("bad", Some("return-value")));
        assert_eq!(trailing_bracket_code("list[int] is fine"), ("list[int] is fine", None));
        assert_eq!(trailing_bracket_code("x [a b]"), ("x [a b]", None));
    }

    #[test]
    fn format_names_round_trip_and_match_the_config() {
        for f in Format::ALL {
            assert_eq!(Format::from_name(f.name()), Some(f));
            assert!(crate::config::INPUT_FORMATS.contains(&f.name()));
        }
        assert_eq!(crate::config::INPUT_FORMATS.len(), Format::ALL.len() + 1);
    }
}
