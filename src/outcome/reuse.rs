//! Whether a check's earlier output stands for a run on the attempt: the
//! reuse key (pure). A check is a function of its command, the environment
//! retry-run gives it and the files it reads; when all three are those of
//! an earlier run (the checks on the base, an earlier attempt), its output
//! is that run's, judged again instead of run again.
//!
//! The files a check reads are the snapshot's tree (the attempt's commit):
//! all of it by default (its tree id stands for its every file), or the
//! files `[[check]] inputs` globs match (each one's path, mode and blob id).
//! What the tree does not hold (ignored build outputs, caches, the
//! network) is not in the key: a check that reads it should keep the whole
//! tree as its input or not be reused (docs/config.md, `inputs`).

use globset::GlobSet;
use serde::Serialize;

pub(crate) use crate::config::inputs_globs;

/// Bumped when the key's parts change meaning, so old entries miss.
const REUSE_VERSION: u32 = 1;

/// A check's `inputs` over a tree.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Inputs<'a> {
    /// As configured.
    pub globs: &'a [String],
    /// Compiled ([`inputs_globs`]).
    pub set: &'a GlobSet,
    /// The tree's files, (path, `<mode> <blob id>`), in the tree's order.
    pub files: &'a [(String, String)],
}

/// What a check can read of a tree, as one string: `tree <id>` for the
/// whole tree; with `inputs`, the globs and each matching file's path and
/// entry, hashed.
pub(crate) fn inputs_digest(tree: &str, inputs: Option<Inputs<'_>>) -> String {
    let Some(Inputs { globs, set, files }) = inputs else { return format!("tree {tree}") };
    let mut text = format!("inputs {}\n", serde_json::to_string(globs).unwrap_or_default());
    for (path, entry) in files.iter().filter(|(path, _)| set.is_match(path)) {
        text.push_str(path);
        text.push('\0');
        text.push_str(entry);
        text.push('\n');
    }
    format!("inputs {}", crate::hash::sha256_hex(text.as_bytes()))
}

/// The reuse key: the hex sha256 of the check's parts (its definition,
/// environment and programs, as the base's cache keys them, without the
/// tree) and [`inputs_digest`].
pub(crate) fn key<P: Serialize>(check: &P, inputs: &str) -> String {
    let text = serde_json::to_string(&(REUSE_VERSION, check, inputs)).unwrap_or_default();
    crate::hash::sha256_hex(text.as_bytes())
}

/// Whether a finished run may stand for later ones: not cut short by its
/// timeout, no file of the worktree written, and the attempt's own files
/// tested (not the user's checkout).
pub(crate) fn storable(timed_out: bool, wrote: bool, tested_checkout: bool) -> bool {
    !timed_out && !wrote && !tested_checkout
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(p, e)| (p.to_string(), e.to_string())).collect()
    }

    #[test]
    fn the_whole_tree_is_its_id() {
        assert_eq!(inputs_digest("abc", None), "tree abc");
        assert_ne!(inputs_digest("abc", None), inputs_digest("abd", None));
    }

    #[test]
    fn inputs_see_only_the_files_they_match() {
        let globs = vec!["src/**/*.py".to_string(), "pyproject.toml".to_string()];
        let set = inputs_globs(&globs).expect("globs");
        let base = files(&[("README.md", "100644 r1"), ("pyproject.toml", "100644 p1"), ("src/a/b.py", "100644 b1")]);
        let digest =
            |f: &[(String, String)]| inputs_digest("ignored", Some(Inputs { globs: &globs, set: &set, files: f }));
        let d = digest(&base);
        assert!(d.starts_with("inputs "), "{d}");
        // (files, the same key?)
        let cases: &[(&[(&str, &str)], bool)] = &[
            // A file no glob matches changed: the same.
            (&[("README.md", "100644 r2"), ("pyproject.toml", "100644 p1"), ("src/a/b.py", "100644 b1")], true),
            // A matched file's content, its mode, a new or a removed one: another.
            (&[("README.md", "100644 r1"), ("pyproject.toml", "100644 p1"), ("src/a/b.py", "100644 b2")], false),
            (&[("README.md", "100644 r1"), ("pyproject.toml", "100644 p1"), ("src/a/b.py", "100755 b1")], false),
            (&[("pyproject.toml", "100644 p1"), ("src/a/b.py", "100644 b1"), ("src/c.py", "100644 c1")], false),
            (&[("README.md", "100644 r1"), ("src/a/b.py", "100644 b1")], false),
            // `*` does not cross `/`: `src/x/notes.txt` is no input.
            (
                &[
                    ("README.md", "100644 r1"),
                    ("pyproject.toml", "100644 p1"),
                    ("src/a/b.py", "100644 b1"),
                    ("src/x/notes.txt", "100644 n"),
                ],
                true,
            ),
        ];
        for (list, same) in cases {
            assert_eq!(digest(&files(list)) == d, *same, "{list:?}");
        }
        // Other globs over the same files: another key.
        let other = vec!["src/**/*.py".to_string()];
        let other_set = inputs_globs(&other).expect("globs");
        assert_ne!(inputs_digest("x", Some(Inputs { globs: &other, set: &other_set, files: &base })), d);
    }

    #[test]
    fn a_bad_glob_is_named() {
        let err = inputs_globs(&["src/[a".to_string()]).expect_err("unclosed class");
        assert!(err.starts_with("inputs: \"src/[a\" is not a glob"), "{err}");
        assert!(inputs_globs(&["./src/*.rs".to_string()]).expect("globs").is_match("src/a.rs"));
    }

    #[test]
    fn every_part_changes_the_key() {
        let k = key(&("pytest -q", "env"), "tree a");
        assert_eq!(k, key(&("pytest -q", "env"), "tree a"));
        assert_ne!(k, key(&("pytest -x", "env"), "tree a"));
        assert_ne!(k, key(&("pytest -q", "env2"), "tree a"));
        assert_ne!(k, key(&("pytest -q", "env"), "tree b"));
    }

    #[test]
    fn what_may_stand_for_later_runs() {
        let cases = [
            ((false, false, false), true),
            ((true, false, false), false),
            ((false, true, false), false),
            ((false, false, true), false),
        ];
        for ((timed_out, wrote, checkout), want) in cases {
            assert_eq!(storable(timed_out, wrote, checkout), want, "{timed_out} {wrote} {checkout}");
        }
    }
}
