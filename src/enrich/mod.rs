//! `retry-run enrich` (docs/commands.md, `enrich`): each diagnostic with
//! the innermost scope around its line, and a snippet ([`snippet`]) shared
//! by the diagnostics of one scope. The core is pure; [`load`] reads and
//! parses the files (each once, on all cores).

pub(crate) mod load;
pub(crate) mod snippet;

use std::collections::HashMap;
use std::path::{Component, Path};

use serde::Serialize;

use crate::diagnostics::{Diagnostic, Severity};
use crate::model::{ScopeSpan, innermost};

/// A diagnostic with what enrichment found for it.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Enriched {
    #[serde(flatten)]
    pub diagnostic: Diagnostic,
    pub scope: Option<ScopeSpan>,
    /// Shared by every diagnostic of its scope (one allocation, and
    /// escaped as JSON once: `shared_snippet`).
    #[serde(serialize_with = "shared_snippet")]
    pub snippet: Option<std::sync::Arc<str>>,
}

/// The last snippet written, and its JSON string.
type Escaped = (Option<std::sync::Arc<str>>, Option<Box<serde_json::value::RawValue>>);

thread_local! {
    /// Snippets already written as JSON strings, by address: a scope's
    /// snippet is shared by all its diagnostics and escaped once.
    static ESCAPED: std::cell::RefCell<Escaped> = const { std::cell::RefCell::new((None, None)) };
}

/// Serializes a shared snippet: the same string as ever, escaped once for
/// the run of diagnostics that share it.
fn shared_snippet<S: serde::Serializer>(
    snippet: &Option<std::sync::Arc<str>>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    let Some(s) = snippet else { return serializer.serialize_none() };
    ESCAPED.with(|cell| {
        let mut cache = cell.borrow_mut();
        if !cache.0.as_ref().is_some_and(|last| std::sync::Arc::ptr_eq(last, s)) {
            let raw = serde_json::to_string(&**s).ok().and_then(|j| serde_json::value::RawValue::from_string(j).ok());
            *cache = (Some(std::sync::Arc::clone(s)), raw);
        }
        match &cache.1 {
            Some(raw) => serializer.serialize_some(raw),
            None => serializer.serialize_some(&**s),
        }
    })
}

/// Where a printed path points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Place {
    /// Inside the root: the path relative to it, with `/` separators.
    Inside(String),
    /// Outside the root (`/usr/lib/python3/...`, `/rustc/...`, `../x`).
    Outside,
}

/// Where `printed` points, given the root as the user spelled it made
/// absolute (`root`) and its canonical form (`canonical_root`). Lexical only.
pub(crate) fn place(printed: &str, root: &Path, canonical_root: &Path) -> Place {
    let p = Path::new(printed);
    let relative = if p.is_absolute() {
        match p.strip_prefix(root).or_else(|_| p.strip_prefix(canonical_root)) {
            Ok(r) => r.to_path_buf(),
            Err(_) => return Place::Outside,
        }
    } else {
        p.to_path_buf()
    };
    let mut parts: Vec<String> = Vec::new();
    for c in relative.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if parts.pop().is_none() {
                    return Place::Outside;
                }
            }
            Component::Normal(s) => match s.to_str() {
                Some(s) => parts.push(s.to_string()),
                None => return Place::Outside,
            },
            Component::RootDir | Component::Prefix(_) => return Place::Outside,
        }
    }
    if parts.is_empty() { Place::Outside } else { Place::Inside(parts.join("/")) }
}

/// What reading and parsing one file gave.
#[derive(Debug, Clone)]
pub(crate) enum Source {
    /// Missing, unreadable, binary or not UTF-8: diagnostics keep `scope: null`.
    Unreadable,
    /// A text file; `scopes` is empty for languages without a grammar.
    Text { text: String, scopes: Vec<ScopeSpan> },
}

/// The files (relative to the root) that enrichment needs, each once.
pub(crate) fn files_to_read(diagnostics: &[Diagnostic], root: &Path, canonical_root: &Path) -> Vec<String> {
    let mut files: Vec<String> = diagnostics
        .iter()
        .filter(|d| d.line.is_some() || d.symbol.is_some())
        .filter_map(|d| d.path.as_deref())
        .filter_map(|p| match place(p, root, canonical_root) {
            Place::Inside(rel) => Some(rel),
            Place::Outside => None,
        })
        .collect();
    files.sort_unstable();
    files.dedup();
    files
}

/// The lines each file's diagnostics point at, for files whose scopes are
/// needed only around those lines. A file with a diagnostic that names a
/// symbol and no line is left out: all its scopes are needed to find it.
pub(crate) fn lines_of_interest(
    diagnostics: &[Diagnostic],
    root: &Path,
    canonical_root: &Path,
) -> HashMap<String, Vec<usize>> {
    let mut lines: HashMap<String, Vec<usize>> = HashMap::new();
    let mut whole: std::collections::HashSet<String> = std::collections::HashSet::new();
    for d in diagnostics {
        let Some(Place::Inside(rel)) = d.path.as_deref().map(|p| place(p, root, canonical_root)) else { continue };
        match (d.line, &d.symbol) {
            (Some(l), _) => lines.entry(rel).or_default().push(l),
            (None, Some(_)) => {
                whole.insert(rel);
            }
            (None, None) => {}
        }
    }
    lines.retain(|rel, _| !whole.contains(rel));
    lines
}

