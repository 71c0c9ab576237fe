//! `retry-run report <task>`: Markdown for the human who takes a task over
//! (docs/commands.md, `report`): the task, every attempt with its outcome,
//! checks, required change and diff summary, and what to look at first. Pure.
//!
//! The report is for a person: what it quotes from the record (the agent's
//! file names, output, test names, reasons) is shown with control
//! characters made visible (docs/commands.md, "What retry-run prints"):
//! paths by [`shown_text`], everything else by [`visible`].
//!
//! What reviewers and lands said of the results (`retry-run review`,
//! `retry-run land`) is told by [`reviews`].

mod reviews;

use std::fmt::Write;

use crate::context::{TaskText, patterns::patterns, required_change};
use crate::model::{AttemptRecord, Outcome, ScopeReason, Usage, refs};
use crate::outcome::{base_counts, near_miss};
use crate::pathfmt::shown_text;
use crate::text::{human_ms, plural, visible};
pub(crate) use reviews::Verdicts;

/// Where the task stands, from its events: it succeeded, escalated, or
/// is still open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TaskStanding {
    Succeeded {
        attempt: u32,
        branch: String,
    },
    Escalated {
        reason: String,
    },
    /// An attempt was aborted before its agent ran (the agent could not
    /// start, the worktree could not be prepared), and nothing ran since.
    Stopped {
        attempt: u32,
        reason: String,
    },
    Open,
}

/// What the last attempt alone says to look at first: interrupted before
/// its snapshot, a check that tested the checkout, a reviewer that never
/// answered or asked for a human.
fn last_attempt_look(task: &str, last: &AttemptRecord, standing: &TaskStanding) -> Option<String> {
    if *standing == TaskStanding::Open && last.interrupted && last.outcome == Outcome::Crash && last.commit.is_none() {
        return Some(format!(
            "Attempt {n} was interrupted before its snapshot: what it wrote was neither recorded nor judged, and is listed under \"The worktree now\" when the worktree still holds it. Running the task again resets the worktree and goes on at attempt {next}.",
            n = last.number,
            next = last.number + 1
        ));
    }
    if let Some(c) = crate::outcome::tested_checkout(last) {
        return Some(format!(
            "Check `{}` on attempt {n} tested your checkout, not the attempt: its output points into {}. The attempt is kept unjudged (`retry-run inspect {task}/{n} --diff`). {}.",
            c.name,
            c.tested_checkout.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", "),
            crate::outcome::TESTED_CHECKOUT_ADVICE,
            n = last.number
        ));
    }
    if last.outcome == Outcome::Unverified {
        return Some(format!(
            "The reviewer never answered on attempt {n}, which passed every other gate: its work is kept. Review it yourself (`retry-run inspect {task}/{n} --diff`), and check the verifier command.",
            n = last.number
        ));
    }
    if last.verifier.as_ref().is_some_and(|v| v.escalates()) {
        return Some(format!(
            "The reviewer asked for a human on attempt {n}: read its critique below and the diff (`retry-run inspect {task}/{n} --diff`).",
            n = last.number
        ));
    }
    None
}

/// What an attempt wrote outside its worktree: the user's checkout, or
/// (nothing confining it) the repository's machinery beside it.
fn outside_look(attempts: &[AttemptRecord]) -> Option<String> {
    let outside: Vec<String> = attempts
        .iter()
        .flat_map(|a| a.scope.iter().filter(|v| v.reason == ScopeReason::OutsideWorktree))
        .map(|v| format!("`{}`", shown_text(&v.path)))
        .collect();
    if !outside.is_empty() {
        return Some(format!(
            "An attempt changed your own checkout, outside its worktree: {}. retry-run does not undo this: look at `git status` and `git diff` in your checkout first, and consider `[sandbox] mode = \"namespaces\"` (or `\"landlock\"`).",
            crate::context::required::name_list(&outside)
        ));
    }
    let beside: Vec<String> = attempts
        .iter()
        .flat_map(|a| a.scope.iter().filter(|v| v.reason.outside_words().is_some()))
        .map(|v| format!("`{}` ({})", shown_text(&v.path), v.reason))
        .collect();
    if !beside.is_empty() {
        return Some(format!(
            "Nothing confined an attempt and it wrote outside its worktree: {}. retry-run puts back only its own event log: look at each yourself first (a remote's ref: `git push --force-with-lease` it back from your reflog; a lock: remove it once no git runs), and consider `[sandbox] mode = \"namespaces\"` (or `\"landlock\"`).",
            crate::context::required::name_list(&beside)
        ));
    }
    None
}

