//! Scope rules: which paths a change may write (docs/commands.md, `scope`).
//!
//! Pure: globs are compiled once ([`Rules::compile`]), then [`check`] judges
//! a list of [`Change`]s. Symlink targets inside the head tree are looked up
//! through [`SymlinkLookup`], which the git layer implements over a tree and
//! tests implement over a map.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

use globset::{Candidate, GlobSet};

use crate::model::{Change, ScopeReason, Status};

mod globs;
pub mod landing;
mod report;

use globs::build_set;
pub use globs::{GlobError, normalize_glob};
pub use report::{Report, Resolved, Subject, Violation};

/// How many symlinks of the tree are followed while resolving one target.
pub const MAX_SYMLINK_HOPS: usize = 40;

/// What the globs say about one path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Judgement {
    Allowed,
    Denied(String),
    OutsideAllow,
}

/// Compiled allow and deny globs.
#[derive(Debug, Clone)]
pub struct Rules {
    allow: GlobSet,
    allow_globs: Vec<String>,
    deny: GlobSet,
    deny_globs: Vec<String>,
    /// What files acting once the change lands do ([`landing`]).
    landing: landing::Gate,
}

impl Rules {
    /// Compiles the globs (their rules: docs/commands.md, `scope`). An
    /// empty allow list allows every path.
    pub fn compile(allow: &[String], deny: &[String]) -> Result<Rules, GlobError> {
        Ok(Rules {
            allow: build_set("allow", allow)?,
            allow_globs: allow.to_vec(),
            deny: build_set("deny", deny)?,
            deny_globs: deny.to_vec(),
            landing: landing::Gate::default(),
        })
    }

    /// The rules with `[scope] acts_after_land` and the config files in use.
    pub fn with_landing(mut self, gate: landing::Gate) -> Rules {
        self.landing = gate;
        self
    }

    pub fn landing(&self) -> &landing::Gate {
        &self.landing
    }

    pub fn allow_globs(&self) -> &[String] {
        &self.allow_globs
    }

    /// The allow globs, as written, that match `path`.
    pub fn allow_globs_matching(&self, path: &[u8]) -> Vec<&str> {
        let candidate = Candidate::new(OsStr::from_bytes(path));
        let mut found = self.allow.matches_candidate(&candidate);
        found.sort_unstable();
        found.iter().filter_map(|&i| self.allow_globs.get(i).map(String::as_str)).collect()
    }

    /// Judges one repository-relative path. Deny wins over allow.
    pub fn judge(&self, path: &[u8]) -> Judgement {
        let candidate = Candidate::new(OsStr::from_bytes(path));
        if let Some(&i) = self.deny.matches_candidate(&candidate).iter().min() {
            return Judgement::Denied(self.deny_globs[i].clone());
        }
        if self.allow_globs.is_empty() || self.allow.is_match_candidate(&candidate) {
            Judgement::Allowed
        } else {
            Judgement::OutsideAllow
        }
    }
}

impl landing::AllowGlobs for Rules {
    fn allow_globs_matching(&self, path: &[u8]) -> Vec<&str> {
        Rules::allow_globs_matching(self, path)
    }
}

/// Finds symlinks in the head tree, to follow them while resolving a target.
pub trait SymlinkLookup {
    /// The target of the symlink at `path`, or `None` when `path` is not a
    /// symlink in the head tree.
    fn symlink_target(&self, path: &[u8]) -> Option<Vec<u8>>;
}

impl SymlinkLookup for std::collections::BTreeMap<Vec<u8>, Vec<u8>> {
    fn symlink_target(&self, path: &[u8]) -> Option<Vec<u8>> {
        self.get(path).cloned()
    }
}