/// Attaches scopes and snippets. `sources` holds every file of
/// [`files_to_read`]. Paths inside the root are printed relative to it.
pub(crate) fn enrich(
    diagnostics: Vec<Diagnostic>,
    sources: &HashMap<String, Source>,
    root: &Path,
    canonical_root: &Path,
) -> Vec<Enriched> {
    let places: Vec<Option<String>> = diagnostics
        .iter()
        .map(|d| match d.path.as_deref().map(|p| place(p, root, canonical_root)) {
            Some(Place::Inside(rel)) => Some(rel),
            _ => None,
        })
        .collect();
    let mut out: Vec<Enriched> = diagnostics
        .into_iter()
        .zip(&places)
        .map(|(mut d, rel)| {
            if let Some(rel) = rel {
                d.path = Some(rel.clone());
            }
            let source = rel.as_ref().and_then(|r| sources.get(r));
            let mut scope = None;
            if let Some(Source::Text { scopes, .. }) = source {
                if d.line.is_none()
                    && let Some(found) = d.symbol.as_ref().and_then(|q| scopes.iter().find(|s| &s.qualified_name == q))
                {
                    d.line = Some(found.start_line);
                }
                scope = d.line.and_then(|l| innermost(scopes, l)).cloned();
            }
            Enriched { diagnostic: d, scope, snippet: None }
        })
        .collect();
    crash_sites(&mut out, &places);
    snippets(&mut out, sources);
    out
}

/// In each traceback, the last frame inside the tree is the error (the crash
/// site); the other frames are notes.
fn crash_sites(out: &mut [Enriched], places: &[Option<String>]) {
    let mut last_inside: HashMap<usize, usize> = HashMap::new();
    let mut last_any: HashMap<usize, usize> = HashMap::new();
    for (i, e) in out.iter().enumerate() {
        if let Some(g) = e.diagnostic.traceback {
            last_any.insert(g, i);
            if places[i].is_some() {
                last_inside.insert(g, i);
            }
        }
    }
    for (i, e) in out.iter_mut().enumerate() {
        if let Some(g) = e.diagnostic.traceback {
            let site = last_inside.get(&g).or(last_any.get(&g));
            e.diagnostic.severity = if site == Some(&i) { Severity::Error } else { Severity::Note };
        }
    }
}

/// One snippet per (file, innermost scope), with every error line of that
/// scope marked, given to each of its diagnostics.
fn snippets(out: &mut [Enriched], sources: &HashMap<String, Source>) {
    type Key = (String, Option<(usize, usize)>);
    let mut groups: Vec<(Key, Vec<usize>)> = Vec::new();
    let mut index: HashMap<Key, usize> = HashMap::new();
    for (i, e) in out.iter().enumerate() {
        let (Some(path), Some(_)) = (&e.diagnostic.path, e.diagnostic.line) else { continue };
        if !matches!(sources.get(path), Some(Source::Text { .. })) {
            continue;
        }
        let key = (path.clone(), e.scope.as_ref().map(|s| (s.start_line, s.end_line)));
        let g = *index.entry(key.clone()).or_insert_with(|| {
            groups.push((key, Vec::new()));
            groups.len() - 1
        });
        groups[g].1.push(i);
    }
    // Each file is split into lines once, however many scopes it has groups in.
    let mut split: HashMap<&str, Vec<&str>> = HashMap::new();
    for ((path, _), members) in groups {
        let Some((key, Source::Text { text, scopes })) = sources.get_key_value(&path) else { continue };
        let lines = split.entry(key.as_str()).or_insert_with(|| {
            let mut lines: Vec<&str> = text.split('\n').collect();
            if lines.last() == Some(&"") {
                lines.pop();
            }
            lines
        });
        let first = &out[members[0]];
        let chain: Vec<&ScopeSpan> = match &first.scope {
            Some(inner) => {
                scopes.iter().filter(|s| s.start_line <= inner.start_line && inner.end_line <= s.end_line).collect()
            }
            None => Vec::new(),
        };
        let errors: Vec<usize> = members.iter().filter_map(|&i| out[i].diagnostic.line).collect();
        let text: std::sync::Arc<str> = snippet::render(lines.as_slice(), &chain, &errors).into();
        for i in members {
            out[i].snippet = Some(std::sync::Arc::clone(&text));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places() {
        let root = Path::new("/w/repo");
        let canon = Path::new("/private/w/repo");
        assert_eq!(place("src/a.py", root, canon), Place::Inside("src/a.py".into()));
        assert_eq!(place("./src/../b.py", root, canon), Place::Inside("b.py".into()));
        assert_eq!(place("/w/repo/src/a.py", root, canon), Place::Inside("src/a.py".into()));
        assert_eq!(place("/private/w/repo/a.rs", root, canon), Place::Inside("a.rs".into()));
        assert_eq!(place("/usr/lib/python3.11/json/__init__.py", root, canon), Place::Outside);
        assert_eq!(place("/rustc/abc/library/core/src/panicking.rs", root, canon), Place::Outside);
        assert_eq!(place("../other/x.py", root, canon), Place::Outside);
        assert_eq!(place(".", root, canon), Place::Outside);
    }

    #[test]
    fn each_file_is_read_once_however_it_is_spelled() {
        let root = Path::new("/w/repo");
        let d = |p: &str, line: Option<usize>| {
            let mut d = crate::diagnostics::parse(crate::diagnostics::Format::Generic, "x.py:1: m").remove(0);
            d.path = Some(p.to_string());
            d.line = line;
            d
        };
        let diags = vec![
            d("a.py", Some(1)),
            d("./a.py", Some(9)),
            d("/w/repo/a.py", Some(3)),
            d("b/../a.py", Some(4)),
            d("c.py", None), // no line and no test name: nothing to look up
            d("/usr/lib/x.py", Some(1)),
            d("b.rs", Some(2)),
        ];
        assert_eq!(files_to_read(&diags, root, root), ["a.py", "b.rs"]);
    }
}
