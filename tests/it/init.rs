//! `retry-run init` on real repositories: it finds the project's own
//! interpreter and tools, runs each proposed check once on the base in a
//! throwaway worktree, says what it found, leaves out what cannot start,
//! and what it writes is what `run` takes.

use crate::support::{FakeAgent, Run, TestEnv};

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
    // What the user added is never dropped by --force: it refuses, naming it.
    let written = std::fs::read_to_string(r.join("retry-run.toml")).expect("written");
    let mine = format!("{written}\n[[check]]\nname = \"mine\"\nrun = \"true\"\n");
    let mine = mine.replacen("[scope]", "[worktree]\nshare = [\"node_modules\"]\n\n[scope]", 1);
    std::fs::write(r.join("retry-run.toml"), &mine).expect("edit");
    let refused = env.run(&r, &["init", "--force", "--no-run"]);
    refused.assert_code(2);
    assert!(
        refused.stderr.contains("`worktree.share`") && refused.stderr.contains("check `mine`"),
        "{}",
        refused.stderr
    );
    assert_eq!(std::fs::read_to_string(r.join("retry-run.toml")).expect("kept"), mine, "the file is kept as it was");
    std::fs::write(r.join("retry-run.toml"), &written).expect("put back");
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
    assert_eq!(
        runs(&text),
        ["pytest: python3 -m pytest", "ruff: ruff check --no-fix --output-format=concise"],
        "{text}"
    );
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

#[test]
fn ruff_configured_to_fix_is_proposed_with_no_fix_and_counts_the_base_s_error() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let r = env
        .repo("fixes")
        .file("shop/__init__.py", "import os\n\n\ndef total(xs):\n    return sum(xs)\n")
        .file("tests/test_shop.py", "from shop import total\n\n\ndef test_total():\n    assert total([1, 2]) == 3\n")
        .file(
            "pyproject.toml",
            "[project]\nname = \"shop\"\n\n[tool.ruff]\nfix = true\n\n[tool.ruff.lint]\nselect = [\"F\"]\n",
        )
        .commit();
    let out = env.run(&r, &["init"]);
    out.assert_code(0);
    let said = &out.stdout;
    // With `fix = true`, a bare `ruff check` removes the import and reports nothing.
    assert!(said.contains("ruff: 1 diagnostic already on the base"), "{said}");
    let text = std::fs::read_to_string(r.join("retry-run.toml")).expect("written");
    assert_eq!(
        runs(&text),
        ["pytest: python3 -m pytest", "ruff: ruff check --no-fix --output-format=concise"],
        "{text}"
    );
    only_the_config_is_new(&env, &r);
}

#[test]
fn mypy_with_a_files_setting_runs_as_the_project_configures_it() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let mypy = match crate::support::tools::mypy() {
        Ok(bin) => bin.join("mypy"),
        Err(why) => return crate::support::tools::skipped(&why),
    };
    let r = env
        .repo("typed")
        .file(".gitignore", ".venv/\n")
        .file("shop/__init__.py", "def total(xs: list[int]) -> int:\n    return sum(xs)\n")
        // Outside `files`: mypy . would report it.
        .file("scripts/release.py", "count: int = \"three\"\n")
        .file("pyproject.toml", "[project]\nname = \"shop\"\n\n[tool.mypy]\nfiles = [\"shop\"]\n")
        .commit();
    std::fs::create_dir_all(r.join(".venv/bin")).expect("mkdir");
    std::os::unix::fs::symlink(&mypy, r.join(".venv/bin/mypy")).expect("symlink");
    let out = env.run(&r, &["init"]);
    out.assert_code(0);
    let said = &out.stdout;
    assert!(said.contains("mypy: no diagnostic on the base"), "{said}");
    let text = std::fs::read_to_string(r.join("retry-run.toml")).expect("written");
    let venv_mypy = r.join(".venv/bin/mypy");
    assert!(runs(&text).contains(&format!("mypy: {}", venv_mypy.display())), "{text}");
}

