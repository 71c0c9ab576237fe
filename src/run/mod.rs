//! The attempt loop (docs/commands.md, `run`): `retry-run run`.
//!
//! Every step is recorded as an event of docs/record.md once it is done; the
//! attempt number comes from the log, so a run killed at any point is
//! continued by the next one. The pure parts live elsewhere: gate order in
//! [`crate::outcome::classify`], the retry context in [`crate::context`],
//! failure comparison in [`checks`]. This module is the imperative shell.
//!
//! - [`checks`]: running checks, baseline comparison, flaky re-runs;
//! - [`verifier`]: calling the verifier with retries;
//! - [`history`]: reading a task's state and attempts back from the record;
//! - [`progress`]: the live line, plain lines, or JSON events.

pub mod builtin;
pub mod checks;
mod error;
pub mod history;
mod lease;
pub mod leftovers;
pub mod prepare;
pub mod progress;
pub mod queue;
pub mod verifier;

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::{Value, json};

use crate::checkout_watch::{Machinery, Outside};
use crate::config::{self, CommandSpec, Config, ResetMode};
use crate::context::{self, TaskText, render::render};
use crate::format::diff::{DiffFormat, write as write_diff};
use crate::git::fingerprint::fingerprint;
use crate::git::{DiffDepth, Oid, Repo};
use crate::hash::sha256_hex;
use crate::model::{
    AgentRun, AttemptRecord, CheckResult, DiffSummary, FileChange, ScopeFinding, ScopeReason, VerifierResult,
};
use crate::outcome;
use crate::pathfmt::display;
use crate::process::{self, Spec};
use crate::record::manifest::{Manifest, canonical_json};
use crate::record::store::{check_task_name, write_file};
use crate::record::{Event, EventLog, RecordError, Store};
use crate::sandbox::{self, Effective};
use crate::scope::{self, Rules};
use crate::task::{self, Task};
use progress::{Mode, Progress};

pub use error::{Ending, RunError};

/// Patch lines kept in an attempt's record (the context bounds it further).
const RECORD_DIFF_LINES: usize = 2000;
/// Patch lines sent to the verifier.
const VERIFIER_DIFF_LINES: usize = 500;

/// What `run` was asked to do.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub config_path: Option<PathBuf>,
    pub task_file: Option<PathBuf>,
    pub task_text: Option<String>,
    pub id: Option<String>,
    pub base: Option<String>,
    pub max_attempts: Option<u32>,
    /// `--target`: added to the config's `targets`.
    pub targets: Vec<String>,
    pub again: bool,
    pub refresh_base: bool,
    /// The agent command after `--`, overriding `agent.command`.
    pub agent: Vec<String>,
    /// `--preset`: over `agent.preset`.
    pub preset: Option<String>,
    /// `--max-cost` (USD) and `--max-duration`: over `retry.max_cost_usd`
    /// and `retry.max_duration`.
    pub max_cost: Option<f64>,
    pub max_duration: Option<String>,
    pub json: bool,
    pub quiet: bool,
    /// `--remote`: share the task through this git remote, under a lease.
    pub remote: Option<String>,
    /// `--lease`: how long the lease holds without a renewal.
    pub lease: Option<std::time::Duration>,
    /// Set when the task runs among others (`run -j`): progress lines and
    /// JSON events carry the task's id.
    pub among: Option<progress::Shared>,
}

/// The lease's default duration (`--lease`).
pub const DEFAULT_LEASE: std::time::Duration = std::time::Duration::from_secs(300);

/// The project's config (`--config` or `retry-run.toml` at the root) with
/// a task's front matter over it.
pub fn effective_config(repo: &Repo, config_path: Option<&Path>, overrides: &toml::Table) -> Result<Config, RunError> {
    let path = match config_path {
        Some(p) => Some(p.to_path_buf()),
        None => repo.workdir().map(|w| w.join(config::FILE_NAME)).filter(|p| p.is_file()),
    };
    let (project, table) = match &path {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| RunError::usage(format!("{}: cannot read the config file: {e}", p.display())))?;
            let cfg = Config::parse(&text, p)?;
            (cfg, text.parse::<toml::Table>().unwrap_or_default())
        }
        None => (Config::default(), toml::Table::new()),
    };
    if overrides.is_empty() {
        return Ok(project);
    }
    toml::Value::Table(task::merge(&table, overrides))
        .try_into::<Config>()
        .map_err(|e| RunError::usage(format!("the task's front matter over the project config: {e}")))
}

/// The task from `--task-file`, `--task`, or the record (`--id` alone).
fn load_task(store: &Store, dir: &Path, opts: &Options) -> Result<Task, RunError> {
    if let Some(file) = &opts.task_file {
        let path = crate::pathfmt::absolute(file, dir);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| RunError::usage(format!("--task-file {}: {e}", file.display())))?;
        return task::parse_file(&text, file).map_err(|e| RunError::usage(e.to_string()));
    }
    if let Some(text) = &opts.task_text {
        return task::from_text(text).ok_or_else(|| RunError::usage("--task is empty; describe the task"));
    }
    if let Some(id) = &opts.id {
        check_task_name(id)?;
        return recorded_task(store, id);
    }
    Err(RunError::usage("no task: give --task-file FILE.md or --task TEXT"))
}

/// The task recorded for `id` (`tasks/<id>/task.md`).
pub fn recorded_task(store: &Store, id: &str) -> Result<Task, RunError> {
    let path = store.task_dir(id).join("task.md");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        RunError::usage(format!(
            "task {id} has no recorded task ({}: {e}); give it with --task-file FILE.md or --task TEXT",
            path.display()
        ))
    })?;
    task::parse_file(&text, &path).map_err(|e| RunError::usage(e.to_string()))
}

/// What the next attempt of a task would receive, from the record alone:
/// the context and its rendered prompt.
pub fn next_context(
    repo: &Repo,
    store: &Store,
    id: &str,
    config_path: Option<&Path>,
) -> Result<(context::Context, context::render::Rendered), RunError> {
    let verified = store.read(id)?;
    let task = recorded_task(store, id)?;
    let config = effective_config(repo, config_path, &task.overrides)?;
    let state = history::state(&verified.events);
    let mut prior = history::attempts(store, id, &verified.events);
    if let Some(n) = state.unfinished {
        // The next run records it as interrupted first; show what it will see.
        prior.push(history::interrupted(&verified.events, n));
    }
    let next = state.last_attempt + 1;
    let max = if state.finished.is_some() || !state.started {
        next + config.max_attempts.0 - 1
    } else {
        state.first_attempt + config.max_attempts.0 - 1
    };
    let text = TaskText { id: id.to_string(), title: task.title.clone(), text: task.text.clone() };
    let ctx = context::assemble(&text, next, max.max(next), &prior, &config.context);
    let rendered = render(&ctx, &config.context);
    Ok((ctx, rendered))
}

/// Quotes a value for `sh`.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

fn substitute(arg: &str, vars: &[(&str, String)], quote: bool) -> String {
    let mut out = arg.to_string();
    for (k, v) in vars {
        out = out.replace(&format!("{{{k}}}"), &if quote { sh_quote(v) } else { v.clone() });
    }
    out
}

/// The agent's argv with placeholders filled in.
pub fn agent_argv(cmd: &CommandSpec, vars: &[(&str, String)]) -> Vec<String> {
    match cmd {
        CommandSpec::Argv(a) => a.iter().map(|x| substitute(x, vars, false)).collect(),
        CommandSpec::Shell(s) => vec!["sh".into(), "-c".into(), substitute(s, vars, true)],
    }
}

/// Appends events, echoing them to stdout in `--json` mode.
struct Recorder {
    log: EventLog,
    json: bool,
    /// Among other tasks: the task's id, added to each echoed event.
    label: Option<String>,
}

impl Recorder {
    fn event(&mut self, attempt: Option<u32>, event: Event) -> Result<(), RunError> {
        let mut line = self.log.append_line(event.kind(), attempt, &event.fields())?;
        if let Some(task) = &self.label
            && let Ok(Value::Object(mut map)) = serde_json::from_str::<Value>(&line)
        {
            map.entry("task").or_insert_with(|| Value::String(task.clone()));
            line = Value::Object(map).to_string();
        }
        if self.json {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }
        Ok(())
    }
}

fn record_err(e: RecordError) -> RunError {
    e.into()
}

