//! What one log line says, for the runners `summarize` understands
//! (docs/commands.md): pytest, cargo test and rustc, jest and vitest, go
//! test, and a generic fallback. Pure functions of one line; the state
//! between lines lives in `Summarizer`.

/// The markers that make a line worth looking at. A line without any of them
/// is skipped unread (unless a marker line asked for the lines after it).
pub(crate) const MARKERS: &[&str] = &[
    "FAIL",        // pytest FAILED, cargo `... FAILED`, go `--- FAIL:`/`FAIL\t`, jest/vitest `FAIL `
    "ERROR",       // pytest ERROR, generic
    "rror",        // Error/error: exceptions, rustc `error[E..]`, generic
    "panicked at", // cargo test
    "panic: ",     // go
    "Traceback (most recent call last)",
    "test result: ", // cargo test totals
    "passed",        // pytest totals
    "failed",        // pytest, vitest, jest totals
    "Tests:",        // jest totals
    "Tests  ",       // vitest totals
    "●",             // jest failure header
    "❯ ",            // vitest location
    "_test.go:",     // go test message
    "ok  \t",        // go test package totals
    "--- PASS: ",    // go test: a passing test (counted)
    "=== RUN ",      // go test -v: passing tests are printed, so counted
    "--> ",          // rustc location
    "E   ",          // pytest assertion lines
    ": in ",         // pytest --tb=short frames
    "___",           // pytest failure block header
    "---- ",         // cargo test stdout block
    "fatal",         // generic
    "Exception",     // generic
    "━━",            // biome's diagnostic header
];

/// What a marker line is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Marker {
    /// A failing test's id, and the reason when the line gives one.
    FailedTest {
        id: String,
        reason: Option<String>,
    },
    /// An error with its location: `path:line[:col]: what`.
    Location(String),
    /// The start of rustc's error or warning (its location follows on `-->`).
    CompilerHeader(String),
    /// A location line that completes the pending compiler header.
    Arrow(String),
    /// A panic in cargo test: location and thread; its message follows.
    Panic {
        location: String,
        thread: String,
    },
    /// A jest failure header; the lines after it hold the details.
    JestFailure(String),
    /// go's `panic:` line; a goroutine trace follows.
    GoPanic(String),
    /// A Python traceback starts.
    Traceback,
    /// A pytest failure block header (`____ test_x ____`).
    BlockHeader,
    /// A traceback frame (`path:line: in func`); the last one before an
    /// `E` line is where the test failed.
    Frame(String),
    /// A line to show as supporting detail (an assertion, an `E` line).
    Detail(String),
    /// ESLint stylish: an error row (`line:col: message  rule`), of the
    /// last file named.
    LintRow(String),
    /// A runner's totals line.
    Totals(String),
    /// go: a test (or subtest) failed; go prints no totals, so each counts.
    GoFailed(String),
    /// go: a test passed.
    GoPassed,
    /// go -v: a test starts (passing tests will be named).
    GoRun,
    /// A line saying that a test passed or was skipped: never a detail.
    Passing,
    Nothing,
}

/// Tests by a runner's totals line: failed, passed and errors (pytest's
/// setup, teardown and collection errors; vitest's unhandled errors).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub failed: u64,
    /// `None` when the runner does not say (go test without `-v` names
    /// only failing tests).
    pub passed: Option<u64>,
    pub errors: u64,
}

impl Counts {
    pub fn add(&mut self, other: Counts) {
        self.failed += other.failed;
        self.errors += other.errors;
        self.passed = match (self.passed, other.passed) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0) + b.unwrap_or(0)),
        };
    }
}

/// The counts of a test totals line as [`classify`] returns it (pytest,
/// cargo test's `test result:`, jest's `Tests:`, vitest's `Tests`); `None`
/// for the other totals lines (test files and suites, go's packages).
pub(crate) fn test_counts(totals: &str) -> Option<Counts> {
    let test_line = totals.starts_with("test result: ")
        || totals.starts_with("Tests:")
        || totals.starts_with("Tests ")
        || totals.chars().next().is_some_and(|c| c.is_ascii_digit());
    if !test_line {
        return None;
    }
    // `N word` pairs, whatever separates them (`, `, `; `, ` | `).
    let words: Vec<&str> = totals.split([' ', ',', ';', '|', '(', ')']).filter(|w| !w.is_empty()).collect();
    let mut counts = Counts { passed: Some(0), ..Counts::default() };
    for pair in words.windows(2) {
        let Ok(n) = pair[0].parse::<u64>() else { continue };
        match pair[1].trim_end_matches('.') {
            "failed" => counts.failed += n,
            "passed" => counts.passed = Some(counts.passed.unwrap_or(0) + n),
            "error" | "errors" => counts.errors += n,
            _ => {}
        }
    }
    Some(counts)
}

