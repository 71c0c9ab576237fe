//! Outside the worktree: the user's checkout, watched from the run's start
//! to its end (never repaired behind the user's back), and the git
//! machinery and repository internals, marked before the agent and put
//! back or compared after it and after the checks.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::RunError;
use super::attempt::{Attempt, Fixed};
use super::confine::git_paths;
use super::recorder::{Recorder, ScopeFound};
use super::surroundings::{self, Marks, Where};
use super::unconfined::{self, WindowLock};
use crate::checkout_watch::Machinery;
use crate::checkout_watch::whole_run::Watch;
use crate::git::fingerprint::{
    Fingerprint, KeptIndexes, Part, TaskParts, fingerprint, keep_indexes, part_paths, removed_pack_objects,
};
use crate::model::{Halt, HaltedAfter, InternalChange, ScopeFinding, ScopeReason};
use crate::outcome::internals::{Beside, Judged, judge_with, still_stored};
use crate::record::Event;
use crate::sandbox::Effective;

/// What is watched outside the worktree during one attempt: the git
/// machinery to put back, and the repository's internals to compare.
pub(super) struct Guard {
    machinery: Machinery,
    before: Fingerprint,
    /// The packs' indexes as they were before the agent, held open: what
    /// a pack removed meanwhile held.
    indexes: KeptIndexes,
    /// Where nothing confines the attempt: the repository's unconfined
    /// window, held from the look before a step to the look after it.
    window: Option<WindowLock>,
    /// Where nothing confines the attempt: what lies beside the
    /// repository's internals (remotes, the checkout's git files, the
    /// record, retry-run's cache, `/tmp`), marked just before the step.
    marks: Option<Marks>,
}

/// What an agent changed outside its worktree.
pub(super) struct Changed {
    /// Paths of the user's checkout.
    pub checkout: Vec<String>,
    /// Parts of the repository's internals (`objects/1a/2b...`,
    /// `refs/heads/main`, `config`, `worktree/.git`, ...).
    pub git_internal: Vec<InternalChange>,
    /// Those removed whose objects are all still stored (a repack).
    pub still_stored: BTreeSet<String>,
    /// Where nothing confined the agent: what it changed beside the
    /// repository's internals (`pushed`, `checkout-git`, `record`,
    /// `retry-run-cache`; `shared-tmp` noted).
    pub beside: surroundings::AroundFound,
}

/// Whether nothing confines the attempt's processes.
pub(super) fn unconfined(t: &Fixed<'_>) -> bool {
    matches!(t.plan.confined, Effective::Detect | Effective::Off)
}

/// Where the attempt runs, for [`surroundings`].
fn place<'a>(t: &'a Fixed<'_>, n: u32) -> Where<'a> {
    Where {
        common: t.repo.common_dir(),
        git_dir: t.repo.git_dir(),
        checkout: t.repo.workdir(),
        worktree: &t.wt,
        store: t.store,
        record: &t.plan.id,
        attempt: n,
        tmp: t.plan.confined != Effective::Off,
    }
}

/// Where nothing confines the attempt: the repository's unconfined window
/// taken (waiting for another's to end), or `None`.
fn window(t: &Fixed<'_>) -> Result<Option<WindowLock>, RunError> {
    if !unconfined(t) {
        return Ok(None);
    }
    let id = t.plan.id.clone();
    unconfined::take(t.repo.common_dir(), &id, &|m| t.progress.say(m), &|| super::interrupt::stop_if_interrupted(&id))
}

/// The unconfined window held, without a look before or after: for the
/// unconfined steps retry-run does not compare (`worktree.setup`), so that
/// what they write is never charged to another attempt's step.
pub(super) fn hold_window(t: &Fixed<'_>) -> Result<Option<WindowLock>, RunError> {
    window(t)
}

/// Paths of the user's checkout an attempt changed, as scope findings.
pub(super) fn outside_findings(paths: &[String]) -> Vec<ScopeFinding> {
    paths
        .iter()
        .map(|p| ScopeFinding { path: p.clone(), old_path: None, reason: ScopeReason::OutsideWorktree, rule: None })
        .collect()
}

/// The violations of `judged` as `git-internal` findings, but for those
/// the checkout's watch already names (`refs/heads/main`; `HEAD`, which it
/// names `.git/HEAD`).
pub(super) fn internal_findings(judged: &Judged, checkout: &[String]) -> Vec<ScopeFinding> {
    judged
        .violations
        .iter()
        .filter(|p| !checkout.iter().any(|c| c == *p || c.strip_prefix(".git/") == Some(p.as_str())))
        .map(|p| ScopeFinding { path: p.clone(), old_path: None, reason: ScopeReason::GitInternal, rule: None })
        .collect()
}