/// What a task fixed before its first attempt: its config, its agent, its
/// gates' rules and its sandbox. Decided before anything is recorded, so
/// bad input fails clean.
struct Plan {
    task: Task,
    id: String,
    config: Config,
    agent_cmd: CommandSpec,
    preset: Option<crate::agents::Preset>,
    leftovers: leftovers::Leftovers,
    rules: Rules,
    test_paths: builtin::TestPaths,
    confined: Effective,
    abi: u8,
    fallback_note: Option<String>,
    extra_writable: Vec<PathBuf>,
    exe: PathBuf,
}

/// A task under way: the plan, the record it appends to, and what its
/// attempts carry from one to the next.
struct TaskRun<'a> {
    repo: &'a Repo,
    store: &'a Store,
    json: bool,
    plan: Plan,
    progress: Progress,
    rec: Recorder,
    base: crate::git::Revision,
    first_attempt: u32,
    last_allowed: u32,
    task_text: TaskText,
    wt_root: PathBuf,
    wt: PathBuf,
    /// The checks on the base, run before the first attempt that needs them.
    baselines: Option<Vec<checks::Baseline>>,
    /// The user's checkout, watched from the run's start to its end.
    watch: Watch,
    /// Manifest hashes of the attempts so far, chained into the next.
    manifests: Vec<String>,
    /// Every completed attempt; each attempt adds its own as it ends.
    prior: Vec<AttemptRecord>,
    /// With `--remote`: the lease, and the record sent at each attempt's
    /// start and end.
    lease: Option<lease::HeldLease>,
}

/// `retry-run run`: take the task, then its attempts one after another
/// until one succeeds or the task escalates.
pub fn run(dir: &Path, opts: Options) -> Result<Ending, RunError> {
    run_task(dir, opts).map(|r| r.ending)
}

/// How a run of one task ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ran {
    pub ending: Ending,
    /// The task had ended before this run, which did nothing.
    pub earlier: bool,
}

/// The id a run of `opts` gives its task; a bad task fails here, before
/// anything runs.
pub fn task_id(dir: &Path, opts: &Options) -> Result<String, RunError> {
    let repo = Repo::discover(dir)?;
    let store = Store::new(repo.common_dir());
    let task = load_task(&store, dir, opts)?;
    let id = opts.id.clone().unwrap_or(task.id);
    check_task_name(&id)?;
    Ok(id)
}

/// [`run`], telling a task that had already ended from one that ended now.
pub fn run_task(dir: &Path, opts: Options) -> Result<Ran, RunError> {
    let repo = Repo::discover(dir)?;
    let store = Store::new(repo.common_dir());
    // 1. The task, its config and its agent; nothing recorded yet.
    let plan = take_task(&repo, &store, dir, &opts)?;
    let _lock = store.lock(&plan.id).map_err(|e| match e {
        RecordError::Locked { ref pid, .. } => {
            RunError::Held { by: format!("process {pid} here"), message: e.to_string() }
        }
        other => other.into(),
    })?;
    // With --remote: the record pulled and the task's lease claimed.
    let lease = match &opts.remote {
        Some(remote) => {
            let (held, previous) = lease::HeldLease::claim(dir, remote, &plan.id, opts.lease.unwrap_or(DEFAULT_LEASE))?;
            if let Some(h) = previous {
                let note =
                    format!("task {}: took over the lease of {} (pid {}), which expired", plan.id, h.host, h.pid);
                progress_of(&opts, &plan.id).say(&note);
            }
            Some(held)
        }
        None => None,
    };
    // The record read, a killed run's attempt closed, `TaskStarted` recorded.
    let (mut task, next) = match start_task(&repo, &store, plan, &opts) {
        Ok(Started::Now(task, next)) => (task, next),
        Ok(Started::AlreadyEnded(ending)) => {
            return finish(lease, Ok(ending)).map(|ending| Ran { ending, earlier: true });
        }
        Err(e) => return finish(lease, Err(e)).map(|ending| Ran { ending, earlier: false }),
    };
    task.lease = lease;
    let ended = task.attempts(next);
    finish(task.lease.take(), ended).map(|ending| Ran { ending, earlier: false })
}

/// How task `id` shows its progress: alone, or among others.
fn progress_of(opts: &Options, id: &str) -> Progress {
    let mode = Mode::pick(opts.json, opts.quiet);
    match &opts.among {
        Some(shared) => Progress::among(mode, id, shared),
        None => Progress::new(mode),
    }
}

/// The lease given back with the record's last state, whatever the end.
fn finish(lease: Option<lease::HeldLease>, ended: Result<Ending, RunError>) -> Result<Ending, RunError> {
    let Some(lease) = lease else { return ended };
    let released = lease.release();
    match (ended, released) {
        (Ok(ending), Ok(())) => Ok(ending),
        (Ok(_), Err(e)) => Err(e),
        (Err(e), _) => Err(e),
    }
}

/// Phase 1, take the task: the task and the effective config (flags over
/// front matter over `retry-run.toml`), the agent, the scope's rules and
/// the sandbox, all checked before anything is recorded.
fn take_task(repo: &Repo, store: &Store, dir: &Path, opts: &Options) -> Result<Plan, RunError> {
    let task = load_task(store, dir, opts)?;
    let id = opts.id.clone().unwrap_or_else(|| task.id.clone());
    check_task_name(&id)?;
    let mut config = effective_config(repo, opts.config_path.as_deref(), &task.overrides)?;
    apply_flags(opts, &mut config)?;
    let (agent_cmd, preset, leftovers) = resolve_agent(opts, &mut config)?;
    // Bad globs fail before anything is recorded.
    let rules = Rules::compile(&config.scope.allow, &config.scope.deny)?;
    let test_paths = builtin::TestPaths::new(&config.retry.test_paths).map_err(RunError::usage)?;
    // The sandbox: decided, and its writable paths made ready, before anything runs.
    let abi = sandbox::landlock::abi();
    let (confined, fallback_note) =
        sandbox::resolve(config.sandbox.mode, abi, &sandbox::landlock::kernel()).map_err(RunError::environment)?;
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let repo_root = repo.workdir().unwrap_or(repo.common_dir()).to_path_buf();
    let mut extra_writable =
        sandbox::prepare_writable(&config.sandbox.writable, home.as_deref(), &repo_root).map_err(RunError::usage)?;
    if let Some(p) = &preset {
        extra_writable
            .extend(sandbox::prepare_state(&p.state_dirs, &p.state_files, home.as_deref()).map_err(RunError::usage)?);
    }
    let exe = std::env::current_exe().map_err(|e| {
        RunError::environment(format!("cannot find retry-run's own executable to confine the agent: {e}"))
    })?;
    Ok(Plan {
        task,
        id,
        config,
        agent_cmd,
        preset,
        leftovers,
        rules,
        test_paths,
        confined,
        abi,
        fallback_note,
        extra_writable,
        exe,
    })
}

/// The flags of `run` over the config: `--max-attempts`, `--target`,
/// `--preset`, `--max-cost`, `--max-duration`.
fn apply_flags(opts: &Options, config: &mut Config) -> Result<(), RunError> {
    if let Some(n) = opts.max_attempts {
        if n == 0 {
            return Err(RunError::usage("--max-attempts must be at least 1"));
        }
        config.max_attempts.0 = n;
    }
    for t in &opts.targets {
        if t.trim().is_empty() {
            return Err(RunError::usage("--target is empty; name a test as its runner prints it"));
        }
        if !config.targets.contains(t) {
            config.targets.push(t.clone());
        }
    }
    if let Some(p) = &opts.preset {
        crate::agents::preset(p).map_err(|e| RunError::usage(format!("--preset: {e}")))?;
        config.agent.preset = Some(config::PresetName(p.clone()));
    }
    if let Some(c) = opts.max_cost {
        config.retry.max_cost_usd = Some(c);
    }
    if let Some(d) = &opts.max_duration {
        config.retry.max_duration =
            Some(config::DurationSpec::parse(d).map_err(|e| RunError::usage(format!("--max-duration: {e}")))?);
    }
    Ok(())
}

enum Started<'a> {
    /// The task runs, from this attempt number.
    Now(Box<TaskRun<'a>>, u32),
    /// The task had ended and `--again` was not given.
    AlreadyEnded(Ending),
}

