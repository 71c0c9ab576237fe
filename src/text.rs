//! Text for people: cutting text without splitting a character, plurals,
//! durations, sizes, how a process ended, and control characters made
//! visible ([`visible`], docs/commands.md, "What retry-run prints"). Pure.

use std::borrow::Cow;
use std::io::{self, Write};

/// The largest char boundary of `s` at or before `i`.
pub(crate) fn floor_char_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// `s` when it has at most `max` bytes, else its first `max` bytes (on a
/// char boundary) followed by `mark`.
pub(crate) fn clip<'a>(s: &'a str, max: usize, mark: &str) -> Cow<'a, str> {
    if s.len() <= max { Cow::Borrowed(s) } else { Cow::Owned(format!("{}{mark}", &s[..floor_char_boundary(s, max)])) }
}

/// The plural `s` of a count: `""` for 1, else `"s"`.
/// `bytes` without terminal escapes: colours and cursor moves (`ESC [
/// ... final`), operating-system commands (`ESC ] ... BEL` or `ESC \\`,
/// links) and other two-byte escapes; carriage returns kept. Borrowed when
/// there is none. What every reader of a tool's output sees, whatever
/// colours the tool forced into a pipe.
pub(crate) fn plain_bytes(bytes: &[u8]) -> Cow<'_, [u8]> {
    if memchr::memchr(0x1b, bytes).is_none() {
        return Cow::Borrowed(bytes);
    }
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != 0x1b {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        match bytes.get(i + 1) {
            Some(b'[') => {
                i += 2;
                while i < bytes.len() && !(0x40..=0x7e).contains(&bytes[i]) {
                    i += 1;
                }
                i += 1;
            }
            Some(b']') => {
                i += 2;
                while i < bytes.len() && bytes[i] != 0x07 && !(bytes[i] == 0x1b && bytes.get(i + 1) == Some(&b'\\')) {
                    i += 1;
                }
                i += if bytes.get(i) == Some(&0x07) { 1 } else { 2 };
            }
            Some(_) => i += 2,
            None => i += 1,
        }
    }
    Cow::Owned(out)
}

/// [`plain_bytes`] of text.
pub(crate) fn plain(text: &str) -> Cow<'_, str> {
    match plain_bytes(text.as_bytes()) {
        Cow::Borrowed(_) => Cow::Borrowed(text),
        Cow::Owned(b) => Cow::Owned(String::from_utf8_lossy(&b).into_owned()),
    }
}

pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// `1.2s`, `3m 04s`, `1h 02m`.
pub(crate) fn human_ms(ms: u64) -> String {
    let s = ms / 1000;
    if s < 60 {
        format!("{}.{}s", s, (ms % 1000) / 100)
    } else if s < 3600 {
        format!("{}m {:02}s", s / 60, s % 60)
    } else {
        format!("{}h {:02}m", s / 3600, (s % 3600) / 60)
    }
}

/// `512 B`, `1.5 KiB`, `3.0 MiB`, `2.1 GiB`.
pub(crate) fn human_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

/// How a process ended: `exited with code 2`, `was killed by signal 9 (SIGKILL)`.
pub(crate) fn exit_text(code: Option<i32>, signal: Option<i32>) -> String {
    match (code, signal) {
        (_, Some(s)) => format!("was killed by signal {s} ({})", signal_name(s)),
        (Some(c), None) => format!("exited with code {c}"),
        (None, None) => "ended without an exit status".into(),
    }
}

/// The name of a common signal (`SIGKILL`), else `signal`.
pub(crate) fn signal_name(s: i32) -> &'static str {
    match s {
        1 => "SIGHUP",
        2 => "SIGINT",
        3 => "SIGQUIT",
        4 => "SIGILL",
        6 => "SIGABRT",
        7 => "SIGBUS",
        8 => "SIGFPE",
        9 => "SIGKILL",
        11 => "SIGSEGV",
        13 => "SIGPIPE",
        14 => "SIGALRM",
        15 => "SIGTERM",
        _ => "signal",
    }
}

/// A Unicode bidirectional override or isolate (U+202A..U+202E,
/// U+2066..U+2069): it can reorder the text a reviewer sees around it.
pub(crate) fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Whether `c` is shown escaped in what retry-run prints: a C0 control
/// other than `\n` and `\t`, DEL, a C1 control (U+0080..U+009F) or a
/// bidirectional override or isolate.
pub(crate) fn is_hidden(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || is_bidi_control(c)
}

