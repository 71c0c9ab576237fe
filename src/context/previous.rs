//! The attempt that just failed, in detail ([`Previous`]): one function per
//! kind of feedback (the agent's exit, the sandbox's refusals, an empty diff,
//! scope, failing checks, notes on passing checks, the reviewer's critique,
//! the agent's own account), gathered and ordered by priority in
//! [`previous`].

use super::{Feedback, Label, Previous, required, required_change};
use crate::config::ContextConfig;
use crate::model::{AgentRun, AttemptRecord, CheckResult, ErrorItem, Outcome, ScopeReason};
use crate::text::{exit_text, human_ms, plural};

/// A fact established by a gate, shown first (priority 1).
fn fact(source: String, title: String, lines: Vec<String>, output: Vec<String>, omitted: usize) -> Feedback {
    Feedback { priority: 1, label: Label::Fact, source, title, lines, output, omitted }
}

/// Advice quoted line by line (priority 3).
fn advisory(source: &str, title: String, text: &str) -> Feedback {
    Feedback {
        priority: 3,
        label: Label::Advisory,
        source: source.into(),
        title,
        lines: text.lines().map(|l| format!("> {l}")).collect(),
        output: Vec::new(),
        omitted: 0,
    }
}

/// The agent timed out or crashed: when, its last write, the writes the
/// sandbox refused, the end of its output.
fn agent_stopped(a: &AgentRun, check_lines: usize) -> Option<Feedback> {
    if !(a.timed_out || a.crashed()) {
        return None;
    }
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
            required::name_list(&paths)
        ));
    }
    let (output, omitted) = bound(&a.output_tail, check_lines);
    if !output.is_empty() {
        lines.push("- The end of its output:".into());
    }
    Some(fact("agent".into(), title, lines, output, omitted))
}

/// The sandbox refused network connections to these hosts.
fn hosts_refused(a: &AgentRun) -> Option<Feedback> {
    if a.refused_hosts.is_empty() {
        return None;
    }
    let hosts: Vec<String> = a.refused_hosts.iter().map(|h| format!("`{h}`")).collect();
    Some(fact(
        "sandbox".into(),
        "The sandbox refused network connections".into(),
        vec![format!(
            "- Refused: {}. Only the allowed hosts are reachable; work without the others (a human can allow one in `[sandbox] network`).",
            required::name_list(&hosts)
        )],
        Vec::new(),
        0,
    ))
}

/// Detect mode saw the agent, or a check running its code, reach what the
/// other modes stop: told as a fact (nothing stopped it, nothing failed
/// for it), with what to do instead.
fn network_seen(r: &AttemptRecord) -> Option<Feedback> {
    let agent = r.agent.iter().flat_map(|a| a.network_seen.iter()).map(|n| (String::new(), n));
    let checks = r.checks.iter().flat_map(|c| c.network_seen.iter().map(|n| (format!("check `{}`: ", c.name), n)));
    let found: Vec<String> = agent
        .chain(checks)
        .filter(|(_, n)| n.is_finding())
        .map(|(who, n)| {
            let times = if n.count > 1 { format!(" ({} times)", n.count) } else { String::new() };
            format!("- {who}{}: {}{times}", n.kind, n.what)
        })
        .collect();
    if found.is_empty() {
        return None;
    }
    let mut lines = found;
    lines.push(
        "Nothing stopped these here (the sandbox only watched), and they did not fail the attempt, but a confined run refuses them: reach only the allowed hosts (the code a check runs: only those its `[[check]] network` lists, none by default), send nothing elsewhere, listen only on 127.0.0.1, and use no UNIX socket outside the worktree and `$TMPDIR` (a human can allow a host in `[sandbox] network`)."
            .into(),
    );
    Some(fact(
        "sandbox".into(),
        "The sandbox saw connections, servers and sockets it would refuse in a confined run".into(),
        lines,
        Vec::new(),
        0,
    ))
}

