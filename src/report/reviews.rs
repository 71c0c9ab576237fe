//! The report's account of what reviewers and lands said of a task's
//! results (docs/review.md): each review in order ("Reviews"), the land
//! ("Landed"), and what to do next after a verdict. Pure.

use std::fmt::Write;

use crate::model::{Channel, LandHow, Landed, LineComment, Review, Verdict};
use crate::pathfmt::shown_text;
use crate::text::plural;

/// What the task's record says of its results' reviews: every `Reviewed`
/// in the log's order, and the latest `TaskLanded`.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Verdicts<'a> {
    pub reviews: &'a [Review],
    pub landed: Option<&'a Landed>,
}

/// Where attempt `attempt`'s result stands with its reviewers: landed,
/// else the latest verdict on it (the rule of `TaskState::review_label`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum OnResult<'a> {
    Landed(&'a Landed),
    Reviewed(&'a Review),
}

impl<'a> Verdicts<'a> {
    pub(crate) fn on(&self, attempt: u32) -> Option<OnResult<'a>> {
        if let Some(l) = self.landed.filter(|l| l.attempt == attempt) {
            return Some(OnResult::Landed(l));
        }
        self.reviews.iter().rev().find(|r| r.attempt == attempt).map(OnResult::Reviewed)
    }

    /// `landed`, `approved`, `rejected`, or `None` (not reviewed).
    pub(crate) fn label(&self, attempt: u32) -> Option<&'static str> {
        match self.on(attempt)? {
            OnResult::Landed(_) => Some("landed"),
            OnResult::Reviewed(r) => Some(r.verdict.as_str()),
        }
    }
}

/// Lines of a critique the report quotes; the rest is cut, and the cut
/// said.
pub(crate) const CRITIQUE_LINES: usize = 30;
/// Bytes of a critique the report quotes at most.
const CRITIQUE_BYTES: usize = 4000;
/// Failures, digest lines and diff lines of a comment the report lists at
/// most, each.
const LISTED: usize = 10;
const OUTPUT_LINES: usize = 20;
const COMMENT_LINES: usize = 12;

/// How a channel is named in the report.
fn channel_words(c: Channel) -> &'static str {
    match c {
        Channel::Cli => "the command line",
        Channel::File => "a review file",
        Channel::Log => "a CI log",
        Channel::GithubPr => "a pull request",
        Channel::Ui => "the web view",
        Channel::Land => "a land",
    }
}

/// `path:40` or `path:40-44`.
pub(crate) fn comment_place(c: &LineComment) -> String {
    let path = shown_text(&c.path);
    if c.end > c.start { format!("{path}:{}-{}", c.start, c.end) } else { format!("{path}:{}", c.start) }
}

/// A fence-safe line: a run of three backticks cannot close the block.
fn fenced(line: &str) -> String {
    line.replace("```", "`\u{200b}``")
}

/// The critique as a quote, cut to [`CRITIQUE_LINES`] lines and
/// [`CRITIQUE_BYTES`] bytes, the cut said.
fn critique_lines(s: &mut String, task: &str, critique: &str) {
    let all: Vec<&str> = critique.lines().collect();
    let mut shown = 0;
    let mut bytes = 0;
    for line in &all {
        if shown == CRITIQUE_LINES || bytes + line.len() > CRITIQUE_BYTES {
            break;
        }
        let _ = writeln!(s, "  > {line}");
        bytes += line.len() + 1;
        shown += 1;
    }
    if shown < all.len() {
        let cut = all.len() - shown;
        let _ = writeln!(
            s,
            "  > [... {cut} more line{} cut for the report; the whole critique: `retry-run log {task} --json`]",
            plural(cut)
        );
    }
}

/// One line comment: where, by whom, its text, and the diff lines it was
/// made on.
fn comment_lines(s: &mut String, c: &LineComment) {
    let by = c.by.as_ref().map(|b| format!(" ({b})")).unwrap_or_default();
    let mut text = c.text.lines();
    let _ = writeln!(s, "  - `{}`{by}: {}", comment_place(c), text.next().unwrap_or(""));
    for more in text {
        let _ = writeln!(s, "    {more}");
    }
    if !c.lines.is_empty() {
        let _ = writeln!(s, "\n    ```diff");
        for l in c.lines.iter().take(COMMENT_LINES) {
            let _ = writeln!(s, "    {}", fenced(l));
        }
        if c.lines.len() > COMMENT_LINES {
            let _ = writeln!(s, "    [... {} more lines]", c.lines.len() - COMMENT_LINES);
        }
        let _ = writeln!(s, "    ```");
    }
}

