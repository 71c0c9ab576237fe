//! The tests of a source file, found with tree-sitter: each test function's
//! name, whether it is skipped, and how many assertions it holds. Feeds the
//! built-in check `test-integrity` (the comparison itself is pure, in
//! `crate::judge::integrity`).
//!
//! Python: `test*` functions at module level and `test*` methods of `Test*`
//! classes; skips are `@pytest.mark.skip`/`skipif`/`xfail`, `unittest.skip*`
//! (on the test or its class) and a `pytest.skip(` call; assertions are
//! `assert` statements and `self.assert*(` calls. Rust: functions with a
//! `#[test]` attribute (or `#[tokio::test]` and the like); skips are
//! `#[ignore]`; assertions are `assert!`, `assert_eq!`, `assert_ne!` and
//! their `debug_` forms. TypeScript and JavaScript (jest, vitest, mocha,
//! node's runner): `it(...)` and `test(...)` calls, inside `describe(...)`
//! blocks (qualified as the runners do, `suite > case`); skips are
//! `.skip`, `xit`, `xtest`, `xdescribe`, `.todo` (a test turned into a
//! to-do), on the test or a `describe` around it; `.only`, `fit` and
//! `fdescribe` are kept as `only` markers (they narrow what runs);
//! assertions are `expect(` and `assert` calls.

use tree_sitter::{Node, Parser};

use super::LanguageDef;
use crate::model::FoundTest;

/// Every test of `source`; `None` when the language has no test rules.
pub(crate) fn tests_in(def: &'static LanguageDef, source: &[u8]) -> Option<Vec<FoundTest>> {
    let mut parser = Parser::new();
    parser.set_language(&(def.grammar)()).ok()?;
    let tree = parser.parse(source, None)?;
    let mut out = Vec::new();
    match def.name {
        "python" => python(tree.root_node(), source, &mut Vec::new(), false, &mut out),
        "rust" => rust(tree.root_node(), source, &mut Vec::new(), &mut out),
        "typescript" | "tsx" | "javascript" => js(tree.root_node(), source, &mut Vec::new(), &[], &mut out),
        _ => return None,
    }
    Some(out)
}

fn text<'a>(node: Node, source: &'a [u8]) -> std::borrow::Cow<'a, str> {
    String::from_utf8_lossy(&source[node.byte_range()])
}

/// A decorator that skips or expects failure, as written (`pytest.mark.skip`).
fn py_skip_decorator(node: Node, source: &[u8]) -> Option<String> {
    let t = text(node, source);
    let name = t.trim_start_matches('@').split('(').next().unwrap_or("").trim().to_string();
    let bare = name.rsplit('.').next().unwrap_or("");
    let pytest_mark = name.contains("mark.") && matches!(bare, "skip" | "skipif" | "xfail");
    let unittest = matches!(bare, "skipIf" | "skipUnless" | "expectedFailure")
        || (bare == "skip" && name.starts_with("unittest."));
    (pytest_mark || unittest).then_some(name)
}

fn python(node: Node, source: &[u8], names: &mut Vec<String>, class_skip: bool, out: &mut Vec<FoundTest>) {
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        let (def, decorators) = match child.kind() {
            "decorated_definition" => {
                let mut c = child.walk();
                let decs: Vec<Node> = child.children(&mut c).filter(|n| n.kind() == "decorator").collect();
                match child.child_by_field_name("definition") {
                    Some(d) => (d, decs),
                    None => continue,
                }
            }
            "function_definition" | "class_definition" => (child, Vec::new()),
            _ => continue,
        };
        let Some(name) = def.child_by_field_name("name").map(|n| text(n, source).into_owned()) else { continue };
        let skips: Vec<String> = decorators.iter().filter_map(|d| py_skip_decorator(*d, source)).collect();
        match def.kind() {
            "class_definition" if name.starts_with("Test") && names.is_empty() => {
                if let Some(body) = def.child_by_field_name("body") {
                    names.push(name);
                    python(body, source, names, class_skip || !skips.is_empty(), out);
                    names.pop();
                }
            }
            "function_definition" if name.starts_with("test") => {
                let body = def.child_by_field_name("body");
                let mut skip = skips;
                if class_skip {
                    skip.push("a skip on its class".into());
                }
                let (asserts, skip_call) = body.map_or((0, false), |b| py_body(b, source));
                if skip_call {
                    skip.push("pytest.skip(".into());
                }
                let mut qualified = names.clone();
                qualified.push(name.clone());
                out.push(FoundTest {
                    name,
                    qualified: qualified.join("."),
                    line: def.start_position().row + 1,
                    skips: skip,
                    assertions: asserts,
                    inline_snapshots: Vec::new(),
                });
            }
            _ => {}
        }
    }
}

