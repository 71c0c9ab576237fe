//! The checks' earlier outputs, by reuse key ([`crate::outcome::reuse`]),
//! shared by every task, lane and later run of the repository:
//! `<git-common-dir>/retry-run/reuse/<key>.json`. A run on the base or of
//! an attempt that may stand for later ones is written here; a check whose
//! key is found is not run: the stored output is judged again and the
//! check is recorded as reused, naming that run. An entry that cannot be
//! read is a miss (the check runs and replaces it). Whether a run reads
//! and writes here at all is [`reuse::using`]'s (`[[check]] reuse`,
//! `[retry] reuse`, `run --fresh-baseline`); `clean` prunes it
//! (`crate::clean`).

use std::path::{Path, PathBuf};

use crate::config::CheckConfig;
use crate::git::{GitError, Oid, Repo};
use crate::outcome::reuse;
pub(crate) use crate::outcome::reuse::StoredRun;

/// The reuse key of `check` run on `tree` with the variables retry-run
/// gives it (`env`: the runner variables and the import root, as the base's
/// cache keys them) in worktree `wt`, receiving what `received` digests
/// ([`super::received`]). Walks the tree only when the check
/// names its `inputs`.
pub(crate) fn key(
    repo: &Repo,
    check: &CheckConfig,
    tree: Oid,
    env: &[(String, String)],
    wt: &Path,
    received: &str,
) -> Result<String, GitError> {
    let env = super::baseline_cache::env_of(env, wt);
    let parts = super::baseline_cache::parts(check, String::new(), env, received);
    let tree_id = tree.to_string();
    let inputs = match &check.inputs {
        None => reuse::inputs_digest(&tree_id, None),
        Some(globs) => {
            // Validated when the config was read.
            let set = reuse::inputs_globs(globs).unwrap_or_else(|_| globset::GlobSet::empty());
            let files = repo.tree_files(tree)?;
            reuse::inputs_digest(&tree_id, Some(reuse::Inputs { globs, set: &set, files: &files }))
        }
    };
    Ok(reuse::key(&parts, &inputs))
}

/// Where the entry of `key` lives under `root` (`<common>/retry-run`).
pub(crate) fn file(root: &Path, key: &str) -> PathBuf {
    root.join(reuse::STORE_DIR).join(format!("{key}.json"))
}

/// The stored run of `key`, if there is one that reads.
pub(crate) fn read(root: &Path, key: &str) -> Option<StoredRun> {
    let bytes = std::fs::read(file(root, key)).ok()?;
    serde_json::from_slice(&bytes).ok()
}

/// `<common>/retry-run` of `repo`: the store the entries are kept in.
pub(crate) fn root_of(repo: &Repo) -> PathBuf {
    crate::record::store::Store::new(repo.common_dir()).root
}
