//! ESLint in each of its formats: stylish (the default: a file's path on
//! a line of its own, then `  line:col  severity  message  rule` rows, the
//! message's final period dropped), `-f json`, `-f unix` (`path:line:col:
//! message [Severity/rule]`) and `-f compact` (`path: line L, col C,
//! Severity - message (rule)`). The summary (`✖ 11 problems (8 errors, 3
//! warnings)`) is not a diagnostic.

use serde::Deserialize;

use super::{Diagnostic, Severity, lines, location_prefix};

pub(super) fn parse(text: &str) -> Vec<Diagnostic> {
    let json = json(text);
    if !json.is_empty() {
        return json;
    }
    let mut out = Vec::new();
    let mut file: Option<&str> = None;
    for line in lines(text) {
        if let Some(d) = unix(line).or_else(|| compact(line)) {
            out.push(d);
        } else if let Some(d) = file.and_then(|f| stylish_row(f, line)) {
            out.push(d);
        } else if is_path_line(line) {
            file = Some(line.trim_end());
        } else if line.trim().is_empty() || line.starts_with('✖') {
            file = None;
        }
    }
    out
}

/// A stylish file header: a path alone on its line.
fn is_path_line(line: &str) -> bool {
    let l = line.trim_end();
    !l.is_empty()
        && !l.starts_with(char::is_whitespace)
        && !l.contains("  ")
        && (l.starts_with('/') || l.contains('/') || l.contains('.'))
        && l.rsplit('.').next().is_some_and(|ext| ext.len() <= 5 && ext.chars().all(char::is_alphanumeric))
}

/// `  14:9  error    'x' is assigned a value but never used  rule-id`.
fn stylish_row(file: &str, line: &str) -> Option<Diagnostic> {
    if !line.starts_with(' ') {
        return None;
    }
    let t = line.trim();
    let (loc, rest) = t.split_once(char::is_whitespace)?;
    let (l, c) = loc.split_once(':')?;
    let (l, c): (usize, usize) = (l.parse().ok()?, c.parse().ok()?);
    let rest = rest.trim_start();
    let (word, rest) = rest.split_once(char::is_whitespace)?;
    if !matches!(word, "error" | "warning") {
        return None;
    }
    // The rule is the last field, after two spaces or more; a parse error
    // has none.
    let rest = rest.trim();
    let (message, rule) = match rest.rfind("  ") {
        Some(at) if !rest[at..].trim().contains(' ') => (rest[..at].trim_end(), Some(rest[at..].trim())),
        _ => (rest, None),
    };
    Some(Diagnostic::new("eslint", Severity::parse(word), message).at(file, Some(l), Some(c)).code(rule))
}

/// `path:line:col: message [Severity/rule]`.
fn unix(line: &str) -> Option<Diagnostic> {
    let (path, l, c, rest) = location_prefix(line)?;
    let body = rest.trim_end().strip_suffix(']')?;
    let open = body.rfind(" [")?;
    let (word, rule) = body[open + 2..].split_once('/')?;
    if !matches!(word, "Error" | "Warning") {
        return None;
    }
    let d = Diagnostic::new("eslint", Severity::parse(word), body[..open].trim_end()).at(path, Some(l), c);
    Some(d.code(Some(rule)))
}

/// `path: line L, col C, Severity - message (rule)`.
fn compact(line: &str) -> Option<Diagnostic> {
    let (path, rest) = line.split_once(": line ")?;
    let (l, rest) = rest.split_once(", col ")?;
    let (c, rest) = rest.split_once(", ")?;
    let (word, rest) = rest.split_once(" - ")?;
    if !matches!(word, "Error" | "Warning") {
        return None;
    }
    let (message, rule) = match rest.trim_end().strip_suffix(')').and_then(|b| b.rfind(" (").map(|i| (b, i))) {
        Some((b, i)) if !b[i + 2..].contains(' ') => (&b[..i], Some(&b[i + 2..])),
        _ => (rest.trim_end(), None),
    };
    let d = Diagnostic::new("eslint", Severity::parse(word), message).at(path, Some(l.parse().ok()?), c.parse().ok());
    Some(d.code(rule))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct File {
    file_path: String,
    #[serde(default)]
    messages: Vec<Message>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Message {
    rule_id: Option<String>,
    #[serde(default)]
    severity: u8,
    #[serde(default)]
    message: String,
    line: Option<usize>,
    column: Option<usize>,
}

/// `-f json`: the line that holds the array of files.
fn json(text: &str) -> Vec<Diagnostic> {
    let Some(files) =
        lines(text).filter(|l| l.starts_with("[{\"filePath\"")).find_map(|l| serde_json::from_str::<Vec<File>>(l).ok())
    else {
        return Vec::new();
    };
    files
        .iter()
        .flat_map(|f| {
            f.messages.iter().map(move |m| {
                let severity = if m.severity >= 2 { Severity::Error } else { Severity::Warning };
                Diagnostic::new("eslint", severity, m.message.trim_end())
                    .at(&f.file_path, m.line, m.column)
                    .code(m.rule_id.as_deref())
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brief(d: &[Diagnostic]) -> Vec<(String, usize, String, Severity)> {
        d.iter()
            .map(|d| {
                (
                    d.path.clone().unwrap_or_default(),
                    d.line.unwrap_or(0),
                    d.code.clone().unwrap_or_default(),
                    d.severity,
                )
            })
            .collect()
    }

    #[test]
    fn every_format_gives_the_same_findings() {
        let stylish = "\n/r/src/cart.ts\n   6:7  warning  'tax' is never reassigned. Use 'const' instead   prefer-const\n  14:9  error    'x' is assigned a value but never used  @typescript-eslint/no-unused-vars\n\n✖ 2 problems (1 error, 1 warning)\n";
        let unix = "/r/src/cart.ts:6:7: 'tax' is never reassigned. Use 'const' instead. [Warning/prefer-const]\n/r/src/cart.ts:14:9: 'x' is assigned a value but never used. [Error/@typescript-eslint/no-unused-vars]\n\n2 problems\n";
        let compact = "/r/src/cart.ts: line 6, col 7, Warning - 'tax' is never reassigned. Use 'const' instead. (prefer-const)\n/r/src/cart.ts: line 14, col 9, Error - 'x' is assigned a value but never used. (@typescript-eslint/no-unused-vars)\n";
        let json = "[{\"filePath\":\"/r/src/cart.ts\",\"messages\":[{\"ruleId\":\"prefer-const\",\"severity\":1,\"message\":\"m\",\"line\":6,\"column\":7},{\"ruleId\":\"@typescript-eslint/no-unused-vars\",\"severity\":2,\"message\":\"n\",\"line\":14,\"column\":9}]}]\n";
        let want = vec![
            ("/r/src/cart.ts".to_string(), 6, "prefer-const".to_string(), Severity::Warning),
            ("/r/src/cart.ts".to_string(), 14, "@typescript-eslint/no-unused-vars".to_string(), Severity::Error),
        ];
        for text in [stylish, unix, compact, json] {
            assert_eq!(brief(&parse(text)), want, "{text}");
        }
        assert_eq!(parse(stylish)[0].message, "'tax' is never reassigned. Use 'const' instead");
    }
}