/// The writes outside the allowed scope, one line each with its rule.
fn scope(r: &AttemptRecord, check_lines: usize) -> Feedback {
    let lines: Vec<String> = r
        .scope
        .iter()
        .map(|v| {
            let old = v.old_path.as_ref().map(|o| format!(" (renamed from `{o}`)")).unwrap_or_default();
            if v.reason == ScopeReason::ActsAfterLand {
                return format!("- `{}`{old}: {}: {}", v.path, v.reason, required::acts_after_land(v));
            }
            if v.reason == ScopeReason::TooDeep {
                let rule = v.rule.as_deref().unwrap_or_default();
                return format!("- `{}`: {} ({rule}): cut out of the change", crate::pathfmt::brief(&v.path), v.reason);
            }
            if let Some(words) = v.reason.outside_words() {
                let what = v.rule.as_ref().map(|r| format!(" ({r})")).unwrap_or_default();
                return format!("- `{}`: {}{what}: {words}", v.path, v.reason);
            }
            let rule = v.rule.as_ref().map(|g| format!(" (rule `{g}`)")).unwrap_or_default();
            format!("- `{}`{old}: {}{rule}", v.path, v.reason)
        })
        .collect();
    let allowed = if r.allow.is_empty() { "everything".to_string() } else { r.allow.join(", ") };
    let (lines, omitted) = bound(&lines, check_lines);
    let title = if r.scope.iter().all(|v| v.reason == ScopeReason::TooDeep) {
        "Directories too deep for git to read; checks were skipped".to_string()
    } else if r.scope.iter().any(|v| v.reason == ScopeReason::ActsAfterLand) {
        format!(
            "Writes outside the allowed scope (allowed: {allowed}; a file that acts once the change lands only where an allow glob names it); checks were skipped"
        )
    } else {
        format!("Writes outside the allowed scope (allowed: {allowed}); checks were skipped")
    };
    fact("scope".into(), title, lines, Vec::new(), omitted)
}

/// What a failing check's failures amount to, after the exit in its title:
/// new ones, the base's, a timeout.
fn failing_check_what(c: &CheckResult) -> String {
    let new = c.failures.len();
    let pre = c.pre_existing.len();
    if c.timed_out {
        "it was stopped at its time limit".to_string()
    } else if c.base_tolerated && pre > 0 {
        format!("{new} new failure{}; {pre} already on the base, not counted against you", plural(new))
    } else if c.failing_on_base && pre > 0 && new == 0 {
        let (verb, pronoun) = if pre == 1 { ("fails", "it") } else { ("fail", "them") };
        format!("{pre} failure{} already on the base, which still {verb} this check: fix {pronoun} too", plural(pre))
    } else if c.failing_on_base && pre > 0 {
        format!("{new} new failure{}, and {pre} already failing on the base", plural(new))
    } else if c.failing_on_base && new == 0 {
        format!(
            "{}, on the base too, and nothing in its output could be read as a failure, so what your change added cannot be told from what was there (a human can give the check a `format` retry-run reads: docs/languages.md)",
            exit_text(c.exit_code, c.signal)
        )
    } else if c.failing_on_base {
        format!("{new} new failure{} (the base fails this check too)", plural(new))
    } else if new > 0 {
        format!("{new} failure{}", plural(new))
    } else {
        exit_text(c.exit_code, c.signal)
    }
}

/// A failing check: its failures (and the base's, unless tolerated), its
/// notes, its digested output.
fn failing_check(c: &CheckResult, targets: bool, cfg: &ContextConfig) -> Feedback {
    let check_lines = cfg.max_check_output_lines as usize;
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
    let title = if c.timed_out {
        format!("Check `{}` TIMEOUT: it was stopped at its time limit", c.name)
    } else {
        format!("Check `{}` failed ({}): {}", c.name, exit_text(c.exit_code, c.signal), failing_check_what(c))
    };
    fact(format!("check:{}", c.name), title, lines, output, cut_labels + cut_output)
}

/// A note on a check that passed but is flaky or fails on the base too
/// (priority 4): not the agent's doing.
fn passing_check_note(c: &CheckResult, targets: bool) -> Feedback {
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
    Feedback {
        priority: 4,
        label: Label::Fact,
        source: format!("check:{}", c.name),
        title,
        lines,
        output: Vec::new(),
        omitted,
    }
}

/// The reviewer's critique, quoted and clipped, when it answered with one.
fn verifier_critique(r: &AttemptRecord, cfg: &ContextConfig) -> Option<Feedback> {
    if cfg.include_verifier_feedback
        && let Some(v) = &r.verifier
        && v.answered
        && let Some(critique) = &v.critique
    {
        let text = crate::text::clip(critique, cfg.max_verifier_feedback_chars as usize, " [...]");
        let title = format!(
            "The reviewer's critique (advisory; verdict {}, confidence {:.2})",
            v.verdict.as_deref().unwrap_or("?"),
            v.confidence.unwrap_or(1.0)
        );
        return Some(advisory("verifier", title, &text));
    }
    None
}

