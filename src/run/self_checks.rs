//! Phase 4, beside the agent: the self-check desk (docs/mcp.md). While
//! the agent runs, a thread answers the calls its MCP server
//! (`retry-run mcp`, inside the sandbox) leaves in the attempt's channel
//! directory: `run_checks` runs the gates on the worktree as it is now
//! (compared in memory, as `diff` compares one; the configured checks confined as the real
//! gates run them, judged against the base's cached results; targets, test
//! integrity and the scope), one call at a time and at most
//! `[agent] max_self_checks` per attempt; `previous_attempts` and `task`
//! are read from the record and the config. When the agent ends, a call
//! under way is stopped, and every call comes back to be recorded as
//! advisory (`SelfChecked`); none decides the outcome.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::RunError;
use super::attempt::{Attempt, Carried, Fixed};
use super::gates::builtin::{IntegrityInput, targets, test_integrity};
use super::gates::checks::run_and_judge;
use super::gates::scope_gate::change_findings;
use crate::config::{Config, SubmodulePolicy};
use crate::context::TaskText;
use crate::context::self_check::{ChecksAnswer, SelfCheckFound, previous_answer, run_checks_answer, task_answer};
use crate::git::{DiffDepth, Repo, Revision};
use crate::judge::integrity::TestPaths;
use crate::mcp::channel::{Answer, Desk, ToolCall};
use crate::mcp::tools::{self, Call};
use crate::model::{AgentRun, AttemptRecord, SelfCheck};
use crate::outcome::check::{Baseline, Judging};
use crate::outcome::{self, Skip};
use crate::sandbox::Confinement;

/// The variable that carries the server's command line to the agent.
pub(super) const MCP_COMMAND_VAR: &str = "RETRY_RUN_MCP_COMMAND";
/// The channel's directory, in the attempt's private TMPDIR.
const CHANNEL: &str = "retry-run-mcp";
/// How often the desk looks for calls.
const LOOK: Duration = Duration::from_millis(10);
/// Calls answered and recorded in an attempt; later ones are refused and
/// not recorded, so that an agent calling in a loop cannot grow the record
/// without bound.
const MAX_CALLS: usize = 200;

/// The desk, open while the agent runs.
pub(super) struct SelfCheckDesk {
    stop: Arc<AtomicBool>,
    /// Files retry-run put in the worktree for the agent (Gemini's
    /// settings), which are not part of its change.
    ours: Arc<std::sync::Mutex<Vec<Vec<u8>>>>,
    thread: Option<JoinHandle<Vec<SelfCheck>>>,
    /// `retry-run mcp --channel DIR`, as the agent starts it.
    pub command: Vec<String>,
    channel: PathBuf,
}

impl SelfCheckDesk {
    /// `paths` (relative to the worktree) are retry-run's own, removed
    /// before the snapshot: the self-checks leave them out of the change.
    pub(super) fn not_the_agents(&self, paths: Vec<Vec<u8>>) {
        if let Ok(mut ours) = self.ours.lock() {
            *ours = paths;
        }
    }

    /// Stops the desk (a call under way is stopped and said so) and
    /// returns every call, in the order they came.
    pub(super) fn finish(mut self) -> Vec<SelfCheck> {
        self.stop.store(true, Ordering::SeqCst);
        let calls = self.thread.take().and_then(|t| t.join().ok()).unwrap_or_default();
        let _ = std::fs::remove_dir_all(&self.channel);
        // The TMPDIR it was made in, when nothing else is there (an
        // unconfined attempt has no TMPDIR of its own to remove).
        if let Some(tmp) = self.channel.parent() {
            let _ = std::fs::remove_dir(tmp);
        }
        calls
    }
}

/// What the desk answers from: everything owned, for its threads.
struct Bench {
    ours: Arc<std::sync::Mutex<Vec<Vec<u8>>>>,
    repo_dir: PathBuf,
    wt: PathBuf,
    base: Revision,
    config: Config,
    rules: crate::judge::scope::Rules,
    test_paths: TestPaths,
    baselines: Vec<Baseline>,
    confinement: Confinement,
    env: Vec<(String, String)>,
    dir: crate::record::layout::AttemptDir,
    n: u32,
    last: u32,
    task: TaskText,
    prior: Vec<AttemptRecord>,
}

