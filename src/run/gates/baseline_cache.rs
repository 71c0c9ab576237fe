//! The base's check results, shared by every task, lane and later run on
//! the same base: `<git-common-dir>/retry-run/baselines/<key>.json`.
//!
//! The key ([`key`], pure) hashes what decides a check's result on the
//! base: the base's tree, the check's definition (`run`, `kind`, `format`,
//! `timeout`, `network`), the environment retry-run gives it (the runner
//! variables, the import root relative to the worktree, `PATH`), and the
//! identity of the programs it starts ([`tools`]: each command word's
//! resolved path and modification time). The project's lock files are in
//! the base's tree. A change of any part is another key; `run
//! --fresh-baseline` ignores the cache; an entry that cannot be read is
//! run again and replaced.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::config::CheckConfig;
use crate::outcome::check::{Baseline, KEYS_VERSION};

/// What the key of one check's baseline is made of.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub(crate) struct KeyParts<'a> {
    /// The base commit's tree.
    pub tree: String,
    pub run: &'a str,
    pub kind: &'a str,
    pub format: &'a str,
    pub timeout_ms: u64,
    pub network: &'a [String],
    /// Variables retry-run sets for the check, worktree paths written
    /// `<worktree>`, and `PATH`.
    pub env: BTreeMap<String, String>,
    /// Each program the command starts: its resolved path and
    /// modification time (nanoseconds), or the word when it resolves to
    /// nothing on disk (a shell builtin).
    pub tools: Vec<(String, Option<u128>)>,
    /// What else it receives and loads ([`super::received`]): the user's
    /// variables, installed packages, toolchains, declared reads.
    pub received: String,
}

/// The hex SHA-256 of the key parts and the failure keys' version. Pure.
pub(crate) fn key(parts: &KeyParts<'_>) -> String {
    let text = serde_json::to_string(&(KEYS_VERSION, parts)).unwrap_or_default();
    crate::hash::sha256_hex(text.as_bytes())
}

/// A cached baseline and where it came from.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct CachedBaseline {
    pub baseline: Baseline,
    /// The task whose run made it.
    pub task: String,
    /// The tests the run named (passed and failed), to tell a target that
    /// exists on the base from one that does not; `None` in an entry
    /// written before they were kept.
    #[serde(default)]
    pub tests: Option<crate::judge::test_results::TestRun>,
    /// What the check received then, in words ([`super::received::ReceivedKeys`]).
    #[serde(default)]
    pub environment: Option<String>,
}

/// The command words of a shell command line that start programs: the
/// first word of each command between `;`, `&&`, `||`, `|` and `&`, after
/// `VAR=value` assignments. Pure and rough (no quotes inside words, no
/// subshells): what it misses only makes the key less precise.
pub(crate) fn command_words(run: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let normalized = run.replace("&&", ";").replace("||", ";").replace(['|', '&', '\n'], ";");
    for part in normalized.split(';') {
        let word = part
            .split_whitespace()
            .find(|w| !w.contains('=') || w.starts_with('='))
            .map(|w| w.trim_matches(|c| c == '"' || c == '\'' || c == '(' || c == ')'));
        if let Some(w) = word.filter(|w| !w.is_empty())
            && !out.iter().any(|o| o == w)
        {
            out.push(w.to_string());
        }
    }
    out
}

/// The identity of each program `run` starts: a word with a `/` taken
/// from the worktree (tracked files are in the tree already) or as an
/// absolute path, a bare word looked up on `path`.
pub(crate) fn tools(run: &str, path: &str) -> Vec<(String, Option<u128>)> {
    command_words(run)
        .into_iter()
        .map(|w| {
            let found: Option<PathBuf> = if w.contains('/') {
                let p = Path::new(&w);
                // Inside the worktree: its content is the base tree's.
                if p.is_absolute() { Some(p.to_path_buf()) } else { None }
            } else {
                crate::process::programs_on_path(&w, path.as_ref()).next()
            };
            match found {
                Some(p) => {
                    let real = std::fs::canonicalize(&p).unwrap_or(p);
                    let mtime = std::fs::metadata(&real)
                        .and_then(|m| m.modified())
                        .ok()
                        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                        .map(|d| d.as_nanos());
                    (real.display().to_string(), mtime)
                }
                None => (w, None),
            }
        })
        .collect()
}

