//! ruff, concise (`path:line:col: CODE [*] message`) and full (a header
//! `CODE [*] message` and then ` --> path:line:col`, like rustc's).

use super::{Diagnostic, Severity, lines, location_prefix};

const TOOL: &str = "ruff";

pub(super) fn parse(text: &str) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut header: Option<(Option<&str>, &str)> = None;
    for line in lines(text) {
        if let Some(arrow) = line.trim_start().strip_prefix("--> ") {
            if let (Some((code, message)), Some((path, l, c, _))) = (header.take(), location_prefix(arrow.trim())) {
                out.push(Diagnostic::new(TOOL, Severity::Error, message).at(path, Some(l), c).code(code));
            }
            continue;
        }
        // The arrow follows its header at once; anything else between ends it.
        let pending = header.take();
        if line.starts_with(char::is_whitespace) || line.is_empty() {
            continue;
        }
        let _ = pending;
        if let Some((path, l, c, rest)) = location_prefix(line)
            && let Some((code, message)) = code_and_message(rest)
        {
            out.push(Diagnostic::new(TOOL, Severity::Error, message).at(path, Some(l), c).code(code));
            header = None;
        } else if let Some(h) = code_and_message(line) {
            header = Some(h);
        }
    }
    out
}

/// `F401 [*] message`, `invalid-syntax: message`.
pub(super) fn code_and_message(s: &str) -> Option<(Option<&str>, &str)> {
    let end = s.find([' ', ':'])?;
    let code = &s[..end];
    let upper = code.bytes().take_while(u8::is_ascii_uppercase).count();
    let lint_code = upper > 0 && upper < code.len() && code[upper..].bytes().all(|b| b.is_ascii_digit());
    let named = code.starts_with(|c: char| c.is_ascii_lowercase())
        && code.bytes().all(|b| b.is_ascii_lowercase() || b == b'-')
        && code.contains('-');
    if !(lint_code || named) {
        return None;
    }
    let rest = s[end..].trim_start_matches(':').trim_start();
    let rest = rest.strip_prefix("[*]").unwrap_or(rest).trim_start();
    Some((Some(code), rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes() {
        assert_eq!(code_and_message("F401 [*] `os` unused"), Some((Some("F401"), "`os` unused")));
        assert_eq!(code_and_message("invalid-syntax: Expected"), Some((Some("invalid-syntax"), "Expected")));
        assert_eq!(code_and_message("Found 7 errors."), None);
        assert_eq!(code_and_message("help: Organize imports"), None);
        assert_eq!(code_and_message("---- tests::adds stdout ----"), None);
    }
}