/// What a human should look at first; after a reviewer's verdict or a
/// land of the result, what to do next.
pub(crate) fn first_look(
    task: &str,
    attempts: &[AttemptRecord],
    standing: &TaskStanding,
    verdicts: &Verdicts,
) -> String {
    if let TaskStanding::Stopped { attempt, reason } = standing {
        return format!(
            "The task stopped at attempt {attempt}, before its agent ran, and spent none of its budget: {reason}. Fix that first; `retry-run run --id {task}` then continues (with `--` and the agent after it when the agent was given there)."
        );
    }
    // A task run in lanes has its attempts in its lanes' records: its own
    // list is empty, its result is still there to review and land.
    if let TaskStanding::Succeeded { attempt, branch } = standing {
        return reviews::next_step(task, *attempt, verdicts)
            .unwrap_or_else(|| succeeded_look(task, attempts, *attempt, branch));
    }
    let Some(last) = attempts.last() else {
        return "No attempt has run yet: `retry-run run` starts the task.".into();
    };
    if let Some(text) = last_attempt_look(task, last, standing).or_else(|| outside_look(attempts)) {
        return text;
    }
    if only_base_failures(attempts) {
        return "Every attempt failed only on failures that were already failing on the base (listed below): the agent did not fix them, and no attempt added one of its own. Either fix the base, or, if those failures are not this task's business, set `retry.baseline = \"tolerate\"` in the task's front matter together with `targets = [...]` naming the tests the task must make pass.".into();
    }
    if let Some((a, what)) = attempts.iter().rev().find_map(|a| near_miss(a).map(|w| (a, w))) {
        return format!(
            "Attempt {n} passed every test{targets} and failed only on {what}: start from its diff (`retry-run inspect {task}/{n} --diff`), which may need only that fixed.",
            n = a.number,
            targets = if crate::context::has_targets(a) { " and target" } else { "" },
        );
    }
    if let Some(text) = scope_look(attempts) {
        return text;
    }
    if let Some(p) = patterns(attempts, 0.0).into_iter().find(|p| p.kind == "same-failing-test") {
        return format!(
            "{} The test itself, or the task's description of the expected behaviour, may be wrong; start there (`retry-run inspect {task}/{} --checks`).",
            p.observation, last.number
        );
    }
    format!(
        "Start with attempt {n}, the last: {} (`retry-run inspect {task}/{n} --diff`, `--checks`).",
        required_change(last).text,
        n = last.number
    )
}

/// What to look at first when attempt `attempt` passed every gate: its
/// branch, then what it leaves to the reviewer (the base's failures it
/// tolerated, flagged files, test integrity warnings), and how to give
/// the verdict.
fn succeeded_look(task: &str, attempts: &[AttemptRecord], attempt: u32, branch: &str) -> String {
    let mut text = format!(
        "Attempt {attempt} passed every gate: review branch `{branch}` (`git diff {branch}~1 {branch}`) before merging it. Then `retry-run review {task} --approve` and `retry-run land {task}`, or `retry-run review {task} --required-change \"...\"` to send it back."
    );
    if let Some(a) = attempts.iter().find(|a| a.number == attempt) {
        let counts = base_counts(a);
        if !counts.is_empty() {
            text.push_str(&format!(
                " These failures were already on the base and still fail, {}: {}.",
                crate::outcome::tolerated_by(a),
                counts.join("; ")
            ));
        }
        if !a.flagged.is_empty() {
            let flagged: Vec<String> = a.flagged.iter().map(|f| format!("`{}`", f.path)).collect();
            text.push_str(&format!(
                " It changes files that act once it lands, flagged (`[scope] acts_after_land = \"flag\"`): {}; read them first.",
                crate::context::required::name_list(&flagged)
            ));
        }
        let warnings: Vec<&str> = a.checks.iter().flat_map(|c| c.warnings.iter().map(|w| w.label.as_str())).collect();
        if !warnings.is_empty() {
            text.push_str(&format!(
                " Test integrity warnings (`retry.test_weakening = \"warn\"`): {}.",
                warnings.join("; ")
            ));
        }
    }
    text
}

/// What to look at first when every attempt wrote outside the allowed
/// scope: the files that act once the change lands, when those were all of
/// it, or the scope itself.
fn scope_look(attempts: &[AttemptRecord]) -> Option<String> {
    let all_scope = attempts.iter().all(|a| a.outcome == Outcome::ScopeViolation);
    let all_acting = attempts.iter().all(|a| {
        a.outcome == Outcome::ScopeViolation
            && !a.scope.is_empty()
            && a.scope.iter().all(|v| v.reason == ScopeReason::ActsAfterLand)
    });
    if all_acting {
        let names: Vec<String> = attempts
            .iter()
            .flat_map(|a| a.scope.iter().map(|v| format!("`{}`", v.path)))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        return Some(format!(
            "Every attempt changed files that act once the change lands (git, editors, CI or shells run or honour them): {}. If the task needs them, name them in the task's `[scope] allow` (docs/sandbox.md, \"What would act after the land\"); otherwise the task should say to leave them alone.",
            crate::context::required::name_list(&names)
        ));
    }
    if all_scope {
        return Some("Every attempt wrote outside the allowed scope: either the task needs files outside `[scope] allow`, or the task should say where to write.".into());
    }
    None
}