/// Whether a line says that a test passed or was skipped, as each runner
/// prints it: cargo `test x ... ok`, pytest `x PASSED` and `PASSED x`,
/// go `--- SKIP:` and `=== PAUSE`, jest and vitest's `✓`, `○`, `↓`.
fn passing(t: &str) -> bool {
    if let Some(rest) = t.strip_prefix("test ") {
        return rest.ends_with(" ... ok") || rest.contains(" ... ignored");
    }
    const PYTEST: [&str; 4] = ["PASSED", "SKIPPED", "XFAIL", "XPASS"];
    if PYTEST.iter().any(|w| t.strip_prefix(w).is_some_and(|r| r.starts_with(' '))) {
        return true;
    }
    // `id PASSED  [ 7%]`: the id's first word names the file and the test.
    if t.split(' ').next().is_some_and(|first| first.contains("::")) {
        return PYTEST.iter().any(|w| {
            t.match_indices(&format!(" {w}")).any(|(at, m)| {
                let after = &t[at + m.len()..];
                after.is_empty() || after.starts_with(' ')
            })
        }) && !t.contains(" FAILED")
            && !t.contains(" ERROR");
    }
    ["--- SKIP: ", "=== PAUSE ", "=== CONT ", "=== NAME ", "PASS ", "✓ ", "√ ", "○ ", "✎ ", "↓ ", "□ "]
        .iter()
        .any(|p| t.starts_with(p))
}

fn trim(s: &str) -> &str {
    s.trim_matches(|c: char| c.is_whitespace() || c == '=')
}

/// Classifies a line that holds a marker.
pub(crate) fn classify(line: &str) -> Marker {
    let t = line.trim();
    if let Some(rest) = t.strip_prefix("--- PASS: ") {
        return if rest.is_empty() { Marker::Nothing } else { Marker::GoPassed };
    }
    if t.starts_with("=== RUN ") {
        return Marker::GoRun;
    }
    if passing(t) {
        return Marker::Passing;
    }
    failed_test(t)
        .or_else(|| rust(line, t))
        .or_else(|| go(line, t))
        .or_else(|| jest(t))
        .or_else(|| pytest(line, t))
        .or_else(|| lint(line, t))
        .unwrap_or_else(|| other(t))
}

/// The lines of TypeScript's compiler and of ESLint and Biome: an error
/// with its location (tsc's `path(l,c): error TS...` written `path:l:c:`,
/// Biome's `path:l:c category ━━━` header), ESLint stylish's file header
/// and error rows, and their totals (`Found 11 errors in 4 files.`, `✖ 11
/// problems (8 errors, 3 warnings)`), which count no test.
fn lint(line: &str, t: &str) -> Option<Marker> {
    if let Some((loc, rest)) = t.split_once("): error TS")
        && let Some((path, at)) = loc.rsplit_once('(')
        && let Some((l, c)) = at.split_once(',')
        && [l, c].iter().all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    {
        return Some(Marker::Location(format!("{path}:{l}:{c}: error TS{rest}")));
    }
    let lint_totals = t.starts_with("Found ") && (t.contains(" error") || t.contains(" warning"))
        || t.starts_with('✖') && t.contains(" problem");
    if lint_totals {
        return Some(Marker::Totals(t.to_string()));
    }
    // tsc's table of errors per file, ESLint's note on `--fix`.
    if t.starts_with("Errors  Files") || t.contains("potentially fixable with the `--fix` option") {
        return Some(Marker::Nothing);
    }
    if let Some(head) = t.strip_suffix('━') {
        let head = head.trim_end_matches('━').trim_end();
        let head = head.strip_suffix("FIXABLE").map_or(head, str::trim_end);
        if let Some((at, category)) = head.split_once(' ')
            && has_location(at)
        {
            return Some(Marker::Location(format!("{at}: {}", category.trim())));
        }
        return Some(Marker::Nothing);
    }
    // ESLint stylish: `  14:9  error    message  rule`.
    if line.starts_with("  ")
        && let Some((lc, rest)) = t.split_once(char::is_whitespace)
        && let Some((l, c)) = lc.split_once(':')
        && [l, c].iter().all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        && let Some(message) = rest.trim_start().strip_prefix("error")
    {
        let message = message.trim();
        let message = match message.rsplit_once("  ") {
            Some((m, rule)) if !rule.trim().contains(' ') => format!("{}  {}", m.trim_end(), rule.trim()),
            _ => message.to_string(),
        };
        return Some(Marker::LintRow(format!("{l}:{c}: error {message}")));
    }
    None
}