/// The desk of attempt `a`, open, when `[agent] mcp` is on; `env` is
/// what its checks get (the agent's environment without the server's
/// command).
pub(super) fn open_self_checks(
    t: &Fixed<'_>,
    carried: Carried<'_>,
    a: &Attempt,
    env: &[(String, String)],
) -> Result<Option<SelfCheckDesk>, RunError> {
    let config = &t.plan.config;
    if !config.agent.mcp {
        return Ok(None);
    }
    let channel = a.dir.tmp().join(CHANNEL);
    if let Some(parent) = channel.parent() {
        std::fs::create_dir_all(parent).map_err(|source| RunError::Tmpdir { path: parent.into(), source })?;
    }
    let desk = Desk::make(&channel).map_err(|source| RunError::Tmpdir { path: channel.clone(), source })?;
    let test_paths = TestPaths::new(&config.retry.test_paths)?;
    let ours = Arc::new(std::sync::Mutex::new(Vec::new()));
    let bench = Bench {
        ours: Arc::clone(&ours),
        repo_dir: t.repo.workdir().unwrap_or(t.repo.common_dir()).to_path_buf(),
        wt: t.wt.clone(),
        base: t.base.clone(),
        config: config.clone(),
        rules: t.plan.rules.clone(),
        test_paths,
        baselines: carried.baselines.map(<[_]>::to_vec).unwrap_or_default(),
        confinement: a.confinement.clone(),
        env: env.to_vec(),
        dir: a.dir.clone(),
        n: a.n,
        last: t.last_allowed,
        task: t.task_text.clone(),
        prior: carried.prior.to_vec(),
    };
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    let thread = std::thread::Builder::new()
        .name("self-checks".into())
        .spawn(move || serve(bench, desk, flag))
        .map_err(|e| RunError::io("cannot start the self-check desk", e))?;
    let command = vec![
        a.confinement.exe.display().to_string(),
        "mcp".to_string(),
        "--channel".to_string(),
        channel.display().to_string(),
    ];
    Ok(Some(SelfCheckDesk { stop, ours, thread: Some(thread), command, channel }))
}