/// The agent's usage summed over `attempts` (fields absent everywhere stay absent).
pub(crate) fn total_usage(attempts: &[AttemptRecord]) -> Option<Usage> {
    let all: Vec<&Usage> = attempts.iter().filter_map(|a| a.agent.as_ref()?.usage.as_ref()).collect();
    if all.is_empty() {
        return None;
    }
    let sum_u = |f: fn(&Usage) -> Option<u64>| {
        let v: Vec<u64> = all.iter().filter_map(|u| f(u)).collect();
        (!v.is_empty()).then(|| v.iter().sum())
    };
    let costs: Vec<f64> = all.iter().filter_map(|u| u.cost_usd).collect();
    Some(Usage {
        input_tokens: sum_u(|u| u.input_tokens),
        output_tokens: sum_u(|u| u.output_tokens),
        cost_usd: (!costs.is_empty()).then(|| costs.iter().sum()),
        turns: sum_u(|u| u.turns),
    })
}

/// `3 turns, 2,400 tokens in, 160 out, $0.0160`.
fn usage_text(u: &Usage) -> String {
    let mut parts = Vec::new();
    if let Some(t) = u.turns {
        parts.push(format!("{t} turn{}", plural(t as usize)));
    }
    if let Some(i) = u.input_tokens {
        parts.push(format!("{i} tokens in"));
    }
    if let Some(o) = u.output_tokens {
        parts.push(format!("{o} out"));
    }
    if let Some(c) = u.cost_usd {
        parts.push(format!("${c:.4}"));
    }
    parts.join(", ")
}

/// Every attempt was a CHECK_FAILURE whose failing checks failed only on
/// the base's own failures (baseline `label`).
fn only_base_failures(attempts: &[AttemptRecord]) -> bool {
    !attempts.is_empty()
        && attempts.iter().all(|a| {
            a.outcome == Outcome::CheckFailure
                && a.failed_checks().all(|c| c.failures.is_empty() && !c.pre_existing.is_empty())
        })
}

/// Lines of the agent's output a report quotes after a crash or timeout.
const AGENT_LINES: usize = 15;

/// The agent's last lines, as a fenced block under the attempt (nothing
/// when it printed nothing).
fn last_lines(tail: &[String]) -> String {
    let lines: Vec<&String> = tail.iter().rev().filter(|l| !l.trim().is_empty()).take(AGENT_LINES).collect();
    if lines.is_empty() {
        return "- The agent printed nothing\n".into();
    }
    let mut out = format!("- The agent's last {} line{}:\n\n", lines.len(), plural(lines.len()));
    out.push_str("  ```text\n");
    for l in lines.iter().rev() {
        out.push_str(&format!("  {}\n", visible(&crate::text::clip(l, 300, "...")).replace("```", "`\u{200b}``")));
    }
    out.push_str("  ```\n");
    out
}

/// What the task's worktree holds now, told by the report when the last
/// attempt stopped before its snapshot (an interruption): its path and
/// each changed path with its status (`M`, `A`, `D`, `??`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WorktreeNow {
    pub path: String,
    pub changes: Vec<(String, String)>,
}

/// The section on [`WorktreeNow`]. Pure.
pub(crate) fn worktree_section(wt: Option<&WorktreeNow>) -> String {
    let mut s = String::from("\n## The worktree now\n\n");
    match wt {
        None => s.push_str("The task has no worktree any more: nothing of the interrupted attempt is left.\n"),
        Some(w) if w.changes.is_empty() => {
            let _ = writeln!(s, "`{}` holds no change from the base.", shown_text(&w.path));
        }
        Some(w) => {
            let _ = writeln!(
                s,
                "The interrupted attempt's edits are still in `{}` (not recorded, not judged); the next `run` of the task resets them:\n",
                shown_text(&w.path)
            );
            for (status, path) in &w.changes {
                let _ = writeln!(s, "- {status} `{}`", shown_text(path));
            }
            let _ = writeln!(s, "\nTo keep them, copy them out of the worktree before the task runs again.");
        }
    }
    s
}

/// The report of a task; `unconfined` names what ran without confinement by
/// the config's choice (said at the top); `verdicts`, what its reviewers
/// and lands said.
pub(crate) fn render(
    task: &TaskText,
    base: Option<&str>,
    attempts: &[AttemptRecord],
    standing: &TaskStanding,
    unconfined: &[String],
    verdicts: &Verdicts,
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# retry-run report: {}", task.title);
    let _ = writeln!(s);
    let status = match standing {
        TaskStanding::Succeeded { attempt, branch } => format!("succeeded at attempt {attempt} (branch `{branch}`)"),
        TaskStanding::Escalated { reason } => format!("escalated: {reason}"),
        TaskStanding::Stopped { attempt, .. } => format!("stopped at attempt {attempt}, before its agent ran"),
        TaskStanding::Open => "not finished".into(),
    };
    let _ = writeln!(s, "- Task: `{}`", task.id);
    let _ = writeln!(s, "- Status: {status}");
    if let TaskStanding::Succeeded { attempt, .. } = standing
        && let Some(label) = verdicts.label(*attempt)
    {
        let _ = writeln!(s, "- Review: {label}");
    }
    if let Some(b) = base {
        let _ = writeln!(s, "- Base: `{b}`");
    }
    let _ = writeln!(s, "- Attempts: {}", attempts.len());
    for u in unconfined {
        let _ = writeln!(s, "- Unconfined by your config: {u}");
    }
    if let Some(total) = total_usage(attempts) {
        let _ = writeln!(s, "- Agent usage, all attempts: {}", usage_text(&total));
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "## Look at this first");
    let _ = writeln!(s);
    let _ = writeln!(s, "{}", first_look(&task.id, attempts, standing, verdicts));
    let _ = writeln!(s);
    let _ = writeln!(s, "## Attempts");
    for a in attempts {
        attempt_section(&mut s, &task.id, a);
    }
    s.push_str(&reviews::reviews_section(&task.id, verdicts.reviews));
    s.push_str(&reviews::landed_section(verdicts.landed));
    let _ = writeln!(s);
    let _ = writeln!(s, "## The task");
    let _ = writeln!(s);
    let _ = write!(s, "{}", task.text);
    visible(&s).into_owned()
}