/// A command with the user's rustup and cargo (the test's HOME is its own).
fn with_rust(cmd: &mut std::process::Command) -> &mut std::process::Command {
    let home = std::path::PathBuf::from(std::env::var_os("HOME").expect("HOME"));
    let rustup = std::env::var_os("RUSTUP_HOME").map_or_else(|| home.join(".rustup"), Into::into);
    cmd.env("RUSTUP_HOME", rustup)
}

#[test]
fn a_dependency_free_crate_gets_cargo_test_that_names_every_test_offline() {
    let env = TestEnv::new();
    let r = env
        .repo("crate")
        .file(".gitignore", "target/\nCargo.lock\n")
        .file("Cargo.toml", "[package]\nname = \"sums\"\nversion = \"0.1.0\"\nedition = \"2021\"\n")
        .file(
            "src/lib.rs",
            "/// ```\n/// assert_eq!(sums::total(&[1, 2]), 3);\n/// ```\npub fn total(xs: &[i32]) -> i32 {\n    xs.iter().sum()\n}\n\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() {\n        assert_eq!(super::total(&[2]), 2);\n    }\n\n    #[test]\n    fn fails() {\n        assert_eq!(super::total(&[1]), 2);\n    }\n}\n",
        )
        .file("tests/more.rs", "#[test]\nfn empty() {\n    assert_eq!(sums::total(&[]), 0);\n}\n\n#[test]\nfn one() {\n    assert_eq!(sums::total(&[4]), 4);\n}\n")
        .commit();
    let out = Run::of(with_rust(&mut env.retry_run(&r)).arg("init"));
    out.assert_code(0);
    let said = &out.stdout;
    // The runner's own summaries: 1 passed 1 failed (lib), 2 passed (tests/more.rs), 1 passed (doc-tests).
    assert!(said.contains("cargo-test: 4 passed, 1 failing: tests::fails"), "{said}");
    assert!(said.contains("no dependencies"), "{said}");
    let text = std::fs::read_to_string(r.join("retry-run.toml")).expect("written");
    let runs = runs(&text);
    assert!(runs.contains(&"cargo-test: cargo test --offline --no-fail-fast".to_string()), "{text}");
    assert!(runs.iter().all(|r| !r.starts_with("cargo-test") || !r.contains("-q")), "{text}");
}

#[test]
fn a_crate_that_needs_a_registry_it_cannot_reach_is_commented_with_the_reason() {
    let env = TestEnv::new();
    let r = env
        .repo("withdep")
        .file(".gitignore", "target/\n")
        .file(
            "Cargo.toml",
            "[package]\nname = \"withdep\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nitoa = \"1\"\n",
        )
        .file("src/lib.rs", "pub fn f() -> usize {\n    itoa::Buffer::new().format(3).len()\n}\n")
        .commit();
    // Its own empty cargo home: nothing cached, and read-only in the sandbox.
    let cargo_home = env.path("cargo-home");
    std::fs::create_dir_all(&cargo_home).expect("mkdir");
    let out = Run::of(with_rust(&mut env.retry_run(&r)).env("CARGO_HOME", &cargo_home).arg("init"));
    out.assert_code(0);
    let said = &out.stdout;
    let text = std::fs::read_to_string(r.join("retry-run.toml")).expect("written");
    assert!(runs(&text).iter().all(|r| !r.starts_with("cargo-test") && !r.starts_with("clippy")), "{text}");
    assert!(said.contains("cargo-test: left out") && said.contains("crates.io"), "{said}");
    assert!(
        text.contains("# [[check]]\n# name = \"cargo-test\"")
            && text.contains("# network = [\"index.crates.io\", \"static.crates.io\"]"),
        "{text}"
    );
}

