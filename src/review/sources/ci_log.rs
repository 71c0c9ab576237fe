//! A CI log made readable as a local check's output, and what a rejection
//! from it says. Pure: bytes and a judged check in, lines and sentences
//! out.
//!
//! What CI adds around a runner's output is taken off, line by line, so
//! that the runner's own lines parse as they do locally:
//!
//! - byte-order marks (a downloaded log, and each step's log in `gh run
//!   view --log`, starts with one), and `\r\n` line ends;
//! - `gh run view --log`'s `JOB<TAB>STEP<TAB>` before each line;
//! - GitHub Actions' timestamp at each line's start
//!   (`2024-05-01T12:00:00.1234567Z `);
//! - ANSI colours and cursor codes, and what a carriage return inside a
//!   line overwrites (GitLab's `section_start:…\r` markers);
//! - GitHub Actions' workflow commands: `##[group]`, `##[endgroup]`,
//!   `##[command]`, `##[debug]` and `##[section]` lines are dropped;
//!   `##[error]`, `##[warning]` and `##[notice]` keep their text; and
//!   `##[error]Process completed with exit code N.` gives the step's exit
//!   code.
//!
//! Paths of the CI machine's checkout (pytest's `rootdir:`, GitHub's
//! `/home/runner/work/REPO/REPO`) are made relative, as a local check's
//! worktree paths are.

use crate::model::{CheckResult, ErrorItem};

/// A line is cut at this many bytes (a minified bundle on one line).
pub(crate) const MAX_LINE: usize = 64 * 1024;

/// What one line of a CI log becomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CiLine {
    /// The runner's line, without what CI added.
    Keep(String),
    /// A line CI alone wrote (a group marker).
    Drop,
    /// `##[error]Process completed with exit code N.`
    ExitCode(i32),
}

/// One line of a CI log (without its `\n`), cleaned.
/// A byte-order mark opens each step's log, which `gh run view --log`
/// prints one after the other: it is taken off wherever a line starts
/// with one.
pub(crate) fn clean_line(raw: &[u8]) -> CiLine {
    let s = String::from_utf8_lossy(raw);
    let s = s.strip_suffix('\r').unwrap_or(&s);
    let s = strip_gh_run_prefix(without_bom(s));
    let s = strip_timestamp(without_bom(s));
    let s = strip_ansi(after_carriage_return(s));
    workflow_command(&s)
}

fn without_bom(s: &str) -> &str {
    s.strip_prefix('\u{feff}').unwrap_or(s)
}

/// `JOB<TAB>STEP<TAB>` of `gh run view --log`, when a timestamp follows.
fn strip_gh_run_prefix(s: &str) -> &str {
    let mut parts = s.splitn(3, '\t');
    match (parts.next(), parts.next(), parts.next()) {
        (Some(_), Some(_), Some(rest)) if timestamp_len(without_bom(rest)).is_some() => rest,
        _ => s,
    }
}

/// The line without a leading `YYYY-MM-DDTHH:MM:SS[.fraction]Z` and the
/// space after it.
fn strip_timestamp(s: &str) -> &str {
    match timestamp_len(s) {
        Some(n) => {
            let rest = &s[n..];
            rest.strip_prefix(' ').unwrap_or(rest)
        }
        None => s,
    }
}

/// The length of an RFC 3339 UTC timestamp at the start of `s`, followed
/// by a space or the end.
fn timestamp_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| b.get(r.clone()).is_some_and(|d| d.iter().all(u8::is_ascii_digit));
    let shape = digits(0..4)
        && b.get(4) == Some(&b'-')
        && digits(5..7)
        && b.get(7) == Some(&b'-')
        && digits(8..10)
        && b.get(10) == Some(&b'T')
        && digits(11..13)
        && b.get(13) == Some(&b':')
        && digits(14..16)
        && b.get(16) == Some(&b':')
        && digits(17..19);
    if !shape {
        return None;
    }
    let mut n = 19;
    if b.get(n) == Some(&b'.') {
        n += 1;
        let start = n;
        while b.get(n).is_some_and(u8::is_ascii_digit) {
            n += 1;
        }
        if n == start {
            return None;
        }
    }
    if b.get(n) != Some(&b'Z') {
        return None;
    }
    n += 1;
    matches!(b.get(n), None | Some(b' ')).then_some(n)
}

/// What a terminal shows of a line with carriage returns in it: the text
/// after the last one.
fn after_carriage_return(s: &str) -> &str {
    s.rsplit('\r').next().unwrap_or(s)
}

