//! Which functions, classes and other scopes a change touched
//! (docs/commands.md, `diff`): pure, over the scopes of both versions of a
//! file and the line numbers the patch changed.
//!
//! Scopes are matched across versions by kind and qualified name. One only
//! in the new version is `added`, one only in the old is `removed`; one in
//! both is `modified` when it is the scope a reviewer would name for a
//! changed line ([`reviewer_scope`]): the innermost one from its head (its
//! decorators, attributes, doc comments) to its end, so an edited method
//! marks the method, not its class, and a decorator added above it marks
//! it too. A whitespace-only line marks a scope only inside its own lines:
//! a blank line between two methods marks neither them nor their class.

use crate::model::{ScopeRef, SymbolChange, SymbolChangeKind};

/// The lines of a version's text, split on `\n` the first time a changed
/// line inside a scope is looked at (a change outside every scope never
/// splits it).
struct Lines<'t> {
    text: &'t [u8],
    split: std::cell::OnceCell<Vec<&'t [u8]>>,
}

impl<'t> Lines<'t> {
    fn new(text: &'t [u8]) -> Lines<'t> {
        Lines { text, split: std::cell::OnceCell::new() }
    }

    fn all(&self) -> &[&'t [u8]] {
        self.split.get_or_init(|| {
            let mut lines = Vec::with_capacity(self.text.len() / 32 + 1);
            let mut at = 0;
            for end in memchr::memchr_iter(b'\n', self.text) {
                lines.push(&self.text[at..end]);
                at = end + 1;
            }
            lines.push(&self.text[at..]);
            lines
        })
    }

    /// Whether line `l` (1-based) holds only whitespace.
    fn blank(&self, l: usize) -> bool {
        l >= 1 && self.all().get(l - 1).is_some_and(|t| t.trim_ascii().is_empty())
    }

    fn count(&self) -> usize {
        self.all().len()
    }
}

/// The innermost scope whose lines, its head included, hold `line`: its index.
fn innermost(scopes: &[ScopeRef], line: usize) -> Option<usize> {
    scopes
        .iter()
        .enumerate()
        .filter(|(_, s)| s.head_line.min(s.start_line) <= line && line <= s.end_line)
        .min_by_key(|(_, s)| {
            let head = s.head_line.min(s.start_line);
            (s.end_line - head, std::cmp::Reverse(head))
        })
        .map(|(i, _)| i)
}

/// The scope a reviewer names for a changed `line` (1-based) of a version
/// whose lines are `lines` (its index): the innermost scope from its head
/// to its end; for a whitespace-only line, that scope only when the
/// nearest other lines above and below are its own too (not another
/// scope's, nor outside).
fn reviewer_scope(scopes: &[ScopeRef], lines: &Lines, line: usize) -> Option<usize> {
    let scope = innermost(scopes, line)?;
    if !lines.blank(line) {
        return Some(scope);
    }
    let blank = |l: usize| lines.blank(l);
    let above = (1..line).rev().find(|&l| !blank(l))?;
    let below = (line + 1..=lines.count()).find(|&l| !blank(l))?;
    let same = |l: usize| innermost(scopes, l) == Some(scope);
    (same(above) && same(below)).then_some(scope)
}

/// A scope's identity across versions.
fn key<'a>(s: &ScopeRef<'a>) -> (&'a str, &'a str) {
    (s.kind, s.qualified_name)
}

/// Which of `v`'s scopes `other` holds too (by kind and qualified name).
/// Both versions of a file mostly list the same scopes in the same order:
/// each is looked for first where the last one found was (shifted by the
/// scopes added or removed before it), and only then by halves over
/// `other`'s keys, sorted once, when first needed.
fn held_by(v: &[ScopeRef], other: &[ScopeRef]) -> Vec<bool> {
    let sorted = std::cell::OnceCell::new();
    let mut shift = 0isize;
    v.iter()
        .enumerate()
        .map(|(i, s)| {
            let k = key(s);
            let guess = i.checked_add_signed(shift);
            if guess.and_then(|g| other.get(g)).is_some_and(|o| key(o) == k) {
                return true;
            }
            let sorted = sorted.get_or_init(|| {
                let mut keys: Vec<_> = other.iter().enumerate().map(|(j, o)| (key(o), j)).collect();
                keys.sort_unstable();
                keys
            });
            match sorted.binary_search_by(|(ok, _)| ok.cmp(&k)) {
                Ok(at) => {
                    shift = sorted[at].1 as isize - i as isize;
                    true
                }
                Err(_) => false,
            }
        })
        .collect()
}

