//! `retry-run stats`: attempts per task and success rates, reviews and
//! lands, from the logs.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::Path;

use clap::Args;

use super::{CliError, exit};
use crate::git::Repo;
use crate::model::refs;
use crate::record::Event;
use crate::record::Store;
use crate::record::chain::LogLine;
use crate::record::state::{attempts, elapsed_ms};
use crate::stats::{Chain, TaskReviews, render, review_stats, stats};
use crate::text::VisibleWriter;

/// Attempts per task and success rates; reviews and lands.
///
/// Attempts per task, also as a histogram; success rate by attempt number
/// and by the kind of feedback the attempt was given; for tasks run in
/// lanes, success by lane count, pass@k and success by agent; rejections
/// per task, repeated critiques, and the time from a task's first attempt
/// to its land.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// The figures as one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

pub(super) fn run(dir: &Path, args: StatsArgs) -> Result<i32, CliError> {
    let repo = Repo::find(dir)?;
    let store = Store::new(repo.common_dir());
    let mut tasks = Vec::new();
    let mut reviewed = Vec::new();
    for id in store.tasks()? {
        let verified = store.read(&id)?;
        let reviews = task_reviews(&verified.events);
        let rejected = rejected(&reviews.reviews);
        let chains = match crate::record::state::state(&verified.events).lanes {
            // A task run in lanes: each lane's chain, with its agent.
            Some(k) if k > 1 => (1..=k)
                .map(|lane| {
                    let rid = refs::lane_record(&id, lane);
                    let attempts = store.read(&rid).map(|v| attempts(&store, &rid, &v.events)).unwrap_or_default();
                    let agent = verified.events.iter().rev().find_map(|e| match e.typed() {
                        Some(Event::LaneEnded { lane: l, agent, .. }) if l == lane => Some(agent),
                        _ => None,
                    });
                    Chain { agent, attempts, rejected: BTreeSet::new() }
                })
                .collect(),
            _ => vec![Chain { agent: None, attempts: attempts(&store, &id, &verified.events), rejected }],
        };
        reviewed.push((id.clone(), reviews));
        tasks.push((id.clone(), chains));
    }
    let mut s = stats(&tasks);
    s.reviews = review_stats(&reviewed);
    let mut out = VisibleWriter::new(std::io::stdout().lock(), !args.json);
    if args.json {
        let v = serde_json::to_string(&s).map_err(|e| CliError::environment(format!("cannot encode: {e}")))?;
        writeln!(out, "{v}")?;
    } else {
        out.write_all(render(&s).as_bytes())?;
    }
    Ok(exit::OK)
}

/// A task's reviews, and the time from its first attempt (its first
/// `TaskStarted` when its attempts are in its lanes' logs) to its first
/// land.
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

/// The attempts whose latest review is a rejection.
fn rejected(reviews: &[crate::model::Review]) -> BTreeSet<u32> {
    let latest: BTreeMap<u32, bool> = reviews.iter().map(|r| (r.attempt, r.rejected())).collect();
    latest.into_iter().filter(|(_, rejected)| *rejected).map(|(n, _)| n).collect()
}
