//! Every line the prompt marks as a fact is one: checked against the
//! record (and the logs it cites) before it is written, and left out when
//! it is not backed. A false fact misleads the next attempt more than a
//! missing one.
//!
//! - a file named as written (`Last activity: a write to ...`) is one the
//!   attempt changed (its change, or a leftover moved out of it);
//! - "the attempt changed no file" holds only of an attempt whose change
//!   is empty;
//! - a test named as failing is named in its check's output, and a
//!   diagnostic's file too;
//! - a line quoted from the agent's output is in that log; an entry of a
//!   check's digest (retry-run's summary of its output: entries joined
//!   from several lines, headers and counts of its own) names only what
//!   the output holds: every location, id and value in it (a word with a
//!   digit, `/`, `:`, `.` or `_`) is in the log.
//!
//! Pure: the logs are handed in ([`Logs`]), read by the caller from the
//! attempt's record; without them (`Logs::default()`) only what the record
//! itself holds is checked.

use std::collections::BTreeMap;

use super::{Feedback, Label};
use crate::model::{AttemptRecord, CheckResult, Failure};

/// The logs of the attempt the facts are about, as its record keeps them
/// (`agent.out`, `checks/<name>.out`), paths in them made relative to the
/// worktree as the record's are.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Logs {
    pub agent: Option<String>,
    /// By check name.
    pub checks: BTreeMap<String, String>,
}

/// The line that names the agent's last write.
const LAST_ACTIVITY: &str = "- Last activity: a write to `";

/// The line that introduces the end of the agent's output.
const END_OF_OUTPUT: &str = "- The end of its output:";

/// The line that introduces a check's digested output.
const DIGESTED: &str = "- Its output, digested:";

/// `feedback` on attempt `r` with every fact line that the record and
/// `logs` do not back left out (a fact left with nothing to say, dropped
/// whole); returns it and what was left out, each in words.
pub(crate) fn backed(feedback: Vec<Feedback>, r: &AttemptRecord, logs: &Logs) -> (Vec<Feedback>, Vec<String>) {
    let mut unbacked = Vec::new();
    let mut kept = Vec::new();
    for mut f in feedback {
        if f.label != Label::Fact {
            kept.push(f);
            continue;
        }
        let keep = match f.source.as_str() {
            "agent" => {
                agent_facts(&mut f, r, logs, &mut unbacked);
                true
            }
            "empty-diff" => {
                let empty = r.files.is_empty();
                if !empty {
                    unbacked.push(format!("\"{}\": the attempt changed {} file(s)", f.title, r.files.len()));
                }
                empty
            }
            s => match s.strip_prefix("check:").and_then(|name| r.checks.iter().find(|c| c.name == name)) {
                Some(c) => {
                    check_facts(&mut f, c, logs.checks.get(&c.name), &mut unbacked);
                    true
                }
                None => true,
            },
        };
        if keep {
            kept.push(f);
        }
    }
    (kept, unbacked)
}

/// The agent's facts: its last write, one the attempt made; the end of
/// its output, lines of its log.
fn agent_facts(f: &mut Feedback, r: &AttemptRecord, logs: &Logs, unbacked: &mut Vec<String>) {
    f.lines.retain(|l| match l.strip_prefix(LAST_ACTIVITY).and_then(|p| p.strip_suffix('`')) {
        Some(path) if !wrote(r, path) => {
            unbacked.push(format!("last activity `{path}`: not a file the attempt changed"));
            false
        }
        _ => true,
    });
    if let Some(log) = &logs.agent {
        quoted_in(&mut f.output, log, "the agent's output", unbacked);
    }
    if f.output.is_empty() {
        f.lines.retain(|l| l != END_OF_OUTPUT);
    }
}

/// Whether the attempt wrote `path`: a file of its change (or the path it
/// was renamed from), or a leftover moved out of it.
pub(crate) fn wrote(r: &AttemptRecord, path: &str) -> bool {
    r.files.iter().any(|c| c.path == path || c.old_path.as_deref() == Some(path))
        || r.agent.as_ref().is_some_and(|a| a.leftovers.iter().any(|l| l == path))
}

