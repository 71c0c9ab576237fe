//! The gates' choice among lanes (`run --lanes --choose all`): which lane's
//! passing attempt becomes the task's branch once every lane ran to its
//! end. Pure: the lanes' last attempts in, the winner and why out.

use crate::model::{AttemptRecord, Outcome, TARGETS};

/// A lane's last attempt, as the choice weighs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LaneCandidate {
    pub lane: u32,
    pub attempt: u32,
    pub commit: String,
    /// Every gate passed (SUCCESS).
    pub passed: bool,
    /// The task's targets passed (or it has none).
    pub targets: bool,
    /// New failures and diagnostics of its checks (tolerated ones).
    pub new_diagnostics: usize,
    /// Lines added and deleted.
    pub diff_lines: usize,
}

impl LaneCandidate {
    /// Lane `lane`'s attempt `r`, weighed; `None` without a snapshot.
    pub(crate) fn of(lane: u32, r: &AttemptRecord) -> Option<LaneCandidate> {
        Some(LaneCandidate {
            lane,
            attempt: r.number,
            commit: r.commit.clone()?,
            passed: r.outcome == Outcome::Success,
            targets: r.checks.iter().filter(|c| c.name == TARGETS).all(|c| c.passed),
            new_diagnostics: r.checks.iter().map(|c| c.failures.len() + c.errors.len()).sum(),
            diff_lines: r.files.iter().map(|f| f.additions + f.deletions).sum(),
        })
    }
}

/// The lane chosen, and why (said in the report and the record).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Winner {
    pub(crate) candidate: LaneCandidate,
    pub(crate) why: String,
}

/// The winner among `candidates` by the gates: every gate passed, then the
/// targets, then fewer new diagnostics, then the smaller diff, then the
/// lower lane. Only passing candidates can win. Returns it and why.
pub(crate) fn choose(candidates: &[LaneCandidate]) -> Option<Winner> {
    let mut passing: Vec<&LaneCandidate> = candidates.iter().filter(|c| c.passed).collect();
    passing.sort_by_key(|c| (!c.targets, c.new_diagnostics, c.diff_lines, c.lane));
    let best = (*passing.first()?).clone();
    let why = match passing.get(1) {
        None => "the only lane whose attempt passed every gate".to_string(),
        Some(next) if best.targets != next.targets => {
            format!("passed every gate and its targets, where lane {} did not", next.lane)
        }
        Some(next) if best.new_diagnostics != next.new_diagnostics => format!(
            "passed every gate with {} new diagnostic(s), fewer than lane {}'s {}",
            best.new_diagnostics, next.lane, next.new_diagnostics
        ),
        Some(next) if best.diff_lines != next.diff_lines => format!(
            "passed every gate with the smaller diff: {} lines against lane {}'s {}",
            best.diff_lines, next.lane, next.diff_lines
        ),
        Some(next) => format!("passed every gate as lane {} did, equal on every measure: the lower lane", next.lane),
    };
    Some(Winner { candidate: best, why })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cand(lane: u32, passed: bool, targets: bool, diags: usize, lines: usize) -> LaneCandidate {
        LaneCandidate {
            lane,
            attempt: 1,
            commit: format!("c{lane}"),
            passed,
            targets,
            new_diagnostics: diags,
            diff_lines: lines,
        }
    }

    #[test]
    fn the_gates_choose_in_their_order() {
        assert_eq!(choose(&[cand(1, false, true, 0, 1)]), None, "only a passing attempt wins");
        let Winner { candidate: c, why } = choose(&[cand(1, true, false, 0, 1), cand(2, true, true, 3, 90)]).unwrap();
        assert_eq!((c.lane, why.contains("targets")), (2, true));
        let Winner { candidate: c, why } = choose(&[cand(1, true, true, 2, 1), cand(2, true, true, 1, 90)]).unwrap();
        assert_eq!(c.lane, 2, "fewer new diagnostics first");
        assert!(why.contains("fewer than lane 1's 2"), "{why}");
        let Winner { candidate: c, why } =
            choose(&[cand(1, true, true, 0, 40), cand(2, false, true, 0, 1), cand(3, true, true, 0, 12)]).unwrap();
        assert_eq!(c.lane, 3, "then the smaller diff");
        assert!(why.contains("12 lines against lane 1's 40"), "{why}");
        let c = choose(&[cand(2, true, true, 0, 5), cand(1, true, true, 0, 5)]).unwrap().candidate;
        assert_eq!(c.lane, 1, "a tie goes to the lower lane");
        let why = choose(&[cand(2, true, true, 0, 5)]).unwrap().why;
        assert_eq!(why, "the only lane whose attempt passed every gate");
    }
}