/// What the lines before an ESLint stylish row say of its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StylishFile {
    /// The file header above the row's block.
    Named(String),
    /// Only rows up to `before`'s start: the header came earlier.
    Earlier,
    /// Some other line precedes the rows: no file is named.
    Unnamed,
}

/// The file of the ESLint stylish row that follows `before`, read
/// backwards: the rows of its block (errors and warnings), then the path
/// alone on its line that heads them. `stop` is where a row already read
/// ends: the walk stops there with [`StylishFile::Earlier`], so a block of
/// many rows is read once, not once per row. Only error rows are marker
/// lines, so no file extension has to be searched for in every line.
pub(crate) fn stylish_file(before: &[u8], stop: usize) -> StylishFile {
    let mut end = before.len();
    loop {
        if end == 0 || end == stop {
            return StylishFile::Earlier;
        }
        // `before[end - 1]` is the newline that ends the previous line.
        let line_end = end - 1;
        let start = memchr::memrchr(b'\n', &before[..line_end]).map_or(0, |i| i + 1);
        let line = String::from_utf8_lossy(&before[start..line_end]);
        let line = line.strip_suffix('\r').unwrap_or(&line);
        if is_stylish_row(line) {
            end = start;
            continue;
        }
        let t = line.trim();
        let path_alone = !line.starts_with(char::is_whitespace)
            && !t.is_empty()
            && !t.contains(' ')
            && [".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs", ".vue"].iter().any(|e| t.ends_with(e));
        return if path_alone { StylishFile::Named(t.to_string()) } else { StylishFile::Unnamed };
    }
}

/// An ESLint stylish row: `  14:9  error|warning  message  rule`.
pub(crate) fn is_stylish_row(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("  ") else { return false };
    let t = rest.trim_start();
    let Some((lc, rest)) = t.split_once(char::is_whitespace) else { return false };
    let Some((l, c)) = lc.split_once(':') else { return false };
    [l, c].iter().all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        && (rest.trim_start().starts_with("error") || rest.trim_start().starts_with("warning"))
}

/// A line naming a failing test: pytest's short summary and `-v` lines,
/// cargo test's `... FAILED` and `---- x stdout ----`.
fn failed_test(t: &str) -> Option<Marker> {
    // pytest short summary and -v lines.
    for kind in ["FAILED ", "ERROR "] {
        if let Some(rest) = t.strip_prefix(kind)
            && let Some(id) = rest.split(" - ").next()
            && (id.contains("::") || id.ends_with(".py"))
        {
            let reason = rest.split_once(" - ").map(|(_, r)| r.trim().to_string());
            let id = id.trim();
            if kind == "ERROR " && !id.contains("::") {
                // A module that could not be collected is not a failing test.
                let why = reason.map(|r| format!(": {r}")).unwrap_or_default();
                return Some(Marker::Location(format!(
                    "{id}: could not be collected (import or collection error){why}"
                )));
            }
            return Some(Marker::FailedTest { id: id.to_string(), reason });
        }
    }
    // cargo test -q: `tests::x --- FAILED`.
    if let Some(id) = t.strip_suffix(" --- FAILED")
        && !id.is_empty()
    {
        return Some(Marker::FailedTest { id: id.to_string(), reason: None });
    }
    // pytest -v: `id FAILED  [ 42%]`, `id ERROR  [ 71%]`; a parameter may hold spaces.
    for kind in [" FAILED", " ERROR"] {
        if let Some((id, rest)) = t.rsplit_once(kind)
            && (rest.is_empty() || rest.trim_start().starts_with('['))
            && id.split_once("::").is_some_and(|(file, _)| !file.contains(' '))
        {
            return Some(Marker::FailedTest { id: id.to_string(), reason: None });
        }
    }
    // cargo test
    if let Some(rest) = t.strip_prefix("test ")
        && let Some(id) = rest.strip_suffix(" ... FAILED")
    {
        return Some(Marker::FailedTest { id: id.to_string(), reason: None });
    }
    if let Some(rest) = t.strip_prefix("---- ")
        && let Some(id) = rest.strip_suffix(" stdout ----").or_else(|| rest.strip_suffix(" stderr ----"))
    {
        return Some(Marker::FailedTest { id: id.to_string(), reason: None });
    }
    None
}

