//! What a lane is told of the other lanes' failed attempts
//! (`retry.share_feedback`, `run --lanes`): the prompt's section on them,
//! which `LaneShared::feedback_for` (`shared.rs`) adds to each lane's
//! prompt. Pure.

use crate::context::required_change;
use crate::model::{AttemptRecord, Outcome};

/// What lane `me` is told of the other lanes' failed attempts so far
/// (`retry.share_feedback`): a section of the prompt, each failure
/// labelled by its lane, or nothing when there is none.
pub(super) fn other_lanes_section(me: u32, attempts: &[(u32, AttemptRecord)]) -> String {
    let lines: Vec<String> = attempts
        .iter()
        .filter(|(lane, r)| *lane != me && !matches!(r.outcome, Outcome::Success | Outcome::Stopped))
        .map(|(lane, r)| {
            format!("- lane {lane}, attempt {}: {}. {}", r.number, r.outcome.as_str(), required_change(r).text)
        })
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "\n## What the other lanes tried\n\nOther agents work on this task at the same time, each in its own worktree. Their failed attempts so far, so as not to repeat them:\n\n{}\n",
        lines.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lane_hears_of_the_other_lanes_failures_only() {
        let mut failed = AttemptRecord::new(1);
        failed.outcome = Outcome::EmptyDiff;
        let mut ok = AttemptRecord::new(2);
        ok.outcome = Outcome::Success;
        let attempts = vec![(1, failed.clone()), (2, failed), (2, ok)];
        let s = other_lanes_section(1, &attempts);
        assert!(s.contains("- lane 2, attempt 1: EMPTY_DIFF. Make actual changes"), "{s}");
        assert!(!s.contains("lane 1,"), "its own attempts are in its own section: {s}");
        assert!(!s.contains("attempt 2"), "{s}");
        assert_eq!(other_lanes_section(2, &attempts[..2].iter().filter(|a| a.0 == 2).cloned().collect::<Vec<_>>()), "");
    }
}
