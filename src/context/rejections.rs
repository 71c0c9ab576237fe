//! The task's rejections as the next attempts read them (docs/review.md):
//! every `Reviewed` event that rejected a result, latest first, each with
//! the attempt it judged, the required change (never cut), the critique
//! (cut to `max_verifier_feedback_chars`, the cut said), the line comments
//! beside the diff lines they refer to, the failures and output a CI log
//! or a land brought, and who said it where. And whether the latest one
//! leads the prompt ([`leads`]). Pure.

use serde::{Deserialize, Serialize};

use crate::config::ContextConfig;
use crate::model::Review;

/// A line comment: where, what, and the diff lines it is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CommentItem {
    /// `path:10` or `path:10-12`.
    pub place: String,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<String>,
}

/// One rejection of the task's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Rejection {
    /// The attempt judged, and its commit.
    pub attempt: u32,
    pub commit: String,
    pub by: String,
    /// `cli`, `file`, `log`, `github-pr`, `ui`, `land`.
    pub channel: String,
    /// Where it was read from (`ci.log (check pytest)`), when not typed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    pub required_change: String,
    /// The critique's lines, verbatim, up to the limit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub critique: Vec<String>,
    /// Critique lines cut by `max_verifier_feedback_chars`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub critique_omitted: usize,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub comments: Vec<CommentItem>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub failures: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output: Vec<String>,
    /// An earlier rejection gave the same required change (for this
    /// attempt judged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats: Option<u32>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The rejections among `reviews` (a task's, in log order), latest first,
/// the critiques cut to `max_verifier_feedback_chars` and the output to
/// `max_check_output_lines`.
pub(crate) fn rejections(reviews: &[Review], cfg: &ContextConfig) -> Vec<Rejection> {
    reviews
        .iter()
        .rev()
        .filter(|r| r.rejected())
        .map(|r| {
            let (critique, critique_omitted) =
                cut_lines(r.critique.as_deref().unwrap_or(""), cfg.max_verifier_feedback_chars as usize);
            Rejection {
                attempt: r.attempt,
                commit: r.commit.clone(),
                by: r.by.clone(),
                channel: r.channel.as_str().to_string(),
                source: r.source.clone(),
                required_change: r.required_change.clone().unwrap_or_default().trim().to_string(),
                critique,
                critique_omitted,
                comments: r
                    .comments
                    .iter()
                    .map(|c| CommentItem {
                        place: if c.end > c.start {
                            format!("{}:{}-{}", c.path, c.start, c.end)
                        } else {
                            format!("{}:{}", c.path, c.start)
                        },
                        text: c.text.clone(),
                        by: c.by.clone().filter(|b| *b != r.by),
                        lines: c.lines.clone(),
                    })
                    .collect(),
                failures: r.failures.clone(),
                output: r.output.iter().take(cfg.max_check_output_lines as usize).cloned().collect(),
                repeats: r.repeats,
            }
        })
        .collect()
}

/// The lines of `text` whole, as many as fit in `max` bytes (the first
/// one cut at a character when it alone is longer), and how many were
/// left out (a line cut short counts as left out).
fn cut_lines(text: &str, max: usize) -> (Vec<String>, usize) {
    let lines: Vec<&str> = text.trim_end_matches(['\n', '\r']).lines().collect();
    if text.trim().is_empty() {
        return (Vec::new(), 0);
    }
    let mut kept = Vec::new();
    let mut used = 0;
    for l in &lines {
        if used + l.len() > max {
            break;
        }
        used += l.len() + 1;
        kept.push(l.to_string());
    }
    if kept.is_empty() {
        let first = crate::text::clip(lines[0], max, "").into_owned();
        return (vec![first], lines.len());
    }
    let omitted = lines.len() - kept.len();
    (kept, omitted)
}

