//! Phase 2, the start (or resume) of a task: the record read and verified,
//! an attempt a killed run left recorded as interrupted, the base fixed and
//! `TaskStarted` recorded. Also what the next attempt would receive, read
//! from the record as a start reads it ([`next_context`]).

use super::agent_start;
use super::attempt::Fixed;
use super::plan::Plan;
use super::recorder::Recorder;
use super::task_run::TaskRun;
use super::{Ending, Options, RunError, history, plan, progress::Progress};
use crate::checkout_watch::whole_run::Watch;
use crate::context::{self, TaskText, render::render};
use crate::git::{Repo, Revision};
use crate::hash::sha256_hex;
use crate::model::AttemptRecord;
use crate::outcome::resume::{self, BaseChoice, SoFar};
use crate::process;
use crate::record::confinement::{ModelEndpoint, SandboxPlan, word};
use crate::record::store::write_file;
use crate::record::{Event, Store};
use crate::sandbox::Effective;
use crate::task;

pub(super) enum Started<'a> {
    /// The task runs, from this attempt number.
    Now(Box<TaskRun<'a>>, u32),
    /// The task had ended and `--again` was not given.
    AlreadyEnded(Ending),
}

/// The task started or resumed; the watch of the user's checkout started
/// in the background. `label`: what its JSON events carry when other runs
/// print beside this one.
pub(super) fn start_task<'a>(
    repo: &'a Repo,
    store: &'a Store,
    plan: Plan,
    opts: &Options,
    progress: Progress,
    label: Option<String>,
) -> Result<Started<'a>, RunError> {
    let id = plan.id.clone();
    let config = &plan.config;
    let verified = verified_log(store, &id)?;
    let state = history::state(&verified.events);
    if let Some((ended, at)) = &state.finished
        && !opts.again
    {
        say_notes(&plan, repo, &progress);
        return Ok(Started::AlreadyEnded(already_ended(&plan, ended, *at, &progress)));
    }

    let (base, base_line) = fix_base(repo, &id, opts, config, &state)?;
    // A filter driver that cannot run: stop before anything is recorded.
    repo.check_filter_drivers(base.oid, Some(&store.root.join("gitattributes")))?;
    let wt_root = repo.worktrees_root(&config.worktree.root);
    let wt = wt_root.join(crate::model::refs::worktree_name(&id));
    check_agent_starts(repo, &plan, &wt)?;
    // The task runs: its base is the run's first line (a lane's is its
    // task's, said once by the task).
    if plan.lane.is_none() {
        progress.say(&base_line);
    }
    say_notes(&plan, repo, &progress);

    let mut rec = Recorder { log: store.log(&id)?, json: opts.json, label };
    let mut prior = history::attempts(store, &id, &verified.events);
    if let Some(n) = state.unfinished {
        prior.push(record_interrupted(&mut rec, &progress, repo, store, &plan, &verified.events, n)?);
    }
    let window = resume::window(so_far(&state), opts.again, config.max_attempts.0);
    if !verified.events.is_empty() {
        // A run of this task before: what it left running in the worktree
        // (a killed run's attempt) ends before the worktree is reset.
        let ended = process::end_processes_in(&wt);
        if ended > 0 {
            progress.say(&format!("ended {ended} process(es) an earlier run of task {id} left in its worktree"));
        }
    }
    free_aside(verified);
    record_start(&mut rec, store, &plan, &base, &window)?;

    let task_text = TaskText { id: id.clone(), title: plan.task.title.clone(), text: plan.task.text.clone() };
    let reviews = reviews_of(store, &plan, state.reviews.clone());
    let watch = Watch::start(repo, &wt_root);
    let fixed = Fixed {
        repo,
        store,
        json: opts.json,
        plan,
        progress,
        base,
        first_attempt: window.first,
        aborted: if window.new_round { 0 } else { state.aborted },
        last_allowed: window.last,
        task_text,
        wt_root,
        wt,
        lease: None,
        reviews,
    };
    let run = TaskRun { fixed, rec, baselines: None, aside: None, watch, manifests: state.manifests, prior };
    Ok(Started::Now(Box::new(run), window.next))
}

