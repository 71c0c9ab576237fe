//! The answers of the self-check tools (docs/mcp.md), from the record and
//! the config alone: `run_checks` says what the gates found in the words
//! the next prompt would use ([`super::render::what_went_wrong`]);
//! `previous_attempts` the retry context, or one earlier attempt in
//! detail; `task` the task, its targets, its scope and its gates. Pure.

use crate::config::{Config, WeakeningMode};
use crate::model::{AttemptRecord, BaselineMode, CheckResult, Outcome};
use crate::text::plural;

use super::{TaskText, assemble, render, required_change};

/// Tokens an answer may take, before the agent's own context limits.
pub(crate) const ANSWER_TOKENS: usize = 2000;
/// Bytes of an answer the agent asked for in full (a diff, a digest).
pub(crate) const FULL_ANSWER_BYTES: usize = 32 * 1024;

/// `text` cut to whole lines within `max` bytes, the cut said.
fn bounded(text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let mut out = String::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut kept = 0;
    for l in &lines {
        if out.len() + l.len() + 1 > max.saturating_sub(64) {
            break;
        }
        out.push_str(l);
        out.push('\n');
        kept += 1;
    }
    out.push_str(&format!("[... {} more lines omitted]\n", lines.len() - kept));
    out
}

/// The prompt's note that the tools exist, for an agent they are wired
/// into.
pub(crate) fn prompt_note(max_self_checks: u32) -> String {
    format!(
        "\n## Self-checks\n\nYou have an MCP server named `retry-run` with three tools. `run_checks` runs this task's gates (its checks, judged against the base; its target tests; test integrity; the scope) on your work as it is now: call it before you finish, and fix what it reports ({max_self_checks} call{} at most). `previous_attempts` tells what earlier attempts did and why they failed; `task` gives the task's targets, scope and gates. What they say is advisory: the real gates run again after you exit.\n",
        plural(max_self_checks as usize)
    )
}

/// What `run_checks` found on the worktree as it is now.
pub(crate) struct SelfCheckFound<'a> {
    /// This call's number and the cap.
    pub call: u32,
    pub max: u32,
    /// The attempt as if it ended now, classified, with its checks.
    pub record: &'a AttemptRecord,
    /// Why the configured checks were not run (the real gates would not
    /// run them either), if they were not.
    pub skipped: Option<String>,
    /// Checks left out by the call's `checks` argument.
    pub left_out: Vec<String>,
}

/// The answer of a `run_checks` call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChecksAnswer {
    /// What the agent reads.
    pub text: String,
    /// Whether every gate passed.
    pub passed: bool,
}

/// The answer of `run_checks`, and whether every gate passed.
pub(crate) fn run_checks_answer(
    task: &TaskText,
    found: &SelfCheckFound<'_>,
    cfg: &crate::config::ContextConfig,
) -> ChecksAnswer {
    let r = found.record;
    let passed = r.outcome == Outcome::Success;
    let mut out = format!(
        "Self-check {} of {}: {} (advisory: the real gates run again after you finish)\n\n",
        found.call,
        found.max,
        if passed { "every gate passed" } else { "FAIL" }
    );
    let files = r.files.len();
    let scope = if r.scope.is_empty() {
        format!("ok ({files} file{} changed)", plural(files))
    } else {
        format!("VIOLATION ({} path{})", r.scope.len(), plural(r.scope.len()))
    };
    out.push_str(&format!("- scope: {scope}\n"));
    for v in &r.scope {
        if v.reason == crate::model::ScopeReason::ActsAfterLand {
            out.push_str(&format!("  - `{}`: {}\n", v.path, super::required::acts_after_land(v)));
        }
    }
    for v in &r.flagged {
        out.push_str(&format!("- flagged (not failing): `{}`: {}\n", v.path, super::required::acts_after_land(v)));
    }
    if let Some(why) = &found.skipped {
        out.push_str(&format!("- checks: not run: {why}\n"));
    }
    for c in &r.checks {
        out.push_str(&format!("- `{}`: {}\n", c.name, state(c)));
    }
    if !found.left_out.is_empty() {
        out.push_str(&format!("- not run this time (not asked for): {}\n", found.left_out.join(", ")));
    }
    if passed {
        return ChecksAnswer { text: out, passed: true };
    }
    out.push_str(&format!("\n**Required change:** {}\n", required_change(r).text));
    let ctx = assemble(task, r.number + 1, r.number + 1, std::slice::from_ref(r), cfg);
    let wrong = render::what_went_wrong(&ctx, ANSWER_TOKENS);
    if !wrong.is_empty() {
        out.push('\n');
        out.push_str(&wrong);
    }
    ChecksAnswer { text: out, passed: false }
}