/// A failing check's facts: each failure it lists named in its output,
/// each line of its digest a line of its output. Without its output, as
/// recorded, nothing is checked.
fn check_facts(f: &mut Feedback, c: &CheckResult, log: Option<&String>, unbacked: &mut Vec<String>) {
    let Some(log) = log else { return };
    let plain = plain(log);
    let failures: Vec<&Failure> = c.failures.iter().chain(&c.pre_existing).collect();
    let before = f.lines.len();
    f.lines.retain(|l| {
        let Some(item) = l.strip_prefix("- ") else { return true };
        // The longest label the line starts with: the failure it lists.
        let Some(failure) =
            failures.iter().filter(|x| item.starts_with(x.label.as_str())).max_by_key(|x| x.label.len())
        else {
            return true;
        };
        let named = named_in(failure, &plain);
        if !named {
            unbacked.push(format!("check `{}`: `{}` is not in its output", c.name, failure.label));
        }
        named
    });
    f.omitted += before - f.lines.len();
    f.output.retain(|l| {
        let found = digested_from(l, &plain);
        if !found {
            unbacked.push(format!(
                "check `{}`: a digest entry its output does not hold: {}",
                c.name,
                crate::text::clip(l, 120, "...")
            ));
        }
        found
    });
    if f.output.is_empty() {
        f.lines.retain(|l| l != DIGESTED);
    }
}

/// Whether the output `plain` names failure `x`, read from it: every
/// location, id and value of its label ([`names_only_what`]), the
/// enclosing scope retry-run added (` (in Calc.add)`) aside. A finding of
/// retry-run's own (a check that wrote the worktree, a runner that did not
/// run its tests, a target, test integrity) is its own words.
fn named_in(x: &Failure, plain: &str) -> bool {
    let ours = x.target
        || x.key.starts_with(crate::model::WROTE_WORKTREE_KEY)
        || x.key.contains("|runner|")
        || x.key.starts_with("test-integrity|");
    if ours {
        return true;
    }
    let label = match x.label.rfind(" (in ") {
        Some(at) if x.label.ends_with(')') && !x.test => &x.label[..at],
        _ => x.label.as_str(),
    };
    names_only_what(label, plain)
}

/// Whether a line of a check's digest names only what its output `plain`
/// holds: an entry (indented) by every word of it with a digit, `/`, `:`,
/// `.` or `_` (locations, test ids, values); the digest's own headers,
/// counts and omission marks are retry-run's words.
pub(crate) fn digested_from(line: &str, plain: &str) -> bool {
    let line = plain_line(line);
    let Some(entry) = line.strip_prefix("  ").map(str::trim) else { return true };
    entry.starts_with("[...") || names_only_what(entry, plain)
}

/// Whether every location, id and value of `entry` (a word of it with a
/// digit, `/`, `:`, `.` or `_`; the last cut short by `...` aside) is in
/// `plain`: retry-run's summaries join and reword a tool's lines, never
/// invent what they point at.
fn names_only_what(entry: &str, plain: &str) -> bool {
    let entry = plain_line(entry);
    let entry = entry.trim();
    let clipped = entry.ends_with("...");
    let entry = entry.strip_suffix("...").unwrap_or(entry);
    let mut words: Vec<&str> = entry
        .split(|c: char| c.is_whitespace() || "()[],'\"`".contains(c))
        .map(|w| w.trim_end_matches(':'))
        .filter(|w| w.len() >= 2 && w.chars().any(|c| c.is_ascii_digit() || "/:._".contains(c)))
        .collect();
    if clipped {
        words.pop();
    }
    words.iter().all(|w| plain.contains(w) || joined_location(w, plain))
}

/// A location retry-run joined from a tool's lines (`src/job.ts:261:3`
/// from ESLint stylish's file header and its `261:3` row; tsc's
/// `src/a.ts(10,5)` written `src/a.ts:10:5`): its path and its line and
/// column are each in `plain`.
fn joined_location(word: &str, plain: &str) -> bool {
    let Some((path, at)) = word.split_once(':') else { return false };
    let numbers = !at.is_empty() && at.split(':').all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    numbers
        && (path.contains('.') || path.contains('/'))
        && plain.contains(path)
        && (plain.contains(at) || plain.contains(&format!("({})", at.replace(':', ","))))
}

/// `lines` with each that is not in `log` left out.
fn quoted_in(lines: &mut Vec<String>, log: &str, what: &str, unbacked: &mut Vec<String>) {
    let plain = plain(log);
    lines.retain(|l| {
        let found = in_log(l, &plain);
        if !found {
            unbacked.push(format!("a line not in {what}: {}", crate::text::clip(l, 120, "...")));
        }
        found
    });
}