/// The task's log, read and verified (empty for a task not started); a
/// broken chain stops the run.
pub(super) fn verified_log(store: &Store, id: &str) -> Result<crate::record::chain::Verified, RunError> {
    let verified = store.read(id).or_else(|e| match e {
        crate::record::RecordError::NoTask { .. } => Ok(crate::record::chain::verify(b"")),
        e => Err(e),
    })?;
    match &verified.broken {
        Some(b) => {
            Err(RunError::BrokenLog { task: id.to_string(), path: store.task(id).events(), detail: format!("{b:?}") })
        }
        None => Ok(verified),
    }
}

/// `value` freed on a thread of its own (the log's events read: thousands
/// of JSON values for a long task), not on the way to the first attempt
/// (freed here, where no thread can be started).
fn free_aside<T: Send + 'static>(value: T) {
    let _ = std::thread::Builder::new().name("retry-run-free".into()).spawn(move || drop(value));
}

/// The reviews a task's attempts read (`reviews`, the task's own): a
/// lane's are its task's (the reviewer judged the task's result), never
/// leading its prompt (a lane's attempts are numbered apart from it).
fn reviews_of(store: &Store, plan: &Plan, reviews: Vec<crate::model::Review>) -> super::attempt::Reviewed {
    match &plan.lane {
        None => super::attempt::Reviewed { all: reviews, leads: true },
        Some(l) => {
            let task = store.read(&l.task).map(|v| history::state(&v.events).reviews).unwrap_or_default();
            super::attempt::Reviewed { all: task, leads: false }
        }
    }
}

/// What the run says before it starts: the sandbox's fallback, what is
/// not confined, hidden paths the config names, the model servers let
/// through.
fn say_notes(plan: &Plan, repo: &Repo, progress: &Progress) {
    if let Some(note) = &plan.fallback_note {
        progress.say(note);
    }
    for warning in unconfined(&plan.config) {
        progress.say(&warning);
    }
    for warning in hidden_paths_named(&plan.config, &repo.workdir().unwrap_or(repo.common_dir()).display().to_string())
    {
        progress.say(&warning);
    }
    for e in &plan.model_endpoints {
        progress.say(&format!(
            "the agent's model server {} (from {}) is let through the sandbox's proxy",
            e.host_port, e.var
        ));
    }
}

/// A task that ended before (`ended`, at attempt `at`), without `--again`:
/// said, and how it ended.
fn already_ended(plan: &Plan, ended: &Event, at: Option<u32>, progress: &Progress) -> Ending {
    let id = &plan.id;
    let (ok, how) = match ended {
        Event::TaskSucceeded { branch, .. } => {
            (true, format!("succeeded at attempt {} (branch {branch})", at.unwrap_or(0)))
        }
        Event::TaskEscalated { reason, .. } => (false, format!("escalated ({reason})")),
        _ => (false, "ended".to_string()),
    };
    progress.say(&format!(
        "task {id} already {how}; `retry-run report {id}` shows it, `{}` runs it again",
        resume::resume_command(id, &["--again"], &plan.resume_args)
    ));
    if ok { Ending::Succeeded } else { Ending::Escalated }
}

/// An agent that cannot start stops the task here, before it is recorded.
fn check_agent_starts(repo: &Repo, plan: &Plan, wt: &std::path::Path) -> Result<(), RunError> {
    let hidden: &[std::path::PathBuf] =
        if matches!(plan.confined, Effective::Landlock | Effective::Namespaces) { &plan.hidden } else { &[] };
    agent_start::check(&plan.agent_cmd, plan.preset.as_ref(), repo.workdir(), wt, hidden)
        .map_err(|e| RunError::AgentCannotStart { message: e.to_string() })
}

