//! The git layer: the only module that uses libgit2.
//!
//! It never writes the user's index, working tree or branches. Comparing
//! and summarising only read: objects they have to create to describe a
//! working tree go into an in-memory object database (libgit2's mempack
//! backend) and vanish with the process (libgit2 may refresh the mtime of
//! a filtered blob that already exists on disk: `working_tree.rs`). The
//! writes are the task's own: its worktree (`task_worktree.rs`,
//! `checkout.rs`), its snapshots' objects and `refs/retry-run/` refs
//! (`tree_write.rs`, `pack.rs`), its record's and lease's commits and refs
//! (`record_ref.rs`), and the `retry-run/<task>` branch on success; and
//! `demo_repo.rs` creates the demo's repository.
//!
//! Where libgit2 falls short (filter drivers, working-tree encodings,
//! sparse checkouts) the `git` program does the work, through
//! `crate::process` (`filters.rs`).

mod changes;
mod checkout;
pub(crate) mod demo_repo;
mod filters;
pub mod fingerprint;
mod identity;
mod ignore;
mod index_file;
mod land;
pub(crate) mod nofollow_fs;
mod pack;
mod patch;
mod record_ref;
mod renames;
mod revs;
mod status;
pub use status::{MAX_SCAN_DEPTH, depth as path_depth};
pub(crate) mod submodules;
mod task_worktree;
mod tree_files;
mod tree_write;
mod walk;
mod working_tree;
pub(crate) mod worktree_admin;

pub use changes::{Comparison, DiffDepth, HeadView, SymbolsFn};
pub use git2::Oid;
pub use identity::{Ident, Role};
pub use land::{CheckedOut, Replay};
pub use revs::Revision;
pub use submodules::Submodule;
pub use task_worktree::{IndexRead, ResetReport, Snapshot};

mod error;
mod repo;

pub use error::GitError;
pub(crate) use error::ctx;
use error::joined;
use repo::open_at;
pub use repo::{Repo, verify_hashes};
