//! What the pages show, gathered from the record through the library's
//! readers (`Store::read`, `record::state`, its attempts, `crate::stats`,
//! `run::recorded_task`): no event is parsed here, and the task list reads
//! each task's log once, with no git call.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::model::refs;
use crate::model::{AttemptRecord, Landed, Review};
use crate::record::Event;
use crate::record::chain::LogLine;
use crate::record::state::{attempts, state};
use crate::record::{RecordError, Store, Summaries, Summary, TaskState};

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

/// A row from a task's summary (and, for a task in lanes, its lanes'
/// states). Pure.
pub(crate) fn row(id: &str, s: &Summary, running: bool, lanes: &[&TaskState]) -> Row {
    let st = &s.state;
    let (attempts, cost_usd) = if lanes.is_empty() {
        (st.last_attempt, st.cost_usd)
    } else {
        let costs: Vec<f64> = lanes.iter().filter_map(|l| l.cost_usd).collect();
        (lanes.iter().map(|l| l.last_attempt).sum(), (!costs.is_empty()).then(|| costs.iter().sum()))
    };
    Row {
        id: id.to_string(),
        label: st.label(running, s.broken),
        attempts,
        lanes: st.lanes.filter(|k| *k > 1),
        base: st.base.clone(),
        last_outcome: st.last_outcome.clone(),
        review: st.review_label(),
        cost_usd,
        duration_ms: s.duration_ms,
    }
}

/// Every task's row, by id, from the summaries kept of their logs (a
/// request reads again only the logs written since the last). A log that
/// cannot be read is a row that says so.
pub(crate) fn rows(store: &Store, summaries: &Summaries) -> Result<Vec<Row>, RecordError> {
    let mut out = Vec::new();
    let ids = store.tasks()?;
    if summaries.kept() < ids.len() {
        summaries.warm(&ids);
    }
    for id in ids {
        let running = store.running(&id).is_some();
        match summaries.get(&id) {
            Ok(s) => {
                let lanes: Vec<Arc<Summary>> = match s.state.lanes {
                    Some(k) if k > 1 => {
                        (1..=k).filter_map(|lane| summaries.get(&refs::lane_record(&id, lane)).ok()).collect()
                    }
                    _ => Vec::new(),
                };
                let lanes: Vec<&TaskState> = lanes.iter().map(|l| &l.state).collect();
                out.push(row(&id, &s, running, &lanes));
            }
            Err(_) => out.push(row(&id, &Summary { broken: true, ..Summary::default() }, false, &[])),
        }
    }
    Ok(out)
}

/// One entry of a task's timeline, in the log's order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum TimelineItem {
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
    pub items: Vec<TimelineItem>,
    pub attempts: Vec<AttemptRecord>,
}

/// Pure: the timeline of a task's events, with its completed attempts
/// (by number) in their places.
pub(crate) fn timeline(events: &[LogLine], records: &[AttemptRecord]) -> Vec<TimelineItem> {
    let by_n: BTreeMap<u32, &AttemptRecord> = records.iter().map(|r| (r.number, r)).collect();
    let mut open: BTreeSet<u32> = BTreeSet::new();
    let mut items = Vec::new();
    for e in events {
        let item = match e.typed() {
            Some(Event::TaskStarted { first_attempt, max_attempts, base, lanes, .. }) => {
                TimelineItem::Round { first: first_attempt, max: max_attempts, base, lanes }
            }
            Some(Event::AttemptStarted { .. }) => match e.attempt {
                Some(n) => {
                    open.insert(n);
                    TimelineItem::Started(n)
                }
                None => continue,
            },
            Some(Event::AttemptCompleted { .. }) => {
                let Some(n) = e.attempt else { continue };
                open.remove(&n);
                // The attempt's entry replaces its "started" one.
                items.retain(|i| *i != TimelineItem::Started(n));
                match by_n.get(&n) {
                    Some(r) => TimelineItem::Attempt(Box::new((*r).clone())),
                    None => continue,
                }
            }
            Some(Event::AttemptAborted { reason, .. }) => {
                let Some(n) = e.attempt else { continue };
                items.retain(|i| *i != TimelineItem::Started(n));
                TimelineItem::Aborted { n, reason }
            }
            Some(Event::Reviewed { review }) => TimelineItem::Review(Box::new(review)),
            Some(Event::TaskLanded { landed }) => TimelineItem::Landed(Box::new(landed)),
            Some(Event::TaskSucceeded { branch, .. }) => TimelineItem::Ended { what: "succeeded", detail: branch },
            Some(Event::TaskEscalated { reason, .. }) => TimelineItem::Ended { what: "escalated", detail: reason },
            Some(Event::LaneEnded { lane, ending, attempts, .. }) => TimelineItem::Lane { lane, ending, attempts },
            Some(Event::LaneChosen { lane, attempt, why, .. }) => TimelineItem::Chosen { lane, attempt, why },
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
        TimelineItem::Chosen { lane, .. } => Some(*lane),
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
