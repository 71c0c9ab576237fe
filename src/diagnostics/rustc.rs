//! rustc, cargo build and clippy, human (`error[E0308]: msg` then
//! `  --> path:line:col`) and short (`path:line:col: error[E0308]: msg`).
//! The primary span of each error or warning is the diagnostic; a lint's
//! name (`#[warn(clippy::needless_return)]`) becomes its code.

use super::{Diagnostic, Severity, lines, location_prefix};

const TOOL: &str = "rustc";

pub(super) fn parse(text: &str) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = Vec::new();
    let mut pending: Option<(Severity, Option<&str>, &str)> = None;
    let mut last_open = false; // the last diagnostic may still get a lint name
    for line in lines(text) {
        if let Some(arrow) = line.trim_start().strip_prefix("--> ") {
            if let (Some((sev, code, msg)), Some((path, l, c, _))) = (pending.take(), location_prefix(arrow.trim())) {
                out.push(Diagnostic::new(TOOL, sev, msg).at(path, Some(l), c).code(code));
                last_open = true;
            }
            continue;
        }
        if line.starts_with(char::is_whitespace) {
            if last_open
                && let Some(lint) = lint_name(line)
                && let Some(d) = out.last_mut()
                && d.code.is_none()
            {
                d.code = Some(lint.to_string());
            }
            continue;
        }
        if let Some((sev, code, msg)) = header(line) {
            pending = Some((sev, code, msg));
            last_open = false;
        } else if let Some((path, l, c, rest)) = location_prefix(line)
            && let Some((sev, code, msg)) = header(rest)
        {
            out.push(Diagnostic::new(TOOL, sev, msg).at(path, Some(l), c).code(code));
            pending = None;
            last_open = false;
        } else if !line.is_empty() {
            // `note:`, `help:`, `Compiling ...`: a sub-diagnostic's span is not primary.
            pending = None;
        }
    }
    out
}

/// `error[E0308]: msg`, `warning: msg`: severity, code, message.
fn header(line: &str) -> Option<(Severity, Option<&str>, &str)> {
    let (word, rest) = if let Some(r) = line.strip_prefix("error") {
        (Severity::Error, r)
    } else if let Some(r) = line.strip_prefix("warning") {
        (Severity::Warning, r)
    } else {
        return None;
    };
    let (code, rest) = match rest.strip_prefix('[') {
        Some(r) => {
            let (code, r) = r.split_once(']')?;
            (Some(code), r)
        }
        None => (None, rest),
    };
    Some((word, code, rest.strip_prefix(": ")?))
}

/// `= note: `#[warn(clippy::len_zero)]` on by default` → `clippy::len_zero`.
fn lint_name(line: &str) -> Option<&str> {
    let t = line.trim_start().strip_prefix("= note: `#[")?;
    let t = t.strip_prefix("warn(").or_else(|| t.strip_prefix("deny(")).or_else(|| t.strip_prefix("forbid("))?;
    t.split_once(")]").map(|(name, _)| name).filter(|n| !n.contains(' '))
}
