//! Printing repository paths, which are bytes, as text.
//!
//! A valid UTF-8 path is written as it is. Any other path is written the way
//! git quotes it (`core.quotePath`): in double quotes, each byte that is not
//! part of valid UTF-8 as a three-digit octal escape (`\377`), `"` and `\`
//! backslash-escaped, and control characters as git writes them (`\n`,
//! `\t`, ...). So two distinct paths never print the same.
//!
//! One addition to that rule: a valid UTF-8 path that itself *starts* with
//! `"` is quoted too, because written as it is it could read like the quoted
//! form of another path.

use std::borrow::Cow;

/// The last component of a repository path (`b"a/b.rs"` -> `b"b.rs"`).
pub fn basename(path: &[u8]) -> &[u8] {
    path.rsplit(|&b| b == b'/').next().unwrap_or(path)
}

/// The printable form of a repository path.
pub fn display(path: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(path) {
        Ok(s) if !s.starts_with('"') => Cow::Borrowed(s),
        _ => Cow::Owned(quote(path)),
    }
}

/// git's C-style quoting of a path, always quoted.
pub fn quote(path: &[u8]) -> String {
    let mut out = String::with_capacity(path.len() + 2);
    out.push('"');
    let mut rest = path;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(valid) => {
                push_escaped(&mut out, valid);
                break;
            }
            Err(e) => {
                let (good, bad) = rest.split_at(e.valid_up_to());
                // `good` is valid by construction.
                push_escaped(&mut out, std::str::from_utf8(good).unwrap_or_default());
                let n = e.error_len().unwrap_or(bad.len());
                for b in &bad[..n] {
                    out.push_str(&format!("\\{b:03o}"));
                }
                rest = &bad[n..];
            }
        }
    }
    out.push('"');
    out
}

fn push_escaped(out: &mut String, s: &str) {
    for c in s.chars() {
        push_char(out, c);
    }
}

/// One character as git's C-style quoting writes it.
fn push_char(out: &mut String, c: char) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\x07' => out.push_str("\\a"),
        '\x08' => out.push_str("\\b"),
        '\t' => out.push_str("\\t"),
        '\n' => out.push_str("\\n"),
        '\x0b' => out.push_str("\\v"),
        '\x0c' => out.push_str("\\f"),
        '\r' => out.push_str("\\r"),
        c if (c as u32) < 0x20 || c == '\x7f' => out.push_str(&format!("\\{:03o}", c as u32)),
        c => out.push(c),
    }
}

/// A path as git writes it in patch headers (`core.quotePath`, the
/// default): as it is when it is plain printable ASCII without `"` or `\`,
/// else quoted with every other byte, UTF-8 included, as an octal escape.
pub fn quote_ascii(path: &[u8]) -> String {
    if !path.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\' || b >= 0x7f) {
        return String::from_utf8_lossy(path).into_owned();
    }
    let mut out = String::from("\"");
    for &b in path {
        if b >= 0x80 {
            out.push_str(&format!("\\{b:03o}"));
        } else {
            push_char(&mut out, char::from(b));
        }
    }
    out.push('"');
    out
}

/// `path` as the user gave it, made absolute against `dir` (the directory
/// retry-run runs in, `-C`). Pure: no file is looked at.
pub fn absolute(path: &std::path::Path, dir: &std::path::Path) -> std::path::PathBuf {
    if path.is_absolute() { path.to_path_buf() } else { dir.join(path) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table() {
        let cases: &[(&[u8], &str)] = &[
            (b"src/lib.rs", "src/lib.rs"),
            (b"dir with space/a b.txt", "dir with space/a b.txt"),
            ("unicod\u{e9}/\u{65e5}\u{672c}.md".as_bytes(), "unicod\u{e9}/\u{65e5}\u{672c}.md"),
            (b"-leading-dash", "-leading-dash"),
            (b"a\nb", "a\nb"),
            (b"bad\xff.txt", "\"bad\\377.txt\""),
            (b"\xfe\xff", "\"\\376\\377\""),
            (b"q\"uo\\te\xff", "\"q\\\"uo\\\\te\\377\""),
            (b"nl\n\xff", "\"nl\\n\\377\""),
            // A truncated multi-byte sequence: every byte escaped.
            (b"x\xe6\x97", "\"x\\346\\227\""),
            // Valid UTF-8 before and after an invalid byte stays readable.
            ("\u{e9}\u{ff}".as_bytes(), "\u{e9}\u{ff}"),
            (b"\xc3\xa9\x80\xc3\xa9", "\"\u{e9}\\200\u{e9}\""),
            (b"\"quoted\"", "\"\\\"quoted\\\"\""),
        ];
        for (input, want) in cases {
            assert_eq!(display(input), *want, "path {:?}", input);
        }
    }

    #[test]
    fn header_quoting() {
        assert_eq!(quote_ascii(b"a/src/x.rs"), "a/src/x.rs");
        assert_eq!(quote_ascii(b"a/with space"), "a/with space");
        assert_eq!(quote_ascii("b/caf\u{e9}".as_bytes()), "\"b/caf\\303\\251\"");
        assert_eq!(quote_ascii(b"a/new\nline"), "\"a/new\\nline\"");
        assert_eq!(quote_ascii(b"q\"t\xff"), "\"q\\\"t\\377\"");
    }

    #[test]
    fn distinct_paths_print_distinct() {
        let a: &[u8] = b"\"a\\377\"";
        let b: &[u8] = b"a\xff";
        assert_ne!(display(a), display(b));
    }
}
