//! `retry-run init` on real repositories: it finds the project's own
//! interpreter and tools, runs each proposed check once on the base in a
//! throwaway worktree, says what it found, leaves out what cannot start,
//! and what it writes is what `run` takes.

use crate::support::{FakeAgent, TestEnv};

/// The `[[check]]` runs of a written config, in order.
fn runs(text: &str) -> Vec<String> {
    let c = retry_run::config::Config::parse(text, std::path::Path::new("retry-run.toml")).expect("parses");
    c.checks.into_iter().map(|c| format!("{}: {}", c.name, c.run)).collect()
}

/// The checkout holds nothing init left: only the file it wrote is new.
fn only_the_config_is_new(env: &TestEnv, r: &std::path::Path) {
    let status = env.git(r, &["status", "--porcelain", "--ignored"]);
    let new: Vec<&str> = status.lines().filter(|l| !l.ends_with(".venv/")).collect();
    assert_eq!(new, ["?? retry-run.toml"], "{status}");
    let worktrees = env.git(r, &["worktree", "list"]);
    assert_eq!(worktrees.lines().count(), 1, "the throwaway worktree is removed: {worktrees}");
}

#[test]
fn init_writes_a_config_run_accepts_and_never_overwrites_without_force() {
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
    assert_eq!(runs(&text), ["pytest: python3 -m pytest"], "{text}");
    assert!(text.contains("\"shop/**\"") && text.contains("docs/config.md"), "{text}");
    assert!(out.stdout.contains("docs/config.md") && !out.stdout.contains("README"), "{}", out.stdout);
    let again = env.run(&r, &["init"]);
    again.assert_code(2);
    assert!(again.stderr.contains("--force"), "{}", again.stderr);
    env.run(&r, &["init", "--force"]).assert_code(0);
    // The file it wrote drives a real run.
    let agent = env.agent(FakeAgent::new().append("shop/__init__.py", "# x\n"));
    let run = env.run_agent(&r, &["run", "--quiet", "--task", "Touch"], &agent);
    run.assert_code(0);
}

#[test]
fn a_flat_project_gets_pytest_and_ruff_with_what_they_found_on_the_base() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let r = env
        .repo("flat")
        .file("shop/__init__.py", "import os\nimport sys\n\n\ndef total(xs):\n    return sum(xs)\n")
        .file(
            "tests/test_shop.py",
            "from shop import total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n\n\ndef test_sum():\n    assert total([1]) == 2\n\n\ndef test_empty():\n    assert total([]) == 0\n",
        )
        .file("pyproject.toml", "[project]\nname = \"shop\"\n\n[tool.ruff.lint]\nselect = [\"F\"]\n")
        .commit();
    let out = env.run(&r, &["init"]);
    out.assert_code(0);
    let said = &out.stdout;
    assert!(said.contains("interpreter: python3 (python3 on PATH), which can import pytest"), "{said}");
    assert!(said.contains("imports from the root") && said.contains("tests in tests"), "{said}");
    assert!(said.contains("pytest: 2 passed, 1 failing: tests/test_shop.py::test_sum"), "{said}");
    assert!(said.contains("ruff: 2 diagnostics already on the base: only new ones will fail an attempt"), "{said}");
    assert!(said.contains("in a throwaway worktree"), "{said}");
    let text = std::fs::read_to_string(r.join("retry-run.toml")).expect("written");
    assert_eq!(runs(&text), ["pytest: python3 -m pytest", "ruff: ruff check --output-format=concise ."], "{text}");
    only_the_config_is_new(&env, &r);
    // --no-run proposes the same, untried, and says so.
    let out = env.run(&r, &["init", "--force", "--no-run"]);
    out.assert_code(0);
    assert!(out.stdout.contains("--no-run") && !out.stdout.contains("passed"), "{}", out.stdout);
    let again = std::fs::read_to_string(r.join("retry-run.toml")).expect("written");
    assert_eq!(runs(&again), runs(&text));
}

#[test]
fn a_src_layout_passes_over_a_venv_without_pytest_and_imports_from_src() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let r = env
        .repo("srclayout")
        .file(".gitignore", ".venv/\n")
        .file("src/shop/__init__.py", "def total(xs):\n    return sum(xs)\n")
        .file("tests/test_shop.py", "from shop import total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n")
        .file("pyproject.toml", "[project]\nname = \"shop\"\n")
        // The project's own interpreter, without pytest (no site-packages).
        .executable(".venv/bin/python", "#!/bin/sh\nexec python3 -S \"$@\"\n")
        .commit();
    let out = env.run(&r, &["init"]);
    out.assert_code(0);
    let said = &out.stdout;
    let venv = r.join(".venv/bin/python");
    assert!(
        said.contains(&format!("passed over {} (the checkout's .venv)", venv.display()))
            && said.contains("No module named"),
        "{said}"
    );
    assert!(said.contains("imports from src/"), "{said}");
    // The tests import `shop` from src/ without it being installed.
    assert!(said.contains("pytest: 1 passed ("), "{said}");
    let text = std::fs::read_to_string(r.join("retry-run.toml")).expect("written");
    assert_eq!(runs(&text), ["pytest: python3 -m pytest"], "{text}");
    assert!(text.contains("\"src/**\", \"tests/**\""), "{text}");
    only_the_config_is_new(&env, &r);
}

#[test]
fn flake8_configured_in_tox_ini_runs_and_a_tool_that_cannot_start_is_left_out() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let r = env
        .repo("toxproject")
        .file("setup.py", "from setuptools import setup\n\nsetup(name=\"calc\")\n")
        .file("calc/__init__.py", "import os\n\n\ndef add(a, b):\n    return a + b\n")
        .file("tests/test_calc.py", "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n")
        .file("tox.ini", "[tox]\nenvlist = py3\n\n[flake8]\nmax-line-length = 100\nexclude = .git,__pycache__\n")
        // mypy is configured but not installed.
        .file("setup.cfg", "[metadata]\nname = calc\n\n[mypy]\nstrict = True\n")
        .commit();
    let out = env.run(&r, &["init"]);
    out.assert_code(0);
    let said = &out.stdout;
    assert!(said.contains("pytest: 1 passed ("), "{said}");
    assert!(
        said.contains("flake8: 1 diagnostic already on the base: only new ones will fail an attempt")
            && said.contains("flake8 is configured in tox.ini"),
        "{said}"
    );
    assert!(
        said.contains("mypy: left out, `python3 -m mypy .` cannot start here") && said.contains("No module named mypy"),
        "{said}"
    );
    let text = std::fs::read_to_string(r.join("retry-run.toml")).expect("written");
    assert_eq!(runs(&text), ["pytest: python3 -m pytest", "flake8: python3 -m flake8"], "{text}");
    only_the_config_is_new(&env, &r);
}
