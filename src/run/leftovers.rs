//! The agent's leftovers: what it leaves in the worktree that is not part
//! of the change (`[agent] leftovers`, and the preset's own globs): its
//! history files, caches, and an edit of `.gitignore` that only adds its own
//! patterns. Before the snapshot they are moved out of the worktree into the
//! attempt's record (`attempts/<n>/leftovers/`), so they are never in the
//! diff nor a scope violation, and listed in `AgentFinished.leftovers`.

use std::path::{Path, PathBuf};

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// The compiled `leftovers` globs (same rules as `[scope]`).
pub(crate) struct Leftovers {
    set: GlobSet,
    patterns: Vec<String>,
    /// Whether a glob can match below the top level.
    deep: bool,
}

/// An `agent.leftovers` glob that does not compile.
#[derive(Debug, thiserror::Error)]
#[error("agent.leftovers: {}{source}", glob.as_ref().map(|g| format!("invalid glob {g:?}: ")).unwrap_or_default())]
pub struct LeftoversError {
    pub glob: Option<String>,
    pub source: globset::Error,
}

impl Leftovers {
    pub(crate) fn new(globs: &[String]) -> Result<Leftovers, LeftoversError> {
        let mut b = GlobSetBuilder::new();
        for g in globs {
            let g = g.trim_start_matches("./");
            b.add(
                GlobBuilder::new(g)
                    .literal_separator(true)
                    .backslash_escape(true)
                    .build()
                    .map_err(|source| LeftoversError { glob: Some(g.to_string()), source })?,
            );
        }
        Ok(Leftovers {
            set: b.build().map_err(|source| LeftoversError { glob: None, source })?,
            patterns: globs.to_vec(),
            deep: globs.iter().any(|g| g.contains('/')),
        })
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// Whether a `.gitignore` edit only adds the agent's own patterns:
    /// every line of `before` is still there, and every new line is one of
    /// the leftovers globs (or a comment, or blank). Pure.
    pub(crate) fn only_adds_own(&self, before: &str, after: &str) -> bool {
        let old: Vec<&str> = before.lines().map(str::trim).collect();
        let new: Vec<&str> = after.lines().map(str::trim).collect();
        if !old.iter().all(|l| new.contains(l)) {
            return false;
        }
        new.iter().filter(|l| !old.contains(l)).all(|l| {
            l.is_empty()
                || l.starts_with('#')
                || self.patterns.iter().any(|p| p.trim_start_matches('/') == l.trim_start_matches('/'))
        })
    }

    /// Moves the untracked files and directories of `worktree` that match
    /// into `keep`; `tracked` says whether a path is in the base. Returns
    /// what it moved, relative to the worktree.
    pub(crate) fn move_out(&self, worktree: &Path, keep: &Path, tracked: &dyn Fn(&str) -> bool) -> Vec<String> {
        let mut found: Vec<String> = Vec::new();
        let mut stack: Vec<PathBuf> = vec![PathBuf::new()];
        while let Some(rel) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(worktree.join(&rel)) else { continue };
            for e in rd.flatten() {
                let name = e.file_name();
                if rel.as_os_str().is_empty() && name == ".git" {
                    continue;
                }
                let path = rel.join(&name);
                let s = path.to_string_lossy().into_owned();
                let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
                if self.set.is_match(&s) && !tracked(&s) {
                    found.push(s);
                } else if is_dir && self.deep {
                    stack.push(path);
                }
            }
        }
        found.sort();
        for rel in &found {
            let to = keep.join(rel);
            if let Some(parent) = to.parent() {
                let _ = std::fs::create_dir_all(parent);
            }
            if std::fs::rename(worktree.join(rel), &to).is_err() {
                let p = worktree.join(rel);
                let _ = std::fs::remove_dir_all(&p).or_else(|_| std::fs::remove_file(&p));
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gitignore_edits_that_only_add_the_agents_patterns() {
        let d = Leftovers::new(&[".aider*".into()]).expect("globs");
        assert!(d.only_adds_own("*.log\n", "*.log\n.aider*\n"));
        assert!(d.only_adds_own("", "\n# aider\n.aider*\n"));
        assert!(!d.only_adds_own("*.log\n", ".aider*\n"), "a removed line");
        assert!(!d.only_adds_own("*.log\n", "*.log\nsecret.txt\n"), "another pattern");
    }

    #[test]
    fn untracked_matches_move_out() {
        let dir = tempfile::tempdir().expect("tmp");
        let (wt, keep) = (dir.path().join("wt"), dir.path().join("keep"));
        std::fs::create_dir_all(wt.join(".aider.tags.cache.v4")).expect("mkdir");
        std::fs::write(wt.join(".aider.chat.history.md"), "x").expect("write");
        std::fs::write(wt.join(".aider.tags.cache.v4/cache.db"), "x").expect("write");
        std::fs::write(wt.join(".aider.conf.yml"), "tracked").expect("write");
        std::fs::write(wt.join("src.py"), "x").expect("write");
        let d = Leftovers::new(&[".aider*".into()]).expect("globs");
        let moved = d.move_out(&wt, &keep, &|p| p == ".aider.conf.yml");
        assert_eq!(moved, [".aider.chat.history.md", ".aider.tags.cache.v4"]);
        assert!(keep.join(".aider.tags.cache.v4/cache.db").exists());
        assert!(wt.join(".aider.conf.yml").exists() && wt.join("src.py").exists());
    }
}
