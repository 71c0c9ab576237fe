//! What the pages show, gathered from the record through the library's
//! readers (`Store::read`, `record::state`, its attempts, `crate::stats`,
//! `run::recorded_task`): no event is parsed here, and the task list reads
//! each task's log once, with no git call.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::refs;
use crate::model::{AttemptRecord, Landed, Review};
use crate::record::Event;
use crate::record::chain::LogLine;
use crate::record::state::{attempts, elapsed_ms, state};
use crate::record::{RecordError, Store, TaskState};
use crate::stats::{Chain, Stats, TaskReviews, review_stats, stats};

/// One row of the task list.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Row {
    pub id: String,
    /// [`TaskState::label`]: `running`, `succeeded`, `escalated`, `stopped`, `new`.
    pub label: &'static str,
    /// Attempts started, over every round (a task in lanes: its lanes').
    pub attempts: u32,
    pub lanes: Option<u32>,
    pub base: Option<String>,
    pub last_outcome: Option<String>,
    /// [`TaskState::review_label`]: `approved`, `rejected`, `landed`.
    pub review: Option<&'static str>,
    pub cost_usd: Option<f64>,
    /// From the log's first event to its last.
    pub duration_ms: u64,
}

/// A row from a task's verified log (and, for a task in lanes, its lanes'
/// states). Pure.
pub(crate) fn row(
    id: &str,
    events: &[LogLine],
    s: &TaskState,
    running: bool,
    broken: bool,
    lanes: &[TaskState],
) -> Row {
    let (attempts, cost_usd) = if lanes.is_empty() {
        (s.last_attempt, s.cost_usd)
    } else {
        let costs: Vec<f64> = lanes.iter().filter_map(|l| l.cost_usd).collect();
        (lanes.iter().map(|l| l.last_attempt).sum(), (!costs.is_empty()).then(|| costs.iter().sum()))
    };
    let duration_ms = match (events.first(), events.last()) {
        (Some(a), Some(b)) => elapsed_ms(a, b),
        _ => 0,
    };
    Row {
        id: id.to_string(),
        label: s.label(running, broken),
        attempts,
        lanes: s.lanes.filter(|k| *k > 1),
        base: s.base.clone(),
        last_outcome: s.last_outcome.clone(),
        review: s.review_label(),
        cost_usd,
        duration_ms,
    }
}

/// The states of a task's lanes, when it ran in lanes.
fn lane_states(store: &Store, id: &str, s: &TaskState) -> Vec<TaskState> {
    match s.lanes {
        Some(k) if k > 1 => {
            (1..=k).filter_map(|lane| store.read(&refs::lane_record(id, lane)).ok()).map(|v| state(&v.events)).collect()
        }
        _ => Vec::new(),
    }
}

/// Every task's row, by id. A log that cannot be read is a row that says so.
pub(crate) fn rows(store: &Store) -> Result<Vec<Row>, RecordError> {
    let mut out = Vec::new();
    for id in store.tasks()? {
        match store.read(&id) {
            Ok(v) => {
                let s = state(&v.events);
                let lanes = lane_states(store, &id, &s);
                out.push(row(&id, &v.events, &s, store.running(&id).is_some(), v.broken.is_some(), &lanes));
            }
            Err(_) => out.push(row(&id, &[], &TaskState::default(), false, true, &[])),
        }
    }
    Ok(out)
}

/// One entry of a task's timeline, in the log's order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Item {
    /// A round started (`run`, `run --again`) on `base`.
    Round {
        first: u32,
        max: u32,
        base: String,
        lanes: Option<u32>,
    },
    /// A completed attempt, as its `attempt.json` (or its event) tells it.
    Attempt(Box<AttemptRecord>),
    /// An attempt started and not (yet) completed.
    Started(u32),
    /// An attempt closed before its agent ran.
    Aborted {
        n: u32,
        reason: String,
    },
    Review(Box<Review>),
    Landed(Box<Landed>),
    /// The round ended: `succeeded`, `escalated` (with why).
    Ended {
        what: &'static str,
        detail: String,
    },
    /// A lane ended (in the task's log of a task in lanes).
    Lane {
        lane: u32,
        ending: String,
        attempts: u32,
    },
    /// The lane chosen as the task's result.
    Chosen {
        lane: u32,
        attempt: u32,
        why: String,
    },
}

/// A task as its page shows it.
pub(crate) struct TaskView {
    pub id: String,
    pub title: Option<String>,
    pub state: TaskState,
    pub label: &'static str,
    pub items: Vec<Item>,
    pub attempts: Vec<AttemptRecord>,
}

