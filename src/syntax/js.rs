//! Where a TypeScript or JavaScript scope's lines are, and what it is
//! called, as a TypeScript user says it (the rules of `grammars/README.md`,
//! checked against the TypeScript compiler by `tests/oracle/ts_scopes.js`):
//!
//! - it starts on its keyword's line (`function`, `class`, `interface`,
//!   `enum`, `namespace`, `module`), whatever stands before it (`export`,
//!   `default`, `declare`, `abstract`, `async`, `const`); a function or
//!   class bound to a variable starts on its `const`, `let` or `var`; a
//!   class member on its first modifier, else its name (not its
//!   decorators); an object property on its name;
//! - it ends where its node ends; a bound function or class where the
//!   bound expression ends;
//! - its head line is the first of its decorators, its `export` (or
//!   `declare`), and the JSDoc comment (`/** */`) before it; plain
//!   comments are passed over.

use tree_sitter::Node;

/// The keyword tokens a declaration starts on.
const KEYWORDS: &[&str] = &["function", "class", "interface", "enum", "namespace", "module"];

/// The name of a scope from its `@name` node: an identifier's text, a
/// string's content without its quotes, a private name with its `#`, a
/// computed name with its brackets. Pure over the source.
pub(super) fn name(node: Node, source: &[u8]) -> String {
    let text = super::text(node, source);
    match node.kind() {
        "string" => text.trim_matches(|c| c == '"' || c == '\'' || c == '`').to_string(),
        _ => text,
    }
}

/// The scope's first row, last row and head row (0-based).
pub(super) fn rows(node: Node, source: &[u8]) -> (usize, usize, usize) {
    let bound = node.parent().filter(|p| {
        matches!(p.kind(), "variable_declarator" | "public_field_definition" | "field_definition" | "pair")
            && p.child_by_field_name("value").is_some_and(|v| v.id() == node.id())
    });
    let end = node.end_position().row;
    let (start, anchor) = match bound {
        // `const f = () => ...`: on its `const`, its head above the
        // declaration (and its `export`).
        Some(d) if d.kind() == "variable_declarator" => {
            let decl = d.parent().filter(|p| matches!(p.kind(), "lexical_declaration" | "variable_declaration"));
            let decl = decl.unwrap_or(d);
            (decl.start_position().row, decl)
        }
        // A class field: on its first modifier or name, past decorators.
        Some(f) if f.kind() != "pair" => (first_own_row(f), f),
        // An object property: on its name.
        Some(p) => (p.start_position().row, p),
        None => match node.kind() {
            "method_definition" => match lone_static(node, source) {
                // `static` alone on the line above: its modifier, and its
                // decorators are the method's.
                Some(s) => (first_own_row(s), s),
                None => (first_own_row(node), node),
            },
            _ => (keyword_row(node), node),
        },
    };
    (start, end, head_row(anchor, source).min(start))
}

/// A `static` modifier alone on its line before the method `node`, which
/// tree-sitter reads as a field named `static` (TypeScript reads it as the
/// method's modifier).
fn lone_static<'t>(node: Node<'t>, source: &[u8]) -> Option<Node<'t>> {
    let prev = node.prev_named_sibling()?;
    let field = matches!(prev.kind(), "public_field_definition" | "field_definition");
    let mut cursor = prev.walk();
    let mut own = prev.named_children(&mut cursor).filter(|c| c.kind() != "decorator");
    let name = own.next()?;
    let alone = own.next().is_none() && name.kind() == "property_identifier";
    (field && alone && &source[name.byte_range()] == b"static").then_some(prev)
}

/// The row of the node's first child that is not a decorator or comment:
/// a member's modifiers or name.
fn first_own_row(node: Node) -> usize {
    let mut cursor = node.walk();
    let row = node
        .children(&mut cursor)
        .find(|c| !matches!(c.kind(), "decorator" | "comment"))
        .map(|c| c.start_position().row);
    row.unwrap_or(node.start_position().row)
}

/// The row of the declaration's keyword (`function`, `class`, ...), not of
/// what stands before it.
fn keyword_row(node: Node) -> usize {
    let mut cursor = node.walk();
    let row = node.children(&mut cursor).find(|c| KEYWORDS.contains(&c.kind())).map(|c| c.start_position().row);
    row.unwrap_or_else(|| first_own_row(node))
}

