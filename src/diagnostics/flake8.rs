//! flake8: `path:line:col: CODE message`.

use super::{Diagnostic, Severity, lines, location_prefix};

pub(super) fn parse(text: &str) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for line in lines(text) {
        let Some((path, l, c, rest)) = location_prefix(line) else { continue };
        let (code, message) = match rest.split_once(' ') {
            Some((code, m)) if is_code(code) => (Some(code), m),
            _ => (None, rest),
        };
        // pycodestyle's W codes are warnings, C901 a complexity warning.
        let severity = match code {
            Some(c) if c.starts_with('W') || c.starts_with('C') => Severity::Warning,
            _ => Severity::Error,
        };
        out.push(Diagnostic::new("flake8", severity, message).at(path, Some(l), c).code(code));
    }
    out
}

fn is_code(s: &str) -> bool {
    let upper = s.bytes().take_while(u8::is_ascii_uppercase).count();
    upper > 0 && upper < s.len() && s[upper..].bytes().all(|b| b.is_ascii_digit())
}