/// One attempt's section: its outcome, why, what it changed, what the
/// gates and the sandbox said.
fn attempt_section(s: &mut String, task: &str, a: &AttemptRecord) {
    let _ = writeln!(s);
    let _ = writeln!(s, "### Attempt {}: {} ({})", a.number, a.outcome.as_str(), human_ms(a.duration_ms));
    let _ = writeln!(s);
    let _ = writeln!(s, "- Why: {}", a.reason);
    // An interrupted attempt's required change is the next prompt's
    // ("nothing of it was kept" is true of the next attempt's worktree,
    // not of the one a reader may find).
    if a.outcome != Outcome::Success && !a.interrupted {
        let r = required_change(a);
        let label = if r.advisory { " (the reviewer's words)" } else { "" };
        let _ = writeln!(s, "- Required change{label}: {}", r.text);
    }
    if let Some(c) = &a.commit {
        let _ = writeln!(s, "- Commit: `{c}` (`{}`)", refs::attempt(task, a.number));
    }
    if let Some(line) = provider_line(a) {
        let _ = writeln!(s, "{line}");
    }
    if let Some(u) = a.agent.as_ref().and_then(|g| g.usage.as_ref()) {
        let _ = writeln!(s, "- Agent usage: {}", usage_text(u));
    }
    if let Some(g) = &a.agent
        && !g.leftovers.is_empty()
    {
        let _ = writeln!(s, "- Leftovers, kept out of the change (agent.leftovers): {}", g.leftovers.join(", "));
    }
    files_lines(s, a);
    scope_lines(s, a);
    sandbox_lines(s, a);
    for c in &a.checks {
        check_lines(s, task, a, c);
    }
    for n in &a.not_run {
        let _ = writeln!(s, "- Check `{}`: not run — {}", n.label, n.reason);
    }
    verifier_lines(s, a);
    if let Some(line) = self_checks_line(a) {
        let _ = writeln!(s, "{line}");
    }
}

/// The runs of the attempt's agent its model provider failed, in one
/// line: not the agent's failures, not counted.
fn provider_line(a: &AttemptRecord) -> Option<String> {
    let last = a.provider_failures.last()?;
    let n = a.provider_failures.len();
    let kind = last.kind.replace('_', " ");
    Some(format!(
        "- The model provider failed the agent {n} time(s), run again from the attempt's start and not counted (last: {kind}, `{}`)",
        crate::text::clip(&last.said, 160, "...")
    ))
}

/// The files the attempt changed, or why none are listed.
fn files_lines(s: &mut String, a: &AttemptRecord) {
    if a.files.is_empty() && a.interrupted && a.commit.is_none() {
        let _ = writeln!(s, "- Files: not recorded (stopped before its snapshot; see \"The worktree now\" below)");
    } else if a.files.is_empty() {
        let _ = writeln!(s, "- Files: none changed");
    } else {
        let _ = writeln!(s, "- Files:");
        for f in &a.files {
            let old = f.old_path.as_ref().map(|o| format!(" (from `{}`)", shown_text(o))).unwrap_or_default();
            let path = shown_text(&f.path);
            let _ = writeln!(s, "  - {} `{path}`{old} +{} -{}", f.status, f.additions, f.deletions);
        }
    }
}

/// Its scope violations and the files flagged without failing.
fn scope_lines(s: &mut String, a: &AttemptRecord) {
    for v in &a.scope {
        if v.reason == ScopeReason::ActsAfterLand {
            let _ = writeln!(
                s,
                "- Scope violation: `{}`: {}: {}",
                v.path,
                v.reason,
                crate::context::required::acts_after_land(v)
            );
            continue;
        }
        if let Some(words) = v.reason.outside_words() {
            let what = v.rule.as_ref().map(|r| format!(" ({})", visible(r))).unwrap_or_default();
            let _ = writeln!(s, "- Scope violation: `{}`: {}{what}: {words}", shown_text(&v.path), v.reason);
            continue;
        }
        let rule = v.rule.as_ref().map(|r| format!(" (rule `{r}`)")).unwrap_or_default();
        let _ = writeln!(s, "- Scope violation: `{}`: {}{rule}", shown_text(&v.path), v.reason);
    }
    for v in &a.noted {
        let what = v.rule.as_ref().map(|r| format!(" ({})", visible(r))).unwrap_or_default();
        let _ = writeln!(
            s,
            "- Noted, not failing: `{}`: {}{what}: {}; known by its time alone, so another program of yours may have written it",
            shown_text(&v.path),
            v.reason,
            v.reason.outside_words().unwrap_or_default()
        );
    }
    for v in &a.flagged {
        let _ = writeln!(
            s,
            "- Flagged, not failing (`[scope] acts_after_land = \"flag\"`): `{}`: {}",
            v.path,
            crate::context::required::acts_after_land(v)
        );
    }
}

