//! What a test runner's output says about each test: which ran and passed,
//! which failed, and the runner's own totals. Pure, line by line, so one
//! output may hold several runners (`cargo test` of many crates, `ruff &&
//! pytest`).
//!
//! Understood: pytest (`-v` lines and the `-rA`/`-rp` summary), `cargo
//! test`, `go test` (`-v` for passing tests), jest `--verbose` and vitest.
//! Targets (tests a task names) are matched against the ids found here with
//! [`target_status`]. What a configured check's environment adds so that
//! quiet runners still name their tests, and how a failed check's failing
//! tests alone are run again, is [`runners`].

use serde::{Deserialize, Serialize};

pub(crate) mod runners;
pub(crate) mod select;

/// The runner whose line named a test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Runner {
    Pytest,
    Cargo,
    Go,
    /// jest or vitest.
    Js,
}

/// Tests named in one output, and how many ran by the runners' totals.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TestRun {
    pub passed: Vec<String>,
    pub failed: Vec<String>,
    /// Passed plus failed by the totals lines (skipped tests did not run);
    /// `None` when no runner printed totals.
    pub ran: Option<u64>,
}

/// Reads every line of `text`.
pub(crate) fn read(text: &str) -> TestRun {
    let mut run = TestRun::default();
    let mut ran: Option<u64> = None;
    let mut go_counted = 0u64;
    let mut lines = Lines::default();
    for line in text.lines() {
        match lines.classify(&plain(line)) {
            Some(Seen::Test { runner, id, passed }) => {
                go_counted += u64::from(runner == Runner::Go);
                if passed { run.passed.push(id) } else { run.failed.push(id) }
            }
            Some(Seen::Totals(n)) => *ran.get_or_insert(0) += n,
            None => {}
        }
    }
    if go_counted > 0 {
        *ran.get_or_insert(0) += go_counted;
    }
    run.passed = distinct(run.passed);
    run.failed = distinct(run.failed);
    run.ran = ran;
    run
}

/// `ids` sorted, without duplicates, and without a name that another id
/// holds whole after ` > ` (vitest prints a failing test as `totals zero`
/// in its tree and as `file > cart > totals zero` below: one test).
fn distinct(mut ids: Vec<String>) -> Vec<String> {
    ids.sort();
    ids.dedup();
    let longer: Vec<String> = ids.iter().filter(|id| id.contains(" > ")).cloned().collect();
    if longer.is_empty() {
        return ids;
    }
    ids.retain(|id| {
        !longer
            .iter()
            .any(|l| l.len() > id.len() && l.ends_with(id.as_str()) && l[..l.len() - id.len()].ends_with(" > "))
    });
    ids
}

/// The failing tests `text` names, each with its runner, sorted and
/// without duplicates (a vitest test named in its file's tree and again
/// under `FAIL` is one: [`distinct`]).
pub(crate) fn failed_by_runner(text: &str) -> Vec<(Runner, String)> {
    let mut lines = Lines::default();
    let mut out: Vec<(Runner, String)> = text
        .lines()
        .filter_map(|line| match lines.classify(&plain(line)) {
            Some(Seen::Test { runner, id, passed: false }) => Some((runner, id)),
            _ => None,
        })
        .collect();
    out.sort();
    out.dedup();
    let js: Vec<String> = out.iter().filter(|(r, _)| *r == Runner::Js).map(|(_, id)| id.clone()).collect();
    if !js.is_empty() {
        let kept = distinct(js);
        out.retain(|(r, id)| *r != Runner::Js || kept.contains(id));
    }
    out
}

/// A line without its `\r` and its colours (a runner that colours its
/// output when it should not).
fn plain(line: &str) -> std::borrow::Cow<'_, str> {
    crate::text::plain(line.strip_suffix('\r').unwrap_or(line))
}

enum Seen {
    Test { runner: Runner, id: String, passed: bool },
    Totals(u64),
}

fn test(runner: Runner, id: String, passed: bool) -> Option<Seen> {
    Some(Seen::Test { runner, id, passed })
}

/// What a line means can depend on the lines before it: jest `--verbose`
/// prints a file's `describe` blocks as indented headers above its tests.
#[derive(Default)]
struct Lines {
    /// Inside a jest file block (`PASS ./cart.test.js`): the open
    /// `describe` headers, by indentation.
    jest: Option<Vec<(usize, String)>>,
    /// That block's file, which leads its tests' ids as vitest's lead
    /// theirs (`test/cart.test.js > cart > adds`).
    jest_file: String,
    /// mocha's `spec` and node's `spec` reporters: the suites open above
    /// the next test line (mocha's indented names, node's `▶ name`), by
    /// indentation.
    tree: Vec<Suite>,
    /// mocha: past its `N failing` line, whose list repeats the failures
    /// (`1) cart` over `totals zero:`), already read from the tree.
    mocha_listing: bool,
    /// TAP (node's `--test` in a pipe, `--test-reporter=tap`): the open
    /// `# Subtest: name` lines, by indentation.
    tap: Vec<Suite>,
}

/// A suite (`describe`) open above the lines that follow it.
#[derive(Debug, Clone)]
struct Suite {
    indent: usize,
    name: String,
    /// A test line was read inside it: its own result line closes it
    /// (node prints a suite's result like a test's).
    holds_tests: bool,
}

/// The marks of mocha's and node's `spec` test lines, and whether each
/// passed (`None`: skipped, or not run by a name pattern).
const SPEC_MARKS: [(&str, Option<bool>); 3] = [("✔ ", Some(true)), ("✖ ", Some(false)), ("﹣ ", None)];

/// The marks of jest's and vitest's test lines, and whether each passed
/// (`None`: skipped or todo).
const JS_MARKS: [(&str, Option<bool>); 7] = [
    ("✓ ", Some(true)),
    ("√ ", Some(true)),
    ("✕ ", Some(false)),
    ("× ", Some(false)),
    ("○ ", None),
    ("✎ ", None),
    ("↓ ", None),
];