/// Resolves a symlink's target lexically from the link's directory: `.`
/// and `..` collapsed, symlinks of the tree followed (at most
/// [`MAX_SYMLINK_HOPS`]).
pub fn resolve_symlink(link: &[u8], target: &[u8], tree: &dyn SymlinkLookup) -> Resolved {
    if target.starts_with(b"/") {
        return Resolved::Outside;
    }
    // Start in the link's directory; `pending` is a stack of components
    // still to walk, the next one last.
    let mut stack: Vec<Vec<u8>> = components(link).filter(|c| !c.is_empty()).map(<[u8]>::to_vec).collect();
    stack.pop(); // the link's own name
    let mut pending: Vec<Vec<u8>> = components(target).rev().map(<[u8]>::to_vec).collect();
    let mut hops = 0;
    while let Some(comp) = pending.pop() {
        match comp.as_slice() {
            b"" | b"." => {}
            b".." => {
                if stack.pop().is_none() {
                    return Resolved::Outside;
                }
            }
            _ => {
                stack.push(comp);
                let here = stack.join(&b'/');
                if let Some(next) = tree.symlink_target(&here) {
                    hops += 1;
                    if hops > MAX_SYMLINK_HOPS {
                        return Resolved::Loop;
                    }
                    if next.starts_with(b"/") {
                        return Resolved::Outside;
                    }
                    stack.pop();
                    pending.extend(components(&next).rev().map(<[u8]>::to_vec));
                }
            }
        }
    }
    Resolved::Inside(stack.join(&b'/'))
}

fn components(p: &[u8]) -> impl DoubleEndedIterator<Item = &[u8]> {
    p.split(|&b| b == b'/')
}

/// Checks every change against the rules; one violation per path at most.
pub fn check(rules: &Rules, changes: &[Change], tree: &dyn SymlinkLookup) -> Report {
    let violations = changes.iter().filter_map(|c| check_one(rules, c, tree)).collect();
    Report { checked: changes.len(), violations, flagged: Vec::new() }
}

