//! The lanes of a task once every one has ended: how each ended recorded
//! in the task's log, the winner chosen (first-wins, or the gates' choice,
//! `choose.rs`, and the verifier's pick among equals), and its commit made
//! the task's branch, or the task escalated.

use std::path::Path;

use super::super::gates::verifier::pick_lane;
use super::super::plan::Plan;
use super::super::{Ending, RunError, TaskRan, history};
use super::choose::{LaneCandidate, Winner, choose};
use super::shared::LaneShared;
use crate::config::lanes::{ChooseMode, LaneConfig};
use crate::git::{Repo, Revision};
use crate::model::{AttemptRecord, refs};
use crate::record::store::EventLog;
use crate::record::{Event, Store};

/// The lanes of a task, once every one has ended.
pub(super) struct LanesEnded<'a> {
    pub base: &'a Revision,
    pub repo: &'a Repo,
    pub store: &'a Store,
    pub plan: &'a Plan,
    pub shared: &'a LaneShared,
    pub lanes: u32,
    pub agents: &'a [LaneConfig],
    pub json: bool,
}

impl LanesEnded<'_> {
    /// How each lane ended recorded in the task's log, the winner chosen and
    /// its commit made the task's branch, or the task escalated.
    pub(super) fn finish(&self, log: &mut EventLog, failed: Option<RunError>) -> Result<TaskRan, RunError> {
        let (candidates, attempts_in_all) = self.record_lanes(log)?;
        match self.winner(&candidates)? {
            Some(Winner { candidate: c, why }) => self.succeed(log, &c, &why),
            None => match failed {
                Some(e) => Err(e),
                None => self.escalate(log, attempts_in_all),
            },
        }
    }

    /// Each lane's end recorded as `LaneEnded`; returns the lanes whose last
    /// attempt succeeded, and the attempts of this round in all.
    fn record_lanes(&self, log: &mut EventLog) -> Result<(Vec<LaneCandidate>, u32), RunError> {
        let LanesEnded { store, plan, lanes, .. } = *self;
        let mut candidates = Vec::new();
        let mut attempts_in_all = 0;
        for lane in 1..=lanes {
            let rid = refs::lane_record(&plan.id, lane);
            let verified = store.read(&rid)?;
            let state = history::state(&verified.events);
            let records = history::attempts(store, &rid, &verified.events);
            let round: Vec<&AttemptRecord> = records.iter().filter(|r| r.number >= state.first_attempt).collect();
            attempts_in_all += round.len() as u32;
            let ending = match &state.finished {
                Some((Event::TaskSucceeded { .. }, _)) => "succeeded",
                Some((Event::LaneStopped { .. }, _)) => "stopped",
                Some(_) => "escalated",
                None => "unfinished",
            };
            let last = round.last().copied();
            if let Some(r) = last
                && ending == "succeeded"
            {
                candidates.extend(LaneCandidate::of(lane, r));
            }
            let e = Event::LaneEnded {
                lane,
                ending: ending.to_string(),
                attempts: round.len() as u32,
                commit: last.and_then(|r| r.commit.clone()),
                agent: self.agent_name(lane),
            };
            log.append(e.kind(), None, &e.fields())?;
        }
        Ok((candidates, attempts_in_all))
    }

    /// Lane `lane`'s agent by name: its command's program, its preset, or
    /// the task's.
    fn agent_name(&self, lane: u32) -> String {
        let plan = self.plan;
        match self.agents.get(lane as usize - 1) {
            Some(LaneConfig { command: Some(c), .. }) => program(c),
            Some(LaneConfig { preset: Some(p), .. }) => p.0.clone(),
            _ => plan.preset.as_ref().map_or_else(|| program(&plan.agent_cmd), |p| p.name.clone()),
        }
    }

    /// The chosen lane and why: with first-wins the first to pass; with
    /// `--choose all` the gates' choice, or the verifier's pick among equals.
    fn winner(&self, candidates: &[LaneCandidate]) -> Result<Option<Winner>, RunError> {
        Ok(match self.shared.choose() {
            ChooseMode::First => {
                let w = self.shared.first_winner();
                w.and_then(|w| candidates.iter().find(|c| c.lane == w).cloned())
                    .map(|c| Winner { candidate: c, why: "the first lane whose attempt passed every gate".to_string() })
            }
            ChooseMode::All => match choose(candidates) {
                Some(by_gates) => Some(pick_lane(self.repo, self.store, self.plan, self.base, candidates, by_gates)?),
                None => None,
            },
        })
    }

    /// No lane won: the task escalated, recorded and said.
    fn escalate(&self, log: &mut EventLog, attempts_in_all: u32) -> Result<TaskRan, RunError> {
        let (id, lanes) = (&self.plan.id, self.lanes);
        let reason = format!(
            "no lane passed every gate ({lanes} lanes, {attempts_in_all} attempt{} in all)",
            crate::text::plural(attempts_in_all as usize)
        );
        let e = Event::TaskEscalated { reason: reason.clone(), attempts: attempts_in_all, budget: None };
        log.append(e.kind(), None, &e.fields())?;
        crate::console::errln!(
            "task {id} escalated: {}\n  report: retry-run report {id}",
            crate::text::visible(&reason)
        );
        Ok(TaskRan { ending: Ending::Escalated, earlier: false })
    }

    /// Lane `c` won: the choice recorded, its commit made the task's branch,
    /// the task's success recorded and said.
    fn succeed(&self, log: &mut EventLog, c: &LaneCandidate, why: &str) -> Result<TaskRan, RunError> {
        let LanesEnded { repo, plan, json, .. } = *self;
        let id = &plan.id;
        let e = Event::LaneChosen { lane: c.lane, attempt: c.attempt, commit: c.commit.clone(), why: why.to_string() };
        log.append(e.kind(), Some(c.attempt), &e.fields())?;
        let commit: crate::git::Oid = c.commit.parse().map_err(|_| RunError::NoSnapshot { attempt: c.attempt })?;
        let branch = refs::success_branch(id);
        repo.set_branch(&branch, commit)?;
        let rid = refs::lane_record(id, c.lane);
        let wt = repo.worktrees_root(&plan.config.worktree.root).join(refs::worktree_name(&rid));
        let e = Event::TaskSucceeded {
            commit: c.commit.clone(),
            branch: branch.clone(),
            worktree: wt.display().to_string(),
            tolerated: Vec::new(),
            warnings: Vec::new(),
        };
        log.append(e.kind(), Some(c.attempt), &e.fields())?;
        if !json {
            let why = crate::text::visible(why);
            crate::console::outln!("task {id} succeeded: lane {} at its attempt {} ({why})", c.lane, c.attempt);
            crate::console::outln!("  branch:   {branch} ({})", c.commit);
            crate::console::outln!("  lanes:    retry-run report {id}");
        }
        Ok(TaskRan { ending: Ending::Succeeded, earlier: false })
    }
}

/// The program a command runs, by its file name, to name a lane's agent
/// that is no preset.
fn program(c: &crate::config::CommandSpec) -> String {
    let first = match c {
        crate::config::CommandSpec::Argv(v) => v.iter().find(|w| !w.contains('=')).cloned(),
        crate::config::CommandSpec::Shell(s) => s.split_whitespace().find(|w| !w.contains('=')).map(str::to_string),
    };
    let first = first.unwrap_or_default();
    Path::new(&first).file_name().map_or(first.clone(), |f| f.to_string_lossy().into_owned())
}
