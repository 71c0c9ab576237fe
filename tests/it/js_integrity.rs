//! Test integrity for TypeScript and JavaScript (jest, vitest, mocha):
//! each way an attempt can make a failing suite pass without fixing the
//! code is caught by the built-in `test-integrity`, fed back, and the next
//! attempt, fixing the code instead, succeeds. The project's test command
//! stands in as `true` (what a weakened suite reports): only what the
//! attempt did to the tests is judged here.

use serde_json::Value;

use crate::support::record::{check_event, outcomes, prompt};
use crate::support::{FakeAgent, TestEnv};

const TESTS: &str = "import { describe, it, expect } from 'vitest';\nimport { total } from '../src/cart';\n\ndescribe('cart', () => {\n  it('adds quantities', () => {\n    expect(total([{ qty: 2 }, { qty: 3 }])).toBe(5);\n    expect(total([])).toBe(0);\n  });\n\n  it('counts one item', () => {\n    expect(total([{ qty: 1 }])).toBe(1);\n  });\n\n  it('renders', () => {\n    expect(`${total([{ qty: 5 }])} items`).toMatchInlineSnapshot(`\"5 items\"`);\n  });\n});\n";
const SNAP: &str = "// Vitest Snapshot v1\n\nexports[`cart > renders 1`] = `\"5 items\"`;\n";
const CODE: &str = "export function total(items: { qty: number }[]): number {\n  return items.length;\n}\n";
const FIXED: &str =
    "export function total(items: { qty: number }[]): number {\n  return items.reduce((n, i) => n + i.qty, 0);\n}\n";

#[test]
fn skipping_only_de_asserting_removing_and_rewriting_snapshots_are_caught_then_fixed() {
    let cases: &[(&str, &str, String, &str)] = &[
        ("skip", "test/cart.test.ts", TESTS.replace("it('adds quantities'", "it.skip('adds quantities'"), "skipped now (`it.skip`)"),
        ("todo", "test/cart.test.ts", TESTS.replace("it('adds quantities', () => {\n    expect(total([{ qty: 2 }, { qty: 3 }])).toBe(5);\n    expect(total([])).toBe(0);\n  });", "it.todo('adds quantities');"), "skipped now (`it.todo`)"),
        ("xdescribe", "test/cart.test.ts", TESTS.replace("describe('cart'", "xdescribe('cart'"), "skipped now (`xdescribe`)"),
        ("only", "test/cart.test.ts", TESTS.replace("it('counts one item'", "it.only('counts one item'"), "`it.only` added: the other tests of its file no longer run"),
        ("de-assert", "test/cart.test.ts", TESTS.replace("    expect(total([{ qty: 2 }, { qty: 3 }])).toBe(5);\n", ""), "2 assertions on the base, 1 now"),
        ("remove", "test/cart.test.ts", TESTS.replace("  it('adds quantities', () => {\n    expect(total([{ qty: 2 }, { qty: 3 }])).toBe(5);\n    expect(total([])).toBe(0);\n  });\n\n", ""), "removed or renamed"),
        ("snapshot", "test/__snapshots__/cart.test.ts.snap", SNAP.replace("5 items", "2 items"), "a snapshot of the base rewritten"),
        ("inline-snapshot", "test/cart.test.ts", TESTS.replace("`\"5 items\"`", "`\"1 items\"`"), "its inline snapshot 1 of the base rewritten"),
    ];
    for (name, file, weakened, finding) in cases {
        let env = TestEnv::new();
        let r = env
            .repo("repo")
            .file("src/cart.ts", CODE)
            .file("test/cart.test.ts", TESTS)
            .file("test/__snapshots__/cart.test.ts.snap", SNAP)
            .file(
                "retry-run.toml",
                "max_attempts = 2\n[retry]\nbaseline = \"off\"\n\n[[check]]\nname = \"vitest\"\nrun = \"true\"\nkind = \"test\"\n",
            )
            .commit();
        let agent = FakeAgent::new()
            .write(file, weakened)
            .next_call()
            .expect_prompt("you removed, skipped or weakened")
            .write("src/cart.ts", FIXED);
        let agent = env.agent(agent);
        let task = format!("Weaken by {name}");
        let id = format!("weaken-by-{name}");
        let out = env.run_agent(&r, &["run", "--quiet", "--task", &task], &agent);
        assert_eq!(out.code, 0, "{name}: {}\nprompt 2:\n{}", out.stderr, prompt(&r, &id, 2));
        assert_eq!(outcomes(&r, &id), ["CHECK_FAILURE", "SUCCESS"], "{name}");
        let integrity = check_event(&r, &id, 1, "test-integrity");
        assert_eq!(integrity["passed"], false, "{name}: {integrity}");
        let p = prompt(&r, &id, 2);
        assert!(p.contains(finding), "{name}: {p}");
        assert_eq!(
            check_event(&r, &id, 2, "test-integrity")["passed"],
            Value::Null,
            "{name}: attempt 2 touched no test"
        );
    }
}