impl Lines {
    fn classify(&mut self, line: &str) -> Option<Seen> {
        let t = line.trim();
        let indent = line.len() - line.trim_start().len();
        if let Some(stack) = &mut self.jest {
            // jest's default reporter heads a failing file's block with
            // its first failure (`● cart › adds`), not a `describe` name.
            if t.is_empty() || indent == 0 || t.starts_with("● ") {
                self.jest = None;
            } else if !JS_MARKS.iter().any(|(m, _)| t.starts_with(m)) {
                // A `describe` header: it closes those at its depth or deeper.
                stack.retain(|(i, _)| *i < indent);
                stack.push((indent, t.to_string()));
                return None;
            } else {
                stack.retain(|(i, _)| *i < indent);
            }
        }
        // jest: a file's block, `PASS ./cart.test.js` / `FAIL src/a.test.ts`.
        if indent == 0
            && let Some(file) = t.strip_prefix("PASS ").or_else(|| t.strip_prefix("FAIL "))
            && !file.starts_with(' ')
            && !file.contains(" > ")
            && !file.contains(char::is_whitespace)
        {
            self.jest = Some(Vec::new());
            self.jest_file = file.trim_start_matches("./").to_string();
            return None;
        }
        if self.jest.is_none()
            && let Some(seen) = self.spec_or_tap(t, indent)
        {
            return seen;
        }
        let seen = classify(t, self.jest.as_deref());
        match seen {
            // A jest --verbose test line: its file first.
            Some(Seen::Test { runner: Runner::Js, id, passed })
                if self.jest.is_some()
                    && JS_MARKS.iter().any(|(m, _)| t.starts_with(m))
                    && !self.jest_file.is_empty() =>
            {
                test(Runner::Js, format!("{} > {id}", self.jest_file), passed)
            }
            other => other,
        }
    }
}

impl Lines {
    /// A line of mocha's or node's `spec` reporter, or of TAP: `Some` with
    /// what it says when it is one (a suite header says nothing), `None`
    /// when the other runners' reading applies.
    fn spec_or_tap(&mut self, t: &str, indent: usize) -> Option<Option<Seen>> {
        if let Some(seen) = self.tap_line(t, indent) {
            return Some(seen);
        }
        // node: `ℹ pass 2`, `ℹ fail 1`; mocha: `2 passing (4ms)`, `1 failing`.
        if let Some(rest) = t.strip_prefix("ℹ ") {
            let n = rest.strip_prefix("pass ").or_else(|| rest.strip_prefix("fail "));
            return n.and_then(|n| n.trim().parse().ok()).map(|n| Some(Seen::Totals(n)));
        }
        if let Some((n, word)) = t.split_once(' ')
            && let Ok(n) = n.parse::<u64>()
        {
            let word = word.split(" (").next().unwrap_or(word);
            match word {
                "failing" => self.mocha_listing = true,
                "passing" => self.mocha_listing = false,
                _ => {}
            }
            if word == "passing" || word == "failing" {
                return Some(Some(Seen::Totals(n)));
            }
        }
        if let Some(name) = t.strip_prefix("▶ ") {
            self.open(indent, strip_duration(name));
            return Some(None);
        }
        let marked = SPEC_MARKS.iter().find_map(|(m, pass)| t.strip_prefix(m).map(|rest| (rest, *pass)));
        let (rest, pass) = match marked {
            Some(found) => found,
            None => match mocha_failure(t) {
                Some(name) if indent >= 2 && !self.mocha_listing => (name, Some(false)),
                _ => {
                    // A mocha suite's name; any other line leaves the tree
                    // to what is indented less.
                    if !t.is_empty() && !self.mocha_listing {
                        if indent == 0 {
                            self.tree.clear();
                        } else {
                            self.open(indent, t);
                        }
                    }
                    return None;
                }
            },
        };
        self.tree.retain(|s| s.indent <= indent);
        let (name, directive) = match rest.split_once(" # ") {
            Some((name, d)) => (name, Some(d)),
            None => (rest, None),
        };
        let name = strip_duration(name);
        // node's list of the failures again, under `✖ failing tests:`.
        if name == "failing tests:" {
            self.tree.clear();
            return Some(None);
        }
        // node prints a suite's result as a line of its own at the suite's depth.
        if let Some(last) = self.tree.last()
            && last.indent == indent
        {
            if last.name == name && last.holds_tests {
                self.tree.pop();
                return Some(None);
            }
            self.tree.pop();
        }
        for s in &mut self.tree {
            s.holds_tests = true;
        }
        let passed = match (pass, directive) {
            (Some(p), None) => p,
            _ => return Some(None),
        };
        Some(test(Runner::Js, path_of(&self.tree, name), passed))
    }

    /// A suite header at `indent`: it closes those at its depth or deeper.
    fn open(&mut self, indent: usize, name: &str) {
        self.tree.retain(|s| s.indent < indent);
        self.tree.push(Suite { indent, name: name.to_string(), holds_tests: false });
    }