/// The record read and verified, an attempt a killed run left recorded as
/// interrupted, the base fixed and `TaskStarted` recorded; the watch of the
/// user's checkout started in the background.
fn start_task<'a>(repo: &'a Repo, store: &'a Store, plan: Plan, opts: &Options) -> Result<Started<'a>, RunError> {
    let id = plan.id.clone();
    let config = &plan.config;
    let progress = progress_of(opts, &id);
    let verified = store.read(&id).or_else(|e| match e {
        RecordError::NoTask { .. } => Ok(crate::record::chain::verify(b"")),
        e => Err(e),
    })?;
    if let Some(b) = &verified.broken {
        return Err(RunError::environment(format!(
            "{}: the event log is broken ({b:?}); run `retry-run log {id} --verify` and repair or move the file before running the task again",
            store.events_path(&id).display()
        )));
    }
    let state = history::state(&verified.events);
    if let Some(note) = &plan.fallback_note {
        progress.say(note);
    }
    let label = opts.among.is_some().then(|| id.clone());
    let mut rec = Recorder { log: store.log(&id).map_err(record_err)?, json: opts.json, label };

    let mut prior = history::attempts(store, &id, &verified.events);
    // A run that was killed mid-attempt: that attempt is a CRASH (interrupted).
    if let Some(n) = state.unfinished {
        prior.push(record_interrupted(&mut rec, &progress, repo, store, config, &id, &verified.events, n)?);
    }
    if let Some((ended, at)) = &state.finished
        && !opts.again
    {
        let (ok, how) = match ended {
            Event::TaskSucceeded { branch, .. } => {
                (true, format!("succeeded at attempt {} (branch {branch})", at.unwrap_or(0)))
            }
            Event::TaskEscalated { reason, .. } => (false, format!("escalated ({reason})")),
            _ => (false, "ended".to_string()),
        };
        progress.say(&format!(
            "task {id} already {how}; `retry-run report {id}` shows it, `retry-run run --again` runs it again"
        ));
        return Ok(Started::AlreadyEnded(if ok { Ending::Succeeded } else { Ending::Escalated }));
    }

    // The base: recorded once per task, unless --refresh-base.
    let base = match (&state.base, opts.refresh_base || opts.base.is_some() && state.base.is_none()) {
        (Some(b), false) => repo.resolve(b).map_err(|_| {
            RunError::usage(format!(
                "task {id}: its recorded base commit {b} no longer exists in this repository; fetch it, or start over with --refresh-base"
            ))
        })?,
        _ => match opts.base.as_deref().or(config.base.as_deref()) {
            Some(spec) => repo.resolve(spec)?,
            None => repo.default_branch()?,
        },
    };
    let new_round = !state.started || opts.again || state.finished.is_some();
    let first_attempt =
        if new_round { state.last_attempt.max(state.unfinished.unwrap_or(0)) + 1 } else { state.first_attempt };
    let max_attempts = config.max_attempts.0;
    let last_allowed = first_attempt + max_attempts - 1;
    let task_file_text = task::file_text(&plan.task);
    write_file(&store.task_dir(&id).join("task.md"), task_file_text.as_bytes())?;
    rec.event(
        None,
        Event::TaskStarted {
            task: id.clone(),
            title: plan.task.title.clone(),
            base: base.oid.to_string(),
            base_ref: base.spec.clone(),
            max_attempts,
            first_attempt,
            resumed: !new_round,
            task_sha256: sha256_hex(task_file_text.as_bytes()),
            targets: config.targets.clone(),
            baseline: Some(config.retry.baseline),
            sandbox: Some(
                json!({"requested": config.sandbox.mode, "mode": plan.confined, "landlock_abi": plan.abi, "note": plan.fallback_note}),
            ),
        },
    )?;

    let wt_root = repo.worktrees_root(&config.worktree.root);
    let wt = wt_root.join(&id);
    let task_text = TaskText { id: id.clone(), title: plan.task.title.clone(), text: plan.task.text.clone() };
    let watch = Watch::start(repo, &wt_root);
    let next = state.last_attempt.max(state.unfinished.unwrap_or(0)) + 1;
    let run = TaskRun {
        repo,
        store,
        json: opts.json,
        plan,
        progress,
        rec,
        base,
        first_attempt,
        last_allowed,
        task_text,
        wt_root,
        wt,
        baselines: None,
        watch,
        manifests: state.manifests,
        prior,
        lease: None,
    };
    Ok(Started::Now(Box::new(run), next))
}

/// The watch of the user's checkout: started on another thread when the
/// run begins (while the worktree is prepared), ready by the first agent.
struct Watch {
    outside: Option<Outside>,
    starting: Option<std::thread::JoinHandle<Outside>>,
    /// Time spent marking and reading it in the current attempt.
    spent: std::time::Duration,
}

impl Watch {
    fn start(repo: &Repo, skip: &Path) -> Watch {
        let (root, skip) = (repo.workdir().map(Path::to_path_buf), skip.to_path_buf());
        Watch {
            outside: None,
            starting: Some(std::thread::spawn(move || Outside::start(root.as_deref(), &skip))),
            spent: std::time::Duration::ZERO,
        }
    }

    /// The watch, once ready; says once when it falls back to stat data.
    fn ready(&mut self, skip: &Path, progress: &Progress) -> &mut Outside {
        let starting = &mut self.starting;
        self.outside.get_or_insert_with(|| {
            let w = starting.take().and_then(|t| t.join().ok()).unwrap_or_else(|| Outside::start(None, skip));
            if let Some(why) = &w.fallback {
                progress.say(&format!(
                    "watching your checkout by stat data instead of inotify ({why}); each attempt walks it"
                ));
            }
            w
        })
    }
}

/// What is watched outside the worktree during one attempt: the checkout
/// (through [`Watch`]), the git machinery to put back, and the repository's
/// internals to compare.
struct Guard {
    machinery: Machinery,
    before: crate::git::fingerprint::Fingerprint,
}

impl<'a> TaskRun<'a> {
    /// The attempts from `next` until one succeeds or the task escalates.
    fn attempts(&mut self, next: u32) -> Result<Ending, RunError> {
        for n in next.max(self.first_attempt)..=self.last_allowed {
            if let Some(ending) = self.budget_gate(n)? {
                return Ok(ending);
            }
            let record = self.attempt(n)?;
            if let Some(ending) = self.conclude(n, record)? {
                return Ok(ending);
            }
        }
        self.out_of_attempts()
    }

    /// With `--remote`, the record as it stands sent to the remote.
    fn publish(&self) -> Result<(), RunError> {
        match &self.lease {
            Some(l) => l.publish(),
            None => Ok(()),
        }
    }

    /// No attempt starts once the task has spent its cost or time budget.
    fn budget_gate(&mut self, n: u32) -> Result<Option<Ending>, RunError> {
        let Some(why) = outcome::budget_spent(&self.plan.config.retry, &self.prior) else { return Ok(None) };
        let tried = n - self.first_attempt;
        self.rec.event(
            (n > 1).then_some(n - 1),
            Event::TaskEscalated { reason: why.clone(), attempts: tried, budget: Some(true) },
        )?;
        let id = &self.plan.id;
        self.progress.say(&format!("task {id} escalated: {why}\n  report: retry-run report {id}"));
        Ok(Some(Ending::Escalated))
    }