/// The agent's own account of the failed attempt: its last words, clipped.
fn agent_notes(r: &AttemptRecord, cfg: &ContextConfig) -> Option<Feedback> {
    if cfg.include_agent_notes
        && r.outcome != Outcome::Success
        // A crash or timeout already shows the end of its output above.
        && let Some(msg) = r.agent.as_ref().filter(|a| !a.timed_out && !a.crashed()).and_then(|a| a.final_message.as_ref())
        && !msg.trim().is_empty()
    {
        let text = crate::text::clip(msg.trim(), cfg.max_agent_notes_chars as usize, " [...]");
        let title = format!("The agent's own account of attempt {} (its last words; advisory)", r.number);
        return Some(advisory("agent-notes", title, &text));
    }
    None
}

/// Every item of feedback on attempt `r`, ordered by priority.
pub(super) fn feedback(r: &AttemptRecord, cfg: &ContextConfig) -> Vec<Feedback> {
    let check_lines = cfg.max_check_output_lines as usize;
    let mut feedback = Vec::new();
    // 1. Deterministic failures: the agent's exit, scope, failing checks.
    if let Some(a) = &r.agent {
        feedback.extend(agent_stopped(a, check_lines));
        feedback.extend(hosts_refused(a));
    }
    feedback.extend(network_seen(r));
    if r.outcome == Outcome::EmptyDiff {
        let title = "The attempt changed no file".into();
        feedback.push(fact("empty-diff".into(), title, Vec::new(), Vec::new(), 0));
    }
    if !r.scope.is_empty() {
        feedback.push(scope(r, check_lines));
    }
    let targets = has_targets(r);
    feedback.extend(r.checks.iter().filter(|c| !c.passed).map(|c| failing_check(c, targets, cfg)));
    let noted = |c: &&CheckResult| c.passed && (c.flaky || c.pre_existing.iter().any(|f| !f.target));
    feedback.extend(r.checks.iter().filter(noted).map(|c| passing_check_note(c, targets)));
    feedback.extend(not_run(r));
    feedback.extend(noted_outside(r));
    // 3. The verifier's feedback, quoted, advisory; then the agent's own
    // account. (2, the errors in their code, are kept apart.)
    feedback.extend(verifier_critique(r, cfg));
    feedback.extend(agent_notes(r, cfg));
    feedback.sort_by_key(|f| f.priority);
    feedback
}

/// What was noted outside the worktree (priority 4, not a failure): files
/// in the machine's shared `/tmp` or `/dev/shm`, where `$TMPDIR` is the
/// attempt's own.
fn noted_outside(r: &AttemptRecord) -> Option<Feedback> {
    if r.noted.is_empty() {
        return None;
    }
    let lines = r
        .noted
        .iter()
        .map(|v| {
            let what = v.rule.as_ref().map(|r| format!(" ({r})")).unwrap_or_default();
            format!("- `{}`: {}{what}: {}", v.path, v.reason, v.reason.outside_words().unwrap_or_default())
        })
        .collect();
    let mut f = fact(
        "noted".into(),
        "Written outside your worktree and `$TMPDIR` while you ran (noted, not failing): keep temporary files under `$TMPDIR`"
            .into(),
        lines,
        Vec::new(),
        0,
    );
    f.priority = 4;
    Some(f)
}

/// The runs of checks `fail_fast` left (priority 4: a note on the checks),
/// each with why, so that the agent knows what it was not told.
fn not_run(r: &AttemptRecord) -> Option<Feedback> {
    if r.not_run.is_empty() {
        return None;
    }
    let lines = r.not_run.iter().map(|n| format!("- not run: {} — {}", n.label, n.reason)).collect();
    let mut f = fact("not-run".into(), "Checks not run (they did not pass or fail)".into(), lines, Vec::new(), 0);
    f.priority = 4;
    Some(f)
}

/// The attempt that just failed, in detail: its feedback (each fact backed
/// by the record and its `logs`, [`super::facts`]), its errors, its diff
/// within `max_diff_lines`. Also returns the facts left out.
pub(super) fn previous(r: &AttemptRecord, cfg: &ContextConfig, logs: &super::facts::Logs) -> (Previous, Vec<String>) {
    // 2. Specific errors: lint and compiler errors in their code.
    let errors: Vec<ErrorItem> = r.checks.iter().filter(|c| !c.passed).flat_map(|c| c.errors.iter().cloned()).collect();
    let (diff, extra) =
        if cfg.include_prior_diffs { bound(&r.diff, cfg.max_diff_lines as usize) } else { (Vec::new(), r.diff.len()) };
    let (feedback, unbacked) = super::facts::backed(feedback(r, cfg), r, logs);
    let previous = Previous {
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
    };
    (previous, unbacked)
}

