//! What a retry context is made of: the task, each earlier attempt's
//! feedback and lines, and the whole [`Context`] written as
//! `context.json`. Built by [`super::assemble`].

use serde::{Deserialize, Serialize};

use super::{Pattern, Rejection, Required};
use crate::model::{ErrorItem, Outcome};

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
