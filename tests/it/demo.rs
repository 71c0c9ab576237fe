//! `retry-run demo`: the whole loop on its built-in repository.

use crate::support::TestEnv;

#[test]
fn demo_fixes_both_problems_on_the_second_attempt() {
    let env = TestEnv::new();
    let out = env.run(env.root(), &["demo"]);
    out.assert_code(0);
    assert!(out.stdout.contains("succeeded at attempt 2"), "{}", out.stdout);
    assert!(out.stdout.contains("## Attempt 2 of 3: the previous attempt failed"), "{}", out.stdout);
    assert!(out.stdout.contains("tests/run.sh::test_add"), "{}", out.stdout);
}
