//! The scope gate: writes outside the worktree (the user's checkout, the
//! git machinery) are violations whatever else the attempt did; the change
//! itself is checked against the scope's rules when the agent ended well
//! and changed something.

use super::super::RunError;
use super::super::outside::{Changed, outside_findings};
use super::super::task_run::{Attempt, TaskRun};
use crate::git::Comparison;
use crate::model::{ScopeFinding, ScopeReason};
use crate::pathfmt::display;
use crate::scope;

impl TaskRun<'_> {
    /// The scope's findings of attempt `a` into `a.record.scope`, recorded.
    pub(in crate::run) fn scope_gate(
        &mut self,
        a: &mut Attempt,
        cmp: &Comparison<'_>,
        outside: Changed,
    ) -> Result<(), RunError> {
        let mut findings: Vec<ScopeFinding> = outside_findings(&outside.checkout);
        findings.extend(outside.git_internal.into_iter().map(|part| ScopeFinding {
            path: part,
            old_path: None,
            reason: ScopeReason::GitInternal,
            rule: None,
        }));
        if a.agent_ok() && !a.record.files.is_empty() {
            self.progress.phase("scope");
            let report = scope::check(&self.plan.rules, &cmp.changes.changes, &cmp.head);
            findings.extend(report.violations.iter().map(|v| ScopeFinding {
                path: display(&v.path).into_owned(),
                old_path: v.old_path.as_deref().map(|p| display(p).into_owned()),
                reason: v.reason,
                rule: v.rule.clone(),
            }));
            self.rec.scope_checked(a.n, report.checked, &findings, &a.record.restored, None)?;
            self.progress.gate(if findings.is_empty() { "scope ok" } else { "scope VIOLATION" });
            a.record.scope = findings;
        } else if !findings.is_empty() {
            self.rec.scope_checked(a.n, 0, &findings, &a.record.restored, None)?;
            self.progress.gate("scope VIOLATION (outside the worktree)");
            a.record.scope = findings;
        }
        Ok(())
    }
}
