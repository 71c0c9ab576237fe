//! Which functions, classes and other scopes a change touched
//! (docs/commands.md, `diff`): pure, over the scopes of both versions of a
//! file and the line numbers the patch changed.
//!
//! Scopes are matched across versions by kind and qualified name. One only
//! in the new version is `added`, one only in the old is `removed`; one in
//! both is `modified` when it is the innermost scope of a changed line (an
//! edited method marks the method, not its class).

use std::collections::BTreeSet;

use crate::model::{ScopeRef, SymbolChange, SymbolChangeKind, innermost};

/// The scopes a change touched: those of the new version in file order,
/// then the removed ones in the old version's order.
pub fn changed_symbols(
    old: &[ScopeRef],
    new: &[ScopeRef],
    old_changed: &[usize],
    new_changed: &[usize],
) -> Vec<SymbolChange> {
    fn key<'a>(s: &ScopeRef<'a>) -> (&'a str, &'a str) {
        (s.kind, s.qualified_name)
    }
    let old_keys: BTreeSet<_> = old.iter().map(key).collect();
    let new_keys: BTreeSet<_> = new.iter().map(key).collect();
    let mut modified = BTreeSet::new();
    for &line in new_changed {
        if let Some(s) = innermost(new, line).filter(|s| old_keys.contains(&key(s))) {
            modified.insert(key(s));
        }
    }
    for &line in old_changed {
        if let Some(s) = innermost(old, line).filter(|s| new_keys.contains(&key(s))) {
            modified.insert(key(s));
        }
    }
    // (group, line, change): the new version's scopes, then removed ones.
    let mut out: Vec<(u8, usize, SymbolChange)> = Vec::new();
    let entry = |s: &ScopeRef, change| SymbolChange {
        kind: s.kind.to_string(),
        name: s.name.to_string(),
        qualified_name: s.qualified_name.to_string(),
        change,
    };
    for s in new {
        let k = key(s);
        if !old_keys.contains(&k) {
            out.push((0, s.start_line, entry(s, SymbolChangeKind::Added)));
        } else if modified.remove(&k) {
            out.push((0, s.start_line, entry(s, SymbolChangeKind::Modified)));
        }
    }
    for s in old {
        if !new_keys.contains(&key(s)) {
            out.push((1, s.start_line, entry(s, SymbolChangeKind::Removed)));
        }
    }
    out.sort_by_key(|a| (a.0, a.1));
    out.into_iter().map(|(_, _, c)| c).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span<'a>(kind: &'a str, q: &'a str, start: usize, end: usize) -> ScopeRef<'a> {
        ScopeRef { kind, name: q.rsplit('.').next().unwrap_or(q), qualified_name: q, start_line: start, end_line: end }
    }

    fn names(v: Vec<SymbolChange>) -> Vec<(String, SymbolChangeKind)> {
        v.into_iter().map(|c| (c.qualified_name, c.change)).collect()
    }

    #[test]
    fn table() {
        use SymbolChangeKind::*;
        let old = vec![
            span("class", "A", 1, 10),
            span("function", "A.m", 2, 4),
            span("function", "A.gone", 6, 8),
            span("function", "f", 12, 14),
        ];
        let new = vec![
            span("class", "A", 1, 9),
            span("function", "A.m", 2, 5),
            span("function", "A.new", 7, 9),
            span("function", "f", 11, 13),
        ];
        // Line 3 changed inside A.m; A.gone removed; A.new added; f only moved.
        assert_eq!(
            names(changed_symbols(&old, &new, &[6, 7, 8], &[3, 7, 8, 9])),
            vec![("A.m".into(), Modified), ("A.new".into(), Added), ("A.gone".into(), Removed)]
        );
        // A changed line in the class body, outside any method, marks the class.
        assert_eq!(names(changed_symbols(&new, &new, &[], &[6])), vec![("A".into(), Modified)]);
        // Module-level changes touch no scope.
        assert_eq!(names(changed_symbols(&old, &old, &[20], &[20])), vec![]);
    }
}