/// The scopes a change touched: those of the new version in file order,
/// then the removed ones in the old version's order. `old_text` and
/// `new_text` are the versions' bytes (empty for a side that is absent).
pub(crate) fn changed_symbols(
    (old, old_changed, old_text): (&[ScopeRef], &[usize], &[u8]),
    (new, new_changed, new_text): (&[ScopeRef], &[usize], &[u8]),
) -> Vec<SymbolChange> {
    let (in_old, in_new) = (held_by(new, old), held_by(old, new));
    let mut modified = Vec::new();
    let (old_lines, new_lines) = (Lines::new(old_text), Lines::new(new_text));
    // Only a scope both versions hold can be modified: a version with none
    // in the other (an added or a deleted file) has no line to look at.
    let new_changed = if in_old.contains(&true) { new_changed } else { &[] };
    let old_changed = if in_new.contains(&true) { old_changed } else { &[] };
    for &line in new_changed {
        if let Some(i) = reviewer_scope(new, &new_lines, line).filter(|&i| in_old[i]) {
            modified.push(key(&new[i]));
        }
    }
    for &line in old_changed {
        if let Some(i) = reviewer_scope(old, &old_lines, line).filter(|&i| in_new[i]) {
            modified.push(key(&old[i]));
        }
    }
    modified.sort_unstable();
    modified.dedup();
    // Each modified key is named once, at its first scope in the new version.
    let mut named = vec![false; modified.len()];
    // (group, line, change): the new version's scopes, then removed ones.
    let mut out: Vec<(u8, usize, SymbolChange)> = Vec::new();
    let entry = |s: &ScopeRef, change| SymbolChange {
        kind: s.kind.to_string(),
        name: s.name.to_string(),
        qualified_name: s.qualified_name.to_string(),
        change,
    };
    for (i, s) in new.iter().enumerate() {
        if !in_old[i] {
            out.push((0, s.start_line, entry(s, SymbolChangeKind::Added)));
        } else if let Ok(m) = modified.binary_search(&key(s))
            && !std::mem::replace(&mut named[m], true)
        {
            out.push((0, s.start_line, entry(s, SymbolChangeKind::Modified)));
        }
    }
    for (i, s) in old.iter().enumerate() {
        if !in_new[i] {
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
        headed(kind, q, start, start, end)
    }

    fn headed<'a>(kind: &'a str, q: &'a str, head: usize, start: usize, end: usize) -> ScopeRef<'a> {
        let name = q.rsplit('.').next().unwrap_or(q);
        ScopeRef { kind, name, qualified_name: q, start_line: start, end_line: end, head_line: head }
    }

    /// A text of `n` lines, those in `blank` empty.
    fn text(n: usize, blank: &[usize]) -> Vec<u8> {
        (1..=n)
            .map(|i| if blank.contains(&i) { "\n".to_string() } else { format!("line {i}\n") })
            .collect::<String>()
            .into_bytes()
    }

    fn names(v: Vec<SymbolChange>) -> Vec<(String, SymbolChangeKind)> {
        v.into_iter().map(|c| (c.qualified_name, c.change)).collect()
    }

    #[test]
    fn held_by_finds_each_key_wherever_the_other_version_moved_it() {
        let scopes = |keys: &[&'static str]| -> Vec<ScopeRef<'static>> {
            keys.iter().enumerate().map(|(i, q)| span("function", q, i + 1, i + 1)).collect()
        };
        let cases: &[(&[&str], &[&str])] = &[
            (&["a", "b", "c"], &["a", "b", "c"]),
            (&["a", "x", "b", "c"], &["a", "b", "c"]),
            (&["a", "c"], &["a", "b", "c", "d"]),
            (&["c", "b", "a"], &["a", "b", "c"]),
            (&["a", "a", "b"], &["b", "a"]),
            (&["x", "y"], &["a", "b"]),
            (&[], &["a"]),
            (&["a"], &[]),
        ];
        for (v, other) in cases {
            let (v, other) = (scopes(v), scopes(other));
            let naive: Vec<bool> = v.iter().map(|s| other.iter().any(|o| key(o) == key(s))).collect();
            assert_eq!(held_by(&v, &other), naive, "{v:?} in {other:?}");
        }
        // The kind counts too.
        let class = vec![span("class", "a", 1, 2)];
        assert_eq!(held_by(&scopes(&["a"]), &class), vec![false]);
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
        let t = text(20, &[]);
        assert_eq!(
            names(changed_symbols((&old, &[6, 7, 8], &t), (&new, &[3, 7, 8, 9], &t))),
            vec![("A.m".into(), Modified), ("A.new".into(), Added), ("A.gone".into(), Removed)]
        );
        // A changed line in the class body, outside any method, marks the class.
        assert_eq!(names(changed_symbols((&new, &[], &t), (&new, &[6], &t))), vec![("A".into(), Modified)]);
        // Module-level changes touch no scope.
        assert_eq!(names(changed_symbols((&old, &[20], &t), (&old, &[20], &t))), vec![]);
    }

    /// A decorator, attribute or doc comment (the head) belongs to the scope
    /// it decorates; a blank line between scopes to none.
    #[test]
    fn heads_and_blank_lines() {
        use SymbolChangeKind::*;
        // class A 1-12; m 2-5 (decorated from line 2, `def` on 3); n: head 7, def 8, ends 10.
        let scopes = vec![
            headed("class", "A", 1, 1, 12),
            headed("function", "A.m", 2, 3, 5),
            headed("function", "A.n", 7, 8, 10),
        ];
        let t = text(12, &[6, 9, 11]);
        let one = |line: usize| names(changed_symbols((&scopes, &[], &t), (&scopes, &[line], &t)));
        assert_eq!(one(2), vec![("A.m".into(), Modified)], "a decorator marks its function");
        assert_eq!(one(7), vec![("A.n".into(), Modified)], "so does an attribute or a doc comment");
        assert_eq!(one(6), vec![], "a blank line between two methods marks neither, nor the class");
        assert_eq!(one(9), vec![("A.n".into(), Modified)], "a blank line inside a method is the method's");
        assert_eq!(one(11), vec![], "a blank line after the last method is between scopes");
        assert_eq!(one(12), vec![("A".into(), Modified)], "the class's own line");
    }
}
