//! The retry context (docs/commands.md, `context`): what the next attempt
//! reads about the earlier ones. Pure functions over recorded
//! [`AttemptRecord`]s:
//!
//! - [`assemble`]: the structure (written as `context.json`), with the
//!   per-section limits of `[context]` applied;
//! - [`required`]: the one-sentence required change;
//! - [`patterns`]: observations across attempts;
//! - [`render`]: Markdown within the total `max_tokens` budget.
//!
//! Same inputs, same bytes: nothing here reads a clock, a map's iteration
//! order or this machine's paths.

pub mod lanes;
pub mod patterns;
pub mod render;
pub mod required;
pub mod self_check;

use serde::{Deserialize, Serialize};

use crate::config::ContextConfig;
use crate::model::{AttemptRecord, ErrorItem, Outcome, ScopeReason};
use crate::text::{exit_text, human_ms, plural};
pub use patterns::Pattern;
pub use required::{Required, required_change};

/// The task as the agent reads it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskText {
    pub id: String,
    pub title: String,
    /// The whole original task, never cut.
    pub text: String,
}

/// How an item of feedback should be taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Label {
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
pub struct Feedback {
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
pub struct Previous {
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
pub struct CheckLine {
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
pub struct VerifierLine {
    pub verdict: Option<String>,
    pub confidence: Option<f64>,
    pub required_change: Option<String>,
    pub critique: Option<String>,
}

/// One earlier attempt, summarized.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PriorAttempt {
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
pub struct Context {
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
}

impl Context {
    /// Where the feedback came from, for the RetryContextAssembled event.
    pub fn sources(&self) -> Vec<String> {
        let mut s: Vec<String> =
            self.previous.iter().flat_map(|p| p.feedback.iter().map(|f| f.source.clone())).collect();
        s.sort();
        s.dedup();
        s
    }
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
/// (`prior`, oldest first).
pub fn assemble(
    task: &TaskText,
    attempt: u32,
    max_attempts: u32,
    prior: &[AttemptRecord],
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
                        name: c.name.clone(),
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
    let previous = prior.last().map(|r| previous(r, cfg));
    Context {
        task: task.clone(),
        attempt,
        max_attempts,
        previous,
        attempts_omitted: prior.len().saturating_sub(attempts.len()),
        attempts,
        patterns: patterns::patterns(prior, cfg.drift_threshold),
    }
}

/// How a failure the base has too is named: a target is meant to fail
/// there; another test of a task with targets is not the task's.
pub fn on_base(f: &crate::model::Failure, has_targets: bool) -> &'static str {
    if f.target {
        "the task's target, failing on the base as expected"
    } else if f.test && has_targets {
        "already failing on the base, not a target"
    } else {
        "already failing on the base"
    }
}

/// Whether the task of attempt `r` names targets (the built-in check ran).
pub fn has_targets(r: &AttemptRecord) -> bool {
    r.checks.iter().any(|c| c.name == required::TARGETS)
}

fn previous(r: &AttemptRecord, cfg: &ContextConfig) -> Previous {
    let check_lines = cfg.max_check_output_lines as usize;
    let mut feedback = Vec::new();
    // 1. Deterministic failures: the agent's exit, scope, failing checks.
    if let Some(a) = &r.agent
        && (a.timed_out || a.crashed())
    {
        let title = if a.timed_out {
            format!("The agent was stopped at its {} limit", human_ms(a.timeout_ms))
        } else {
            format!("The agent {}", exit_text(a.exit_code, a.signal))
        };
        let mut lines = Vec::new();
        if let Some(p) = &a.last_activity {
            lines.push(format!("- Last activity: a write to `{p}`"));
        }
        if !a.refused.is_empty() {
            let paths: Vec<String> = a.refused.iter().map(|p| format!("`{p}`")).collect();
            lines.push(format!(
                "- The sandbox refused writes outside the worktree: {}. Write only inside the worktree and its TMPDIR; only a human can allow another path (`[sandbox] writable` in retry-run.toml).",
                crate::context::required::name_list(&paths)
            ));
        }
        let (output, omitted) = bound(&a.output_tail, check_lines);
        if !output.is_empty() {
            lines.push("- The end of its output:".into());
        }
        feedback.push(Feedback {
            priority: 1,
            label: Label::Fact,
            source: "agent".into(),
            title,
            lines,
            output,
            omitted,
        });
    }
    if let Some(a) = &r.agent
        && !a.refused_hosts.is_empty()
    {
        let hosts: Vec<String> = a.refused_hosts.iter().map(|h| format!("`{h}`")).collect();
        feedback.push(Feedback {
            priority: 1,
            label: Label::Fact,
            source: "sandbox".into(),
            title: "The sandbox refused network connections".into(),
            lines: vec![format!(
                "- Refused: {}. Only the allowed hosts are reachable; work without the others (a human can allow one in `[sandbox] network`).",
                crate::context::required::name_list(&hosts)
            )],
            output: Vec::new(),
            omitted: 0,
        });
    }
    if r.outcome == Outcome::EmptyDiff {
        feedback.push(Feedback {
            priority: 1,
            label: Label::Fact,
            source: "empty-diff".into(),
            title: "The attempt changed no file".into(),
            lines: Vec::new(),
            output: Vec::new(),
            omitted: 0,
        });
    }
    if !r.scope.is_empty() {
        let lines: Vec<String> = r
            .scope
            .iter()
            .map(|v| {
                let old = v.old_path.as_ref().map(|o| format!(" (renamed from `{o}`)")).unwrap_or_default();
                if v.reason == ScopeReason::ActsAfterLand {
                    return format!("- `{}`{old}: {}: {}", v.path, v.reason, required::acts_after_land(v));
                }
                let rule = v.rule.as_ref().map(|g| format!(" (rule `{g}`)")).unwrap_or_default();
                format!("- `{}`{old}: {}{rule}", v.path, v.reason)
            })
            .collect();
        let allowed = if r.allow.is_empty() { "everything".to_string() } else { r.allow.join(", ") };
        let (lines, omitted) = bound(&lines, check_lines);
        feedback.push(Feedback {
            priority: 1,
            label: Label::Fact,
            source: "scope".into(),
            title: if r.scope.iter().any(|v| v.reason == ScopeReason::ActsAfterLand) {
                format!(
                    "Writes outside the allowed scope (allowed: {allowed}; a file that acts once the change lands only where an allow glob names it); checks were skipped"
                )
            } else {
                format!("Writes outside the allowed scope (allowed: {allowed}); checks were skipped")
            },
            lines,
            output: Vec::new(),
            omitted,
        });
    }
    let targets = has_targets(r);
    for c in r.checks.iter().filter(|c| !c.passed) {
        let mut labels: Vec<String> = c.failures.iter().map(|f| format!("- {}", f.label)).collect();
        // Baseline `label`: the base's own failures still fail the check; say
        // so. Tolerated ones are counted in the title, never listed as work.
        if !c.base_tolerated {
            labels.extend(c.pre_existing.iter().map(|f| format!("- {} ({})", f.label, on_base(f, targets))));
        }
        let (mut lines, cut_labels) = bound(&labels, check_lines);
        lines.extend(c.notes.iter().map(|n| format!("- Note: {n}")));
        // New diagnostics alone say what to fix: the output would list the
        // base's too.
        let quiet = c.base_tolerated && !c.failures.is_empty() && c.failures.iter().all(|f| !f.test);
        let (output, cut_output) =
            if cfg.include_check_output && !quiet { bound(&c.digest, check_lines) } else { (Vec::new(), 0) };
        if !output.is_empty() {
            lines.push("- Its output, digested:".into());
        }
        let omitted = cut_labels + cut_output;
        let new = c.failures.len();
        let pre = c.pre_existing.len();
        let what = if c.timed_out {
            "it was stopped at its time limit".to_string()
        } else if c.base_tolerated && pre > 0 {
            format!("{new} new failure{}; {pre} already on the base, not counted against you", plural(new))
        } else if c.failing_on_base && pre > 0 && new == 0 {
            let (verb, pronoun) = if pre == 1 { ("fails", "it") } else { ("fail", "them") };
            format!(
                "{pre} failure{} already on the base, which still {verb} this check: fix {pronoun} too",
                plural(pre)
            )
        } else if c.failing_on_base && pre > 0 {
            format!("{new} new failure{}, and {pre} already failing on the base", plural(new))
        } else if c.failing_on_base {
            format!("{new} new failure{} (the base fails this check too)", plural(new))
        } else if new > 0 {
            format!("{new} failure{}", plural(new))
        } else {
            exit_text(c.exit_code, c.signal)
        };
        feedback.push(Feedback {
            priority: 1,
            label: Label::Fact,
            source: format!("check:{}", c.name),
            title: if c.timed_out {
                format!("Check `{}` TIMEOUT: it was stopped at its time limit", c.name)
            } else {
                format!("Check `{}` failed ({}): {what}", c.name, exit_text(c.exit_code, c.signal))
            },
            lines,
            output,
            omitted,
        });
    }
    for c in r.checks.iter().filter(|c| c.passed && (c.flaky || c.pre_existing.iter().any(|f| !f.target))) {
        // A target failing on the base is the task itself: the `targets`
        // check speaks of it.
        let theirs: Vec<&crate::model::Failure> = c.pre_existing.iter().filter(|f| !f.target).collect();
        let tests = theirs.iter().filter(|f| f.test).count();
        let title = if c.flaky {
            format!("Check `{}` is flaky: it failed, then passed on the same tree; not counted against you", c.name)
        } else if tests == 0 {
            format!(
                "Check `{}`: {} diagnostic{} already on the base, none new; not yours, leave them",
                c.name,
                theirs.len(),
                plural(theirs.len())
            )
        } else {
            format!(
                "Check `{}` already fails on the base ({} failure{}); these are not yours, and your change added none",
                c.name,
                theirs.len(),
                plural(theirs.len())
            )
        };
        // Diagnostics are only counted; tests are named, with why they do not count.
        let listed: Vec<String> = if c.flaky || tests == 0 {
            Vec::new()
        } else {
            theirs.iter().filter(|f| f.test).map(|f| format!("- {} ({})", f.label, on_base(f, targets))).collect()
        };
        let (lines, omitted) = bound(&listed, 5);
        feedback.push(Feedback {
            priority: 4,
            label: Label::Fact,
            source: format!("check:{}", c.name),
            title,
            lines,
            output: Vec::new(),
            omitted,
        });
    }
    // 2. Specific errors: lint and compiler errors in their code.
    let errors: Vec<ErrorItem> = r.checks.iter().filter(|c| !c.passed).flat_map(|c| c.errors.iter().cloned()).collect();
    // 3. The verifier's feedback, quoted, advisory.
    if cfg.include_verifier_feedback
        && let Some(v) = &r.verifier
        && v.answered
        && let Some(critique) = &v.critique
    {
        let text = crate::text::clip(critique, cfg.max_verifier_feedback_chars as usize, " [...]");
        feedback.push(Feedback {
            priority: 3,
            label: Label::Advisory,
            source: "verifier".into(),
            title: format!(
                "The reviewer's critique (advisory; verdict {}, confidence {:.2})",
                v.verdict.as_deref().unwrap_or("?"),
                v.confidence.unwrap_or(1.0)
            ),
            lines: text.lines().map(|l| format!("> {l}")).collect(),
            output: Vec::new(),
            omitted: 0,
        });
    }
    // 3. The agent's own account of the failed attempt: its last words, advisory.
    if cfg.include_agent_notes
        && r.outcome != Outcome::Success
        // A crash or timeout already shows the end of its output above.
        && let Some(msg) = r.agent.as_ref().filter(|a| !a.timed_out && !a.crashed()).and_then(|a| a.final_message.as_ref())
        && !msg.trim().is_empty()
    {
        let text = crate::text::clip(msg.trim(), cfg.max_agent_notes_chars as usize, " [...]");
        feedback.push(Feedback {
            priority: 3,
            label: Label::Advisory,
            source: "agent-notes".into(),
            title: format!("The agent's own account of attempt {} (its last words; advisory)", r.number),
            lines: text.lines().map(|l| format!("> {l}")).collect(),
            output: Vec::new(),
            omitted: 0,
        });
    }
    feedback.sort_by_key(|f| f.priority);
    let (diff, extra) =
        if cfg.include_prior_diffs { bound(&r.diff, cfg.max_diff_lines as usize) } else { (Vec::new(), r.diff.len()) };
    Previous {
        number: r.number,
        outcome: r.outcome,
        reason: r.reason.clone(),
        required_change: required_change(r),
        feedback,
        errors,
        diff,
        diff_omitted: extra + if cfg.include_prior_diffs { r.diff_omitted } else { 0 },
        near_miss: crate::outcome::near_miss(r).map(|what| {
            let targets = if has_targets(r) { " and target" } else { "" };
            format!("Attempt {} passed every test{targets} and failed only on {what}", r.number)
        }),
    }
}

#[cfg(test)]
mod tests;