/// Assertions in a Python test body, and whether it calls `pytest.skip(`.
fn py_body(node: Node, source: &[u8]) -> (usize, bool) {
    let mut asserts = 0;
    let mut skip = false;
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        match n.kind() {
            "assert_statement" => asserts += 1,
            "call" => {
                if let Some(f) = n.child_by_field_name("function") {
                    let name = text(f, source);
                    let last = name.rsplit('.').next().unwrap_or("");
                    if last.starts_with("assert") && name.contains('.') {
                        asserts += 1;
                    }
                    if name == "pytest.skip" || name == "pytest.xfail" {
                        skip = true;
                    }
                }
            }
            // A nested function or class is not this test's body.
            "function_definition" | "class_definition" if n.id() != node.id() => continue,
            _ => {}
        }
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
    (asserts, skip)
}

/// The callee of a test-framework call, as words: `it`, `it.skip`,
/// `describe.only`, `test.each` (its table call's callee).
fn js_callee(call: Node, source: &[u8]) -> Option<String> {
    let f = call.child_by_field_name("function")?;
    let f = if f.kind() == "call_expression" { f.child_by_field_name("function")? } else { f };
    let t = text(f, source);
    let t: String = t.chars().filter(|c| !c.is_whitespace()).collect();
    let root = t.split('.').next().unwrap_or("");
    matches!(
        root,
        "it" | "test" | "describe" | "suite" | "context" | "xit" | "xtest" | "xdescribe" | "fit" | "fdescribe"
    )
    .then_some(t)
}

/// The markers a callee carries: skips and `only`.
fn js_markers(callee: &str) -> Vec<String> {
    let mut out = Vec::new();
    let parts: Vec<&str> = callee.split('.').collect();
    if matches!(parts[0], "xit" | "xtest" | "xdescribe") || parts.contains(&"skip") || parts.contains(&"todo") {
        out.push(callee.to_string());
    }
    if matches!(parts[0], "fit" | "fdescribe") || parts.contains(&"only") {
        out.push(format!("only: {callee}"));
    }
    out
}

/// The text of a test's name argument: a string or a template.
fn js_name(call: Node, source: &[u8]) -> Option<String> {
    let args = call.child_by_field_name("arguments")?;
    let first = args.named_child(0)?;
    match first.kind() {
        "string" | "template_string" => {
            Some(text(first, source).trim_matches(|c| c == '"' || c == '\'' || c == '`').to_string())
        }
        _ => None,
    }
}

/// `expect(` and `assert` calls under `node`.
fn js_asserts(node: Node, source: &[u8]) -> usize {
    let mut n = 0;
    let mut cursor = node.walk();
    let mut stack = vec![node];
    while let Some(x) = stack.pop() {
        if x.kind() == "call_expression"
            && let Some(f) = x.child_by_field_name("function")
        {
            let t = text(f, source);
            if t == "expect"
                || t == "assert"
                || t.starts_with("assert.")
                || t.starts_with("expect.") && t != "expect.assertions"
            {
                n += 1;
            }
        }
        stack.extend(x.children(&mut cursor));
    }
    n
}

/// The arguments of the inline snapshot matchers under `node`
/// (`toMatchInlineSnapshot`, `toThrowErrorMatchingInlineSnapshot`), as
/// written, in source order; an empty one (the runner fills it in on its
/// first run) is kept as empty.
fn js_inline_snapshots(node: Node, source: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let mut cursor = node.walk();
    let mut stack = vec![node];
    while let Some(x) = stack.pop() {
        if x.kind() == "call_expression"
            && let Some(f) = x.child_by_field_name("function")
            && f.kind() == "member_expression"
            && let Some(p) = f.child_by_field_name("property")
            && text(p, source).ends_with("InlineSnapshot")
        {
            let args = x.child_by_field_name("arguments").map(|a| text(a, source)).unwrap_or_default();
            found.push((x.start_byte(), args.to_string()));
        }
        stack.extend(x.children(&mut cursor));
    }
    found.sort();
    found.into_iter().map(|(_, a)| a).collect()
}

