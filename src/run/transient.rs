//! An agent run its model provider failed (a rate limit, an overload, a
//! server error, a dropped connection: [`crate::agents::transient`]) is
//! not the attempt's failure: it is set aside (its output and its network
//! log kept under another name), recorded as `AgentRetried`, and the agent
//! runs again from the attempt's clean start after a wait, without
//! spending an attempt. Past `[agent] transient_retries` the attempt is
//! aborted, not counted, and the run stops (exit 3) naming the provider's
//! error.

use std::path::Path;
use std::time::{Duration, Instant};

use super::RunError;
use super::attempt::{Attempt, Carried, Fixed};
use super::recorder::Recorder;
use crate::agents::transient::{self, AgentEnded, Answered, Transient};
use crate::config::ResetMode;
use crate::model::AgentRun;
use crate::record::Event;
use crate::sandbox::proxy;

/// The transient failure the agent's `run` ended on, if it did: read from
/// its output (the preset's forms, or the common ones for a custom agent)
/// and the answers of its model hosts in the network log `net_log`.
pub(super) fn failure(t: &Fixed<'_>, run: &AgentRun, output: &Path, net_log: &Path) -> Option<Transient> {
    let preset = t.plan.preset.as_ref().filter(|_| t.plan.preset_command);
    let gives_up_with_0 = preset.is_some_and(|p| p.transient_exit_0);
    let ended = AgentEnded { exit_code: run.exit_code, timed_out: run.timed_out, gives_up_with_0 };
    if ended.timed_out || (ended.exit_code == Some(0) && !gives_up_with_0) {
        return None;
    }
    let forms = preset.map_or_else(transient::common_forms, |p| p.transient_forms());
    let text = last_part(output);
    transient::classify(ended, &text, &answers(net_log), &forms)
}

/// The last 64 KiB of the file at `path` (what an agent prints last is
/// where it says why it stopped).
fn last_part(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_default();
    let from = bytes.len().saturating_sub(64 * 1024);
    String::from_utf8_lossy(&bytes[from..]).into_owned()
}

/// The plain-HTTP answers of the hosts the agent reached, as the proxy
/// logged them: a first answer it could read, or none at all from a host
/// that was sent a request (a connection dropped). A TLS connection tells
/// nothing and is left out.
fn answers(net_log: &Path) -> Vec<Answered> {
    proxy::read_log(net_log)
        .into_iter()
        .filter(|c| c.allowed && c.bytes_up > 0)
        .filter_map(|c| match c.status {
            Some(s) => Some(Answered { status: Some(s), retry_after: c.retry_after }),
            None if c.bytes_down == 0 => Some(Answered { status: None, retry_after: None }),
            None => None,
        })
        .collect()
}

/// What one run of the agent that its provider failed leaves: recorded as
/// `AgentRetried`, its output and network log set aside as
/// `agent-run-<run>.out` and `network-agent-run-<run>.jsonl`. With runs
/// left, waits and puts the worktree back at the attempt's start
/// (`Ok`); else aborts the attempt, uncounted, and stops the run.
pub(super) fn run_again(
    t: &Fixed<'_>,
    rec: &mut Recorder,
    carried: Carried<'_>,
    a: &mut Attempt,
    (run, failed, why): (u32, &AgentRun, Transient),
    net_log: &Path,
) -> Result<(), RunError> {
    let n = a.n;
    let config = &t.plan.config.agent;
    let kept = format!("agent-run-{run}.out");
    let _ = std::fs::rename(a.dir.agent_out(), a.dir.path().join(&kept));
    let _ = std::fs::rename(net_log, a.dir.path().join(format!("network-agent-run-{run}.jsonl")));
    let last = run > config.transient_retries;
    let wait = transient::wait_before(run, config.transient_wait.value, why.retry_after, transient::LONGEST_WAIT);
    rec.event(
        Some(n),
        Event::AgentRetried {
            run,
            kind: why.kind.to_string(),
            said: why.said.clone(),
            exit_code: failed.exit_code,
            duration_ms: failed.duration_ms,
            wait_ms: (!last).then_some(wait.as_millis() as u64),
            retry_after_ms: why.retry_after.map(|d| d.as_millis() as u64),
            output: kept,
            usage: failed.usage.clone(),
        },
    )?;
    a.record.provider_failures.push(crate::model::ProviderFailure {
        kind: why.kind.to_string(),
        said: why.said.clone(),
        wait_ms: (!last).then_some(wait.as_millis() as u64),
    });
    if last {
        let message = format!(
            "the agent's model provider failed it {run} time(s) in attempt {n} ({}: {}); this is not the agent's \
             failure, and attempt {n} is recorded as aborted and not counted. Wait for the provider (its status page, \
             your plan's rate limits), raise [agent] transient_retries or transient_wait, then `{}` runs it again",
            words(why.kind),
            why.said,
            t.resume_command(""),
        );
        rec.event(Some(n), Event::AttemptAborted { reason: message.clone(), phase: "agent".into() })?;
        t.progress.done("aborted: the model provider kept failing the agent");
        t.publish()?;
        return Err(RunError::ModelUnavailable { message });
    }
    t.progress.phase(&format!(
        "the model provider failed the agent ({}); running it again in {}",
        words(why.kind),
        seconds(wait)
    ));
    pause(&t.plan.id, wait)?;
    back_to_start(t, carried, n)
}

/// The kind in words.
fn words(kind: &str) -> &'static str {
    match kind {
        "rate_limit" => "rate limited",
        "overloaded" => "overloaded",
        "dropped" => "connection dropped",
        _ => "server error",
    }
}

/// `wait` in seconds, as the progress line says it.
fn seconds(wait: Duration) -> String {
    format!("{:.1} s", wait.as_secs_f64())
}

/// Sleeps `wait`, stopping early on SIGINT or SIGTERM.
fn pause(task: &str, wait: Duration) -> Result<(), RunError> {
    let until = Instant::now() + wait;
    loop {
        super::interrupt::stop_if_interrupted(task)?;
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(());
        }
        std::thread::sleep(left.min(Duration::from_millis(100)));
    }
}

/// The worktree put back as attempt `n` started: at the base, or with
/// `reset = "keep"` at the last attempt's snapshot.
fn back_to_start(t: &Fixed<'_>, carried: Carried<'_>, n: u32) -> Result<(), RunError> {
    let keep = t.plan.config.agent.reset == ResetMode::Keep && n > t.first_attempt;
    let from = keep
        .then(|| carried.prior.last().and_then(|p| p.commit.as_deref()))
        .flatten()
        .and_then(|c| crate::git::Oid::from_str(c).ok());
    super::worktree::back_to(t, n, from.unwrap_or(t.base.oid))
}
