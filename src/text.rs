//! Text for people: cutting text without splitting a character, plurals,
//! durations, sizes and how a process ended. Pure.

use std::borrow::Cow;

/// The largest char boundary of `s` at or before `i`.
pub fn floor_char_boundary(s: &str, i: usize) -> usize {
    let mut i = i.min(s.len());
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// `s` when it has at most `max` bytes, else its first `max` bytes (on a
/// char boundary) followed by `mark`.
pub fn clip<'a>(s: &'a str, max: usize, mark: &str) -> Cow<'a, str> {
    if s.len() <= max { Cow::Borrowed(s) } else { Cow::Owned(format!("{}{mark}", &s[..floor_char_boundary(s, max)])) }
}

/// The plural `s` of a count: `""` for 1, else `"s"`.
pub fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// `1.2s`, `3m 04s`, `1h 02m`.
pub fn human_ms(ms: u64) -> String {
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
pub fn human_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

/// How a process ended: `exited with code 2`, `was killed by signal 9 (SIGKILL)`.
pub fn exit_text(code: Option<i32>, signal: Option<i32>) -> String {
    match (code, signal) {
        (_, Some(s)) => format!("was killed by signal {s} ({})", signal_name(s)),
        (Some(c), None) => format!("exited with code {c}"),
        (None, None) => "ended without an exit status".into(),
    }
}

/// The name of a common signal (`SIGKILL`), else `signal`.
pub fn signal_name(s: i32) -> &'static str {
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

#[cfg(test)]
mod tests {
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
}