/// One hidden character as it is shown: `\r` for CR; `\x1b` for the
/// other C0 controls and DEL (`\x00`..`\x1f`, `\x7f`); `\u{9b}` for a C1
/// control and `\u{202e}` for a bidirectional control (so `\u{9b}`, the
/// character, is never confused with `\x9b`, a byte that is not UTF-8).
fn push_shown(out: &mut String, c: char) {
    match c {
        '\r' => out.push_str("\\r"),
        c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
        c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
    }
}

/// `s` with every [hidden](is_hidden) character written as a visible
/// ASCII escape (`ESC` -> `\x1b`, `CR` -> `\r`, U+202E -> `\u{202e}`);
/// everything else, a backslash included, as it is. For text that may come
/// from the agent, on its way to a person's terminal or report.
pub(crate) fn visible(s: &str) -> Cow<'_, str> {
    if !s.chars().any(is_hidden) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    push_visible(&mut out, s);
    Cow::Owned(out)
}

fn push_visible(out: &mut String, s: &str) {
    for c in s.chars() {
        if is_hidden(c) { push_shown(out, c) } else { out.push(c) }
    }
}

/// [`visible`] for bytes: each byte that is not part of valid UTF-8 is
/// shown as `\xNN` (`\xff`), since a lone byte of 0x80..0x9f is a C1
/// control to a terminal that is not in UTF-8 mode.
#[cfg(test)]
pub(crate) fn visible_bytes(b: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(b) {
        Ok(s) => visible(s),
        Err(_) => {
            let mut out = String::with_capacity(b.len() + 8);
            push_visible_bytes(&mut out, b, true);
            Cow::Owned(out)
        }
    }
}

/// Shows `b` into `out`; returns how many bytes it took. Without `at_end`,
/// a UTF-8 sequence cut short at the end of `b` is left for the next call.
fn push_visible_bytes(out: &mut String, b: &[u8], at_end: bool) -> usize {
    let mut rest = b;
    loop {
        match std::str::from_utf8(rest) {
            Ok(valid) => {
                push_visible(out, valid);
                return b.len();
            }
            Err(e) => {
                let (good, bad) = rest.split_at(e.valid_up_to());
                // `good` is valid UTF-8 by construction.
                push_visible(out, std::str::from_utf8(good).unwrap_or_default());
                let n = match e.error_len() {
                    Some(n) => n,
                    None if !at_end => return b.len() - bad.len(),
                    None => bad.len(),
                };
                for byte in &bad[..n] {
                    out.push_str(&format!("\\x{byte:02x}"));
                }
                rest = &bad[n..];
            }
        }
    }
}

/// A writer that shows what goes through it with [`visible_bytes`]: the
/// one place a command's text output passes on its way to the terminal.
/// With `escape` false it passes bytes on as they are (JSON output, which
/// serde already escapes). A UTF-8 sequence split between two writes is
/// held until its end arrives, or shown byte by byte at `flush`.
#[derive(Debug)]
pub(crate) struct VisibleWriter<W: Write> {
    inner: W,
    escape: bool,
    pending: Vec<u8>,
}

impl<W: Write> VisibleWriter<W> {
    pub(crate) fn new(inner: W, escape: bool) -> Self {
        VisibleWriter { inner, escape, pending: Vec::new() }
    }

    fn emit(&mut self, at_end: bool) -> io::Result<()> {
        let mut shown = String::new();
        let took = push_visible_bytes(&mut shown, &self.pending, at_end);
        self.pending.drain(..took);
        self.inner.write_all(shown.as_bytes())
    }
}

impl<W: Write> Write for VisibleWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.escape {
            return self.inner.write(buf);
        }
        self.pending.extend_from_slice(buf);
        self.emit(false)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.pending.is_empty() {
            self.emit(true)?;
        }
        self.inner.flush()
    }
}

