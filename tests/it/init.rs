//! `retry-run init` on a real repository: what it writes is what `run` takes.

use crate::support::{FakeAgent, TestEnv};

#[test]
fn init_writes_a_config_run_accepts_and_never_overwrites_without_force() {
    // The config it writes runs `python3 -m pytest`.
    let Some(env) = TestEnv::with_python_tools() else { return };
    let r = env
        .repo("repo")
        .file("shop/__init__.py", "")
        .file("tests/test_x.py", "def test_x():\n    assert True\n")
        .file("pyproject.toml", "[project]\nname = \"shop\"\n")
        .commit();
    let out = env.run(&r, &["init"]);
    out.assert_code(0);
    assert!(
        out.stdout.contains("Python project") && out.stdout.contains("scope: the source and test directories"),
        "{}",
        out.stdout
    );
    let text = std::fs::read_to_string(r.join("retry-run.toml")).expect("written");
    assert!(text.contains("python3 -m pytest -rA") && text.contains("\"shop/**\""), "{text}");
    let again = env.run(&r, &["init"]);
    again.assert_code(2);
    assert!(again.stderr.contains("--force"), "{}", again.stderr);
    env.run(&r, &["init", "--force"]).assert_code(0);
    // The file it wrote drives a real run.
    let agent = env.agent(FakeAgent::new().append("shop/__init__.py", "# x\n"));
    let run = env.run_agent(&r, &["run", "--quiet", "--task", "Touch"], &agent);
    run.assert_code(0);
}
