//! The scope gate: writes outside the worktree (the user's checkout, the
//! repository's git internals) are violations whatever else the attempt
//! did, and the attempt is halted where nothing confined its agent and it
//! changed the git links or machinery; the change itself is checked
//! against the scope's rules when the agent ended well and changed
//! something.

use super::super::RunError;
use super::super::attempt::{Attempt, Fixed};
use super::super::outside::{Changed, halt, internal_findings, judge_internals, outside_findings, say_environment};
use super::super::recorder::{Recorder, ScopeFound};
use crate::config::SubmodulePolicy;
use crate::git::Comparison;
use crate::judge::scope::{self, landing};
use crate::model::{HaltedAfter, ScopeFinding};
use crate::pathfmt::display;

/// The scope's findings of attempt `a` into `a.record.scope`, recorded.
pub(in crate::run) fn scope_gate(
    t: &Fixed<'_>,
    rec: &mut Recorder,
    a: &mut Attempt,
    cmp: &Comparison<'_>,
    outside: Changed,
) -> Result<(), RunError> {
    let judged = judge_internals(t, a, &outside.git_internal, &outside.still_stored);
    say_environment(t, a, &judged);
    let mut findings: Vec<ScopeFinding> = outside_findings(&outside.checkout);
    findings.append(&mut a.cut);
    findings.extend(internal_findings(&judged, &outside.checkout));
    // Beside the internals, where nothing confined the agent: each change
    // as what it was (a push, a lock of the checkout, a line of the
    // record, ...).
    findings.extend(outside.beside.violations);
    crate::run::surroundings::pushes_by_tracking(t.repo.common_dir(), &mut findings);
    let noted = outside.beside.noted;
    halt(t, a, HaltedAfter::Agent, judged.halt);
    if a.agent_ok() && (!a.record.files.is_empty() || !a.dirty_submodules.is_empty()) {
        t.progress.phase("scope");
        let moves_allowed = t.plan.config.scope.submodules == SubmodulePolicy::Allow;
        let found = change_findings(&t.plan.rules, moves_allowed, cmp, &a.dirty_submodules);
        findings.extend(found.violations);
        rec.scope_checked_flagging(
            a.n,
            found.checked,
            ScopeFound {
                findings: &findings,
                restored: &a.record.restored,
                objects: Some(&judged.objects),
                environment: &judged.environment,
                noted: &noted,
            },
            &found.flagged,
            None,
        )?;
        t.progress.gate(&match (findings.is_empty(), found.flagged.len()) {
            (false, _) => "scope VIOLATION".to_string(),
            (true, 0) => "scope ok".to_string(),
            (true, n) => format!(
                "scope ok, {n} file{} flagged: {} (acts after the change lands)",
                crate::text::plural(n),
                found.flagged.iter().map(|f| f.path.as_str()).collect::<Vec<_>>().join(", ")
            ),
        });
        a.record.scope = findings;
        a.record.flagged = found.flagged;
        a.record.noted = noted;
    } else if !findings.is_empty() || !judged.objects.is_empty() || !judged.environment.is_empty() || !noted.is_empty()
    {
        rec.scope_checked(
            a.n,
            0,
            ScopeFound {
                findings: &findings,
                restored: &a.record.restored,
                objects: Some(&judged.objects),
                environment: &judged.environment,
                noted: &noted,
            },
            None,
        )?;
        if !findings.is_empty() {
            t.progress.gate("scope VIOLATION (outside the worktree)");
        }
        a.record.scope = findings;
        a.record.noted = noted;
    }
    Ok(())
}

/// A change's scope findings.
pub(crate) struct ChangeFindings {
    /// Changed paths examined.
    pub checked: usize,
    pub violations: Vec<ScopeFinding>,
    /// Files acting once the change lands, flagged, not failing
    /// (`[scope] acts_after_land = "flag"`).
    pub flagged: Vec<ScopeFinding>,
}

/// The change's scope findings under `rules`: each path against the globs,
/// (`[scope] submodules`) a submodule's own violation in place of what
/// the globs said of its path, and the files that act once the change
/// lands (`scope::landing`, the head's `.gitmodules` read as data).
pub(crate) fn change_findings(
    rules: &scope::Rules,
    moves_allowed: bool,
    cmp: &Comparison<'_>,
    dirty_submodules: &[Vec<u8>],
) -> ChangeFindings {
    let mut report = scope::check(rules, &cmp.changes.changes, &cmp.head);
    let subs = scope::submodule_violations(moves_allowed, &cmp.changes.changes, dirty_submodules);
    report.violations.retain(|v| !subs.iter().any(|s| s.path == v.path));
    report.checked += subs.iter().filter(|s| !cmp.changes.changes.iter().any(|c| c.path() == s.path)).count();
    report.violations.extend(subs);
    let landing = landing::check(rules.landing(), rules, &cmp.changes.changes, &|| cmp.head.file(b".gitmodules"));
    landing::merge(&mut report, landing);
    let findings = |vs: &[scope::Violation]| -> Vec<ScopeFinding> {
        vs.iter()
            .map(|v| ScopeFinding {
                path: display(&v.path).into_owned(),
                old_path: v.old_path.as_deref().map(|p| display(p).into_owned()),
                reason: v.reason,
                rule: v.rule.clone(),
            })
            .collect()
    };
    ChangeFindings {
        checked: report.checked,
        violations: findings(&report.violations),
        flagged: findings(&report.flagged),
    }
}
