//! oxlint: its default output (`  x plugin(rule): message`, `!` for a
//! warning, then `,-[path:line:col]` and a code frame), `-f unix`
//! (`path:line:col: message [Severity/plugin(rule)]`) and `-f json`.

use serde::Deserialize;

use super::{Diagnostic, Severity, lines, location_prefix};

pub(super) fn parse(text: &str) -> Vec<Diagnostic> {
    let json = json(text);
    if !json.is_empty() {
        return json;
    }
    let mut out: Vec<Diagnostic> = Vec::new();
    let mut waiting: Option<Diagnostic> = None;
    for line in lines(text) {
        if let Some(d) = unix(line) {
            out.push(d);
        } else if let Some(d) = header(line) {
            out.extend(waiting.replace(d));
        } else if let Some(at) = line.trim_start().strip_prefix(",-[").and_then(|l| l.strip_suffix(']'))
            && let Some(mut d) = waiting.take()
        {
            if let Some((path, l, c, _)) = location_prefix(at) {
                d = d.at(path, Some(l), c);
            }
            out.push(d);
        }
    }
    out.extend(waiting);
    out
}

/// `  x eslint(eqeqeq): Expected === and instead saw ==`.
fn header(line: &str) -> Option<Diagnostic> {
    let t = line.strip_prefix("  ")?;
    let (mark, rest) = t.split_once(' ')?;
    let severity = match mark {
        "x" | "×" => Severity::Error,
        "!" | "⚠" => Severity::Warning,
        _ => return None,
    };
    let (code, message) = rest.split_once("): ")?;
    if !code.contains('(') || code.contains(' ') {
        return None;
    }
    Some(Diagnostic::new("oxlint", severity, message.trim()).code(Some(&format!("{code})"))))
}

/// `src/a.ts:19:41: message [Error/eslint(eqeqeq)]`.
fn unix(line: &str) -> Option<Diagnostic> {
    let (path, l, c, rest) = location_prefix(line)?;
    let body = rest.trim_end().strip_suffix(")]")?;
    let open = body.rfind(" [")?;
    let (word, rule) = body[open + 2..].split_once('/')?;
    if !matches!(word, "Error" | "Warning") || !rule.contains('(') {
        return None;
    }
    let d = Diagnostic::new("oxlint", Severity::parse(word), body[..open].trim_end()).at(path, Some(l), c);
    Some(d.code(Some(&format!("{rule})"))))
}

#[derive(Deserialize)]
struct Report {
    #[serde(default)]
    diagnostics: Vec<Found>,
}

#[derive(Deserialize)]
struct Found {
    #[serde(default)]
    message: String,
    code: Option<String>,
    #[serde(default)]
    severity: String,
    filename: Option<String>,
    #[serde(default)]
    labels: Vec<Label>,
}

#[derive(Deserialize)]
struct Label {
    span: Span,
}

#[derive(Deserialize)]
struct Span {
    line: usize,
    column: usize,
}

/// `-f json`: one object, over several lines, from `{ "diagnostics":`.
fn json(text: &str) -> Vec<Diagnostic> {
    let Some(start) = text.find("{ \"diagnostics\":").or_else(|| text.find("{\"diagnostics\":")) else {
        return Vec::new();
    };
    let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Report>();
    let Some(Ok(report)) = stream.next() else { return Vec::new() };
    report
        .diagnostics
        .iter()
        .map(|f| {
            let mut d = Diagnostic::new("oxlint", Severity::parse(&f.severity), f.message.trim());
            if let Some(path) = &f.filename {
                let at = f.labels.first().map(|l| (l.span.line, l.span.column));
                d = d.at(path, at.map(|a| a.0), at.map(|a| a.1));
            }
            d.code(f.code.as_deref())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_unix_and_json_outputs_agree() {
        let default = "\n  x eslint(eqeqeq): Expected === and instead saw ==\n    ,-[src/inventory.ts:19:41]\n 19 |     return x == y;\n    `----\n  help: Prefer === operator\n\n  ! eslint(prefer-const): `tax` is never reassigned.\n   ,-[src/cart.ts:6:7]\n\nFound 1 warning and 1 error.\n";
        let unix = "src/inventory.ts:19:41: Expected === and instead saw == [Error/eslint(eqeqeq)]\nsrc/cart.ts:6:7: `tax` is never reassigned. [Warning/eslint(prefer-const)]\n\n2 problems\n";
        let json = "{ \"diagnostics\": [{\"message\": \"Expected === and instead saw ==\",\"code\": \"eslint(eqeqeq)\",\"severity\": \"error\",\"filename\": \"src/inventory.ts\",\"labels\": [{\"span\": {\"offset\": 1,\"length\": 2,\"line\": 19,\"column\": 41}}]},\n{\"message\": \"`tax` is never reassigned.\",\"code\": \"eslint(prefer-const)\",\"severity\": \"warning\",\"filename\": \"src/cart.ts\",\"labels\": [{\"span\": {\"offset\": 1,\"length\": 3,\"line\": 6,\"column\": 7}}]}],\n  \"number_of_files\": 6\n            }\n            ";
        for text in [default, unix, json] {
            let d = parse(text);
            let brief: Vec<_> =
                d.iter().map(|d| (d.path.as_deref(), d.line, d.column, d.code.as_deref(), d.severity)).collect();
            assert_eq!(
                brief,
                vec![
                    (Some("src/inventory.ts"), Some(19), Some(41), Some("eslint(eqeqeq)"), Severity::Error),
                    (Some("src/cart.ts"), Some(6), Some(7), Some("eslint(prefer-const)"), Severity::Warning),
                ],
                "{text}"
            );
        }
    }
}