fn js(node: Node, source: &[u8], names: &mut Vec<String>, outer: &[String], out: &mut Vec<FoundTest>) {
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        let callee = (child.kind() == "call_expression").then(|| js_callee(child, source)).flatten();
        let Some(callee) = callee else {
            js(child, source, names, outer, out);
            continue;
        };
        let Some(name) = js_name(child, source) else {
            js(child, source, names, outer, out);
            continue;
        };
        let mut markers: Vec<String> = outer.to_vec();
        markers.extend(js_markers(&callee));
        let root = callee.split('.').next().unwrap_or("");
        let body = child.child_by_field_name("arguments");
        if matches!(root, "describe" | "suite" | "context" | "xdescribe" | "fdescribe") {
            names.push(name);
            if let Some(b) = body {
                js(b, source, names, &markers, out);
            }
            names.pop();
            continue;
        }
        let mut qualified = names.clone();
        qualified.push(name.clone());
        out.push(FoundTest {
            name,
            qualified: qualified.join(" > "),
            line: child.start_position().row + 1,
            skips: markers,
            assertions: body.map_or(0, |b| js_asserts(b, source)),
            inline_snapshots: body.map_or_else(Vec::new, |b| js_inline_snapshots(b, source)),
        });
    }
}

fn rust(node: Node, source: &[u8], mods: &mut Vec<String>, out: &mut Vec<FoundTest>) {
    let mut cursor = node.walk();
    let mut attrs: Vec<String> = Vec::new();
    for child in node.children(&mut cursor) {
        match child.kind() {
            "attribute_item" => attrs.push(text(child, source).into_owned()),
            "line_comment" | "block_comment" => {}
            "function_item" => {
                let is_test = attrs.iter().any(|a| rust_attr_is_test(a));
                if is_test && let Some(name) = child.child_by_field_name("name").map(|n| text(n, source).into_owned()) {
                    let skips: Vec<String> = attrs
                        .iter()
                        .filter(|a| rust_attr_name(a) == "ignore")
                        .map(|a| a.split_whitespace().collect::<Vec<_>>().join(" "))
                        .collect();
                    let asserts = child.child_by_field_name("body").map_or(0, |b| rust_asserts(b, source));
                    let mut qualified = mods.clone();
                    qualified.push(name.clone());
                    out.push(FoundTest {
                        name,
                        qualified: qualified.join("::"),
                        line: child.start_position().row + 1,
                        skips,
                        assertions: asserts,
                        inline_snapshots: Vec::new(),
                    });
                }
                attrs.clear();
            }
            "mod_item" => {
                if let (Some(name), Some(body)) = (child.child_by_field_name("name"), child.child_by_field_name("body"))
                {
                    mods.push(text(name, source).into_owned());
                    rust(body, source, mods, out);
                    mods.pop();
                }
                attrs.clear();
            }
            _ => attrs.clear(),
        }
    }
}

/// `#[test]`, `#[tokio::test]`, `#[rstest]`-less test attributes: the path's last segment is `test`.
fn rust_attr_is_test(attr: &str) -> bool {
    rust_attr_name(attr) == "test"
}

/// The last path segment of an attribute: `#[tokio::test(flavor = "x")]` → `test`.
fn rust_attr_name(attr: &str) -> &str {
    let inner = attr.trim().trim_start_matches("#[").trim_start();
    let path = inner.split(['(', ']', '=', ' ']).next().unwrap_or("");
    path.rsplit("::").next().unwrap_or(path)
}

