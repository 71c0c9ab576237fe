//! A land that does not go through becomes a rejection of the task's
//! result, as a reviewer's would (`Reviewed`, channel `land`): a replay
//! conflict (not the user's failure: the required change asks the next
//! round to rebase and resolve it, with the conflicting hunks) or a gate
//! that failed on the replayed tree (the required change the run would
//! synthesise for that failure, with the check's failures and output).
//! The branch is left as it was.

use super::gates::Gated;
use super::{LandError, LandTarget};
use crate::model::{Channel, Review, Verdict};
use crate::outcome::land::{MAX_CONFLICT_LINES, conflict_output, conflict_required_change, source};
use crate::record::{Event, Store};

/// Who a land's rejection is by.
pub(crate) const BY: &str = "retry-run land";

/// Lines of a failed check's digest kept in the rejection's output.
const MAX_OUTPUT_LINES: usize = 120;

/// The replay onto `w.onto` conflicted in `paths`: the rejection.
pub(super) fn conflict(w: &LandTarget, paths: &[String], hunks: &[(String, String)]) -> Review {
    Review {
        verdict: Verdict::Rejected,
        attempt: w.attempt,
        commit: w.attempt_commit.to_string(),
        by: BY.to_string(),
        channel: Channel::Land,
        required_change: Some(conflict_required_change(&w.onto, paths)),
        critique: None,
        comments: Vec::new(),
        failures: paths.to_vec(),
        output: conflict_output(hunks, MAX_CONFLICT_LINES),
        source: Some(source(&w.onto)),
        repeats: None,
    }
}

/// The gates failed on the replay: the rejection, with the required
/// change the run would synthesise and what the failing gates said.
pub(super) fn gates_failed(w: &LandTarget, g: &Gated) -> Review {
    let r = &g.record;
    let mut failures: Vec<String> = r.scope.iter().map(|v| format!("{} (outside the scope)", v.path)).collect();
    let mut output = Vec::new();
    for c in r.checks.iter().filter(|c| !c.passed) {
        failures.extend(c.failures.iter().map(|f| f.label.clone()));
        output.push(format!("check {}:", c.name));
        output.extend(c.digest.iter().cloned());
    }
    output.truncate(MAX_OUTPUT_LINES);
    Review {
        verdict: Verdict::Rejected,
        attempt: w.attempt,
        commit: w.attempt_commit.to_string(),
        by: BY.to_string(),
        channel: Channel::Land,
        required_change: Some(crate::context::required::required_change(r).text),
        critique: Some(format!("The gates failed on the change replayed onto {}: {}.", w.onto, r.reason)),
        comments: Vec::new(),
        failures,
        output,
        source: Some(format!("{} (gates: tasks/{}/lands/{}/)", source(&w.onto), w.task, g.k)),
        repeats: None,
    }
}

/// The rejection appended to the task's log.
pub(super) fn record(store: &Store, task: &str, review: &Review) -> Result<(), LandError> {
    let mut log = store.log(task)?;
    let e = Event::Reviewed { review: review.clone() };
    log.append(e.kind(), Some(review.attempt), &e.fields())?;
    Ok(())
}

/// The rejection as the terminal shows it.
pub(super) fn told(w: &LandTarget, review: &Review, what: &str) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "task {}: {what}; recorded as a rejection of attempt {}", w.task, w.attempt);
    if let Some(rc) = &review.required_change {
        let _ = writeln!(s, "  required change: {rc}");
    }
    for l in &review.output {
        let _ = writeln!(s, "    {l}");
    }
    let _ = writeln!(s, "  {} is unchanged", w.onto);
    let _ = write!(s, "  next round: {}", crate::outcome::land::next_round(&w.task, &w.onto));
    crate::text::visible(&s).into_owned()
}
