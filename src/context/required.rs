//! The required change: one imperative sentence that leads the feedback.
//! Synthesized from the gates' results without any model; from the
//! verifier it is the verdict's own `required_change`, marked advisory.

use serde::{Deserialize, Serialize};

use crate::attempt::{AttemptRecord, CheckResult, Outcome, exit_text, human_ms, plural};
use crate::config::CheckKind;

/// At most this many names in one sentence; the rest are counted.
const MAX_NAMES: usize = 5;
/// The sentence is cut at this many bytes (a verifier may write an essay).
pub const MAX_BYTES: usize = 600;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Required {
    pub text: String,
    /// Where it comes from: `empty-diff`, `scope`, `check:<name>`, `agent`,
    /// `verifier`, `interrupted`, `none`.
    pub source: String,
    /// Advice (the verifier's words), not a fact established by a gate.
    pub advisory: bool,
}

fn fact(source: impl Into<String>, text: String) -> Required {
    Required {
        text: crate::text::clip(&text, MAX_BYTES, " [...]").into_owned(),
        source: source.into(),
        advisory: false,
    }
}

/// `a, b and c (and 3 more)`.
pub fn name_list(names: &[String]) -> String {
    let shown: Vec<&str> = names.iter().take(MAX_NAMES).map(String::as_str).collect();
    let mut s = match shown.len() {
        0 => String::new(),
        1 => shown[0].to_string(),
        n => format!("{} and {}", shown[..n - 1].join(", "), shown[n - 1]),
    };
    if names.len() > MAX_NAMES {
        s.push_str(&format!(" (and {} more)", names.len() - MAX_NAMES));
    }
    s
}

fn sorted_unique(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v.dedup();
    v
}

/// The required change after attempt `r`.
pub fn required_change(r: &AttemptRecord) -> Required {
    match r.outcome {
        Outcome::Success => fact("none", format!("No change is required: attempt {} passed every gate.", r.number)),
        Outcome::EmptyDiff => fact(
            "empty-diff",
            format!("Make actual changes to the files: attempt {} left the worktree exactly as the base.", r.number),
        ),
        Outcome::Crash if r.interrupted => fact(
            "interrupted",
            format!(
                "Carry out the task again: attempt {} was interrupted before it finished, so nothing of it was kept.",
                r.number
            ),
        ),
        Outcome::Crash => {
            let how = r.agent.as_ref().map_or("ended abnormally".to_string(), |a| exit_text(a.exit_code, a.signal));
            fact("agent", format!("Finish the task and exit with status 0: the agent {how} in attempt {}.", r.number))
        }
        Outcome::Timeout => {
            let (limit, last) = r
                .agent
                .as_ref()
                .map_or((String::from("time"), None), |a| (human_ms(a.timeout_ms), a.last_activity.clone()));
            let last = match last {
                Some(p) => format!("; its last activity was a write to {p}"),
                None => "; it wrote no file".to_string(),
            };
            fact(
                "agent",
                format!("Finish within the {limit} limit: attempt {} was stopped at the limit{last}.", r.number),
            )
        }
        Outcome::ScopeViolation => scope_sentence(r),
        Outcome::CheckFailure => match r.failed_checks().next() {
            Some(c) => check_sentence(c),
            None => fact("check", "Make every check pass.".into()),
        },
        Outcome::VerifierRejection => {
            let v = r.verifier.as_ref();
            let text = v
                .and_then(|v| v.required_change.clone().or_else(|| v.critique.clone()))
                .unwrap_or_else(|| "Address the reviewer's concerns.".into());
            Required {
                text: crate::text::clip(&text, MAX_BYTES, " [...]").into_owned(),
                source: "verifier".into(),
                advisory: true,
            }
        }
        Outcome::Unverified => fact(
            "verifier",
            format!(
                "No change is known to be required: the reviewer never judged attempt {}, which is kept for a human.",
                r.number
            ),
        ),
    }
}

fn scope_sentence(r: &AttemptRecord) -> Required {
    let internal: Vec<String> =
        sorted_unique(r.scope.iter().filter(|v| v.reason == "git-internal").map(|v| v.path.clone()).collect());
    let escapes: Vec<String> =
        sorted_unique(r.scope.iter().filter(|v| v.reason == "symlink-escape").map(|v| v.path.clone()).collect());
    let others: Vec<String> = sorted_unique(
        r.scope
            .iter()
            .filter(|v| v.reason != "git-internal" && v.reason != "symlink-escape")
            .map(|v| v.path.clone())
            .collect(),
    );
    let mut parts = Vec::new();
    if !internal.is_empty() {
        parts.push(format!("leave git's own files alone (you changed {})", name_list(&internal)));
    }
    if !escapes.is_empty() {
        parts.push(format!(
            "remove the symlink{} {} that point outside the repository",
            plural(escapes.len()),
            name_list(&escapes)
        ));
    }
    if !others.is_empty() {
        parts.push(format!("revert your changes to {}", name_list(&others)));
    }
    let allowed = if r.allow.is_empty() {
        String::new()
    } else {
        let globs: Vec<String> = r.allow.iter().map(|g| format!("`{g}`")).collect();
        format!(", and write only under {}", name_list(&globs))
    };
    let mut s = parts.join(", ");
    if let Some(first) = s.get(..1) {
        s = first.to_uppercase() + &s[1..];
    }
    fact("scope", format!("{s}{allowed}."))
}

fn check_sentence(c: &CheckResult) -> Required {
    let source = format!("check:{}", c.name);
    let tests: Vec<String> = c.failures.iter().filter(|f| f.test).map(|f| f.key.clone()).collect();
    let errors: Vec<&crate::attempt::Failure> = c.failures.iter().filter(|f| !f.test).collect();
    let files: Vec<String> = sorted_unique(c.errors.iter().map(|e| format!("`{}`", e.path)).collect());
    if c.timed_out {
        return fact(
            source,
            format!("Make the check `{}` finish within its time limit: it was stopped at the limit.", c.name),
        );
    }
    match c.kind {
        CheckKind::Test if !tests.is_empty() => {
            let names: Vec<String> = tests.iter().map(|t| format!("`{t}`")).collect();
            fact(source, format!("Make the failing test{} pass: {}.", plural(tests.len()), name_list(&names)))
        }
        CheckKind::Lint if !errors.is_empty() => {
            let n = errors.len();
            let place = if files.is_empty() { String::new() } else { format!(" in {}", name_list(&files)) };
            fact(source, format!("Fix the {n} lint error{} that `{}` reports{place}.", plural(n), c.name))
        }
        CheckKind::Build if !errors.is_empty() => {
            let n = errors.len();
            let place = if files.is_empty() { String::new() } else { format!(" in {}", name_list(&files)) };
            fact(source, format!("Fix the {n} build error{} that `{}` reports{place}.", plural(n), c.name))
        }
        _ if !tests.is_empty() => {
            let names: Vec<String> = tests.iter().map(|t| format!("`{t}`")).collect();
            fact(source, format!("Make the failing test{} pass: {}.", plural(tests.len()), name_list(&names)))
        }
        _ if !errors.is_empty() => {
            let n = errors.len();
            let place = if files.is_empty() { String::new() } else { format!(" in {}", name_list(&files)) };
            fact(source, format!("Fix the {n} error{} that `{}` reports{place}.", plural(n), c.name))
        }
        _ => fact(
            source,
            format!("Make the check `{}` pass: it {} (its output is below).", c.name, exit_text(c.exit_code, c.signal)),
        ),
    }
}
