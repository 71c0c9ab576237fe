//! `retry-run summarize` (docs/commands.md, `summarize`): a digest of what
//! failed in a log of any size, read as a stream in bounded memory.
//!
//! Pure: [`Summarizer::feed`] takes the log in chunks of any size. Only the
//! lines holding one of [`classify::MARKERS`] are looked at (one
//! Aho-Corasick pass over each chunk); a few marker lines (a panic, a jest
//! failure, a traceback) also read the lines that follow them.

pub(crate) mod classify;
pub mod render;

use std::collections::{HashMap, HashSet};

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

pub use classify::Counts;
use classify::{Marker, StylishFile, classify, go_frame, has_location, jest_location, test_counts};

/// At most this many entries per digest section are kept in memory;
/// the rest are only counted.
const MAX_ENTRIES: usize = 2000;
/// Longer lines are cut when stored.
const MAX_LINE: usize = 300;
/// A marker line asks for at most this many lines after it.
const FOLLOW_LINES: usize = 40;
/// pytest's assertion lines start with this marker.
const PYTEST_E: &str = "E   ";
/// cargo test's totals lines hold this marker.
const TEST_RESULT: &str = "test result: ";
/// A line longer than this is not kept whole across chunks (only its start).
const MAX_CARRY: usize = 64 * 1024;
/// At most this many failing test ids are remembered to list each once
/// (beyond [`MAX_ENTRIES`] they are only counted).
const MAX_IDS: usize = 100_000;
/// go -v: at most this many of a running test's log lines wait for its result.
const MAX_GO_PENDING: usize = 50;

/// A section of the digest: entries in order of appearance, without repeats.
#[derive(Debug, Default, Clone)]
pub struct Section {
    pub entries: Vec<String>,
    seen: HashSet<String>,
    /// Entries not kept because the section was full.
    pub dropped: usize,
}

impl Section {
    fn push(&mut self, s: String) {
        if self.seen.contains(&s) {
            return;
        }
        if self.entries.len() >= MAX_ENTRIES {
            self.dropped += 1;
            return;
        }
        self.seen.insert(s.clone());
        self.entries.push(s);
    }
}

/// What the log said, by section.
#[derive(Debug, Default, Clone)]
pub struct Digest {
    /// Failing test ids, with their reason when the runner printed one.
    pub failed_tests: Section,
    /// Errors with their locations (`path:line[:col]: what`).
    pub errors: Section,
    /// Assertion lines, panic messages, error messages.
    pub details: Section,
    /// The runners' own totals lines.
    pub totals: Section,
    /// Tests failed, passed and in error, summed over the runners' totals
    /// lines (every `test result:` of a `cargo test` of several binaries);
    /// go, which prints no totals, by its `--- FAIL` and `--- PASS` lines.
    /// `None` when the log holds neither.
    pub counts: Option<Counts>,
    pub lines: u64,
    pub bytes: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Follow {
    None,
    /// cargo test panic message lines, until a blank line or `note:`.
    Panic {
        location: String,
        thread: String,
        message: Vec<String>,
    },
    /// jest: message and expected/received lines, then the first project frame.
    Jest {
        name: String,
        message: Vec<String>,
    },
    /// go: the first frame outside the Go root.
    GoPanic {
        message: String,
    },
    /// Python: the frames, then the exception line.
    Traceback {
        last_frame: Option<String>,
    },
}

/// How a marker is searched for. The one pass over the log costs what its
/// patterns' first bytes cost: a pattern that starts the way many lines of
/// a passing run do turns each of them into a candidate to verify.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Search {
    /// As it is.
    Whole,
    /// With the newline before it: the marker counts only at the start of a
    /// line, and its spaces alone would match every padded `PASSED   [ 42%]`.
    LineStart,
    /// Without its first `k` bytes, checked on each hit: `test` starts no
    /// search, as it is in every line of a verbose vitest or jest log
    /// (`src/a.test.ts`) and of a pytest one (`tests/test_a.py`).
    Tail(usize),
}

impl Search {
    /// What is searched for, for `marker`.
    fn pattern(self, marker: &str) -> String {
        match self {
            Search::Whole => marker.to_string(),
            Search::LineStart => format!("\n{marker}"),
            Search::Tail(k) => marker[k..].to_string(),
        }
    }
}