fn rust_asserts(node: Node, source: &[u8]) -> usize {
    let mut n_asserts = 0;
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        if n.kind() == "macro_invocation"
            && let Some(m) = n.child_by_field_name("macro")
        {
            let name = text(m, source);
            let last = name.rsplit("::").next().unwrap_or("");
            if matches!(
                last,
                "assert" | "assert_eq" | "assert_ne" | "debug_assert" | "debug_assert_eq" | "debug_assert_ne"
            ) || last.starts_with("assert_")
            {
                n_asserts += 1;
            }
        }
        if n.kind() == "function_item" && n.id() != node.id() {
            continue;
        }
        let mut c = n.walk();
        stack.extend(n.children(&mut c));
    }
    n_asserts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::language_for;

    fn found(path: &str, src: &str) -> Vec<(String, Vec<String>, usize)> {
        let def = language_for(path.as_bytes()).expect("language");
        tests_in(def, src.as_bytes())
            .expect("rules")
            .into_iter()
            .map(|t| (t.qualified, t.skips, t.assertions))
            .collect()
    }

    #[test]
    fn javascript_tests_skips_only_and_assertions() {
        let src = "const assert = require('node:assert');\ndescribe('cart', () => {\n  it('adds', () => { expect(a).toBe(1); expect(b).toEqual([]); });\n  it.skip('later', () => { expect(1).toBe(2); });\n  describe.only('nested', function () {\n    test(`tpl name`, () => { assert.strictEqual(1, 1); assert(true); });\n  });\n  it.todo('someday');\n  helper('not a test', () => {});\n});\nxit('off', () => {});\nfit('focused', async () => { await expect(p).resolves.toBe(1); });\n";
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            found("a.test.js", src),
            vec![
                ("cart > adds".into(), s(&[]), 2),
                ("cart > later".into(), s(&["it.skip"]), 1),
                ("cart > nested > tpl name".into(), s(&["only: describe.only"]), 2),
                ("cart > someday".into(), s(&["it.todo"]), 0),
                ("off".into(), s(&["xit"]), 0),
                ("focused".into(), s(&["only: fit"]), 1),
            ]
        );
        let ts = "import { test, expect } from 'vitest';\ntest('typed', (): void => {\n  expect(f(1 as number)).toBe(2);\n});\n";
        let snap = "it('total', () => {\n  expect(t()).toMatchInlineSnapshot(`5`);\n  expect(() => g()).toThrowErrorMatchingInlineSnapshot();\n});\n";
        let tests = tests_in(language_for(b"a.test.ts").expect("language"), snap.as_bytes()).expect("rules");
        assert_eq!(tests[0].inline_snapshots, ["(`5`)", "()"]);
        assert_eq!(found("a.test.ts", ts), vec![("typed".into(), Vec::<String>::new(), 1)]);
    }

    #[test]
    fn python_tests_skips_and_assertions() {
        let src = r#"
import pytest, unittest

def helper():
    assert True

def test_add():
    assert add(2, 3) == 5
    assert add(0, 0) == 0

@pytest.mark.skip(reason="later")
def test_skipped():
    assert False

@pytest.mark.parametrize("x", [1])
def test_param(x):
    if x:
        pytest.skip("no")
    # assert x

class TestCalc(unittest.TestCase):
    def test_mul(self):
        self.assertEqual(mul(2, 3), 6)
        def inner():
            assert 1
    @unittest.skipIf(True, "x")
    def test_div(self):
        self.assertTrue(1)

@pytest.mark.xfail
class TestAll:
    def test_x(self):
        assert 1

class Helper:
    def test_not_a_test(self):
        pass
"#;
        assert_eq!(
            found("tests/test_calc.py", src),
            vec![
                ("test_add".into(), vec![], 2),
                ("test_skipped".into(), vec!["pytest.mark.skip".to_string()], 1),
                ("test_param".into(), vec!["pytest.skip(".to_string()], 0),
                ("TestCalc.test_mul".into(), vec![], 1),
                ("TestCalc.test_div".into(), vec!["unittest.skipIf".to_string()], 1),
                ("TestAll.test_x".into(), vec!["a skip on its class".to_string()], 1),
            ]
        );
    }

    #[test]
    fn rust_tests_ignores_and_assertions() {
        let src = r#"
fn add(a: i32, b: i32) -> i32 { a + b }

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(2, 3), 5);
        assert!(add(0, 0) == 0);
    }

    /// doc
    #[test]
    #[ignore = "slow"]
    fn slow() {
        assert_ne!(add(1, 1), 3);
    }

    #[tokio::test(flavor = "current_thread")]
    async fn async_one() {}

    fn not_a_test() { assert!(true); }
}
"#;
        assert_eq!(
            found("src/lib.rs", src),
            vec![
                ("tests::adds".into(), vec![], 2),
                ("tests::slow".into(), vec!["#[ignore = \"slow\"]".to_string()], 1),
                ("tests::async_one".into(), vec![], 0),
            ]
        );
    }
}
