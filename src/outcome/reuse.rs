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
//!
//! Also here: whether a run may look a check up or store it ([`using`]:
//! `[[check]] reuse`, `[retry] reuse`, `run --fresh-baseline`), the stored
//! run ([`StoredRun`]) and which stored runs `clean` removes ([`pruned`]).

use globset::GlobSet;
use serde::{Deserialize, Serialize};

use crate::model::Reused;

pub(crate) use crate::config::inputs_globs;

/// Bumped when the key's parts change meaning, so old entries miss.
const REUSE_VERSION: u32 = 1;

/// The store's directory under `<git-common-dir>/retry-run/`: one
/// `<key>.json` ([`StoredRun`]) per stored run.
pub(crate) const STORE_DIR: &str = "reuse";

/// One stored run: where it came from, how it ended and its output (its
/// worktree's paths made relative).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct StoredRun {
    pub task: String,
    /// `None`: the checks on the base.
    pub attempt: Option<u32>,
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub duration_ms: u64,
    pub output: String,
    /// What the check received then, in words (the user's variables,
    /// installed packages, toolchains: the key holds their digest).
    #[serde(default)]
    pub environment: String,
}

impl StoredRun {
    /// For the record: which run, under `key`, in which environment.
    pub(crate) fn reused(&self, key: &str) -> Reused {
        Reused {
            task: self.task.clone(),
            attempt: self.attempt,
            key: key.to_string(),
            duration_ms: self.duration_ms,
            environment: (!self.environment.is_empty()).then(|| self.environment.clone()),
        }
    }
}

/// What a whole run says of reuse: `[retry] reuse` and `run
/// --fresh-baseline`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Switches {
    /// `[retry] reuse`: what a check without its own `reuse` does.
    pub project: bool,
    /// `run --fresh-baseline`: every check of this run runs for real.
    pub fresh: bool,
}

/// Why a check's earlier output was not looked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Off {
    /// `[[check]] reuse = false`.
    Check,
    /// `[retry] reuse = false`, the check saying nothing.
    Project,
    /// `run --fresh-baseline`.
    Fresh,
}

impl Off {
    /// For the record: the setting that said so.
    pub(crate) fn reason(self) -> &'static str {
        match self {
            Off::Check => "[[check]] reuse = false",
            Off::Project => "[retry] reuse = false",
            Off::Fresh => "run --fresh-baseline",
        }
    }
}

/// What a check's run does with the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Use {
    /// An earlier run's output may stand for it.
    pub read: bool,
    /// Its own run may stand for later ones.
    pub store: bool,
    /// Why it is not looked for, when it is not.
    pub off: Option<Off>,
}

/// What a check whose own switch is `check` (`[[check]] reuse`, `None`
/// when unset) does with the store in a run of `run`. A check that is
/// never reused is not stored either (its output depends on what the key
/// does not hold: the network, the clock); `--fresh-baseline` runs every
/// check for real and stores those runs for later ones.
pub(crate) fn using(check: Option<bool>, run: Switches) -> Use {
    match (check, run.project, run.fresh) {
        (Some(false), ..) => Use { read: false, store: false, off: Some(Off::Check) },
        (None, false, _) => Use { read: false, store: false, off: Some(Off::Project) },
        (_, _, true) => Use { read: false, store: true, off: Some(Off::Fresh) },
        _ => Use { read: true, store: true, off: None },
    }
}

/// Whether a run of a check whose own switch is `check` may be stored for
/// later ones when `[retry] reuse` is `project`: [`using`]'s `store`,
/// whatever the run's `--fresh-baseline` (the base's runs).
pub(crate) fn stores(check: Option<bool>, project: bool) -> bool {
    using(check, Switches { project, fresh: false }).store
}

/// A file of the store (or of the base's shared cache), as `clean` finds
/// it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stored {
    /// Not a stored run that reads (a miss for every run).
    Unreadable,
    /// A stored run whose task's record is still there (`kept`) or not;
    /// an entry of the base's cache, shared by every task, is always kept.
    Of { kept: bool },
}

/// Whether `clean` removes a stored run: one of a task whose record is
/// gone (`clean --state`, or removed earlier), one that does not read, or
/// (`older_than`, seconds: `clean --older-than`) one written longer ago
/// than that (`age`, seconds).
pub(crate) fn pruned(stored: Stored, age: u64, older_than: Option<u64>) -> bool {
    match stored {
        Stored::Unreadable | Stored::Of { kept: false, .. } => true,
        Stored::Of { kept: true, .. } => older_than.is_some_and(|max| age >= max),
    }
}

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
        assert!(err.to_string().starts_with("inputs: \"src/[a\" is not a glob"), "{err}");
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
    fn the_switches_decide_what_a_run_reads_and_stores() {
        let run = |project, fresh| Switches { project, fresh };
        let on = Use { read: true, store: true, off: None };
        let off = |why| Use { read: false, store: false, off: Some(why) };
        let fresh = Use { read: false, store: true, off: Some(Off::Fresh) };
        // (the check's own switch, [retry] reuse, --fresh-baseline) -> what it does
        let cases = [
            ((None, true, false), on),
            ((Some(true), true, false), on),
            // A check that must always run is neither read nor stored.
            ((Some(false), true, false), off(Off::Check)),
            ((Some(false), true, true), off(Off::Check)),
            ((Some(false), false, false), off(Off::Check)),
            // The project's switch stands for the checks that say nothing.
            ((None, false, false), off(Off::Project)),
            ((None, false, true), off(Off::Project)),
            ((Some(true), false, false), on),
            // --fresh-baseline runs every check for real, and keeps the runs.
            ((None, true, true), fresh),
            ((Some(true), true, true), fresh),
            ((Some(true), false, true), fresh),
        ];
        for ((check, project, f), want) in cases {
            assert_eq!(using(check, run(project, f)), want, "{check:?} {project} {f}");
            assert_eq!(stores(check, project), want.store, "{check:?} {project}");
        }
        assert_eq!(Off::Check.reason(), "[[check]] reuse = false");
        assert_eq!(Off::Project.reason(), "[retry] reuse = false");
        assert_eq!(Off::Fresh.reason(), "run --fresh-baseline");
    }

    #[test]
    fn what_clean_removes_of_the_store() {
        let day = 86_400;
        let of = |kept| Stored::Of { kept };
        // (the file, its age, --older-than) -> removed
        let cases = [
            ((of(true), 0, None), false),
            ((of(true), 30 * day, None), false),
            ((of(false), 0, None), true),
            ((Stored::Unreadable, 0, None), true),
            ((of(true), 6 * day, Some(7 * day)), false),
            ((of(true), 7 * day, Some(7 * day)), true),
            ((of(false), 0, Some(7 * day)), true),
        ];
        for ((stored, age, older_than), want) in cases {
            assert_eq!(pruned(stored, age, older_than), want, "{stored:?} {age} {older_than:?}");
        }
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