/// Keeps the first `max` lines; returns them and how many were cut.
pub(super) fn bound(lines: &[String], max: usize) -> (Vec<String>, usize) {
    (lines.iter().take(max).cloned().collect(), lines.len().saturating_sub(max))
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
mod tests {
    use super::*;
    use crate::model::{CheckKind, Failure};

    fn failure(key: &str) -> Failure {
        Failure { key: key.into(), label: key.into(), test: true, target: false }
    }

    /// A failing check with `new` failures of its own and `pre` of the base's.
    fn check(new: usize, pre: usize, on_base: bool, tolerated: bool) -> CheckResult {
        let mut c = CheckResult::new("pytest", CheckKind::Test, false);
        c.exit_code = Some(1);
        c.failures = (0..new).map(|i| failure(&format!("new{i}"))).collect();
        c.pre_existing = (0..pre).map(|i| failure(&format!("old{i}"))).collect();
        c.failing_on_base = on_base;
        c.base_tolerated = tolerated;
        c
    }

    #[test]
    fn what_a_failing_check_amounts_to() {
        let mut timed_out = check(2, 0, false, false);
        timed_out.timed_out = true;
        let cases = [
            (timed_out, "it was stopped at its time limit".to_string()),
            (check(1, 2, true, true), "1 new failure; 2 already on the base, not counted against you".into()),
            (
                check(0, 1, true, false),
                "1 failure already on the base, which still fails this check: fix it too".into(),
            ),
            (
                check(0, 2, true, false),
                "2 failures already on the base, which still fail this check: fix them too".into(),
            ),
            (check(2, 1, true, false), "2 new failures, and 1 already failing on the base".into()),
            (check(1, 0, true, false), "1 new failure (the base fails this check too)".into()),
            (
                check(0, 0, true, false),
                format!(
                    "{}, on the base too, and nothing in its output could be read as a failure, so what your change added cannot be told from what was there (a human can give the check a `format` retry-run reads: docs/languages.md)",
                    exit_text(Some(1), None)
                ),
            ),
            (check(3, 0, false, false), "3 failures".into()),
            (check(0, 0, false, false), exit_text(Some(1), None)),
        ];
        for (c, want) in cases {
            assert_eq!(failing_check_what(&c), want);
        }
    }

    #[test]
    fn what_detect_mode_saw_is_told_as_a_fact_and_a_note_that_it_saw_nothing_is_not() {
        use crate::model::NetworkSeen;
        let seen = |kind: &str, what: &str, count| NetworkSeen { kind: kind.into(), what: what.into(), count };
        let mut r = AttemptRecord::new(1);
        r.agent = Some(AgentRun::default());
        assert!(network_seen(&r).is_none());
        let mut leak = CheckResult::new("leak", CheckKind::Test, false);
        leak.network_seen = vec![seen("unobserved", "detect mode could not observe ...", 0)];
        r.checks.push(leak);
        let a = r.agent.as_mut().expect("agent");
        a.network_seen = vec![seen("unobserved", "detect mode could not observe ...", 0)];
        assert!(network_seen(&r).is_none(), "nothing the agent can act on");
        let a = r.agent.as_mut().expect("agent");
        a.network_seen.push(seen("network", "TCP connect to 127.0.0.1:4000 by python3", 2));
        a.network_seen.push(seen("unix-socket", "UNIX stream connect to /run/docker.sock by curl", 1));
        r.checks[0].network_seen.push(seen("network", "TCP listen on 0.0.0.0:8080 by node", 1));
        let f = network_seen(&r).expect("told");
        assert_eq!(f.priority, 1);
        assert_eq!(f.lines[0], "- network: TCP connect to 127.0.0.1:4000 by python3 (2 times)");
        assert_eq!(f.lines[1], "- unix-socket: UNIX stream connect to /run/docker.sock by curl");
        assert_eq!(f.lines[2], "- check `leak`: network: TCP listen on 0.0.0.0:8080 by node");
        assert!(f.lines[3].contains("did not fail the attempt") && f.lines[3].contains("[sandbox] network"), "{f:?}");
        assert!(f.lines[3].contains("listen only on 127.0.0.1"), "{f:?}");
        // A check's alone is told too (an attempt whose agent saw nothing).
        r.agent = None;
        assert_eq!(
            network_seen(&r).expect("told").lines[0],
            "- check `leak`: network: TCP listen on 0.0.0.0:8080 by node"
        );
    }
}
