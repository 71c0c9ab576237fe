//! Pieces of a tool's line that several readers share: lines without
//! their `\r`, a `path:line[:col]` location, a trailing `[code]`.

/// Lines without their `\r`, so that CRLF output reads like LF output.
pub(super) fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().map(|l| l.strip_suffix('\r').unwrap_or(l))
}

/// A `path:line[:col]` location at the start of `s`, and the rest after the
/// colon that ends it. The path may hold colons (`C:\x.py`, `a:b.py`): the
/// location ends at the first `:digits` followed by `:`, whitespace or the end.
pub(super) fn location_prefix(s: &str) -> Option<(&str, usize, Option<usize>, &str)> {
    let bytes = s.as_bytes();
    let mut search = 0;
    while let Some(off) = s[search..].find(':') {
        let colon = search + off;
        let digits = bytes[colon + 1..].iter().take_while(|b| b.is_ascii_digit()).count();
        let after = colon + 1 + digits;
        let ends_ok = after == bytes.len() || bytes[after] == b':' || bytes[after].is_ascii_whitespace();
        if digits > 0 && ends_ok && colon > 0 {
            let path = &s[..colon];
            if path.starts_with(char::is_whitespace) {
                return None;
            }
            let line = s[colon + 1..after].parse().ok()?;
            let mut rest = &s[after..];
            let mut column = None;
            if let Some(r) = rest.strip_prefix(':') {
                let cd = r.bytes().take_while(|b| b.is_ascii_digit()).count();
                if cd > 0 && (cd == r.len() || r.as_bytes()[cd] == b':' || r.as_bytes()[cd].is_ascii_whitespace()) {
                    column = r[..cd].parse().ok();
                    rest = &r[cd..];
                    rest = rest.strip_prefix(':').unwrap_or(rest);
                } else {
                    rest = r;
                }
            }
            return Some((path, line, column, rest.trim_start()));
        }
        search = colon + 1;
    }
    None
}

/// `[code]` at the end of a message (mypy, gcc): the message without it,
/// and the code.
pub(super) fn trailing_bracket_code(message: &str) -> (&str, Option<&str>) {
    let m = message.trim_end();
    if let Some(body) = m.strip_suffix(']')
        && let Some(open) = body.rfind('[')
    {
        let code = &body[open + 1..];
        if !code.is_empty() && !code.contains(char::is_whitespace) {
            return (body[..open].trim_end(), Some(code));
        }
    }
    (m, None)
}
