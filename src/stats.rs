//! `retry-run stats`: attempts per task, success rate by attempt number and
//! by the kind of feedback the attempt was given (which feedback leads to a
//! fixed next attempt). Pure over the tasks' attempt records.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;

use crate::model::{AttemptRecord, Outcome};
use crate::text::plural;

/// The kind of feedback an attempt's failure gives the next attempt:
/// `check:lint`, `check:test`, `scope`, `empty-diff`, `timeout`, `crash`,
/// `interrupted`, `verifier`.
pub fn feedback_kind(r: &AttemptRecord) -> String {
    match r.outcome {
        Outcome::CheckFailure => {
            let kind = r.failed_checks().next().map(|c| serde_json::to_value(c.kind).ok());
            match kind.flatten().and_then(|v| v.as_str().map(str::to_string)) {
                Some(k) => format!("check:{k}"),
                None => "check".into(),
            }
        }
        Outcome::ScopeViolation => "scope".into(),
        Outcome::EmptyDiff => "empty-diff".into(),
        Outcome::Timeout => "timeout".into(),
        Outcome::Crash if r.interrupted => "interrupted".into(),
        Outcome::Stopped => "stopped".into(),
        Outcome::Crash => "crash".into(),
        Outcome::VerifierRejection => "verifier".into(),
        Outcome::Success | Outcome::Unverified => "none".into(),
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Rate {
    pub attempts: usize,
    pub succeeded: usize,
}

impl Rate {
    fn add(&mut self, ok: bool) {
        self.attempts += 1;
        self.succeeded += usize::from(ok);
    }

    pub fn percent(&self) -> f64 {
        if self.attempts == 0 { 0.0 } else { 100.0 * self.succeeded as f64 / self.attempts as f64 }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Stats {
    /// Task id → attempts and whether it succeeded.
    pub tasks: BTreeMap<String, (usize, bool)>,
    pub by_attempt: BTreeMap<u32, Rate>,
    /// Feedback kind given to an attempt → how often that attempt succeeded.
    pub by_feedback: BTreeMap<String, Rate>,
    /// Attempts with test-integrity findings: (attempts, findings), counted
    /// whether they failed the attempt or were only warnings.
    pub weakened: (usize, usize),
    /// Agent cost as reported: per task, and in all on the attempts after
    /// each task's first (the retries).
    pub cost_by_task: BTreeMap<String, f64>,
    pub cost_on_retries: f64,
}

/// `tasks`: each task's attempts, in order.
pub fn stats(tasks: &[(String, Vec<AttemptRecord>)]) -> Stats {
    let mut s = Stats::default();
    for (id, attempts) in tasks {
        let ok = attempts.iter().any(|a| a.outcome == Outcome::Success);
        s.tasks.insert(id.clone(), (attempts.len(), ok));
        for (i, a) in attempts.iter().enumerate() {
            let success = a.outcome == Outcome::Success;
            if let Some(c) = a.agent.as_ref().and_then(|g| g.usage.as_ref()).and_then(|u| u.cost_usd) {
                *s.cost_by_task.entry(id.clone()).or_default() += c;
                if i > 0 {
                    s.cost_on_retries += c;
                }
            }
            s.by_attempt.entry(a.number).or_default().add(success);
            if i > 0 {
                s.by_feedback.entry(feedback_kind(&attempts[i - 1])).or_default().add(success);
            }
            let findings: usize = a
                .checks
                .iter()
                .filter(|c| c.name == crate::context::required::TEST_INTEGRITY)
                .map(|c| c.failures.len() + c.warnings.len())
                .sum();
            if findings > 0 {
                s.weakened.0 += 1;
                s.weakened.1 += findings;
            }
        }
    }
    s
}

pub fn render(s: &Stats) -> String {
    let mut out = String::new();
    let total: usize = s.tasks.values().map(|(n, _)| n).sum();
    let ok = s.tasks.values().filter(|(_, ok)| *ok).count();
    let _ = writeln!(out, "{} tasks, {} attempts, {} succeeded", s.tasks.len(), total, ok);
    let _ = writeln!(out, "\nattempts per task:");
    for (id, (n, ok)) in &s.tasks {
        let _ = writeln!(out, "  {id:<40} {n:>3}  {}", if *ok { "succeeded" } else { "not succeeded" });
    }
    let _ = writeln!(out, "\nsuccess rate by attempt number:");
    for (n, r) in &s.by_attempt {
        let _ = writeln!(out, "  attempt {n:<3} {:>5.1}%  ({}/{})", r.percent(), r.succeeded, r.attempts);
    }
    let _ = writeln!(out, "\nsuccess rate of the next attempt, by the feedback it was given:");
    if s.by_feedback.is_empty() {
        let _ = writeln!(out, "  (no retried attempts yet)");
    }
    for (k, r) in &s.by_feedback {
        let _ = writeln!(out, "  {k:<14} {:>5.1}%  ({}/{})", r.percent(), r.succeeded, r.attempts);
    }
    if !s.cost_by_task.is_empty() {
        let total: f64 = s.cost_by_task.values().sum();
        let ok: Vec<f64> = s
            .cost_by_task
            .iter()
            .filter(|(id, _)| s.tasks.get(*id).is_some_and(|(_, ok)| *ok))
            .map(|(_, c)| *c)
            .collect();
        let _ = writeln!(out, "\nagent cost, as the agents reported it:");
        let _ = writeln!(out, "  total ${total:.4}, per task ${:.4}", total / s.cost_by_task.len() as f64);
        if !ok.is_empty() {
            let _ = writeln!(out, "  per successful task ${:.4}", ok.iter().sum::<f64>() / ok.len() as f64);
        }
        let share = if total > 0.0 { 100.0 * s.cost_on_retries / total } else { 0.0 };
        let _ =
            writeln!(out, "  spent on retries (attempts after a task's first) ${:.4}, {share:.1}%", s.cost_on_retries);
    }
    let (attempts, findings) = s.weakened;
    let _ = writeln!(
        out,
        "\ntest-integrity warnings: {attempts} attempt{} weakened tests ({findings} finding{})",
        plural(attempts),
        plural(findings)
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(n: u32, o: Outcome) -> AttemptRecord {
        AttemptRecord { outcome: o, ..AttemptRecord::new(n) }
    }

    #[test]
    fn rates_by_attempt_and_feedback() {
        let s = stats(&[
            ("x".into(), vec![a(1, Outcome::EmptyDiff), a(2, Outcome::Success)]),
            ("y".into(), vec![a(1, Outcome::EmptyDiff), a(2, Outcome::ScopeViolation), a(3, Outcome::Success)]),
            ("z".into(), vec![a(1, Outcome::Success)]),
        ]);
        assert_eq!(s.by_attempt[&1], Rate { attempts: 3, succeeded: 1 });
        assert_eq!(s.by_attempt[&2], Rate { attempts: 2, succeeded: 1 });
        assert_eq!(s.by_feedback["empty-diff"], Rate { attempts: 2, succeeded: 1 });
        assert_eq!(s.by_feedback["scope"], Rate { attempts: 1, succeeded: 1 });
        assert!(render(&s).contains("attempt 1    33.3%  (1/3)"), "{}", render(&s));
    }
}
