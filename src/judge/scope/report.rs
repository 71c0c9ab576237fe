//! What checking a change set against the scope reports: each
//! [`Violation`], about which path of a change ([`Subject`]), and where a
//! symlink's target leads ([`Resolved`]).

use crate::model::{ScopeReason, Status};

/// Which path of a change a violation is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// The changed path itself (the new path of a rename).
    Path,
    /// The old path of a rename.
    OldPath,
    /// The target of a symlink: as written in the link, and where it led.
    Target { raw: Vec<u8>, resolved: Resolved },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub path: Vec<u8>,
    pub old_path: Option<Vec<u8>>,
    pub status: Status,
    pub reason: ScopeReason,
    /// The glob that decided it (the deny glob that matched), if any.
    pub rule: Option<String>,
    pub subject: Subject,
}

/// The outcome of checking a change set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// Changed paths examined; a rename counts once.
    pub checked: usize,
    pub violations: Vec<Violation>,
    /// Files that act once the change lands, flagged, not failing
    /// ([`landing`], `[scope] acts_after_land = "flag"`).
    pub flagged: Vec<Violation>,
}

/// Where a symlink's target leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// A repository-relative path (`b""` is the repository root).
    Inside(Vec<u8>),
    /// An absolute target, or one that climbs out of the repository.
    Outside,
    /// More than [`super::MAX_SYMLINK_HOPS`] links of the tree followed: a loop.
    Loop,
}
