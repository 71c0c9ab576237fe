//! Diagnostics read from the output of lint, compiler and test tools
//! (spec section 7): one file per input format, plus `detect` for
//! auto-detection. Pure: text in, diagnostics out.
//!
//! Every parser is total: any input, however garbled, yields a (possibly
//! empty) list, never a panic.

mod cargo_json;
mod cargo_test;
pub mod detect;
mod flake8;
mod generic;
mod mypy;
mod pylint;
mod pyright;
mod pytest;
mod python_traceback;
mod ruff;
mod rustc;

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

/// The input formats of section 7, by their `--input-format` names.
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
    Generic,
}

impl Format {
    pub const ALL: [Format; 11] = [
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
        Format::Generic => generic::parse(text),
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
