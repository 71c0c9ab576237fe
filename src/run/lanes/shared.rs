//! The lane's plan: what one lane of a task runs as ([`LaneRun`], carried
//! by the run's options and its plan), and what the lanes of a task share
//! while they run ([`LaneShared`]: the stop flag, the winner, the attempts
//! counted against the task's budget).

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use super::super::held_lease::HeldLease;
use super::feedback::other_lanes_section;
use crate::config::lanes::{ChooseMode, LaneConfig};
use crate::model::AttemptRecord;

/// What one lane of a task runs as: its number, its agent (over the
/// task's), and what it shares with the other lanes.
#[derive(Debug, Clone)]
pub(crate) struct LaneRun {
    pub task: String,
    pub lane: u32,
    pub lanes: u32,
    pub agent: Option<LaneConfig>,
    pub shared: Arc<LaneShared>,
}

/// What the lanes of a task share while they run.
#[derive(Debug)]
pub(crate) struct LaneShared {
    /// Set once the lanes are to stop (a lane won the first-wins choice).
    pub stop: Arc<AtomicBool>,
    winner: Mutex<Option<u32>>,
    choose: ChooseMode,
    share_feedback: bool,
    /// `max_attempts`, for the whole task.
    max_attempts: u32,
    started: AtomicU32,
    /// Every lane's attempts of this round so far, by lane.
    attempts: Mutex<Vec<(u32, AttemptRecord)>>,
    /// With `--remote`: the task's one lease, held for all its lanes; each
    /// lane sends the task's record with it at its attempts' start and end.
    pub lease: Option<Arc<HeldLease>>,
}

impl LaneShared {
    /// What `lanes` lanes share, as a round starts: `so_far` holds what
    /// they did already in this round (a resumed task).
    pub(crate) fn new(
        choose: ChooseMode,
        share_feedback: bool,
        max_attempts: u32,
        so_far: Vec<(u32, AttemptRecord)>,
        lease: Option<Arc<HeldLease>>,
    ) -> LaneShared {
        LaneShared {
            stop: Arc::new(AtomicBool::new(false)),
            winner: Mutex::new(None),
            choose,
            share_feedback,
            max_attempts,
            started: AtomicU32::new(so_far.len() as u32),
            attempts: Mutex::new(so_far),
            lease,
        }
    }

    /// How the winner is chosen.
    pub(crate) fn choose(&self) -> ChooseMode {
        self.choose
    }

    /// The lane that passed every gate first, with first-wins.
    pub(crate) fn first_winner(&self) -> Option<u32> {
        self.winner.lock().ok().and_then(|w| *w)
    }

    /// Lane `lane` passed every gate. With first-wins, the first lane to
    /// say so wins and the others are told to stop; returns whether this
    /// one won (with `--choose all`, every passing lane may be chosen).
    pub(crate) fn passed(&self, lane: u32) -> bool {
        if self.choose == ChooseMode::All {
            return true;
        }
        let Ok(mut w) = self.winner.lock() else { return false };
        if w.is_some() {
            return false;
        }
        *w = Some(lane);
        self.stop.store(true, Ordering::SeqCst);
        true
    }

    /// Why a lane was stopped, for its record.
    pub(crate) fn why_stopped(&self) -> String {
        match self.winner.lock().ok().and_then(|w| *w) {
            Some(w) => format!("lane {w} passed every gate first"),
            None => "the task was stopped".to_string(),
        }
    }

    /// One more attempt of the task's `max_attempts`, if any is left.
    pub(crate) fn take_attempt(&self) -> bool {
        self.started
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| (n < self.max_attempts).then_some(n + 1))
            .is_ok()
    }

    pub(crate) fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// Lane `lane`'s attempt `r` ended.
    pub(crate) fn concluded(&self, lane: u32, r: &AttemptRecord) {
        if let Ok(mut a) = self.attempts.lock() {
            a.push((lane, r.clone()));
        }
    }

    /// Every lane's attempts so far: the task's budgets count them all.
    pub(crate) fn all_attempts(&self) -> Vec<AttemptRecord> {
        self.attempts.lock().map(|a| a.iter().map(|(_, r)| r.clone()).collect()).unwrap_or_default()
    }

    /// The prompt's section on the other lanes' failures, with
    /// `retry.share_feedback`; empty otherwise.
    pub(crate) fn feedback_for(&self, lane: u32) -> String {
        if !self.share_feedback {
            return String::new();
        }
        self.attempts.lock().map(|a| other_lanes_section(lane, &a)).unwrap_or_default()
    }
}
