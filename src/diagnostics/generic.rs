//! `path:line[:col]: message`, the shape gcc, clang, go vet, shellcheck
//! (gcc format), eslint (unix format) and many others print. A leading
//! `error:`/`warning:`/`note:` sets the severity; a trailing `[code]` the code.

use super::{Diagnostic, Severity, lines, location_prefix, trailing_bracket_code};

pub(super) fn parse(text: &str) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for line in lines(text) {
        let Some((path, l, c, rest)) = location_prefix(line) else { continue };
        if !looks_like_path(path) || rest.is_empty() {
            continue;
        }
        let (severity, message) = match rest.split_once(": ") {
            Some((w, m)) if matches!(w, "error" | "warning" | "note" | "fatal error" | "info") => {
                (Severity::parse(w), m)
            }
            _ => (Severity::Error, rest),
        };
        let (message, code) = trailing_bracket_code(message);
        out.push(Diagnostic::new("generic", severity, message).at(path, Some(l), c).code(code));
    }
    out
}

/// A file name has a dot or a slash; `12:30:01` and `Step 3:` do not.
pub(super) fn looks_like_path(p: &str) -> bool {
    !p.contains(char::is_whitespace)
        && (p.contains('.') || p.contains('/') || p.contains('\\'))
        && !p.bytes().all(|b| b.is_ascii_digit() || b == b'.' || b == b':')
}
