//! tsc: `path(line,col): error TSnnnn: message` (`--pretty false`, and
//! what a pipe gets from tsc 5 before `--pretty` became the default), or
//! `path:line:col - error TSnnnn: message` (`--pretty`, its colours
//! stripped), each with the chain of the error on the lines indented
//! below it. The code frame, the related information and the `Found N
//! errors in M files` summary are not diagnostics of their own.

use super::{Diagnostic, Severity, lines};

pub(super) fn parse(text: &str) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = Vec::new();
    // Whether the lines below the last diagnostic are its chain.
    let mut chain = false;
    for line in lines(text) {
        if let Some(d) = header(line) {
            out.push(d);
            chain = true;
            continue;
        }
        match out.last_mut() {
            Some(d) if chain && line.starts_with("  ") && !line.trim().is_empty() => {
                d.message.push('\n');
                d.message.push_str(line.trim());
            }
            _ => chain = false,
        }
    }
    out
}

/// One error line, plain or pretty: the location, the severity, the code.
fn header(line: &str) -> Option<Diagnostic> {
    let (path, l, c, rest) = plain_location(line).or_else(|| pretty_location(line))?;
    let (word, rest) = rest.split_once(' ')?;
    if !matches!(word, "error" | "warning" | "message") {
        return None;
    }
    let (code, message) = rest.split_once(": ")?;
    let code = code.strip_prefix("TS").filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))?;
    let severity = if word == "message" { Severity::Info } else { Severity::parse(word) };
    Some(
        Diagnostic::new("tsc", severity, message.trim_end())
            .at(path, Some(l), Some(c))
            .code(Some(&format!("TS{code}"))),
    )
}

/// `path(line,col): rest`.
fn plain_location(line: &str) -> Option<(&str, usize, usize, &str)> {
    let open = line.find("(")?;
    let (path, after) = (&line[..open], &line[open + 1..]);
    let close = after.find("): ")?;
    let (l, c) = after[..close].split_once(',')?;
    if path.is_empty() || path.starts_with(char::is_whitespace) {
        return None;
    }
    Some((path, l.parse().ok()?, c.parse().ok()?, &after[close + 3..]))
}

/// `path:line:col - rest`.
fn pretty_location(line: &str) -> Option<(&str, usize, usize, &str)> {
    let (loc, rest) = line.split_once(" - ")?;
    let (at, c) = loc.rsplit_once(':')?;
    let (path, l) = at.rsplit_once(':')?;
    if path.is_empty() || path.starts_with(char::is_whitespace) {
        return None;
    }
    Some((path, l.parse().ok()?, c.parse().ok()?, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_and_pretty_errors_with_their_chains() {
        let plain = "src/cart.ts(16,24): error TS2345: Argument of type 'A' is not assignable.\n  Type 'B' is not assignable to type 'C'.\n    Type 'undefined' is not assignable.\nsrc/cart.ts(17,3): error TS2322: Type 'number' is not assignable to type 'string'.\n";
        let d = parse(plain);
        assert_eq!(d.len(), 2);
        assert_eq!(
            (d[0].path.as_deref(), d[0].line, d[0].column, d[0].code.as_deref()),
            (Some("src/cart.ts"), Some(16), Some(24), Some("TS2345"))
        );
        assert_eq!(d[0].message.lines().count(), 3, "{}", d[0].message);
        let pretty = "src/cart.ts:16:24 - error TS2345: Argument of type 'A'.\n  Type 'B'.\n\n16   const amount = total(items);\n                          ~~~~~\n\nsrc/format.ts:3:3 - error TS2322: Type 'number'.\n\n3   return label;\n\n\nFound 2 errors in 2 files.\n\nErrors  Files\n     1  src/cart.ts:16\n";
        let d = parse(pretty);
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].message, "Argument of type 'A'.\nType 'B'.");
        assert_eq!((d[1].path.as_deref(), d[1].line), (Some("src/format.ts"), Some(3)));
        assert!(parse("Found 2 errors in 2 files.\nnot (a,b): c\n").is_empty());
    }
}
