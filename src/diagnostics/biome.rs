//! Biome (`biome lint`, `biome check`): its default reporter (a header
//! `path:line:col category  FIXABLE  ━━━`, then the message on a line of
//! its own marked `×` for an error, `!` a warning, `i` information), the
//! concise one (`× path:line:col: category: message`) and `--reporter=json`.
//! A header without a line (the formatter's `path format ━━━`) is a
//! diagnostic of the whole file.

use serde::Deserialize;

use super::{Diagnostic, Severity, lines, location_prefix};

/// The rule that ends a default header.
const RULE: char = '━';

pub(super) fn parse(text: &str) -> Vec<Diagnostic> {
    let json = json(text);
    if !json.is_empty() {
        return json;
    }
    let mut out: Vec<Diagnostic> = Vec::new();
    // The header waiting for its message line.
    let mut header: Option<Diagnostic> = None;
    for line in lines(text) {
        if let Some(d) = concise(line) {
            out.push(d);
        } else if let Some(d) = default_header(line) {
            out.extend(header.replace(d));
        } else if let Some(mut d) = header.take() {
            match mark(line.trim_start()) {
                Some((severity, message)) => {
                    d.severity = severity;
                    d.message = message.to_string();
                    out.push(d);
                }
                None if line.trim().is_empty() => header = Some(d),
                None => out.push(d),
            }
        }
    }
    out.extend(header);
    out
}

/// `× message`, `! message`, `i message`.
fn mark(s: &str) -> Option<(Severity, &str)> {
    let (m, rest) = s.split_once(' ')?;
    let severity = match m {
        "×" => Severity::Error,
        "!" => Severity::Warning,
        "i" => Severity::Info,
        _ => return None,
    };
    Some((severity, rest.trim()))
}

/// `src/cart.ts:6:3 lint/style/useConst  FIXABLE  ━━━`, or `src/a.ts format ━━━`.
fn default_header(line: &str) -> Option<Diagnostic> {
    let body = line.trim_end().strip_suffix(RULE)?.trim_end_matches(RULE).trim_end();
    let body = body.strip_suffix("FIXABLE").map_or(body, str::trim_end);
    let (at, category) = body.split_once(' ')?;
    let category = category.trim();
    if category.contains(' ') || category.is_empty() {
        return None;
    }
    let d = match location_prefix(at) {
        Some((path, l, c, "")) => Diagnostic::new("biome", Severity::Error, category).at(path, Some(l), c),
        _ if at.contains('.') && !at.contains(':') => {
            Diagnostic::new("biome", Severity::Error, category).at(at, None, None)
        }
        _ => return None,
    };
    Some(d.code(Some(category)))
}

/// `× src/cart.ts:14:9: lint/correctness/noUnusedVariables: message`.
fn concise(line: &str) -> Option<Diagnostic> {
    let (severity, rest) = mark(line)?;
    let (path, l, c, rest) = location_prefix(rest)?;
    let (category, message) = rest.split_once(": ")?;
    if category.contains(' ') {
        return None;
    }
    Some(Diagnostic::new("biome", severity, message.trim()).at(path, Some(l), c).code(Some(category)))
}

#[derive(Deserialize)]
struct Report {
    #[serde(default)]
    diagnostics: Vec<Found>,
}

#[derive(Deserialize)]
struct Found {
    #[serde(default)]
    severity: String,
    #[serde(default)]
    message: String,
    category: Option<String>,
    location: Option<Location>,
}

#[derive(Deserialize)]
struct Location {
    path: Option<String>,
    start: Option<Position>,
}

#[derive(Deserialize)]
struct Position {
    line: usize,
    column: usize,
}

/// `--reporter=json`: the line that holds the report.
fn json(text: &str) -> Vec<Diagnostic> {
    let Some(report) =
        lines(text).filter(|l| l.starts_with("{\"summary\":")).find_map(|l| serde_json::from_str::<Report>(l).ok())
    else {
        return Vec::new();
    };
    report
        .diagnostics
        .iter()
        .map(|f| {
            let mut d = Diagnostic::new("biome", Severity::parse(&f.severity), f.message.trim());
            if let Some(loc) = &f.location
                && let Some(path) = &loc.path
            {
                d = d.at(path, loc.start.as_ref().map(|p| p.line), loc.start.as_ref().map(|p| p.column));
            }
            d.code(f.category.as_deref())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_concise_and_json_reporters_agree() {
        let default = "src/cart.ts:6:3 lint/style/useConst  FIXABLE  ━━━━━━━━\n\n  ! This let declares a variable that is only assigned once.\n  \n  > 6 │   let tax = 0.2;\n\nsrc/legacy.js:11:10 lint/correctness/noUndeclaredVariables ━━━━\n\n  × The x variable is undeclared.\n\nsrc/format.ts format ━━━━━━\n\n  × Formatter would have printed the following content:\n\nlint ━━━━━━━━━━━━\n\n  × Some errors were emitted while running checks.\n";
        let d = parse(default);
        let brief: Vec<_> = d.iter().map(|d| (d.path.as_deref(), d.line, d.code.as_deref(), d.severity)).collect();
        assert_eq!(
            brief,
            vec![
                (Some("src/cart.ts"), Some(6), Some("lint/style/useConst"), Severity::Warning),
                (Some("src/legacy.js"), Some(11), Some("lint/correctness/noUndeclaredVariables"), Severity::Error),
                (Some("src/format.ts"), None, Some("format"), Severity::Error),
            ]
        );
        assert_eq!(d[0].message, "This let declares a variable that is only assigned once.");
        let concise =
            "! src/cart.ts:6:3: lint/style/useConst: This let declares a variable that is only assigned once.\n";
        assert_eq!(parse(concise)[0].message, d[0].message);
        let json = "{\"summary\":{},\"diagnostics\":[{\"severity\":\"warning\",\"message\":\"m\",\"category\":\"lint/style/useConst\",\"location\":{\"path\":\"src/cart.ts\",\"start\":{\"line\":6,\"column\":3}}}]}\n";
        let j = parse(json);
        assert_eq!((j[0].line, j[0].column, j[0].severity), (Some(6), Some(3), Severity::Warning));
    }
}