/// Pure: the timeline of a task's events, with its completed attempts
/// (by number) in their places.
pub(crate) fn timeline(events: &[LogLine], records: &[AttemptRecord]) -> Vec<Item> {
    let by_n: BTreeMap<u32, &AttemptRecord> = records.iter().map(|r| (r.number, r)).collect();
    let mut open: BTreeSet<u32> = BTreeSet::new();
    let mut items = Vec::new();
    for e in events {
        let item = match e.typed() {
            Some(Event::TaskStarted { first_attempt, max_attempts, base, lanes, .. }) => {
                Item::Round { first: first_attempt, max: max_attempts, base, lanes }
            }
            Some(Event::AttemptStarted { .. }) => match e.attempt {
                Some(n) => {
                    open.insert(n);
                    Item::Started(n)
                }
                None => continue,
            },
            Some(Event::AttemptCompleted { .. }) => {
                let Some(n) = e.attempt else { continue };
                open.remove(&n);
                // The attempt's entry replaces its "started" one.
                items.retain(|i| *i != Item::Started(n));
                match by_n.get(&n) {
                    Some(r) => Item::Attempt(Box::new((*r).clone())),
                    None => continue,
                }
            }
            Some(Event::AttemptAborted { reason, .. }) => {
                let Some(n) = e.attempt else { continue };
                items.retain(|i| *i != Item::Started(n));
                Item::Aborted { n, reason }
            }
            Some(Event::Reviewed { review }) => Item::Review(Box::new(review)),
            Some(Event::TaskLanded { landed }) => Item::Landed(Box::new(landed)),
            Some(Event::TaskSucceeded { branch, .. }) => Item::Ended { what: "succeeded", detail: branch },
            Some(Event::TaskEscalated { reason, .. }) => Item::Ended { what: "escalated", detail: reason },
            Some(Event::LaneEnded { lane, ending, attempts, .. }) => Item::Lane { lane, ending, attempts },
            Some(Event::LaneChosen { lane, attempt, why, .. }) => Item::Chosen { lane, attempt, why },
            _ => continue,
        };
        items.push(item);
    }
    items
}

/// A task's page data; `Err(NoTask)` for an id with no record.
pub(crate) fn task(store: &Store, id: &str) -> Result<TaskView, RecordError> {
    let v = store.read(id)?;
    let records = attempts(store, id, &v.events);
    let st = state(&v.events);
    let label = st.label(store.running(id).is_some(), v.broken.is_some());
    let title = crate::run::recorded_task(store, id).ok().map(|t| t.title);
    Ok(TaskView {
        id: id.to_string(),
        title,
        items: timeline(&v.events, &records),
        state: st,
        label,
        attempts: records,
    })
}

/// One lane of a task in lanes.
pub(crate) struct LaneView {
    pub lane: u32,
    pub record: String,
    pub agent: Option<String>,
    pub ending: Option<String>,
    pub attempts: Vec<AttemptRecord>,
    pub chosen: bool,
}

/// The lanes of a task (none for a task run in one chain).
pub(crate) fn lanes(store: &Store, id: &str) -> Result<Vec<LaneView>, RecordError> {
    let v = store.read(id)?;
    let k = state(&v.events).lanes.unwrap_or(0);
    let items = timeline(&v.events, &[]);
    let chosen = items.iter().rev().find_map(|i| match i {
        Item::Chosen { lane, .. } => Some(*lane),
        _ => None,
    });
    let mut out = Vec::new();
    for lane in 1..=k {
        let record = refs::lane_record(id, lane);
        let attempts = store.read(&record).map(|lv| attempts(store, &record, &lv.events)).unwrap_or_default();
        let (agent, ending) = v
            .events
            .iter()
            .rev()
            .find_map(|e| match e.typed() {
                Some(Event::LaneEnded { lane: l, agent, ending, .. }) if l == lane => Some((Some(agent), Some(ending))),
                _ => None,
            })
            .unwrap_or((None, None));
        out.push(LaneView { lane, record, agent, ending, attempts, chosen: chosen == Some(lane) });
    }
    Ok(out)
}

/// The figures of `retry-run stats`, from every task's record.
pub(crate) fn figures(store: &Store) -> Result<Stats, RecordError> {
    let mut tasks = Vec::new();
    let mut reviewed = Vec::new();
    for id in store.tasks()? {
        let Ok(v) = store.read(&id) else { continue };
        let items = timeline(&v.events, &[]);
        let reviews: Vec<Review> = items
            .iter()
            .filter_map(|i| match i {
                Item::Review(r) => Some((**r).clone()),
                _ => None,
            })
            .collect();
        let latest: BTreeMap<u32, bool> = reviews.iter().map(|r| (r.attempt, r.rejected())).collect();
        let rejected = latest.into_iter().filter(|(_, r)| *r).map(|(n, _)| n).collect();
        let chains = match lanes(store, &id) {
            Ok(ls) if !ls.is_empty() => ls
                .into_iter()
                .map(|l| Chain { agent: l.agent, attempts: l.attempts, rejected: BTreeSet::new() })
                .collect(),
            _ => vec![Chain { agent: None, attempts: attempts(store, &id, &v.events), rejected }],
        };
        reviewed.push((id.clone(), TaskReviews { reviews, to_land_ms: None }));
        tasks.push((id, chains));
    }
    let mut s = stats(&tasks);
    s.reviews = review_stats(&reviewed);
    Ok(s)
}