    /// TAP: `# Subtest: name`, `ok 1 - name`, `not ok 2 - name # SKIP`,
    /// `# pass 2`; a suite's own result line (it held tests) is no test.
    fn tap_line(&mut self, t: &str, indent: usize) -> Option<Option<Seen>> {
        if let Some(name) = t.strip_prefix("# Subtest: ") {
            self.tap.retain(|s| s.indent < indent);
            self.tap.push(Suite { indent, name: tap_unescaped(name), holds_tests: false });
            return Some(None);
        }
        for word in ["# pass ", "# fail "] {
            if let Some(n) = t.strip_prefix(word).and_then(|n| n.trim().parse().ok()) {
                return Some(Some(Seen::Totals(n)));
            }
        }
        let (passed, rest) = match t.strip_prefix("not ok ") {
            Some(rest) => (false, rest),
            None => (true, t.strip_prefix("ok ")?),
        };
        let after = rest.trim_start_matches(|c: char| c.is_ascii_digit());
        if after.len() == rest.len() || !(after.is_empty() || after.starts_with(' ')) {
            return None;
        }
        let rest = after.trim_start();
        let rest = rest.strip_prefix("- ").unwrap_or(rest);
        let (name, directive) = tap_directive(rest);
        let name = tap_unescaped(name);
        self.tap.retain(|s| s.indent <= indent);
        let closes = self.tap.last().filter(|s| s.indent == indent).map(|s| s.holds_tests && s.name == name);
        if closes.is_some() {
            self.tap.pop();
        }
        for s in &mut self.tap {
            s.holds_tests = true;
        }
        if closes == Some(true) || directive {
            return Some(None);
        }
        Some(test(Runner::Js, path_of(&self.tap, &name), passed))
    }
}

/// A test's id under the suites that hold it: `cart > when empty > rejects`.
fn path_of(suites: &[Suite], name: &str) -> String {
    let mut id: Vec<&str> = suites.iter().map(|s| s.name.as_str()).collect();
    id.push(name);
    id.join(" > ")
}

/// mocha's failing test in its tree: `1) totals zero`.
fn mocha_failure(t: &str) -> Option<&str> {
    let (n, name) = t.split_once(") ")?;
    (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && !name.trim().is_empty()).then_some(name.trim())
}

/// A TAP test line's description and whether a `# SKIP` or `# TODO`
/// directive follows it (an escaped `\#` is part of the name).
fn tap_directive(rest: &str) -> (&str, bool) {
    let mut from = 0;
    while let Some(i) = rest[from..].find(" # ").map(|i| from + i) {
        if !rest[..i].ends_with('\\') {
            let d = rest[i + 3..].trim_start().to_ascii_uppercase();
            return (&rest[..i], d.starts_with("SKIP") || d.starts_with("TODO"));
        }
        from = i + 3;
    }
    (rest.trim_end(), false)
}

/// TAP escapes `#` and `\` in names.
fn tap_unescaped(s: &str) -> String {
    s.trim().replace("\\#", "#").replace("\\\\", "\\")
}

fn classify(t: &str, describe: Option<&[(usize, String)]>) -> Option<Seen> {
    // cargo test: `test tests::adds ... ok` / `... FAILED` / `... ignored`.
    if let Some(rest) = t.strip_prefix("test ")
        && let Some((id, result)) = rest.rsplit_once(" ... ")
    {
        let id = id.trim().to_string();
        return match result.trim() {
            "ok" => test(Runner::Cargo, id, true),
            "FAILED" => test(Runner::Cargo, id, false),
            _ => None,
        };
    }
    // cargo test -q: a failing test as `tests::bad --- FAILED`.
    if let Some(id) = t.strip_suffix(" --- FAILED")
        && !id.is_empty()
        && !id.contains(char::is_whitespace)
    {
        return test(Runner::Cargo, id.to_string(), false);
    }
    // cargo test totals: `test result: FAILED. 1 passed; 1 failed; 0 ignored; ...`.
    if let Some(rest) = t.strip_prefix("test result: ") {
        let n = count_of(rest, "passed") + count_of(rest, "failed");
        return Some(Seen::Totals(n));
    }
    // go test -v: `--- PASS: TestAdd (0.00s)`, subtests indented.
    for (mark, pass) in [("--- PASS: ", true), ("--- FAIL: ", false)] {
        if let Some(rest) = t.strip_prefix(mark) {
            let id = rest.rsplit_once(" (").map_or(rest, |(id, _)| id).trim().to_string();
            return test(Runner::Go, id, pass);
        }
    }
    // pytest -rA summary: `PASSED tests/t.py::test_a`, `FAILED id - reason`.
    for (mark, pass) in [("PASSED ", true), ("FAILED ", false), ("ERROR ", false)] {
        if let Some(rest) = t.strip_prefix(mark)
            && let Some(id) = pytest_summary_id(rest)
        {
            return test(Runner::Pytest, id.to_string(), pass);
        }
    }
    // pytest -v: `tests/t.py::test_a PASSED [ 50%]`, `tests/t.py::test_x[m x] FAILED`.
    if let Some((id, word)) = pytest_verbose(t) {
        match word {
            "PASSED" | "XPASS" => return test(Runner::Pytest, id.to_string(), true),
            "FAILED" | "ERROR" => return test(Runner::Pytest, id.to_string(), false),
            _ => {}
        }
    }
    // jest --verbose / vitest: `✓ name (3 ms)`, `✕ name`, `× name`, under
    // jest's `describe` headers.
    for (mark, pass) in JS_MARKS {
        if let Some(rest) = t.strip_prefix(mark) {
            return js_test(rest, pass?, describe);
        }
    }
    // jest's failure heading: `● cart › when empty › totals zero`.
    if let Some(rest) = t.strip_prefix("● ")
        && rest.contains(" › ")
    {
        return test(Runner::Js, rest.replace(" › ", " > "), false);
    }
    // vitest's failure heading: `FAIL  cart.test.ts > cart > adds`.
    if let Some(rest) = t.strip_prefix("FAIL  ")
        && rest.contains(" > ")
    {
        return test(Runner::Js, rest.trim().to_string(), false);
    }
    totals(t)
}

/// A jest or vitest test line after its mark: the name, under the
/// `describe` headers that hold it.
fn js_test(rest: &str, pass: bool, describe: Option<&[(usize, String)]>) -> Option<Seen> {
    let name = strip_duration(rest);
    if name.is_empty() {
        return None;
    }
    let id = match describe {
        Some(stack) if !stack.is_empty() => {
            let mut id: Vec<&str> = stack.iter().map(|(_, h)| h.as_str()).collect();
            id.push(name);
            id.join(" > ")
        }
        _ => name.to_string(),
    };
    test(Runner::Js, id, pass)
}

