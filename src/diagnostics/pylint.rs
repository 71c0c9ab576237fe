//! pylint's default text: `path:line:col: CODE: message (symbol)` under
//! `************* Module name` headers. pylint's columns are 0-based.

use super::{Diagnostic, Severity, lines, location_prefix};

pub(super) fn parse(text: &str) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for line in lines(text) {
        let Some((path, l, c, rest)) = location_prefix(line) else { continue };
        let Some((code, message)) = rest.split_once(": ") else { continue };
        let valid = code.len() == 5 && code[1..].bytes().all(|b| b.is_ascii_digit());
        let severity = match code.as_bytes().first() {
            Some(b'E' | b'F') if valid => Severity::Error,
            Some(b'W') if valid => Severity::Warning,
            Some(b'C' | b'R' | b'I') if valid => Severity::Info,
            _ => continue,
        };
        out.push(Diagnostic::new("pylint", severity, message).at(path, Some(l), c.map(|c| c + 1)).code(Some(code)));
    }
    out
}
