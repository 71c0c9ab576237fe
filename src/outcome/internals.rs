//! What the changes to the repository's internals during an attempt mean
//! ([`judge`]): which are violations (a `git-internal` scope finding each),
//! which are the git objects a `git commit` in the worktree writes
//! (reported apart, never a violation), and which stop an attempt that
//! nothing confines before its next unconfined step (the checks, the
//! verifier, the next attempt's `worktree.setup`).

use crate::model::{InternalChange, ObjectsAdded, PartChange};

/// The changes of one step (the agent, or the checks), judged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Judged {
    /// Every change that is not an object added: objects deleted or
    /// replaced, `objects/info/alternates`, refs, config, hooks, links.
    pub violations: Vec<String>,
    /// The objects added, and packs freshened.
    pub objects: ObjectsAdded,
    /// The violations after which nothing unconfined may run: the git links
    /// and the config and hooks. Always empty for a confined step.
    pub halt: Vec<String>,
}

/// Judges `changes`, made by a step that the kernel confined (`confined`)
/// or that nothing confined (`sandbox.mode = "detect"` or `"off"`). Pure.
///
/// A loose object or a file of `objects/pack/` that appeared is an object
/// added: git writes them for a commit in the worktree (and retry-run for
/// other tasks' snapshots under `run -j`). A pack whose times alone moved
/// was freshened by git writing an object it already holds. Anything else
/// that appeared, went or changed is a violation.
pub fn judge(changes: &[InternalChange], confined: bool) -> Judged {
    let mut j = Judged::default();
    for c in changes {
        let part = c.part.as_str();
        match c.change {
            PartChange::Added if loose_object(part) => j.objects.loose += 1,
            PartChange::Added if pack_file(part) => j.objects.packs.push(part.to_string()),
            PartChange::Touched if pack_file(part) && part.ends_with(".pack") => {
                j.objects.freshened.push(part.to_string())
            }
            _ => {
                j.violations.push(part.to_string());
                if !confined && halts(part) {
                    j.halt.push(part.to_string());
                }
            }
        }
    }
    j
}

/// `objects/1a/2b3c...`: a loose object.
fn loose_object(part: &str) -> bool {
    part.strip_prefix("objects/").and_then(|rest| rest.split_once('/')).is_some_and(|(fan, name)| {
        fan.len() == 2
            && fan.bytes().all(|b| b.is_ascii_hexdigit())
            && (name.len() == 38 || name.len() == 62)
            && name.bytes().all(|b| b.is_ascii_hexdigit())
    })
}

/// `objects/pack/pack-1a2b.pack`, `.idx`, `.rev`, `.keep`, ...
fn pack_file(part: &str) -> bool {
    part.strip_prefix("objects/pack/pack-").is_some_and(|rest| !rest.is_empty() && !rest.contains('/'))
}

/// Whether a change of `part` stops an unconfined attempt: a link between
/// a worktree and the repository (`worktree/.git`, `worktree-admin/*`,
/// `worktrees/<id>/{gitdir,commondir,config.worktree}`), or the config or
/// hooks of the repository or of a submodule's. Pure.
pub fn halts(part: &str) -> bool {
    const LINKS: [&str; 3] = ["gitdir", "commondir", "config.worktree"];
    if part == "worktree/.git" || part.starts_with("worktree-admin/") {
        return true;
    }
    if let Some(rest) = part.strip_prefix("worktrees/") {
        return rest.split_once('/').is_some_and(|(_, file)| LINKS.contains(&file));
    }
    let machinery = |p: &str| p == "config" || p == "config.worktree" || p.starts_with("hooks/") || p == "hooks";
    if machinery(part) {
        return true;
    }
    // `modules/<name>/config`, `modules/<name>/hooks/...`.
    part.starts_with("modules/") && (part.ends_with("/config") || part.contains("/hooks/") || part.ends_with("/hooks"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(part: &str, change: PartChange) -> InternalChange {
        InternalChange { part: part.into(), change }
    }

    #[test]
    fn what_each_change_means() {
        use PartChange::*;
        const LOOSE: &str = "objects/1a/2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b";
        // change, violation?, halts an unconfined attempt?, counted as an object added?
        let cases: &[(&str, PartChange, bool, bool, bool)] = &[
            (LOOSE, Added, false, false, true),
            (LOOSE, Removed, true, false, false),
            (LOOSE, Changed, true, false, false),
            ("objects/pack/pack-1a.pack", Added, false, false, true),
            ("objects/pack/pack-1a.idx", Added, false, false, true),
            ("objects/pack/pack-1a.pack", Touched, false, false, false),
            ("objects/pack/pack-1a.idx", Touched, true, false, false),
            ("objects/pack/pack-1a.pack", Removed, true, false, false),
            ("objects/pack/pack-1a.pack", Changed, true, false, false),
            ("objects/pack/multi-pack-index", Added, true, false, false),
            ("objects/info/alternates", Added, true, false, false),
            ("objects/info/commit-graph", Changed, true, false, false),
            ("objects/1a/tmp_obj_x", Added, true, false, false),
            ("refs/heads/main", Changed, true, false, false),
            ("refs/heads/evil", Added, true, false, false),
            ("HEAD", Changed, true, false, false),
            ("info/exclude", Changed, true, false, false),
            ("config", Changed, true, true, false),
            ("config.worktree", Added, true, true, false),
            ("hooks/pre-commit", Added, true, true, false),
            ("hooks/pre-commit", Touched, true, true, false),
            ("worktree/.git", Changed, true, true, false),
            ("worktree-admin/commondir", Changed, true, true, false),
            ("worktree-admin/config.worktree", Added, true, true, false),
            ("worktrees/mine/gitdir", Changed, true, true, false),
            ("worktrees/mine/HEAD", Changed, true, false, false),
            ("worktrees/mine/refs/bisect/bad", Added, true, false, false),
            ("modules/lib/config", Changed, true, true, false),
            ("modules/lib/hooks/post-checkout", Added, true, true, false),
            ("modules/lib/modules/inner/config", Changed, true, true, false),
        ];
        for (part, change, violation, halt, object) in cases {
            for confined in [true, false] {
                let j = judge(&[c(part, *change)], confined);
                let what = format!("{change:?} {part}, confined: {confined}");
                assert_eq!(j.violations == [part.to_string()], *violation, "violation: {what}");
                assert_eq!(j.halt == [part.to_string()], *halt && !confined, "halt: {what}");
                let counted = j.objects.loose + j.objects.packs.len() as u64;
                assert_eq!(counted == 1, *object, "object: {what}");
                assert_eq!(j.objects.freshened.len() == 1, *change == Touched && !violation, "freshened: {what}");
            }
        }
    }

    #[test]
    fn a_commit_in_the_worktree_is_no_violation() {
        let changes = [
            c("objects/0a/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", PartChange::Added),
            c("objects/0b/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", PartChange::Added),
            c("objects/pack/pack-9.pack", PartChange::Touched),
        ];
        let j = judge(&changes, false);
        assert!(j.violations.is_empty() && j.halt.is_empty(), "{j:?}");
        assert_eq!(j.objects.loose, 2);
        assert_eq!(j.objects.freshened, ["objects/pack/pack-9.pack"]);
    }
}
