//! Lanes (`run --lanes K`, docs/lanes.md): K attempt chains of one task
//! from the same base at once, each a record of its own under the task's
//! (`tasks/<task>/lanes/<lane>/`, refs `refs/retry-run/<task>/lanes/<lane>/<n>`,
//! worktree `<task>+<lane>`), each retried with its own feedback. The first
//! lane to pass every gate wins and the others are stopped, or, with
//! `--choose all`, every lane runs to its end and the gates choose
//! ([`crate::outcome::lanes::choose`]). The winner's commit becomes the
//! task's branch; the task's own log records how each lane ended and the
//! choice.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::progress::{Board, Mode, Shared};
use super::{Ending, Options, Ran, RunError, history, plan::Plan, run_task};
use crate::config::lanes::{ChooseMode, LaneConfig};
use crate::context::lanes::other_lanes_section;
use crate::git::{Repo, Revision};
use crate::hash::sha256_hex;
use crate::model::{AttemptRecord, refs};
use crate::outcome::lanes::{Candidate, choose};
use crate::record::store::write_file;
use crate::record::{Event, Store};

/// What one lane of a task runs as: its number, its agent (over the
/// task's), and what it shares with the other lanes.
#[derive(Debug, Clone)]
pub struct LaneRun {
    pub task: String,
    pub lane: u32,
    pub lanes: u32,
    pub agent: Option<LaneConfig>,
    pub shared: Arc<LaneShared>,
}

/// What the lanes of a task share while they run.
#[derive(Debug)]
pub struct LaneShared {
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
    pub lease: Option<Arc<super::held_lease::HeldLease>>,
}

impl LaneShared {
    /// Lane `lane` passed every gate. With first-wins, the first lane to
    /// say so wins and the others are told to stop; returns whether this
    /// one won (with `--choose all`, every passing lane may be chosen).
    pub fn passed(&self, lane: u32) -> bool {
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
    pub fn why_stopped(&self) -> String {
        match self.winner.lock().ok().and_then(|w| *w) {
            Some(w) => format!("lane {w} passed every gate first"),
            None => "the task was stopped".to_string(),
        }
    }

    /// One more attempt of the task's `max_attempts`, if any is left.
    pub fn take_attempt(&self) -> bool {
        self.started
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| (n < self.max_attempts).then_some(n + 1))
            .is_ok()
    }

    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    /// Lane `lane`'s attempt `r` ended.
    pub fn concluded(&self, lane: u32, r: &AttemptRecord) {
        if let Ok(mut a) = self.attempts.lock() {
            a.push((lane, r.clone()));
        }
    }

    /// Every lane's attempts so far: the task's budgets count them all.
    pub fn all_attempts(&self) -> Vec<AttemptRecord> {
        self.attempts.lock().map(|a| a.iter().map(|(_, r)| r.clone()).collect()).unwrap_or_default()
    }

    /// The prompt's section on the other lanes' failures, with
    /// `retry.share_feedback`; empty otherwise.
    pub fn feedback_for(&self, lane: u32) -> String {
        if !self.share_feedback {
            return String::new();
        }
        self.attempts.lock().map(|a| other_lanes_section(lane, &a)).unwrap_or_default()
    }
}

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
        return Err(RunError::usage(format!(
            "task {}: {agents} lane agents are given ([[lane]] or --lane-preset) for {lanes} lanes; give --lanes {agents} or fewer agents",
            plan.id
        )));
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
pub(super) fn run(repo: &Repo, store: &Store, plan: Plan, opts: &Options, lanes: u32) -> Result<Ran, RunError> {
    let id = plan.id.clone();
    let agents = lane_agents(&plan, opts);
    let _lock = super::lock(store, &id)?;
    // With --remote, one lease for the task: its lanes run under it.
    let dir = repo.workdir().unwrap_or(repo.common_dir());
    let lease = super::claim_lease(dir, opts, &id)?.map(Arc::new);
    let ran = run_under(repo, store, &plan, opts, lanes, &agents, lease.clone());
    let lease = lease.and_then(|l| Arc::try_unwrap(l).ok());
    let earlier = ran.as_ref().is_ok_and(|r| r.earlier);
    super::finish(lease, ran.map(|r| r.ending)).map(|ending| Ran { ending, earlier })
}