/// A totals line of jest, vitest or pytest: how many tests it counts.
fn totals(t: &str) -> Option<Seen> {
    // jest totals: `Tests:       1 failed, 2 passed, 3 total`.
    if let Some(rest) = t.strip_prefix("Tests:") {
        return Some(Seen::Totals(count_of(rest, "passed") + count_of(rest, "failed")));
    }
    // vitest totals: `Tests  1 failed | 2 passed (3)`.
    if let Some(rest) = t.strip_prefix("Tests  ") {
        return Some(Seen::Totals(count_of(rest, "passed") + count_of(rest, "failed")));
    }
    // pytest totals: `==== 1 failed, 2 passed in 0.12s ====`, or `-q`'s bare line.
    let bare = t.trim_matches(|c: char| c == '=' || c.is_whitespace());
    if bare.contains(" in ")
        && bare.starts_with(|c: char| c.is_ascii_digit())
        && (bare.contains(" passed") || bare.contains(" failed") || bare.contains(" error"))
    {
        let n =
            count_of(bare, "passed") + count_of(bare, "failed") + count_of(bare, "error") + count_of(bare, "errors");
        return Some(Seen::Totals(n));
    }
    None
}

/// The node id at the start of a pytest short-summary entry (`id` or
/// `id - reason`). A parameter may hold spaces, brackets, `::` and ` - `:
/// the id ends where its brackets close, before ` - ` or the end. `None`
/// when it is no node id (`tests/t.py - ImportError`, a collection error).
fn pytest_summary_id(rest: &str) -> Option<&str> {
    let rest = rest.trim();
    let open = rest.find('[');
    let head_end = open.unwrap_or(rest.len());
    let end = match open {
        None => rest.find(" - ").unwrap_or(rest.len()),
        Some(open) => {
            let mut depth = 0i32;
            let mut end = None;
            for (i, c) in rest[open..].char_indices() {
                match c {
                    '[' => depth += 1,
                    ']' => depth -= 1,
                    _ => continue,
                }
                let after = &rest[open + i + 1..];
                if depth <= 0 && (after.is_empty() || after.starts_with(" - ")) {
                    end = Some(open + i + 1);
                    break;
                }
            }
            end?
        }
    };
    let id = &rest[..end];
    (id[..head_end.min(end)].contains("::") && !id[..head_end.min(end)].contains(char::is_whitespace)).then_some(id)
}

/// A `pytest -v` line: the node id and the outcome word before the
/// progress (`[ 50%]`). The id may hold spaces inside its parameters.
fn pytest_verbose(t: &str) -> Option<(&str, &str)> {
    let head = t.split(['[', ' ']).next().unwrap_or("");
    if !head.contains("::") {
        return None;
    }
    let mut rest = t.trim_end();
    if rest.ends_with("%]")
        && let Some(open) = rest.rfind('[')
    {
        rest = rest[..open].trim_end();
    }
    for word in ["PASSED", "FAILED", "ERROR", "XPASS"] {
        if let Some(id) = rest.strip_suffix(word)
            && id.ends_with(' ')
        {
            let id = id.trim_end();
            return (!id.is_empty()).then_some((id, word));
        }
    }
    None
}

/// `N word` anywhere in `s` (words separated by `,`, `;`, `|`).
fn count_of(s: &str, word: &str) -> u64 {
    s.split([',', ';', '|', '.'])
        .filter_map(|part| {
            let mut w = part.split_whitespace();
            let n = w.next()?.parse::<u64>().ok()?;
            (w.next()? == word).then_some(n)
        })
        .sum()
}

/// A test name without jest's or vitest's trailing `(3 ms)` / `12ms`.
fn strip_duration(s: &str) -> &str {
    let s = s.trim();
    if let Some(open) = s.rfind(" (")
        && s.ends_with("ms)")
    {
        return s[..open].trim_end();
    }
    if let Some((head, last)) = s.rsplit_once(' ')
        && last.ends_with("ms")
        && last[..last.len() - 2].bytes().all(|b| b.is_ascii_digit())
        && last.len() > 2
    {
        return head.trim_end();
    }
    s
}

/// Where a task's target stands after an attempt's checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum TargetStatus {
    Passed,
    Failed,
    /// No check reported it at all: deleted, renamed, not collected, or a
    /// runner that does not print test names.
    NotReported,
}

/// Whether `id` (as a runner printed it) is the target `target`: the same,
/// or one case of it (`test_a[1]` for `test_a`, a vitest `file > test`
/// ending in it). A target may be written as the test's source spells it:
/// pytest prints non-ASCII parameters escaped (`test_p[\xe9]` for
/// `test_p[é]`), jest separates `describe` names with `›`.
pub(crate) fn is_target(id: &str, target: &str) -> bool {
    let plain = |target: &str| {
        id == target
            || id.strip_prefix(target).is_some_and(|rest| rest.starts_with('['))
            || id.strip_suffix(target).is_some_and(|head| head.ends_with(" > "))
            // A target led by its file, a runner that names the test
            // without it (jest's `● cart › adds` heading).
            || target.strip_suffix(id).and_then(|head| head.strip_suffix(" > ")).is_some_and(is_js_file)
    };
    if plain(target) {
        return true;
    }
    if id.contains(" › ") {
        return is_target(&id.replace(" › ", " > "), target);
    }
    let spelled = target.replace(" › ", " > ");
    let spelled = if spelled.is_ascii() { spelled } else { pytest_escaped(&spelled) };
    spelled != target && plain(&spelled)
}

/// Whether `s` is a JavaScript or TypeScript test file's path, the head
/// of a vitest or jest id.
fn is_js_file(s: &str) -> bool {
    !s.contains(" > ") && [".js", ".ts", ".jsx", ".tsx", ".mjs", ".cjs", ".mts", ".cts"].iter().any(|e| s.ends_with(e))
}

