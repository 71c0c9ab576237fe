//! `cargo build|clippy --message-format=json` (one JSON object a line,
//! `"reason": "compiler-message"`) and `rustc --error-format=json`: the
//! primary span of each message. A message printed by several targets of
//! one build (`cargo clippy --all-targets` checks the library as `lib` and as
//! `lib test`) is read once: same file, line, column, level, code and text.

use serde_json::Value;

use super::{Diagnostic, Severity, lines};

pub(super) fn parse(text: &str) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for line in lines(text) {
        if !line.starts_with('{') {
            continue;
        }
        let Ok(v) = serde_json::from_str::<Value>(line) else { continue };
        let msg = match v.get("reason").and_then(Value::as_str) {
            Some("compiler-message") => &v["message"],
            Some(_) => continue,
            None if v.get("$message_type").and_then(Value::as_str) == Some("diagnostic") => &v,
            None => continue,
        };
        let Some(spans) = msg.get("spans").and_then(Value::as_array) else { continue };
        let Some(span) = spans.iter().find(|s| s.get("is_primary").and_then(Value::as_bool) == Some(true)) else {
            continue;
        };
        let Some(file) = span.get("file_name").and_then(Value::as_str) else { continue };
        let num = |k: &str| span.get(k).and_then(Value::as_u64).map(|n| n as usize);
        let severity = match msg.get("level").and_then(Value::as_str) {
            Some(l) if l.starts_with("error") => Severity::Error,
            Some("warning") => Severity::Warning,
            _ => Severity::Note,
        };
        let text = msg.get("message").and_then(Value::as_str).unwrap_or("");
        let code = msg.get("code").and_then(|c| c.get("code")).and_then(Value::as_str);
        let key = (
            file.to_string(),
            num("line_start"),
            num("column_start"),
            severity,
            code.map(str::to_string),
            text.to_string(),
        );
        if !seen.insert(key) {
            continue;
        }
        out.push(
            Diagnostic::new("cargo-json", severity, text).at(file, num("line_start"), num("column_start")).code(code),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `cargo clippy --all-targets --message-format=json`, captured: one
    /// warning, printed for `lib` and for `lib test`.
    #[test]
    fn a_message_of_two_targets_is_read_once() {
        let text = include_str!("../../tests/summarize/captured/clippy-all-targets-json.txt");
        assert_eq!(text.matches(r#""reason":"compiler-message""#).count(), 2);
        let found: Vec<(Option<usize>, Option<String>)> = parse(text).into_iter().map(|d| (d.line, d.code)).collect();
        assert_eq!(found, [(Some(15), Some("clippy::len_zero".to_string()))]);
    }
}
