//! The retry context (docs/commands.md, `context`): what the next attempt
//! reads about the earlier ones. Pure functions over recorded
//! [`AttemptRecord`]s:
//!
//! - [`assemble`]: the structure (written as `context.json`), with the
//!   per-section limits of `[context]` applied;
//! - `previous`: the attempt that just failed, in detail;
//! - [`required`]: the one-sentence required change;
//! - [`patterns`]: observations across attempts;
//! - [`rejections`]: the reviewers' rejections of the task's results, and
//!   whether the latest leads the prompt (the first of a round after it);
//! - [`render`]: Markdown within the total `max_tokens` budget.
//!
//! Same inputs, same bytes: nothing here reads a clock, a map's iteration
//! order or this machine's paths.

pub(crate) mod facts;
pub(crate) mod patterns;
mod previous;
pub(crate) mod rejections;
pub(crate) mod render;
pub(crate) mod required;
pub(crate) mod self_check;

use crate::config::ContextConfig;
use crate::model::AttemptRecord;
use crate::text::plural;
pub(crate) use patterns::Pattern;
pub(crate) use rejections::Rejection;
pub(crate) use required::{Required, required_change};

mod parts;

pub(crate) use parts::{CheckLine, Context, Feedback, Label, Previous, PriorAttempt, Reviews, TaskText, VerifierLine};
use previous::bound;
pub(crate) use previous::{has_targets, on_base};

/// [`assemble`], with the task's reviews: its rejections kept, latest
/// first, and the latest leading the first prompt of a round after it.
pub(crate) fn assemble_reviewed(
    task: &TaskText,
    (attempt, max_attempts): (u32, u32),
    (prior, logs): (&[AttemptRecord], &facts::Logs),
    reviews: Reviews<'_>,
    cfg: &ContextConfig,
) -> Context {
    let mut ctx = assemble_with(task, (attempt, max_attempts), prior, logs, cfg);
    ctx.rejections = rejections::rejections(reviews.all, cfg);
    let run: Vec<u32> = prior.iter().map(|r| r.number).collect();
    ctx.rejected = rejections::leads(reviews.all, &run, attempt, reviews.round_first);
    ctx
}

fn diff_summary(r: &AttemptRecord) -> String {
    let (add, del) = r.files.iter().fold((0, 0), |(a, d), f| (a + f.additions, d + f.deletions));
    let n = r.files.len();
    if n == 0 { "no change".into() } else { format!("{n} file{} changed, +{add} -{del}", plural(n)) }
}

/// Builds the context of attempt `attempt` from the earlier attempts
/// (`prior`, oldest first), without the logs of the last: only what the
/// record holds backs its facts.
pub(crate) fn assemble(
    task: &TaskText,
    attempt: u32,
    max_attempts: u32,
    prior: &[AttemptRecord],
    cfg: &ContextConfig,
) -> Context {
    assemble_with(task, (attempt, max_attempts), prior, &facts::Logs::default(), cfg)
}

/// [`assemble`], the facts on the last attempt also checked against its
/// `logs` ([`facts`]).
pub(crate) fn assemble_with(
    task: &TaskText,
    (attempt, max_attempts): (u32, u32),
    prior: &[AttemptRecord],
    logs: &facts::Logs,
    cfg: &ContextConfig,
) -> Context {
    let check_lines = cfg.max_check_output_lines as usize;
    let attempts: Vec<PriorAttempt> = prior
        .iter()
        .rev()
        .take(cfg.max_prior_attempts as usize)
        .map(|r| PriorAttempt {
            number: r.number,
            duration_ms: r.duration_ms,
            outcome: r.outcome,
            reason: r.reason.clone(),
            required_change: required_change(r).text,
            checks: r
                .checks
                .iter()
                .map(|c| {
                    let (excerpt, omitted) = if cfg.include_check_output && !c.passed {
                        bound(&c.digest, check_lines)
                    } else {
                        (Vec::new(), 0)
                    };
                    CheckLine {
                        name: if c.targets_only { format!("{} (targets)", c.name) } else { c.name.clone() },
                        passed: c.passed,
                        exit_code: c.exit_code,
                        flaky: c.flaky,
                        timed_out: c.timed_out,
                        pre_existing: c.pre_existing.len(),
                        excerpt,
                        omitted,
                    }
                })
                .collect(),
            verifier: r.verifier.as_ref().filter(|_| cfg.include_verifier_feedback).map(|v| VerifierLine {
                verdict: v.verdict.clone(),
                confidence: v.confidence,
                required_change: v.required_change.clone(),
                critique: v
                    .critique
                    .as_ref()
                    .map(|c| crate::text::clip(c, cfg.max_verifier_feedback_chars as usize, " [...]").into_owned()),
            }),
            files: r.files.iter().map(|f| f.path.clone()).collect(),
            diff_summary: diff_summary(r),
        })
        .collect();
    let (previous, unbacked) = match prior.last() {
        Some(r) => {
            let (p, u) = previous::previous(r, cfg, logs);
            (Some(p), u)
        }
        None => (None, Vec::new()),
    };
    Context {
        task: task.clone(),
        attempt,
        max_attempts,
        previous,
        attempts_omitted: prior.len().saturating_sub(attempts.len()),
        attempts,
        patterns: patterns::patterns(prior, cfg.drift_threshold),
        rejections: Vec::new(),
        rejected: false,
        unbacked,
    }
}

#[cfg(test)]
mod tests;