/// How `marker` (one of [`classify::MARKERS`]) is searched for.
fn search_form(marker: &str) -> Search {
    match marker {
        PYTEST_E => Search::LineStart,
        TEST_RESULT => Search::Tail("tes".len()),
        _ => Search::Whole,
    }
}

pub struct Summarizer {
    markers: AhoCorasick,
    carry: Vec<u8>,
    follow: Follow,
    follow_left: usize,
    pending_header: Option<String>,
    e_lines_in_block: usize,
    last_frame: Option<String>,
    /// Failing test ids already listed, and where (`None`: not kept).
    failed_ids: HashMap<String, Option<usize>>,
    /// Summed totals lines.
    totals: Option<Counts>,
    /// go's `--- FAIL` and `--- PASS` lines, and whether `-v` was on.
    go_failed: u64,
    go_passed: u64,
    go_verbose: bool,
    /// go -v: log lines of running tests, until a result says whose they were.
    go_pending: Vec<String>,
    /// ESLint stylish: the file its last header named.
    lint_file: Option<String>,
    digest: Digest,
}

impl Default for Summarizer {
    fn default() -> Self {
        Self::new()
    }
}

impl Summarizer {
    pub fn new() -> Self {
        // The marker list is a constant; building it cannot fail.
        // Leftmost-first lets aho-corasick use its SIMD (Teddy) prefilter; a
        // DFA makes the verification between candidates cheap.
        let patterns: Vec<String> = classify::MARKERS.iter().map(|m| search_form(m).pattern(m)).collect();
        let markers = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostFirst)
            .kind(Some(AhoCorasickKind::DFA))
            .build(patterns)
            .expect("constant marker list compiles");
        Summarizer {
            markers,
            carry: Vec::new(),
            follow: Follow::None,
            follow_left: 0,
            pending_header: None,
            e_lines_in_block: 0,
            last_frame: None,
            failed_ids: HashMap::new(),
            totals: None,
            go_failed: 0,
            go_passed: 0,
            go_verbose: false,
            go_pending: Vec::new(),
            lint_file: None,
            digest: Digest::default(),
        }
    }

    /// Reads the next piece of the log.
    pub fn feed(&mut self, chunk: &[u8]) {
        self.digest.bytes += chunk.len() as u64;
        let Some(last_nl) = memchr::memrchr(b'\n', chunk) else {
            self.carry_more(chunk);
            return;
        };
        if self.carry.is_empty() {
            self.scan(&chunk[..=last_nl]);
        } else {
            // Complete the carried line, then scan the rest in place.
            let first_nl = memchr::memchr(b'\n', chunk).unwrap_or(last_nl);
            let mut line = std::mem::take(&mut self.carry);
            line.extend_from_slice(&chunk[..=first_nl]);
            self.scan(&line);
            self.scan(&chunk[first_nl + 1..=last_nl]);
        }
        self.carry_more(&chunk[last_nl + 1..]);
    }

    fn carry_more(&mut self, bytes: &[u8]) {
        let room = MAX_CARRY.saturating_sub(self.carry.len());
        self.carry.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }

    /// The digest, once the whole log was fed.
    pub fn finish(mut self) -> Digest {
        if !self.carry.is_empty() {
            let mut last = std::mem::take(&mut self.carry);
            last.push(b'\n');
            self.digest.bytes -= 1; // the newline was not in the log
            self.scan(&last);
        }
        self.end_follow();
        self.flush_go_pending();
        let go = (self.go_failed > 0 || self.go_passed > 0 || self.go_verbose).then_some(Counts {
            failed: self.go_failed,
            passed: self.go_verbose.then_some(self.go_passed),
            errors: 0,
        });
        self.digest.counts = match (self.totals, go) {
            (Some(mut t), Some(g)) => {
                t.add(g);
                Some(t)
            }
            (t, g) => t.or(g),
        };
        self.digest
    }

    /// Lists a failing test once by its id; a reason printed later (pytest's
    /// short summary after its `-v` line) completes the entry.
    fn push_failed_test(&mut self, id: String, reason: Option<String>) {
        let entry = |reason: Option<&String>| {
            cut(&match reason {
                Some(r) => format!("{id} - {r}"),
                None => id.clone(),
            })
        };
        let section = &mut self.digest.failed_tests;
        match self.failed_ids.get(&id) {
            Some(Some(at)) => {
                if reason.is_some() && section.entries[*at] == cut(&id) {
                    section.entries[*at] = entry(reason.as_ref());
                }
            }
            Some(None) => {}
            None => {
                let at = (section.entries.len() < MAX_ENTRIES).then_some(section.entries.len());
                match at {
                    Some(_) => section.entries.push(entry(reason.as_ref())),
                    None => section.dropped += 1,
                }
                if self.failed_ids.len() < MAX_IDS {
                    self.failed_ids.insert(id, at);
                }
            }
        }
    }

    /// go -v: the waiting log lines belonged to a failing test.
    fn flush_go_pending(&mut self) {
        for l in std::mem::take(&mut self.go_pending) {
            self.digest.errors.push(l);
        }
    }

    /// Scans whole lines (`buf` ends with `\n`), without their terminal
    /// escapes (an escape never spans lines).
    fn scan(&mut self, buf: &[u8]) {
        match crate::text::plain_bytes(buf) {
            std::borrow::Cow::Borrowed(b) => self.scan_plain(b),
            std::borrow::Cow::Owned(b) => self.scan_plain(&b),
        }
    }

    fn scan_plain(&mut self, buf: &[u8]) {
        self.digest.lines += memchr::memchr_iter(b'\n', buf).count() as u64;
        let mut pos = 0;
        // Where the last ESLint stylish row read in `buf` ends.
        let mut last_row_end = usize::MAX;
        while pos < buf.len() {
            if self.follow_left > 0 {
                let end = memchr::memchr(b'\n', &buf[pos..]).map_or(buf.len(), |i| pos + i);
                let line = String::from_utf8_lossy(&buf[pos..end]);
                self.follow_line(&line);
                pos = end + 1;
                continue;
            }
            let Some(at) = self.next_marker(buf, pos) else { break };
            let start = memchr::memrchr(b'\n', &buf[pos..at]).map_or(pos, |i| pos + i + 1);
            let end = memchr::memchr(b'\n', &buf[at..]).map_or(buf.len(), |i| at + i);
            let line = String::from_utf8_lossy(&buf[start..end]);
            if classify::is_stylish_row(line.strip_suffix('\r').unwrap_or(&line)) {
                match classify::stylish_file(&buf[..start], last_row_end) {
                    StylishFile::Named(f) => self.lint_file = Some(f),
                    StylishFile::Earlier => {}
                    StylishFile::Unnamed => self.lint_file = None,
                }
                last_row_end = end + 1;
            }
            self.marker_line(&line);
            pos = end + 1;
        }
    }

    /// Where the first marker at or after `pos` (the start of a line) is.
    fn next_marker(&self, buf: &[u8], pos: usize) -> Option<usize> {
        // The one line a newline-led search cannot find.
        if buf[pos..].starts_with(PYTEST_E.as_bytes()) {
            return Some(pos);
        }
        let mut from = pos;
        loop {
            let m = self.markers.find(&buf[from..])?;
            let hit = from + m.start();
            let marker = classify::MARKERS[m.pattern().as_usize()];
            match search_form(marker) {
                Search::Whole => return Some(hit),
                Search::LineStart => return Some(hit + 1),
                Search::Tail(k) if hit >= pos + k && buf[hit - k..].starts_with(marker.as_bytes()) => {
                    return Some(hit - k);
                }
                Search::Tail(_) => from = hit + 1,
            }
        }
    }

    fn marker_line(&mut self, line: &str) {
        match classify(line) {
            Marker::FailedTest { id, reason } => self.push_failed_test(id, reason),
            Marker::GoFailed(id) => {
                self.go_failed += 1;
                self.flush_go_pending();
                self.push_failed_test(id, None);
            }
            Marker::GoPassed => {
                self.go_passed += 1;
                self.go_verbose = true;
                self.go_pending.clear();
            }
            Marker::GoRun => self.go_verbose = true,
            Marker::Passing => {
                // A skipped go test's log lines were not a failure's.
                self.go_pending.clear();
            }
            Marker::Location(l) if self.go_verbose && line.starts_with("    ") && l.contains("_test.go:") => {
                if self.go_pending.len() < MAX_GO_PENDING {
                    self.go_pending.push(cut(&l));
                }
            }
            Marker::Location(l) => self.digest.errors.push(cut(&l)),
            Marker::CompilerHeader(h) => {
                self.pending_header = Some(h);
                return;
            }
            Marker::Arrow(loc) => {
                if let Some(h) = self.pending_header.take() {
                    self.digest.errors.push(cut(&format!("{loc}: {h}")));
                }
            }
            Marker::Panic { location, thread } => {
                self.start_follow(Follow::Panic { location, thread, message: Vec::new() });
            }
            Marker::JestFailure(name) => {
                self.push_failed_test(name.clone(), None);
                self.start_follow(Follow::Jest { name, message: Vec::new() });
            }
            Marker::GoPanic(message) => self.start_follow(Follow::GoPanic { message }),
            Marker::Traceback => self.start_follow(Follow::Traceback { last_frame: None }),
            Marker::BlockHeader => {
                self.e_lines_in_block = 0;
                self.last_frame = None;
            }
            Marker::Frame(f) => {
                self.last_frame = Some(f);
                return;
            }
            // cargo test's closing `failures:` list names each failing test again.
            Marker::Detail(s) if self.failed_ids.contains_key(&s) => {}
            Marker::Detail(s) => self.detail(s),
            Marker::LintRow(row) => {
                let at = self.lint_file.as_deref().map(|f| format!("{f}:")).unwrap_or_default();
                self.digest.errors.push(cut(&format!("{at}{row}")));
            }
            Marker::Totals(t) => self.totals_line(t),
            Marker::Nothing => {}
        }
        if !line.trim().is_empty() {
            self.pending_header = None;
        }
    }

    /// An assertion line, a panic's or an error's message; pytest's `E`
    /// lines with the frame before them also as an error, four at most
    /// per failure block.
    fn detail(&mut self, s: String) {
        let is_e = s.starts_with("E ");
        if is_e && let Some(frame) = self.last_frame.take() {
            self.digest.errors.push(cut(&format!("{frame}: {}", s.trim_start_matches('E').trim())));
        }
        if !is_e || self.e_lines_in_block < 4 {
            self.digest.details.push(cut(&s));
        }
        if is_e {
            self.e_lines_in_block += 1;
        }
    }

    /// A runner's totals line: its counts added up, and go's package line
    /// ending the wait of the log lines before it.
    fn totals_line(&mut self, t: String) {
        if let Some(c) = test_counts(&t) {
            self.totals.get_or_insert(Counts { passed: Some(0), ..Counts::default() }).add(c);
        } else if t.starts_with("FAIL\t") || t.starts_with("ok ") {
            self.flush_go_pending();
        }
        self.digest.totals.push(cut(&t));
    }

    fn start_follow(&mut self, f: Follow) {
        self.end_follow();
        self.follow = f;
        self.follow_left = FOLLOW_LINES;
    }

    fn follow_line(&mut self, line: &str) {
        self.follow_left -= 1;
        let t = line.trim();
        let done = match &mut self.follow {
            Follow::None => true,
            Follow::Panic { message, .. } => {
                let stop = t.is_empty() || t.starts_with("note: ") || t.starts_with("stack backtrace:");
                if !stop {
                    message.push(t.to_string());
                }
                stop
            }
            Follow::Jest { message, .. } => {
                if let Some(loc) = jest_location(line) {
                    message.push(format!("@{loc}"));
                    true
                } else {
                    let code_frame = t.starts_with('>')
                        || t.starts_with('|')
                        || t.split('|').next().is_some_and(|n| n.trim().parse::<u32>().is_ok());
                    if !t.is_empty() && !code_frame && message.len() < 4 {
                        message.push(t.to_string());
                    }
                    t.starts_with("● ")
                }
            }
            Follow::GoPanic { message } => match go_frame(line) {
                Some(frame) => {
                    self.digest.errors.push(cut(&format!("{frame}: panic: {message}")));
                    self.follow = Follow::None;
                    true
                }
                None => false,
            },
            Follow::Traceback { last_frame } => {
                if let Some(rest) = t.strip_prefix("File \"") {
                    if let Some((path, rest)) = rest.split_once("\", line ") {
                        let n: String = rest.chars().take_while(char::is_ascii_digit).collect();
                        *last_frame = Some(format!("{path}:{n}"));
                    }
                    false
                } else if !line.starts_with(' ') && !t.is_empty() {
                    let frame = last_frame.take().unwrap_or_default();
                    let entry = if frame.is_empty() { t.to_string() } else { format!("{frame}: {t}") };
                    self.digest.errors.push(cut(&entry));
                    self.follow = Follow::None;
                    true
                } else {
                    false
                }
            }
        };
        if done || self.follow_left == 0 {
            let was_jest_header = matches!(self.follow, Follow::Jest { .. }) && t.starts_with("● ");
            self.end_follow();
            self.follow_left = 0;
            if was_jest_header {
                self.marker_line(line);
            }
        }
    }

    /// Records what a follow collected.
    fn end_follow(&mut self) {
        match std::mem::replace(&mut self.follow, Follow::None) {
            Follow::Panic { location, thread, message } => {
                let who = if thread == "main" { String::new() } else { format!(" ({thread})") };
                let first = message.first().cloned().unwrap_or_default();
                self.digest.errors.push(cut(&format!("{location}: panicked{who}: {first}")));
                for m in message.iter().skip(1).take(4) {
                    self.digest.details.push(cut(&format!("{thread}: {m}")));
                }
            }
            Follow::Jest { name, message } => {
                let loc = message.iter().find_map(|m| m.strip_prefix('@'));
                let text: Vec<&str> = message.iter().filter(|m| !m.starts_with('@')).map(String::as_str).collect();
                if let Some(loc) = loc {
                    self.digest.errors.push(cut(&format!("{loc}: {}", text.first().copied().unwrap_or(&name))));
                }
                for m in text.iter().skip(usize::from(loc.is_some())) {
                    self.digest.details.push(cut(&format!("{name}: {m}")));
                }
            }
            Follow::GoPanic { message } => self.digest.details.push(cut(&format!("panic: {message}"))),
            Follow::Traceback { last_frame: Some(frame) } if has_location(&frame) => {
                self.digest.errors.push(cut(&format!("{frame}: (traceback ends before its exception)")))
            }
            _ => {}
        }
    }
}

