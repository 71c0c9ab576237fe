//! Lanes (`run --lanes K`, docs/lanes.md): K attempt chains of one task
//! from the same base at once, each a record of its own under the task's
//! (`tasks/<task>/lanes/<lane>/`, refs `refs/retry-run/<task>/lanes/<lane>/<n>`,
//! worktree `<task>+<lane>`), each retried with its own feedback. The first
//! lane to pass every gate wins and the others are stopped, or, with
//! `--choose all`, every lane runs to its end and the gates choose
//! ([`choose::choose`]). The winner's commit becomes the task's branch;
//! the task's own log records how each lane ended and the choice.
//!
//! - `shared.rs`: the lane's plan ([`shared::LaneRun`]) and what the lanes
//!   of a task share while they run;
//! - `feedback.rs`: what a lane is told of the other lanes' failures (pure);
//! - `ended.rs`: the lanes once every one has ended, the winner recorded;
//! - `choose.rs`: the gates' choice among the passing lanes (pure).
//!
//! `[[lane]]` is parsed in `config/lanes.rs`, pass@k is in `stats.rs`.

pub(super) mod choose;
mod ended;
mod feedback;
pub(super) mod shared;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::held_lease::HeldLease;
use super::plan::Plan;
use super::progress::{Board, Mode, Progress, Shared};
use super::{Ending, Options, RunError, TaskRan, chain, history, hold, start};
use crate::config::lanes::{ChooseMode, LaneConfig};
use crate::git::{Repo, Revision};
use crate::hash::sha256_hex;
use crate::model::{AttemptRecord, refs};
use crate::record::store::{EventLog, write_file};
use crate::record::{Event, Store};
use ended::LanesEnded;
use shared::{LaneRun, LaneShared};

/// How many lanes a run of `plan` takes: `--lanes`, else the task's record
/// (a resumed task keeps its lanes), else `retry.lanes`, else one per
/// `[[lane]]` table (or `--lane-preset`), else 1. More lane agents than
/// lanes is an error.
pub(super) fn count(plan: &Plan, opts: &Options, recorded: Option<u32>) -> Result<u32, RunError> {
    let agents = lane_agents(plan, opts).len();
    let lanes = opts
        .lanes
        .or(recorded.filter(|_| !opts.again))
        .or((plan.config.retry.lanes > 1).then_some(plan.config.retry.lanes))
        .unwrap_or(agents.max(1) as u32);
    if agents > lanes as usize {
        return Err(RunError::LaneAgents { task: plan.id.clone(), agents, lanes });
    }
    Ok(lanes)
}

/// Each lane's agent, by lane: `--lane-preset` over `[[lane]]`.
fn lane_agents(plan: &Plan, opts: &Options) -> Vec<LaneConfig> {
    if opts.lane_presets.is_empty() {
        return plan.config.lanes.clone();
    }
    opts.lane_presets
        .iter()
        .map(|p| LaneConfig { preset: Some(crate::config::PresetName(p.clone())), ..LaneConfig::default() })
        .collect()
}

/// `run` of a task in `lanes` lanes: the task's record started, every
/// lane run (at most `-j` at once), the choice made and recorded.
pub(super) fn run(
    (repo, store): (&Repo, &Store),
    plan: Plan,
    opts: &Options,
    lanes: u32,
    progress: &Progress,
) -> Result<TaskRan, RunError> {
    let id = plan.id.clone();
    let agents = lane_agents(&plan, opts);
    let _lock = hold::lock(store, &id)?;
    // With --remote, one lease for the task: its lanes run under it.
    let dir = repo.workdir().unwrap_or(repo.common_dir());
    let lease = hold::claim_lease(dir, opts, &id, progress)?.map(Arc::new);
    let task = InLanes { repo, store, plan: &plan, opts, progress };
    let ran = task.run_under(lanes, &agents, lease.clone());
    let lease = lease.and_then(|l| Arc::try_unwrap(l).ok());
    let earlier = ran.as_ref().is_ok_and(|r| r.earlier);
    hold::release(lease, ran.map(|r| r.ending)).map(|ending| TaskRan { ending, earlier })
}

/// The task whose lanes run, and what its run was given.
struct InLanes<'a> {
    repo: &'a Repo,
    store: &'a Store,
    plan: &'a Plan,
    opts: &'a Options,
    progress: &'a Progress,
}