    /// One attempt, phases 2 to 7: the worktree, the context, the agent,
    /// the snapshot, the gates and the outcome, each recorded as it ends.
    fn attempt(&mut self, n: u32) -> Result<AttemptRecord, RunError> {
        let started = Instant::now();
        self.progress.attempt(n, self.last_allowed);
        self.rec.event(Some(n), Event::AttemptStarted { max_attempts: self.last_allowed })?;
        self.publish()?;
        let adir = self.store.attempt_dir(&self.plan.id, n);
        let keep = self.worktree(n)?;
        let (repo, plan, wt) = (self.repo, &self.plan, self.wt.clone());
        let confinement = confine_attempt(
            repo,
            &plan.config,
            &wt,
            &adir,
            &plan.id,
            plan.confined,
            plan.abi,
            &plan.extra_writable,
            &plan.exe,
        )?;
        self.baseline_once(n, keep, &confinement)?;
        let guard = self.guard_outside();

        // 3. The retry context and the prompt.
        self.progress.phase("assembling the context");
        let prompt_path = assemble_prompt(
            &mut self.rec,
            &self.task_text,
            n,
            self.last_allowed,
            &self.prior,
            &self.plan.config,
            &adir,
            &self.plan.id,
            self.base.oid,
            &mut self.manifests,
        )?;

        // 4. The agent, then what it changed outside the worktree.
        let mut record = AttemptRecord::new(n);
        record.allow = self.plan.config.scope.allow.clone();
        let (agent_run, env) = self.run_agent(n, &prompt_path, &adir, &confinement)?;
        let agent_ok = !agent_run.timed_out && !agent_run.crashed();
        record.agent = Some(agent_run);
        let (outside, git_internal) = self.after_agent(&guard, &mut record)?;

        // 5. The snapshot.
        self.progress.phase("snapshot");
        let repo = self.repo;
        let (commit, _, cmp) = snapshot(&mut self.rec, repo, &wt, &self.base, &self.plan.id, n, &mut record)?;

        // 6. The gates: scope, the checks, the built-in checks, the verifier.
        scope_gate(
            &mut self.rec,
            &self.progress,
            &self.plan.rules,
            &cmp,
            &outside,
            git_internal,
            agent_ok,
            n,
            &mut record,
        )?;
        if agent_ok && !record.files.is_empty() && record.scope.is_empty() {
            // The base's results, kept for the next attempt.
            let base_results = self.baselines.clone().unwrap_or_default();
            configured_checks(
                &mut self.rec,
                &self.progress,
                repo,
                &self.plan.config,
                &wt,
                &env,
                &adir,
                commit,
                &base_results,
                &confinement,
                n,
                &mut record,
            )?;
            if !self.plan.config.checks.is_empty() {
                self.after_checks(&guard, n, &mut record)?;
            }
            builtin_checks(
                &mut self.rec,
                &self.progress,
                repo,
                &self.plan.config,
                &self.plan.test_paths,
                self.base.oid,
                commit,
                &cmp,
                &base_results,
                n,
                &mut record,
            )?;
            if record.checks.iter().all(|c| c.passed)
                && let Some(vcfg) = &self.plan.config.verifier
            {
                record.verifier =
                    Some(review(&mut self.rec, &self.progress, vcfg, &cmp, &wt, &env, &adir, n, &record)?);
            }
        }

        // 7. The outcome.
        let (outcome, reason) = outcome::classify(&record);
        record.outcome = outcome;
        record.reason = reason;
        record.duration_ms = started.elapsed().as_millis() as u64;
        write_json(&adir.join("attempt.json"), &record)?;
        if let Some(t) = &confinement.tmpdir {
            let _ = std::fs::remove_dir_all(t);
        }
        self.record_outcome(n, &record)?;
        self.publish()?;
        Ok(record)
    }

    /// Phase 2, the worktree at the base (or, with reset = "keep", as the
    /// last attempt left it). Returns whether it was kept.
    fn worktree(&mut self, n: u32) -> Result<bool, RunError> {
        self.progress.phase("preparing the worktree");
        let (repo, config, id) = (self.repo, &self.plan.config, &self.plan.id);
        let keep =
            config.agent.reset == ResetMode::Keep && n > self.first_attempt && repo.worktree_is_valid(&self.wt, id);
        match prepare_worktree(repo, config, &self.wt, id, self.base.oid, keep) {
            Ok(report) => self.rec.event(Some(n), report)?,
            Err(e) => {
                self.rec.event(Some(n), Event::AttemptAborted { reason: e.to_string(), phase: "worktree".into() })?;
                self.progress.done("aborted: the worktree could not be prepared");
                return Err(e);
            }
        }
        Ok(keep)
    }

    /// The checks on the base, once per task and base (cached in the
    /// record), before the first attempt's agent.
    fn baseline_once(&mut self, n: u32, keep: bool, confinement: &sandbox::Confinement) -> Result<(), RunError> {
        let config = &self.plan.config;
        if !config.retry.baseline.runs() || config.checks.is_empty() || self.baselines.is_some() {
            return Ok(());
        }
        self.progress.phase("checks on the base");
        let found = baseline(
            self.repo,
            self.store,
            &self.plan.id,
            config,
            &self.wt,
            self.base.oid,
            &mut self.rec,
            n,
            confinement,
        )?;
        self.baselines = Some(found);
        if !keep {
            // Checks may write (caches, build output): back to the base before the agent.
            self.repo.reset_worktree(&self.wt, &self.plan.id, self.base.oid)?;
            prepare::prepare(self.repo, &self.plan.config, &self.wt)?;
        }
        Ok(())
    }

    /// What must not change outside the worktree, marked before the agent:
    /// the checkout, the git machinery and the repository's internals.
    fn guard_outside(&mut self) -> Guard {
        let meta = self.repo.worktree_meta(&self.plan.id);
        let before = fingerprint(self.repo.common_dir(), Some((&self.wt, &meta)));
        let started = Instant::now();
        self.watch.spent = std::time::Duration::ZERO;
        self.watch.ready(&self.wt_root, &self.progress).mark(self.repo);
        let machinery = Machinery::take(self.repo.common_dir());
        self.watch.spent += started.elapsed();
        Guard { machinery, before }
    }