/// The submodules a change may not touch (`[scope] submodules`): with
/// `moves_allowed` false, every change of a submodule's pointer (moved,
/// added, removed); always, the submodules with changes of their own that
/// no commit of the superproject holds (`dirty`, paths). One `submodule`
/// violation per path, sorted.
pub fn submodule_violations(moves_allowed: bool, changes: &[Change], dirty: &[Vec<u8>]) -> Vec<Violation> {
    let mut out: Vec<Violation> = Vec::new();
    let mut push = |path: &[u8], status: Status| {
        if !out.iter().any(|v| v.path == path) {
            out.push(Violation {
                path: path.to_vec(),
                old_path: None,
                status,
                reason: ScopeReason::Submodule,
                rule: None,
                subject: Subject::Path,
            });
        }
    };
    for c in changes.iter().filter(|c| c.touches_submodule()) {
        if !moves_allowed || c.submodule_dirty {
            push(c.path(), c.status);
        }
    }
    for d in dirty {
        push(d, Status::Modified);
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

fn check_one(rules: &Rules, change: &Change, tree: &dyn SymlinkLookup) -> Option<Violation> {
    let mut found: Vec<(ScopeReason, Option<String>, Subject)> = Vec::new();
    let judge = |path: &[u8], subject: Subject, found: &mut Vec<_>| match rules.judge(path) {
        Judgement::Allowed => {}
        Judgement::Denied(rule) => found.push((ScopeReason::Denied, Some(rule), subject)),
        Judgement::OutsideAllow => found.push((ScopeReason::OutsideAllow, None, subject)),
    };

    let path = change.path();
    judge(path, Subject::Path, &mut found);
    if let Some(old) = change.old_path() {
        judge(old, Subject::OldPath, &mut found);
    }
    if change.touches_submodule()
        && let Some((_, rule, _)) = found.iter().find(|(_, _, s)| *s == Subject::Path)
    {
        let rule = rule.clone();
        found.push((ScopeReason::Submodule, rule, Subject::Path));
    }
    if let Some(target) = change.head_symlink_target() {
        let resolved = resolve_symlink(path, target, tree);
        let subject = Subject::Target { raw: target.to_vec(), resolved: resolved.clone() };
        match &resolved {
            Resolved::Inside(inside) => judge(inside, subject, &mut found),
            Resolved::Outside | Resolved::Loop => found.push((ScopeReason::SymlinkEscape, None, subject)),
        }
    }
    // The first reason in precedence order; among equals, the first found.
    let (reason, rule, subject) = found.into_iter().min_by_key(|(r, _, _)| *r)?;
    Some(Violation {
        path: path.to_vec(),
        old_path: change.old_path().map(<[u8]>::to_vec),
        status: change.status,
        reason,
        rule,
        subject,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{EntryKind, Side};
    use std::collections::BTreeMap;

    fn rules(allow: &[&str], deny: &[&str]) -> Rules {
        let s = |v: &[&str]| v.iter().map(|g| g.to_string()).collect::<Vec<_>>();
        Rules::compile(&s(allow), &s(deny)).unwrap()
    }

    #[test]
    fn glob_semantics() {
        // (allow, deny, path, expected)
        use Judgement::*;
        let d = |g: &str| Denied(g.to_string());
        type Case<'a> = (&'a [&'a str], &'a [&'a str], &'a [u8], Judgement);
        let cases: Vec<Case> = vec![
            (&[], &[], b"anything/at/all", Allowed),
            (&["src/*"], &[], b"src/a.rs", Allowed),
            (&["src/*"], &[], b"src/a/b.rs", OutsideAllow),
            (&["src/**"], &[], b"src/a/b/c.rs", Allowed),
            (&["src/**/*.rs"], &[], b"src/a.rs", Allowed),
            (&["src/?.rs"], &[], b"src/a.rs", Allowed),
            (&["src/?.rs"], &[], b"src/ab.rs", OutsideAllow),
            (&["src?a.rs"], &[], b"src/a.rs", OutsideAllow),
            (&["*.md"], &[], b"README.md", Allowed),
            (&["*.md"], &[], b"docs/README.md", OutsideAllow),
            (&["**/*.md"], &[], b"docs/README.md", Allowed),
            (&["**/*.md"], &[], b"README.md", Allowed),
            (&["src/"], &[], b"src/deep/x", Allowed),
            (&["./src/**"], &[], b"src/x", Allowed),
            (&["/src/**"], &[], b"src/x", Allowed),
            (&["src/**"], &[], b"Src/x", OutsideAllow),
            (&["src/**"], &[], b"src/.hidden", Allowed),
            (&["src/*"], &[], b"src/.env", Allowed),
            (&["**"], &[], b".github/workflows/ci.yml", Allowed),
            (&["src/[ab].rs"], &[], b"src/b.rs", Allowed),
            (&["src/[ab].rs"], &[], b"src/c.rs", OutsideAllow),
            (&["src/\\*.rs"], &[], b"src/*.rs", Allowed),
            (&["src/\\*.rs"], &[], b"src/a.rs", OutsideAllow),
            (&["src/**"], &["**/*.lock"], b"src/Cargo.lock", d("**/*.lock")),
            (&["src/**"], &["src/gen/", "src/**"], b"src/gen/x", d("src/gen/")),
            (&[], &[".github/**"], b".github/x.yml", d(".github/**")),
            (&["caf\u{e9}/**"], &[], "caf\u{e9}/x".as_bytes(), Allowed),
            // No Unicode normalisation: a decomposed é is another path.
            (&["caf\u{e9}/**"], &[], "cafe\u{301}/x".as_bytes(), OutsideAllow),
            (&["src/**"], &[], b"src/bad\xff.txt", Allowed),
            (&["*"], &[], b"bad\xff", Allowed),
            (&["a b/**"], &[], b"a b/c d", Allowed),
            (&["-x/**"], &[], b"-x/y", Allowed),
        ];
        for (allow, deny, path, want) in cases {
            assert_eq!(
                rules(allow, deny).judge(path),
                want,
                "allow {allow:?} deny {deny:?} path {:?}",
                String::from_utf8_lossy(path)
            );
        }
    }

    #[test]
    fn invalid_glob_is_named() {
        let err = Rules::compile(&["src/[".to_string()], &[]).unwrap_err();
        assert_eq!(err.glob, "src/[");
        assert!(err.to_string().contains("invalid allow glob \"src/[\""), "{err}");
    }

    fn change(status: Status, old: Option<(&str, EntryKind)>, new: Option<(&str, EntryKind)>) -> Change {
        let side = |s: Option<(&str, EntryKind)>| s.map(|(p, kind)| Side { path: p.as_bytes().to_vec(), kind });
        Change {
            status,
            old: side(old),
            new: side(new),
            symlink_target: None,
            submodule_dirty: false,
            binary: false,
            additions: 0,
            deletions: 0,
            symbols: None,
        }
    }

    fn link(path: &str, target: &str) -> Change {
        let mut c = change(Status::Added, None, Some((path, EntryKind::Symlink)));
        c.symlink_target = Some(target.as_bytes().to_vec());
        c
    }

    fn reasons(
        r: &Rules,
        changes: &[Change],
        tree: &BTreeMap<Vec<u8>, Vec<u8>>,
    ) -> Vec<(String, &'static str, Option<String>)> {
        check(r, changes, tree)
            .violations
            .into_iter()
            .map(|v| (String::from_utf8_lossy(&v.path).into_owned(), v.reason.as_str(), v.rule))
            .collect()
    }

    #[test]
    fn renames_are_checked_on_both_sides() {
        use EntryKind::File;
        let r = rules(&["src/**"], &["src/secret/**"]);
        let out_to_in = change(Status::Renamed, Some(("docs/a.md", File)), Some(("src/a.md", File)));
        let in_to_out = change(Status::Renamed, Some(("src/b.rs", File)), Some(("b.rs", File)));
        let from_denied = change(Status::Renamed, Some(("src/secret/k", File)), Some(("src/k", File)));
        let fine = change(Status::Renamed, Some(("src/c.rs", File)), Some(("src/d.rs", File)));
        let report = check(&r, &[out_to_in, in_to_out, from_denied, fine], &BTreeMap::new());
        assert_eq!(report.checked, 4);
        let got: Vec<_> = report
            .violations
            .iter()
            .map(|v| (v.path.clone(), v.old_path.clone(), v.reason, v.subject.clone()))
            .collect();
        assert_eq!(
            got,
            vec![
                (b"src/a.md".to_vec(), Some(b"docs/a.md".to_vec()), ScopeReason::OutsideAllow, Subject::OldPath),
                (b"b.rs".to_vec(), Some(b"src/b.rs".to_vec()), ScopeReason::OutsideAllow, Subject::Path),
                (b"src/k".to_vec(), Some(b"src/secret/k".to_vec()), ScopeReason::Denied, Subject::OldPath),
            ]
        );
    }

    #[test]
    fn deletes_mode_and_type_changes_are_writes() {
        use EntryKind::*;
        let r = rules(&["src/**"], &[]);
        let cs = [
            change(Status::Deleted, Some(("README", File)), None),
            change(Status::Modified, Some(("run.sh", File)), Some(("run.sh", Executable))),
            change(Status::TypeChanged, Some(("cfg", File)), Some(("cfg", Symlink))),
        ];
        let got = reasons(&r, &cs, &BTreeMap::new());
        let paths: Vec<_> = got.iter().map(|g| g.0.as_str()).collect();
        assert_eq!(paths, ["README", "run.sh", "cfg"]);
    }

    #[test]
    fn symlinks() {
        let r = rules(&["src/**"], &["src/secret/**"]);
        let mut tree = BTreeMap::new();
        tree.insert(b"src/up".to_vec(), b"..".to_vec());
        tree.insert(b"src/loop1".to_vec(), b"loop2".to_vec());
        tree.insert(b"src/loop2".to_vec(), b"loop1".to_vec());
        tree.insert(b"src/abs".to_vec(), b"/etc".to_vec());
        type Case<'a> = (&'a str, &'a str, Option<(&'static str, Option<&'a str>)>);
        let cases: Vec<Case> = vec![
            ("src/ok", "b.rs", None),
            ("src/ok2", "./x/../b.rs", None),
            ("src/abs", "/etc/passwd", Some(("symlink-escape", None))),
            ("src/esc", "../../etc/passwd", Some(("symlink-escape", None))),
            ("src/esc2", "../src/../../x", Some(("symlink-escape", None))),
            ("src/top", "../README.md", Some(("outside-allow", None))),
            ("src/s", "secret/key", Some(("denied", Some("src/secret/**")))),
            // Through another symlink of the tree: src/up -> .. , so up/up/x leaves.
            ("src/via", "up/README.md", Some(("outside-allow", None))),
            ("src/via2", "up/../../x", Some(("symlink-escape", None))),
            ("src/via3", "abs/x", Some(("symlink-escape", None))),
            ("src/l", "loop1", Some(("symlink-escape", None))),
            // The link path itself outside allow, target fine: outside-allow for the path.
            ("docs/l", "../src/a.rs", Some(("outside-allow", None))),
            // Escape outranks outside-allow on the path.
            ("docs/l2", "../../x", Some(("symlink-escape", None))),
        ];
        for (path, target, want) in cases {
            let got = reasons(&r, &[link(path, target)], &tree);
            let got = got.first().map(|(_, reason, rule)| (*reason, rule.clone()));
            let want = want.map(|(reason, rule)| (reason, rule.map(String::from)));
            assert_eq!(got, want, "{path} -> {target}");
        }
    }

    #[test]
    fn submodule_policy() {
        use EntryKind::{File, Submodule};
        let ptr = |p| change(Status::Modified, Some((p, Submodule)), Some((p, Submodule)));
        let changes = vec![ptr("vendor/a"), change(Status::Modified, Some(("src/x", File)), Some(("src/x", File)))];
        let dirty = vec![b"vendor/b".to_vec(), b"vendor/a".to_vec()];
        let paths = |v: Vec<Violation>| -> Vec<(String, ScopeReason)> {
            v.into_iter().map(|v| (String::from_utf8_lossy(&v.path).into_owned(), v.reason)).collect()
        };
        // (moves allowed, dirty, expected)
        type Case<'a> = (bool, &'a [Vec<u8>], Vec<&'a str>);
        let cases: Vec<Case> = vec![
            (false, &[], vec!["vendor/a"]),
            (true, &[], vec![]),
            (false, &dirty, vec!["vendor/a", "vendor/b"]),
            (true, &dirty, vec!["vendor/a", "vendor/b"]),
        ];
        for (moves, d, want) in cases {
            let got = paths(submodule_violations(moves, &changes, d));
            let want: Vec<(String, ScopeReason)> =
                want.iter().map(|p| (p.to_string(), ScopeReason::Submodule)).collect();
            assert_eq!(got, want, "moves allowed {moves}, dirty {d:?}");
        }
    }

    #[test]
    fn submodules() {
        use EntryKind::*;
        let r = rules(&["src/**", "vendor/ok"], &["vendor/denied"]);
        let ptr = |p| change(Status::Modified, Some((p, Submodule)), Some((p, Submodule)));
        let mut dirty = ptr("vendor/dirty");
        dirty.submodule_dirty = true;
        let got = reasons(&r, &[ptr("vendor/ok"), ptr("vendor/other"), ptr("vendor/denied"), dirty], &BTreeMap::new());
        assert_eq!(
            got,
            vec![
                ("vendor/other".into(), "submodule", None),
                ("vendor/denied".into(), "submodule", Some("vendor/denied".into())),
                ("vendor/dirty".into(), "submodule", None),
            ]
        );
    }

    #[test]
    fn normalize() {
        for (g, want) in [("./src/", "src/**"), ("/a", "a"), ("src", "src"), ("/", "**"), ("././x/", "x/**")] {
            assert_eq!(normalize_glob(g), want);
        }
    }
}
