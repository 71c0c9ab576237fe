//! `retry-run stats`: attempts per task (and as a histogram), success rate
//! by attempt number and by the kind of feedback the attempt was given
//! (which feedback leads to a fixed next attempt), pass@k over the tasks
//! run in lanes, and what reviewers and lands said ([`review_stats`]:
//! rejections per task, repeated critiques, time from the first attempt to
//! the land). Pure over the tasks' attempt records and reviews.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use serde::Serialize;

use crate::model::{AttemptRecord, Outcome, Review, Verdict};
use crate::text::{human_ms, plural};

/// The kind of feedback an attempt's failure gives the next attempt:
/// `check:lint`, `check:test`, `scope`, `empty-diff`, `timeout`, `crash`,
/// `interrupted`, `verifier` (a rejection by a reviewer after the attempt
/// is `review`: [`Chain::rejected`]).
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
    /// Attempts a task took → how many tasks took that many.
    pub attempts_histogram: BTreeMap<usize, usize>,
    /// What reviewers and lands said ([`review_stats`]).
    pub reviews: ReviewStats,
}

/// A task's reviews, as [`review_stats`] reads them.
#[derive(Debug, Clone, Default)]
pub(crate) struct TaskReviews {
    /// Every `Reviewed` of the task, in the log's order.
    pub reviews: Vec<Review>,
    /// Milliseconds from the start of its first attempt to its first land;
    /// `None` when it never landed.
    pub to_land_ms: Option<u64>,
}

/// A task's verdicts, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub(crate) struct VerdictCount {
    pub rejected: usize,
    pub approved: usize,
}

/// What reviewers and lands said, over every task.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub(crate) struct ReviewStats {
    /// Task → its rejections and approvals (the tasks reviewed at least
    /// once).
    pub by_task: BTreeMap<String, VerdictCount>,
    /// Rejections whose required change had already rejected an earlier
    /// attempt of the same task (`repeats`), and the tasks they were in.
    pub repeated: usize,
    pub repeated_tasks: BTreeSet<String>,
    /// Task → milliseconds from its first attempt to its land.
    pub to_land_ms: BTreeMap<String, u64>,
    /// The median of those (of the two middle ones, their mean).
    pub median_to_land_ms: Option<u64>,
}

impl ReviewStats {
    fn is_empty(&self) -> bool {
        self.by_task.is_empty() && self.to_land_ms.is_empty()
    }
}

/// Rejections per task, repeated critiques, time from a task's first
/// attempt to its land.
pub(crate) fn review_stats(tasks: &[(String, TaskReviews)]) -> ReviewStats {
    let mut s = ReviewStats::default();
    for (id, t) in tasks {
        for r in &t.reviews {
            let count = s.by_task.entry(id.clone()).or_default();
            match r.verdict {
                Verdict::Rejected => count.rejected += 1,
                Verdict::Approved => count.approved += 1,
            }
            if r.verdict == Verdict::Rejected && r.repeats.is_some() {
                s.repeated += 1;
                s.repeated_tasks.insert(id.clone());
            }
        }
        if let Some(ms) = t.to_land_ms {
            s.to_land_ms.insert(id.clone(), ms);
        }
    }
    s.median_to_land_ms = median(s.to_land_ms.values().copied().collect());
    s
}