/// cargo test's totals and panics, rustc's diagnostics.
fn rust(line: &str, t: &str) -> Option<Marker> {
    if t.starts_with("test result: ") {
        return Some(Marker::Totals(t.to_string()));
    }
    if let Some(rest) = t.strip_prefix("thread '")
        && let Some((thread, rest)) = rest.split_once('\'')
        && let Some(at) = rest.find("panicked at ")
    {
        let loc = rest[at + "panicked at ".len()..].trim_end_matches(':');
        // Rust before 1.73: `panicked at 'msg', src/x.rs:1:2`.
        let location = match loc.rsplit_once(", ") {
            Some((msg, l)) if msg.starts_with('\'') => format!("{l}: {}", msg.trim_matches('\'')),
            _ => loc.to_string(),
        };
        return Some(Marker::Panic { location, thread: thread.to_string() });
    }
    // rustc
    if (t.starts_with("error[") || t.starts_with("error: ") || t.starts_with("warning: ")) && line == t {
        if t.starts_with("error: could not compile") || t.starts_with("error: test failed") {
            return Some(Marker::Detail(t.to_string()));
        }
        return Some(Marker::CompilerHeader(t.to_string()));
    }
    if let Some(loc) = t.strip_prefix("--> ") {
        return Some(Marker::Arrow(loc.to_string()));
    }
    None
}

/// go test's failures, totals, panics and locations.
fn go(line: &str, t: &str) -> Option<Marker> {
    // go test
    if let Some(rest) = t.strip_prefix("--- FAIL: ") {
        let id = rest.split(" (").next().unwrap_or(rest);
        return Some(Marker::GoFailed(id.to_string()));
    }
    if t.starts_with("ok  \t") || (t.starts_with("FAIL\t") && t.matches('\t').count() >= 1) {
        return Some(Marker::Totals(t.to_string()));
    }
    if let Some(msg) = t.strip_prefix("panic: ") {
        return Some(Marker::GoPanic(msg.to_string()));
    }
    if line.starts_with('\t') && t.contains(".go:") {
        return Some(Marker::Nothing); // a goroutine frame; GoPanic follows those
    }
    if line.starts_with("    ") && t.contains("_test.go:") && has_location(t) {
        return Some(Marker::Location(t.to_string()));
    }
    None
}

/// jest's and vitest's failures, totals and locations.
fn jest(t: &str) -> Option<Marker> {
    // jest / vitest
    if let Some(name) = t.strip_prefix("● ") {
        return Some(Marker::JestFailure(name.to_string()));
    }
    if let Some(rest) = t.strip_prefix("FAIL ") {
        let rest = rest.trim();
        // vitest names the test; jest's `FAIL ./cart.test.js` names a file,
        // whose failing tests follow as `●` headers.
        return Some(if rest.contains(" > ") {
            Marker::FailedTest { id: rest.to_string(), reason: None }
        } else {
            Marker::Nothing
        });
    }
    if t.starts_with("Tests:")
        || t.starts_with("Test Suites:")
        || t.starts_with("Tests  ")
        || t.starts_with("Test Files  ")
    {
        return Some(Marker::Totals(t.split_whitespace().collect::<Vec<_>>().join(" ")));
    }
    if let Some(rest) = t.strip_prefix("❯ ")
        && has_location(rest)
    {
        return Some(Marker::Location(rest.rsplit(' ').next().unwrap_or(rest).to_string()));
    }
    None
}

