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

use serde::{Deserialize, Serialize};

use crate::config::ContextConfig;
use crate::model::{AttemptRecord, ErrorItem, Outcome};
use crate::text::plural;
pub(crate) use patterns::Pattern;
pub(crate) use rejections::Rejection;
pub(crate) use required::{Required, required_change};

/// The task as the agent reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct TaskText {
    pub id: String,
    pub title: String,
    /// The whole original task, never cut.
    pub text: String,
}

/// How an item of feedback should be taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Label {
    /// Established by a gate: a check's output, a scope violation.
    Fact,
    /// The reviewer's opinion, quoted.
    Advisory,
    /// Found by comparing attempts.
    Observation,
}

/// One item of actionable feedback, ordered by `priority`: 1 failures a
/// gate established (the agent's exit, scope, failing checks), 3 advice
/// (the reviewer's critique, the agent's own account), 4 notes on checks
/// that passed (flaky, or failing only as on the base). The errors in
/// their code (2) are kept apart, in [`Previous::errors`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Feedback {
    pub priority: u8,
    pub label: Label,
    /// `agent`, `empty-diff`, `scope`, `check:pytest`, `verifier`,
    /// `agent-notes`.
    pub source: String,
    pub title: String,
    /// Markdown lines: list items, quotes.
    pub lines: Vec<String>,
    /// Tool output, shown verbatim in a code block.
    pub output: Vec<String>,
    /// Lines cut by a per-section limit.
    pub omitted: usize,
}

/// The attempt that just failed, in detail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Previous {
    pub number: u32,
    pub outcome: Outcome,
    pub reason: String,
    pub required_change: Required,
    pub feedback: Vec<Feedback>,
    /// Lint and compiler errors with their enclosing scope and snippet.
    pub errors: Vec<ErrorItem>,
    /// Its diff, bounded by `max_diff_lines`.
    pub diff: Vec<String>,
    pub diff_omitted: usize,
    /// It passed every test and target and failed only on this
    /// ([`crate::outcome::near_miss`]): its diff is kept first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub near_miss: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct CheckLine {
    pub name: String,
    pub passed: bool,
    pub exit_code: Option<i32>,
    pub flaky: bool,
    /// Stopped at its time limit.
    #[serde(default)]
    pub timed_out: bool,
    pub pre_existing: usize,
    pub excerpt: Vec<String>,
    pub omitted: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct VerifierLine {
    pub verdict: Option<String>,
    pub confidence: Option<f64>,
    pub required_change: Option<String>,
    pub critique: Option<String>,
}

/// One earlier attempt, summarized.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct PriorAttempt {
    pub number: u32,
    pub duration_ms: u64,
    pub outcome: Outcome,
    pub reason: String,
    pub required_change: String,
    pub checks: Vec<CheckLine>,
    pub verifier: Option<VerifierLine>,
    pub files: Vec<String>,
    pub diff_summary: String,
}

/// The whole retry context of one attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Context {
    pub task: TaskText,
    pub attempt: u32,
    pub max_attempts: u32,
    /// `None` for a first attempt.
    pub previous: Option<Previous>,
    /// Earlier attempts, most recent first, at most `max_prior_attempts`.
    pub attempts: Vec<PriorAttempt>,
    /// Earlier attempts not shown because of `max_prior_attempts`.
    pub attempts_omitted: usize,
    pub patterns: Vec<Pattern>,
    /// The reviewers' rejections of the task's results, latest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rejections: Vec<Rejection>,
    /// The latest rejection leads this prompt: the first attempt of a
    /// round that follows it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rejected: bool,
    /// Facts on the last attempt the record and its logs did not back,
    /// left out of the prompt ([`facts`]), each in words.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unbacked: Vec<String>,
}

impl Context {
    /// Where the feedback came from, for the RetryContextAssembled event
    /// (`review` when a rejection leads).
    pub(crate) fn sources(&self) -> Vec<String> {
        let mut s: Vec<String> =
            self.previous.iter().flat_map(|p| p.feedback.iter().map(|f| f.source.clone())).collect();
        if self.rejected {
            s.push("review".to_string());
        }
        s.sort();
        s.dedup();
        s
    }

    /// The rejection that leads the prompt, if one does.
    pub(crate) fn leading(&self) -> Option<&Rejection> {
        self.rejections.first().filter(|_| self.rejected)
    }

    /// The one change the prompt asks for: the leading rejection's, else
    /// the previous attempt's.
    pub(crate) fn required_change(&self) -> Option<String> {
        match self.leading() {
            Some(r) => Some(r.required_change.clone()),
            None => self.previous.as_ref().map(|p| p.required_change.text.clone()),
        }
    }
}

/// The task's reviews as the next attempt's context reads them: every
/// `Reviewed` (log order), and the first attempt of the round under way.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reviews<'a> {
    pub all: &'a [crate::model::Review],
    pub round_first: u32,
}

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

/// Keeps the first `max` lines; returns them and how many were cut.
fn bound(lines: &[String], max: usize) -> (Vec<String>, usize) {
    (lines.iter().take(max).cloned().collect(), lines.len().saturating_sub(max))
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

/// How a failure the base has too is named: a target is meant to fail
/// there; another test of a task with targets is not the task's.
pub(crate) fn on_base(f: &crate::model::Failure, has_targets: bool) -> &'static str {
    if f.target {
        "the task's target, failing on the base as expected"
    } else if f.test && has_targets {
        "already failing on the base, not a target"
    } else {
        "already failing on the base"
    }
}

/// Whether the task of attempt `r` names targets (the built-in check ran).
pub(crate) fn has_targets(r: &AttemptRecord) -> bool {
    r.checks.iter().any(|c| c.name == required::TARGETS)
}

#[cfg(test)]
mod tests;