/// The test id at the start of a failing test's entry as a digest lists it
/// (`tests/t.py::test_x[a - b] - AssertionError`, `cart › adds`): pytest's
/// node id up to where its brackets close, jest's `›` read as `>`.
pub(crate) fn test_id_of(entry: &str) -> String {
    let entry = entry.trim();
    if let Some(id) = pytest_summary_id(entry) {
        return id.to_string();
    }
    let id = entry.split(" - ").next().unwrap_or(entry).trim();
    id.replace(" › ", " > ")
}

/// `s` with its non-ASCII characters escaped as pytest prints them in ids
/// (Python's `unicode_escape`: `\xe9`, `\u2713`, `\U0001f600`).
pub(crate) fn pytest_escaped(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c as u32 {
            0..=0x7f => out.push(c),
            n @ 0x80..=0xff => out.push_str(&format!("\\x{n:02x}")),
            n @ 0x100..=0xffff => out.push_str(&format!("\\u{n:04x}")),
            n => out.push_str(&format!("\\U{n:08x}")),
        }
    }
    out
}

/// A test runner that did not run the tests normally: interrupted, a
/// collection or build error, a usage error, nothing collected, killed by
/// a signal. Its tests' results (and a passing target) say nothing then.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RunnerFailure {
    /// `pytest`, `cargo test`, `go test`, `jest`, `vitest` or `the runner`.
    pub runner: String,
    /// What happened, in a few words (`was interrupted: a collection error`).
    pub what: String,
    /// The runner's own lines that say so, in order.
    pub said: Vec<String>,
}

impl RunnerFailure {
    /// One line: `pytest was interrupted (exit 2: ...): <the runner's words>`.
    pub(crate) fn line(&self) -> String {
        if self.said.is_empty() {
            return format!("{} {}", self.runner, self.what);
        }
        format!("{} {}: {}", self.runner, self.what, self.said.join(" | "))
    }
}

/// pytest's exit codes 2 to 5 (`pytest.ExitCode`).
fn pytest_exit(code: i32) -> Option<&'static str> {
    Some(match code {
        2 => "was interrupted (exit 2: a collection error or an interruption)",
        3 => "failed inside itself (exit 3: internal error)",
        4 => "was given a wrong command line (exit 4: usage error)",
        5 => "collected no tests (exit 5)",
        _ => return None,
    })
}

/// Whether a test runner in `text` (its output, with the exit status
/// `exit_code` or the signal that killed it) did not run the tests
/// normally, and what it said. Pure. The caller leaves out timeouts (a
/// check that timed out is TIMEOUT).
///
/// | runner | read as a runner failure |
/// |---|---|
/// | pytest | exit 2 with `Interrupted:`/`KeyboardInterrupt`, 3 with `INTERNALERROR>`, 4 with `error:`/`ERROR:`, 5 with `no tests ran` or only deselected |
/// | cargo test | `error: could not compile`, `error: failed to`, `error: unexpected argument`, `error: no test target named` |
/// | go test | `[build failed]`, `[setup failed]`, `no required module provides package`, `go: ` errors |
/// | jest | `No tests found, exiting with code` |
/// | vitest | `No test files found, exiting with code` |
/// | any | killed by a signal |
pub(crate) fn runner_failure(text: &str, exit_code: Option<i32>, signal: Option<i32>) -> Option<RunnerFailure> {
    if exit_code == Some(0) {
        return None;
    }
    let plain: Vec<std::borrow::Cow<'_, str>> = text.lines().map(plain).collect();
    let lines: Vec<&str> = plain.iter().map(|l| l.trim()).collect();
    let found = |runner: &str, what: &str, said: Vec<String>| {
        Some(RunnerFailure { runner: runner.to_string(), what: what.to_string(), said })
    };
    if let Some(code) = exit_code
        && let Some(what) = pytest_exit(code)
        && let Some(said) = pytest_said(&lines, code)
    {
        return found("pytest", what, said);
    }
    if let Some(said) = cargo_said(&lines) {
        return found("cargo test", "did not build or start the tests", said);
    }
    if let Some(said) = go_said(&lines) {
        return found("go test", "did not build or start the tests", said);
    }
    if let Some(l) = first(&lines, |l| l.starts_with("No tests found, exiting with code")) {
        return found("jest", "found no tests", vec![l]);
    }
    if let Some(l) = first(&lines, |l| l.starts_with("No test files found, exiting with code")) {
        return found("vitest", "found no tests", vec![l]);
    }
    if let Some(sig) = signal {
        return found("the runner", &format!("was killed by signal {sig}"), Vec::new());
    }
    None
}

/// The first of `lines` that `pred` accepts, clipped.
fn first(lines: &[&str], pred: impl Fn(&str) -> bool) -> Option<String> {
    lines.iter().find(|l| pred(l)).map(|l| clip(l))
}

/// What pytest said when it exited with `code` without running the tests
/// normally (2 interrupted, 3 internal error, 4 usage error, 5 no tests);
/// `None` when its output does not bear that out.
fn pytest_said(lines: &[&str], code: i32) -> Option<Vec<String>> {
    match code {
        2 => {
            let stop = first(lines, |l| l.contains("Interrupted:") || l.contains("KeyboardInterrupt"));
            stop.map(|s| {
                let mut v = vec![s.trim_matches(|c: char| c == '!' || c.is_whitespace()).to_string()];
                // The collection errors, as the short summary names them.
                v.extend(
                    lines
                        .iter()
                        .filter(|l| l.starts_with("ERROR ") && !l.starts_with("ERROR: "))
                        .take(5)
                        .map(|l| clip(l)),
                );
                v
            })
        }
        3 => first(lines, |l| l.starts_with("INTERNALERROR>") && l.contains("Error")).map(|l| vec![l]),
        4 => first(lines, |l| l.contains(": error: ") || l.starts_with("ERROR: ")).map(|l| {
            let mut v = vec![l];
            v.extend(first(lines, |l| l.contains(": error: ") && !l.starts_with("ERROR: ")));
            v.dedup();
            v
        }),
        _ => lines
            .iter()
            .rev()
            .find(|l| !l.is_empty())
            .filter(|l| {
                let bare = l.trim_matches(|c: char| c == '=' || c.is_whitespace());
                bare.contains(" in ")
                    && (bare.starts_with("no tests ran")
                        || (bare.contains(" deselected") && !bare.contains(" passed") && !bare.contains(" failed")))
            })
            .map(|l| vec![clip(l.trim_matches(|c: char| c == '=' || c.is_whitespace()))]),
    }
}