fn cut(s: &str) -> String {
    crate::text::clip(s, MAX_LINE, "...").into_owned()
}

/// The digest of a whole log held in memory (tests, small inputs).
pub fn summarize(log: &[u8]) -> Digest {
    let mut s = Summarizer::new();
    s.feed(log);
    s.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `E   ` lines are found wherever they stand: first in the log, first
    /// after a carried line, and after other lines; never in mid-line.
    #[test]
    fn pytest_e_lines_at_every_line_start_whatever_the_chunks() {
        let log = b"E       assert 1 == 2\nt.py::a PASSED     [ 50%]\nE       assert 3 == 4\nx E   not a detail\n";
        let whole = summarize(log);
        assert_eq!(whole.details.entries, ["E       assert 1 == 2", "E       assert 3 == 4"]);
        for split in 1..log.len() {
            let mut s = Summarizer::new();
            s.feed(&log[..split]);
            s.feed(&log[split..]);
            assert_eq!(s.finish().details.entries, whole.details.entries, "split at {split}");
        }
    }

    /// `test result: ` is searched for without its `tes`: found at the start
    /// of the log, of a chunk and of any line, and not confused by a
    /// `t result: ` that is not part of it (passed over, the search goes on).
    #[test]
    fn test_result_found_by_its_tail_whatever_the_chunks() {
        let log = b"test result: FAILED. 1 passed; 1 failed; 0 ignored\n\
            what result: ok\n\
            t result: ok\n\
            test result: ok. 2 passed; 0 failed; 0 ignored\n";
        let whole = summarize(log);
        assert_eq!(
            whole.totals.entries,
            ["test result: FAILED. 1 passed; 1 failed; 0 ignored", "test result: ok. 2 passed; 0 failed; 0 ignored"]
        );
        assert_eq!(whole.counts, Some(Counts { failed: 1, passed: Some(3), errors: 0 }));
        for split in 1..log.len() {
            let mut s = Summarizer::new();
            s.feed(&log[..split]);
            s.feed(&log[split..]);
            assert_eq!(s.finish().totals.entries, whole.totals.entries, "split at {split}");
        }
    }
}
