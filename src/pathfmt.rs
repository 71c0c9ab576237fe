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
//!
//! That is the form kept in records and JSON. What is printed for a person
//! ([`shown`], docs/commands.md, "What retry-run prints") quotes a path
//! also when it holds a control character (`\n` and `\t` included: a name
//! must not draw a line of its own) or a bidirectional override or isolate,
//! and writes those characters escaped, C1 and bidirectional ones as the
//! octal escapes of their UTF-8 bytes, as git does (`\342\200\256`).

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

/// The form of a repository path printed for a person: [`display`], and
/// also quoted when it holds a control character (any, `\n` and `\t`
/// included) or a bidirectional control, each written escaped.
pub fn shown(path: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(path) {
        Ok(s) if !s.starts_with('"') && !s.chars().any(needs_escape) => Cow::Borrowed(s),
        _ => Cow::Owned(quote_with(path, true)),
    }
}

/// [`shown`] for a path kept as text in a record (its [`display`] form): a
/// quoted one is already escaped (a C1 or bidirectional control left in it
/// is shown as free text is, [`crate::text::visible`]).
pub fn shown_text(path: &str) -> Cow<'_, str> {
    if path.starts_with('"') { crate::text::visible(path) } else { shown(path.as_bytes()) }
}

/// A path of many names shortened for a sentence: its first three names
/// and its last, `a/b/c/…/z` (a directory cut a hundred levels down). Pure.
pub fn brief(path: &str) -> Cow<'_, str> {
    let names: Vec<&str> = path.split('/').collect();
    match names.as_slice() {
        [a, b, c, _, _, _, .., z] => Cow::Owned(format!("{a}/{b}/{c}/…/{z}")),
        _ => Cow::Borrowed(path),
    }
}

/// A character [`shown`] writes escaped, inside quotes.
fn needs_escape(c: char) -> bool {
    c.is_control() || crate::text::is_bidi_control(c)
}

/// git's C-style quoting of a path, always quoted.
pub fn quote(path: &[u8]) -> String {
    quote_with(path, false)
}

/// [`quote`]; with `all`, C1 and bidirectional controls are escaped too,
/// as the octal escapes of their UTF-8 bytes.
fn quote_with(path: &[u8], all: bool) -> String {
    let mut out = String::with_capacity(path.len() + 2);
    out.push('"');
    let mut rest = path;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(valid) => {
                push_escaped(&mut out, valid, all);
                break;
            }
            Err(e) => {
                let (good, bad) = rest.split_at(e.valid_up_to());
                // `good` is valid by construction.
                push_escaped(&mut out, std::str::from_utf8(good).unwrap_or_default(), all);
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

fn push_escaped(out: &mut String, s: &str, all: bool) {
    for c in s.chars() {
        if all && (c as u32) >= 0x80 && needs_escape(c) {
            let mut utf8 = [0u8; 4];
            for b in c.encode_utf8(&mut utf8).bytes() {
                out.push_str(&format!("\\{b:03o}"));
            }
        } else {
            push_char(out, c);
        }
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
    fn paths_shown_to_a_person_escape_every_control() {
        let cases: &[(&[u8], &str)] = &[
            (b"src/lib.rs", "src/lib.rs"),
            ("caf\u{e9}/\u{65e5}.md".as_bytes(), "caf\u{e9}/\u{65e5}.md"),
            (b"evil\x1b]52;c;aGk=\x07.txt", "\"evil\\033]52;c;aGk=\\a.txt\""),
            (b"a\nb\tc\rd", "\"a\\nb\\tc\\rd\""),
            (b"del\x7f", "\"del\\177\""),
            ("c1\u{9b}2J".as_bytes(), "\"c1\\302\\2332J\""),
            ("gnp.\u{202e}exe".as_bytes(), "\"gnp.\\342\\200\\256exe\""),
            (b"bad\xff\x1b", "\"bad\\377\\033\""),
            (b"\"q\"", "\"\\\"q\\\"\""),
        ];
        for (input, want) in cases {
            assert_eq!(shown(input), *want, "path {:?}", input);
            assert!(!shown(input).chars().any(crate::text::is_hidden));
        }
        // What a record holds: its quoted form stays, its plain form is shown.
        assert_eq!(shown_text("\"bad\\377.txt\""), "\"bad\\377.txt\"");
        assert_eq!(shown_text("a\x1bb"), "\"a\\033b\"");
        assert_eq!(shown_text("src/a.rs"), "src/a.rs");
        // The record's form itself is unchanged.
        assert_eq!(display(b"a\x1bb"), "a\x1bb");
    }

    #[test]
    fn long_paths_are_brief() {
        assert_eq!(brief("a/b/c/d/e/f"), "a/b/c/d/e/f");
        assert_eq!(brief("deep0/d/d/d/d/d/d/e"), "deep0/d/d/…/e");
        assert_eq!(brief(""), "");
    }

    #[test]
    fn distinct_paths_print_distinct() {
        let a: &[u8] = b"\"a\\377\"";
        let b: &[u8] = b"a\xff";
        assert_ne!(display(a), display(b));
    }
}