impl InLanes<'_> {
    /// [`run`], once the task's lock (and lease) are held.
    fn run_under(&self, lanes: u32, agents: &[LaneConfig], lease: Option<Arc<HeldLease>>) -> Result<TaskRan, RunError> {
        let InLanes { repo, store, plan, opts, progress } = *self;
        let id = plan.id.clone();
        let verified = start::verified_log(store, &id)?;
        let state = history::state(&verified.events);
        if let Some(ran) = already_ended(plan, opts, &state, progress) {
            return Ok(ran);
        }
        let new_round = state.finished.is_some() || !state.started;
        let choose = choice(plan, opts, &state, new_round);
        let (base, line) = start::fix_base(repo, &plan.id, opts, &plan.config, &state)?;
        progress.say(&line);
        repo.check_filter_drivers(base.oid, Some(&store.root.join("gitattributes")))?;
        let mut log = store.log(&id)?;
        record_start(store, &mut log, plan, &base, lanes, choose, new_round)?;
        let so_far = if new_round { Vec::new() } else { so_far(store, &id, lanes) };
        let share_feedback = plan.config.retry.share_feedback;
        let shared =
            Arc::new(LaneShared::new(choose, share_feedback, plan.config.max_attempts.0, so_far, lease.clone()));
        if let Some(l) = &lease {
            l.publish()?;
        }
        let board = (Mode::pick(opts.json, opts.quiet) == Mode::Live).then(Board::new);
        let each = Lanes { opts, id: &id, base: &base, new_round, agents, shared: &shared };
        let lane_runs: Vec<(Options, LaneRun)> = (1..=lanes).map(|lane| each.lane(lane, lanes)).collect();
        let shared_board = Shared { board: board.clone() };
        let results =
            run_lanes(repo.workdir().unwrap_or(repo.common_dir()), &lane_runs, &shared_board, opts.jobs.max(1));
        if let Some(b) = &board {
            b.close();
        }
        stop_if_a_lane_was_interrupted(plan, &results, progress)?;
        // A lane that failed on its environment (a file that cannot be
        // written, a check that cannot start): when no lane wins, the task stays
        // open with that error, to be resumed, rather than escalate.
        let failed = results.into_iter().find_map(Result::err);
        let ended = LanesEnded { base: &base, repo, store, plan, shared: &shared, lanes, agents, json: opts.json };
        ended.finish(&mut log, failed)
    }
}

/// A task that ended before this run, without `--again`: said, and how it
/// ended.
fn already_ended(plan: &Plan, opts: &Options, state: &history::TaskState, progress: &Progress) -> Option<TaskRan> {
    if state.finished.is_none() || opts.again {
        return None;
    }
    let id = &plan.id;
    let ending = match &state.finished {
        Some((Event::TaskSucceeded { .. }, _)) => Ending::Succeeded,
        _ => Ending::Escalated,
    };
    progress.say(&format!(
        "task {id} already ended; `retry-run report {id}` shows it, `{}` runs it again",
        crate::outcome::resume::resume_command(id, &["--again"], &plan.resume_args)
    ));
    Some(TaskRan { ending, earlier: true })
}

/// How the winner is chosen: `--choose`, else the record's (a resumed task
/// keeps its choice), else `retry.choose`.
fn choice(plan: &Plan, opts: &Options, state: &history::TaskState, new_round: bool) -> ChooseMode {
    let recorded = match state.choose.as_deref().filter(|_| !new_round) {
        Some("all") => Some(ChooseMode::All),
        Some("first") => Some(ChooseMode::First),
        _ => None,
    };
    opts.choose.or(recorded).unwrap_or(plan.config.retry.choose)
}