/// pytest's tracebacks, details, frames, block headers and totals.
fn pytest(line: &str, t: &str) -> Option<Marker> {
    // pytest
    if t.starts_with("Traceback (most recent call last)") {
        return Some(Marker::Traceback);
    }
    if line.starts_with("E   ") {
        return Some(Marker::Detail(t.to_string()));
    }
    if let Some((loc, func)) = t.split_once(": in ")
        && has_location(loc)
        && !func.contains(' ')
    {
        return Some(Marker::Frame(loc.to_string()));
    }
    if line.starts_with("___") && t.ends_with("___") && !t.trim_matches('_').trim().is_empty() {
        return Some(Marker::BlockHeader);
    }
    let inner = trim(t);
    if (t.starts_with('=') || t.chars().next().is_some_and(|c| c.is_ascii_digit()))
        && (inner.contains(" passed") || inner.contains(" failed") || inner.contains(" error"))
        && inner.contains(" in ")
        && inner.chars().next().is_some_and(|c| c.is_ascii_digit())
    {
        return Some(Marker::Totals(inner.to_string()));
    }
    None
}

/// Any other line: go's bare last line, and whatever sounds alarming.
fn other(t: &str) -> Marker {
    if t == "FAIL" || t == "PASS" {
        return Marker::Nothing; // go's last line; its package line holds the totals
    }
    let alarming = ["rror", "FAIL", "fatal", "Exception", "ERROR", "panic"].iter().any(|w| t.contains(w));
    // pytest's crash line `shop/cart.py:37: KeyError`, and every other `path:line: ...error...`.
    if has_location(t) && !t.starts_with("at ") && alarming {
        return Marker::Location(t.to_string());
    }
    let noise = t.starts_with('=')
        || t.starts_with("Some errors have detailed explanations")
        || t.starts_with("For more information about");
    if alarming && !noise {
        return Marker::Detail(t.to_string());
    }
    Marker::Nothing
}

/// Whether `s` holds `name.ext:digits` (a source location).
pub(crate) fn has_location(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while let Some(off) = s[i..].find(':') {
        let c = i + off;
        let digits = b[c + 1..].iter().take_while(|x| x.is_ascii_digit()).count();
        if digits > 0 && c > 0 {
            let before = &s[..c];
            let word = before.rsplit([' ', '(', '\t', '"']).next().unwrap_or(before);
            if let Some(dot) = word.rfind('.')
                && dot + 1 < word.len()
                && word[dot + 1..].bytes().all(|x| x.is_ascii_alphanumeric())
                && !word[dot + 1..].bytes().all(|x| x.is_ascii_digit())
            {
                return true;
            }
        }
        i = c + 1;
    }
    false
}

/// A jest stack line `at fn (path:line:col)` that points at a file of the
/// project (not `node_modules`, not `node:internal`): the location.
pub(crate) fn jest_location(line: &str) -> Option<String> {
    let t = line.trim().strip_prefix("at ")?;
    let loc = match (t.rfind('('), t.strip_suffix(')')) {
        (Some(open), Some(body)) => &body[open + 1..],
        _ => t,
    };
    (has_location(loc) && !loc.contains("node_modules") && !loc.starts_with("node:")).then(|| loc.to_string())
}

