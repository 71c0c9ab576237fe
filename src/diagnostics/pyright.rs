//! pyright's text: per file a header line, then indented
//! `path:line:col - error|warning|information: message`, continued on more
//! deeply indented lines, the last ending in `(reportRuleName)`.

use super::{Diagnostic, Severity, lines, location_prefix};

pub(super) fn parse(text: &str) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = Vec::new();
    let mut open: Option<usize> = None; // indentation of the open diagnostic
    for line in lines(text) {
        let indent = line.len() - line.trim_start().len();
        let body = line.trim();
        if let Some(d) = open.filter(|&i| indent > i).and(out.last_mut()) {
            d.message.push('\n');
            d.message.push_str(body);
            continue;
        }
        open = None;
        if let Some(d) = out.last_mut() {
            split_rule(d);
        }
        let Some((path, l, c, rest)) = location_prefix(body) else { continue };
        let Some(rest) = rest.strip_prefix("- ") else { continue };
        let Some((word, message)) = rest.split_once(": ") else { continue };
        if !matches!(word, "error" | "warning" | "information") {
            continue;
        }
        out.push(Diagnostic::new("pyright", Severity::parse(word), message).at(path, Some(l), c));
        open = Some(indent);
    }
    if let Some(d) = out.last_mut() {
        split_rule(d);
    }
    out
}

/// Moves a trailing `(reportSomething)` from the message to the code.
fn split_rule(d: &mut Diagnostic) {
    if d.code.is_some() {
        return;
    }
    let m = d.message.trim_end();
    if let Some(body) = m.strip_suffix(')')
        && let Some(open) = body.rfind("(report")
    {
        d.code = Some(body[open + 1..].to_string());
        d.message = body[..open].trim_end().to_string();
    }
}
