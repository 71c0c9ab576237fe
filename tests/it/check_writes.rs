//! A check never changes what is judged (docs/honest-success.md, "Checks
//! that write"): the real ruff with `fix = true` in `pyproject.toml`
//! fixes the worktree after the snapshot; its writes are found, put back
//! before the next gate, and fail the check, naming the file.

use crate::support::record::{check_event, outcomes, prompt};
use crate::support::{FakeAgent, TestEnv};

const PYPROJECT: &str =
    "[project]\nname = \"calc\"\nversion = \"0.1\"\n\n[tool.ruff]\nfix = true\n\n[tool.ruff.lint]\nselect = [\"F\"]\n";

const CALC: &str = "def add(a, b):\n    return a - b\n";

/// ruff (which fixes), then a check that passes only when the worktree
/// still holds the attempt's `import os`: it sees the commit, not ruff's fix.
// Every check runs (`fail_fast = "none"`): the one after ruff is there to see
// what ruff left in the worktree.
const CHECKS: &str = "[retry]\nfail_fast = \"none\"\n\n[[check]]\nname = \"ruff\"\nrun = \"ruff check .\"\nkind = \"lint\"\n\n[[check]]\nname = \"sees-commit\"\nrun = \"python3 -c 'import calc, sys; sys.exit(0 if hasattr(calc, \\\"os\\\") else 1)'\"\n";

#[test]
fn ruff_with_fix_true_fails_its_check_and_the_next_gate_judges_the_commit() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let r = env
        .repo("repo")
        .file("pyproject.toml", PYPROJECT)
        .file("calc.py", CALC)
        .file(".gitignore", "__pycache__/\n.ruff_cache/\n")
        .file("retry-run.toml", CHECKS)
        .commit();
    let unused = "import os\n\n\ndef add(a, b):\n    return a + b\n";
    let used = "import os\n\nSEP = os.sep\n\n\ndef add(a, b):\n    return a + b\n";
    let agent = env.agent(
        FakeAgent::new()
            .write("calc.py", unused)
            .next_call()
            .expect_prompt("`calc.py`")
            .expect_prompt("make that change in your own edit")
            .write("calc.py", used),
    );
    let out = env.run_agent(&r, &["run", "--quiet", "--task", "Fix add"], &agent);
    let ruff = check_event(&r, "fix-add", 1, "ruff");
    assert_eq!(ruff["passed"], false, "ruff fixed the worktree, not the commit: {ruff}");
    let seen = check_event(&r, "fix-add", 1, "sees-commit");
    assert_eq!(seen["passed"], true, "the next gate judged ruff's fix, not the commit: {seen}");
    out.assert_code(0);
    assert_eq!(outcomes(&r, "fix-add"), ["CHECK_FAILURE", "SUCCESS"]);
    let p2 = prompt(&r, "fix-add", 2);
    assert!(p2.contains("changed `calc.py` in the worktree"), "{p2}");
    let report = env.run(&r, &["report", "fix-add"]).stdout;
    assert!(report.contains("changed `calc.py` in the worktree"), "{report}");
    // The success branch holds what every gate judged.
    let ok = check_event(&r, "fix-add", 2, "ruff");
    assert_eq!(ok["passed"], true, "{ok}");
}
