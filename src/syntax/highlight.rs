//! Syntax highlighting for the web view's diffs: each line of a file cut
//! into spans, each span with the name of what it is (`keyword`,
//! `string`, `comment`…), from the grammars' own `highlights.scm` through
//! tree-sitter-highlight. The configurations are built once per process.
//! Nothing here renders: the caller escapes and wraps the spans.

use std::sync::OnceLock;

use tree_sitter_highlight::{HighlightConfiguration, HighlightEvent, Highlighter};

/// The names highlighted, as the grammars' queries spell them; a page's
/// stylesheet styles each as a class `hl-<first word>`.
pub(crate) const NAMES: &[&str] = &[
    "keyword",
    "string",
    "comment",
    "function",
    "type",
    "constant",
    "number",
    "property",
    "operator",
    "attribute",
    "constructor",
    "escape",
    "label",
];

/// A span of one line: bytes `start..end` of the line, and the index in
/// [`NAMES`] of what it is (`None`: plain).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub start: usize,
    pub end: usize,
    pub name: Option<usize>,
}

/// The highlighting of a file too big to be worth it is skipped.
const MAX_BYTES: usize = 2 << 20;

fn config(language: &str) -> Option<&'static HighlightConfiguration> {
    static PY: OnceLock<Option<HighlightConfiguration>> = OnceLock::new();
    static RS: OnceLock<Option<HighlightConfiguration>> = OnceLock::new();
    static TS: OnceLock<Option<HighlightConfiguration>> = OnceLock::new();
    static TSX: OnceLock<Option<HighlightConfiguration>> = OnceLock::new();
    static JS: OnceLock<Option<HighlightConfiguration>> = OnceLock::new();
    // TypeScript's queries add to JavaScript's (and JSX's), the more
    // particular first: the first pattern that captures a node wins.
    use tree_sitter_javascript::{HIGHLIGHT_QUERY as JS_Q, JSX_HIGHLIGHT_QUERY as JSX_Q};
    use tree_sitter_typescript::HIGHLIGHTS_QUERY as TS_Q;
    let build = |lang: tree_sitter::Language, name: &str, query: &str| {
        let mut c = HighlightConfiguration::new(lang, name, query, "", "").ok()?;
        c.configure(NAMES);
        Some(c)
    };
    match language {
        "python" => PY
            .get_or_init(|| build(tree_sitter_python::LANGUAGE.into(), "python", tree_sitter_python::HIGHLIGHTS_QUERY)),
        "rust" => {
            RS.get_or_init(|| build(tree_sitter_rust::LANGUAGE.into(), "rust", tree_sitter_rust::HIGHLIGHTS_QUERY))
        }
        "typescript" => TS.get_or_init(|| {
            build(tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(), "typescript", &format!("{TS_Q}\n{JS_Q}"))
        }),
        "tsx" => TSX.get_or_init(|| {
            build(tree_sitter_typescript::LANGUAGE_TSX.into(), "tsx", &format!("{TS_Q}\n{JSX_Q}\n{JS_Q}"))
        }),
        "javascript" => {
            JS.get_or_init(|| build(tree_sitter_javascript::LANGUAGE.into(), "javascript", &format!("{JSX_Q}\n{JS_Q}")))
        }
        _ => return None,
    }
    .as_ref()
}

/// Each line of `source` (split on `\n`, without it) as spans, for a file
/// in a language retry-run parses (by `path`'s extension); `None` for
/// another language, a file too big, or one the highlighter gives up on.
pub(crate) fn highlight_lines(path: &[u8], source: &[u8]) -> Option<Vec<Vec<Span>>> {
    let lang = super::language_for(path)?;
    if source.len() > MAX_BYTES {
        return None;
    }
    let config = config(lang.name)?;
    let mut highlighter = Highlighter::new();
    let events = highlighter.highlight(config, source, None, None, |_| None).ok()?;
    let mut lines: Vec<Vec<Span>> = vec![Vec::new()];
    let mut line_start = 0usize;
    let mut stack: Vec<usize> = Vec::new();
    for event in events {
        match event.ok()? {
            HighlightEvent::HighlightStart(h) => stack.push(h.0),
            HighlightEvent::HighlightEnd => {
                stack.pop();
            }
            HighlightEvent::Source { start, end } => {
                let name = stack.last().copied();
                let mut from = start;
                while from < end {
                    let nl = source[from..end].iter().position(|&b| b == b'\n').map(|i| from + i);
                    let to = nl.unwrap_or(end);
                    if to > from {
                        lines.last_mut()?.push(Span { start: from - line_start, end: to - line_start, name });
                    }
                    match nl {
                        Some(i) => {
                            lines.push(Vec::new());
                            line_start = i + 1;
                            from = i + 1;
                        }
                        None => from = end,
                    }
                }
            }
        }
    }
    Some(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(path: &str, src: &str, line: usize) -> Vec<(String, Option<&'static str>)> {
        let lines = highlight_lines(path.as_bytes(), src.as_bytes()).expect("highlighted");
        let text: Vec<&str> = src.split('\n').collect();
        lines[line].iter().map(|s| (text[line][s.start..s.end].to_string(), s.name.map(|i| NAMES[i]))).collect()
    }

    #[test]
    fn keywords_strings_and_comments_are_named() {
        let py = names("a.py", "x = 1\ndef f():\n    return \"s\"  # c\n", 2);
        assert!(py.contains(&("return".into(), Some("keyword"))), "{py:?}");
        assert!(py.contains(&("\"s\"".into(), Some("string"))), "{py:?}");
        assert!(py.contains(&("# c".into(), Some("comment"))), "{py:?}");
        let rs = names("lib.rs", "fn main() {\n    let s = \"x\"; // hi\n}\n", 1);
        assert!(rs.contains(&("let".into(), Some("keyword"))), "{rs:?}");
        assert!(rs.contains(&("// hi".into(), Some("comment"))), "{rs:?}");
        let ts = names("a.ts", "interface I { a: string }\nconst f = (x: number): string => `${x}`; // c\n", 1);
        assert!(ts.contains(&("const".into(), Some("keyword"))), "{ts:?}");
        assert!(ts.contains(&("// c".into(), Some("comment"))), "{ts:?}");
        let tsx = names("a.tsx", "export const C = () => <p className=\"x\">hi</p>;\n", 0);
        assert!(tsx.contains(&("export".into(), Some("keyword"))), "{tsx:?}");
        let js = names("a.jsx", "function f() { return 'x'; }\n", 0);
        assert!(js.contains(&("'x'".into(), Some("string"))), "{js:?}");
    }

    #[test]
    fn lines_are_split_and_counted_like_the_file() {
        let src = "def f():\n    '''a\nb'''\n";
        let lines = highlight_lines(b"m.py", src.as_bytes()).expect("highlighted");
        assert_eq!(lines.len(), src.split('\n').count());
        // A string across lines: each line's part stays within its line.
        for (spans, text) in lines.iter().zip(src.split('\n')) {
            assert!(spans.iter().all(|s| s.end <= text.len()), "{spans:?} in {text:?}");
        }
        assert!(highlight_lines(b"notes.txt", b"x").is_none());
    }
}
