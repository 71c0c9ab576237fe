//! What the changes to the repository's internals during an attempt mean
//! ([`judge`]): which are violations (a `git-internal` scope finding each),
//! which are the git objects a `git commit` in the worktree writes
//! (reported apart, never a violation), and which stop an attempt that
//! nothing confines before its next unconfined step (the checks, the
//! verifier, the next attempt's `worktree.setup`).

use std::collections::BTreeSet;

use crate::model::{InternalChange, ObjectsAdded, PartChange};

/// The changes of one step (the agent, or the checks), judged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Judged {
    /// Every change that is not an object added: objects deleted or
    /// replaced, `objects/info/alternates`, refs, config, hooks, links.
    pub violations: Vec<String>,
    /// The objects added, and packs freshened.
    pub objects: ObjectsAdded,
    /// The violations after which nothing unconfined may run: the git links
    /// and the config and hooks. Always empty for a confined step.
    pub halt: Vec<String>,
    /// Changes the step could not have made: the sandbox kept those parts
    /// read-only to it, so another process made them (the user's git,
    /// another clone). Recorded and shown, never charged to the attempt.
    pub environment: Vec<String>,
}

/// What [`judge_with`] knows beside the changes.
pub(crate) struct Beside<'a> {
    /// Whether the kernel confined the step (namespaces or Landlock).
    pub confined: bool,
    /// Whether the confined step could write a part (a path of its
    /// policy's writable ones holds it); asked only when `confined`.
    pub could_write: &'a dyn Fn(&str) -> bool,
    /// The removed parts whose objects are all still in the store
    /// ([`still_stored`]): a repack, not a loss.
    pub still_stored: &'a BTreeSet<String>,
}

/// Files git rewrites when it repacks: the lists of packs and refs for
/// dumb transports (`git update-server-info`, which `git repack` runs) and
/// the multi-pack index it drops or rewrites.
fn repack_output(part: &str) -> bool {
    part == "objects/info/packs" || part == "info/refs" || part.starts_with("objects/pack/multi-pack-index")
}

/// Which removed parts of `changes` lost no object: a loose object still
/// `stored` (now in a pack), and every file of a pack whose `.pack` and
/// `.idx` were both removed and whose objects (`pack_objects`, read from its
/// index kept open) are all still `stored`. A pack only partly removed (its
/// index alone, its `.promisor`), or one whose objects cannot be listed, is
/// not among them. Pure but for what the two functions read.
pub(crate) fn still_stored(
    changes: &[InternalChange],
    pack_objects: impl Fn(&str) -> Option<Vec<String>>,
    stored: impl Fn(&str) -> bool,
) -> BTreeSet<String> {
    let removed: BTreeSet<&str> =
        changes.iter().filter(|c| c.change == PartChange::Removed).map(|c| c.part.as_str()).collect();
    let mut out = BTreeSet::new();
    let mut packs: BTreeSet<&str> = BTreeSet::new();
    for part in &removed {
        if loose_object(part) {
            let hex: String = part["objects/".len()..].chars().filter(|c| *c != '/').collect();
            if stored(&hex) {
                out.insert(part.to_string());
            }
        } else if let Some(file) = part.strip_prefix("objects/pack/").filter(|_| pack_file(part))
            && let Some((pack, _)) = file.split_once('.')
        {
            packs.insert(pack);
        }
    }
    for pack in packs {
        let whole = ["pack", "idx"].iter().all(|ext| removed.contains(format!("objects/pack/{pack}.{ext}").as_str()));
        if whole && pack_objects(pack).is_some_and(|ids| ids.iter().all(|id| stored(id))) {
            let prefix = format!("objects/pack/{pack}.");
            out.extend(removed.iter().filter(|p| p.starts_with(&prefix)).map(|p| p.to_string()));
        }
    }
    out
}

/// Judges `changes`, made by a step that the kernel confined (`confined`)
/// or that nothing confined (`sandbox.mode = "detect"` or `"off"`). Pure.
///
/// A loose object or a file of `objects/pack/` that appeared is an object
/// added: git writes them for a commit in the worktree (and retry-run for
/// other tasks' snapshots under `run -j`). A pack whose times alone moved
/// was freshened by git writing an object it already holds. Anything else
/// that appeared, went or changed is a violation.
#[cfg(test)]
pub(crate) fn judge(changes: &[InternalChange], confined: bool) -> Judged {
    judge_with(changes, &Beside { confined, could_write: &|_| true, still_stored: &BTreeSet::new() })
}

