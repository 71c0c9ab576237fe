//! What `diff` computes (docs/commands.md): the change between a base and
//! a head, with the scopes each file's change touched. Three layers meet
//! here: [`crate::git`] finds the change and the changed lines,
//! [`crate::syntax`] (through its cache of scopes by blob id) finds the
//! scopes of both versions of a file, and [`crate::symbols`] matches them.

use crate::git::{DiffDepth, GitError, Repo, SymbolsFn};
use crate::model::{DiffSummary, FileVersions, ScopeRef, ScopeSpan, SymbolChange};
use crate::symbols::changed_symbols;
use crate::syntax;
use crate::syntax::cache::ScopeCache;

/// What to compare, and how much to keep.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CompareOptions<'a> {
    /// The base: any revision; `None` for the default branch.
    pub base: Option<&'a str>,
    /// The head: any revision, compared from its merge base with the base;
    /// `None` for the working tree.
    pub head: Option<&'a str>,
    /// Patch lines kept; the rest is counted.
    pub max_lines: usize,
    /// Use (and fill) the user's cache of scopes by blob id; `false`
    /// parses every version anew. The result is the same.
    pub cache: bool,
}

/// The change from `o.base` to `o.head`: files, statuses, line counts, a
/// bounded patch, and the scopes each file's change touched.
pub(crate) fn summarize(repo: &Repo, o: &CompareOptions) -> Result<DiffSummary, GitError> {
    let symbols = FileSymbols { cache: if o.cache { ScopeCache::open() } else { None } };
    let base = repo.resolve_base(o.base)?;
    let cmp = repo.compare_head(&base, o.head, DiffDepth::Patch { max_lines: o.max_lines }, Some(&symbols))?;
    if let Some(cache) = &symbols.cache {
        cache.finish();
    }
    Ok(DiffSummary { changes: cmp.changes, patch: cmp.patch, patch_lines: cmp.patch_lines })
}

/// The scopes a file's change touched, for the languages of `syntax`.
struct FileSymbols {
    cache: Option<ScopeCache>,
}

impl SymbolsFn for FileSymbols {
    fn wants(&self, path: &[u8]) -> bool {
        syntax::language_for(path).is_some()
    }

    /// A version that cannot be parsed counts as having no scopes.
    fn changed(&self, f: &FileVersions) -> Vec<SymbolChange> {
        let Some(lang) = syntax::language_for(f.path) else { return Vec::new() };
        // The same bytes on both sides (a pure rename) touch no scope.
        if f.old.is_some() && f.old == f.new && f.old_changed.is_empty() && f.new_changed.is_empty() {
            return Vec::new();
        }
        // Each version's scopes, handed on borrowed: from the cache's entry
        // as it was read, or parsed here.
        let with = |v: Option<&[u8]>, id: Option<&[u8]>, then: &mut dyn FnMut(&[ScopeRef]) -> Vec<SymbolChange>| match (
            v,
            &self.cache,
        ) {
            (None, _) => then(&[]),
            (Some(src), Some(cache)) => cache.with_scopes(lang, id, src, then),
            (Some(src), None) => {
                let spans = syntax::scopes(lang, src).unwrap_or_default();
                then(&spans.iter().map(ScopeSpan::as_ref).collect::<Vec<_>>())
            }
        };
        with(f.old, f.old_id, &mut |old| {
            with(f.new, f.new_id, &mut |new| {
                changed_symbols(
                    (old, f.old_changed, f.old.unwrap_or_default()),
                    (new, f.new_changed, f.new.unwrap_or_default()),
                )
            })
        })
    }
}