/// Whether a confined process could write any of `paths` (the files of one
/// part of the repository's internals): one lies beneath a path of
/// `writable`, and, in the namespaces (`protected_ro`), not beneath one of
/// `protected`, which are mounted read-only there. Pure.
pub(super) fn could_write(paths: &[PathBuf], writable: &[PathBuf], protected: &[PathBuf], protected_ro: bool) -> bool {
    paths.iter().any(|p| {
        writable.iter().any(|w| p.starts_with(w)) && !(protected_ro && protected.iter().any(|x| p.starts_with(x)))
    })
}

/// `sandbox.mode` as in force for a process confined as `effective`.
fn mode_name(effective: Effective) -> &'static str {
    match effective {
        Effective::Namespaces => "namespaces",
        Effective::Landlock => "landlock",
        Effective::Detect => "detect",
        Effective::Off => "off",
    }
}

/// The repository's internals now, with this task's worktree links.
fn internals(t: &Fixed<'_>) -> Fingerprint {
    let admin = t.repo.worktree_meta(&t.plan.id);
    let task = TaskParts { id: &t.plan.id, worktree: &t.wt, admin: &admin };
    fingerprint(t.repo.common_dir(), Some(&task))
}

/// What must not change outside the worktree, marked before the agent:
/// the checkout, the git machinery and the repository's internals. Where
/// nothing confines the attempt, the repository's unconfined window is
/// taken first, and the task's event log watched for lines of others.
pub(super) fn guard_outside(t: &Fixed<'_>, rec: &mut Recorder, watch: &mut Watch) -> Result<Guard, RunError> {
    let window = window(t)?;
    if unconfined(t) {
        rec.log.watch_foreign();
    }
    let indexes = keep_indexes(t.repo.common_dir());
    let before = internals(t);
    let started = Instant::now();
    watch.spent = Duration::ZERO;
    watch.ready(&t.wt_root, &|m| t.progress.say(m)).mark(t.repo);
    let machinery = Machinery::take(t.repo.common_dir());
    watch.spent += started.elapsed();
    Ok(Guard { machinery, before, indexes, window, marks: None })
}

/// Where nothing confines the attempt, what lies beside the repository's
/// internals marked, just before its agent starts (after the prompt,
/// which retry-run writes into the record).
pub(super) fn mark_beside(t: &Fixed<'_>, guard: &mut Guard, a: &Attempt) {
    if unconfined(t) {
        guard.marks = Some(surroundings::mark(&place(t, a.n)));
    }
}

/// Where nothing confines the attempt, before its checks: the unconfined
/// window taken again (other tasks' agents ran meanwhile), and everything
/// outside the worktree marked afresh, so that the checks are charged
/// with what they change, not with what others did between. Held until
/// the attempt ends: its built-in checks and its verifier run unconfined
/// too.
pub(super) fn before_checks(t: &Fixed<'_>, watch: &mut Watch, guard: &mut Guard, a: &Attempt) -> Result<(), RunError> {
    if !unconfined(t) {
        return Ok(());
    }
    guard.window = window(t)?;
    if t.plan.config.checks.is_empty() {
        // No check to compare after (and the watch may be retired): the
        // window is held for the built-in checks and the verifier alone.
        return Ok(());
    }
    guard.indexes = keep_indexes(t.repo.common_dir());
    guard.before = internals(t);
    let started = Instant::now();
    watch.ready(&t.wt_root, &|m| t.progress.say(m)).mark(t.repo);
    watch.spent += started.elapsed();
    guard.marks = Some(surroundings::mark(&place(t, a.n)));
    Ok(())
}

/// What the unconfined step changed beside the repository's internals
/// since `guard`'s marks, `moved` naming the refs other findings name;
/// the task's event log's foreign lines among them (put back where they
/// could be: `restored` names the log then).
fn beside(
    t: &Fixed<'_>,
    rec: &mut Recorder,
    guard: &Guard,
    a: &Attempt,
    moved: &BTreeSet<String>,
    restored: &mut Vec<String>,
) -> surroundings::AroundFound {
    let mut seen = match &guard.marks {
        Some(marks) => surroundings::changes(&place(t, a.n), marks, moved),
        None => surroundings::AroundFound::default(),
    };
    seen.violations.extend(foreign_lines(t, rec, restored));
    seen
}