/// Whether the quoted `line` is in `plain` (a log without its terminal
/// escapes): its words as written, a clipped line's before the cut.
pub(crate) fn in_log(line: &str, plain: &str) -> bool {
    let l = plain_line(line);
    let l = l.trim();
    let l = l.strip_suffix("[...]").or_else(|| l.strip_suffix("...")).unwrap_or(l).trim_end();
    l.is_empty() || plain.contains(l)
}

/// `text` without terminal escapes (colours, cursor moves) and carriage
/// returns, as the record's lines are.
fn plain(text: &str) -> String {
    text.lines().map(plain_line).collect::<Vec<_>>().join("\n")
}

fn plain_line(line: &str) -> String {
    crate::text::plain(line).replace('\r', "")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ContextConfig;
    use crate::model::{AgentRun, CheckKind, FileChange, Outcome};
    use proptest::prelude::*;

    fn change(path: &str) -> FileChange {
        FileChange { path: path.into(), ..FileChange::default() }
    }

    fn feedback_of(r: &AttemptRecord, logs: &Logs) -> (Vec<Feedback>, Vec<String>) {
        let cfg = ContextConfig::default();
        backed(super::super::previous::feedback(r, &cfg), r, logs)
    }

    fn text_of(f: &[Feedback]) -> String {
        f.iter().map(|f| format!("{}\n{}\n{}", f.title, f.lines.join("\n"), f.output.join("\n"))).collect()
    }

    fn crashed(last: Option<&str>, tail: &[&str]) -> AttemptRecord {
        let mut r = AttemptRecord::new(1);
        r.outcome = Outcome::Crash;
        r.agent = Some(AgentRun {
            exit_code: Some(1),
            last_activity: last.map(String::from),
            output_tail: tail.iter().map(|s| s.to_string()).collect(),
            ..AgentRun::default()
        });
        r
    }

    #[test]
    fn a_location_joined_from_a_tools_lines_is_backed_by_them() {
        let stylish = "/w/src/job.ts\n  261:3  error  Comments should not begin with an uppercase character  capitalized-comments\n";
        assert!(digested_from("  src/job.ts:261:3: error Comments should not begin  capitalized-comments", stylish));
        assert!(!digested_from("  src/job.ts:262:3: error Comments should not begin  capitalized-comments", stylish));
        assert!(!digested_from("  src/other.ts:261:3: error Comments", stylish));
        let tsc = "src/a.ts(10,5): error TS2345: Argument of type 'string'.\n";
        assert!(digested_from("  src/a.ts:10:5: error TS2345: Argument of type 'string'.", tsc));
    }

    #[test]
    fn a_crash_names_only_a_file_the_attempt_changed_and_lines_of_its_output() {
        let logs = Logs { agent: Some("starting\n\u{1b}[31mError: boom\u{1b}[0m\n".into()), ..Logs::default() };
        // The config retry-run checked out: not the agent's write.
        let r = crashed(Some("retry-run.toml"), &["Error: boom"]);
        let (f, unbacked) = feedback_of(&r, &logs);
        let text = text_of(&f);
        assert!(!text.contains("Last activity"), "{text}");
        assert!(text.contains("Error: boom"), "the line is in its log, colours aside: {text}");
        assert_eq!(unbacked.len(), 1, "{unbacked:?}");
        // A file it changed is named.
        let mut r = crashed(Some("src/app.py"), &["Error: boom"]);
        r.files.push(change("src/app.py"));
        let text = text_of(&feedback_of(&r, &logs).0);
        assert!(text.contains("Last activity: a write to `src/app.py`"), "{text}");
        // A line that is not in the log it cites is left out, and with no
        // line left, so is the line that introduces them.
        let r = crashed(None, &["Segmentation fault"]);
        let (f, unbacked) = feedback_of(&r, &logs);
        let text = text_of(&f);
        assert!(!text.contains("Segmentation fault") && !text.contains(END_OF_OUTPUT), "{text}");
        assert_eq!(unbacked.len(), 1);
    }

    #[test]
    fn a_timeout_without_a_write_says_when_and_nothing_it_did_not_do() {
        let mut r = crashed(Some("notes.txt"), &["still thinking..."]);
        if let Some(a) = r.agent.as_mut() {
            a.exit_code = None;
            a.signal = Some(9);
            a.timed_out = true;
            a.timeout_ms = 60_000;
        }
        r.outcome = Outcome::Timeout;
        let logs = Logs { agent: Some("still thinking...\n".into()), ..Logs::default() };
        let text = text_of(&feedback_of(&r, &logs).0);
        assert!(text.contains("stopped at its 1m limit") || text.contains("stopped at its"), "{text}");
        assert!(!text.contains("notes.txt") && text.contains("still thinking"), "{text}");
    }

    #[test]
    fn an_empty_diff_is_said_only_of_an_attempt_that_changed_nothing() {
        let mut r = AttemptRecord::new(1);
        r.outcome = Outcome::EmptyDiff;
        r.agent = Some(AgentRun { exit_code: Some(0), ..AgentRun::default() });
        let text = text_of(&feedback_of(&r, &Logs::default()).0);
        assert!(text.contains("changed no file"), "{text}");
        r.files.push(change("a.py"));
        let (f, unbacked) = feedback_of(&r, &Logs::default());
        assert!(!text_of(&f).contains("changed no file"));
        assert_eq!(unbacked.len(), 1);
    }

    #[test]
    fn refused_writes_are_the_sandbox_s_own_record() {
        let mut r = crashed(None, &[]);
        if let Some(a) = r.agent.as_mut() {
            a.refused = vec!["/home/u/.bashrc".into()];
        }
        let text = text_of(&feedback_of(&r, &Logs::default()).0);
        assert!(text.contains("refused writes outside the worktree: `/home/u/.bashrc`"), "{text}");
    }

    fn failing(name: &str, failures: &[(&str, bool)], digest: &[&str]) -> CheckResult {
        let mut c = CheckResult::new(name, CheckKind::Test, false);
        c.exit_code = Some(1);
        c.failures = failures
            .iter()
            .map(|(l, test)| Failure { key: l.to_string(), label: l.to_string(), test: *test, target: false })
            .collect();
        c.digest = digest.iter().map(|s| s.to_string()).collect();
        c
    }

    #[test]
    fn a_failing_check_names_only_tests_and_lines_of_its_output() {
        let mut r = AttemptRecord::new(1);
        r.outcome = Outcome::CheckFailure;
        r.files.push(change("calc.py"));
        r.checks.push(failing(
            "pytest",
            &[("tests/test_calc.py::test_add - assert 6 == 5", true), ("tests/test_calc.py::test_gone", true)],
            &[
                "failed tests (2):",
                "  tests/test_calc.py::test_add: assert 6 == 5",
                "  tests/test_calc.py::test_made_up: E 1",
            ],
        ));
        r.checks.push(failing("ruff", &[("calc.py:1:1: F401 `os` imported but unused", false)], &[]));
        let out = "\u{1b}[1m===== FAILURES =====\u{1b}[0m\nFAILED tests/test_calc.py::test_add - assert 6 == 5\n";
        let logs = Logs {
            checks: BTreeMap::from([
                ("pytest".to_string(), out.to_string()),
                ("ruff".to_string(), "calc.py:1:1: F401 `os` imported but unused\n".to_string()),
            ]),
            ..Logs::default()
        };
        let (f, unbacked) = feedback_of(&r, &logs);
        let text = text_of(&f);
        assert!(text.contains("test_add - assert 6 == 5") && text.contains("failed tests (2):"), "{text}");
        assert!(text.contains("  tests/test_calc.py::test_add: assert 6 == 5"), "{text}");
        assert!(!text.contains("test_gone") && !text.contains("made_up"), "{text}");
        assert!(text.contains("F401"), "{text}");
        assert_eq!(unbacked.len(), 2, "{unbacked:?}");
        // Without its output nothing of a check is checked.
        let (f, unbacked) = feedback_of(&r, &Logs::default());
        assert!(text_of(&f).contains("test_gone") && unbacked.is_empty());
    }

    /// A path of a small pool, so that generated records name the same
    /// files in their change, their last write and their logs.
    fn path() -> impl Strategy<Value = String> {
        prop::sample::select(vec!["a.py", "src/b.py", "retry-run.toml", "tests/test_c.py", "notes.txt"])
            .prop_map(String::from)
    }

    fn word() -> impl Strategy<Value = String> {
        prop::sample::select(vec!["alpha", "beta", "gamma", "delta", "Error: x", "boom", "test_one", "test_two"])
            .prop_map(String::from)
    }

    prop_compose! {
        fn record()(
            files in prop::collection::vec(path(), 0..3),
            last in prop::option::of(path()),
            timed_out in any::<bool>(),
            tail in prop::collection::vec(word(), 0..4),
            log in prop::collection::vec(word(), 0..6),
            tests in prop::collection::vec(word(), 0..4),
            digest in prop::collection::vec(word(), 0..4),
            check_log in prop::collection::vec(word(), 0..6),
            empty in any::<bool>(),
        ) -> (AttemptRecord, Logs) {
            let mut r = AttemptRecord::new(2);
            r.outcome = if empty { Outcome::EmptyDiff } else if timed_out { Outcome::Timeout } else { Outcome::Crash };
            r.files = files.iter().map(|p| change(p)).collect();
            r.agent = Some(AgentRun {
                exit_code: if timed_out { None } else { Some(1) },
                timed_out,
                timeout_ms: 60_000,
                last_activity: last,
                output_tail: tail,
                ..AgentRun::default()
            });
            let tests: Vec<String> = tests.iter().map(|t| format!("t.py::{t}")).collect();
            let failures: Vec<(&str, bool)> = tests.iter().map(|t| (t.as_str(), true)).collect();
            let digest: Vec<String> = digest.iter().map(|d| format!("  t.py::{d}: 1")).collect();
            let digest: Vec<&str> = digest.iter().map(String::as_str).collect();
            r.checks.push(failing("t", &failures, &digest));
            let check_log: Vec<String> = check_log.iter().map(|w| format!("t.py::{w}: 1")).collect();
            let logs = Logs {
                agent: Some(log.join("\n")),
                checks: BTreeMap::from([("t".to_string(), check_log.join("\n"))]),
            };
            (r, logs)
        }
    }

    proptest! {
        /// Every fact left in the feedback is backed: the last write is a
        /// file of the change, every quoted line is in its log, every test
        /// named is in its check's output, an empty diff is empty; and
        /// every backed one is kept.
        #[test]
        fn every_fact_written_is_backed_by_the_record((r, logs) in record()) {
            let cfg = ContextConfig::default();
            let all = super::super::previous::feedback(&r, &cfg);
            let (kept, _) = backed(all.clone(), &r, &logs);
            let agent_log = logs.agent.clone().unwrap_or_default();
            let check_log = logs.checks.get("t").cloned().unwrap_or_default();
            for f in kept.iter().filter(|f| f.label == Label::Fact) {
                for l in &f.lines {
                    if let Some(p) = l.strip_prefix(LAST_ACTIVITY).and_then(|p| p.strip_suffix('`')) {
                        prop_assert!(r.files.iter().any(|c| c.path == p), "{} named, not changed", p);
                    }
                }
                for l in &f.output {
                    if f.source == "agent" {
                        prop_assert!(agent_log.contains(l.as_str()), "{l:?} not in {agent_log:?}");
                    } else {
                        prop_assert!(digested_from(l, &check_log), "{l:?} not from {check_log:?}");
                    }
                }
                if f.source == "check:t" {
                    for c in &r.checks[0].failures {
                        if f.lines.iter().any(|l| l == &format!("- {}", c.label)) {
                            prop_assert!(check_log.contains(c.label.as_str()), "{} named", c.label);
                        }
                    }
                }
                if f.source == "empty-diff" {
                    prop_assert!(r.files.is_empty());
                }
            }
            // Nothing backed is lost.
            let said = text_of(&kept);
            if let Some(p) = r.agent.as_ref().and_then(|a| a.last_activity.as_ref())
                && r.files.iter().any(|c| &c.path == p)
                && text_of(&all).contains(&format!("`{p}`"))
            {
                let named = format!("a write to `{p}`");
                prop_assert!(said.contains(&named), "{} lost", named);
            }
            for l in r.agent.iter().flat_map(|a| a.output_tail.iter()) {
                if agent_log.contains(l.as_str()) && text_of(&all).contains(l.as_str()) {
                    prop_assert!(said.contains(l.as_str()), "{l} lost");
                }
            }
        }
    }
}
