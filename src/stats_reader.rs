//! `retry-run stats`'s figures read from the record: each task's chains
//! of attempts (a task in lanes: one per lane, with its agent), its
//! reviews and the time to its land, gathered from the logs and handed to
//! the pure [`crate::stats`]. The command and the web view's stats page
//! both call [`read`].

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{Review, refs};
use crate::record::chain::LogLine;
use crate::record::state::{attempts, elapsed_ms, state};
use crate::record::{Event, RecordError, Store};
use crate::stats::{Chain, Stats, TaskReviews, review_stats, stats};

/// The figures of every task with a record. `Err` when a log cannot be
/// read at all (a log whose chain breaks counts up to the break).
pub(crate) fn read(store: &Store) -> Result<Stats, RecordError> {
    let mut tasks = Vec::new();
    let mut reviewed = Vec::new();
    for id in store.tasks()? {
        let verified = store.read(&id)?;
        let reviews = task_reviews(&verified.events);
        let rejected = rejected(&reviews.reviews);
        let chains = match state(&verified.events).lanes {
            // A task run in lanes: each lane's chain, with its agent.
            Some(k) if k > 1 => (1..=k)
                .map(|lane| {
                    let rid = refs::lane_record(&id, lane);
                    let attempts = store.read(&rid).map(|v| attempts(store, &rid, &v.events)).unwrap_or_default();
                    let agent = verified.events.iter().rev().find_map(|e| match e.typed() {
                        Some(Event::LaneEnded { lane: l, agent, .. }) if l == lane => Some(agent),
                        _ => None,
                    });
                    Chain { agent, attempts, rejected: BTreeSet::new() }
                })
                .collect(),
            _ => vec![Chain { agent: None, attempts: attempts(store, &id, &verified.events), rejected }],
        };
        reviewed.push((id.clone(), reviews));
        tasks.push((id, chains));
    }
    let mut s = stats(&tasks);
    s.reviews = review_stats(&reviewed);
    Ok(s)
}

/// Pure: a task's reviews, and the time from its first attempt (its
/// first `TaskStarted` when its attempts are in its lanes' logs) to its
/// first land.
fn task_reviews(events: &[LogLine]) -> TaskReviews {
    let typed: Vec<(&LogLine, Event)> = events.iter().filter_map(|e| e.typed().map(|t| (e, t))).collect();
    let first = typed
        .iter()
        .find(|(_, t)| matches!(t, Event::AttemptStarted { .. }))
        .or_else(|| typed.iter().find(|(_, t)| matches!(t, Event::TaskStarted { .. })))
        .map(|(e, _)| *e);
    let land = typed.iter().find(|(_, t)| matches!(t, Event::TaskLanded { .. })).map(|(e, _)| *e);
    let reviews = typed
        .iter()
        .filter_map(|(_, t)| match t {
            Event::Reviewed { review } => Some(review.clone()),
            _ => None,
        })
        .collect();
    TaskReviews { reviews, to_land_ms: first.zip(land).map(|(a, b)| elapsed_ms(a, b)) }
}

/// Pure: the attempts whose latest review is a rejection.
fn rejected(reviews: &[Review]) -> BTreeSet<u32> {
    let latest: BTreeMap<u32, bool> = reviews.iter().map(|r| (r.attempt, r.rejected())).collect();
    latest.into_iter().filter(|(_, rejected)| *rejected).map(|(n, _)| n).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Verdict;

    #[test]
    fn an_attempt_counts_as_rejected_by_its_latest_review() {
        let review = |attempt, verdict| Review { attempt, verdict, ..Review::default() };
        let (a, r) = (Verdict::Approved, Verdict::Rejected);
        // The reviews (attempt, verdict) in the log's order; the attempts rejected.
        type Case<'a> = (&'a [(u32, Verdict)], &'a [u32]);
        let cases: &[Case] = &[
            (&[], &[]),
            (&[(1, r)], &[1]),
            (&[(1, r), (1, a)], &[]),
            (&[(1, a), (1, r)], &[1]),
            (&[(1, r), (2, a), (3, r)], &[1, 3]),
        ];
        for (reviews, want) in cases {
            let reviews: Vec<Review> = reviews.iter().map(|(n, v)| review(*n, *v)).collect();
            assert_eq!(rejected(&reviews).into_iter().collect::<Vec<_>>(), *want, "{reviews:?}");
        }
    }
}
