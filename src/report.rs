//! `retry-run report <task>`: Markdown for the human who takes a task over
//! (spec section 4): the task, every attempt with its outcome, checks,
//! required change and diff summary, and what to look at first. Pure.

use std::fmt::Write;

use crate::attempt::{AttemptRecord, Outcome, human_ms};
use crate::context::{TaskText, patterns::patterns, required_change};

/// How the task ended, from its events.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    Succeeded { attempt: u32, branch: String },
    Escalated { reason: String },
    Open,
}

/// What a human should look at first.
pub fn first_look(task: &str, attempts: &[AttemptRecord], ending: &Ending) -> String {
    let Some(last) = attempts.last() else {
        return "No attempt has run yet: `retry-run run` starts the task.".into();
    };
    if let Ending::Succeeded { attempt, branch } = ending {
        return format!(
            "Attempt {attempt} passed every gate: review branch `{branch}` (`git diff {branch}~1 {branch}`) before merging it."
        );
    }
    if last.outcome == Outcome::Unverified {
        return format!(
            "The reviewer never answered on attempt {n}, which passed every other gate: its work is kept. Review it yourself (`retry-run inspect {task}/{n} --diff`), and check the verifier command.",
            n = last.number
        );
    }
    if last.verifier.as_ref().is_some_and(|v| v.escalates()) {
        return format!(
            "The reviewer asked for a human on attempt {n}: read its critique below and the diff (`retry-run inspect {task}/{n} --diff`).",
            n = last.number
        );
    }
    let all_scope = attempts.iter().all(|a| a.outcome == Outcome::ScopeViolation);
    if all_scope {
        return "Every attempt wrote outside the allowed scope: either the task needs files outside `[scope] allow`, or the task should say where to write.".into();
    }
    if let Some(p) = patterns(attempts, 0.0).into_iter().find(|p| p.kind == "same-failing-test") {
        return format!(
            "{} The test itself, or the task's description of the expected behaviour, may be wrong; start there (`retry-run inspect {task}/{} --checks`).",
            p.observation, last.number
        );
    }
    format!(
        "Start with attempt {n}, the last: {} (`retry-run inspect {task}/{n} --diff`, `--checks`).",
        required_change(last).text,
        n = last.number
    )
}

pub fn render(task: &TaskText, base: Option<&str>, attempts: &[AttemptRecord], ending: &Ending) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# retry-run report: {}", task.title);
    let _ = writeln!(s);
    let status = match ending {
        Ending::Succeeded { attempt, branch } => format!("succeeded at attempt {attempt} (branch `{branch}`)"),
        Ending::Escalated { reason } => format!("escalated: {reason}"),
        Ending::Open => "not finished".into(),
    };
    let _ = writeln!(s, "- Task: `{}`", task.id);
    let _ = writeln!(s, "- Status: {status}");
    if let Some(b) = base {
        let _ = writeln!(s, "- Base: `{b}`");
    }
    let _ = writeln!(s, "- Attempts: {}", attempts.len());
    let _ = writeln!(s);
    let _ = writeln!(s, "## Look at this first");
    let _ = writeln!(s);
    let _ = writeln!(s, "{}", first_look(&task.id, attempts, ending));
    let _ = writeln!(s);
    let _ = writeln!(s, "## Attempts");
    for a in attempts {
        let _ = writeln!(s);
        let _ = writeln!(s, "### Attempt {}: {} ({})", a.number, a.outcome.as_str(), human_ms(a.duration_ms));
        let _ = writeln!(s);
        let _ = writeln!(s, "- Why: {}", a.reason);
        if a.outcome != Outcome::Success {
            let r = required_change(a);
            let label = if r.advisory { " (the reviewer's words)" } else { "" };
            let _ = writeln!(s, "- Required change{label}: {}", r.text);
        }
        if let Some(c) = &a.commit {
            let _ = writeln!(s, "- Commit: `{c}` (`refs/retry-run/{}/{}`)", task.id, a.number);
        }
        if a.files.is_empty() {
            let _ = writeln!(s, "- Files: none changed");
        } else {
            let _ = writeln!(s, "- Files:");
            for f in &a.files {
                let old = f.old_path.as_ref().map(|o| format!(" (from `{o}`)")).unwrap_or_default();
                let _ = writeln!(s, "  - {} `{}`{old} +{} -{}", f.status, f.path, f.additions, f.deletions);
            }
        }
        for v in &a.scope {
            let rule = v.rule.as_ref().map(|r| format!(" (rule `{r}`)")).unwrap_or_default();
            let _ = writeln!(s, "- Scope violation: `{}`: {}{rule}", v.path, v.reason);
        }
        for c in &a.checks {
            let state = if c.flaky {
                "passed (flaky)"
            } else if c.passed {
                "passed"
            } else {
                "FAILED"
            };
            let pre = if c.pre_existing.is_empty() {
                String::new()
            } else {
                format!(", {} failure(s) already on the base", c.pre_existing.len())
            };
            let _ = writeln!(s, "- Check `{}`: {state}{pre}", c.name);
            for f in c.failures.iter().take(10) {
                let _ = writeln!(s, "  - {}", f.label);
            }
            if c.failures.len() > 10 {
                let _ = writeln!(s, "  - [... {} more]", c.failures.len() - 10);
            }
        }
        if let Some(v) = &a.verifier {
            if v.answered {
                let _ = writeln!(
                    s,
                    "- Reviewer: {} (confidence {:.2})",
                    v.verdict.as_deref().unwrap_or("?"),
                    v.confidence.unwrap_or(1.0)
                );
                if let Some(c) = &v.critique {
                    for line in c.lines() {
                        let _ = writeln!(s, "  > {line}");
                    }
                }
            } else {
                let _ = writeln!(s, "- Reviewer: no answer after {} call(s)", v.calls);
                for p in &v.problems {
                    let _ = writeln!(s, "  - {p}");
                }
            }
        }
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "## The task");
    let _ = writeln!(s);
    let _ = write!(s, "{}", task.text);
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attempt::VerifierResult;

    #[test]
    fn first_look_points_at_a_silent_reviewer() {
        let mut a = AttemptRecord::new(2);
        a.outcome = Outcome::Unverified;
        a.verifier = Some(VerifierResult { calls: 3, ..VerifierResult::default() });
        let text = first_look("t", &[AttemptRecord::new(1), a], &Ending::Escalated { reason: "x".into() });
        assert!(text.starts_with("The reviewer never answered on attempt 2"), "{text}");
        assert!(text.contains("retry-run inspect t/2 --diff"));
    }

    #[test]
    fn report_lists_every_attempt_and_the_task() {
        let task = TaskText { id: "t".into(), title: "Fix it".into(), text: "# Fix it\n".into() };
        let mut a = AttemptRecord::new(1);
        a.outcome = Outcome::EmptyDiff;
        a.reason = "the attempt changed no file".into();
        let md = render(&task, Some("abc"), &[a], &Ending::Escalated { reason: "1 attempt failed".into() });
        assert!(md.contains("### Attempt 1: EMPTY_DIFF"));
        assert!(md.contains("- Required change: Make actual changes"));
        assert!(md.ends_with("## The task\n\n# Fix it\n"));
    }
}
