//! `retry-run init` on a real repository: what it writes is what `run` takes.

use crate::support::TestEnv;

#[test]
fn init_writes_a_config_run_accepts_and_never_overwrites_without_force() {
    let env = TestEnv::new();
    let r = env.path("repo");
    std::fs::create_dir_all(r.join("shop")).expect("mkdir");
    std::fs::create_dir_all(r.join("tests")).expect("mkdir");
    std::fs::write(r.join("shop/__init__.py"), "").expect("write");
    std::fs::write(r.join("tests/test_x.py"), "def test_x():\n    assert True\n").expect("write");
    std::fs::write(r.join("pyproject.toml"), "[project]\nname = \"shop\"\n").expect("write");
    env.git(&r, &["init", "-q"]);
    env.git(&r, &["add", "-A"]);
    env.git(&r, &["commit", "-qm", "base"]);
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
    // The file it wrote drives a real run (pytest is installed by .ci/run).
    let run = env.run(&r, &["run", "--quiet", "--task", "Touch", "--", "sh", "-c", "echo '# x' >> shop/__init__.py"]);
    run.assert_code(0);
}
