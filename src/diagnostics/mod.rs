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

mod diagnostic;
mod format;
mod lines;

pub use diagnostic::{Diagnostic, Severity};
pub use format::Format;
use lines::{lines, location_prefix, trailing_bracket_code};

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