/// Whether the latest rejection leads the prompt of attempt `attempt`:
/// it is of the round that starts at `round_first` and no attempt of that
/// round has run yet (`prior`, the numbers of the attempts run so far; an
/// attempt aborted before its agent ran is not among them), and the latest
/// verdict on the attempt just before the round (the result the reviewer
/// judged) is a rejection.
pub(crate) fn leads(reviews: &[Review], prior: &[u32], attempt: u32, round_first: u32) -> bool {
    if round_first == 0 || attempt < round_first || prior.iter().any(|&n| n >= round_first) {
        return false;
    }
    let Some(last) = prior.iter().copied().filter(|&n| n < round_first).max() else { return false };
    reviews.iter().rev().find(|r| r.attempt == last).is_some_and(Review::rejected)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Channel, LineComment, Verdict};

    fn review(attempt: u32, verdict: Verdict) -> Review {
        Review { attempt, verdict, required_change: Some(format!("Fix {attempt}.")), ..Review::default() }
    }

    #[test]
    fn the_latest_rejection_of_the_result_before_the_round_leads_its_first_attempt() {
        let rejected_2 = [review(2, Verdict::Rejected)];
        let approved_after = [review(2, Verdict::Rejected), review(2, Verdict::Approved)];
        let rejected_after = [review(2, Verdict::Approved), review(2, Verdict::Rejected)];
        let older = [review(1, Verdict::Rejected)];
        // (reviews, attempts run, attempt, round's first, leads)
        type Case<'a> = (&'a [Review], &'a [u32], u32, u32, bool);
        let cases: Vec<Case> = vec![
            (&rejected_2, &[1, 2], 3, 3, true),
            (&rejected_2, &[1, 2, 3], 4, 3, false),
            // Attempt 3 was aborted before its agent ran: 4 is the first to run.
            (&rejected_2, &[1, 2], 4, 3, true),
            (&rejected_2, &[1, 2], 2, 3, false),
            (&rejected_2, &[1, 2], 3, 0, false),
            (&approved_after, &[1, 2], 3, 3, false),
            (&rejected_after, &[1, 2], 3, 3, true),
            (&older, &[1, 2], 3, 3, false),
            (&older, &[1], 2, 2, true),
            (&[], &[1, 2], 3, 3, false),
            (&rejected_2, &[], 1, 1, false),
        ];
        for (i, (reviews, prior, attempt, first, want)) in cases.into_iter().enumerate() {
            assert_eq!(leads(reviews, prior, attempt, first), want, "case {i}");
        }
    }

    #[test]
    fn rejections_latest_first_with_the_critique_cut_and_the_cut_counted() {
        let mut first = review(1, Verdict::Rejected);
        first.critique = Some("one\ntwo\nthree\n".into());
        first.by = "Ann".into();
        first.comments = vec![
            LineComment {
                path: "a.py".into(),
                start: 3,
                end: 3,
                text: "here".into(),
                lines: vec!["+x".into()],
                by: Some("Ann".into()),
            },
            LineComment {
                path: "a.py".into(),
                start: 5,
                end: 7,
                text: "and".into(),
                lines: vec![],
                by: Some("Bob".into()),
            },
        ];
        let mut second = review(2, Verdict::Rejected);
        second.channel = Channel::Log;
        second.output = (0..80).map(|i| format!("line {i}")).collect();
        let cfg = ContextConfig { max_verifier_feedback_chars: 9, ..ContextConfig::default() };
        let r = rejections(&[first, review(1, Verdict::Approved), second], &cfg);
        assert_eq!(r.iter().map(|r| r.attempt).collect::<Vec<_>>(), [2, 1]);
        assert_eq!((r[0].channel.as_str(), r[0].output.len()), ("log", 50));
        assert_eq!((r[1].critique.clone(), r[1].critique_omitted), (vec!["one".to_string(), "two".to_string()], 1));
        let places: Vec<(&str, Option<&str>)> =
            r[1].comments.iter().map(|c| (c.place.as_str(), c.by.as_deref())).collect();
        assert_eq!(places, [("a.py:3", None), ("a.py:5-7", Some("Bob"))]);
    }

    #[test]
    fn cuts_whole_lines_and_a_first_line_too_long_at_a_character() {
        // (text, max bytes, kept, omitted)
        let cases: Vec<(&str, usize, Vec<&str>, usize)> = vec![
            ("", 10, vec![], 0),
            ("ab\ncd\n", 10, vec!["ab", "cd"], 0),
            ("ab\ncd\nef", 5, vec!["ab", "cd"], 1),
            ("abcdef\ngh", 3, vec!["abc"], 2),
            ("  kept  \n\n  as is", 100, vec!["  kept  ", "", "  as is"], 0),
        ];
        for (text, max, kept, omitted) in cases {
            let (k, o) = cut_lines(text, max);
            assert_eq!((k, o), (kept.iter().map(|s| s.to_string()).collect::<Vec<_>>(), omitted), "{text:?}");
        }
    }
}
