//! A repeated critique: a required change the same as an earlier
//! rejection's, compared without regard to case, runs of spaces and the
//! punctuation at its end. Pure.

use crate::model::Review;

/// `text` as it is compared: lower case, spaces collapsed, the sentence's
/// end (`.`, `!`, `?`, `;`, `:`, `,`, quotes) dropped.
pub(crate) fn normalised(text: &str) -> String {
    let words: Vec<String> = text.split_whitespace().map(str::to_lowercase).collect();
    let joined = words.join(" ");
    joined.trim_end_matches(|c: char| ".!?;:,\"'".contains(c) || c.is_whitespace()).to_string()
}

/// The attempt judged by the latest of `earlier` (a task's reviews, in log
/// order) that rejected an attempt before `judged` with the same required
/// change as `required`: the agent had it, and did not act on it. (The
/// same attempt rejected twice is not a repeat: no agent read the first.)
pub(crate) fn repeats(earlier: &[Review], judged: u32, required: &str) -> Option<u32> {
    let want = normalised(required);
    if want.is_empty() {
        return None;
    }
    earlier
        .iter()
        .rev()
        .filter(|r| r.rejected() && r.attempt < judged)
        .find(|r| r.required_change.as_deref().is_some_and(|c| normalised(c) == want))
        .map(|r| r.attempt)
}

/// What `review` warns when a reviewer repeats the rejection of attempt
/// `earlier`: the agent did not act on it.
pub(crate) fn warning(earlier: u32, required: &str) -> String {
    format!(
        "attempt {earlier} was rejected with the same required change; the agent did not act on it: \"{}\" (recorded as a repeated critique; consider saying it differently, or in more detail with --critique and --comment)",
        required.trim()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Verdict;

    fn review(attempt: u32, verdict: Verdict, required: Option<&str>) -> Review {
        Review { attempt, verdict, required_change: required.map(str::to_string), ..Review::default() }
    }

    #[test]
    fn normalises_case_spaces_and_end_punctuation() {
        let cases = [
            ("Retry the 429.", "retry the 429"),
            ("  RETRY   the\t429 !! ", "retry the 429"),
            ("Use `x.y()`.", "use `x.y()`"),
            ("Keep it.\n", "keep it"),
            ("...", ""),
        ];
        for (text, want) in cases {
            assert_eq!(normalised(text), want, "{text:?}");
        }
    }

    #[test]
    fn finds_the_latest_rejection_with_the_same_required_change() {
        let reviews = [
            review(1, Verdict::Rejected, Some("Retry the 429.")),
            review(2, Verdict::Approved, None),
            review(3, Verdict::Rejected, Some("Log the retry")),
            review(4, Verdict::Rejected, Some("retry the 429")),
            review(5, Verdict::Approved, Some("Retry the 429 twice.")),
        ];
        // (required change, the attempt it repeats)
        let cases = [
            ("Retry  THE 429!", Some(4)),
            ("Log the retry.", Some(3)),
            ("Retry the 429 twice", None),
            ("Retry the 430", None),
            ("", None),
        ];
        for (required, want) in cases {
            assert_eq!(repeats(&reviews, 6, required), want, "{required:?}");
        }
        assert_eq!(repeats(&reviews[..2], 6, "retry the 429"), Some(1));
        assert_eq!(repeats(&reviews, 4, "retry the 429"), Some(1), "attempt 4's own rejection is not a repeat");
        assert_eq!(repeats(&reviews, 1, "retry the 429"), None);
        assert_eq!(repeats(&[], 6, "retry the 429"), None);
    }

    #[test]
    fn the_warning_names_the_attempt_and_the_change() {
        let w = warning(2, " Retry the 429. ");
        assert!(
            w.starts_with(
                "attempt 2 was rejected with the same required change; the agent did not act on it: \"Retry the 429.\""
            ),
            "{w}"
        );
    }
}