    /// Phase 4, the agent, confined in the worktree with the prompt; what
    /// it left that is not part of the change moved out. Returns how it
    /// ended and the environment the checks share with it.
    fn run_agent(
        &mut self,
        n: u32,
        prompt_path: &Path,
        adir: &Path,
        confinement: &sandbox::Confinement,
    ) -> Result<(AgentRun, Vec<(String, String)>), RunError> {
        let (config, id, wt) = (&self.plan.config, &self.plan.id, &self.wt);
        let delivered = std::fs::read(prompt_path).map_err(|e| {
            RunError::environment(format!("{}: cannot read the prompt back: {e}", prompt_path.display()))
        })?;
        let via: &[&str] = if config.agent.stdin { &["file", "stdin"] } else { &["file"] };
        self.rec.event(
            Some(n),
            Event::AttemptContextDelivered {
                sha256: sha256_hex(&delivered),
                bytes: delivered.len() as u64,
                via: via.iter().map(|v| v.to_string()).collect(),
            },
        )?;
        let vars: Vec<(&str, String)> = vec![
            ("prompt_file", prompt_path.display().to_string()),
            ("worktree", wt.display().to_string()),
            ("task_id", id.clone()),
            ("attempt", n.to_string()),
            ("max_attempts", self.last_allowed.to_string()),
            ("tmpdir", confinement.tmpdir.as_deref().unwrap_or(adir).display().to_string()),
            ("prompt", String::from_utf8_lossy(&delivered).into_owned()),
        ];
        let mut env: Vec<(String, String)> = vec![
            ("RETRY_RUN_TASK".into(), id.clone()),
            ("RETRY_RUN_ATTEMPT".into(), n.to_string()),
            ("RETRY_RUN_MAX_ATTEMPTS".into(), self.last_allowed.to_string()),
            ("RETRY_RUN_WORKTREE".into(), wt.display().to_string()),
            ("RETRY_RUN_PROMPT_FILE".into(), prompt_path.display().to_string()),
        ];
        env.extend(confinement.env());
        if let Some(p) = &self.plan.preset {
            env.extend(p.env.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        self.progress.phase("agent running");
        let spec = Spec {
            argv: confinement.argv(agent_argv(&self.plan.agent_cmd, &vars)),
            cwd: wt.clone(),
            env: env.clone(),
            stdin: config.agent.stdin.then(|| delivered.clone()),
            timeout: config.agent.timeout.value,
            grace: config.agent.kill_grace.value,
            keep: 64 * 1024,
        };
        let mut start_error = None;
        let rec = &mut self.rec;
        let ran = process::run_with(&spec, &mut |pgid| {
            let started = Event::AgentStarted { pgid: pgid as i64, sandbox: Some(confinement.record()) };
            if let Err(e) = rec.event(Some(n), started) {
                start_error = Some(e);
            }
        });
        if let Some(e) = start_error {
            return Err(e);
        }
        let output_kind = self.plan.preset.as_ref().map_or("text", |p| p.output.as_str());
        let mut agent_run = agent_run_of(ran, adir, output_kind, config.agent.timeout.value.as_millis() as u64, wt)?;
        if !self.plan.leftovers.is_empty() {
            agent_run.leftovers = move_out_leftovers(&self.plan.leftovers, self.repo, self.base.oid, wt, adir);
        }
        if agent_run.timed_out || agent_run.crashed() {
            agent_run.last_activity = newest_file(wt);
            if self.plan.confined == Effective::Landlock {
                agent_run.refused = sandbox::refused_paths(&agent_run.output_tail, wt);
            }
        }
        Ok((agent_run, env))
    }

    /// After the agent: the git machinery put back, the user's checkout only
    /// looked at (never repaired behind their back), `AgentFinished`
    /// recorded. Returns the checkout's changed paths and the repository
    /// internals that changed.
    fn after_agent(
        &mut self,
        guard: &Guard,
        record: &mut AttemptRecord,
    ) -> Result<(Vec<String>, Vec<String>), RunError> {
        let meta = self.repo.worktree_meta(&self.plan.id);
        let after = fingerprint(self.repo.common_dir(), Some((&self.wt, &meta)));
        let started = Instant::now();
        let (restored, not_restored) = guard.machinery.restore(self.repo.common_dir());
        for p in &not_restored {
            self.progress.say(&format!("could not restore the repository's {p}"));
        }
        record.restored = restored;
        let outside = self.watch.ready(&self.wt_root, &self.progress).changes(self.repo);
        self.watch.spent += started.elapsed();
        if let Some(a) = &record.agent {
            self.rec.event(
                Some(record.number),
                Event::AgentFinished {
                    exit_code: a.exit_code,
                    signal: a.signal,
                    timed_out: a.timed_out,
                    duration_ms: a.duration_ms,
                    output_bytes: a.output_bytes,
                    last_activity: a.last_activity.clone(),
                    usage: a.usage.clone(),
                    leftovers: a.leftovers.clone(),
                },
            )?;
            self.progress.gate(&if a.timed_out {
                "agent TIMEOUT".to_string()
            } else {
                format!("agent {}", crate::text::exit_text(a.exit_code, a.signal))
            });
        }
        Ok((outside, after.changed_since(&guard.before)))
    }

    /// Checks run code the agent wrote: what they changed outside the
    /// worktree is the attempt's too.
    fn after_checks(&mut self, guard: &Guard, n: u32, record: &mut AttemptRecord) -> Result<(), RunError> {
        let started = Instant::now();
        let (restored, _) = guard.machinery.restore(self.repo.common_dir());
        record.restored.extend(restored);
        let outside = self.watch.ready(&self.wt_root, &self.progress).changes(self.repo);
        self.watch.spent += started.elapsed();
        if !outside.is_empty() {
            let found = outside_findings(&outside);
            self.rec.event(
                Some(n),
                Event::ScopeChecked {
                    checked: 0,
                    violations: found.clone(),
                    restored: record.restored.clone(),
                    after: Some("checks".into()),
                },
            )?;
            self.progress.gate("scope VIOLATION (a check wrote outside the worktree)");
            record.scope.extend(found);
        }
        Ok(())
    }

    /// The attempt's end, told and recorded (`AttemptCompleted`).
    fn record_outcome(&mut self, n: u32, record: &AttemptRecord) -> Result<(), RunError> {
        let outside_now: Vec<&str> =
            record.scope.iter().filter(|v| v.reason == ScopeReason::OutsideWorktree).map(|v| v.path.as_str()).collect();
        if !outside_now.is_empty() {
            self.progress.say(&format!(
                "attempt {n} changed your checkout outside its worktree: {}; retry-run does not undo this (see `git status` there)",
                outside_now.join(", ")
            ));
        }
        if !record.restored.is_empty() {
            self.progress.say(&format!(
                "attempt {n} changed the repository's {}; put back as it was before the attempt",
                record.restored.join(", ")
            ));
        }
        let required = context::required_change(record);
        let watch = self.watch.ready(&self.wt_root, &self.progress);
        let (setup, fallback) = (watch.setup, watch.fallback.is_some());
        self.rec.event(
            Some(n),
            Event::AttemptCompleted {
                outcome: record.outcome.as_str().into(),
                reason: record.reason.clone(),
                interrupted: None,
                duration_ms: record.duration_ms,
                commit: record.commit.clone(),
                required_change: required.text.clone(),
                feedback: required.source.clone(),
                watch_ms: Some(self.watch.spent.as_secs_f64() * 1000.0),
                watch_setup_ms: Some(setup.as_secs_f64() * 1000.0),
                watch: Some(if fallback { "stat" } else { "inotify" }.into()),
            },
        )?;
        self.progress.done(record.outcome.as_str());
        Ok(())
    }

    /// What the attempt's outcome means for the task: success (the branch
    /// set), escalation, or another attempt (`None`).
    fn conclude(&mut self, n: u32, record: AttemptRecord) -> Result<Option<Ending>, RunError> {
        let refname = format!("refs/retry-run/{}/{n}", self.plan.id);
        let ending = match outcome::next_step(&record, &self.plan.config.retry.on, &refname) {
            outcome::Next::Succeed => Some(self.succeed(n, &record)?),
            outcome::Next::Escalate(reason) => Some(self.escalate(n, reason)?),
            outcome::Next::Retry => None,
        };
        self.prior.push(record);
        Ok(ending)
    }

    /// The task succeeded: its branch set to the attempt's commit.
    fn succeed(&mut self, n: u32, record: &AttemptRecord) -> Result<Ending, RunError> {
        let id = &self.plan.id;
        let commit = record
            .commit
            .as_deref()
            .and_then(|c| c.parse::<Oid>().ok())
            .ok_or_else(|| RunError::environment(format!("attempt {n} succeeded without a snapshot commit")))?;
        let branch = format!("retry-run/{id}");
        self.repo.set_branch(&branch, commit)?;
        let tolerated = outcome::tolerated(record);
        let warnings: Vec<String> =
            record.checks.iter().flat_map(|c| c.warnings.iter().map(|w| w.label.clone())).collect();
        self.rec.event(
            Some(n),
            Event::TaskSucceeded {
                commit: commit.to_string(),
                branch: branch.clone(),
                worktree: self.wt.display().to_string(),
                tolerated: tolerated.clone(),
                warnings: warnings.clone(),
            },
        )?;
        if self.rec.label.is_some() {
            self.progress.say(&format!("succeeded at attempt {n} (branch {branch})"));
        } else if !self.json {
            println!("task {id} succeeded at attempt {n}");
            println!("  branch:   {branch} ({commit})");
            println!("  worktree: {}", self.wt.display());
            if !tolerated.is_empty() {
                println!(
                    "  still failing, as on the base (tolerated by retry.baseline = \"tolerate\"): {}",
                    tolerated.join(", ")
                );
            }
            for w in &warnings {
                println!("  test-integrity warning: {w}");
            }
        }
        Ok(Ending::Succeeded)
    }

    fn escalate(&mut self, n: u32, reason: String) -> Result<Ending, RunError> {
        let id = &self.plan.id;
        self.rec.event(
            Some(n),
            Event::TaskEscalated { reason: reason.clone(), attempts: n - self.first_attempt + 1, budget: None },
        )?;
        self.progress.say(&format!(
            "task {id} escalated: {reason}\n  report:   retry-run report {id}\n  attempts: refs/retry-run/{id}/*  (retry-run inspect {id}/{n})"
        ));
        Ok(Ending::Escalated)
    }

    /// Every allowed attempt failed.
    fn out_of_attempts(&mut self) -> Result<Ending, RunError> {
        let tried = self.last_allowed + 1 - self.first_attempt;
        let reason = format!("{tried} attempt{} failed", crate::text::plural(tried as usize));
        self.rec.event(
            Some(self.last_allowed),
            Event::TaskEscalated { reason: reason.clone(), attempts: tried, budget: None },
        )?;
        let id = &self.plan.id;
        self.progress.say(&format!("task {id} escalated: {reason}\n  report: retry-run report {id}"));
        Ok(Ending::Escalated)
    }
}

/// An attempt a killed run left unfinished: its agent stopped if it still
/// runs in the worktree (checked by its working directory, so a reused pid
/// is never signalled), and the attempt recorded as CRASH (interrupted).
#[allow(clippy::too_many_arguments)]
fn record_interrupted(
    rec: &mut Recorder,
    progress: &Progress,
    repo: &Repo,
    store: &Store,
    config: &Config,
    id: &str,
    events: &[crate::record::chain::LogLine],
    n: u32,
) -> Result<AttemptRecord, RunError> {
    // Its agent may still be running in the worktree: stop it first.
    if let Some(pgid) = events.iter().rev().filter(|e| e.attempt == Some(n)).find_map(|e| match e.typed() {
        Some(Event::AgentStarted { pgid, .. }) => Some(pgid),
        _ => None,
    }) {
        let wt = repo.worktrees_root(&config.worktree.root).join(id);
        if process::stop_orphan(pgid as i32, &wt, config.agent.kill_grace.value) {
            progress.say(&format!("stopped the agent of the interrupted attempt {n} (process group {pgid})"));
        }
    }
    let r = history::interrupted(events, n);
    write_json(&store.attempt_dir(id, n).join("attempt.json"), &r)?;
    rec.event(
        Some(n),
        Event::AttemptCompleted {
            outcome: r.outcome.as_str().into(),
            reason: r.reason.clone(),
            interrupted: Some(true),
            duration_ms: r.duration_ms,
            commit: None,
            required_change: context::required_change(&r).text,
            feedback: "interrupted".into(),
            watch_ms: None,
            watch_setup_ms: None,
            watch: None,
        },
    )?;
    progress.say(&format!("attempt {n} of task {id} was interrupted; it is recorded as CRASH (interrupted)"));
    Ok(r)
}

/// Phase 1, the agent: its command (after `--`, else `[agent] command`,
/// else the preset's), its preset, and what it may leave in the worktree.
/// Fills `config.agent.command` (and `stdin` for a preset that wants it).
fn resolve_agent(
    opts: &Options,
    config: &mut Config,
) -> Result<(CommandSpec, Option<crate::agents::Preset>, leftovers::Leftovers), RunError> {
    let preset = match &config.agent.preset {
        Some(p) => Some(crate::agents::preset(&p.0).map_err(RunError::usage)?),
        None => None,
    };
    // The agent's command: after `--`, else `[agent] command`, else the preset's.
    let from_preset = opts.agent.is_empty() && config.agent.command.is_none() && preset.is_some();
    let agent_cmd = if !opts.agent.is_empty() {
        CommandSpec::Argv(opts.agent.clone())
    } else if let Some(c) = &config.agent.command {
        c.clone()
    } else if let Some(p) = &preset {
        CommandSpec::Argv(crate::agents::command_line(p, &config.agent.args))
    } else {
        return Err(RunError::usage(format!(
            "no agent command: set [agent] preset ({}) or [agent] command in retry-run.toml, or give it after --, e.g. `retry-run run --task-file t.md -- my-agent {{prompt_file}}`",
            crate::agents::names().join(", ")
        )));
    };
    if from_preset && preset.as_ref().is_some_and(|p| p.stdin) {
        config.agent.stdin = true;
    }
    config.agent.command = Some(agent_cmd.clone());
    let mut globs = config.agent.leftovers.clone();
    if let Some(p) = &preset {
        globs.extend(p.leftovers.iter().cloned());
    }
    let leftovers = leftovers::Leftovers::new(&globs).map_err(RunError::usage)?;
    Ok((agent_cmd, preset, leftovers))
}

/// Phase 2, the worktree: created on first use, else reset to the base
/// (or, with `reset = "keep"`, left as the last attempt left it); then
/// prepared. Returns the WorktreeReset event to record.
fn prepare_worktree(
    repo: &Repo,
    config: &Config,
    wt: &Path,
    id: &str,
    base: Oid,
    keep: bool,
) -> Result<Event, RunError> {
    let path = wt.display().to_string();
    let report = if keep {
        Event::WorktreeReset {
            mode: "keep".into(),
            created: None,
            restored: None,
            removed: None,
            stale_locks_removed: None,
            path,
        }
    } else if !wt.exists() {
        repo.create_worktree(wt, id, base)?;
        Event::WorktreeReset {
            mode: "always".into(),
            created: Some(true),
            restored: None,
            removed: None,
            stale_locks_removed: None,
            path,
        }
    } else {
        let r = repo.reset_worktree(wt, id, base)?;
        Event::WorktreeReset {
            mode: "always".into(),
            created: Some(r.recreated),
            restored: Some(r.restored as u64),
            removed: Some(r.removed as u64),
            stale_locks_removed: Some(r.stale_locks.iter().map(|p| p.display().to_string()).collect()),
            path,
        }
    };
    prepare::prepare(repo, config, wt)?;
    Ok(report)
}

/// The attempt's confinement: its private TMPDIR (made afresh unless the
/// sandbox is off) and what its agent and checks may write.
#[allow(clippy::too_many_arguments)]
fn confine_attempt(
    repo: &Repo,
    config: &Config,
    wt: &Path,
    adir: &Path,
    id: &str,
    confined: Effective,
    abi: u8,
    extra_writable: &[PathBuf],
    exe: &Path,
) -> Result<sandbox::Confinement, RunError> {
    let tmpdir = (confined != Effective::Off).then(|| adir.join("tmp"));
    if let Some(t) = &tmpdir {
        let _ = std::fs::remove_dir_all(t);
        std::fs::create_dir_all(t)
            .map_err(|e| RunError::environment(format!("{}: cannot create the attempt's TMPDIR: {e}", t.display())))?;
    }
    let git_paths = sandbox::GitPaths { objects: repo.common_dir().join("objects"), admin: repo.worktree_meta(id) };
    Ok(sandbox::Confinement {
        effective: confined,
        abi,
        policy: sandbox::policy(wt, tmpdir.as_deref().unwrap_or(adir), config.sandbox.git, &git_paths, extra_writable),
        tmpdir,
        exe: exe.to_path_buf(),
    })
}

/// Phase 3, the retry context and the prompt: assembled from the record of the
/// earlier attempts, written with the attempt's manifest, and recorded.
/// Returns the prompt's path.
#[allow(clippy::too_many_arguments)]
fn assemble_prompt(
    rec: &mut Recorder,
    task_text: &TaskText,
    n: u32,
    last_allowed: u32,
    prior: &[AttemptRecord],
    config: &Config,
    adir: &Path,
    id: &str,
    base: Oid,
    manifests: &mut Vec<String>,
) -> Result<PathBuf, RunError> {
    let ctx = context::assemble(task_text, n, last_allowed, prior, &config.context);
    let rendered = render(&ctx, &config.context);
    let ctx_json = serde_json::to_value(&ctx).unwrap_or(Value::Null);
    let ctx_bytes = serde_json::to_vec_pretty(&ctx_json).unwrap_or_default();
    write_file(&adir.join("context.json"), &ctx_bytes)?;
    let prompt_path = adir.join("prompt.md");
    write_file(&prompt_path, rendered.prompt.as_bytes())?;
    rec.event(
        Some(n),
        Event::RetryContextAssembled {
            prior_attempts: prior.len() as u64,
            sources: ctx.sources(),
            bytes: rendered.prompt.len() as u64,
            required_change: ctx.previous.as_ref().map(|p| p.required_change.text.clone()),
        },
    )?;
    if !rendered.cuts.is_empty() {
        rec.event(
            Some(n),
            Event::AttemptContextTruncated {
                budget_bytes: rendered.budget_bytes as u64,
                before: rendered.before as u64,
                after: rendered.after as u64,
                cuts: serde_json::to_value(&rendered.cuts).unwrap_or(Value::Null),
            },
        )?;
    }
    let context_sha = sha256_hex(canonical_json(&ctx_json).as_bytes());
    let prompt_sha = sha256_hex(rendered.prompt.as_bytes());
    let manifest = Manifest {
        task: id.to_string(),
        attempt: n,
        base: base.to_string(),
        config: manifest_config(config),
        context_sha256: context_sha.clone(),
        prompt_sha256: prompt_sha.clone(),
        prior_manifests: manifests.clone(),
    };
    let (manifest_json, manifest_sha) = manifest.canonical();
    write_file(&adir.join("manifest.json"), manifest_json.as_bytes())?;
    manifests.push(manifest_sha.clone());
    rec.event(
        Some(n),
        Event::AttemptContextAssembled {
            manifest_sha256: manifest_sha.clone(),
            prompt_sha256: prompt_sha.clone(),
            context_sha256: context_sha.clone(),
        },
    )?;
    Ok(prompt_path)
}

/// Phase 4, how the agent ended, from its process: its output kept in
/// `agent.out`, its report (usage, final message) read, its last lines.
fn agent_run_of(
    ran: Result<process::Finished, String>,
    adir: &Path,
    output_kind: &str,
    timeout_ms: u64,
    wt: &Path,
) -> Result<AgentRun, RunError> {
    Ok(match ran {
        Ok(f) => {
            write_file(&adir.join("agent.out"), &f.output.bytes())?;
            let text = String::from_utf8_lossy(&f.output.bytes()).into_owned();
            let report = crate::agents::output::read(output_kind, &text);
            let tail: Vec<String> =
                text.lines().rev().take(20).map(|l| crate::text::clip(l, 300, "...").into_owned()).collect();
            AgentRun {
                exit_code: f.exit_code,
                signal: f.signal,
                timed_out: f.timed_out,
                timeout_ms,
                duration_ms: f.duration.as_millis() as u64,
                output_bytes: f.output.total,
                last_activity: None,
                output_tail: tail.into_iter().rev().map(|l| checks::relativize(&l, wt)).collect(),
                refused: Vec::new(),
                usage: report.usage,
                final_message: report.final_message.map(|m| {
                    let m = checks::relativize(&m, wt);
                    crate::text::clip(&m, 4000, " [...]").into_owned()
                }),
                leftovers: Vec::new(),
            }
        }
        Err(e) => {
            write_file(&adir.join("agent.out"), e.as_bytes())?;
            AgentRun { exit_code: Some(127), timeout_ms, output_tail: vec![e], ..AgentRun::default() }
        }
    })
}

/// The agent's leftovers (what it left in the worktree that is not part of
/// the change), moved into the attempt's record; an edit of `.gitignore`
/// that only adds the agent's own patterns put back. Returns what it moved
/// or put back.
fn move_out_leftovers(leftovers: &leftovers::Leftovers, repo: &Repo, base: Oid, wt: &Path, adir: &Path) -> Vec<String> {
    let mut moved = leftovers.move_out(wt, &adir.join("leftovers"), &|p| repo.blob_at(base, p).is_some());
    let base_gitignore = repo.blob_at(base, ".gitignore");
    if let Ok(now) = std::fs::read_to_string(wt.join(".gitignore")) {
        let before = base_gitignore.as_deref().map(String::from_utf8_lossy).unwrap_or_default();
        if now != before && leftovers.only_adds_own(&before, &now) {
            let put_back = match &base_gitignore {
                Some(b) => std::fs::write(wt.join(".gitignore"), b),
                None => std::fs::remove_file(wt.join(".gitignore")),
            };
            if put_back.is_ok() {
                moved.push(".gitignore (only the agent's own patterns added)".into());
            }
        }
    }
    moved
}

/// Phase 5, the snapshot: the worktree as a commit on the base under
/// `refs/retry-run/<task>/<n>`, compared with the base; the attempt's files
/// and bounded diff recorded. Returns the commit, its ref and the comparison.
fn snapshot<'r>(
    rec: &mut Recorder,
    repo: &'r Repo,
    wt: &Path,
    base: &crate::git::Revision,
    id: &str,
    n: u32,
    record: &mut AttemptRecord,
) -> Result<(Oid, String, crate::git::Comparison<'r>), RunError> {
    let refname = format!("refs/retry-run/{id}/{n}");
    let commit = repo.snapshot(wt, base.oid, &refname, &format!("retry-run {id} attempt {n}"))?;
    let head = repo.resolve(&commit.to_string())?;
    let cmp = repo.compare_commits(base, &head, DiffDepth::Patch { max_lines: RECORD_DIFF_LINES }, None)?;
    record.commit = Some(commit.to_string());
    record.files = cmp
        .changes
        .changes
        .iter()
        .map(|c| FileChange {
            path: display(c.path()).into_owned(),
            old_path: c.old_path().map(|p| display(p).into_owned()),
            status: c.status.letter().to_string(),
            additions: c.additions,
            deletions: c.deletions,
            binary: c.binary,
        })
        .collect();
    let patch_lines: Vec<String> = cmp.patch.lines().map(str::to_string).collect();
    record.diff_omitted = cmp.patch_lines.saturating_sub(patch_lines.len());
    record.diff = patch_lines;
    let totals = cmp.changes.totals();
    rec.event(
        Some(n),
        Event::SnapshotTaken {
            commit: commit.to_string(),
            refname: refname.clone(),
            files: totals.files as u64,
            additions: totals.additions as u64,
            deletions: totals.deletions as u64,
            paths: record.files.iter().map(|f| f.path.clone()).collect(),
        },
    )?;
    Ok((commit, refname, cmp))
}

/// Phase 6, the scope gate: writes outside the worktree (the user's
/// checkout, the git machinery) are violations whatever else the attempt
/// did; the change itself is checked against the scope when the agent
/// ended well and changed something. The findings go into `record.scope`.
#[allow(clippy::too_many_arguments)]
fn scope_gate(
    rec: &mut Recorder,
    progress: &Progress,
    rules: &Rules,
    cmp: &crate::git::Comparison<'_>,
    outside: &[String],
    git_internal: Vec<String>,
    agent_ok: bool,
    n: u32,
    record: &mut AttemptRecord,
) -> Result<(), RunError> {
    // Writes outside the worktree (the user's checkout, the git
    // machinery) are violations whatever else the attempt did.
    let mut findings: Vec<ScopeFinding> = outside_findings(outside);
    findings.extend(git_internal.into_iter().map(|part| ScopeFinding {
        path: part,
        old_path: None,
        reason: ScopeReason::GitInternal,
        rule: None,
    }));
    if agent_ok && !record.files.is_empty() {
        progress.phase("scope");
        let report = scope::check(rules, &cmp.changes.changes, &cmp.head);
        findings.extend(report.violations.iter().map(|v| ScopeFinding {
            path: display(&v.path).into_owned(),
            old_path: v.old_path.as_deref().map(|p| display(p).into_owned()),
            reason: v.reason,
            rule: v.rule.clone(),
        }));
        rec.event(
            Some(n),
            Event::ScopeChecked {
                checked: report.checked as u64,
                violations: findings.clone(),
                restored: record.restored.clone(),
                after: None,
            },
        )?;
        progress.gate(if findings.is_empty() { "scope ok" } else { "scope VIOLATION" });
        record.scope = findings;
    } else if !findings.is_empty() {
        rec.event(
            Some(n),
            Event::ScopeChecked {
                checked: 0,
                violations: findings.clone(),
                restored: record.restored.clone(),
                after: None,
            },
        )?;
        progress.gate("scope VIOLATION (outside the worktree)");
        record.scope = findings;
    }
    Ok(())
}

/// The configured checks, each run confined in the worktree (with its
/// flaky re-runs), judged against the base, recorded and added to the
/// attempt's checks.
#[allow(clippy::too_many_arguments)]
fn configured_checks(
    rec: &mut Recorder,
    progress: &Progress,
    repo: &Repo,
    config: &Config,
    wt: &Path,
    env: &[(String, String)],
    adir: &Path,
    commit: Oid,
    baselines: &[checks::Baseline],
    confinement: &sandbox::Confinement,
    n: u32,
    record: &mut AttemptRecord,
) -> Result<(), RunError> {
    for check in &config.checks {
        progress.phase(&format!("check {}", check.name));
        let base_result = baselines.iter().find(|x| x.check == check.name);
        let result = run_check(repo, check, wt, env, adir, commit, base_result, &config.retry, confinement)?;
        rec.event(
            Some(n),
            Event::CheckFinished {
                check: check.name.clone(),
                kind: check.kind,
                passed: result.passed,
                exit_code: result.exit_code,
                timed_out: result.timed_out,
                flaky: result.flaky,
                runs: result.runs,
                duration_ms: result.duration_ms,
                new_failures: result.failures.iter().map(|f| f.key.clone()).collect(),
                pre_existing: result.pre_existing.len() as u64,
                pre_existing_failures: Some(result.pre_existing.iter().map(|f| f.key.clone()).collect()),
                tests_ran: Some(result.tests_ran),
                sandbox: Some(confinement.record()),
                builtin: None,
                warnings: None,
            },
        )?;
        progress.gate(&format!(
            "{} {}",
            check.name,
            if result.flaky {
                "ok (flaky)"
            } else if result.passed {
                "ok"
            } else {
                "FAIL"
            }
        ));
        record.checks.push(result);
    }
    Ok(())
}

/// The built-in checks, after the configured ones: the task's targets and
/// test integrity, recorded and added to the attempt's checks.
#[allow(clippy::too_many_arguments)]
fn builtin_checks(
    rec: &mut Recorder,
    progress: &Progress,
    repo: &Repo,
    config: &Config,
    test_paths: &builtin::TestPaths,
    base: Oid,
    commit: Oid,
    cmp: &crate::git::Comparison<'_>,
    base_results: &[checks::Baseline],
    n: u32,
    record: &mut AttemptRecord,
) -> Result<(), RunError> {
    let integrity = builtin::test_integrity(
        repo,
        base,
        commit,
        &cmp.changes.changes,
        test_paths,
        config.retry.test_weakening,
        &record.checks,
        base_results,
    );
    let targets = builtin::targets(&config.targets, &record.checks);
    for result in [targets, integrity].into_iter().flatten() {
        rec.event(
            Some(n),
            Event::CheckFinished {
                check: result.name.clone(),
                kind: result.kind,
                passed: result.passed,
                exit_code: result.exit_code,
                timed_out: false,
                flaky: false,
                runs: 1,
                duration_ms: result.duration_ms,
                new_failures: result.failures.iter().map(|f| f.key.clone()).collect(),
                pre_existing: 0,
                pre_existing_failures: None,
                tests_ran: None,
                sandbox: None,
                builtin: Some(true),
                warnings: Some(result.warnings.iter().map(|f| f.key.clone()).collect()),
            },
        )?;
        progress.gate(&format!(
            "{} {}",
            result.name,
            if !result.passed {
                "FAIL"
            } else if !result.warnings.is_empty() {
                "ok (warnings)"
            } else {
                "ok"
            }
        ));
        record.checks.push(result);
    }
    Ok(())
}

/// The verifier: the diff summary (and any test-integrity warnings) on its
/// stdin, its verdict recorded.
#[allow(clippy::too_many_arguments)]
fn review(
    rec: &mut Recorder,
    progress: &Progress,
    vcfg: &config::VerifierConfig,
    cmp: &crate::git::Comparison<'_>,
    wt: &Path,
    env: &[(String, String)],
    adir: &Path,
    n: u32,
    record: &AttemptRecord,
) -> Result<VerifierResult, RunError> {
    progress.phase("verifier");
    let summary = DiffSummary::from(cmp);
    let mut md = Vec::new();
    let _ = write_diff(&mut md, DiffFormat::Markdown, &summary, VERIFIER_DIFF_LINES);
    // What the verifier should weigh that no gate failed on.
    let warnings: Vec<&str> = record.checks.iter().flat_map(|c| c.warnings.iter().map(|w| w.label.as_str())).collect();
    if !warnings.is_empty() {
        use std::io::Write as _;
        let _ = writeln!(md, "\n## Test integrity warnings\n");
        for w in warnings {
            let _ = writeln!(md, "- {w}");
        }
    }
    let v = verifier::verify(vcfg, wt, env, &String::from_utf8_lossy(&md), adir);
    rec.event(
        Some(n),
        Event::VerifierFinished {
            answered: v.answered,
            calls: v.calls,
            verdict: v.verdict.clone(),
            confidence: v.confidence,
            required_change: v.required_change.clone(),
            critique: v.critique.clone(),
            problems: v.problems.clone(),
            min_confidence: v.min_confidence,
        },
    )?;
    progress.gate(&format!("verifier {}", v.verdict.as_deref().unwrap_or("no answer")));
    Ok(v)
}

/// Paths of the user's checkout an attempt changed, as scope findings.
fn outside_findings(paths: &[String]) -> Vec<ScopeFinding> {
    paths
        .iter()
        .map(|p| ScopeFinding { path: p.clone(), old_path: None, reason: ScopeReason::OutsideWorktree, rule: None })
        .collect()
}

/// The config that shapes an attempt, for its manifest.
fn manifest_config(c: &Config) -> Value {
    json!({
        "agent": c.agent, "checks": c.checks, "scope": c.scope, "context": c.context,
        "retry": c.retry, "verifier": c.verifier, "max_attempts": c.max_attempts, "targets": c.targets,
        "worktree": {"include": c.worktree.include, "setup": c.worktree.setup},
    })
}

fn write_json<T: serde::Serialize>(path: &Path, v: &T) -> Result<(), RunError> {
    let bytes = serde_json::to_vec_pretty(v)
        .map_err(|e| RunError::environment(format!("cannot encode {}: {e}", path.display())))?;
    write_file(path, &bytes)?;
    Ok(())
}

/// The newest file under the worktree (not `.git`), relative to it.
fn newest_file(root: &Path) -> Option<String> {
    let mut best: Option<(std::time::SystemTime, PathBuf)> = None;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            let Ok(meta) = std::fs::symlink_metadata(&p) else { continue };
            if meta.is_dir() {
                stack.push(p);
            } else if let Ok(m) = meta.modified()
                && best.as_ref().is_none_or(|(t, _)| m > *t)
            {
                best = Some((m, p));
            }
        }
    }
    best.and_then(|(_, p)| p.strip_prefix(root).ok().map(|r| r.display().to_string()))
}