/// What was restored, the agent's last lines after a crash or timeout, and
/// what the sandbox refused or limited.
fn sandbox_lines(s: &mut String, a: &AttemptRecord) {
    if !a.restored.is_empty() {
        let _ = writeln!(
            s,
            "- Restored: the attempt changed the repository's {}; retry-run put back what was there before it",
            a.restored.iter().map(|r| format!("`{r}`")).collect::<Vec<_>>().join(", ")
        );
    }
    if let Some(agent) = a.agent.as_ref().filter(|_| matches!(a.outcome, Outcome::Crash | Outcome::Timeout)) {
        let _ = write!(s, "{}", last_lines(&agent.output_tail));
    }
    if let Some(agent) = &a.agent
        && !agent.refused.is_empty()
    {
        let _ = writeln!(
            s,
            "- The sandbox refused writes to {}; if the agent needs one of them, add it to `[sandbox] writable`",
            agent.refused.iter().map(|r| format!("`{r}`")).collect::<Vec<_>>().join(", ")
        );
    }
    for hit in a.agent.iter().flat_map(|g| g.limits_hit.iter()) {
        let _ = writeln!(s, "- Sandbox limit: {hit} (`[sandbox] max_processes`, `max_file_size`)");
    }
    if let Some(agent) = &a.agent
        && !agent.refused_hosts.is_empty()
    {
        let _ = writeln!(
            s,
            "- The sandbox refused connections to {}; if the agent needs one of them, add it to `[sandbox] network`",
            agent.refused_hosts.iter().map(|r| format!("`{r}`")).collect::<Vec<_>>().join(", ")
        );
    }
    network_seen_lines(s, a);
}

/// Detect mode's findings: one line each for what the agent and each
/// check (named) reached that the other modes would have stopped (seen,
/// not stopped), and why nothing could be seen, when nothing could.
fn network_seen_lines(s: &mut String, a: &AttemptRecord) {
    let agent = a.agent.iter().flat_map(|g| g.network_seen.iter()).map(|n| (String::new(), n));
    let checks = a.checks.iter().flat_map(|c| {
        let part = if c.targets_only { " (targets)" } else { "" };
        c.network_seen.iter().map(move |n| (format!("check `{}`{part}: ", visible(&c.name)), n))
    });
    for (who, n) in agent.chain(checks) {
        if !n.is_finding() {
            let _ = writeln!(s, "- Detect mode: {who}{}", visible(&n.what));
            continue;
        }
        let times = if n.count > 1 { format!(" ({} times)", n.count) } else { String::new() };
        let _ = writeln!(
            s,
            "- Seen in detect mode, not stopped (the other modes refuse it): {who}{}: {}{times}",
            n.kind,
            visible(&n.what)
        );
    }
}

/// One check: its state (and the earlier run it reused, when it was not
/// run), and its failures (the base's too, warnings after), at most ten.
fn check_lines(s: &mut String, task: &str, a: &AttemptRecord, c: &crate::model::CheckResult) {
    let state = c.verdict().words().1;
    let pre = if c.pre_existing.is_empty() {
        String::new()
    } else if c.base_tolerated {
        format!(", {} already on the base, {} new", c.pre_existing.len(), c.failures.len())
    } else {
        format!(", {} already failing on the base", c.pre_existing.len())
    };
    let reused =
        c.reused.as_ref().map(|r| format!(" (reused from {}: not run again)", r.describe(task))).unwrap_or_default();
    let only = if c.targets_only { " (targets only)" } else { "" };
    let _ = writeln!(s, "- Check `{}`{only}: {state}{reused}{pre}", c.name);
    let listed: Vec<String> = c
        .failures
        .iter()
        .map(|f| f.label.clone())
        .chain(
            c.pre_existing
                .iter()
                .filter(|_| !c.base_tolerated)
                .map(|f| format!("{} ({})", f.label, crate::context::on_base(f, crate::context::has_targets(a)))),
        )
        .chain(c.warnings.iter().map(|f| format!("warning: {}", f.label)))
        .collect();
    for f in listed.iter().take(10) {
        let _ = writeln!(s, "  - {f}");
    }
    if listed.len() > 10 {
        let _ = writeln!(s, "  - [... {} more]", listed.len() - 10);
    }
}