/// Why a self-check call is answered with an error: the words the agent
/// reads, and the record keeps.
#[derive(Debug, thiserror::Error)]
enum CallRefused {
    #[error(transparent)]
    ToolCall(#[from] crate::mcp::channel::TakeError),
    #[error(transparent)]
    Call(#[from] tools::CallError),
    #[error(transparent)]
    NotRecorded(#[from] crate::context::self_check::NotRecorded),
    #[error("a run_checks call is already under way: wait for its answer, then call again")]
    Busy,
    #[error(
        "no more self-checks in this attempt: {max} of {max} used ([agent] max_self_checks); the real gates run when you finish"
    )]
    Spent { max: u32 },
    #[error("no check `{unknown}`; this task's checks: {checks}")]
    NoCheck { unknown: String, checks: String },
    #[error("cannot start the checks: {0}")]
    Thread(std::io::Error),
    #[error("the self-check stopped unexpectedly")]
    Panicked,
    #[error(transparent)]
    Git(#[from] crate::git::GitError),
    #[error("cannot compare the worktree: {0}")]
    Compare(crate::git::GitError),
    #[error("check `{check}` cannot start: {error}")]
    CheckStart { check: String, error: crate::process::StartError },
    #[error("stopped: the agent ended before its checks did")]
    Stopped,
}

/// A `run_checks` call under way: its place among the calls, and its thread.
struct Running {
    id: String,
    index: usize,
    started: Instant,
    thread: JoinHandle<Result<ChecksAnswer, CallRefused>>,
}

/// The desk's loop: calls taken and answered until `stop`.
fn serve(bench: Bench, desk: Desk, stop: Arc<AtomicBool>) -> Vec<SelfCheck> {
    let max = bench.config.agent.max_self_checks;
    let mut s = Serving {
        bench: Arc::new(bench),
        desk,
        stop,
        started: Instant::now(),
        max,
        calls: Vec::new(),
        ran: 0,
        running: None,
    };
    loop {
        if s.running.as_ref().is_some_and(|r| r.thread.is_finished())
            && let Some(r) = s.running.take()
        {
            let result = r.thread.join().unwrap_or(Err(CallRefused::Panicked));
            conclude(&s.desk, &mut s.calls[r.index], &r.id, r.started, result);
        }
        if s.stop.load(Ordering::SeqCst) {
            break;
        }
        for taken in s.desk.take() {
            s.call(taken.id, taken.request);
        }
        std::thread::sleep(LOOK);
    }
    // The agent ended: a call under way is stopped (its check killed).
    if let Some(r) = s.running.take() {
        let _ = r.thread.join();
        let c = &mut s.calls[r.index];
        c.duration_ms = r.started.elapsed().as_millis() as u64;
        c.summary = "stopped: the agent ended before its checks did".into();
        c.refused = Some(c.summary.clone());
    }
    s.calls
}

/// The desk's state while it serves: the calls so far and the one under way.
struct Serving {
    bench: Arc<Bench>,
    desk: Desk,
    stop: Arc<AtomicBool>,
    started: Instant,
    max: u32,
    calls: Vec<SelfCheck>,
    /// `run_checks` calls started so far.
    ran: u32,
    running: Option<Running>,
}

impl Serving {
    /// One call `id` taken: answered now, or (`run_checks`) started on a
    /// thread and answered when it ends; recorded either way.
    fn call(&mut self, id: String, request: Result<ToolCall, crate::mcp::channel::TakeError>) {
        if self.calls.len() >= MAX_CALLS {
            let why = format!("no more calls in this attempt: it made {MAX_CALLS}, which are all recorded");
            let _ = self.desk.answer(&id, &Answer::error(why));
            return;
        }
        let at = Instant::now();
        let (tool, arguments) = match &request {
            Ok(r) => (r.tool.clone(), bounded(&r.arguments)),
            Err(_) => (String::new(), Value::Null),
        };
        let mut record = SelfCheck {
            call: self.calls.len() as u32 + 1,
            tool,
            arguments,
            at_ms: self.started.elapsed().as_millis() as u64,
            duration_ms: 0,
            summary: String::new(),
            passed: None,
            refused: None,
        };
        let bench = &self.bench;
        let call = request.map_err(CallRefused::from).and_then(|r| Ok(tools::parse(&r.tool, &r.arguments)?));
        let answer = match call {
            Err(why) => Err(why),
            Ok(Call::RunChecks { checks }) => match self.start_checks(checks, &id, at) {
                Ok(()) => {
                    self.calls.push(record);
                    return;
                }
                Err(why) => Err(why),
            },
            Ok(Call::PreviousAttempts { attempt, diff, check }) => previous_answer(
                &bench.task,
                (bench.n, bench.last),
                &bench.prior,
                (attempt, diff, check.as_deref()),
                &bench.config.context,
            )
            .map_err(CallRefused::from),
            Ok(Call::Task) => {
                Ok(task_answer(&bench.task, (bench.n, bench.last), &bench.config, bench.config.agent.max_self_checks))
            }
        };
        let answer = match answer {
            Ok(text) => {
                record.summary = first_line(&text);
                Answer { text, is_error: false }
            }
            Err(why) => {
                let why = why.to_string();
                record.summary = why.clone();
                record.refused = Some(why.clone());
                Answer::error(why)
            }
        };
        let _ = self.desk.answer(&id, &answer);
        record.duration_ms = at.elapsed().as_millis() as u64;
        self.calls.push(record);
    }

    /// A `run_checks` call admitted and its checks started on a thread of
    /// their own, or why not.
    fn start_checks(&mut self, checks: Vec<String>, id: &str, at: Instant) -> Result<(), CallRefused> {
        admit(&self.bench.config, &checks, self.ran, self.max, self.running.is_some())?;
        self.ran += 1;
        let (b, flag, ran, max) = (Arc::clone(&self.bench), Arc::clone(&self.stop), self.ran, self.max);
        let spawned = std::thread::Builder::new().name("self-check".into()).spawn(move || {
            // Stopped, as the agent is, when the agent ends.
            crate::process::stop_lane_on(flag);
            run_gates(&b, (ran, max), &checks)
        });
        match spawned {
            Ok(thread) => {
                self.running = Some(Running { id: id.to_string(), index: self.calls.len(), started: at, thread });
                Ok(())
            }
            Err(e) => Err(CallRefused::Thread(e)),
        }
    }
}

/// Whether a `run_checks` call may run now, or why not.
fn admit(config: &Config, checks: &[String], ran: u32, max: u32, busy: bool) -> Result<(), CallRefused> {
    if busy {
        return Err(CallRefused::Busy);
    }
    if ran >= max {
        return Err(CallRefused::Spent { max });
    }
    let names: Vec<&str> = config.checks.iter().map(|c| c.name.as_str()).collect();
    if let Some(unknown) = checks.iter().find(|c| !names.contains(&c.as_str())) {
        let checks = if names.is_empty() { "none configured".to_string() } else { names.join(", ") };
        return Err(CallRefused::NoCheck { unknown: unknown.clone(), checks });
    }
    Ok(())
}

/// A finished `run_checks` answered and its record completed.
fn conclude(desk: &Desk, c: &mut SelfCheck, id: &str, started: Instant, result: Result<ChecksAnswer, CallRefused>) {
    let answer = match result {
        Ok(ChecksAnswer { text, passed }) => {
            c.summary = first_line(&text);
            c.passed = Some(passed);
            Answer { text, is_error: false }
        }
        Err(why) => {
            let why = why.to_string();
            c.summary = why.clone();
            c.refused = Some(why.clone());
            Answer::error(why)
        }
    };
    let _ = desk.answer(id, &answer);
    c.duration_ms = started.elapsed().as_millis() as u64;
}

/// The gates on the worktree as it is now; the answer's text and whether
/// every gate passed. `(ran, max)`: the call's number among `run_checks`
/// calls, and the cap.
fn run_gates(b: &Bench, (ran, max): (u32, u32), only: &[String]) -> Result<ChecksAnswer, CallRefused> {
    let repo = Repo::discover(&b.repo_dir)?;
    // Its git files looked at before git opens them (a FIFO there would
    // hang this answer).
    crate::git::worktree_admin::plain_files(&b.wt, &repo.worktree_meta(&b.task.id))?;
    // The worktree compared as `diff` compares one: nothing written to the
    // repository (what the comparison must hash stays in memory), so the
    // attempt is not seen adding objects, and no link is followed.
    let wt = Repo::discover(&b.wt)?;
    let depth = DiffDepth::Patch { max_lines: super::snapshot::SELF_CHECK_DIFF_LINES };
    let mut cmp = wt.compare_worktree(&b.base, depth, None).map_err(CallRefused::Compare)?;
    let ours = b.ours.lock().map(|o| o.clone()).unwrap_or_default();
    cmp.changes.changes.retain(|c| !ours.iter().any(|p| p.as_slice() == c.path()));
    let mut r = AttemptRecord::new(b.n);
    // As if the agent ended well now.
    r.agent = Some(AgentRun { exit_code: Some(0), ..AgentRun::default() });
    r.allow = b.config.scope.allow.clone();
    super::snapshot::fill(&mut r, &cmp);
    if !r.files.is_empty() {
        let moves = b.config.scope.submodules == SubmodulePolicy::Allow;
        let found = change_findings(&b.rules, moves, &cmp, &[]);
        r.scope = found.violations;
        r.flagged = found.flagged;
    }
    let skipped = match outcome::skip_checks(&r) {
        None => None,
        Some(Skip::NoChange) => Some("the worktree has no change from the base yet".to_string()),
        Some(Skip::ScopeViolation) => Some("the change writes outside its scope (the real gates skip them too)".into()),
        Some(_) => Some("the attempt was halted".into()),
    };
    let left_out = if skipped.is_none() { checks_on(b, (&repo, &cmp), &mut r, ran, only)? } else { Vec::new() };
    let classified = outcome::classify(&r);
    r.outcome = classified.outcome;
    r.reason = classified.reason;
    let found = SelfCheckFound { call: ran, max, record: &r, skipped, left_out };
    Ok(run_checks_answer(&b.task, &found, &b.config.context))
}

/// The checks (`only` those, when named) and the built-in gates on the
/// worktree compared as `cmp`, into `r`; the checks left out.
fn checks_on(
    b: &Bench,
    (repo, cmp): (&Repo, &crate::git::Comparison),
    r: &mut AttemptRecord,
    ran: u32,
    only: &[String],
) -> Result<Vec<String>, CallRefused> {
    let read = |rel: &str| cmp.head.file(rel.as_bytes());
    let mut left_out = Vec::new();
    let renames: Vec<(String, String)> =
        r.files.iter().filter_map(|f| Some((f.path.clone(), f.old_path.clone()?))).collect();
    for check in &b.config.checks {
        if !only.is_empty() && !only.contains(&check.name) {
            left_out.push(check.name.clone());
            continue;
        }
        let how = Judging { mode: check.baseline_mode(&b.config.retry), targets: &b.config.targets, renames: &renames };
        let found = b.baselines.iter().find(|x| x.check == check.name);
        // Only the targets ran on the base so far (docs/honest-success.md,
        // "The base"): its other failures are not known to be the base's.
        let waiting = found.is_some_and(|x| x.targets_only);
        let base = found.filter(|x| !x.targets_only);
        let out_file = b.dir.self_check_out(ran, &check.name);
        let mut result = run_and_judge(repo, check, (&b.wt, &b.env, &b.confinement), &out_file, (base, how, &read))
            .map_err(|error| CallRefused::CheckStart { check: check.name.clone(), error })?;
        if waiting && !result.passed {
            result.notes.push(
                "the base's full run of this check has not been made yet (it waits for an attempt's full stage): \
                 some of these failures may fail on the base too"
                    .into(),
            );
        }
        if crate::process::lane_stopped() || crate::process::interrupted().is_some() {
            return Err(CallRefused::Stopped);
        }
        r.checks.push(result);
    }
    let integrity = test_integrity(
        repo,
        IntegrityInput {
            base: b.base.oid,
            head: &read,
            changes: &cmp.changes.changes,
            paths: &b.test_paths,
            mode: b.config.retry.test_weakening,
            checks: &r.checks,
            baselines: &b.baselines,
        },
    );
    // The targets are judged on every check's report: not on a subset.
    let targets = if left_out.is_empty() { targets(&b.config.targets, &r.checks) } else { None };
    r.checks.extend([targets, integrity].into_iter().flatten());
    Ok(left_out)
}

/// The first line of an answer, for the record.
fn first_line(text: &str) -> String {
    crate::text::clip(text.lines().next().unwrap_or(""), 200, "...").into_owned()
}

/// The arguments as recorded: at most 2000 bytes of their JSON.
fn bounded(v: &Value) -> Value {
    let s = v.to_string();
    if s.len() <= 2000 { v.clone() } else { Value::String(crate::text::clip(&s, 2000, "...").into_owned()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn run_checks_is_admitted_once_at_a_time_and_up_to_the_cap() {
        let config =
            Config::parse("[[check]]\nname = \"test\"\nrun = \"true\"\n", Path::new("retry-run.toml")).expect("config");
        assert!(admit(&config, &[], 0, 5, false).is_ok());
        assert!(admit(&config, &["test".into()], 4, 5, false).is_ok());
        assert!(admit(&config, &[], 0, 5, true).expect_err("busy").to_string().contains("already under way"));
        assert!(admit(&config, &[], 5, 5, false).expect_err("cap").to_string().contains("5 of 5 used"));
        assert!(admit(&config, &[], 0, 0, false).expect_err("off").to_string().contains("0 of 0"));
        assert!(
            admit(&config, &["lint".into()], 0, 5, false).expect_err("unknown").to_string().contains("checks: test")
        );
    }
}
