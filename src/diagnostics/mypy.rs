//! mypy: `path:line[:col]: error|note|warning: message  [code]`. Notes are
//! kept, as `note`s.

use super::{Diagnostic, Severity, lines, location_prefix, trailing_bracket_code};

pub(super) fn parse(text: &str) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for line in lines(text) {
        let Some((path, l, c, rest)) = location_prefix(line) else { continue };
        let Some((word, message)) = rest.split_once(": ") else { continue };
        if !matches!(word, "error" | "note" | "warning") {
            continue;
        }
        let (message, code) = trailing_bracket_code(message);
        out.push(Diagnostic::new("mypy", Severity::parse(word), message).at(path, Some(l), c).code(code));
    }
    out
}