/// The task's text written to its record and `TaskStarted` appended, with
/// its lanes and their choice.
fn record_start(
    store: &Store,
    log: &mut EventLog,
    plan: &Plan,
    base: &Revision,
    lanes: u32,
    choose: ChooseMode,
    new_round: bool,
) -> Result<(), RunError> {
    let task_text = crate::task::file_text(&plan.task);
    write_file(&store.task(&plan.id).task_md(), task_text.as_bytes())?;
    let started = Event::TaskStarted {
        task: plan.id.clone(),
        title: plan.task.title.clone(),
        base: base.oid.to_string(),
        base_ref: base.spec.clone(),
        max_attempts: plan.config.max_attempts.0,
        first_attempt: 1,
        resumed: !new_round,
        task_sha256: sha256_hex(task_text.as_bytes()),
        targets: plan.config.targets.clone(),
        baseline: Some(plan.config.retry.baseline),
        sandbox: None,
        lanes: Some(lanes),
        lane: None,
        choose: Some(match choose {
            ChooseMode::First => "first".to_string(),
            ChooseMode::All => "all".to_string(),
        }),
    };
    log.append(started.kind(), None, &started.fields())?;
    Ok(())
}

/// What the lanes already did in this round (a resumed task), by lane.
fn so_far(store: &Store, id: &str, lanes: u32) -> Vec<(u32, AttemptRecord)> {
    let mut so_far = Vec::new();
    for lane in 1..=lanes {
        let rid = refs::lane_record(id, lane);
        if let Ok(v) = store.read(&rid) {
            so_far.extend(history::attempts(store, &rid, &v.events).into_iter().map(|r| (lane, r)));
        }
    }
    so_far
}

/// What every lane's run shares, to make each one's options.
struct Lanes<'a> {
    opts: &'a Options,
    id: &'a str,
    base: &'a Revision,
    new_round: bool,
    agents: &'a [LaneConfig],
    shared: &'a Arc<LaneShared>,
}

impl Lanes<'_> {
    /// The options lane `lane` of `lanes` runs with (the task by id at the
    /// lanes' base, its own agent), and the lane it is.
    fn lane(&self, lane: u32, lanes: u32) -> (Options, LaneRun) {
        let opts = self.opts;
        let agent = self.agents.get(lane as usize - 1).cloned();
        let options = Options {
            task_file: None,
            task_text: None,
            id: Some(self.id.to_string()),
            base: Some(self.base.oid.to_string()),
            refresh_base: false,
            agent: if agent.is_some() { Vec::new() } else { opts.agent.clone() },
            remote: None,
            lanes: None,
            lane_presets: Vec::new(),
            // A lane that ended in an earlier round starts a new one
            // with the task.
            again: self.new_round && opts.again,
            ..opts.clone()
        };
        (options, LaneRun { task: self.id.to_string(), lane, lanes, agent, shared: self.shared.clone() })
    }
}

/// Each lane that stopped on an error said; `Err(Interrupted)` when one
/// was interrupted.
fn stop_if_a_lane_was_interrupted(
    plan: &Plan,
    results: &[Result<TaskRan, RunError>],
    progress: &Progress,
) -> Result<(), RunError> {
    let id = &plan.id;
    for (lane, e) in results.iter().enumerate().filter_map(|(i, r)| Some((i + 1, r.as_ref().err()?))) {
        if e.interrupted_by().is_none() {
            progress.say(&format!("task {id}: lane {lane} stopped on an error: {e}"));
        }
    }
    if let Some(e) = results.iter().find_map(|r| r.as_ref().err().filter(|e| e.interrupted_by().is_some())) {
        let resume = crate::outcome::resume::resume_command(id, &[], &plan.resume_args);
        return Err(RunError::Interrupted {
            task: id.clone(),
            signal: e.interrupted_by().unwrap_or(libc::SIGINT),
            resume,
        });
    }
    Ok(())
}

/// Every lane run, at most `jobs` at once, each on a thread that its
/// lanes' stop flag can stop.
fn run_lanes(dir: &Path, lanes: &[(Options, LaneRun)], board: &Shared, jobs: usize) -> Vec<Result<TaskRan, RunError>> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<TaskRan, RunError>>>> = Mutex::new((0..lanes.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, lanes.len().max(1)) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some((opts, lane)) = lanes.get(i) else { break };
                    crate::process::stop_lane_on(lane.shared.stop.clone());
                    let r = chain::lane(dir, opts, lane.clone(), board.clone());
                    if let Ok(mut all) = results.lock() {
                        all[i] = Some(r);
                    }
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .enumerate()
        .map(|(i, r)| r.unwrap_or_else(|| Err(RunError::LaneLost { lane: i + 1 })))
        .collect()
}