/// `env` with the worktree's path written `<worktree>`, so that every
/// task's worktree gives the same key.
pub(crate) fn env_of(env: &[(String, String)], worktree: &Path) -> BTreeMap<String, String> {
    let wt = worktree.display().to_string();
    env.iter().map(|(k, v)| (k.clone(), v.replace(&wt, "<worktree>"))).collect()
}

/// The parts of `check`'s key on base tree `tree`.
pub(crate) fn parts<'c>(
    check: &'c CheckConfig,
    tree: String,
    env: BTreeMap<String, String>,
    received: &str,
) -> KeyParts<'c> {
    let path = env.get("PATH").cloned().or_else(|| std::env::var("PATH").ok()).unwrap_or_default();
    let mut env = env;
    env.entry("PATH".into()).or_insert_with(|| path.clone());
    KeyParts {
        tree,
        run: &check.run,
        kind: match check.kind {
            crate::model::CheckKind::Lint => "lint",
            crate::model::CheckKind::Test => "test",
            crate::model::CheckKind::Build => "build",
            crate::model::CheckKind::Custom => "custom",
        },
        format: &check.format.0,
        timeout_ms: check.timeout.value.as_millis() as u64,
        network: &check.network,
        env,
        tools: tools(&check.run, &path),
        received: received.to_string(),
    }
}

/// The cached entry of `key` under `root` (`<common>/retry-run`), if it
/// reads as one made with today's failure keys.
pub(crate) fn read(root: &Path, key: &str) -> Option<CachedBaseline> {
    let bytes = std::fs::read(file(root, key)).ok()?;
    serde_json::from_slice::<CachedBaseline>(&bytes).ok().filter(|e| e.baseline.keys == KEYS_VERSION)
}

/// Where the entry of `key` lives.
pub(crate) fn file(root: &Path, key: &str) -> PathBuf {
    root.join(crate::outcome::check::BASE_CACHE_DIR).join(format!("{key}.json"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_words_of_a_shell_line() {
        assert_eq!(command_words("python3 -m pytest -q"), ["python3"]);
        assert_eq!(command_words("FOO=1 ruff check . && PYTHONPATH=src pytest | tee x"), ["ruff", "pytest", "tee"]);
        assert_eq!(command_words("sh test.sh; sh extra.sh"), ["sh"]);
        assert_eq!(command_words("/opt/venv/bin/python -m x || true"), ["/opt/venv/bin/python", "true"]);
    }

    #[test]
    fn every_part_changes_the_key() {
        let check: CheckConfig = toml::from_str("name = \"t\"\nrun = \"x\"\nkind = \"test\"").expect("check");
        let base = KeyParts {
            tree: "t1".into(),
            run: "x",
            kind: "test",
            format: "auto",
            timeout_ms: 1,
            network: &[],
            env: BTreeMap::from([("PATH".to_string(), "/bin".to_string())]),
            tools: vec![("/bin/x".into(), Some(1))],
            received: "r1".into(),
        };
        let k = key(&base);
        assert_eq!(k, key(&base.clone()), "the same parts, the same key");
        let net = ["h".to_string()];
        let variants = [
            KeyParts { tree: "t2".into(), ..base.clone() },
            KeyParts { run: "y", ..base.clone() },
            KeyParts { kind: "lint", ..base.clone() },
            KeyParts { format: "ruff", ..base.clone() },
            KeyParts { timeout_ms: 2, ..base.clone() },
            KeyParts { network: &net, ..base.clone() },
            KeyParts { env: BTreeMap::from([("PATH".to_string(), "/usr/bin".to_string())]), ..base.clone() },
            KeyParts { tools: vec![("/bin/x".into(), Some(2))], ..base.clone() },
            KeyParts { received: "r2".into(), ..base.clone() },
        ];
        for v in &variants {
            assert_ne!(key(v), k, "{v:?}");
        }
        // The worktree's own path does not change it.
        let a = env_of(&[("PYTHONPATH".into(), "/w/a/src".into())], Path::new("/w/a"));
        let b = env_of(&[("PYTHONPATH".into(), "/w/b/src".into())], Path::new("/w/b"));
        assert_eq!(a, b);
        assert_eq!(parts(&check, "t".into(), a, "r").run, "x");
    }
}