/// The "Reviews" section: each review in the log's order. Empty when the
/// task has none.
pub(crate) fn reviews_section(task: &str, reviews: &[Review]) -> String {
    if reviews.is_empty() {
        return String::new();
    }
    let mut s = String::from("\n## Reviews\n");
    for (i, r) in reviews.iter().enumerate() {
        review_lines(&mut s, task, i + 1, r);
    }
    s
}

fn review_lines(s: &mut String, task: &str, n: usize, r: &Review) {
    let _ = writeln!(s, "\n### Review {n}: attempt {} {}\n", r.attempt, r.verdict.as_str());
    let via = match (&r.source, r.channel) {
        // `land onto main` says it all.
        (Some(x), Channel::Land) => x.clone(),
        (Some(x), c) => format!("{}: {x}", channel_words(c)),
        (None, c) => channel_words(c).to_string(),
    };
    let _ = writeln!(s, "- By: {} (via {via})", r.by);
    if !r.commit.is_empty() {
        let _ = writeln!(s, "- Commit judged: `{}`", r.commit);
    }
    if let Some(rc) = &r.required_change {
        let _ = writeln!(s, "- Required change: {rc}");
    }
    if let Some(first) = r.repeats {
        let _ = writeln!(s, "- Repeated: the same required change rejected attempt {first}");
    }
    if let Some(c) = r.critique.as_deref().filter(|c| !c.trim().is_empty()) {
        let _ = writeln!(s, "- Critique:");
        critique_lines(s, task, c);
    }
    if !r.comments.is_empty() {
        let _ = writeln!(s, "- Line comments:");
        for c in &r.comments {
            comment_lines(s, c);
        }
    }
    if !r.failures.is_empty() {
        let _ = writeln!(s, "- Failures:");
        for f in r.failures.iter().take(LISTED) {
            let _ = writeln!(s, "  - {f}");
        }
        if r.failures.len() > LISTED {
            let _ = writeln!(s, "  - [... {} more]", r.failures.len() - LISTED);
        }
    }
    if !r.output.is_empty() {
        let _ = writeln!(s, "- Output:\n\n  ```text");
        for l in r.output.iter().take(OUTPUT_LINES) {
            let _ = writeln!(s, "  {}", fenced(l));
        }
        if r.output.len() > OUTPUT_LINES {
            let _ = writeln!(s, "  [... {} more lines cut for the report]", r.output.len() - OUTPUT_LINES);
        }
        let _ = writeln!(s, "  ```");
    }
}

/// The "Landed" section: where the result went, how, and what the gates
/// said when it was replayed. Empty when the task never landed.
pub(crate) fn landed_section(landed: Option<&Landed>) -> String {
    let Some(l) = landed else { return String::new() };
    let mut s = String::from("\n## Landed\n\n");
    let how = match l.how {
        LandHow::FastForward => "fast-forward",
        LandHow::Squash => "one squashed commit",
        LandHow::Merge => "a merge commit",
    };
    let _ = writeln!(s, "- Onto: `{}`, `{}` -> `{}` ({how})", l.onto, l.from, l.commit);
    let _ = writeln!(s, "- Attempt: {} (commit `{}`)", l.attempt, l.attempt_commit);
    if l.replayed {
        let gates = if l.gates.is_empty() { "none recorded".to_string() } else { l.gates.join("; ") };
        let _ = writeln!(s, "- Replayed onto the branch's tip, where the gates ran again: {gates}");
    } else {
        let _ = writeln!(s, "- Not replayed: the branch was still at the task's base");
    }
    if let Some(p) = &l.pushed {
        let _ = writeln!(s, "- Pushed to: `{p}`");
    }
    if let Some(pr) = &l.pr {
        let _ = writeln!(s, "- Pull request: {pr}");
    }
    let branch = if l.branch_removed { "removed" } else { "kept (`--keep-branch`)" };
    let _ = writeln!(s, "- The task's branch: {branch}");
    if !l.record_sha256.is_empty() {
        let _ = writeln!(s, "- The record's sha256 at the land (the commit's trailer): `{}`", l.record_sha256);
    }
    s
}

/// The branch a land's rejection was about (its source is
/// `crate::outcome::land::source`'s `land onto BRANCH`, maybe followed by
/// where its gates were recorded): the next round starts from its tip.
fn landed_onto(r: &Review) -> Option<&str> {
    if r.channel != Channel::Land {
        return None;
    }
    r.source.as_deref()?.strip_prefix("land onto ")?.split(' ').next().filter(|b| !b.is_empty())
}

