//! `retry-run stats`: attempts per task, success rate by attempt number and
//! by the kind of feedback the attempt was given (which feedback leads to a
//! fixed next attempt), and pass@k over the tasks run in lanes. Pure over
//! the tasks' attempt records.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;

use crate::model::{AttemptRecord, Outcome};
use crate::text::plural;

/// The kind of feedback an attempt's failure gives the next attempt:
/// `check:lint`, `check:test`, `scope`, `empty-diff`, `timeout`, `crash`,
/// `interrupted`, `verifier`.
pub(crate) fn feedback_kind(r: &AttemptRecord) -> String {
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
pub(crate) struct Rate {
    pub attempts: usize,
    pub succeeded: usize,
}

impl Rate {
    fn add(&mut self, ok: bool) {
        self.attempts += 1;
        self.succeeded += usize::from(ok);
    }

    pub(crate) fn percent(&self) -> f64 {
        if self.attempts == 0 { 0.0 } else { 100.0 * self.succeeded as f64 / self.attempts as f64 }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct Stats {
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
    /// Tasks by how many lanes they ran in (1: without lanes) → how many
    /// succeeded.
    pub by_lanes: BTreeMap<usize, Rate>,
    /// pass@k over the tasks run in lanes: k → the share of them with a
    /// success among their first k lanes.
    pub pass_at: BTreeMap<usize, f64>,
    /// Lanes by their agent → how many succeeded (tasks run in lanes).
    pub by_agent: BTreeMap<String, Rate>,
    /// The agents' own runs of the gates while they worked (docs/mcp.md).
    pub self_checks: SelfChecks,
}

/// What the agents' self-checks (`run_checks`) came to.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub(crate) struct SelfChecks {
    /// Attempts whose agent ran the gates itself at least once.
    pub attempts: usize,
    /// `run_checks` calls that ran the gates.
    pub calls: usize,
    /// Calls of any tool that were refused (the cap, a call under way,
    /// malformed).
    pub refused: usize,
    /// Attempts whose last self-check passed every gate.
    pub green: usize,
    /// Of those, the attempts that then failed a real gate: a gate the
    /// agent cannot see (the reviewer), a change after its last self-check,
    /// or a flaky check.
    pub green_then_failed: usize,
}

/// One attempt chain of a task: the task itself, or one of its lanes
/// (`run --lanes`), with the lane's agent.
#[derive(Debug, Clone, Default)]
pub(crate) struct Chain {
    pub agent: Option<String>,
    pub attempts: Vec<AttemptRecord>,
}

/// `tasks`: each task's chains (one, or one per lane), their attempts in
/// order.
pub(crate) fn stats(tasks: &[(String, Vec<Chain>)]) -> Stats {
    let mut s = Stats::default();
    let mut laned: Vec<Vec<bool>> = Vec::new();
    for (id, chains) in tasks {
        let chain_ok: Vec<bool> =
            chains.iter().map(|c| c.attempts.iter().any(|a| a.outcome == Outcome::Success)).collect();
        let ok = chain_ok.iter().any(|o| *o);
        s.tasks.insert(id.clone(), (chains.iter().map(|c| c.attempts.len()).sum(), ok));
        s.by_lanes.entry(chains.len().max(1)).or_default().add(ok);
        if chains.len() > 1 {
            laned.push(chain_ok.clone());
            for (c, ok) in chains.iter().zip(&chain_ok) {
                s.by_agent.entry(c.agent.clone().unwrap_or_else(|| "?".into())).or_default().add(*ok);
            }
        }
        for attempts in chains.iter().map(|c| &c.attempts) {
            chain_stats(&mut s, id, attempts);
        }
    }
    let most = laned.iter().map(Vec::len).max().unwrap_or(0);
    for k in 1..=most {
        if let Some(p) = pass_at(k, &laned) {
            s.pass_at.insert(k, p);
        }
    }
    s
}

/// pass@k over tasks run in lanes: the share of tasks of which at least
/// one of the first `k` lanes reached SUCCESS. `tasks` holds, per task,
/// whether each lane succeeded, by lane order. `None` when no task had `k`
/// lanes.
fn pass_at(k: usize, tasks: &[Vec<bool>]) -> Option<f64> {
    let with_k: Vec<&Vec<bool>> = tasks.iter().filter(|t| t.len() >= k).collect();
    if with_k.is_empty() || k == 0 {
        return None;
    }
    let passed = with_k.iter().filter(|t| t.iter().take(k).any(|s| *s)).count();
    Some(passed as f64 / with_k.len() as f64)
}

/// One chain's attempts added to `s`.
fn chain_stats(s: &mut Stats, id: &str, attempts: &[AttemptRecord]) {
    {
        for (i, a) in attempts.iter().enumerate() {
            let success = a.outcome == Outcome::Success;
            if let Some(c) = a.agent.as_ref().and_then(|g| g.usage.as_ref()).and_then(|u| u.cost_usd) {
                *s.cost_by_task.entry(id.to_string()).or_default() += c;
                if i > 0 {
                    s.cost_on_retries += c;
                }
            }
            s.by_attempt.entry(a.number).or_default().add(success);
            if i > 0 && a.outcome != Outcome::Stopped {
                s.by_feedback.entry(feedback_kind(&attempts[i - 1])).or_default().add(success);
            }
            let ran = a.self_checks.iter().filter(|c| c.ran_gates()).count();
            s.self_checks.calls += ran;
            s.self_checks.refused += a.self_checks.iter().filter(|c| c.refused.is_some()).count();
            if ran > 0 {
                s.self_checks.attempts += 1;
            }
            if a.self_checked_green() {
                s.self_checks.green += 1;
                if !matches!(a.outcome, Outcome::Success | Outcome::Unverified | Outcome::Stopped) {
                    s.self_checks.green_then_failed += 1;
                }
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
}

pub(crate) fn render(s: &Stats) -> String {
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
        cost_section(&mut out, s);
    }
    if s.by_lanes.keys().any(|k| *k > 1) {
        lanes_section(&mut out, s);
    }
    let sc = &s.self_checks;
    if sc.attempts > 0 || sc.refused > 0 {
        self_checks_section(&mut out, sc);
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

/// The agents' cost: in total, per task, per successful task, on retries.
fn cost_section(out: &mut String, s: &Stats) {
    let total: f64 = s.cost_by_task.values().sum();
    let ok: Vec<f64> =
        s.cost_by_task.iter().filter(|(id, _)| s.tasks.get(*id).is_some_and(|(_, ok)| *ok)).map(|(_, c)| *c).collect();
    let _ = writeln!(out, "\nagent cost, as the agents reported it:");
    let _ = writeln!(out, "  total ${total:.4}, per task ${:.4}", total / s.cost_by_task.len() as f64);
    if !ok.is_empty() {
        let _ = writeln!(out, "  per successful task ${:.4}", ok.iter().sum::<f64>() / ok.len() as f64);
    }
    let share = if total > 0.0 { 100.0 * s.cost_on_retries / total } else { 0.0 };
    let _ = writeln!(out, "  spent on retries (attempts after a task's first) ${:.4}, {share:.1}%", s.cost_on_retries);
}

/// Tasks run in lanes: success by number of lanes, pass@k, lanes by agent.
fn lanes_section(out: &mut String, s: &Stats) {
    let _ = writeln!(out, "\nsuccess rate of tasks, by their lanes (run --lanes):");
    for (k, r) in &s.by_lanes {
        let _ = writeln!(
            out,
            "  {k:>2} lane{:<2} {:>5.1}%  ({}/{} tasks)",
            plural(*k),
            r.percent(),
            r.succeeded,
            r.attempts
        );
    }
    let at: Vec<String> = s.pass_at.iter().map(|(k, p)| format!("pass@{k} {:.1}%", 100.0 * p)).collect();
    let _ = writeln!(out, "  tasks run in lanes: {}", at.join(", "));
    if s.by_agent.len() > 1 {
        let _ = writeln!(out, "  lanes by agent:");
        for (agent, r) in &s.by_agent {
            let _ = writeln!(out, "    {agent:<14} {:>5.1}%  ({}/{} lanes)", r.percent(), r.succeeded, r.attempts);
        }
    }
}

/// The agents' own runs of the gates, and how often green then failed.
fn self_checks_section(out: &mut String, sc: &SelfChecks) {
    let _ = writeln!(out, "\nself-checks (the agents' own runs of the gates, advisory):");
    let _ = writeln!(
        out,
        "  {} run{} in {} attempt{}, {} call{} refused",
        sc.calls,
        plural(sc.calls),
        sc.attempts,
        plural(sc.attempts),
        sc.refused,
        plural(sc.refused)
    );
    let _ = writeln!(
        out,
        "  green at the last self-check, then failed a real gate: {} of {} attempt{}",
        sc.green_then_failed,
        sc.green,
        plural(sc.green)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(n: u32, o: Outcome) -> AttemptRecord {
        AttemptRecord { outcome: o, ..AttemptRecord::new(n) }
    }

    fn one(attempts: Vec<AttemptRecord>) -> Vec<Chain> {
        vec![Chain { agent: None, attempts }]
    }

    #[test]
    fn rates_by_attempt_and_feedback() {
        let s = stats(&[
            ("x".into(), one(vec![a(1, Outcome::EmptyDiff), a(2, Outcome::Success)])),
            ("y".into(), one(vec![a(1, Outcome::EmptyDiff), a(2, Outcome::ScopeViolation), a(3, Outcome::Success)])),
            ("z".into(), one(vec![a(1, Outcome::Success)])),
        ]);
        assert_eq!(s.by_attempt[&1], Rate { attempts: 3, succeeded: 1 });
        assert_eq!(s.by_attempt[&2], Rate { attempts: 2, succeeded: 1 });
        assert_eq!(s.by_feedback["empty-diff"], Rate { attempts: 2, succeeded: 1 });
        assert_eq!(s.by_feedback["scope"], Rate { attempts: 1, succeeded: 1 });
        assert!(render(&s).contains("attempt 1    33.3%  (1/3)"), "{}", render(&s));
        assert!(!render(&s).contains("lanes"), "no task ran in lanes: {}", render(&s));
    }

    #[test]
    fn tasks_in_lanes_by_lane_count_pass_at_k_and_agent() {
        let lane = |agent: &str, attempts| Chain { agent: Some(agent.into()), attempts };
        let s = stats(&[
            (
                "l".into(),
                vec![
                    lane("codex", vec![a(1, Outcome::CheckFailure), a(2, Outcome::Stopped)]),
                    lane("claude-code", vec![a(1, Outcome::CheckFailure), a(2, Outcome::Success)]),
                ],
            ),
            (
                "m".into(),
                vec![lane("codex", vec![a(1, Outcome::Success)]), lane("claude-code", vec![a(1, Outcome::Stopped)])],
            ),
            ("n".into(), vec![lane("codex", vec![a(1, Outcome::EmptyDiff)]), lane("claude-code", vec![])]),
            ("x".into(), one(vec![a(1, Outcome::Success)])),
        ]);
        assert_eq!(s.by_lanes[&2], Rate { attempts: 3, succeeded: 2 });
        assert_eq!(s.by_lanes[&1], Rate { attempts: 1, succeeded: 1 });
        assert_eq!(s.pass_at[&1], 1.0 / 3.0);
        assert_eq!(s.pass_at[&2], 2.0 / 3.0);
        assert_eq!(s.by_agent["codex"], Rate { attempts: 3, succeeded: 1 });
        assert_eq!(s.by_feedback.get("check").map(|r| r.attempts), Some(1), "a stopped attempt is no retry");
        let text = render(&s);
        assert!(text.contains(" 2 lanes   66.7%  (2/3 tasks)"), "{text}");
        assert!(text.contains("pass@1 33.3%, pass@2 66.7%"), "{text}");
        assert!(text.contains("claude-code     33.3%  (1/3 lanes)"), "{text}");
    }

    #[test]
    fn self_checks_are_counted_with_the_green_ones_that_then_failed() {
        use crate::model::SelfCheck;
        let call = |passed: Option<bool>, refused: Option<&str>| SelfCheck {
            call: 1,
            tool: "run_checks".into(),
            arguments: serde_json::Value::Null,
            at_ms: 0,
            duration_ms: 0,
            summary: String::new(),
            passed,
            refused: refused.map(String::from),
        };
        let mut failed = a(1, Outcome::CheckFailure);
        failed.self_checks = vec![call(Some(false), None), call(Some(true), None)];
        let mut ok = a(2, Outcome::Success);
        ok.self_checks = vec![call(Some(true), None), call(None, Some("cap"))];
        let s = stats(&[("t".into(), one(vec![failed, ok]))]);
        assert_eq!(s.self_checks, SelfChecks { attempts: 2, calls: 3, refused: 1, green: 2, green_then_failed: 1 });
        assert!(render(&s).contains("then failed a real gate: 1 of 2 attempts"), "{}", render(&s));
    }

    #[test]
    fn pass_at_k_counts_tasks_with_a_success_among_their_first_k_lanes() {
        let tasks = vec![vec![false, true, false], vec![false, false, false], vec![true], vec![false, false, true]];
        assert_eq!(pass_at(1, &tasks), Some(0.25));
        assert_eq!(pass_at(2, &tasks), Some(1.0 / 3.0));
        assert_eq!(pass_at(3, &tasks), Some(2.0 / 3.0));
        assert_eq!(pass_at(4, &tasks), None);
    }
}