/// A check's state in a few words.
fn state(c: &CheckResult) -> String {
    let new = c.failures.len();
    let pre = c.pre_existing.len();
    let base = if pre > 0 { format!("; {pre} already failing on the base") } else { String::new() };
    if c.timed_out {
        "TIMEOUT (stopped at its time limit)".into()
    } else if c.passed && !c.warnings.is_empty() {
        format!("ok, with {} warning{}", c.warnings.len(), plural(c.warnings.len()))
    } else if c.passed {
        format!("ok{base}")
    } else if new > 0 {
        format!("FAIL ({new} new failure{}{base})", plural(new))
    } else {
        format!("FAIL ({}{base})", crate::text::exit_text(c.exit_code, c.signal))
    }
}

/// The answer of `previous_attempts`: without `attempt`, the retry context
/// of attempt `n` (what its prompt holds); with one, that attempt in
/// detail, its diff, or one check's whole digest.
pub(crate) fn previous_answer(
    task: &TaskText,
    window: (u32, u32),
    prior: &[AttemptRecord],
    ask: (Option<u32>, bool, Option<&str>),
    cfg: &crate::config::ContextConfig,
) -> Result<String, NotRecorded> {
    previous_in_full(task, window, prior, ask, cfg).map(|t| bounded(t, FULL_ANSWER_BYTES))
}

/// What `previous_attempts` was asked for and the record does not hold.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum NotRecorded {
    #[error("no attempt {number}: this is the task's first attempt")]
    FirstAttempt { number: u32 },
    #[error("no attempt {number}: the earlier attempts are {earlier}")]
    Attempt { number: u32, earlier: String },
    #[error("attempt {number} has no check `{name}`; its checks: {checks}")]
    Check { number: u32, name: String, checks: String },
}

fn previous_in_full(
    task: &TaskText,
    (n, max): (u32, u32),
    prior: &[AttemptRecord],
    ask: (Option<u32>, bool, Option<&str>),
    cfg: &crate::config::ContextConfig,
) -> Result<String, NotRecorded> {
    let (attempt, diff, check) = ask;
    let Some(number) = attempt else {
        if prior.is_empty() {
            return Ok(format!("This is attempt {n} of {max}, the task's first: no earlier attempt to tell of."));
        }
        let ctx = assemble(task, n, max, prior, cfg);
        return Ok(render::render(&ctx, cfg).prompt);
    };
    let numbers: Vec<String> = prior.iter().map(|r| r.number.to_string()).collect();
    let Some(r) = prior.iter().find(|r| r.number == number) else {
        return Err(if numbers.is_empty() {
            NotRecorded::FirstAttempt { number }
        } else {
            NotRecorded::Attempt { number, earlier: numbers.join(", ") }
        });
    };
    if let Some(name) = check {
        let Some(c) = r.checks.iter().find(|c| c.name == name) else {
            let names: Vec<&str> = r.checks.iter().map(|c| c.name.as_str()).collect();
            let checks = if names.is_empty() { "none ran".to_string() } else { names.join(", ") };
            return Err(NotRecorded::Check { number, name: name.to_string(), checks });
        };
        let mut out = format!("Check `{}` of attempt {number}: {}\n", c.name, state(c));
        for f in &c.failures {
            out.push_str(&format!("- {}\n", f.label));
        }
        for f in &c.pre_existing {
            out.push_str(&format!("- {} (already failing on the base)\n", f.label));
        }
        if !c.digest.is_empty() {
            out.push_str("\nIts output, digested:\n```\n");
            out.push_str(&c.digest.join("\n"));
            out.push_str("\n```\n");
        }
        return Ok(out);
    }
    if diff {
        if r.diff.is_empty() {
            return Ok(format!("Attempt {number} changed no file."));
        }
        let mut out = format!("The diff of attempt {number}:\n```diff\n{}\n```\n", r.diff.join("\n"));
        if r.diff_omitted > 0 {
            out.push_str(&format!("[... {} lines omitted]\n", r.diff_omitted));
        }
        return Ok(out);
    }
    let mut out = format!("Attempt {number}: {}: {}.\n", r.outcome.as_str(), r.reason);
    out.push_str(&format!("Required change: {}\n", required_change(r).text));
    for c in &r.checks {
        out.push_str(&format!("- `{}`: {}\n", c.name, state(c)));
    }
    for v in &r.scope {
        out.push_str(&format!("- scope: `{}`: {}\n", v.path, v.reason));
    }
    let files: Vec<String> = r.files.iter().map(|f| format!("{} {}", f.status, f.path)).collect();
    if !files.is_empty() {
        out.push_str(&format!("Files: {}\n", files.join(", ")));
    }
    if let Some(v) = &r.verifier
        && let Some(critique) = &v.critique
    {
        out.push_str(&format!("The reviewer (advisory): {critique}\n"));
    }
    out.push_str("Ask with `diff: true` for its diff, or `check: NAME` for a check's whole digest.\n");
    Ok(out)
}