/// The first row of what heads the declaration `anchor`: its decorators
/// (its own, or those before it in a class body), the statement that
/// exports or declares it, and its JSDoc comment: as TypeScript attaches
/// it, the last `/** */` among the comments that lead it (before its
/// decorators; not one that trails the token before it on its line).
fn head_row(anchor: Node, source: &[u8]) -> usize {
    let mut top = anchor;
    while let Some(p) = top.parent().filter(|p| matches!(p.kind(), "export_statement" | "ambient_declaration")) {
        top = p;
    }
    let mut row = top.start_position().row;
    // What leads it, nearest first: decorators and comments.
    let mut leading = Vec::new();
    let mut prev = top.prev_sibling();
    while let Some(p) = prev.filter(|p| matches!(p.kind(), "decorator" | "comment")) {
        leading.push(p);
        prev = p.prev_sibling();
    }
    let first_decorator = leading.iter().rposition(|p| p.kind() == "decorator");
    for p in leading.iter().filter(|p| p.kind() == "decorator") {
        row = row.min(p.start_position().row);
    }
    // Before the first decorator (further in the list), the nearest doc.
    let before_decorators = leading.iter().skip(first_decorator.map_or(0, |d| d + 1));
    let doc = before_decorators
        .filter(|p| p.kind() == "comment" && super::is_outer_doc(&source[p.byte_range()]))
        .find(|p| !trails(**p));
    if let Some(doc) = doc {
        row = row.min(doc.start_position().row);
    }
    row
}

/// Whether a comment trails the token before it on the same line (`{ /**
/// d */ m() {} }`): TypeScript gives it to that token, not to what follows.
fn trails(comment: Node) -> bool {
    comment.prev_sibling().is_some_and(|t| t.end_position().row == comment.start_position().row)
}

#[cfg(test)]
mod tests {
    use crate::syntax::{language_for, scopes};

    fn spans(path: &str, src: &str) -> Vec<(String, String, usize, usize, usize)> {
        let def = language_for(path.as_bytes()).expect("a language");
        scopes(def, src.as_bytes())
            .expect("parses")
            .into_iter()
            .map(|s| (s.kind, s.qualified_name, s.start_line, s.end_line, s.head_line))
            .collect()
    }

    fn s(kind: &str, name: &str, start: usize, end: usize, head: usize) -> (String, String, usize, usize, usize) {
        (kind.into(), name.into(), start, end, head)
    }

    #[test]
    fn typescript_declarations_members_and_bound_functions() {
        let src = "/** A duration. */\n@Component({a: 1})\nexport abstract class DurationFormatter<T> {\n  @Input() name: string;\n  private static readonly x = (a: number) =>\n    a + 1;\n  constructor(private y: number) {}\n  get value(): number { return 1; }\n  abstract foo(): void;\n  over(a: string): void;\n  over(a: any) {}\n  // plain\n  @dec\n  async format() {}\n  [Symbol.iterator]() {}\n  #priv() {}\n}\nexport function f(a: number): number;\nexport function f(a: any) { return a; }\nconst h = async (x) => {\n  return x;\n};\ninterface I { m(): void; }\nconst enum E { A }\nnamespace N.M {\n  export function z() {}\n}\ndeclare module \"x\" { }\nconst api = { get: () => 1, 'put-it'() {} };\n(function () { function inner() {} })();\nexport default class {}\n";
        assert_eq!(
            spans("x.ts", src),
            vec![
                s("class", "DurationFormatter", 3, 17, 1),
                s("function", "DurationFormatter.x", 5, 6, 5),
                s("function", "DurationFormatter.constructor", 7, 7, 7),
                s("function", "DurationFormatter.value", 8, 8, 8),
                s("function", "DurationFormatter.over", 11, 11, 11),
                s("function", "DurationFormatter.format", 14, 14, 13),
                s("function", "DurationFormatter.[Symbol.iterator]", 15, 15, 15),
                s("function", "DurationFormatter.#priv", 16, 16, 16),
                s("function", "f", 19, 19, 19),
                s("function", "h", 20, 22, 20),
                s("interface", "I", 23, 23, 23),
                s("enum", "E", 24, 24, 24),
                s("namespace", "N", 25, 27, 25),
                s("namespace", "N.M", 25, 27, 25),
                s("function", "N.M.z", 26, 26, 26),
                s("function", "get", 29, 29, 29),
                s("function", "put-it", 29, 29, 29),
                s("function", "inner", 30, 30, 30),
                s("class", "default", 31, 31, 31),
            ]
        );
    }

    #[test]
    fn javascript_and_jsx() {
        let src = "/**\n * Doc.\n */\nexport default function () {}\nclass A extends B {\n  static #count = 0;\n  handle = () => {};\n  render() { return <div onClick={() => 1} />; }\n}\nmodule.exports = { run: function () {} };\n";
        assert_eq!(
            spans("x.jsx", src),
            vec![
                s("function", "default", 4, 4, 1),
                s("class", "A", 5, 9, 5),
                s("function", "A.handle", 7, 7, 7),
                s("function", "A.render", 8, 8, 8),
                s("function", "run", 10, 10, 10),
            ]
        );
        assert_eq!(spans("x.mjs", "export const f = function* () {};\n"), vec![s("function", "f", 1, 1, 1)]);
        assert_eq!(spans("x.tsx", "export const C = () => <p>{1}</p>;\n"), vec![s("function", "C", 1, 1, 1)]);
    }
}