/// What cargo said when it did not build or start the tests: the
/// compiler's first error, then cargo's line.
fn cargo_said(lines: &[&str]) -> Option<Vec<String>> {
    let l = first(lines, |l| {
        ["error: could not compile `", "error: failed to ", "error: unexpected argument", "error: no test target named"]
            .iter()
            .any(|p| l.starts_with(p))
    })?;
    let mut said: Vec<String> =
        first(lines, |l| l.starts_with("error[") || l.starts_with("error: ")).into_iter().collect();
    if !said.contains(&l) {
        said.push(l);
    }
    Some(said)
}

/// What go said when it did not build or start the tests: the compiler's
/// first error, then go's line.
fn go_said(lines: &[&str]) -> Option<Vec<String>> {
    let l = first(lines, |l| {
        l.ends_with("[build failed]")
            || l.ends_with("[setup failed]")
            || l.contains(": no required module provides package")
            || (l.starts_with("go: ") && !l.starts_with("go: downloading"))
    })?;
    let mut said: Vec<String> =
        first(lines, |l| l.contains(".go:") && (l.contains(": syntax error") || l.split(':').count() >= 4))
            .into_iter()
            .collect();
    if !said.contains(&l) {
        said.push(l);
    }
    Some(said)
}

fn clip(line: &str) -> String {
    crate::text::clip(line, 200, "...").into_owned()
}

/// A target's status from every check's run: failed when any check saw it
/// fail, passed when one saw it pass, else not reported.
pub(crate) fn target_status(target: &str, runs: &[&TestRun], failed_keys: &[&str]) -> TargetStatus {
    let failed = failed_keys.iter().any(|k| is_target(k, target))
        || runs.iter().any(|r| r.failed.iter().any(|id| is_target(id, target)));
    if failed {
        return TargetStatus::Failed;
    }
    if runs.iter().any(|r| r.passed.iter().any(|id| is_target(id, target))) {
        TargetStatus::Passed
    } else {
        TargetStatus::NotReported
    }
}