/// What to do next with a result that passed every gate, when a reviewer
/// or a land has spoken on it; `None` when none has.
pub(crate) fn next_step(task: &str, attempt: u32, verdicts: &Verdicts) -> Option<String> {
    Some(match verdicts.on(attempt)? {
        OnResult::Landed(l) => {
            let kept = if l.branch_removed { "" } else { " The task's branch was kept (`--keep-branch`)." };
            format!(
                "Attempt {attempt} landed on `{}` ({}, commit `{}`): nothing is left to do.{kept}",
                l.onto,
                l.how.as_str(),
                l.commit
            )
        }
        OnResult::Reviewed(r) if r.verdict == Verdict::Approved => format!(
            "Attempt {attempt} was approved by {}: `retry-run land {task}` brings it onto your branch (`--onto BRANCH` for another), re-running the gates if the branch has moved.",
            r.by
        ),
        OnResult::Reviewed(r) => {
            let again = match landed_onto(r) {
                Some(branch) => crate::outcome::land::next_round(task, branch),
                None => format!("retry-run run --id {task} --again"),
            };
            let mut text = format!(
                "Attempt {attempt} was rejected by {}{}: {} `{again}` starts the next round, whose first prompt opens with this rejection.",
                r.by,
                if r.channel == Channel::Cli { String::new() } else { format!(" (via {})", channel_words(r.channel)) },
                r.required_change.as_deref().unwrap_or("(no required change recorded)"),
            );
            if let Some(first) = r.repeats {
                text.push_str(&format!(
                    " The same required change already rejected attempt {first}: the agent did not act on it; say more in the critique, point at lines with `--comment`, or make the change by hand."
                ));
            }
            text
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn review(attempt: u32, verdict: Verdict) -> Review {
        Review {
            verdict,
            attempt,
            commit: format!("c{attempt}"),
            by: "Ann <ann@example.com>".into(),
            required_change: (verdict == Verdict::Rejected).then(|| "Retry the 429 instead of swallowing it.".into()),
            ..Review::default()
        }
    }

    fn landed(attempt: u32) -> Landed {
        Landed {
            onto: "main".into(),
            from: "aaa".into(),
            commit: "bbb".into(),
            how: LandHow::Squash,
            attempt,
            attempt_commit: format!("c{attempt}"),
            replayed: true,
            gates: vec!["scope ok".into(), "pytest passed".into()],
            record_sha256: "f00".into(),
            pushed: None,
            pr: None,
            branch_removed: true,
        }
    }

    #[test]
    fn where_a_result_stands_and_what_to_do_next() {
        let rejected = review(1, Verdict::Rejected);
        let approved = review(2, Verdict::Approved);
        let repeated = Review { repeats: Some(1), ..review(2, Verdict::Rejected) };
        let land2 = landed(2);
        // (reviews, landed, the result's attempt, its label, what the next step says)
        type Case<'a> = (Vec<Review>, Option<&'a Landed>, u32, Option<&'a str>, Option<&'a str>);
        let cases: Vec<Case> = vec![
            (vec![], None, 1, None, None),
            (vec![rejected.clone()], None, 1, Some("rejected"), Some("retry-run run --id t --again")),
            (vec![rejected.clone()], None, 2, None, None),
            (vec![rejected.clone(), approved.clone()], None, 2, Some("approved"), Some("retry-run land t")),
            (
                vec![rejected.clone(), repeated.clone()],
                None,
                2,
                Some("rejected"),
                Some("The same required change already rejected attempt 1"),
            ),
            (vec![rejected.clone(), approved.clone()], Some(&land2), 2, Some("landed"), Some("landed on `main`")),
            // A land of an earlier attempt says nothing of this one.
            (vec![rejected.clone()], Some(&land2), 1, Some("rejected"), Some("--again")),
            // A land's rejection: the next round starts from the branch's tip.
            (
                vec![Review {
                    channel: Channel::Land,
                    source: Some(format!("{} (gates: tasks/t/lands/1/)", crate::outcome::land::source("main"))),
                    ..review(1, Verdict::Rejected)
                }],
                None,
                1,
                Some("rejected"),
                Some(
                    "(via a land): Retry the 429 instead of swallowing it. `retry-run run --id t --again --refresh-base --base main`",
                ),
            ),
            // The latest verdict counts.
            (vec![approved.clone(), review(2, Verdict::Rejected)], None, 2, Some("rejected"), Some("rejected by Ann")),
        ];
        for (i, (reviews, landed, at, label, next)) in cases.into_iter().enumerate() {
            let v = Verdicts { reviews: &reviews, landed };
            assert_eq!(v.label(at), label, "case {i}");
            let text = next_step("t", at, &v);
            match next {
                None => assert_eq!(text, None, "case {i}"),
                Some(want) => assert!(text.as_deref().is_some_and(|t| t.contains(want)), "case {i}: {text:?}"),
            }
        }
    }

    #[test]
    fn each_review_in_order_with_its_critique_cut_and_its_comments_beside_their_lines() {
        let long: Vec<String> = (1..=CRITIQUE_LINES + 5).map(|i| format!("line {i}")).collect();
        let first = Review {
            critique: Some(long.join("\n")),
            source: None,
            comments: vec![
                LineComment {
                    path: "src/http.py".into(),
                    start: 40,
                    end: 44,
                    text: "this hides the 429".into(),
                    lines: vec!["+    except HTTPError:".into(), "+        pass".into()],
                    by: None,
                },
                LineComment {
                    path: "src/retry.py".into(),
                    start: 7,
                    end: 7,
                    text: "no backoff\nat all".into(),
                    lines: vec![],
                    by: Some("bob".into()),
                },
            ],
            ..review(1, Verdict::Rejected)
        };
        let second = Review {
            channel: Channel::Log,
            source: Some("ci.log (check pytest)".into()),
            failures: (1..=12).map(|i| format!("tests/test_x.py::test_{i}")).collect(),
            output: vec!["FAILED tests/test_x.py::test_1 - ```".into()],
            repeats: Some(1),
            ..review(2, Verdict::Rejected)
        };
        let md = reviews_section("t", &[first, second, review(3, Verdict::Approved)]);
        let at = |needle: &str| md.find(needle).unwrap_or_else(|| panic!("{needle:?} not in:\n{md}"));
        assert!(at("### Review 1: attempt 1 rejected") < at("### Review 2: attempt 2 rejected"));
        assert!(at("### Review 2: attempt 2 rejected") < at("### Review 3: attempt 3 approved"));
        at("- By: Ann <ann@example.com> (via the command line)\n- Commit judged: `c1`\n");
        at("- Required change: Retry the 429 instead of swallowing it.\n");
        at(&format!(
            "  > line {CRITIQUE_LINES}\n  > [... 5 more lines cut for the report; the whole critique: `retry-run log t --json`]\n"
        ));
        assert!(!md.contains(&format!("> line {}\n", CRITIQUE_LINES + 1)), "{md}");
        at(
            "  - `src/http.py:40-44`: this hides the 429\n\n    ```diff\n    +    except HTTPError:\n    +        pass\n    ```\n",
        );
        at("  - `src/retry.py:7` (bob): no backoff\n    at all\n");
        at("- By: Ann <ann@example.com> (via a CI log: ci.log (check pytest))");
        at("- Repeated: the same required change rejected attempt 1\n");
        at("  - tests/test_x.py::test_10\n  - [... 2 more]\n");
        at("  FAILED tests/test_x.py::test_1 - `\u{200b}``\n  ```\n");
        assert_eq!(md.matches("Repeated:").count(), 1, "{md}");
        assert_eq!(reviews_section("t", &[]), "");
        let land = Review {
            by: "retry-run land".into(),
            channel: Channel::Land,
            source: Some(crate::outcome::land::source("main")),
            ..review(4, Verdict::Rejected)
        };
        let md = reviews_section("t", &[land]);
        assert!(md.contains("- By: retry-run land (via land onto main)\n"), "{md}");
    }

    #[test]
    fn the_land_where_how_and_what_the_gates_said() {
        assert_eq!(landed_section(None), "");
        let md = landed_section(Some(&landed(2)));
        assert!(md.starts_with("\n## Landed\n\n- Onto: `main`, `aaa` -> `bbb` (one squashed commit)\n"), "{md}");
        assert!(md.contains("- Attempt: 2 (commit `c2`)\n"), "{md}");
        assert!(md.contains("gates ran again: scope ok; pytest passed\n"), "{md}");
        assert!(md.contains("- The task's branch: removed\n"), "{md}");
        assert!(!md.contains("Pushed") && !md.contains("Pull request"), "{md}");
        let ff = Landed {
            how: LandHow::FastForward,
            replayed: false,
            gates: vec![],
            pushed: Some("origin".into()),
            pr: Some("https://github.com/o/r/pull/3".into()),
            branch_removed: false,
            ..landed(1)
        };
        let md = landed_section(Some(&ff));
        assert!(md.contains("(fast-forward)\n") && md.contains("- Not replayed: the branch was still at"), "{md}");
        assert!(md.contains("- Pushed to: `origin`\n- Pull request: https://github.com/o/r/pull/3\n"), "{md}");
        assert!(md.contains("- The task's branch: kept (`--keep-branch`)\n"), "{md}");
    }
}
