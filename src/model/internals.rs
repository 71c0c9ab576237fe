//! The repository's internals an attempt changed (its object store, refs,
//! config, hooks and the worktree's git links), named as
//! `git::fingerprint` names them, and what the loop made of them.

use std::fmt;

use serde::{Deserialize, Serialize};

/// How one part of the repository's internals changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PartChange {
    /// It appeared: a new loose object, pack, ref, hook.
    Added,
    /// It is gone.
    Removed,
    /// Its content (or, where only that is read, its size) differs.
    Changed,
    /// Only its times moved: git does this to a pack ("freshens" it) when
    /// it writes an object the pack already holds.
    Touched,
}

/// One part that changed: `objects/pack/pack-1a2b.pack`, `refs/heads/main`,
/// `hooks/pre-commit`, `worktree/.git`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InternalChange {
    pub part: String,
    pub change: PartChange,
}

/// The git objects an attempt added to the repository's object store: a
/// `git commit` in the worktree writes them, so they are reported apart
/// from the violations, never as one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectsAdded {
    /// New loose objects (`objects/xx/...`).
    pub loose: u64,
    /// New files of `objects/pack/` (`pack-1a2b.pack`, `pack-1a2b.idx`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub packs: Vec<String>,
    /// Packs whose times alone moved (git freshening an object they hold).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub freshened: Vec<String>,
    /// Files of the store removed while their objects stayed (a repack by
    /// git beside the run: the objects moved to a new pack), and the pack
    /// list and multi-pack index it rewrote then.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub repacked: Vec<String>,
}

impl ObjectsAdded {
    pub fn is_empty(&self) -> bool {
        self.loose == 0 && self.packs.is_empty() && self.freshened.is_empty() && self.repacked.is_empty()
    }
}

/// The step whose changes stopped an unconfined attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HaltedAfter {
    Agent,
    Checks,
}

impl HaltedAfter {
    pub fn as_str(self) -> &'static str {
        match self {
            HaltedAfter::Agent => "agent",
            HaltedAfter::Checks => "checks",
        }
    }
}

impl fmt::Display for HaltedAfter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why retry-run ran none of an attempt's unconfined steps after its agent
/// (or its checks) and started no further attempt: nothing confined it
/// (`sandbox.mode = "detect"` or `"off"`) and it changed the worktree's git
/// links or the repository's config or hooks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Halt {
    pub after: HaltedAfter,
    /// The links and machinery changed: `worktree/.git`, `config`,
    /// `hooks/pre-commit`.
    pub parts: Vec<String>,
}