/// The task's base (the recorded one when it resumes, else `--base`, the
/// config's `base`, or the checkout's HEAD) and the line that names it,
/// the run's first.
pub(super) fn fix_base(
    repo: &Repo,
    id: &str,
    opts: &Options,
    config: &crate::config::Config,
    state: &history::TaskState,
) -> Result<(Revision, String), RunError> {
    let choice =
        resume::choose_base(state.base.as_deref(), opts.refresh_base, opts.base.as_deref(), config.base.as_deref());
    let mut base = match &choice {
        BaseChoice::Recorded(b) => {
            repo.resolve(b).map_err(|_| RunError::BaseGone { task: id.to_string(), base: b.clone() })?
        }
        BaseChoice::Flag(spec) | BaseChoice::Config(spec) => repo.resolve_base(Some(spec))?,
        BaseChoice::Head => repo.head()?,
    };
    let head = repo.head().ok();
    let head_branch = repo.head_branch();
    let branches: Vec<(String, String)> = repo
        .branches_and_tags()
        .into_iter()
        .filter_map(|(name, sha)| Some((name.strip_prefix("refs/heads/")?.to_string(), sha)))
        .filter(|(name, _)| !name.starts_with("retry-run/"))
        .collect();
    // The branch that points at `oid`: HEAD's own first, then one named
    // as given, then any.
    let branch_at = |oid: crate::git::Oid, given: Option<&str>| -> Option<String> {
        let sha = oid.to_string();
        let at: Vec<&String> = branches.iter().filter(|(_, s)| *s == sha).map(|(n, _)| n).collect();
        let on_head = head.as_ref().is_some_and(|h| h.oid == oid);
        head_branch
            .as_ref()
            .filter(|b| on_head && at.contains(b))
            .or_else(|| given.and_then(|g| at.iter().copied().find(|n| n.as_str() == g)))
            .or_else(|| at.first().copied())
            .cloned()
    };
    let given = match &choice {
        BaseChoice::Flag(s) | BaseChoice::Config(s) => Some(s.as_str()),
        _ => None,
    };
    let base_branch = branch_at(base.oid, given);
    let base_short = base.oid.to_string()[..7].to_string();
    let head_named = head.as_ref().map(|h| (branch_at(h.oid, None), h.oid.to_string()[..7].to_string()));
    let line = resume::base_line(
        id,
        &choice,
        resume::Named { branch: base_branch.as_deref(), short: &base_short },
        head_named.as_ref().map(|(b, s)| resume::Named { branch: b.as_deref(), short: s }),
    );
    if choice == BaseChoice::Head {
        // What the record keeps as the name of the base.
        base.spec = base_branch.unwrap_or_else(|| "HEAD".to_string());
    }
    Ok((base, line))
}

/// The task as given written to `tasks/<id>/task.md`, and `TaskStarted`.
fn record_start(
    rec: &mut Recorder,
    store: &Store,
    plan: &Plan,
    base: &Revision,
    window: &resume::Window,
) -> Result<(), RunError> {
    let config = &plan.config;
    let task_file_text = task::file_text(&plan.task);
    write_file(&store.task(&plan.id).task_md(), task_file_text.as_bytes())?;
    rec.event(
        None,
        Event::TaskStarted {
            task: plan.id.clone(),
            title: plan.task.title.clone(),
            base: base.oid.to_string(),
            base_ref: base.spec.clone(),
            max_attempts: config.max_attempts.0,
            first_attempt: window.first,
            resumed: !window.new_round,
            task_sha256: sha256_hex(task_file_text.as_bytes()),
            targets: config.targets.clone(),
            baseline: Some(config.retry.baseline),
            sandbox: Some(SandboxPlan {
                requested: word(&config.sandbox.mode),
                mode: word(&plan.confined),
                landlock_abi: plan.abi,
                note: plan.fallback_note.clone(),
                unconfined: Some(unconfined(config)),
                model_endpoints: Some(
                    plan.model_endpoints
                        .iter()
                        .map(|e| ModelEndpoint { var: e.var.clone(), host_port: e.host_port.clone() })
                        .collect(),
                ),
            }),
            lanes: None,
            lane: plan.lane.as_ref().map(|l| l.lane),
            choose: None,
        },
    )
}

/// What the config asks to run without confinement, as warnings: the
/// named opt-outs (`worktree.setup_unconfined`, `network_mode = "host"`).
/// Pure.
fn unconfined(config: &crate::config::Config) -> Vec<String> {
    let mut out = Vec::new();
    if config.worktree.setup_unconfined && config.worktree.setup.is_some() {
        out.push("worktree.setup runs unconfined (worktree.setup_unconfined = true): code in the worktree runs with all your rights".to_string());
    }
    if config.sandbox.network_mode == crate::config::NetworkMode::Host {
        out.push("the sandbox does not confine the network (sandbox.network_mode = \"host\"): the agent and its checks can reach any host".to_string());
    }
    out
}

