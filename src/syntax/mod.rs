//! Scopes of source files, found with tree-sitter (the only module that
//! uses it).
//!
//! Languages are data: each is a grammar crate plus a query file under
//! `grammars/<language>/scopes.scm` (see `grammars/README.md`), registered
//! in [`LANGUAGES`]. Queries are compiled once per process.

use std::sync::OnceLock;

use streaming_iterator::StreamingIterator;
use tree_sitter::{Language, Node, Parser, Point, Query, QueryCursor};

use crate::model::ScopeSpan;

pub(crate) mod cache;
pub(crate) mod highlight;
mod js;
mod node;
pub(crate) mod tests_in;

use node::{head_row, impl_name, is_outer_doc, last_row, signature, text};

/// A language retry-run can parse.
pub struct LanguageDef {
    pub name: &'static str,
    /// File name endings, without the dot.
    pub extensions: &'static [&'static str],
    grammar: fn() -> Language,
    query: &'static str,
    /// Joins the names of nested scopes: `.` (Python), `::` (Rust).
    pub separator: &'static str,
    /// Whether a block can end without a closing token (Python), so that a
    /// trailing comment could be taken into it.
    open_ended: bool,
    /// Where its scopes' lines are found: by the rules of Python and Rust,
    /// or of TypeScript and JavaScript ([`js`]).
    family: Family,
}

/// The rules a language's scopes are placed and named by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    /// Python and Rust: the keyword's line, decorators, attributes and doc
    /// comments as the head.
    Keyword,
    /// TypeScript and JavaScript ([`js`]).
    Js,
}

/// Every supported language.
pub static LANGUAGES: &[LanguageDef] = &[
    LanguageDef {
        name: "python",
        extensions: &["py", "pyi"],
        grammar: || tree_sitter_python::LANGUAGE.into(),
        query: include_str!("../../grammars/python/scopes.scm"),
        separator: ".",
        open_ended: true,
        family: Family::Keyword,
    },
    LanguageDef {
        name: "rust",
        extensions: &["rs"],
        grammar: || tree_sitter_rust::LANGUAGE.into(),
        query: include_str!("../../grammars/rust/scopes.scm"),
        separator: "::",
        open_ended: false,
        family: Family::Keyword,
    },
    LanguageDef {
        name: "typescript",
        extensions: &["ts", "mts", "cts"],
        grammar: || tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
        query: include_str!("../../grammars/typescript/scopes.scm"),
        separator: ".",
        open_ended: false,
        family: Family::Js,
    },
    LanguageDef {
        name: "tsx",
        extensions: &["tsx"],
        grammar: || tree_sitter_typescript::LANGUAGE_TSX.into(),
        query: include_str!("../../grammars/typescript/scopes.scm"),
        separator: ".",
        open_ended: false,
        family: Family::Js,
    },
    LanguageDef {
        name: "javascript",
        extensions: &["js", "mjs", "cjs", "jsx"],
        grammar: || tree_sitter_javascript::LANGUAGE.into(),
        query: include_str!("../../grammars/javascript/scopes.scm"),
        separator: ".",
        open_ended: false,
        family: Family::Js,
    },
];

/// The keyword tokens a scope starts on.
const KEYWORDS: &[&str] = &["def", "class", "fn", "impl", "trait", "mod", "struct", "enum", "union"];

/// The language of a repository path, by its extension.
pub fn language_for(path: &[u8]) -> Option<&'static LanguageDef> {
    let name = crate::pathfmt::basename(path);
    let dot = name.iter().rposition(|&b| b == b'.')?;
    let ext = std::str::from_utf8(&name[dot + 1..]).ok()?;
    LANGUAGES.iter().find(|l| l.extensions.contains(&ext))
}

struct Compiled {
    language: Language,
    query: Query,
    name_capture: u32,
    /// For each capture index, the scope kind it marks, if any.
    kinds: Vec<Option<String>>,
}

/// Why a file's scopes cannot be had: a grammar or query of retry-run's
/// own that does not load (a bug, caught by `check_languages` in the
/// tests), or a parser that gave up.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SyntaxError {
    #[error("{0}")]
    Grammar(String),
    #[error("the parser gave up")]
    GaveUp,
}