/// A go stack frame line `\t/path/file.go:13 +0x18` outside the Go root.
pub(crate) fn go_frame(line: &str) -> Option<String> {
    let t = line.strip_prefix('\t')?;
    let loc = t.split(" +0x").next().unwrap_or(t).trim();
    let is_go = loc.contains(".go:");
    let in_goroot = loc.contains("/src/runtime/") || loc.contains("/src/testing/") || loc.starts_with("/usr/lib/go");
    (is_go && !in_goroot).then(|| loc.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(id: &str) -> Marker {
        Marker::FailedTest { id: id.into(), reason: None }
    }

    #[test]
    fn lines_of_each_runner() {
        assert_eq!(
            classify("FAILED tests/t.py::A::b - KeyError: 'x'"),
            Marker::FailedTest { id: "tests/t.py::A::b".into(), reason: Some("KeyError: 'x'".into()) }
        );
        assert_eq!(classify("tests/t.py::test_a FAILED                 [ 50%]"), failed("tests/t.py::test_a"));
        assert_eq!(classify("test tests::adds_up ... FAILED"), failed("tests::adds_up"));
        assert_eq!(classify("---- tests::adds_up stdout ----"), failed("tests::adds_up"));
        assert_eq!(classify("    --- FAIL: TestLargest/empty (0.00s)"), Marker::GoFailed("TestLargest/empty".into()));
        assert_eq!(classify(" FAIL  cart.test.mjs > total > counts"), failed("cart.test.mjs > total > counts"));
        assert_eq!(classify("FAIL ./cart.test.js"), Marker::Nothing);
        assert_eq!(classify("tests::parse_error --- FAILED"), failed("tests::parse_error"));
        assert_eq!(classify("t.py::test_v[x error-3] FAILED   [ 42%]"), failed("t.py::test_v[x error-3]"));
        assert_eq!(classify("t.py::test_setup ERROR   [ 71%]"), failed("t.py::test_setup"));
        assert_eq!(classify("  ● total › counts quantity"), Marker::JestFailure("total › counts quantity".into()));
        assert_eq!(
            classify("thread 'tests::x' (123) panicked at src/lib.rs:66:9:"),
            Marker::Panic { location: "src/lib.rs:66:9".into(), thread: "tests::x".into() }
        );
        assert_eq!(
            classify("thread 'main' panicked at 'boom', src/main.rs:2:5"),
            Marker::Panic { location: "src/main.rs:2:5: boom".into(), thread: "main".into() }
        );
        assert_eq!(
            classify("error[E0308]: mismatched types"),
            Marker::CompilerHeader("error[E0308]: mismatched types".into())
        );
        assert_eq!(classify("  --> src/lib.rs:14:22"), Marker::Arrow("src/lib.rs:14:22".into()));
        assert_eq!(classify("shop/cart.py:37: KeyError"), Marker::Location("shop/cart.py:37: KeyError".into()));
        assert_eq!(
            classify("    ledger_test.go:7: Total = 5, want 6"),
            Marker::Location("ledger_test.go:7: Total = 5, want 6".into())
        );
        assert_eq!(classify(" ❯ discount cart.js:8:37"), Marker::Location("cart.js:8:37".into()));
        assert_eq!(
            classify("E       AssertionError: assert 1 == 2"),
            Marker::Detail("E       AssertionError: assert 1 == 2".into())
        );
    }

    #[test]
    fn totals_of_each_runner() {
        let t = |s: &str| Marker::Totals(s.into());
        assert_eq!(classify("==== 4 failed, 1 passed in 0.05s ===="), t("4 failed, 1 passed in 0.05s"));
        assert_eq!(classify("4 failed, 1 passed in 0.02s"), t("4 failed, 1 passed in 0.02s"));
        assert_eq!(
            classify("test result: FAILED. 1 passed; 3 failed; 0 ignored"),
            t("test result: FAILED. 1 passed; 3 failed; 0 ignored")
        );
        assert_eq!(classify("Tests:       2 failed, 2 passed, 4 total"), t("Tests: 2 failed, 2 passed, 4 total"));
        assert_eq!(classify("      Tests  2 failed | 2 passed (4)"), t("Tests 2 failed | 2 passed (4)"));
        assert_eq!(classify("FAIL\texample.com/ledger\t0.005s"), t("FAIL\texample.com/ledger\t0.005s"));
        assert_eq!(classify("ok  \texample.com/other\t0.01s"), t("ok  \texample.com/other\t0.01s"));
    }

    /// Lines of passing and skipped tests whose names hold the words the
    /// fallback looks for (error, FAIL, panic) are never details.
    #[test]
    fn passing_lines_of_each_runner() {
        for line in [
            "test tests::parse_error_is_reported ... ok",
            "test api::panics_on_failure ... ignored, slow",
            "t.py::test_error_path PASSED                      [  7%]",
            "t.py::test_skipped_error SKIPPED (error paths)    [ 92%]",
            "t.py::test_error XFAIL (known error)",
            "PASSED t.py::test_parse_error",
            "SKIPPED [1] t.py:57: error paths not ready",
            "XFAIL t.py::test_expected_failure - known parse error",
            "--- SKIP: TestSkippedErrorPath (0.00s)",
            "PASS ./errors.test.js",
            "✓ error is reported for empty input (10 ms)",
            "○ skipped skipped error path",
            "✎ todo error path to write",
            "↓ counts.test.mjs > parse > skipped error path",
            "□ counts.test.mjs > parse > error path to write",
        ] {
            assert_eq!(classify(line), Marker::Passing, "{line}");
        }
        assert_eq!(classify("--- PASS: TestParseErrorIsReported (0.00s)"), Marker::GoPassed);
        assert_eq!(classify("=== RUN   TestParseErrorIsReported"), Marker::GoRun);
    }

    #[test]
    fn counts_of_each_runners_totals() {
        let c = |failed, passed, errors| Some(Counts { failed, passed: Some(passed), errors });
        assert_eq!(test_counts("4 failed, 7 passed, 1 skipped, 1 xfailed, 3 errors in 0.06s"), c(4, 7, 3));
        assert_eq!(test_counts("1 error in 0.10s"), c(0, 0, 1));
        assert_eq!(test_counts("test result: FAILED. 3 passed; 1 failed; 1 ignored; 0 measured"), c(1, 3, 0));
        assert_eq!(test_counts("Tests: 2 failed, 1 skipped, 1 todo, 3 passed, 7 total"), c(2, 3, 0));
        assert_eq!(test_counts("Tests 2 failed | 3 passed | 1 skipped | 1 todo (7)"), c(2, 3, 0));
        assert_eq!(test_counts("Test Suites: 1 failed, 1 total"), None);
        assert_eq!(test_counts("Test Files 1 failed (1)"), None);
        assert_eq!(test_counts("FAIL\texample.com/ledger\t0.005s"), None);
    }

    #[test]
    fn typescript_compiler_and_linter_lines() {
        assert_eq!(
            classify("src/a.ts(16,24): error TS2345: Argument of type 'X'."),
            Marker::Location("src/a.ts:16:24: error TS2345: Argument of type 'X'.".into())
        );
        assert_eq!(classify("Found 11 errors in 4 files."), Marker::Totals("Found 11 errors in 4 files.".into()));
        assert_eq!(test_counts("Found 11 errors in 4 files."), None, "no test is counted");
        assert_eq!(
            classify("✖ 2 problems (1 error, 1 warning)"),
            Marker::Totals("✖ 2 problems (1 error, 1 warning)".into())
        );
        assert_eq!(classify("Errors  Files"), Marker::Nothing);
        let block = b"x\n/w/src/cart.ts\n  3:1  warning  w  r\n  4:2  error  e  r\n";
        assert_eq!(stylish_file(block, usize::MAX), StylishFile::Named("/w/src/cart.ts".into()));
        assert_eq!(stylish_file(&block[17..], usize::MAX), StylishFile::Earlier);
        // Up to the end of a row already read: its file holds.
        assert_eq!(stylish_file(&block[..38], 38), StylishFile::Earlier);
        assert_eq!(stylish_file(&block[..38], usize::MAX), StylishFile::Named("/w/src/cart.ts".into()));
        assert_eq!(stylish_file(b"Found 2 errors\n  4:2  error  e  r\n", usize::MAX), StylishFile::Unnamed);
        assert_eq!(
            classify("  14:9  error    'x' is assigned a value but never used  no-unused-vars"),
            Marker::LintRow("14:9: error 'x' is assigned a value but never used  no-unused-vars".into())
        );
        assert_eq!(
            classify("src/cart.ts:6:3 lint/style/useConst  FIXABLE  ━━━━━━━━"),
            Marker::Location("src/cart.ts:6:3: lint/style/useConst".into())
        );
        assert_eq!(classify("lint ━━━━━━━━━━"), Marker::Nothing);
    }

    #[test]
    fn locations() {
        assert!(has_location("src/lib.rs:3:4"));
        assert!(has_location("at Object.toBe (cart.test.js:10:48)"));
        assert!(!has_location("12:30:01 INFO started"));
        assert!(!has_location("version 1.2:3"));
        assert_eq!(jest_location("      at Object.toBe (cart.test.js:10:48)"), Some("cart.test.js:10:48".into()));
        assert_eq!(jest_location("at x (node_modules/jest/a.js:1:2)"), None);
        assert_eq!(go_frame("\t/w/ledger.go:13"), Some("/w/ledger.go:13".into()));
        assert_eq!(go_frame("\t/usr/lib/go-1.19/src/testing/testing.go:1396 +0x24e"), None);
    }
}