/// The answer of `task`: the task, its targets, its scope, and the gates
/// that decide it.
pub(crate) fn task_answer(task: &TaskText, (n, max): (u32, u32), config: &Config, max_self_checks: u32) -> String {
    let mut out = format!("# Task {} (attempt {n} of {max})\n\n{}\n\n", task.id, task.text.trim_end());
    out.push_str("## Targets (tests that must pass)\n");
    if config.targets.is_empty() {
        out.push_str("none named\n");
    }
    for t in &config.targets {
        out.push_str(&format!("- `{t}`\n"));
    }
    out.push_str("\n## Scope (paths the change may write)\n");
    let allow = if config.scope.allow.is_empty() { "everything".to_string() } else { globs(&config.scope.allow) };
    out.push_str(&format!("- allow: {allow}\n"));
    if !config.scope.deny.is_empty() {
        out.push_str(&format!("- deny (wins over allow): {}\n", globs(&config.scope.deny)));
    }
    out.push_str(match config.scope.acts_after_land {
        crate::model::LandGate::Fail => "- files that act once the change lands (CI workflows, `.gitattributes`, `.gitmodules`, `.envrc`, editor tasks, git hooks, `retry-run.toml`, ...): refused unless an allow glob names them\n",
        crate::model::LandGate::Flag => "- files that act once the change lands (CI workflows, `.gitattributes`, `.gitmodules`, `.envrc`, editor tasks, git hooks, ...): flagged for the reviewer; `retry-run.toml` refused unless an allow glob names it\n",
        crate::model::LandGate::Off => "- `retry-run.toml`: refused unless an allow glob names it\n",
    });
    out.push_str("- nothing outside the worktree\n\n## Gates, in order\n");
    out.push_str("1. scope: the change against the globs above; a violation skips the checks\n");
    for (i, c) in config.checks.iter().enumerate() {
        let how = match c.baseline_mode(&config.retry) {
            BaselineMode::Auto => {
                "judged against the base: diagnostics already on the base do not count; a test already failing there counts unless the task names targets and it is not one"
            }
            BaselineMode::Label => "judged against the base: failures already on the base still fail it, labelled so",
            BaselineMode::Tolerate => "judged against the base: only new failures fail it",
            BaselineMode::Off => "not run on the base: every failure counts",
        };
        out.push_str(&format!("{}. check `{}`: `{}` ({how})\n", i + 2, c.name, c.run));
    }
    let mut next = config.checks.len() + 2;
    if !config.targets.is_empty() {
        out.push_str(&format!("{next}. targets: every target reported passing by some check\n"));
        next += 1;
    }
    if config.retry.test_weakening != WeakeningMode::Off {
        let how = if config.retry.test_weakening == WeakeningMode::Fail { "fails the attempt" } else { "a warning" };
        out.push_str(&format!(
            "{next}. test-integrity: tests removed, skipped or with fewer assertions than on the base ({how})\n"
        ));
        next += 1;
    }
    if config.verifier.is_some() {
        out.push_str(&format!("{next}. a reviewer reads the change (not run by run_checks)\n"));
    }
    out.push_str(&format!(
        "\n`run_checks` runs these gates on your work now, {max_self_checks} time{} per attempt at most.\n",
        plural(max_self_checks as usize)
    ));
    out
}