/// The lines others wrote to the task's event log since the last look, as
/// `record` findings; the log, where it was put back, added to `restored`.
fn foreign_lines(t: &Fixed<'_>, rec: &mut Recorder, restored: &mut Vec<String>) -> Vec<ScopeFinding> {
    let log = format!("retry-run/tasks/{}/{}", t.plan.id, crate::record::layout::EVENTS);
    rec.log
        .take_foreign()
        .into_iter()
        .map(|w| {
            if w.put_back && !restored.contains(&log) {
                restored.push(log.clone());
            }
            let put = if w.put_back { "; put back as retry-run wrote it" } else { "" };
            ScopeFinding {
                path: format!(".git/{log}"),
                old_path: None,
                reason: ScopeReason::Record,
                rule: Some(format!("{}{put}", w.what)),
            }
        })
        .collect()
}

/// The refs (and `HEAD`) that findings of the checkout and the internals
/// name: their reflogs are not named again.
fn moved_refs(checkout: &[String], internal: &[String]) -> BTreeSet<String> {
    checkout
        .iter()
        .chain(internal)
        .filter_map(|p| {
            if p == ".git/HEAD" || p == "HEAD" { Some("HEAD") } else { p.starts_with("refs/").then_some(p.as_str()) }
        })
        .map(str::to_string)
        .collect()
}

/// After the agent: the git machinery put back, the user's checkout only
/// looked at, `AgentFinished` recorded.
pub(super) fn after_agent(
    t: &Fixed<'_>,
    rec: &mut Recorder,
    watch: &mut Watch,
    guard: &mut Guard,
    a: &mut Attempt,
) -> Result<Changed, RunError> {
    let after = internals(t);
    let started = Instant::now();
    let crate::checkout_watch::Restored { done: mut restored, failed: not_restored } =
        guard.machinery.restore(t.repo.common_dir());
    for p in &not_restored {
        t.progress.say(&format!("could not restore the repository's {p}"));
    }
    // Before anything opens the worktree again: its links to the
    // repository as retry-run wrote them (the fingerprint above saw any
    // change, which the scope gate reports).
    let relinked = t.repo.relink_worktree(&t.wt, &t.plan.id, t.base.oid)?;
    // What was removed from the worktree's administrative directory (a
    // link, a FIFO, a HEAD naming a branch) is the attempt's violation.
    let secured: Vec<InternalChange> = relinked
        .iter()
        .filter(|p| p.starts_with("worktree-admin/") && p.contains(" ("))
        .map(|p| InternalChange { part: p.clone(), change: crate::model::PartChange::Changed })
        .collect();
    restored.extend(relinked);
    a.record.restored = restored;
    // What the agent committed, checked, into the repository (its
    // objects went to the attempt's quarantine).
    let git_paths = git_paths(t, &a.dir);
    let imported = t.repo.import_quarantine(&git_paths.quarantine, &git_paths.submodule_objects)?;
    if !imported.rejected.is_empty() {
        t.progress.say(&format!(
            "the agent's git wrote {} object(s) whose content does not match their name: not imported",
            imported.rejected.len()
        ));
    }
    let checkout = watch.ready(&t.wt_root, &|m| t.progress.say(m)).changes(t.repo);
    watch.spent += started.elapsed();
    let mut git_internal = after.compare(&guard.before);
    let internal_names: Vec<String> = git_internal.iter().map(|c| c.part.clone()).collect();
    let mut restored = std::mem::take(&mut a.record.restored);
    let beside = beside(t, rec, guard, a, &moved_refs(&checkout, &internal_names), &mut restored);
    a.record.restored = restored;
    // The window ends: nothing of the attempt runs until its checks.
    guard.window = None;
    if let Some(r) = &a.record.agent {
        rec.event(
            Some(a.n),
            Event::AgentFinished {
                exit_code: r.exit_code,
                signal: r.signal,
                timed_out: r.timed_out,
                duration_ms: r.duration_ms,
                output_bytes: r.output_bytes,
                last_activity: r.last_activity.clone(),
                usage: r.usage.clone(),
                leftovers: r.leftovers.clone(),
                refused_hosts: r.refused_hosts.clone(),
                limits_hit: r.limits_hit.clone(),
                network_seen: r.network_seen.clone(),
            },
        )?;
        t.progress.gate(&if r.timed_out {
            "agent TIMEOUT".to_string()
        } else {
            format!("agent {}", crate::text::exit_text(r.exit_code, r.signal))
        });
    }
    let still_stored = still_stored_parts(t, guard, &git_internal);
    git_internal.extend(secured);
    Ok(Changed { checkout, git_internal, still_stored, beside })
}

