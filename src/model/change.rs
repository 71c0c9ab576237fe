//! What changed between a base and a head: changed paths, change sets, the
//! patch, and the symbols a change touched.
//!
//! Paths are raw bytes (`Vec<u8>`), exactly as git stores them; they become
//! text only when printed, through `pathfmt`.

use serde::Serialize;

/// How a path changed, with git's one-letter codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Status {
    Added,
    Modified,
    Deleted,
    Renamed,
    /// The kind of entry changed: file, symlink and submodule swap places.
    TypeChanged,
}

impl Status {
    pub fn letter(self) -> &'static str {
        match self {
            Status::Added => "A",
            Status::Modified => "M",
            Status::Deleted => "D",
            Status::Renamed => "R",
            Status::TypeChanged => "T",
        }
    }
}

impl Serialize for Status {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.letter())
    }
}

/// What a tree entry is, from its git file mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum EntryKind {
    File,
    Executable,
    Symlink,
    Submodule,
}

impl EntryKind {
    /// From a git file mode (`0o100644`, `0o100755`, `0o120000`, `0o160000`).
    pub fn from_mode(mode: u32) -> Option<EntryKind> {
        match mode {
            0o100644 | 0o100664 => Some(EntryKind::File),
            0o100755 => Some(EntryKind::Executable),
            0o120000 => Some(EntryKind::Symlink),
            0o160000 => Some(EntryKind::Submodule),
            _ => None,
        }
    }
}

/// One side (old or new) of a changed path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Side {
    pub path: Vec<u8>,
    pub kind: EntryKind,
}

/// One changed path between base and head. A rename is one change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub status: Status,
    /// The base side; `None` for an added path.
    pub old: Option<Side>,
    /// The head side; `None` for a deleted path.
    pub new: Option<Side>,
    /// For a symlink on the head side: its target, as stored in the blob.
    pub symlink_target: Option<Vec<u8>>,
    /// A submodule on the head side has uncommitted changes of its own.
    pub submodule_dirty: bool,
    pub binary: bool,
    pub additions: usize,
    pub deletions: usize,
    /// The scopes the change touched, for a file in a supported language
    /// (computed only for `diff`); `None` otherwise.
    pub symbols: Option<Vec<SymbolChange>>,
}

impl Change {
    /// The path this change is reported under: the new path, or the old one
    /// for a deletion.
    pub fn path(&self) -> &[u8] {
        match (&self.new, &self.old) {
            (Some(n), _) => &n.path,
            (None, Some(o)) => &o.path,
            (None, None) => b"",
        }
    }

    /// The old path of a rename; `None` for every other status.
    pub fn old_path(&self) -> Option<&[u8]> {
        if self.status == Status::Renamed { self.old.as_ref().map(|o| o.path.as_slice()) } else { None }
    }

    pub fn touches_submodule(&self) -> bool {
        let sub = |s: &Option<Side>| s.as_ref().is_some_and(|s| s.kind == EntryKind::Submodule);
        sub(&self.old) || sub(&self.new) || self.submodule_dirty
    }

    /// The target of a symlink that this change writes on the head side
    /// (added, modified, renamed, or a file turned into a link).
    pub fn head_symlink_target(&self) -> Option<&[u8]> {
        match &self.new {
            Some(n) if n.kind == EntryKind::Symlink => self.symlink_target.as_deref(),
            _ => None,
        }
    }
}

/// The head of a comparison: a commit, or the working tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head {
    Commit(String),
    Worktree,
}

impl Head {
    pub fn label(&self) -> &str {
        match self {
            Head::Commit(sha) => sha,
            Head::Worktree => "worktree",
        }
    }
}

/// Every change between a base commit and a head, in path order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeSet {
    /// The commit compared against (for `--head`, the merge base).
    pub base: String,
    pub head: Head,
    pub changes: Vec<Change>,
}

/// Line totals over a change set.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    pub files: usize,
    pub additions: usize,
    pub deletions: usize,
}

impl ChangeSet {
    pub fn totals(&self) -> Totals {
        self.changes.iter().fold(Totals { files: self.changes.len(), ..Totals::default() }, |t, c| Totals {
            additions: t.additions + c.additions,
            deletions: t.deletions + c.deletions,
            ..t
        })
    }
}

/// A change set together with its patch text.
#[derive(Debug, Clone)]
pub(crate) struct DiffSummary {
    pub changes: ChangeSet,
    /// The patch text: at least the leading lines that will be shown.
    pub patch: String,
    /// How many lines the whole patch has.
    pub patch_lines: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SymbolChangeKind {
    Added,
    Modified,
    Removed,
}

/// A scope that a change added, modified or removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SymbolChange {
    pub kind: String,
    pub name: String,
    pub qualified_name: String,
    pub change: SymbolChangeKind,
}

/// Both versions of a changed file and the lines its patch changed
/// (1-based: deleted lines of the old version, added lines of the new).
#[derive(Debug, Clone, Copy)]
pub struct FileVersions<'a> {
    pub path: &'a [u8],
    pub old: Option<&'a [u8]>,
    pub new: Option<&'a [u8]>,
    pub old_changed: &'a [usize],
    pub new_changed: &'a [usize],
    /// The versions' git object ids (raw bytes), when known.
    pub old_id: Option<&'a [u8]>,
    pub new_id: Option<&'a [u8]>,
}