/// [`judge`], knowing more: a removed part whose objects are all still
/// stored is a repack (`objects.repacked`, with the pack list and
/// multi-pack index git rewrote then), not a violation; and a change the
/// confined step could not have made (a part the sandbox kept read-only to
/// it) is the environment's. Pure.
pub(crate) fn judge_with(changes: &[InternalChange], seen: &Beside<'_>) -> Judged {
    let mut j = Judged::default();
    let repack = changes.iter().any(|c| c.change == PartChange::Removed && seen.still_stored.contains(&c.part));
    for c in changes {
        let part = c.part.as_str();
        match c.change {
            PartChange::Added if loose_object(part) => j.objects.loose += 1,
            PartChange::Added if pack_file(part) => j.objects.packs.push(part.to_string()),
            PartChange::Touched if pack_file(part) && part.ends_with(".pack") => {
                j.objects.freshened.push(part.to_string())
            }
            PartChange::Removed if seen.still_stored.contains(part) => j.objects.repacked.push(part.to_string()),
            _ if repack && repack_output(part) => j.objects.repacked.push(part.to_string()),
            _ if seen.confined && !(seen.could_write)(part) => j.environment.push(part.to_string()),
            _ => {
                j.violations.push(part.to_string());
                if !seen.confined && halts(part) {
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
pub(crate) fn halts(part: &str) -> bool {
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
    fn a_repack_beside_the_run_loses_no_object_and_is_no_violation() {
        use PartChange::*;
        let a = "objects/0a/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
        let b = "objects/0b/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
        let changes = [
            c(a, Removed),
            c(b, Removed),
            c("objects/pack/pack-1.pack", Removed),
            c("objects/pack/pack-1.idx", Removed),
            c("objects/pack/pack-1.rev", Removed),
            c("objects/pack/pack-2.idx", Removed),
            c("objects/pack/pack-3.pack", Removed),
            c("objects/pack/pack-3.idx", Removed),
            c("objects/pack/pack-9.pack", Added),
            c("objects/pack/pack-9.idx", Added),
            c("objects/info/packs", Changed),
        ];
        let objects = |pack: &str| match pack {
            "pack-1" => Some(vec!["11".to_string(), "0a".to_string() + &"a".repeat(38)]),
            "pack-2" => Some(vec!["22".to_string()]),
            "pack-3" => Some(vec!["33".to_string()]),
            _ => None,
        };
        // The user's git stored everything but b and pack-3's object again.
        let stored = |id: &str| id != "33" && !id.starts_with("0b");
        let kept = still_stored(&changes, objects, stored);
        let want: BTreeSet<String> =
            [a, "objects/pack/pack-1.idx", "objects/pack/pack-1.pack", "objects/pack/pack-1.rev"]
                .iter()
                .map(|s| s.to_string())
                .collect();
        assert_eq!(kept, want, "pack-2 only lost its index, pack-3 an object, b is gone");
        let detect = judge_with(&changes, &Beside { confined: false, could_write: &|_| true, still_stored: &kept });
        assert_eq!(
            detect.violations,
            [b, "objects/pack/pack-2.idx", "objects/pack/pack-3.pack", "objects/pack/pack-3.idx"]
        );
        assert_eq!(detect.objects.repacked.len(), 5, "{detect:?}");
        assert!(detect.objects.repacked.contains(&"objects/info/packs".to_string()));
        assert_eq!(detect.objects.packs.len(), 2);
        // No repack: the pack list is the agent's change.
        let alone = judge_with(
            &[c("objects/info/packs", Changed)],
            &Beside { confined: false, could_write: &|_| true, still_stored: &BTreeSet::new() },
        );
        assert_eq!(alone.violations, ["objects/info/packs"]);
    }

    #[test]
    fn what_a_confined_step_could_not_write_is_the_environment_s() {
        use PartChange::*;
        let changes = [
            c("objects/pack/pack-1.idx", Removed),
            c("refs/heads/main", Changed),
            c("config", Changed),
            c("worktree-admin/gitdir", Changed),
            c("objects/1a/2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b", Added),
        ];
        let admin_only = |p: &str| p.starts_with("worktree-admin/");
        let none = BTreeSet::new();
        let j = judge_with(&changes, &Beside { confined: true, could_write: &admin_only, still_stored: &none });
        assert_eq!(j.violations, ["worktree-admin/gitdir"]);
        assert_eq!(j.environment, ["objects/pack/pack-1.idx", "refs/heads/main", "config"]);
        assert_eq!(j.objects.loose, 1);
        assert!(j.halt.is_empty());
        let unconfined =
            judge_with(&changes, &Beside { confined: false, could_write: &admin_only, still_stored: &none });
        assert!(unconfined.environment.is_empty() && unconfined.violations.len() == 4, "{unconfined:?}");
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