/// Checks run code the agent wrote: what they changed outside the
/// worktree is the attempt's too. Where nothing confined them and they
/// changed the git links or machinery, the attempt is halted
/// (`a.record.halted`): nothing unconfined runs after them.
pub(super) fn after_checks(
    t: &Fixed<'_>,
    rec: &mut Recorder,
    watch: &mut Watch,
    guard: &mut Guard,
    a: &mut Attempt,
) -> Result<(), RunError> {
    // Compared with the mark before the agent: the agent changed nothing
    // there but objects added (the checks would not run otherwise), and
    // retry-run wrote the snapshot's ref since.
    if let Some(commit) = a.commit {
        let refname = crate::model::refs::attempt(&t.plan.id, a.n);
        guard.before.parts.insert(refname, Part { content: commit.to_string(), times: None });
    }
    let changes = internals(t).compare(&guard.before);
    let stored = still_stored_parts(t, guard, &changes);
    let judged = judge_internals(t, a, &changes, &stored);
    say_environment(t, a, &judged);
    let started = Instant::now();
    let restored = guard.machinery.restore(t.repo.common_dir()).done;
    a.record.restored.extend(restored);
    let relinked = t.repo.relink_worktree(&t.wt, &t.plan.id, t.base.oid)?;
    a.record.restored.extend(relinked.iter().cloned());
    let outside = watch.ready(&t.wt_root, &|m| t.progress.say(m)).changes(t.repo);
    watch.spent += started.elapsed();
    let internal_names: Vec<String> = changes.iter().map(|c| c.part.clone()).collect();
    let mut restored = std::mem::take(&mut a.record.restored);
    let seen = beside(t, rec, guard, a, &moved_refs(&outside, &internal_names), &mut restored);
    a.record.restored = restored;
    let mut found = outside_findings(&outside);
    let mut internal = internal_findings(&judged, &outside);
    // A link put back that the fingerprint missed (changed and changed
    // back in between, or not part of it).
    for part in relinked {
        if !internal.iter().any(|f| f.path == part) {
            internal.push(ScopeFinding { path: part, old_path: None, reason: ScopeReason::GitInternal, rule: None });
        }
    }
    found.extend(internal);
    found.extend(seen.violations);
    surroundings::pushes_by_tracking(t.repo.common_dir(), &mut found);
    if !found.is_empty() || !seen.noted.is_empty() {
        let now = ScopeFound {
            findings: &found,
            restored: &a.record.restored,
            objects: None,
            environment: &judged.environment,
            noted: &seen.noted,
        };
        rec.scope_checked(a.n, 0, now, Some("checks"))?;
        if !found.is_empty() {
            t.progress.gate("scope VIOLATION (a check wrote outside the worktree)");
        }
        a.record.scope.extend(found);
        a.record.noted.extend(seen.noted);
    }
    halt(t, a, HaltedAfter::Checks, judged.halt);
    Ok(())
}

/// Where nothing confines the attempt, after its last step (the
/// verifier, the built-in checks): lines of others in the task's event log
/// since its checks (found before each line retry-run wrote, and cut off),
/// recorded as the attempt's `record` findings (`after: "verifier"`).
pub(super) fn after_last_step(t: &Fixed<'_>, rec: &mut Recorder, a: &mut Attempt) -> Result<(), RunError> {
    if !unconfined(t) {
        return Ok(());
    }
    let found = foreign_lines(t, rec, &mut a.record.restored);
    if found.is_empty() {
        return Ok(());
    }
    let now =
        ScopeFound { findings: &found, restored: &a.record.restored, objects: None, environment: &[], noted: &[] };
    rec.scope_checked(a.n, 0, now, Some("verifier"))?;
    t.progress.gate("scope VIOLATION (the task's record written by another than retry-run)");
    a.record.scope.extend(found);
    Ok(())
}