/// `s` without ANSI escape sequences (CSI `ESC [ … final`, OSC `ESC ] …
/// BEL`, and two-byte `ESC x`).
fn strip_ansi(s: &str) -> String {
    if !s.contains('\u{1b}') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                for c in chars.by_ref() {
                    if ('\u{40}'..='\u{7e}').contains(&c) {
                        break;
                    }
                }
            }
            Some(']') => {
                while let Some(c) = chars.next() {
                    if c == '\u{7}' {
                        break;
                    }
                    if c == '\u{1b}' && chars.peek() == Some(&'\\') {
                        chars.next();
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// A GitHub Actions workflow command at the line's start, as the log
/// shows it (`##[name]text`).
fn workflow_command(s: &str) -> CiLine {
    let Some(rest) = s.strip_prefix("##[") else { return CiLine::Keep(s.to_string()) };
    let Some((name, text)) = rest.split_once(']') else { return CiLine::Keep(s.to_string()) };
    match name {
        "group" | "endgroup" | "command" | "debug" | "section" => CiLine::Drop,
        "error" => match exit_code(text) {
            Some(code) => CiLine::ExitCode(code),
            None => CiLine::Keep(text.to_string()),
        },
        "warning" | "notice" => CiLine::Keep(text.to_string()),
        _ => CiLine::Keep(s.to_string()),
    }
}

/// `Process completed with exit code N.`
fn exit_code(text: &str) -> Option<i32> {
    text.trim().strip_prefix("Process completed with exit code ")?.trim_end_matches('.').parse().ok()
}

/// Cleans a CI log fed in pieces, line by line, in bounded memory: a line
/// is held until its end, and cut at [`MAX_LINE`] bytes.
#[derive(Debug, Default)]
pub(crate) struct Cleaner {
    line: Vec<u8>,
    cut: bool,
    /// The last exit code GitHub Actions reported.
    pub exit_code: Option<i32>,
}

impl Cleaner {
    /// Cleans `bytes`; each kept line goes to `out`, with its `\n`.
    pub(crate) fn feed(&mut self, mut bytes: &[u8], out: &mut dyn FnMut(&[u8])) {
        while !bytes.is_empty() {
            match memchr::memchr(b'\n', bytes) {
                Some(i) => {
                    self.hold(&bytes[..i]);
                    self.end_line(out);
                    bytes = &bytes[i + 1..];
                }
                None => {
                    self.hold(bytes);
                    bytes = &[];
                }
            }
        }
    }

    /// The last line, when the log does not end with `\n`.
    pub(crate) fn finish(&mut self, out: &mut dyn FnMut(&[u8])) {
        if !self.line.is_empty() || self.cut {
            self.end_line(out);
        }
    }

    fn hold(&mut self, bytes: &[u8]) {
        let room = MAX_LINE.saturating_sub(self.line.len());
        self.line.extend_from_slice(&bytes[..bytes.len().min(room)]);
        self.cut |= bytes.len() > room;
    }

    fn end_line(&mut self, out: &mut dyn FnMut(&[u8])) {
        match clean_line(&self.line) {
            CiLine::Keep(mut s) => {
                if self.cut {
                    s.push_str(" [line cut]");
                }
                s.push('\n');
                out(s.as_bytes());
            }
            CiLine::Drop => {}
            CiLine::ExitCode(code) => self.exit_code = Some(code),
        }
        self.line.clear();
        self.cut = false;
    }
}

/// The CI machine's checkout directories the log names: pytest's
/// `rootdir:` and GitHub Actions' workspaces (`/home/runner/work/R/R`,
/// `/__w/R/R` in a container), longest first.
pub(crate) fn ci_roots(text: &str) -> Vec<String> {
    let mut roots: Vec<String> = Vec::new();
    for line in text.lines() {
        if let Some(dir) = line.strip_prefix("rootdir: ") {
            // `rootdir: /x, configfile: …` on older pytest versions.
            let dir = dir.split(", ").next().unwrap_or(dir).trim_end_matches('/');
            if dir.starts_with('/') && dir.len() > 1 {
                roots.push(dir.to_string());
            }
        }
        for prefix in ["/home/runner/work/", "/__w/"] {
            let mut from = 0;
            while let Some(i) = line[from..].find(prefix) {
                let start = from + i;
                let rest = &line[start + prefix.len()..];
                let mut parts = rest.split('/');
                if let (Some(a), Some(b)) = (parts.next(), parts.next()) {
                    let b = b.split(|c: char| c.is_whitespace() || ":\"',;)]".contains(c)).next().unwrap_or(b);
                    if !a.is_empty() && !b.is_empty() && !a.contains(char::is_whitespace) {
                        roots.push(format!("{prefix}{a}/{b}"));
                    }
                }
                from = start + prefix.len();
            }
        }
    }
    roots.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
    roots.dedup();
    roots
}

/// `text` with each of `roots` made relative: `ROOT/x` is `x`, `ROOT` alone
/// is `.`.
pub(crate) fn relative_to(text: &str, roots: &[String]) -> String {
    let mut out = text.to_string();
    for r in roots {
        out = out.replace(&format!("{r}/"), "").replace(r.as_str(), ".");
    }
    out
}

/// The required change of a check that failed in CI: the run's own
/// sentence for the failed check (`run`), with where it failed and, for
/// tests, why the first one did.
pub(crate) fn required_change(run: &str, c: &CheckResult) -> String {
    let sentence = run.trim_end().trim_end_matches('.');
    let tests: Vec<&crate::model::Failure> = c.failures.iter().filter(|f| f.test).collect();
    let clause = match tests.as_slice() {
        [] => format!("`{}` fails in CI", c.name),
        [_] => "it fails in CI".to_string(),
        _ => "they fail in CI".to_string(),
    };
    let why = tests.first().and_then(|f| reason(&f.label, &f.key, &c.errors)).map(|r| format!(" ({r})"));
    let text = format!("{sentence}; {clause}{}.", why.unwrap_or_default());
    crate::text::clip(&text, crate::context::required::MAX_BYTES, " [...]").into_owned()
}

/// Why a failing test failed, in a few words: the reason its summary line
/// gives (`tests/t.py::test_a - KeyError: 'x'`), unless the runner cut it
/// (`assert ...`); else the error the log gives in the test's file
/// (`AssertionError: assert -180 == 18`).
fn reason(label: &str, key: &str, errors: &[ErrorItem]) -> Option<String> {
    let from_label =
        label.split_once(" - ").map(|(_, r)| r.trim().to_string()).filter(|r| !r.is_empty() && !r.ends_with("..."));
    let file = key.split("::").next().unwrap_or(key);
    let from_errors = || {
        let e = errors.iter().find(|e| !e.message.is_empty() && e.path == file)?;
        let test = key.rsplit("::").next().unwrap_or(key);
        let m = e.message.strip_suffix(&format!(" (test {test})")).unwrap_or(&e.message);
        Some(m.to_string())
    };
    let r = from_label.or_else(from_errors)?;
    Some(crate::text::clip(r.lines().next().unwrap_or(&r), 160, "…").into_owned())
}

/// The lines a rejection from a CI log shows: the digest of the output,
/// then each error with its place, enclosing scope and snippet, as a
/// failed check's are shown in the next prompt.
pub(crate) fn output_lines(c: &CheckResult) -> Vec<String> {
    let mut out = c.digest.clone();
    for e in &c.errors {
        let at = match e.line {
            Some(l) => format!("{}:{l}", e.path),
            None => e.path.clone(),
        };
        let code = e.code.as_ref().map(|c| format!(" {c}")).unwrap_or_default();
        let scope = e.scope.as_ref().map(|s| format!(" (in `{s}`)")).unwrap_or_default();
        out.push(format!("- `{at}` {}{code}: {}{scope}", e.tool, e.message));
        if let Some(snippet) = &e.snippet {
            out.push("```".into());
            out.extend(snippet.lines().map(str::to_string));
            out.push("```".into());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clean_line_takes_off_what_ci_adds() {
        let cases: &[(&[u8], CiLine)] = &[
            (b"plain", CiLine::Keep("plain".into())),
            (b"2024-05-01T12:00:00.1234567Z collected 4 items", CiLine::Keep("collected 4 items".into())),
            (b"2024-05-01T12:00:00Z no fraction", CiLine::Keep("no fraction".into())),
            (b"2024-05-01T12:00:00.1234567Z", CiLine::Keep(String::new())),
            (b"2024-05-01T12:00:00.1234567Z ", CiLine::Keep(String::new())),
            (b"2024-05-01T12:00:00.1234567Z   indented", CiLine::Keep("  indented".into())),
            // Not a timestamp: kept whole.
            (b"2024-05-01 12:00:00 INFO x", CiLine::Keep("2024-05-01 12:00:00 INFO x".into())),
            (b"2024-05-01T12:00:00.Z x", CiLine::Keep("2024-05-01T12:00:00.Z x".into())),
            (b"2024-05-01T12:00:00.12Zx", CiLine::Keep("2024-05-01T12:00:00.12Zx".into())),
            ("\u{feff}2024-05-01T12:00:00.1Z first".as_bytes(), CiLine::Keep("first".into())),
            (b"line\r", CiLine::Keep("line".into())),
            (b"\x1b[1m\x1b[31mE       assert -180 == 18\x1b[0m", CiLine::Keep("E       assert -180 == 18".into())),
            (b"\x1b]8;;http://x\x07link\x1b]8;;\x07", CiLine::Keep("link".into())),
            (b"progress 10%\rprogress 100%", CiLine::Keep("progress 100%".into())),
            (
                b"\x1b[0Ksection_start:1714564800:step_script\r\x1b[0K\x1b[36;1mExecuting step\x1b[0;m",
                CiLine::Keep("Executing step".into()),
            ),
            (b"2024-05-01T12:00:00.1Z ##[group]Run python -m pytest", CiLine::Drop),
            (b"##[endgroup]", CiLine::Drop),
            (b"##[command]/usr/bin/git version", CiLine::Drop),
            (b"##[debug]Evaluating condition", CiLine::Drop),
            (b"2024-05-01T12:00:00.1Z ##[error]Process completed with exit code 1.", CiLine::ExitCode(1)),
            (b"##[error]Process completed with exit code 137.", CiLine::ExitCode(137)),
            (b"##[error]tests/a.py:3: boom", CiLine::Keep("tests/a.py:3: boom".into())),
            (b"##[warning]Node 16 is deprecated", CiLine::Keep("Node 16 is deprecated".into())),
            (b"##[unknown]kept", CiLine::Keep("##[unknown]kept".into())),
            (
                b"build\tRun tests\t2024-05-01T12:00:00.1234567Z FAILED tests/a.py::t",
                CiLine::Keep("FAILED tests/a.py::t".into()),
            ),
            ("build\tRun tests\t\u{feff}2024-05-01T12:00:00.1234567Z ##[group]Run pytest".as_bytes(), CiLine::Drop),
            // Tabs without a timestamp after them are the runner's.
            (b"a\tb\tc", CiLine::Keep("a\tb\tc".into())),
        ];
        for (raw, want) in cases {
            assert_eq!(&clean_line(raw), want, "{:?}", String::from_utf8_lossy(raw));
        }
    }

    fn cleaned(pieces: &[&[u8]]) -> (String, Option<i32>) {
        let mut c = Cleaner::default();
        let mut out = Vec::new();
        for p in pieces {
            c.feed(p, &mut |b| out.extend_from_slice(b));
        }
        c.finish(&mut |b| out.extend_from_slice(b));
        (String::from_utf8(out).expect("utf-8"), c.exit_code)
    }

    #[test]
    fn the_cleaner_joins_lines_split_across_pieces_and_finds_the_exit_code() {
        type Case<'a> = (&'a [&'a [u8]], &'a str, Option<i32>);
        let cases: &[Case] = &[
            (&[b"a\nb\n"], "a\nb\n", None),
            (&[b"2024-05-01T12:00:00.1Z a", b"bc\n2024-05-", b"01T12:00:00.1Z d"], "abc\nd\n", None),
            (&[b"x\n##[error]Process completed with exit code 2.\n"], "x\n", Some(2)),
            (&[b"\n\n"], "\n\n", None),
            (&[b""], "", None),
        ];
        for (pieces, text, code) in cases {
            assert_eq!(cleaned(pieces), (text.to_string(), *code), "{pieces:?}");
        }
    }

    #[test]
    fn a_line_longer_than_the_limit_is_cut_and_says_so() {
        let long = vec![b'x'; MAX_LINE + 10];
        let (text, _) = cleaned(&[&long, b"\nnext\n"]);
        let first = text.lines().next().unwrap_or("");
        assert_eq!(first.len(), MAX_LINE + " [line cut]".len());
        assert!(first.ends_with(" [line cut]"));
        assert_eq!(text.lines().nth(1), Some("next"));
    }

    #[test]
    fn ci_roots_are_found_and_made_relative() {
        let cases: &[(&str, &[&str], &str)] = &[
            (
                "rootdir: /builds/acme/shop\n/builds/acme/shop/shop/cart.py:3: x",
                &["/builds/acme/shop"],
                "rootdir: .\nshop/cart.py:3: x",
            ),
            (
                "rootdir: /home/runner/work/shop/shop, configfile: setup.cfg",
                &["/home/runner/work/shop/shop"],
                "rootdir: ., configfile: setup.cfg",
            ),
            (
                "  File \"/home/runner/work/shop/shop/shop/cart.py\", line 19",
                &["/home/runner/work/shop/shop"],
                "  File \"shop/cart.py\", line 19",
            ),
            ("/__w/api/api/src/a.rs:3:1: x", &["/__w/api/api"], "src/a.rs:3:1: x"),
            ("no roots in /usr/lib/python3", &[], "no roots in /usr/lib/python3"),
            ("rootdir: /", &[], "rootdir: /"),
        ];
        for (text, roots, relative) in cases {
            let found = ci_roots(text);
            assert_eq!(found, roots.iter().map(|r| r.to_string()).collect::<Vec<_>>(), "{text}");
            assert_eq!(relative_to(text, &found), *relative, "{text}");
        }
    }

    fn failed_check(name: &str, failures: &[(&str, &str, bool)], errors: &[(&str, &str)]) -> CheckResult {
        let mut c = CheckResult::new(name, crate::model::CheckKind::Test, false);
        c.failures = failures
            .iter()
            .map(|(key, label, test)| crate::model::Failure {
                key: key.to_string(),
                label: label.to_string(),
                test: *test,
                target: false,
            })
            .collect();
        c.errors = errors
            .iter()
            .map(|(path, message)| ErrorItem {
                tool: "pytest".into(),
                path: path.to_string(),
                message: message.to_string(),
                ..Default::default()
            })
            .collect();
        c
    }

    #[test]
    fn the_required_change_is_the_runs_sentence_said_of_ci() {
        let one = "Make the failing test pass: `tests/t.py::test_a`.";
        let cases: &[(&str, CheckResult, &str)] = &[
            (
                one,
                failed_check(
                    "pytest",
                    &[("tests/t.py::test_a", "tests/t.py::test_a - assert ...", true)],
                    &[("tests/t.py", "AssertionError: assert -180 == 18 (test test_a)")],
                ),
                "Make the failing test pass: `tests/t.py::test_a`; it fails in CI (AssertionError: assert -180 == 18).",
            ),
            (
                one,
                failed_check("pytest", &[("tests/t.py::test_a", "tests/t.py::test_a - KeyError: 'x'", true)], &[]),
                "Make the failing test pass: `tests/t.py::test_a`; it fails in CI (KeyError: 'x').",
            ),
            (
                one,
                failed_check("pytest", &[("tests/t.py::test_a", "tests/t.py::test_a - assert ...", true)], &[]),
                "Make the failing test pass: `tests/t.py::test_a`; it fails in CI.",
            ),
            (
                "Make the failing tests pass: `a::x` and `a::y`.",
                failed_check("pytest", &[("a::x", "a::x", true), ("a::y", "a::y", true)], &[]),
                "Make the failing tests pass: `a::x` and `a::y`; they fail in CI.",
            ),
            (
                "Fix the 2 lint errors that `ruff` reports in `a.py`.",
                failed_check("ruff", &[("a.py|F401||x", "a.py:1: F401 x", false)], &[]),
                "Fix the 2 lint errors that `ruff` reports in `a.py`; `ruff` fails in CI.",
            ),
        ];
        for (run, check, want) in cases {
            assert_eq!(required_change(run, check), *want);
        }
    }

    #[test]
    fn output_lines_show_each_error_with_its_scope_and_snippet() {
        let mut c = failed_check("pytest", &[], &[]);
        c.digest = vec!["2 failed, 2 passed".into()];
        c.errors = vec![ErrorItem {
            tool: "pytest".into(),
            path: "shop/cart.py".into(),
            line: Some(19),
            code: None,
            message: "ValueError: invalid literal".into(),
            scope: Some("parse_price".into()),
            snippet: Some("19 | return int(whole)".into()),
        }];
        assert_eq!(
            output_lines(&c),
            [
                "2 failed, 2 passed",
                "- `shop/cart.py:19` pytest: ValueError: invalid literal (in `parse_price`)",
                "```",
                "19 | return int(whole)",
                "```",
            ]
        );
    }
}
