//! Python tracebacks: `  File "path", line N, in func` frames, then the
//! exception line. Chained tracebacks ("During handling of the above
//! exception ...") are separate tracebacks.

use super::{Diagnostic, Severity, lines};

pub(super) fn parse(text: &str) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut frames: Vec<(String, usize)> = Vec::new();
    let mut group = 0;
    let mut in_traceback = false;
    // A `File "x", line N` outside a traceback, and the lines since: a
    // SyntaxError's trace has no `Traceback` header.
    let mut bare: Option<((String, usize), usize)> = None;
    for line in lines(text) {
        if line.trim_start().starts_with("Traceback (most recent call last):") {
            flush(&mut out, &mut frames, group, "the traceback ends before its exception");
            in_traceback = true;
            bare = None;
            group += 1;
            continue;
        }
        if !in_traceback {
            if let Some(f) = frame(line) {
                bare = Some((f, 0));
            } else if let Some((f, seen)) = bare.take()
                && seen < 4
            {
                if !line.starts_with(char::is_whitespace) && syntax_error(line) {
                    group += 1;
                    frames.push(f);
                    flush(&mut out, &mut frames, group, line);
                } else {
                    bare = Some((f, seen + 1));
                }
            }
            continue;
        }
        if let Some(frame) = frame(line) {
            frames.push(frame);
        } else if !line.starts_with(char::is_whitespace) && !line.is_empty() {
            // The exception line ends the traceback.
            flush(&mut out, &mut frames, group, line);
            in_traceback = false;
        }
    }
    flush(&mut out, &mut frames, group, "the traceback ends before its exception");
    out
}

/// `SyntaxError: ...` and its kin, which Python prints without a traceback.
fn syntax_error(line: &str) -> bool {
    ["SyntaxError", "IndentationError", "TabError"]
        .iter()
        .any(|e| line.strip_prefix(e).is_some_and(|rest| rest.starts_with(':')))
}

/// `File "path", line N[, in func]`.
pub(super) fn frame(line: &str) -> Option<(String, usize)> {
    let rest = line.trim_start().strip_prefix("File \"")?;
    let (path, rest) = rest.split_once("\", line ")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    Some((path.to_string(), rest[..digits].parse().ok()?))
}

/// The exception type of `KeyError: 'x'` or `mod.Error: x`, if it is one.
pub(super) fn exception_type(line: &str) -> Option<&str> {
    let name = line.split(':').next()?.trim();
    let ok = !name.is_empty()
        && name.split('.').all(|p| p.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_'))
        && name.chars().all(|c| c.is_alphanumeric() || c == '_' || c == '.');
    ok.then_some(name)
}

fn flush(out: &mut Vec<Diagnostic>, frames: &mut Vec<(String, usize)>, group: usize, message: &str) {
    let n = frames.len();
    for (i, (path, line)) in frames.drain(..).enumerate() {
        let severity = if i + 1 == n { Severity::Error } else { Severity::Note };
        let mut d = Diagnostic::new("python-traceback", severity, message.trim()).at(&path, Some(line), None);
        d.code = exception_type(message).map(str::to_string);
        d.traceback = Some(group);
        out.push(d);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_syntax_error_without_a_traceback_header() {
        let text = "  File \"/r/broken.py\", line 5\n    return sum(values\n              ^\nSyntaxError: '(' was never closed\n";
        let d = parse(text);
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(
            (d[0].path.as_deref(), d[0].line, d[0].code.as_deref()),
            (Some("/r/broken.py"), Some(5), Some("SyntaxError"))
        );
        assert_eq!(d[0].severity, Severity::Error);
        // A frame-like line far from any SyntaxError is not one.
        assert!(parse("  File \"a.py\", line 1\nx\ny\nz\nw\nv\nSyntaxError: no\n").is_empty());
    }
}