/// Which parts of `changes` were removed with their objects still
/// stored: loose objects now packed, packs whose objects (their
/// indexes kept open since `guard`) are all in the store now. Read with
/// a fresh look at the store, only when something was removed.
pub(super) fn still_stored_parts(t: &Fixed<'_>, guard: &Guard, changes: &[InternalChange]) -> BTreeSet<String> {
    if !changes.iter().any(|c| c.change == crate::model::PartChange::Removed) {
        return BTreeSet::new();
    }
    // The store opened afresh: what the user's git wrote meanwhile counts.
    let Ok(fresh) = crate::git::Repo::discover(t.repo.common_dir()) else { return BTreeSet::new() };
    let stored = |hex: &str| fresh.has_object_hex(hex);
    still_stored(changes, |pack| removed_pack_objects(&guard.indexes, pack), stored)
}

/// `changes` of attempt `a`'s agent or checks, judged knowing its
/// confinement: in the namespaces and under Landlock, a change to a
/// part none of its writable paths holds is the environment's.
pub(super) fn judge_internals(
    t: &Fixed<'_>,
    a: &Attempt,
    changes: &[InternalChange],
    stored: &BTreeSet<String>,
) -> Judged {
    let effective = a.confinement.effective;
    let confined = matches!(effective, Effective::Landlock | Effective::Namespaces);
    let common = t.repo.common_dir().to_path_buf();
    let real = std::fs::canonicalize(&common).unwrap_or_else(|_| common.clone());
    let admin = t.repo.worktree_meta(&t.plan.id);
    let task = TaskParts { id: &t.plan.id, worktree: &t.wt, admin: &admin };
    let writable: Vec<PathBuf> = a
        .confinement
        .policy
        .writable
        .iter()
        .flat_map(|w| [w.path.clone(), std::fs::canonicalize(&w.path).unwrap_or_else(|_| w.path.clone())])
        .collect();
    let protected = &a.confinement.policy.protected;
    let namespaces = effective == Effective::Namespaces;
    let writes = |part: &str| {
        let mut paths = part_paths(part, &common, Some(&task));
        paths.extend(part_paths(part, &real, None));
        could_write(&paths, &writable, protected, namespaces)
    };
    judge_with(changes, &Beside { confined, could_write: &writes, still_stored: stored })
}

/// Says what changed in the repository's internals beside a confined
/// attempt, which it could not have written.
pub(super) fn say_environment(t: &Fixed<'_>, a: &Attempt, judged: &Judged) {
    if judged.environment.is_empty() {
        return;
    }
    let shown: Vec<&str> = judged.environment.iter().take(5).map(String::as_str).collect();
    let more = judged.environment.len().saturating_sub(shown.len());
    t.progress.say(&format!(
        "attempt {}: the repository's git changed beside it ({}{}), where the sandbox let it write nothing: \
         recorded as the environment's, not charged to the attempt",
        a.n,
        shown.join(", "),
        if more > 0 { format!(" and {more} more") } else { String::new() }
    ));
}

/// Halts attempt `a` when `parts` (git links and machinery changed by
/// its unconfined `after` step) is not empty, saying so.
pub(super) fn halt(t: &Fixed<'_>, a: &mut Attempt, after: HaltedAfter, parts: Vec<String>) {
    if parts.is_empty() || a.record.halted.is_some() {
        return;
    }
    let mode = mode_name(a.confinement.effective);
    t.progress.say(&format!(
        "attempt {}: nothing confines it (sandbox.mode = \"{mode}\") and its {after} changed {}; \
         retry-run runs none of its checks or verifier and no further attempt",
        a.n,
        parts.join(", ")
    ));
    a.record.halted = Some(Halt { after, parts });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_confined_process_could_write() {
        let p = |s: &str| vec![PathBuf::from(s)];
        let writable = [PathBuf::from("/r/.git/worktrees/t"), PathBuf::from("/w")];
        let protected = [PathBuf::from("/r/.git/worktrees/t/gitdir")];
        assert!(!could_write(&p("/r/.git/objects/pack/pack-1.idx"), &writable, &protected, true));
        assert!(could_write(&p("/r/.git/worktrees/t/config.worktree"), &writable, &protected, true));
        assert!(!could_write(&p("/r/.git/worktrees/t/gitdir"), &writable, &protected, true));
        assert!(
            could_write(&p("/r/.git/worktrees/t/gitdir"), &writable, &protected, false),
            "Landlock leaves it writable"
        );
        let home = [PathBuf::from("/r")];
        assert!(could_write(&p("/r/.git/refs/heads/main"), &home, &[], true), "a writable path above the store");
    }
}