/// Runs a check with flaky re-runs and judges it against the base.
#[allow(clippy::too_many_arguments)]
fn run_check(
    repo: &Repo,
    check: &config::CheckConfig,
    wt: &Path,
    env: &[(String, String)],
    adir: &Path,
    commit: Oid,
    base: Option<&checks::Baseline>,
    retry: &config::RetryConfig,
    confinement: &sandbox::Confinement,
) -> Result<CheckResult, RunError> {
    let (flaky_reruns, mode) = (retry.flaky_reruns, retry.baseline);
    let file = adir.join("checks").join(format!("{}.out", file_name(&check.name)));
    let f = checks::run_once(check, wt, env, &file, confinement).map_err(RunError::environment)?;
    let parsed = checks::parse(check, &f, wt, repo, Some(commit));
    let first = checks::judge(check, &parsed, base, mode, 1, false);
    if first.passed {
        return Ok(first);
    }
    for i in 1..=flaky_reruns {
        let rerun_file = adir.join("checks").join(format!("{}.rerun-{i}.out", file_name(&check.name)));
        let f = checks::run_once(check, wt, env, &rerun_file, confinement).map_err(RunError::environment)?;
        let p = checks::parse(check, &f, wt, repo, Some(commit));
        if checks::judge(check, &p, base, mode, i + 1, false).passed {
            // Failed, then passed on the same tree: flaky, recorded, not the agent's fault.
            return Ok(checks::judge(check, &parsed, base, mode, i + 1, true));
        }
    }
    Ok(CheckResult { runs: flaky_reruns + 1, ..first })
}

