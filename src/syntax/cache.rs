//! Scopes cached by git object id (docs/commands.md, `diff`): a blob's
//! scopes depend only on its bytes, the language's query and this version
//! of retry-run, so they are parsed once and kept in the user's cache
//! directory (`$XDG_CACHE_HOME/retry-run/scopes/<language>-<stamp>/`, else
//! `~/.cache/...`), one small JSON file per blob, shared by every clone: the
//! repository itself is never written. The base's blobs are the same for
//! every attempt of a task and for every pull request on that base.
//!
//! The cache only saves time: a file that cannot be read or written is
//! parsed again, and `diff --no-cache` bypasses it; the output is the same.

use std::path::PathBuf;

use super::{LanguageDef, cache_stamp, scopes};
use crate::model::ScopeSpan;

pub struct ScopeCache {
    root: PathBuf,
}

impl ScopeCache {
    /// The user's cache; `None` when there is no cache directory (no
    /// `XDG_CACHE_HOME` and no `HOME`).
    pub fn open() -> Option<ScopeCache> {
        let base = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
        Some(ScopeCache { root: base.join("retry-run").join("scopes") })
    }

    fn path(&self, def: &LanguageDef, id: &[u8]) -> PathBuf {
        let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
        self.root.join(cache_stamp(def)).join(&hex[..2]).join(format!("{}.json", &hex[2..]))
    }

    /// The scopes of `source` (whose object id is `id`): from the cache,
    /// else parsed and stored. A version that cannot be parsed has none
    /// (and is not stored).
    pub fn scopes(&self, def: &'static LanguageDef, id: Option<&[u8]>, source: &[u8]) -> Vec<ScopeSpan> {
        let Some(id) = id.filter(|i| i.len() >= 2) else { return scopes(def, source).unwrap_or_default() };
        let path = self.path(def, id);
        if let Some(spans) = std::fs::read(&path).ok().and_then(|b| serde_json::from_slice(&b).ok()) {
            return spans;
        }
        let Ok(spans) = scopes(def, source) else { return Vec::new() };
        store(&path, &spans);
        spans
    }
}

/// Writes the entry whole (a temporary file renamed into place), or not at all.
fn store(path: &std::path::Path, spans: &[ScopeSpan]) {
    let Some(dir) = path.parent() else { return };
    let Ok(bytes) = serde_json::to_vec(spans) else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp = dir.join(format!(".{}.{}", std::process::id(), path.file_name().and_then(|n| n.to_str()).unwrap_or("x")));
    if std::fs::write(&tmp, bytes).is_ok() && std::fs::rename(&tmp, path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}