impl<W: Write> Drop for VisibleWriter<W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn terminal_escapes_are_taken_out() {
        assert_eq!(plain("\u{1b}[31m\u{1b}[1m FAIL \u{1b}[22m\u{1b}[39m a.test.ts"), " FAIL  a.test.ts");
        assert_eq!(plain("\u{1b}]8;;http://x\u{7}link\u{1b}]8;;\u{7} done"), "link done");
        assert_eq!(plain("a\u{1b}]8;;u\u{1b}\\b"), "ab");
        assert_eq!(plain("\u{1b}7saved\u{1b}8"), "saved");
        assert!(matches!(plain("no escapes\r\n"), Cow::Borrowed("no escapes\r\n")));
        assert_eq!(plain("cut \u{1b}[3"), "cut ");
    }

    use super::*;

    #[test]
    fn counts_durations_sizes_and_exits() {
        let cases: &[(String, &str)] = &[
            (format!("{} file{}", 1, plural(1)), "1 file"),
            (format!("{} file{}", 0, plural(0)), "0 files"),
            (human_ms(1234), "1.2s"),
            (human_ms(184_000), "3m 04s"),
            (human_ms(3_720_000), "1h 02m"),
            (human_bytes(512), "512 B"),
            (human_bytes(1536), "1.5 KiB"),
            (human_bytes(3 << 20), "3.0 MiB"),
            (exit_text(Some(2), None), "exited with code 2"),
            (exit_text(None, Some(9)), "was killed by signal 9 (SIGKILL)"),
            (exit_text(None, Some(64)), "was killed by signal 64 (signal)"),
            (exit_text(None, None), "ended without an exit status"),
        ];
        for (got, want) in cases {
            assert_eq!(got, want);
        }
    }

    #[test]
    fn clips_on_char_boundaries() {
        assert_eq!(clip("abc", 3, "..."), "abc");
        assert_eq!(clip("abcd", 3, "..."), "abc...");
        assert_eq!(clip("éé", 3, "~"), "é~");
        assert_eq!(floor_char_boundary("é", 1), 0);
        assert_eq!(floor_char_boundary("ab", 9), 2);
    }

    #[test]
    fn hidden_characters_are_shown_as_escapes() {
        let cases: &[(&str, &str)] = &[
            ("plain text, tab\tand\nnewline", "plain text, tab\tand\nnewline"),
            ("\x1b]52;c;aGk=\x07", "\\x1b]52;c;aGk=\\x07"),
            ("\x1b[2J", "\\x1b[2J"),
            ("crlf\r\n", "crlf\\r\n"),
            ("back\x08space, nul\0, del\x7f", "back\\x08space, nul\\x00, del\\x7f"),
            ("\u{9b}31m C1", "\\u{9b}31m C1"),
            ("\u{85}\u{80}\u{9f}", "\\u{85}\\u{80}\\u{9f}"),
            ("abc\u{202e}fed\u{202c}", "abc\\u{202e}fed\\u{202c}"),
            ("\u{2066}\u{2067}\u{2068}\u{2069}\u{202a}", "\\u{2066}\\u{2067}\\u{2068}\\u{2069}\\u{202a}"),
            // Kept: printable non-ASCII, a left-to-right mark, a backslash.
            ("caf\u{e9} \u{65e5} \u{200e} \u{a0}", "caf\u{e9} \u{65e5} \u{200e} \u{a0}"),
            ("a\\x1b stays", "a\\x1b stays"),
        ];
        for (input, want) in cases {
            assert_eq!(visible(input), *want, "{input:?}");
            assert_eq!(visible_bytes(input.as_bytes()), *want, "{input:?}");
            // Shown text has nothing left to show.
            assert_eq!(visible(want), *want);
        }
        assert!(matches!(visible("nothing to do"), Cow::Borrowed(_)));
    }

    #[test]
    fn bytes_that_are_not_utf8_are_shown_as_hex() {
        assert_eq!(visible_bytes(b"a\x9bb"), "a\\x9bb");
        assert_eq!(visible_bytes(b"\xff\xfe\x1b"), "\\xff\\xfe\\x1b");
        // The character U+009B and the byte 0x9B read differently.
        assert_eq!(visible_bytes("\u{9b}".as_bytes()), "\\u{9b}");
        // A sequence cut short at the end.
        assert_eq!(visible_bytes(b"x\xe6\x97"), "x\\xe6\\x97");
    }

    #[test]
    fn the_writer_shows_what_goes_through_it() {
        let mut out = Vec::new();
        {
            let mut w = VisibleWriter::new(&mut out, true);
            w.write_all(b"\x1b[2J").unwrap();
            // A character split between two writes stays one character.
            w.write_all(&"\u{202e}".as_bytes()[..1]).unwrap();
            w.write_all(&"\u{202e}".as_bytes()[1..]).unwrap();
            w.write_all("\u{e9}\n".as_bytes()).unwrap();
            w.write_all(b"cut \xe6").unwrap();
            w.flush().unwrap();
        }
        assert_eq!(String::from_utf8(out).unwrap(), "\\x1b[2J\\u{202e}\u{e9}\ncut \\xe6");

        let mut raw = Vec::new();
        VisibleWriter::new(&mut raw, false).write_all(b"{\"a\":\"\x1b\"}").unwrap();
        assert_eq!(raw, b"{\"a\":\"\x1b\"}");

        // Dropped without a flush: the held bytes are still shown.
        let mut dropped = Vec::new();
        VisibleWriter::new(&mut dropped, true).write_all(b"\xe2\x80").unwrap();
        assert_eq!(dropped, b"\\xe2\\x80");
    }
}