fn file_name(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.' { c } else { '_' }).collect()
}

/// The checks on the base, run once per task and base and cached in
/// `tasks/<task>/baseline/<base>/<check>.json`.
#[allow(clippy::too_many_arguments)]
fn baseline(
    repo: &Repo,
    store: &Store,
    id: &str,
    config: &Config,
    wt: &Path,
    base: Oid,
    rec: &mut Recorder,
    n: u32,
    confinement: &sandbox::Confinement,
) -> Result<Vec<checks::Baseline>, RunError> {
    let dir = store.task_dir(id).join("baseline").join(base.to_string());
    let mut out = Vec::new();
    for check in &config.checks {
        let cache = dir.join(format!("{}.json", file_name(&check.name)));
        if let Some(b) = std::fs::read(&cache)
            .ok()
            .and_then(|b| serde_json::from_slice::<checks::Baseline>(&b).ok())
            .filter(|b| b.run == check.run)
        {
            out.push(b);
            continue;
        }
        let f = checks::run_once(
            check,
            wt,
            &confinement.env(),
            &dir.join(format!("{}.out", file_name(&check.name))),
            confinement,
        )
        .map_err(RunError::environment)?;
        let p = checks::parse(check, &f, wt, repo, None);
        let b = checks::Baseline {
            check: check.name.clone(),
            run: check.run.clone(),
            base: base.to_string(),
            passed: p.exited_ok(),
            failures: p.failures,
            ran: p.tests.ran,
        };
        write_json(&cache, &b)?;
        rec.event(
            Some(n),
            Event::BaselineChecked {
                check: b.check.clone(),
                base: b.base.clone(),
                passed: b.passed,
                failures: b.failures.iter().map(|f| f.key.clone()).collect(),
            },
        )?;
        out.push(b);
    }
    Ok(out)
}