/// A virtualenv under `/tmp`, activated (its `bin` first on `PATH`): the
/// sandbox's private `/tmp` keeps it visible, read-only, so `init`'s trial
/// of pytest on the base runs with its packages and nothing is named as
/// hidden.
#[test]
fn a_virtualenv_under_tmp_on_path_works_in_init_s_confined_trial() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let tmp = tempfile::Builder::new().prefix("retry-run-it-venv-").tempdir_in("/tmp").expect("a directory in /tmp");
    let venv = tmp.path().join("venv");
    if let Err(why) = crate::support::tools::seeing_python_tools(&venv) {
        return crate::support::tools::skipped(&why);
    }
    let r = env
        .repo("tmpvenv")
        .file("shop/__init__.py", "")
        .file("tests/test_x.py", "def test_x():\n    assert True\n")
        .file("pyproject.toml", "[project]\nname = \"shop\"\n")
        .commit();
    // Only the virtualenv's python: the tools' own directory is not on PATH.
    let path = format!("{}:/usr/bin:/bin", venv.join("bin").display());
    let out = Run::of(env.retry_run(&r).env("PATH", path).env("VIRTUAL_ENV", &venv).arg("init"));
    out.assert_code(0);
    let said = &out.stdout;
    assert!(!said.contains("which the sandbox hides"), "{said}");
    assert!(said.contains("pytest: 1 passed"), "{said}");
}

/// An activated virtualenv under `/tmp` (`python -m pytest` found through
/// `PATH`), and a check naming a python under `/tmp` by its path: both run
/// confined with their packages, and the task succeeds at its first
/// attempt (before, each attempt was a CHECK_FAILURE: "No module named
/// pytest").
#[test]
fn an_activated_virtualenv_under_tmp_runs_the_checks_with_its_packages() {
    let Some(env) = TestEnv::with_python_tools() else { return };
    let tmp = tempfile::Builder::new().prefix("retry-run-it-venv-").tempdir_in("/tmp").expect("a directory in /tmp");
    let venv = tmp.path().join("venv");
    if let Err(why) = crate::support::tools::seeing_python_tools(&venv) {
        return crate::support::tools::skipped(&why);
    }
    let python = venv.join("bin/python");
    let config = format!(
        "max_attempts = 2\n\n[[check]]\nname = \"pytest\"\nrun = \"python -m pytest -p no:cacheprovider -q\"\nkind = \"test\"\n\n[[check]]\nname = \"by-path\"\nrun = \"{} -m pytest -p no:cacheprovider -q\"\nkind = \"test\"\n",
        python.display()
    );
    let r = env
        .repo("tmpcheck")
        .file("shop/__init__.py", "")
        .file("tests/test_x.py", "def test_x():\n    assert True\n")
        .file("pyproject.toml", "[project]\nname = \"shop\"\n")
        .file("retry-run.toml", &config)
        .commit();
    let agent = env.agent(FakeAgent::new().append("shop/__init__.py", "# x\n"));
    let path = format!("{}:{}", venv.join("bin").display(), env.path_var().to_string_lossy());
    let run = Run::of(
        env.retry_run(&r).env("PATH", path).env("VIRTUAL_ENV", &venv).args(agent.after(&["run", "--task", "Touch"])),
    );
    run.assert_code(0);
    assert!(!run.stderr.contains("which the sandbox hides"), "{}", run.stderr);
    assert_eq!(crate::support::record::outcomes(&r, "touch"), ["SUCCESS"], "{}", run.stdout);
}

/// A data file under `/tmp` that a check names inside its command line is
/// not seen by the confined check: `run` says so before the first attempt.
#[test]
fn run_names_a_data_path_under_tmp_a_check_reads() {
    let env = TestEnv::new();
    let tmp = tempfile::Builder::new().prefix("retry-run-it-data-").tempdir_in("/tmp").expect("a directory in /tmp");
    let data = tmp.path().join("cases.txt");
    std::fs::write(&data, "1\n").expect("write");
    let config = format!(
        "max_attempts = 1\n\n[[check]]\nname = \"cases\"\nrun = \"grep -q 1 {}\"\nkind = \"test\"\n",
        data.display()
    );
    let r = env.repo("tmpdata").file("a.txt", "a\n").file("retry-run.toml", &config).commit();
    let agent = env.agent(FakeAgent::new().append("a.txt", "b\n"));
    let run = env.run_agent(&r, &["run", "--task", "Touch"], &agent);
    assert!(
        run.stderr.contains(&format!("check cases: {} lies under /tmp, which the sandbox hides", data.display())),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
}