/// An attempt a killed run left unfinished: its agent stopped if it still
/// runs in the worktree (checked by its working directory, so a reused pid
/// is never signalled), and the attempt recorded as CRASH (interrupted).
fn record_interrupted(
    rec: &mut Recorder,
    progress: &Progress,
    repo: &Repo,
    store: &Store,
    plan: &Plan,
    events: &[crate::record::chain::LogLine],
    n: u32,
) -> Result<AttemptRecord, RunError> {
    let (config, id) = (&plan.config, &plan.id);
    if let Some(pgid) = events.iter().rev().filter(|e| e.attempt == Some(n)).find_map(|e| match e.typed() {
        Some(Event::AgentStarted { pgid, .. }) => Some(pgid),
        _ => None,
    }) {
        let wt = repo.worktrees_root(&config.worktree.root).join(crate::model::refs::worktree_name(id));
        if process::stop_orphan(pgid as i32, &wt, config.agent.kill_grace.value) {
            progress.say(&format!("stopped the agent of the interrupted attempt {n} (process group {pgid})"));
        }
    }
    let r = history::interrupted(events, n);
    crate::record::store::write_json(&store.attempt(id, n).attempt_json(), &r)?;
    rec.attempt_completed(&r, None)?;
    progress.say(&format!("attempt {n} of task {id} was interrupted; it is recorded as CRASH (interrupted)"));
    Ok(r)
}

/// What the record says of a task so far, for [`resume::window`].
pub(super) fn so_far(state: &history::TaskState) -> SoFar {
    SoFar {
        started: state.started,
        ended: state.finished.is_some(),
        first_attempt: state.first_attempt,
        last_attempt: state.last_attempt,
        aborted: state.aborted,
    }
}

/// What the next attempt of a task would receive: the context and its
/// rendered prompt.
pub(crate) struct NextContext {
    pub(crate) context: context::Context,
    pub(crate) rendered: context::render::Rendered,
}

/// What the next attempt of a task would receive, from the record alone:
/// the context and its rendered prompt (`retry-run context`).
pub(crate) fn next_context(
    repo: &Repo,
    store: &Store,
    id: &str,
    config_path: Option<&std::path::Path>,
) -> Result<NextContext, RunError> {
    let verified = store.read(id)?;
    let task = plan::recorded_task(store, id)?;
    let config = plan::effective_config(repo, config_path, &task.overrides)?;
    let state = history::state(&verified.events);
    let mut prior = history::attempts(store, id, &verified.events);
    if let Some(n) = state.unfinished {
        // The next run records it as interrupted first; show what it will see.
        prior.push(history::interrupted(&verified.events, n));
    }
    let window = resume::window(so_far(&state), false, config.max_attempts.0);
    let text = TaskText { id: id.to_string(), title: task.title.clone(), text: task.text.clone() };
    // An ended task's next run starts a new round, which a rejection leads.
    let reviews = context::Reviews { all: &state.reviews, round_first: window.first };
    let wt = repo.worktrees_root(&config.worktree.root).join(crate::model::refs::worktree_name(id));
    let logs = prior.last().map(|r| super::prompt::logs_of(store, id, &wt, r)).unwrap_or_default();
    let attempts = (window.next, window.last.max(window.next));
    let ctx = context::assemble_reviewed(&text, attempts, (&prior, &logs), reviews, &config.context);
    let rendered = render(&ctx, &config.context);
    Ok(NextContext { context: ctx, rendered })
}

/// Paths a check or the worktree's setup names (a data file under `/tmp`)
/// that the sandbox hides from them, each with what to do.
fn hidden_paths_named(config: &crate::config::Config, root: &str) -> Vec<String> {
    let namespaces =
        matches!(config.sandbox.mode, crate::config::SandboxMode::Auto | crate::config::SandboxMode::Namespaces);
    let setup = config.worktree.setup.iter().map(|s| ("worktree.setup".to_string(), s.clone()));
    let commands: Vec<(String, String)> =
        setup.chain(config.checks.iter().map(|c| (format!("check {}", c.name), c.run.clone()))).collect();
    crate::project::hides::warnings(namespaces, &commands, root, |p: &str| {
        crate::sandbox::launch::visible::is_executable(p)
    })
}