/// The reviewer's verdict and critique, or why it gave none.
fn verifier_lines(s: &mut String, a: &AttemptRecord) {
    if let Some(v) = &a.verifier {
        if v.answered {
            let _ = writeln!(
                s,
                "- Reviewer: {} (confidence {:.2})",
                v.verdict.as_deref().unwrap_or("?"),
                v.confidence.unwrap_or(1.0)
            );
            if let Some(c) = &v.critique {
                for line in c.lines() {
                    let _ = writeln!(s, "  > {line}");
                }
            }
        } else {
            let _ = writeln!(s, "- Reviewer: no answer after {} call(s)", v.calls);
            for p in &v.problems {
                let _ = writeln!(s, "  - {p}");
            }
        }
    }
}

/// What the attempt's agent did with the self-check tools (docs/mcp.md),
/// when it used them: its runs of the gates and how they ended, and
/// whether the real gates then disagreed with its last green one.
fn self_checks_line(a: &AttemptRecord) -> Option<String> {
    if a.self_checks.is_empty() {
        return None;
    }
    let runs: Vec<&str> = a
        .self_checks
        .iter()
        .filter(|c| c.ran_gates())
        .map(|c| if c.passed == Some(true) { "green" } else { "FAIL" })
        .collect();
    let others = a.self_checks.len() - runs.len();
    let ms: u64 = a.self_checks.iter().map(|c| c.duration_ms).sum();
    let mut line = format!(
        "- Self-checks (advisory): {} run{} of the gates{}, {others} other call{}, {}",
        runs.len(),
        plural(runs.len()),
        if runs.is_empty() { String::new() } else { format!(" ({})", runs.join(", ")) },
        plural(others),
        human_ms(ms)
    );
    if a.self_checked_green() && !matches!(a.outcome, Outcome::Success | Outcome::Unverified | Outcome::Stopped) {
        line.push_str("; green at its last self-check, then the real gates failed it");
    }
    Some(line)
}

/// One lane of a task run in lanes, for [`lanes_section`].
#[derive(Debug, Clone)]
pub(crate) struct LaneSection {
    pub lane: u32,
    pub agent: String,
    /// `succeeded`, `escalated`, `stopped` or `unfinished`.
    pub ending: String,
    pub attempts: Vec<AttemptRecord>,
}