fn compiled(def: &'static LanguageDef) -> Result<&'static Compiled, SyntaxError> {
    static CACHE: [OnceLock<Result<Compiled, SyntaxError>>; 5] =
        [OnceLock::new(), OnceLock::new(), OnceLock::new(), OnceLock::new(), OnceLock::new()];
    let grammar = |m: &str| SyntaxError::Grammar(m.to_string());
    let i = LANGUAGES.iter().position(|l| std::ptr::eq(l, def)).ok_or_else(|| grammar("unknown language"))?;
    let slot = CACHE.get(i).ok_or_else(|| grammar("no query cache slot for this language"))?;
    slot.get_or_init(|| {
        let language = (def.grammar)();
        let query = Query::new(&language, def.query)
            .map_err(|e| SyntaxError::Grammar(format!("grammars/{}/scopes.scm: {e}", def.name)))?;
        let names = query.capture_names();
        let name_capture = names
            .iter()
            .position(|n| *n == "name")
            .ok_or_else(|| SyntaxError::Grammar(format!("grammars/{}/scopes.scm has no @name", def.name)))?
            as u32;
        let kinds = names.iter().map(|n| n.strip_prefix("scope.").map(str::to_string)).collect();
        Ok(Compiled { language, query, name_capture, kinds })
    })
    .as_ref()
    .map_err(Clone::clone)
}

/// What a cache of `def`'s scopes must match: this version of retry-run
/// and the language's query (a new grammar comes with a new version).
pub fn cache_stamp(def: &LanguageDef) -> String {
    let text = format!("{}\0{}\0{}", env!("CARGO_PKG_VERSION"), def.name, def.query);
    let hex = crate::hash::sha256_hex(text.as_bytes());
    format!("{}-{}", def.name, &hex[..16])
}

/// Checks that every language's query compiles.
pub fn check_languages() -> Result<(), SyntaxError> {
    LANGUAGES.iter().try_for_each(|l| compiled(l).map(|_| ()))
}

/// Every scope of `source`, sorted by start line, outer before inner. A
/// file with syntax errors still yields the scopes tree-sitter recovers.
pub fn scopes(def: &'static LanguageDef, source: &[u8]) -> Result<Vec<ScopeSpan>, SyntaxError> {
    scopes_in(def, source, None)
}

/// The scopes of `source` that hold any of `lines` (1-based), with every
/// scope around them (so names and chains are whole); others may come
/// along. The file is parsed whole; only the query is run near the lines,
/// which makes this cheaper than [`scopes`] when few lines matter.
pub fn scopes_near(def: &'static LanguageDef, source: &[u8], lines: &[usize]) -> Result<Vec<ScopeSpan>, SyntaxError> {
    // A scope's lines lie within its node's rows; one row more above
    // catches a node that ends at the very start of the line's row.
    let mut rows: Vec<(usize, usize)> = Vec::new();
    let mut sorted = lines.to_vec();
    sorted.sort_unstable();
    for l in sorted {
        let (from, to) = (l.saturating_sub(2), l + 1);
        match rows.last_mut() {
            Some(last) if from <= last.1 => last.1 = last.1.max(to),
            _ => rows.push((from, to)),
        }
    }
    scopes_in(def, source, Some(&rows))
}

fn scopes_in(
    def: &'static LanguageDef,
    source: &[u8],
    rows: Option<&[(usize, usize)]>,
) -> Result<Vec<ScopeSpan>, SyntaxError> {
    let c = compiled(def)?;
    let mut parser = Parser::new();
    parser.set_language(&c.language).map_err(|e| SyntaxError::Grammar(format!("{}: {e}", def.name)))?;
    let tree = parser.parse(source, None).ok_or(SyntaxError::GaveUp)?;
    let mut raw: Vec<(Node, String, String)> = Vec::new(); // (scope node, kind, name)
    let mut cursor = QueryCursor::new();
    let whole = [(0, usize::MAX)];
    for &(from, to) in rows.unwrap_or(&whole) {
        if rows.is_some() {
            cursor.set_point_range(Point { row: from, column: 0 }..Point { row: to, column: 0 });
        }
        let mut matches = cursor.matches(&c.query, tree.root_node(), source);
        while let Some(m) = matches.next() {
            let scope = m.captures().iter().find_map(|cap| c.kinds[cap.index as usize].as_ref().map(|k| (cap.node, k)));
            let name = m.captures().iter().find(|cap| cap.index == c.name_capture).map(|cap| cap.node);
            if let (Some((node, kind)), Some(name)) = (scope, name) {
                match def.family {
                    Family::Keyword => {
                        let name = if kind == "impl" { impl_name(name, source) } else { text(name, source) };
                        raw.push((node, kind.clone(), name));
                    }
                    // `namespace A.B`: A, and B inside it.
                    Family::Js if name.kind() == "nested_identifier" => {
                        for part in text(name, source).split('.') {
                            raw.push((node, kind.clone(), part.trim().to_string()));
                        }
                    }
                    Family::Js => raw.push((node, kind.clone(), js::name(name, source))),
                }
            }
        }
    }
    // Sorted by position, outer first (a stable sort keeps the parts of
    // a dotted namespace in order); one scope per node and name.
    raw.sort_by_key(|(n, _, _)| (n.start_byte(), std::cmp::Reverse(n.end_byte())));
    raw.dedup_by(|a, b| a.0.id() == b.0.id() && a.2 == b.2);

    let mut out = Vec::with_capacity(raw.len());
    let mut stack: Vec<(usize, String)> = Vec::new(); // (end byte, qualified name)
    for (node, kind, name) in raw {
        while stack.last().is_some_and(|(end, _)| *end <= node.start_byte()) {
            stack.pop();
        }
        let qualified = match stack.last() {
            Some((_, outer)) => format!("{outer}{}{name}", def.separator),
            None => name.clone(),
        };
        stack.push((node.end_byte(), qualified.clone()));
        let (start, end, head) = match def.family {
            Family::Keyword => (
                keyword_row(node),
                if def.open_ended { last_row(node) } else { node.end_position().row },
                head_row(node, source),
            ),
            Family::Js => js::rows(node, source),
        };
        out.push(ScopeSpan {
            kind,
            name,
            qualified_name: qualified,
            start_line: start + 1,
            end_line: end + 1,
            signature: signature(node, source),
            head_line: head + 1,
        });
    }
    Ok(out)
}

/// The row of the defining keyword (`def`, `fn`, ...), not of `pub`,
/// `async` or `unsafe` before it.
fn keyword_row(node: Node) -> usize {
    let mut cursor = node.walk();
    let row = node.children(&mut cursor).find(|c| KEYWORDS.contains(&c.kind())).map(|c| c.start_position().row);
    row.unwrap_or(node.start_position().row)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(path: &str, src: &str) -> Vec<(String, String, usize, usize)> {
        let def = language_for(path.as_bytes()).expect("a language");
        scopes(def, src.as_bytes())
            .expect("parses")
            .into_iter()
            .map(|s| (s.kind, s.qualified_name, s.start_line, s.end_line))
            .collect()
    }

    #[test]
    fn every_query_compiles() {
        check_languages().expect("queries compile");
    }

    #[test]
    fn python_basics() {
        let src = "import os\n\n@decorator\n@other(1)\nclass A:\n    def m(self):\n        return 1\n    # trailing comment\n\nasync def f(\n    a,\n    b,\n):\n    g = lambda x: x\n    return g\n";
        assert_eq!(
            spans("x.py", src),
            vec![
                ("class".into(), "A".into(), 5, 7),
                ("function".into(), "A.m".into(), 6, 7),
                ("function".into(), "f".into(), 10, 15),
            ]
        );
        let def = language_for(b"x.py").expect("python");
        let f = &scopes(def, src.as_bytes()).expect("parses")[2];
        assert_eq!(f.signature, "async def f(a, b):");
    }

    #[test]
    fn rust_basics() {
        let src = "/// doc\n#[derive(Debug)]\npub struct S { a: u32 }\nstruct Unit;\nimpl<T> fmt::Display for a::Foo<T> where T: Copy {\n    fn fmt(&self) {}\n}\ntrait Tr {\n    fn sig(&self);\n    fn default(&self) {\n        let c = || { 1 };\n    }\n}\nmod m;\nmod inner {\n    pub(crate) unsafe fn g() {\n        fn h() {}\n    }\n}\n";
        assert_eq!(
            spans("x.rs", src),
            vec![
                ("struct".into(), "S".into(), 3, 3),
                ("impl".into(), "Foo".into(), 5, 7),
                ("function".into(), "Foo::fmt".into(), 6, 6),
                ("trait".into(), "Tr".into(), 8, 13),
                ("function".into(), "Tr::default".into(), 10, 12),
                ("mod".into(), "inner".into(), 15, 19),
                ("function".into(), "inner::g".into(), 16, 18),
                ("function".into(), "inner::g::h".into(), 17, 17),
            ]
        );
    }

    /// Decorators, outer attributes, `///` doc comments and visibility are
    /// the scope's head; plain comments and `//!` are not.
    #[test]
    fn heads() {
        let heads = |path: &str, src: &str| -> Vec<(String, usize, usize)> {
            let def = language_for(path.as_bytes()).expect("a language");
            let s = scopes(def, src.as_bytes()).expect("parses");
            s.into_iter().map(|s| (s.qualified_name, s.head_line, s.start_line)).collect()
        };
        let py = "class A:\n    @app.route(\n        '/x')\n    # note\n    def m(self):\n        pass\n\n    # plain\n    def n(self):\n        pass\n";
        assert_eq!(heads("x.py", py), vec![("A".into(), 1, 1), ("A.m".into(), 2, 5), ("A.n".into(), 9, 9)]);
        let rs = "//! crate docs\n/// doc\n#[derive(Debug)]\n// plain\npub struct S { a: u32 }\n\n// plain only\nfn f() {}\n#[cfg(test)]\nmod tests {\n    //! inner\n    #[test]\n    fn t() {}\n}\n";
        assert_eq!(
            heads("x.rs", rs),
            vec![("S".into(), 2, 5), ("f".into(), 8, 8), ("tests".into(), 9, 10), ("tests::t".into(), 12, 13)]
        );
    }

    #[test]
    fn innermost_scope_wins() {
        let def = language_for(b"x.py").expect("python");
        let s = scopes(def, b"class A:\n    def m(self):\n        x = 1\n    y = 2\n").expect("parses");
        assert_eq!(crate::model::innermost(&s, 3).map(|s| s.qualified_name.as_str()), Some("A.m"));
        assert_eq!(crate::model::innermost(&s, 4).map(|s| s.qualified_name.as_str()), Some("A"));
        assert_eq!(crate::model::innermost(&s, 9), None);
    }

    #[test]
    fn syntax_errors_elsewhere_keep_intact_scopes() {
        let def = language_for(b"x.py").expect("python");
        let s = scopes(def, b"def ok():\n    return 1\n\ndef broken(:\n    pass\n").expect("parses");
        assert!(s.iter().any(|s| s.name == "ok" && s.start_line == 1 && s.end_line == 2), "{s:?}");
    }

    /// Near any line, the scopes that hold it (and their chain) are those
    /// of the whole file.
    #[test]
    fn scopes_near_a_line_hold_the_same_chain_as_all_scopes() {
        let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/syntax-corpus");
        let mut checked = 0;
        let dirs = ["python", "rust"].map(|d| corpus.join(d));
        for entry in dirs.iter().flat_map(|d| std::fs::read_dir(d).into_iter().flatten().flatten()) {
            let path = entry.path();
            let Some(def) = language_for(path.to_string_lossy().as_bytes()) else { continue };
            let Ok(source) = std::fs::read(&path) else { continue };
            let all = scopes(def, &source).expect("parses");
            let lines = source.iter().filter(|&&b| b == b'\n').count() + 1;
            for l in 1..=lines {
                let near = scopes_near(def, &source, &[l, l + 7]).expect("parses");
                let chain = |v: &[ScopeSpan]| -> Vec<ScopeSpan> {
                    v.iter().filter(|s| s.start_line <= l && l <= s.end_line).cloned().collect()
                };
                assert_eq!(chain(&near), chain(&all), "{} line {l}", path.display());
                checked += 1;
            }
        }
        assert!(checked > 100, "the corpus has sources");
    }
}