/// Whether a run narrowed to the task's `targets` (a check's first stage)
/// passed by them, whatever its exit status: every target reported passed,
/// no test failed and nothing else was read as an error. What such a run
/// exits with besides says nothing of the targets: a coverage threshold
/// (jest's `--coverage` over one test), a runner that finds no test in
/// the other files. The check's full run, which follows, is judged by its
/// exit status too.
pub(crate) fn narrowed_run_passes(targets: &[String], passed: &[String], failed: &[String], errors: usize) -> bool {
    !targets.is_empty()
        && failed.is_empty()
        && errors == 0
        && targets.iter().all(|t| passed.iter().any(|id| is_target(id, t)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runners_lines() {
        let text = "\
tests/test_calc.py::test_add FAILED                                      [ 50%]
tests/test_calc.py::test_mul PASSED                                      [100%]
tests/test_calc.py::test_p[1] PASSED
tests/test_calc.py::test_skip SKIPPED (nope)                             [100%]
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_add - assert -1 == 5
==================== 1 failed, 2 passed, 1 skipped in 0.03s ====================
test tests::adds ... ok
test tests::subs ... FAILED
test tests::slow ... ignored
test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s
--- PASS: TestAdd (0.00s)
    --- FAIL: TestAdd/neg (0.00s)
  ✓ adds numbers (3 ms)
  ✕ subtracts (1 ms)
Tests:       1 failed, 1 passed, 2 total
";
        let r = read(text);
        assert_eq!(
            r.passed,
            ["TestAdd", "adds numbers", "tests/test_calc.py::test_mul", "tests/test_calc.py::test_p[1]", "tests::adds"]
        );
        assert_eq!(r.failed, ["TestAdd/neg", "subtracts", "tests/test_calc.py::test_add", "tests::subs"]);
        // pytest 3, cargo 2, jest 2, go 2.
        assert_eq!(r.ran, Some(9));
    }

    #[test]
    fn pytest_quiet_totals_and_no_totals() {
        assert_eq!(read("..F\n1 failed, 2 passed in 0.01s\n").ran, Some(3));
        assert_eq!(read("3 passed, 2 skipped in 0.01s\n").ran, Some(3));
        assert_eq!(read("1 error in 0.2s\n").ran, Some(1));
        assert_eq!(read("nothing here\nFound 3 errors.\n").ran, None);
    }

    /// Output of the real runners: `tests/runners/capture.sh`.
    macro_rules! captured {
        ($name:literal) => {
            include_str!(concat!("../../../tests/runners/captured/", $name, ".txt"))
        };
    }

    /// The exit status each capture ended with.
    fn exit_of(name: &str) -> Option<i32> {
        include_str!("../../../tests/runners/captured/exit-codes.txt")
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
    }

    fn ids(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn pytest_ids_with_spaces_brackets_unicode_and_dashes_at_every_verbosity() {
        let passed = ids(&[
            "tests/test_ids.py::test_n[1]",
            "tests/test_ids.py::test_x[[x]]",
            "tests/test_ids.py::test_x[\\xe9[1]]",
            "tests/test_ids.py::test_x[a - b]",
            "tests/test_ids.py::test_x[a::b]",
            "tests/test_ids.py::test_x[m x]",
        ]);
        let failed = ids(&[
            "tests/test_ids.py::test_key",
            "tests/test_ids.py::test_n[2]",
            "tests/test_ids.py::test_setup_error",
        ]);
        for (name, text) in [
            ("-q -rfEp", captured!("pytest-ids-q")),
            ("-v -rfEp", captured!("pytest-ids-v")),
            ("-rA", captured!("pytest-ids-rA")),
        ] {
            let r = read(text);
            assert_eq!(r.passed, passed, "{name}");
            assert_eq!(r.failed, failed, "{name}");
            // `2 failed, 6 passed, 1 skipped, 1 xfailed, 1 error`: 9 ran.
            assert_eq!(r.ran, Some(9), "{name}");
            for target in [
                "tests/test_ids.py::test_x[m x]",
                "tests/test_ids.py::test_x[é[1]]",
                "tests/test_ids.py::test_x[a - b]",
            ] {
                assert_eq!(target_status(target, &[&r], &[]), TargetStatus::Passed, "{name} {target}");
            }
            assert_eq!(target_status("tests/test_ids.py::test_n", &[&r], &[]), TargetStatus::Failed, "{name}");
            assert_eq!(runner_failure(text, exit_of("pytest-ids-q"), None), None, "{name}");
        }
    }

    #[test]
    fn a_narrowed_run_passes_by_its_targets_alone() {
        let v = |x: &[&str]| x.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let targets = v(&["t.test.ts > cart > adds"]);
        assert!(narrowed_run_passes(&targets, &v(&["cart > adds"]), &[], 0));
        assert!(!narrowed_run_passes(&targets, &v(&["cart > adds"]), &v(&["cart > other"]), 0));
        assert!(!narrowed_run_passes(&targets, &v(&["cart > adds"]), &[], 1));
        assert!(!narrowed_run_passes(&targets, &v(&["cart > totals"]), &[], 0));
        assert!(!narrowed_run_passes(&[], &[], &[], 0));
    }

    #[test]
    fn mocha_and_node_tests_by_their_suites_at_every_reporter() {
        let failed = ids(&["cart > totals zero", "cart > when empty > rejects \"bad\" input #1: a > b [x] é"]);
        // mocha's spec (its default) and node's spec and TAP (its default
        // into a pipe on node 20): skipped and todo tests are not run, a
        // suite's own result line is no test.
        for (name, text) in [
            ("mocha", captured!("mocha-12.0.3-default")),
            ("node spec", captured!("node-20.20.2-test-spec")),
            ("node tap", captured!("node-20.20.2-test-tap")),
            ("node", captured!("node-20.20.2-test")),
        ] {
            let r = read(text);
            assert_eq!(r.passed, ["cart > adds an item", "top level"], "{name}");
            assert_eq!(r.failed, failed, "{name}");
            assert_eq!(r.ran, Some(4), "{name}");
            assert_eq!(target_status("cart > adds an item", &[&r], &[]), TargetStatus::Passed, "{name}");
            assert_eq!(target_status("cart > totals zero", &[&r], &[]), TargetStatus::Failed, "{name}");
            assert_eq!(target_status("cart > is skipped", &[&r], &[]), TargetStatus::NotReported, "{name}");
        }
        // Run by a name pattern: what the pattern left out did not run.
        let r = read(captured!("node-20.20.2-test-name-pattern"));
        assert_eq!(r.failed, ["cart > totals zero"]);
        assert!(r.passed.is_empty(), "{:?}", r.passed);
        let r = read(captured!("mocha-12.0.3-grep"));
        assert_eq!((r.passed.len(), r.failed.as_slice(), r.ran), (0, &["cart > totals zero".to_string()][..], Some(1)));
        // mocha's TAP names a test by its full title, spaced.
        let r = read(captured!("mocha-12.0.3-tap"));
        assert_eq!(r.passed, ["cart adds an item", "top level"]);
        assert_eq!(r.ran, Some(4));
    }

    #[test]
    fn cargo_go_jest_and_vitest_ids_and_totals_as_the_runners_print_them() {
        let cargo = read(captured!("cargo-test-ids"));
        assert_eq!(cargo.passed, ["from_outside", "src/lib.rs - add (line 3)", "tests::parse::works"]);
        assert_eq!(cargo.failed, ["tests::parse::fails"]);
        assert_eq!(cargo.ran, Some(4), "three binaries' `test result:` lines");
        assert_eq!(target_status("tests::parse::works", &[&cargo], &[]), TargetStatus::Passed);
        let go = read(captured!("go-test-v-subtests"));
        assert_eq!(go.passed, ["TestAdd", "TestX/case_one"]);
        assert_eq!(go.failed, ["TestX", "TestX/case_two"]);
        assert_eq!(target_status("TestX/case_one", &[&go], &[]), TargetStatus::Passed);
        for text in [captured!("jest-verbose"), captured!("jest-default")] {
            let jest = read(text);
            // Led by their file, as vitest's are: a target may name it.
            assert_eq!(jest.passed, ["cart.test.js > cart > adds an item", "cart.test.js > top level"]);
            assert_eq!(jest.failed, ["cart.test.js > cart > when empty > totals zero"]);
            assert_eq!(jest.ran, Some(3));
            assert_eq!(target_status("cart > adds an item", &[&jest], &[]), TargetStatus::Passed);
            assert_eq!(target_status("cart › adds an item", &[&jest], &[]), TargetStatus::Passed);
            assert_eq!(target_status("cart.test.js > cart > adds an item", &[&jest], &[]), TargetStatus::Passed);
            assert_eq!(target_status("other.test.js > cart > adds an item", &[&jest], &[]), TargetStatus::NotReported);
            // jest's heading names a failing test without its file.
            let heading = TestRun { failed: vec!["cart > when empty > totals zero".into()], ..TestRun::default() };
            let target = "cart.test.js > cart > when empty > totals zero";
            assert_eq!(target_status(target, &[&heading], &[]), TargetStatus::Failed);
            assert_eq!(
                target_status("x > cart > when empty > totals zero", &[&heading], &[]),
                TargetStatus::NotReported
            );
        }
        let vitest = read(captured!("vitest-verbose"));
        assert_eq!(vitest.passed, ["cart.vi.test.mjs > cart > adds an item", "cart.vi.test.mjs > top level"]);
        assert_eq!(vitest.failed, ["cart.vi.test.mjs > cart > when empty > totals zero"]);
        assert_eq!(vitest.ran, Some(3));
        assert_eq!(target_status("cart > adds an item", &[&vitest], &[]), TargetStatus::Passed);
        let vitest = read(captured!("vitest-default"));
        assert_eq!(vitest.failed, ["cart.vi.test.mjs > cart > when empty > totals zero"]);
        assert_eq!(vitest.passed.len() + vitest.failed.len(), 3);
        for (name, text) in [
            ("cargo-test-ids", captured!("cargo-test-ids")),
            ("go-test-v-subtests", captured!("go-test-v-subtests")),
            ("jest-verbose", captured!("jest-verbose")),
            ("vitest-verbose", captured!("vitest-verbose")),
        ] {
            assert_eq!(runner_failure(text, exit_of(name), None), None, "{name}");
        }
    }

    #[test]
    fn runner_failures_in_the_runners_words() {
        let said = |name: &str, text: &str| {
            let r = runner_failure(text, exit_of(name), None).unwrap_or_else(|| panic!("{name}: no runner failure"));
            (r.runner.clone(), r.line())
        };
        let (runner, line) = said("pytest-collection-error", captured!("pytest-collection-error"));
        assert_eq!(runner, "pytest");
        assert_eq!(
            line,
            "pytest was interrupted (exit 2: a collection error or an interruption): Interrupted: 1 error during collection | ERROR tests/test_calc.py - DeprecationWarning: old api"
        );
        let (_, line) = said("pytest-no-tests", captured!("pytest-no-tests"));
        assert!(line.starts_with("pytest collected no tests (exit 5): 11 deselected in "), "{line}");
        let (_, line) = said("pytest-usage", captured!("pytest-usage"));
        assert!(
            line.starts_with("pytest was given a wrong command line (exit 4: usage error): ERROR: usage:"),
            "{line}"
        );
        assert!(line.contains("unrecognized arguments: --no-such-option"), "{line}");
        let (runner, line) = said("cargo-test-compile-error", captured!("cargo-test-compile-error"));
        assert_eq!(runner, "cargo test");
        assert!(line.contains("error: could not compile `ids` (lib)"), "{line}");
        let (runner, line) = said("go-test-build-failed", captured!("go-test-build-failed"));
        assert_eq!(runner, "go test");
        assert!(line.contains("syntax error") && line.contains("[build failed]"), "{line}");
        let (runner, line) = said("go-test-setup-failed", captured!("go-test-setup-failed"));
        assert_eq!(runner, "go test");
        assert!(line.contains("no required module provides package example.com/nowhere"), "{line}");
        assert_eq!(
            said("jest-no-tests", captured!("jest-no-tests")).1,
            "jest found no tests: No tests found, exiting with code 1"
        );
        assert_eq!(
            said("vitest-no-tests", captured!("vitest-no-tests")).1,
            "vitest found no tests: No test files found, exiting with code 1"
        );
        // Killed by a signal, whatever it printed; a clean exit is never one.
        assert_eq!(
            runner_failure("....\n", None, Some(9)).map(|r| r.line()).as_deref(),
            Some("the runner was killed by signal 9")
        );
        assert_eq!(runner_failure(captured!("pytest-collection-error"), Some(0), None), None);
        // Exit 2 without pytest's words is some other tool's failure.
        assert_eq!(runner_failure("src/a.py:1:1: E999 SyntaxError\n", Some(2), None), None);
    }

    #[test]
    fn failing_entries_keep_their_whole_id() {
        assert_eq!(test_id_of("tests/t.py::test_x[a - b] - AssertionError: x"), "tests/t.py::test_x[a - b]");
        assert_eq!(test_id_of("tests/t.py::test_x - KeyError: 'a'"), "tests/t.py::test_x");
        assert_eq!(test_id_of("cart › when empty › totals zero"), "cart > when empty > totals zero");
        assert_eq!(test_id_of("tests::parse::fails"), "tests::parse::fails");
        assert!(is_target("cart › adds an item", "cart > adds an item"));
        assert_eq!(read("tests::bad --- FAILED\n").failed, ["tests::bad"]);
        // vitest in colour, as a terminal shows it.
        let coloured = " \x1b[32m✓\x1b[39m cart.test.js\x1b[2m > \x1b[22mcart\x1b[2m > \x1b[22madds an item\x1b[32m 4\x1b[2mms\x1b[22m\x1b[39m\n";
        assert_eq!(read(coloured).passed, ["cart.test.js > cart > adds an item"]);
    }

    #[test]
    fn targets() {
        let run = read("t.py::test_a[1] PASSED\nt.py::test_b PASSED\n");
        let runs = [&run];
        assert_eq!(target_status("t.py::test_a", &runs, &[]), TargetStatus::Passed);
        assert_eq!(target_status("t.py::test_b", &runs, &["t.py::test_b"]), TargetStatus::Failed);
        assert_eq!(target_status("t.py::test_c", &runs, &[]), TargetStatus::NotReported);
        assert!(!is_target("t.py::test_ab", "t.py::test_a"));
        assert!(is_target("src/a.test.ts > math > adds", "math > adds"));
    }
}