/// The lanes of a task side by side: each attempt's outcome, the agent's
/// cost, the last diff's size and what stopped the lane; then which lane
/// was chosen and why.
pub(crate) fn lanes_section(lanes: &[LaneSection], chosen: Option<(u32, &str)>) -> String {
    let mut s = String::from(
        "\n## Lanes\n\n| lane | agent | ended | attempts | cost | last diff | stopped by |\n|---|---|---|---|---|---|---|\n",
    );
    for l in lanes {
        let outcomes: Vec<&str> = l.attempts.iter().map(|a| a.outcome.as_str()).collect();
        let cost = total_usage(&l.attempts).and_then(|u| u.cost_usd).map_or("-".to_string(), |c| format!("${c:.4}"));
        let diff = l.attempts.last().map_or("-".to_string(), |a| {
            let (add, del) = a.files.iter().fold((0, 0), |(x, y), f| (x + f.additions, y + f.deletions));
            format!("+{add} -{del}")
        });
        let stopped_by = match l.attempts.last() {
            Some(a) if a.outcome != Outcome::Success => a.reason.replace('|', "\\|"),
            _ => "-".to_string(),
        };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {cost} | {diff} | {stopped_by} |",
            l.lane,
            l.agent,
            l.ending,
            if outcomes.is_empty() { "-".to_string() } else { outcomes.join(", ") }
        );
    }
    if let Some((lane, why)) = chosen {
        let _ = writeln!(s, "\nChosen: lane {lane}, {why}. Each lane's record: `retry-run report TASK/lanes/N`.");
    }
    visible(&s).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_side_by_side() {
        let mut failed = AttemptRecord::new(1);
        failed.outcome = Outcome::CheckFailure;
        failed.reason = "check `t` failed | badly".into();
        let mut ok = AttemptRecord::new(2);
        ok.outcome = Outcome::Success;
        ok.files.push(crate::model::FileChange {
            path: "a".into(),
            old_path: None,
            status: "M".into(),
            additions: 3,
            deletions: 1,
            binary: false,
        });
        let lanes = [
            LaneSection { lane: 1, agent: "codex".into(), ending: "stopped".into(), attempts: vec![failed.clone()] },
            LaneSection {
                lane: 2,
                agent: "claude-code".into(),
                ending: "succeeded".into(),
                attempts: vec![failed, ok],
            },
        ];
        let md = lanes_section(&lanes, Some((2, "the first lane whose attempt passed every gate")));
        assert!(
            md.contains("| 1 | codex | stopped | CHECK_FAILURE | - | +0 -0 | check `t` failed \\| badly |"),
            "{md}"
        );
        assert!(md.contains("| 2 | claude-code | succeeded | CHECK_FAILURE, SUCCESS | - | +3 -1 | - |"), "{md}");
        assert!(md.contains("Chosen: lane 2, the first lane whose attempt passed every gate."), "{md}");
    }
    use crate::model::VerifierResult;

    #[test]
    fn first_look_points_at_a_silent_reviewer() {
        let mut a = AttemptRecord::new(2);
        a.outcome = Outcome::Unverified;
        a.verifier = Some(VerifierResult { calls: 3, ..VerifierResult::default() });
        let text = first_look(
            "t",
            &[AttemptRecord::new(1), a],
            &TaskStanding::Escalated { reason: "x".into() },
            &Verdicts::default(),
        );
        assert!(text.starts_with("The reviewer never answered on attempt 2"), "{text}");
        assert!(text.contains("retry-run inspect t/2 --diff"));
    }

    #[test]
    fn first_look_says_when_only_the_base_failures_failed() {
        use crate::model::CheckKind;
        use crate::model::{CheckResult, Failure};
        let attempt = |n: u32| {
            let mut a = AttemptRecord::new(n);
            a.outcome = Outcome::CheckFailure;
            let mut c = CheckResult::new("pytest", CheckKind::Test, false);
            c.failing_on_base = true;
            c.pre_existing = vec![Failure {
                key: "t.py::test_a".into(),
                label: "t.py::test_a".into(),
                test: true,
                ..Default::default()
            }];
            a.checks = vec![c];
            a
        };
        let standing = TaskStanding::Escalated { reason: "2 attempts failed".into() };
        let text = first_look("t", &[attempt(1), attempt(2)], &standing, &Verdicts::default());
        assert!(text.contains("already failing on the base") && text.contains("targets"), "{text}");
        let mut other = attempt(3);
        other.checks[0].failures = other.checks[0].pre_existing.clone();
        assert!(
            !first_look("t", &[attempt(1), other], &standing, &Verdicts::default())
                .contains("already failing on the base")
        );
    }

    #[test]
    fn report_lists_every_attempt_and_the_task() {
        let task = TaskText { id: "t".into(), title: "Fix it".into(), text: "# Fix it\n".into() };
        let mut a = AttemptRecord::new(1);
        a.outcome = Outcome::EmptyDiff;
        a.reason = "the attempt changed no file".into();
        let unconfined = vec!["worktree.setup runs unconfined".to_string()];
        let md = render(
            &task,
            Some("abc"),
            &[a],
            &TaskStanding::Escalated { reason: "1 attempt failed".into() },
            &unconfined,
            &Verdicts::default(),
        );
        assert!(md.contains("- Unconfined by your config: worktree.setup runs unconfined"), "{md}");
        assert!(md.contains("### Attempt 1: EMPTY_DIFF"));
        assert!(md.contains("- Required change: Make actual changes"));
        assert!(md.ends_with("## The task\n\n# Fix it\n"));
    }

    #[test]
    fn what_detect_mode_saw_is_one_line_each() {
        use crate::model::{AgentRun, NetworkSeen};
        let seen = |kind: &str, what: &str, count| NetworkSeen { kind: kind.into(), what: what.into(), count };
        let mut a = AttemptRecord::new(1);
        a.agent = Some(AgentRun {
            network_seen: vec![
                seen("network", "TCP connect to 127.0.0.1:4000 by python3", 3),
                seen("unix-socket", "UNIX stream connect to the abstract socket @bus\u{1b} by x", 1),
                seen("unobserved", "detect mode could not observe the command's connections and sockets: why", 0),
            ],
            ..AgentRun::default()
        });
        let mut leak = crate::model::CheckResult::new("leak", crate::model::CheckKind::Test, true);
        leak.network_seen = vec![seen("network", "TCP listen on 0.0.0.0:8080 by node", 1)];
        a.checks.push(leak);
        let mut s = String::new();
        network_seen_lines(&mut s, &a);
        assert_eq!(
            s,
            "- Seen in detect mode, not stopped (the other modes refuse it): network: TCP connect to 127.0.0.1:4000 by python3 (3 times)\n\
             - Seen in detect mode, not stopped (the other modes refuse it): unix-socket: UNIX stream connect to the abstract socket @bus\\x1b by x\n\
             - Detect mode: detect mode could not observe the command's connections and sockets: why\n\
             - Seen in detect mode, not stopped (the other modes refuse it): check `leak`: network: TCP listen on 0.0.0.0:8080 by node\n"
        );
    }

    #[test]
    fn a_run_fail_fast_left_is_shown_not_run_never_passed() {
        use crate::model::{CheckKind, CheckResult, NotRun};
        let task = TaskText { id: "t".into(), title: "Fix it".into(), text: "# Fix it\n".into() };
        let mut a = AttemptRecord::new(1);
        a.outcome = Outcome::CheckFailure;
        let mut targets = CheckResult::new("tests", CheckKind::Test, false);
        targets.targets_only = true;
        a.checks = vec![targets];
        a.not_run = vec![NotRun {
            check: "tests".into(),
            part: "full".into(),
            label: "tests (full suite)".into(),
            reason: "the targets (in `tests`) failed first; fail_fast = \"targets\"".into(),
        }];
        let md = render(&task, None, &[a], &TaskStanding::Escalated { reason: "1".into() }, &[], &Verdicts::default());
        assert!(md.contains("- Check `tests` (targets only): FAILED"), "{md}");
        assert!(
            md.contains(
                "- Check `tests (full suite)`: not run — the targets (in `tests`) failed first; fail_fast = \"targets\""
            ),
            "{md}"
        );
        assert!(!md.contains("`tests (full suite)`: passed"), "{md}");
    }

    #[test]
    fn reviews_and_the_land_follow_the_attempts_and_say_what_to_do_next() {
        use crate::model::{Landed, Review, Verdict};
        let task = TaskText { id: "t".into(), title: "Fix it".into(), text: "# Fix it\n".into() };
        let mut a = AttemptRecord::new(1);
        a.outcome = Outcome::Success;
        let standing = TaskStanding::Succeeded { attempt: 1, branch: "retry-run/t".into() };
        let md = render(&task, None, std::slice::from_ref(&a), &standing, &[], &Verdicts::default());
        assert!(md.contains("`retry-run review t --approve` and `retry-run land t`"), "{md}");
        assert!(!md.contains("- Review:") && !md.contains("## Reviews") && !md.contains("## Landed"), "{md}");
        let rejected = Review {
            verdict: Verdict::Rejected,
            attempt: 1,
            by: "Ann".into(),
            required_change: Some("Retry the 429.".into()),
            ..Review::default()
        };
        let reviews = [rejected];
        let v = Verdicts { reviews: &reviews, landed: None };
        let md = render(&task, None, std::slice::from_ref(&a), &standing, &[], &v);
        assert!(md.contains("- Status: succeeded at attempt 1 (branch `retry-run/t`)\n- Review: rejected\n"), "{md}");
        assert!(md.contains("Attempt 1 was rejected by Ann: Retry the 429. `retry-run run --id t --again`"), "{md}");
        let landed = Landed { onto: "main".into(), attempt: 1, branch_removed: true, ..Landed::default() };
        let approved = Review { verdict: Verdict::Approved, required_change: None, ..reviews[0].clone() };
        let reviews = [reviews[0].clone(), approved];
        let v = Verdicts { reviews: &reviews, landed: Some(&landed) };
        let md = render(&task, None, &[a], &standing, &[], &v);
        assert!(md.contains("- Review: landed\n"), "{md}");
        let at = |needle: &str| md.find(needle).unwrap_or_else(|| panic!("{needle:?} not in:\n{md}"));
        assert!(at("## Attempts") < at("## Reviews") && at("## Reviews") < at("## Landed"));
        assert!(at("## Landed") < at("## The task") && at("### Review 1:") < at("### Review 2: attempt 1 approved"));
        at("Attempt 1 landed on `main` (fast-forward");
    }

    #[test]
    fn a_result_of_a_task_run_in_lanes_has_its_next_step_though_its_attempts_are_in_its_lanes() {
        use crate::model::{Review, Verdict};
        let standing = TaskStanding::Succeeded { attempt: 1, branch: "retry-run/t".into() };
        let text = first_look("t", &[], &standing, &Verdicts::default());
        assert!(text.starts_with("Attempt 1 passed every gate"), "{text}");
        let approved = [Review { verdict: Verdict::Approved, attempt: 1, by: "Ann".into(), ..Review::default() }];
        let text = first_look("t", &[], &standing, &Verdicts { reviews: &approved, landed: None });
        assert!(text.contains("`retry-run land t`"), "{text}");
        assert!(first_look("t", &[], &TaskStanding::Open, &Verdicts::default()).starts_with("No attempt has run yet"));
    }

    #[test]
    fn the_agent_s_text_and_names_are_shown_visibly() {
        let task = TaskText { id: "t".into(), title: "Fix \x1b[2Jit".into(), text: "body\x07\n".into() };
        let mut a = AttemptRecord::new(1);
        a.outcome = Outcome::CheckFailure;
        a.reason = "check `t` failed: \x1b]52;c;aGk=\x07 \u{9b}2J \u{202e}txt.exe\r".into();
        a.files.push(crate::model::FileChange {
            path: "evil\x1b[31m.txt".into(),
            old_path: Some("old\x07".into()),
            status: "R".into(),
            additions: 1,
            deletions: 0,
            binary: false,
        });
        let md = render(&task, None, &[a], &TaskStanding::Open, &[], &Verdicts::default());
        assert!(!md.chars().any(crate::text::is_hidden), "{md:?}");
        assert!(md.contains("# retry-run report: Fix \\x1b[2Jit"), "{md}");
        assert!(md.contains("- Why: check `t` failed: \\x1b]52;c;aGk=\\x07 \\u{9b}2J \\u{202e}txt.exe\\r\n"), "{md}");
        assert!(md.contains("  - R `\"evil\\033[31m.txt\"` (from `\"old\\a\"`) +1 -0"), "{md}");
        assert!(md.ends_with("body\\x07\n"), "{md}");
    }
}
