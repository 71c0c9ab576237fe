//! pytest: the failure blocks of `--tb=long|short|line` (frame locations
//! `path:line: ...` and `E   ` lines) and the short summary
//! (`FAILED path::Class::test - message`). A test named only in the summary
//! becomes a diagnostic without a line, to be found by name in its file.

use super::python_traceback::exception_type;
use super::{Diagnostic, Severity, generic::looks_like_path, lines, location_prefix};

const TOOL: &str = "pytest";

#[derive(Default)]
struct Block {
    test: Option<String>,
    frames: Vec<(String, usize, String)>, // path, line, text after the location
    error: Option<String>,                // the first `E` line
}

pub(super) fn parse(text: &str) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut seen_tests: Vec<String> = Vec::new();
    let mut block = Block::default();
    let mut group = 0;
    let mut in_failures = false;
    let mut in_captured = false;
    for line in lines(text) {
        if let Some(title) = rule_title(line, '=') {
            flush(&mut out, &mut block, &mut group, &mut seen_tests);
            in_failures = title == "FAILURES" || title == "ERRORS";
            in_captured = false;
            continue;
        }
        if let Some(kind) =
            line.strip_prefix("FAILED ").map(|r| ("FAILED", r)).or(line.strip_prefix("ERROR ").map(|r| ("ERROR", r)))
        {
            summary(&mut out, &seen_tests, kind.0, kind.1);
            continue;
        }
        if !in_failures {
            continue;
        }
        if let Some(title) = rule_title(line, '_') {
            flush(&mut out, &mut block, &mut group, &mut seen_tests);
            block.test = Some(title.to_string());
            in_captured = false;
            continue;
        }
        if rule_title(line, '-').is_some_and(|t| t.starts_with("Captured ")) {
            in_captured = true;
            continue;
        }
        if in_captured {
            continue;
        }
        if let Some(e) = line.strip_prefix("E ") {
            if block.error.is_none() {
                block.error = Some(e.trim().to_string());
            }
            continue;
        }
        if let Some((path, l, _, rest)) = location_prefix(line)
            && looks_like_path(path)
        {
            block.frames.push((path.to_string(), l, rest.trim().to_string()));
            if block.test.is_none() {
                // --tb=line: one line per failure, no block headers.
                flush(&mut out, &mut block, &mut group, &mut seen_tests);
            }
        }
    }
    flush(&mut out, &mut block, &mut group, &mut seen_tests);
    out
}

/// `=== title ===`, `___ title ___`, `--- title ---`: the title.
fn rule_title(line: &str, c: char) -> Option<&str> {
    let inner = line.strip_prefix([c, c, c])?.trim_start_matches(c).strip_suffix(c)?.trim_end_matches(c);
    let title = inner.trim();
    (inner.starts_with(' ') && inner.ends_with(' ') && !title.is_empty()).then_some(title)
}

fn flush(out: &mut Vec<Diagnostic>, block: &mut Block, group: &mut usize, seen: &mut Vec<String>) {
    let b = std::mem::take(block);
    if b.frames.is_empty() {
        return;
    }
    *group += 1;
    let last = b.frames.last().map(|f| f.2.clone()).unwrap_or_default();
    // The message: the first `E` line, or what the last frame says after its
    // location (`KeyError`, or with --tb=line `KeyError: 'x'`).
    let message = b.error.clone().unwrap_or_else(|| last.clone());
    let code = exception_type(&last).or_else(|| exception_type(&message)).filter(|c| *c != "in").map(str::to_string);
    let message = match &b.test {
        Some(t) => format!("{message} (test {t})"),
        None => message,
    };
    let n = b.frames.len();
    for (i, (path, line, _)) in b.frames.into_iter().enumerate() {
        let severity = if i + 1 == n { Severity::Error } else { Severity::Note };
        let mut d = Diagnostic::new(TOOL, severity, message.clone()).at(&path, Some(line), None);
        d.code = code.clone();
        d.traceback = Some(*group);
        out.push(d);
    }
    if let Some(t) = b.test {
        seen.push(t);
    }
}

/// `FAILED tests/x.py::A::test_b[1] - message`: a diagnostic for a test no
/// failure block described.
fn summary(out: &mut Vec<Diagnostic>, seen: &[String], kind: &str, rest: &str) {
    let (id, message) = match rest.split_once(" - ") {
        Some((id, m)) => (id.trim(), m.trim()),
        None => (rest.trim(), ""),
    };
    let (path, name) = match id.split_once("::") {
        Some((p, n)) => (p, Some(n)),
        None => (id, None),
    };
    if !looks_like_path(path) {
        return;
    }
    let dotted = name.map(|n| n.split('[').next().unwrap_or(n).replace("::", "."));
    if dotted.as_ref().is_some_and(|d| seen.iter().any(|s| s.split('[').next() == Some(d.as_str()))) {
        return;
    }
    let what = if kind == "ERROR" { "error" } else { "failed" };
    let text = if message.is_empty() { format!("{id} {what}") } else { format!("{message} (test {id} {what})") };
    let mut d = Diagnostic::new(TOOL, Severity::Error, text).at(path, None, None);
    d.code = exception_type(message).filter(|_| message.contains(':')).map(str::to_string);
    d.symbol = dotted;
    out.push(d);
}