/// The median of `v` (the mean of the two middle values of an even count).
fn median(mut v: Vec<u64>) -> Option<u64> {
    v.sort_unstable();
    let n = v.len();
    match n {
        0 => None,
        n if n % 2 == 1 => Some(v[n / 2]),
        n => Some(v[n / 2 - 1] / 2 + v[n / 2] / 2 + (v[n / 2 - 1] % 2 + v[n / 2] % 2) / 2),
    }
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
    /// The attempts whose latest review rejected them (`retry-run review`,
    /// a land): the attempt after one was given that rejection, feedback
    /// `review`.
    pub rejected: BTreeSet<u32>,
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
        for c in chains {
            chain_stats(&mut s, id, c);
        }
    }
    for (n, _) in s.tasks.values() {
        *s.attempts_histogram.entry(*n).or_default() += 1;
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
fn chain_stats(s: &mut Stats, id: &str, chain: &Chain) {
    let attempts = &chain.attempts;
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
                let before = &attempts[i - 1];
                let kind =
                    if chain.rejected.contains(&before.number) { "review".to_string() } else { feedback_kind(before) };
                s.by_feedback.entry(kind).or_default().add(success);
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
    if !s.attempts_histogram.is_empty() {
        histogram_section(&mut out, &s.attempts_histogram);
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
    if !s.reviews.is_empty() {
        reviews_section(&mut out, &s.reviews);
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

/// The widest bar of the histogram, in characters.
const BAR_WIDTH: usize = 40;

/// The bar of `count` when the largest count is `most`: one block per
/// task, scaled down to [`BAR_WIDTH`] when the largest is wider (a count
/// above zero keeps at least one block).
fn bar(count: usize, most: usize) -> String {
    let width = if most <= BAR_WIDTH { count } else { (count * BAR_WIDTH).div_ceil(most) };
    "\u{2588}".repeat(width)
}

/// Tasks by the attempts they took, as text bars, every count from the
/// fewest to the most.
fn histogram_section(out: &mut String, h: &BTreeMap<usize, usize>) {
    let _ = writeln!(out, "\nattempts per task, as a histogram:");
    let (Some(lo), Some(hi)) = (h.keys().next(), h.keys().next_back()) else { return };
    let most = h.values().copied().max().unwrap_or(0);
    for n in *lo..=*hi {
        let count = h.get(&n).copied().unwrap_or(0);
        let label = format!("{n} attempt{}", plural(n));
        let bar = bar(count, most);
        let _ = writeln!(out, "  {label:<12} {bar}{}{count}", if bar.is_empty() { "" } else { " " });
    }
}

/// Rejections per task, repeated critiques, and time to land.
fn reviews_section(out: &mut String, r: &ReviewStats) {
    let _ = writeln!(out, "\nreviews (retry-run review, retry-run land):");
    if !r.by_task.is_empty() {
        let _ = writeln!(out, "  rejections per task:");
        for (id, c) in &r.by_task {
            let _ = writeln!(out, "    {id:<40} {:>3} rejected, {} approved", c.rejected, c.approved);
        }
    }
    let tasks: Vec<&str> = r.repeated_tasks.iter().map(String::as_str).collect();
    let _ = writeln!(
        out,
        "  repeated critiques (a required change that had already rejected an attempt of the task): {}{}",
        r.repeated,
        if tasks.is_empty() { String::new() } else { format!(", in {}", tasks.join(", ")) }
    );
    if let Some(m) = r.median_to_land_ms {
        let _ = writeln!(out, "  time from the first attempt to the land: median {}", human_ms(m));
        for (id, ms) in &r.to_land_ms {
            let _ = writeln!(out, "    {id:<40} {}", human_ms(*ms));
        }
    } else {
        let _ = writeln!(out, "  landed: none yet (retry-run land)");
    }
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
        vec![Chain { agent: None, attempts, rejected: BTreeSet::new() }]
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
        let lane = |agent: &str, attempts| Chain { agent: Some(agent.into()), attempts, rejected: BTreeSet::new() };
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
    fn the_attempts_per_task_histogram_as_text_bars() {
        let tasks: Vec<(String, Vec<Chain>)> = (0..11)
            .map(|i| {
                let n = if i < 8 { 1 } else { 3 };
                (format!("t{i}"), one((1..=n).map(|k| a(k, Outcome::Success)).collect()))
            })
            .collect();
        let s = stats(&tasks);
        assert_eq!(s.attempts_histogram, BTreeMap::from([(1, 8), (3, 3)]));
        let text = render(&s);
        let bars = "attempts per task, as a histogram:\n  1 attempt    \u{2588}\u{2588}\u{2588}\u{2588}\u{2588}\u{2588}\u{2588}\u{2588} 8\n  2 attempts   0\n  3 attempts   \u{2588}\u{2588}\u{2588} 3\n";
        assert!(text.contains(bars), "{text}");
        let json = serde_json::to_value(&s).expect("json");
        assert_eq!(json["attempts_histogram"], serde_json::json!({"1": 8, "3": 3}));
        // (count, the largest count, the bar's width)
        for (count, most, width) in [(0, 5, 0), (5, 5, 5), (40, 40, 40), (80, 80, 40), (1, 80, 1), (41, 80, 21)] {
            assert_eq!(bar(count, most).chars().count(), width, "{count} of {most}");
        }
    }

    #[test]
    fn rejections_repeated_critiques_and_time_to_land() {
        let review = |attempt: u32, verdict: Verdict, repeats: Option<u32>| Review {
            verdict,
            attempt,
            repeats,
            required_change: Some("Retry the 429.".into()),
            ..Review::default()
        };
        // (the tasks' reviews and time to land; rejections per task, repeated, repeated tasks, median)
        type Want = (Vec<(&'static str, usize, usize)>, usize, Vec<&'static str>, Option<u64>);
        let cases: Vec<(Vec<(&str, TaskReviews)>, Want)> = vec![
            (vec![], (vec![], 0, vec![], None)),
            (vec![("quiet", TaskReviews::default())], (vec![], 0, vec![], None)),
            (
                vec![(
                    "a",
                    TaskReviews {
                        reviews: vec![
                            review(1, Verdict::Rejected, None),
                            review(2, Verdict::Rejected, Some(1)),
                            review(3, Verdict::Rejected, Some(1)),
                            review(4, Verdict::Approved, None),
                        ],
                        to_land_ms: Some(600_000),
                    },
                )],
                (vec![("a", 3, 1)], 2, vec!["a"], Some(600_000)),
            ),
            (
                vec![
                    ("a", TaskReviews { reviews: vec![review(1, Verdict::Approved, None)], to_land_ms: Some(1_000) }),
                    ("b", TaskReviews { reviews: vec![review(1, Verdict::Rejected, None)], to_land_ms: None }),
                    ("c", TaskReviews { reviews: vec![], to_land_ms: Some(3_001) }),
                    (
                        "d",
                        TaskReviews { reviews: vec![review(2, Verdict::Rejected, Some(1))], to_land_ms: Some(9_000) },
                    ),
                    ("e", TaskReviews { reviews: vec![], to_land_ms: Some(5_000) }),
                ],
                (vec![("a", 0, 1), ("b", 1, 0), ("d", 1, 0)], 1, vec!["d"], Some(4_000)),
            ),
        ];
        for (i, (tasks, (by_task, repeated, repeated_tasks, median))) in cases.into_iter().enumerate() {
            let tasks: Vec<(String, TaskReviews)> = tasks.into_iter().map(|(id, t)| (id.to_string(), t)).collect();
            let r = review_stats(&tasks);
            let got: Vec<(&str, usize, usize)> =
                r.by_task.iter().map(|(id, c)| (id.as_str(), c.rejected, c.approved)).collect();
            assert_eq!(got, by_task, "case {i}");
            assert_eq!(r.repeated, repeated, "case {i}");
            assert_eq!(r.repeated_tasks.iter().map(String::as_str).collect::<Vec<_>>(), repeated_tasks, "case {i}");
            assert_eq!(r.median_to_land_ms, median, "case {i}");
        }
        let s = Stats {
            reviews: review_stats(&[(
                "fix-login".into(),
                TaskReviews {
                    reviews: vec![review(1, Verdict::Rejected, None), review(2, Verdict::Rejected, Some(1))],
                    to_land_ms: Some(750_000),
                },
            )]),
            ..Stats::default()
        };
        let text = render(&s);
        assert!(text.contains("  rejections per task:\n    fix-login"), "{text}");
        assert!(text.contains("  2 rejected, 0 approved\n"), "{text}");
        assert!(text.contains("already rejected an attempt of the task): 1, in fix-login\n"), "{text}");
        assert!(text.contains("time from the first attempt to the land: median 12m 30s\n"), "{text}");
        assert!(!render(&Stats::default()).contains("reviews ("), "no review, no section");
        let json = serde_json::to_value(&s).expect("json");
        assert_eq!(json["reviews"]["by_task"]["fix-login"], serde_json::json!({"rejected": 2, "approved": 0}));
        assert_eq!(json["reviews"]["median_to_land_ms"], 750_000);
    }

    #[test]
    fn a_rejected_result_is_the_next_attempt_s_feedback() {
        let chain = Chain {
            agent: None,
            attempts: vec![a(1, Outcome::Success), a(2, Outcome::Success), a(3, Outcome::Success)],
            rejected: BTreeSet::from([1]),
        };
        let s = stats(&[("t".into(), vec![chain])]);
        assert_eq!(s.by_feedback["review"], Rate { attempts: 1, succeeded: 1 });
        assert_eq!(s.by_feedback["none"], Rate { attempts: 1, succeeded: 1 }, "attempt 2 was not rejected");
    }

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        for (v, m) in [(vec![], None), (vec![3], Some(3)), (vec![4, 1], Some(2)), (vec![9, 1, 5], Some(5))] {
            assert_eq!(median(v.clone()), m, "{v:?}");
        }
        assert_eq!(median(vec![u64::MAX, u64::MAX]), Some(u64::MAX));
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