fn globs(g: &[String]) -> String {
    g.iter().map(|x| format!("`{x}`")).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{CheckKind, Failure};

    fn task() -> TaskText {
        TaskText { id: "t".into(), title: "t".into(), text: "Fix add().".into() }
    }

    fn failing() -> AttemptRecord {
        let mut r = AttemptRecord::new(1);
        r.outcome = Outcome::CheckFailure;
        r.reason = "check test failed".into();
        r.files.push(crate::model::FileChange {
            path: "calc.py".into(),
            old_path: None,
            status: "M".into(),
            additions: 1,
            deletions: 1,
            binary: false,
        });
        let mut c = CheckResult::new("test", CheckKind::Test, false);
        c.exit_code = Some(1);
        c.failures.push(Failure {
            key: "test_calc.py::test_add".into(),
            label: "test `test_calc.py::test_add` failed".into(),
            test: true,
            target: false,
        });
        c.digest = vec!["E   assert 5 == 6".into()];
        r.checks.push(c);
        r
    }

    #[test]
    fn a_failing_self_check_names_the_test_and_its_assertion() {
        let r = failing();
        let found = SelfCheckFound { call: 1, max: 5, record: &r, skipped: None, left_out: vec![] };
        let ChecksAnswer { text, passed } = run_checks_answer(&task(), &found, &Default::default());
        assert!(!passed);
        assert!(text.starts_with("Self-check 1 of 5: FAIL"), "{text}");
        assert!(text.contains("- `test`: FAIL (1 new failure)"), "{text}");
        assert!(text.contains("test_calc.py::test_add"), "{text}");
        assert!(text.contains("assert 5 == 6"), "{text}");
        assert!(!text.contains("## Attempt"), "no prompt heading: {text}");
        assert!(!text.contains("## Task"), "no task: {text}");
        assert!(!text.contains("Earlier attempts"), "no history: {text}");
    }

    #[test]
    fn a_green_self_check_is_short() {
        let mut r = failing();
        r.outcome = Outcome::Success;
        r.checks = vec![CheckResult::new("test", CheckKind::Test, true)];
        let found = SelfCheckFound { call: 2, max: 5, record: &r, skipped: None, left_out: vec!["lint".into()] };
        let ChecksAnswer { text, passed } = run_checks_answer(&task(), &found, &Default::default());
        assert!(passed);
        assert!(text.contains("every gate passed"), "{text}");
        assert!(text.contains("- `test`: ok"), "{text}");
        assert!(text.contains("not asked for): lint"), "{text}");
    }

    #[test]
    fn previous_attempts_answers_each_question() {
        let cfg = Default::default();
        let prior = vec![failing()];
        let first = previous_answer(&task(), (1, 3), &[], (None, false, None), &cfg).expect("answer");
        assert!(first.contains("first"), "{first}");
        let ctx = previous_answer(&task(), (2, 3), &prior, (None, false, None), &cfg).expect("answer");
        assert!(ctx.contains("test_calc.py::test_add"), "{ctx}");
        let one = previous_answer(&task(), (2, 3), &prior, (Some(1), false, None), &cfg).expect("answer");
        assert!(one.contains("Attempt 1: CHECK_FAILURE"), "{one}");
        let check = previous_answer(&task(), (2, 3), &prior, (Some(1), false, Some("test")), &cfg).expect("answer");
        assert!(check.contains("assert 5 == 6"), "{check}");
        let none =
            previous_answer(&task(), (2, 3), &prior, (Some(4), false, None), &cfg).expect_err("no such").to_string();
        assert!(none.contains("the earlier attempts are 1"), "{none}");
        let bad =
            previous_answer(&task(), (2, 3), &prior, (Some(1), false, Some("lint")), &cfg).expect_err("no").to_string();
        assert!(bad.contains("its checks: test"), "{bad}");
        // A long diff is cut to whole lines, and the cut said.
        let mut long = failing();
        long.diff = (0..5000).map(|i| format!("+line {i} of a long change")).collect();
        let diff = previous_answer(&task(), (2, 3), &[long], (Some(1), true, None), &cfg).expect("diff");
        assert!(diff.len() <= FULL_ANSWER_BYTES, "{}", diff.len());
        assert!(diff.ends_with("more lines omitted]\n"), "{}", &diff[diff.len() - 80..]);
    }

    #[test]
    fn the_task_names_targets_scope_and_gates() {
        let config = Config::parse(
            "targets = [\"tests/test_a.py::test_x\"]\n[scope]\nallow = [\"src/**\"]\n[[check]]\nname = \"test\"\nrun = \"pytest\"\nbaseline = \"tolerate\"\n",
            std::path::Path::new("retry-run.toml"),
        )
        .expect("config");
        let text = task_answer(&task(), (1, 3), &config, 5);
        assert!(text.contains("Fix add()."), "{text}");
        assert!(text.contains("`tests/test_a.py::test_x`"), "{text}");
        assert!(text.contains("allow: `src/**`"), "{text}");
        assert!(text.contains("check `test`: `pytest` (judged against the base: only new failures"), "{text}");
        assert!(text.contains("5 times per attempt"), "{text}");
    }
}