/// [`run`], once the task's lock (and lease) are held.
fn run_under(
    repo: &Repo,
    store: &Store,
    plan: &Plan,
    opts: &Options,
    lanes: u32,
    agents: &[LaneConfig],
    lease: Option<Arc<super::held_lease::HeldLease>>,
) -> Result<Ran, RunError> {
    let id = plan.id.clone();
    let verified = super::verified_log(store, &id)?;
    let state = history::state(&verified.events);
    let mode = Mode::pick(opts.json, opts.quiet);
    if state.finished.is_some() && !opts.again {
        let ending = match &state.finished {
            Some((Event::TaskSucceeded { .. }, _)) => Ending::Succeeded,
            _ => Ending::Escalated,
        };
        super::progress_of(opts, &id).say(&format!(
            "task {id} already ended; `retry-run report {id}` shows it, `{}` runs it again",
            crate::outcome::resume::resume_command(&id, &["--again"], &plan.resume_args)
        ));
        return Ok(Ran { ending, earlier: true });
    }
    let new_round = state.finished.is_some() || !state.started;
    // `--choose`, else the record's (a resumed task keeps its choice), else
    // `retry.choose`.
    let recorded = match state.choose.as_deref().filter(|_| !new_round) {
        Some("all") => Some(ChooseMode::All),
        Some("first") => Some(ChooseMode::First),
        _ => None,
    };
    let choose = opts.choose.or(recorded).unwrap_or(plan.config.retry.choose);
    let base = base(repo, plan, opts, &state)?;
    repo.check_filter_drivers(base.oid, Some(&store.root.join("gitattributes")))?;
    let mut log = store.log(&id)?;
    let task_text = crate::task::file_text(&plan.task);
    write_file(&store.task(&id).task_md(), task_text.as_bytes())?;
    let started = Event::TaskStarted {
        task: id.clone(),
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

    // What the lanes already did in this round (a resumed task).
    let mut so_far = Vec::new();
    if !new_round {
        for lane in 1..=lanes {
            let rid = refs::lane_record(&id, lane);
            if let Ok(v) = store.read(&rid) {
                so_far.extend(history::attempts(store, &rid, &v.events).into_iter().map(|r| (lane, r)));
            }
        }
    }
    let shared = Arc::new(LaneShared {
        stop: Arc::new(AtomicBool::new(false)),
        winner: Mutex::new(None),
        choose,
        share_feedback: plan.config.retry.share_feedback,
        max_attempts: plan.config.max_attempts.0,
        started: AtomicU32::new(so_far.len() as u32),
        attempts: Mutex::new(so_far),
        lease: lease.clone(),
    });
    if let Some(l) = &lease {
        l.publish()?;
    }
    let board = (mode == Mode::Live).then(Board::new);
    let lane_opts: Vec<Options> = (1..=lanes)
        .map(|lane| {
            let agent = agents.get(lane as usize - 1).cloned();
            Options {
                task_file: None,
                task_text: None,
                id: Some(id.clone()),
                base: Some(base.oid.to_string()),
                refresh_base: false,
                agent: if agent.is_some() { Vec::new() } else { opts.agent.clone() },
                remote: None,
                among: Some(Shared { board: board.clone() }),
                lanes: None,
                lane_presets: Vec::new(),
                // A lane that ended in an earlier round starts a new one
                // with the task.
                again: new_round && opts.again,
                lane: Some(LaneRun { task: id.clone(), lane, lanes, agent, shared: shared.clone() }),
                ..opts.clone()
            }
        })
        .collect();
    let results = run_lanes(repo.workdir().unwrap_or(repo.common_dir()), &lane_opts, opts.jobs.max(1));
    if let Some(b) = &board {
        b.close();
    }
    for (lane, e) in results.iter().enumerate().filter_map(|(i, r)| Some((i + 1, r.as_ref().err()?))) {
        if e.interrupted_by().is_none() {
            super::progress_of(opts, &id).say(&format!("task {id}: lane {lane} stopped on an error: {e}"));
        }
    }
    if let Some(e) = results.iter().find_map(|r| r.as_ref().err().filter(|e| e.interrupted_by().is_some())) {
        let resume = crate::outcome::resume::resume_command(&id, &[], &plan.resume_args);
        return Err(RunError::Interrupted { task: id, signal: e.interrupted_by().unwrap_or(libc::SIGINT), resume });
    }
    // A lane that failed on its environment (a file that cannot be
    // written, a check that cannot start): when no lane wins, the task stays
    // open with that error, to be resumed, rather than escalate.
    let failed = results.into_iter().find_map(Result::err);
    let ended = Ended { base: &base, repo, store, plan, shared: &shared, lanes, agents, json: opts.json };
    ended.finish(&mut log, failed)
}

/// The base of the lanes: the recorded one when the task resumes; the
/// line that names it said.
fn base(repo: &Repo, plan: &Plan, opts: &Options, state: &history::TaskState) -> Result<Revision, RunError> {
    let (base, line) = super::start::fix_base(repo, &plan.id, opts, &plan.config, state)?;
    super::progress_of(opts, &plan.id).say(&line);
    Ok(base)
}

/// Every lane run, at most `jobs` at once, each on a thread that its
/// lanes' stop flag can stop.
fn run_lanes(dir: &Path, lanes: &[Options], jobs: usize) -> Vec<Result<Ran, RunError>> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<Ran, RunError>>>> = Mutex::new((0..lanes.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs.clamp(1, lanes.len().max(1)) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(o) = lanes.get(i) else { break };
                    if let Some(l) = &o.lane {
                        crate::process::stop_lane_on(l.shared.stop.clone());
                    }
                    let r = run_task(dir, o.clone());
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
        .map(|(i, r)| r.unwrap_or_else(|| Err(RunError::Environment(format!("lane {} ended without a result", i + 1)))))
        .collect()
}

/// The lanes of a task, once every one has ended.
struct Ended<'a> {
    base: &'a Revision,
    repo: &'a Repo,
    store: &'a Store,
    plan: &'a Plan,
    shared: &'a LaneShared,
    lanes: u32,
    agents: &'a [LaneConfig],
    json: bool,
}

impl Ended<'_> {
    /// With a verifier and more than one lane that passed every gate and
    /// its targets, the verifier is shown each one's diff and picks one
    /// (`lane` and `why` in its verdict); otherwise, or when it gives no
    /// valid pick, the gates' choice `best` stands.
    fn verifier_pick(
        &self,
        candidates: &[Candidate],
        best: Candidate,
        why: String,
    ) -> Result<(Candidate, String), RunError> {
        let top: Vec<&Candidate> = candidates.iter().filter(|c| c.passed && c.targets == best.targets).collect();
        let Some(cfg) = &self.plan.config.verifier else { return Ok((best, why)) };
        if top.len() < 2 {
            return Ok((best, why));
        }
        let id = &self.plan.id;
        let mut input = format!(
            "# Choose one lane of task {id}\n\nEach lane below is an attempt at the same task that passed every gate. \
             Answer with your JSON verdict, adding `lane` (the number of the lane you pick) and `why`.\n"
        );
        for c in &top {
            let head = self.repo.resolve(&c.commit)?;
            let cmp = self.repo.compare_commits(
                self.base,
                &head,
                crate::git::DiffDepth::Patch { max_lines: super::gates::verifier::VERIFIER_DIFF_LINES },
                None,
            )?;
            let mut md = Vec::new();
            let summary = crate::model::DiffSummary::from(&cmp);
            let _ = crate::format::diff::write(
                &mut md,
                crate::format::diff::DiffFormat::Markdown,
                &summary,
                super::gates::verifier::VERIFIER_DIFF_LINES,
            );
            input.push_str(&format!(
                "\n## Lane {}, attempt {}\n\n{}\n",
                c.lane,
                c.attempt,
                String::from_utf8_lossy(&md)
            ));
        }
        // Run in an empty directory of the record, confined as a verifier.
        let dir = self.store.task(id).choice();
        let tmp = dir.tmp();
        let _ = std::fs::remove_dir_all(dir.path());
        std::fs::create_dir_all(&tmp).map_err(|source| RunError::Tmpdir { path: tmp.clone(), source })?;
        let mut policy = crate::sandbox::verifier_policy(&tmp, &self.plan.extra_writable);
        policy.network = cfg.network.clone();
        let git_paths = crate::sandbox::GitPaths {
            objects: self.repo.common_dir().join("objects"),
            admin: tmp.clone(),
            quarantine: tmp.clone(),
            submodule_objects: Vec::new(),
        };
        let confinement =
            super::confine::confinement_of(self.repo, self.plan, dir.path(), Some(tmp.clone()), policy, &git_paths);
        let mut env = vec![("RETRY_RUN_TASK".to_string(), id.clone())];
        env.extend(confinement.env());
        let v = super::gates::verifier::verify(cfg, dir.path(), &env, &confinement, &input, &dir);
        let _ = std::fs::remove_dir_all(&tmp);
        let out = std::fs::read_to_string(dir.verifier_out(v.calls)).unwrap_or_default();
        let lanes: Vec<u32> = top.iter().map(|c| c.lane).collect();
        Ok(match crate::verdict::pick(&out, &lanes) {
            Ok((lane, said)) => {
                let chosen = top.iter().find(|c| c.lane == lane).map_or(best, |c| (*c).clone());
                let said = if said.is_empty() { String::new() } else { format!(": {said}") };
                (chosen, format!("the verifier's pick among {} lanes that passed every gate{said}", top.len()))
            }
            Err(e) => (best, format!("{why} (the verifier gave no pick: {e})")),
        })
    }

    /// How each lane ended recorded in the task's log, the winner chosen and
    /// its commit made the task's branch, or the task escalated.
    fn finish(&self, log: &mut crate::record::store::EventLog, failed: Option<RunError>) -> Result<Ran, RunError> {
        let Ended { repo, store, plan, shared, lanes, agents, json, .. } = *self;
        let id = &plan.id;
        let mut candidates = Vec::new();
        let mut attempts_in_all = 0;
        for lane in 1..=lanes {
            let rid = refs::lane_record(id, lane);
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
                candidates.extend(Candidate::of(lane, r));
            }
            let agent = match agents.get(lane as usize - 1) {
                Some(LaneConfig { command: Some(c), .. }) => program(c),
                Some(LaneConfig { preset: Some(p), .. }) => p.0.clone(),
                _ => plan.preset.as_ref().map_or_else(|| program(&plan.agent_cmd), |p| p.name.clone()),
            };
            let e = Event::LaneEnded {
                lane,
                ending: ending.to_string(),
                attempts: round.len() as u32,
                commit: last.and_then(|r| r.commit.clone()),
                agent,
            };
            log.append(e.kind(), None, &e.fields())?;
        }
        let winner = match shared.choose {
            ChooseMode::First => {
                let w = shared.winner.lock().ok().and_then(|w| *w);
                w.and_then(|w| candidates.iter().find(|c| c.lane == w).cloned())
                    .map(|c| (c, "the first lane whose attempt passed every gate".to_string()))
            }
            ChooseMode::All => match choose(&candidates) {
                Some((best, why)) => Some(self.verifier_pick(&candidates, best, why)?),
                None => None,
            },
        };
        let Some((c, why)) = winner else {
            if let Some(e) = failed {
                return Err(e);
            }
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
            return Ok(Ran { ending: Ending::Escalated, earlier: false });
        };
        let e = Event::LaneChosen { lane: c.lane, attempt: c.attempt, commit: c.commit.clone(), why: why.clone() };
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
            let why = crate::text::visible(&why);
            crate::console::outln!("task {id} succeeded: lane {} at its attempt {} ({why})", c.lane, c.attempt);
            crate::console::outln!("  branch:   {branch} ({})", c.commit);
            crate::console::outln!("  lanes:    retry-run report {id}");
        }
        Ok(Ran { ending: Ending::Succeeded, earlier: false })
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
