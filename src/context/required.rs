//! The required change: one imperative sentence that leads the feedback.
//! Synthesized from the gates' results without any model; from the
//! verifier it is the verdict's own `required_change`, marked advisory.

use serde::{Deserialize, Serialize};

use crate::judge::scope::landing;
use crate::model::{AttemptRecord, CheckKind, CheckResult, Failure, Outcome, ScopeFinding, ScopeReason};
use crate::text::{exit_text, human_ms, plural};

/// At most this many names in one sentence; the rest are counted.
const MAX_NAMES: usize = 5;
/// The sentence is cut at this many bytes (a verifier may write an essay).
pub(crate) const MAX_BYTES: usize = 600;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Required {
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
pub(crate) fn name_list(names: &[String]) -> String {
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
pub(crate) fn required_change(r: &AttemptRecord) -> Required {
    match r.outcome {
        Outcome::Success => fact("none", format!("No change is required: attempt {} passed every gate.", r.number)),
        Outcome::EmptyDiff => fact(
            "empty-diff",
            format!("Make actual changes to the files: attempt {} left the worktree exactly as the base.", r.number),
        ),
        Outcome::Stopped => fact(
            "stopped",
            format!("Carry out the task again: attempt {} was stopped before it finished ({}).", r.number, r.reason),
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
        Outcome::CheckFailure => {
            let failed: Vec<&CheckResult> = r.failed_checks().collect();
            match failed.as_slice() {
                [] => fact("check", "Make every check pass.".into()),
                [c] => check_sentence(c),
                several => several_checks(several),
            }
        }
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
        Outcome::Unverified if crate::outcome::tested_checkout(r).is_some() => fact(
            "check",
            format!(
                "No change is known to be required: a check of attempt {} tested the user's checkout instead of the attempt, so it was not judged.",
                r.number
            ),
        ),
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
    let internal = paths_for(r, ScopeReason::GitInternal, |p| p.to_string());
    let escapes = paths_for(r, ScopeReason::SymlinkEscape, |p| p.to_string());
    let others: Vec<String> = sorted_unique(
        r.scope
            .iter()
            .filter(|v| {
                v.reason != ScopeReason::GitInternal
                    && v.reason != ScopeReason::SymlinkEscape
                    && v.reason != ScopeReason::OutsideWorktree
                    && v.reason != ScopeReason::Submodule
                    && v.reason != ScopeReason::ActsAfterLand
                    && v.reason != ScopeReason::TooDeep
                    && v.reason.outside_words().is_none()
            })
            .map(|v| v.path.clone())
            .collect(),
    );
    let outside = paths_for(r, ScopeReason::OutsideWorktree, |p| format!("`{p}`"));
    let mut parts = Vec::new();
    if !outside.is_empty() {
        parts.push(format!(
            "write only inside your worktree (the attempt changed {} of the user's checkout)",
            name_list(&outside)
        ));
    }
    if !internal.is_empty() {
        parts.push(format!("leave git's own files alone (you changed {})", name_list(&internal)));
    }
    parts.extend(beside_parts(r));
    if !escapes.is_empty() {
        parts.push(format!(
            "remove the symlink{} {} that point outside the repository",
            plural(escapes.len()),
            name_list(&escapes)
        ));
    }
    let deep = paths_for(r, ScopeReason::TooDeep, |p| format!("`{}`", crate::pathfmt::brief(p)));
    if !deep.is_empty() {
        parts.push(format!(
            "keep directories under {} levels deep ({} went deeper and {} cut out of the change)",
            crate::model::MAX_TREE_DEPTH,
            name_list(&deep),
            if deep.len() == 1 { "was" } else { "were" }
        ));
    }
    let submodules = paths_for(r, ScopeReason::Submodule, |p| format!("`{p}/`"));
    if !submodules.is_empty() {
        parts.push(format!(
            "revert every change inside {} (reset {} to the commit the base records and remove what you added there): {} may be changed only when a human sets `[scope] submodules = \"allow\"`, and then only by commits made inside it",
            name_list(&submodules),
            if submodules.len() == 1 { "it" } else { "each" },
            if submodules.len() == 1 { "a submodule" } else { "submodules" },
        ));
    }
    if !others.is_empty() {
        parts.push(format!("revert your changes to {}", name_list(&others)));
    }
    parts.extend(acting_part(r));
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

/// The clauses on what an unconfined attempt wrote beside the worktree
/// and the repository's internals: a push, the checkout's git files,
/// retry-run's record and cache.
fn beside_parts(r: &AttemptRecord) -> Vec<String> {
    let quoted = |p: &str| format!("`{p}`");
    let mut parts = Vec::new();
    let pushed = paths_for(r, ScopeReason::Pushed, quoted);
    if !pushed.is_empty() {
        parts.push(format!(
            "never push to a remote: leave publishing to the human (the attempt moved {} on a remote)",
            name_list(&pushed)
        ));
    }
    let checkout = paths_for(r, ScopeReason::CheckoutGit, quoted);
    if !checkout.is_empty() {
        parts.push(format!(
            "leave the user's checkout and its git directory alone, work only in your worktree (you wrote {})",
            name_list(&checkout)
        ));
    }
    let record = paths_for(r, ScopeReason::Record, quoted);
    if !record.is_empty() {
        parts.push(format!(
            "never write retry-run's record of the task, which only retry-run writes (you wrote {})",
            name_list(&record)
        ));
    }
    let cache = paths_for(r, ScopeReason::RetryRunCache, quoted);
    if !cache.is_empty() {
        parts.push(format!("leave retry-run's own cache alone (you wrote {})", name_list(&cache)));
    }
    parts
}

/// The paths of the scope findings of `reason`, each shown by `show`,
/// sorted and without repeats.
fn paths_for(r: &AttemptRecord, reason: ScopeReason, show: fn(&str) -> String) -> Vec<String> {
    sorted_unique(r.scope.iter().filter(|v| v.reason == reason).map(|v| show(&v.path)).collect())
}

/// The clause on files that act once the change lands: the one file and
/// why, or the several and who may allow them.
fn acting_part(r: &AttemptRecord) -> Option<String> {
    let acting: Vec<&ScopeFinding> = r.scope.iter().filter(|v| v.reason == ScopeReason::ActsAfterLand).collect();
    match acting.as_slice() {
        [] => None,
        [v] => Some(format!("revert your change to `{}`: {}", v.path, acts_after_land(v))),
        several => {
            let names: Vec<String> = sorted_unique(several.iter().map(|v| format!("`{}`", v.path)).collect());
            Some(format!(
                "revert your changes to {}: each acts once the change lands (git, an editor, CI or a shell runs or honours it), and only a human can allow that, by naming it in the task's or the config's `[scope] allow`",
                name_list(&names)
            ))
        }
    }
}

/// Why a finding of reason `acts-after-land` is one, and how a human
/// allows it: `it acts once the change lands (GitHub Actions: ...); a
/// human allows it by ...`.
pub(crate) fn acts_after_land(v: &ScopeFinding) -> String {
    let rule = v.rule.as_deref();
    // The side of a rename the table names.
    let path = match &v.old_path {
        Some(old) if landing::row_of(v.path.as_bytes(), false).is_none() => old.as_str(),
        _ => v.path.as_str(),
    };
    format!("it acts once the change lands ({}); {}", landing::why(rule), landing::how_to_allow(path, rule))
}

/// At most this many failing checks are named in one sentence.
const MAX_CHECKS: usize = 3;

/// The failures that fail a check: its new ones, or (baseline `label`)
/// the ones the base has too; and whether they are the base's.
fn failing(c: &CheckResult) -> (Vec<&Failure>, bool) {
    if c.failures.is_empty() && !c.pre_existing.is_empty() {
        (c.pre_existing.iter().collect(), true)
    } else {
        (c.failures.iter().collect(), false)
    }
}

const ON_BASE: &str = " (already failing on the base)";

/// One sentence naming each failing check's key failure: the first
/// three checks, then how many more.
fn several_checks(checks: &[&CheckResult]) -> Required {
    // Targets that another check already names failing are said there.
    let targets: Vec<&str> =
        checks.iter().filter(|c| c.name == TARGETS).flat_map(|c| c.failures.iter().map(|f| f.key.as_str())).collect();
    let named_elsewhere = |key: &str| {
        checks.iter().any(|c| c.name != TARGETS && failing(c).0.first().is_some_and(|f| f.test && f.key == key))
    };
    let shown: Vec<&&CheckResult> =
        checks.iter().filter(|c| c.name != TARGETS || !c.failures.iter().all(|f| named_elsewhere(&f.key))).collect();
    let mut clauses: Vec<String> = shown.iter().take(MAX_CHECKS).map(|c| check_clause(c, &targets)).collect();
    if shown.len() > MAX_CHECKS {
        let more = shown.len() - MAX_CHECKS;
        clauses.push(format!("fix the {more} more failing check{} below", plural(more)));
    }
    let mut s = match clauses.len() {
        1 => clauses.remove(0),
        n => format!("{}, and {}", clauses[..n - 1].join(", "), clauses[n - 1]),
    };
    if let Some(first) = s.get(..1) {
        s = first.to_uppercase() + &s[1..];
    }
    let names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
    fact(format!("check:{}", names.join(",")), format!("{s}."))
}

/// What to do about one failing check, as a clause naming its key failure.
fn check_clause(c: &CheckResult, targets: &[&str]) -> String {
    let (fails, on_base) = failing(c);
    let base = if on_base { "; already failing on the base" } else { "" };
    let more = if fails.len() > 1 { format!(" and {} more", fails.len() - 1) } else { String::new() };
    if c.timed_out {
        return format!("make `{}` finish within its time limit", c.name);
    }
    match fails.first() {
        _ if c.name == TEST_INTEGRITY => {
            let tests: Vec<String> = fails.iter().map(|f| format!("`{}`", integrity_test(f))).collect();
            format!("restore the weakened test{} {} (`{}`)", plural(tests.len()), name_list(&tests), c.name)
        }
        Some(f) if c.name == TARGETS => format!("make the target `{}`{more} pass", f.key),
        Some(f) if f.test => {
            let target = if targets.contains(&f.key.as_str()) { "; a target of the task" } else { "" };
            format!("make the failing test `{}`{more} pass (`{}`{base}{target})", f.key, c.name)
        }
        Some(f) => {
            // The label is `path:line: CODE message`; the key `path|CODE|scope|message`.
            let at = f.label.split_once(": ").map_or(f.label.as_str(), |(at, _)| at);
            let what = f.key.split('|').nth(1).filter(|c| !c.is_empty() && !c.contains(' '));
            let what = what.map_or("the error".to_string(), |c| c.to_string());
            format!("fix {what} at `{at}`{more} (`{}`{base})", c.name)
        }
        None => format!("make `{}` pass (it {})", c.name, exit_text(c.exit_code, c.signal)),
    }
}

pub(crate) use crate::model::{TARGETS, TEST_INTEGRITY};

/// The test a `test-integrity` failure names (its key is `test-integrity|kind|test`).
fn integrity_test(f: &Failure) -> &str {
    f.key.splitn(3, '|').nth(2).unwrap_or(&f.key)
}

fn check_sentence(c: &CheckResult) -> Required {
    let source = format!("check:{}", c.name);
    let (fails, on_base) = failing(c);
    let base = if on_base { ON_BASE } else { "" };
    let tests: Vec<String> = fails.iter().filter(|f| f.test).map(|f| f.key.clone()).collect();
    let errors: Vec<&Failure> = fails.iter().copied().filter(|f| !f.test).collect();
    let files: Vec<String> = sorted_unique(c.errors.iter().map(|e| format!("`{}`", e.path)).collect());
    if c.timed_out {
        return fact(
            source,
            format!("Make the check `{}` finish within its time limit: it was stopped at the limit.", c.name),
        );
    }
    if c.name == TEST_INTEGRITY && !fails.is_empty() {
        let tests: Vec<String> = fails.iter().map(|f| format!("`{}`", integrity_test(f))).collect();
        return fact(
            source,
            format!(
                "Restore the test{} you removed, skipped or weakened ({}) and make the code pass {} instead.",
                plural(tests.len()),
                name_list(&tests),
                if tests.len() == 1 { "it" } else { "them" }
            ),
        );
    }
    if c.name == TARGETS && !tests.is_empty() {
        let names: Vec<String> = tests.iter().map(|t| format!("`{t}`")).collect();
        return fact(
            source,
            format!("Make the task's target test{} pass: {}.", plural(tests.len()), name_list(&names)),
        );
    }
    let imports: Vec<&&Failure> = errors.iter().filter(|f| crate::outcome::check::is_import_error(&f.label)).collect();
    if tests.is_empty() && !imports.is_empty() {
        let files: Vec<String> = sorted_unique(
            imports.iter().map(|f| format!("`{}`", f.label.split(':').next().unwrap_or(&f.label))).collect(),
        );
        let what = imports[0].label.split_once(": ").map_or("", |(_, m)| m).trim();
        return fact(
            source,
            format!(
                "Make {} importable: `{}` could not import or collect {} ({what}), so none of its tests ran{base}.",
                if files.len() == 1 { "the module" } else { "the modules" },
                c.name,
                name_list(&files)
            ),
        );
    }
    match c.kind {
        CheckKind::Test if !tests.is_empty() => {
            let names: Vec<String> = tests.iter().map(|t| format!("`{t}`")).collect();
            fact(source, format!("Make the failing test{} pass{base}: {}.", plural(tests.len()), name_list(&names)))
        }
        CheckKind::Lint if !errors.is_empty() => {
            let n = errors.len();
            let place = if files.is_empty() { String::new() } else { format!(" in {}", name_list(&files)) };
            fact(source, format!("Fix the {n} lint error{} that `{}` reports{place}{base}.", plural(n), c.name))
        }
        CheckKind::Build if !errors.is_empty() => {
            let n = errors.len();
            let place = if files.is_empty() { String::new() } else { format!(" in {}", name_list(&files)) };
            fact(source, format!("Fix the {n} build error{} that `{}` reports{place}{base}.", plural(n), c.name))
        }
        _ if !tests.is_empty() => {
            let names: Vec<String> = tests.iter().map(|t| format!("`{t}`")).collect();
            fact(source, format!("Make the failing test{} pass{base}: {}.", plural(tests.len()), name_list(&names)))
        }
        _ if !errors.is_empty() => {
            let n = errors.len();
            let place = if files.is_empty() { String::new() } else { format!(" in {}", name_list(&files)) };
            fact(source, format!("Fix the {n} error{} that `{}` reports{place}{base}.", plural(n), c.name))
        }
        _ => fact(
            source,
            format!("Make the check `{}` pass: it {} (its output is below).", c.name, exit_text(c.exit_code, c.signal)),
        ),
    }
}
