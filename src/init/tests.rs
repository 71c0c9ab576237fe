//! The proposal's unit tests: detected facts in, the checks, the lines
//! saying why and the config text out.

use super::detect::Venv;
use super::judge::{BaseSays, judge, thousands};
use super::python::{Python, interpreters, probe_command};
use super::*;
use crate::project::Layout;

fn facts(root: &[&str]) -> Facts {
    Facts {
        layout: Layout { root: root.iter().map(|s| s.to_string()).collect(), ..Layout::default() },
        on_path: vec!["python3".into()],
        ..Facts::default()
    }
}

fn with_file(mut f: Facts, name: &str, text: &str) -> Facts {
    f.layout.files.insert(name.into(), text.into());
    f
}

#[test]
fn a_jest_project_gets_worktrees_beside_the_checkout() {
    let pkg = r#"{"scripts": {"test": "jest --ci"}, "devDependencies": {"jest": "30"}}"#;
    let mut f = with_file(facts(&["package.json"]), "package.json", pkg);
    f.root = "/work/shop".into();
    let (text, why) = unrun(&f);
    assert!(text.contains("[worktree]\n# jest skips every file under a path that holds /.git/"), "{text}");
    assert!(text.contains("root = \"../shop.retry-run-worktrees\""), "{text}");
    assert!(why.iter().any(|w| w.starts_with("worktrees: beside the checkout")), "{why:?}");
    crate::config::Config::parse(&text, std::path::Path::new("retry-run.toml")).expect("parses");
    // A project without jest keeps the default.
    let vitest = with_file(facts(&["package.json"]), "package.json", r#"{"scripts": {"test": "vitest run"}}"#);
    assert!(!unrun(&vitest).0.contains("[worktree]"));
}

/// The whole pipeline with nothing run (`--no-run`).
fn unrun(f: &Facts) -> (String, Vec<String>) {
    let python = Python { chosen: interpreters(f).into_iter().next(), passed_over: Vec::new(), checked: false };
    let (cands, notes) = candidates(f, &python);
    let tried: Vec<(Candidate, Option<TrialRan>)> = cands.into_iter().map(|c| (c, None)).collect();
    propose(f, &python, &notes, &tried)
}

fn parse(text: &str) -> crate::config::Config {
    crate::config::Config::parse(text, std::path::Path::new("retry-run.toml")).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

#[test]
fn each_project_type_gets_its_checks_and_the_file_parses() {
    let mut py = with_file(facts(&["pyproject.toml", "tests"]), "pyproject.toml", "[tool.ruff]\n");
    py.on_path.push("ruff".into());
    py.layout.packages = vec!["shop".into()];
    let node = with_file(
        facts(&["package.json", "src", "yarn.lock"]),
        "package.json",
        r#"{"scripts": {"test": "jest", "lint": "eslint ."}}"#,
    );
    let cases: &[(Facts, &[&str])] = &[
        (py.clone(), &["pytest", "ruff"]),
        (facts(&["Cargo.toml", "src", "tests"]), &["clippy", "cargo-test"]),
        (node, &["yarn-lint", "yarn-test"]),
        (facts(&["go.mod", "cmd", "internal"]), &["go-vet", "go-test"]),
        (facts(&["README.md"]), &[]),
    ];
    for (f, want) in cases {
        let (text, why) = unrun(f);
        let c = parse(&text);
        let names: Vec<&str> = c.checks.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, *want, "{text}");
        assert!(why.last().is_some_and(|w| w.contains("docs/config.md")), "{why:?}");
        assert!(text.starts_with("# retry-run.toml") && text.contains("docs/config.md") && !text.contains("README"));
    }
    let (text, why) = unrun(&py);
    assert_eq!(parse(&text).scope.allow, ["tests/**", "shop/**"]);
    assert!(text.contains("run = \"python3 -m pytest\""), "{text}");
    assert!(why.iter().any(|w| w.contains("imports from the root") && w.contains("tests in tests")), "{why:?}");
    assert!(why.iter().any(|w| w.contains("not checked (--no-run)")), "{why:?}");
}

#[test]
fn the_project_s_own_interpreter_comes_first() {
    let mut f = facts(&["pyproject.toml", "uv.lock", "poetry.lock"]);
    f.on_path.extend(["uv".to_string(), "hatch".to_string()]);
    f.venvs = vec![Venv {
        name: ".venv".into(),
        bin: "/p q/.venv/bin".into(),
        programs: vec!["python".into(), "flake8".into()],
    }];
    let runs: Vec<String> = interpreters(&f).into_iter().map(|i| i.run).collect();
    // poetry is not on PATH, hatch is not configured.
    assert_eq!(runs, ["'/p q/.venv/bin/python'", "uv run python", "python3"]);
    assert_eq!(probe_command(&interpreters(&f)[1]), "uv run python -c 'import pytest'");
    assert!(interpreters(&facts(&["go.mod"])).is_empty());
    let (_, notes) = candidates(&f, &Python::default());
    assert_eq!(notes, ["poetry.lock is here but poetry is not on PATH: `poetry run python` is not tried"]);
}

#[test]
fn lint_tools_need_both_a_config_and_a_way_to_run() {
    let tox = "[tox]\nenvlist = py3\n[flake8]\nmax-line-length = 99\n";
    let mut f = with_file(facts(&["setup.py", "tox.ini"]), "tox.ini", tox);
    let python = Python { chosen: interpreters(&f).into_iter().next(), ..Python::default() };
    let (c, notes) = candidates(&f, &python);
    assert_eq!(c.iter().map(|c| c.run.as_str()).collect::<Vec<_>>(), ["python3 -m pytest", "python3 -m flake8"]);
    assert!(c[1].why.contains("tox.ini"), "{:?}", c[1]);
    assert!(notes.is_empty());
    f.venvs =
        vec![Venv { name: "venv".into(), bin: "/p/venv/bin".into(), programs: vec!["flake8".into(), "ruff".into()] }];
    let (c, _) = candidates(&f, &python);
    assert_eq!(c[1].run, "/p/venv/bin/ruff check --no-fix --output-format=concise");
    assert_eq!(c[2].run, "/p/venv/bin/flake8");
    // Configured but nowhere to be found; installed but not configured.
    let f = with_file(facts(&["pyproject.toml"]), "pyproject.toml", "[tool.ruff]\n");
    let (c, notes) = candidates(&f, &Python::default());
    assert!(c.is_empty() && notes[0].contains("configured in pyproject.toml but not installed"), "{notes:?}");
    let mut f = facts(&["pyproject.toml"]);
    f.on_path.push("ruff".into());
    let (c, notes) = candidates(&f, &Python::default());
    assert!(c.is_empty() && notes[0].contains("does not configure it"), "{notes:?}");
}

fn cand(name: &str, kind: &'static str) -> Candidate {
    Candidate { name: name.into(), run: format!("{name} run"), kind, why: "because".into(), network: Vec::new() }
}

fn ran(code: i32, output: &str) -> TrialRan {
    TrialRan { exit_code: Some(code), timed_out: false, output: output.into() }
}

#[test]
fn a_run_on_the_base_tells_totals_failures_diagnostics_or_that_it_cannot_start() {
    let pytest = cand("pytest", "test");
    let out = "..F\n=== short test summary info ===\nFAILED tests/test_x.py::test_y - assert 1 == 2\n1 failed, 1204 passed in 3.2s\n";
    assert_eq!(
        judge(&pytest, &ran(1, out)),
        BaseSays::Keep("pytest: 1,204 passed, 1 failing: tests/test_x.py::test_y".into())
    );
    assert_eq!(judge(&pytest, &ran(0, "3 passed in 0.1s\n")), BaseSays::Keep("pytest: 3 passed".into()));
    assert!(matches!(judge(&pytest, &ran(5, "no tests ran in 0.01s\n")), BaseSays::Keep(l) if l.contains("no tests")));
    let missing = ran(1, "/usr/bin/python3: No module named pytest\n");
    assert!(
        matches!(judge(&pytest, &missing), BaseSays::Leave(l) if l.contains("No module named pytest") && l.contains("`pytest run`"))
    );
    assert!(matches!(judge(&pytest, &ran(127, "sh: 1: pytest: not found\n")), BaseSays::Leave(_)));
    // A test failing with "No such file" is still a test run.
    let file = "FAILED tests/t.py::test_open - FileNotFoundError: No such file or directory\n1 failed in 0.1s\n";
    assert!(matches!(judge(&pytest, &ran(1, file)), BaseSays::Keep(l) if l.contains("0 passed, 1 failing")));
    let ruff = cand("ruff", "lint");
    let diags =
        "shop/a.py:1:1: F401 [*] `os` imported but unused\nshop/b.py:2:5: E711 Comparison to `None`\nFound 2 errors.\n";
    assert_eq!(
        judge(&ruff, &ran(1, diags)),
        BaseSays::Keep("ruff: 2 diagnostics already on the base: only new ones will fail an attempt".into())
    );
    assert_eq!(judge(&ruff, &ran(0, "All checks passed!\n")), BaseSays::Keep("ruff: no diagnostic on the base".into()));
    let timed = TrialRan { timed_out: true, ..TrialRan::default() };
    assert!(matches!(judge(&ruff, &timed), BaseSays::Keep(l) if l.contains("did not finish within 5 minutes")));
}

#[test]
fn a_check_that_cannot_start_is_left_out_and_said() {
    let f = with_file(facts(&["setup.cfg"]), "setup.cfg", "[flake8]\n");
    let python = Python { chosen: interpreters(&f).into_iter().next(), passed_over: Vec::new(), checked: true };
    let (cands, notes) = candidates(&f, &python);
    let tried = vec![
        (cands[0].clone(), Some(ran(0, "2 passed in 0.1s\n"))),
        (cands[1].clone(), Some(ran(1, "/usr/bin/python3: No module named flake8\n"))),
    ];
    let (text, why) = propose(&f, &python, &notes, &tried);
    let names: Vec<String> = parse(&text).checks.into_iter().map(|c| c.name).collect();
    assert_eq!(names, ["pytest"]);
    assert!(why.iter().any(|w| w.starts_with("flake8: left out") && w.contains("No module named flake8")), "{why:?}");
    assert!(why.iter().any(|w| w == "pytest: 2 passed (with python3, python3 on PATH)"), "{why:?}");
    assert!(why.iter().any(|w| w.contains("which can import pytest")), "{why:?}");
}

#[test]
fn the_first_agent_on_path_is_the_preset() {
    let (text, why) = unrun(&Facts { agents: vec!["aider".into(), "gemini".into()], ..facts(&["go.mod"]) });
    let c = parse(&text);
    assert_eq!(c.agent.preset.map(|p| p.0).as_deref(), Some("aider"));
    assert!(why.iter().any(|w| w.contains("aider, gemini")));
    let (text, _) = unrun(&facts(&[]));
    assert!(text.contains("# preset = "));
}

fn runs(f: &Facts) -> Vec<String> {
    let python = Python { chosen: interpreters(f).into_iter().next(), ..Python::default() };
    candidates(f, &python).0.into_iter().map(|c| c.run).collect()
}

#[test]
fn no_proposed_check_rewrites_the_worktree() {
    let toml = "[tool.ruff]\nfix = true\n[tool.ruff.format]\nquote-style = \"single\"\n[tool.black]\n";
    let mut f = with_file(facts(&["pyproject.toml"]), "pyproject.toml", toml);
    f.on_path.push("ruff".into());
    assert_eq!(
        runs(&f),
        [
            "python3 -m pytest",
            "ruff check --no-fix --output-format=concise",
            "ruff format --check",
            "python3 -m black --check ."
        ]
    );
    let node = |script: &str| {
        let pkg = format!(r#"{{"scripts": {{"lint": {script:?}}}}}"#);
        let f = with_file(facts(&["package.json"]), "package.json", &pkg);
        let python = Python::default();
        let (c, notes) = candidates(&f, &python);
        (c.into_iter().map(|c| c.run).collect::<Vec<_>>(), notes)
    };
    assert_eq!(node("eslint --fix src").0, ["npm exec -- eslint src"]);
    assert_eq!(node("prettier --write .").0, ["npm exec -- prettier --check ."]);
    assert_eq!(node("eslint src").0, ["npm run --silent lint"]);
    // No `lint` script: the linters the project installs and configures.
    let pkg = r#"{"scripts": {"test": "vitest"}, "devDependencies": {"eslint": "^10", "@biomejs/biome": "^2", "vitest": "^4"}}"#;
    for (lock, runner, test) in [
        ("package-lock.json", "npm exec --", "npm run --silent test -- --reporter=verbose"),
        ("pnpm-lock.yaml", "pnpm exec", "pnpm run --silent test --reporter=verbose"),
        ("bun.lock", "bun x", "bun run --silent test --reporter=verbose"),
    ] {
        let f =
            with_file(facts(&["package.json", lock, "eslint.config.mjs", "biome.json", "src"]), "package.json", pkg);
        assert_eq!(
            runs(&f),
            [test.to_string(), format!("{runner} eslint ."), format!("{runner} biome lint .")],
            "{lock}"
        );
    }
    let f = with_file(
        facts(&["package.json", ".oxlintrc.json"]),
        "package.json",
        r#"{"devDependencies": {"oxlint": "1"}}"#,
    );
    assert_eq!(runs(&f), ["npm exec -- oxlint"]);
    // Configured but not installed: nothing to run.
    let f = with_file(facts(&["package.json", "biome.json"]), "package.json", "{}");
    assert!(runs(&f).is_empty(), "{:?}", runs(&f));
    let (c, notes) = node("eslint --fix . && prettier --write .");
    assert!(c.is_empty() && notes[0].contains("`--fix`, which rewrites the worktree"), "{notes:?}");
    let f = with_file(facts(&["Cargo.toml", "rustfmt.toml"]), "Cargo.toml", "[package]\nname = \"x\"\n");
    assert!(runs(&f).contains(&"cargo fmt --check".to_string()), "{:?}", runs(&f));
}

#[test]
fn type_checkers_check_what_their_config_names() {
    let cases = [
        ("pyproject.toml", "[tool.mypy]\nfiles = [\"src\"]\n", "python3 -m mypy"),
        ("pyproject.toml", "[tool.mypy]\nstrict = true\n", "python3 -m mypy ."),
        ("mypy.ini", "[mypy]\npackages = shop\n", "python3 -m mypy"),
        ("setup.cfg", "[mypy]\nfiles = shop,\n  tools\n", "python3 -m mypy"),
        ("setup.cfg", "[mypy]\nstrict = True\n", "python3 -m mypy ."),
    ];
    for (file, text, want) in cases {
        let f = with_file(facts(&[file, "setup.py"]), file, text);
        assert_eq!(runs(&f).last().map(String::as_str), Some(want), "{file}: {text}");
    }
    let mut f = with_file(facts(&["pyrightconfig.json"]), "pyrightconfig.json", "{\"include\": [\"src\"]}");
    f.layout.root.push("setup.py".into());
    f.on_path.push("pyright".into());
    assert_eq!(runs(&f).last().map(String::as_str), Some("pyright"));
}

#[test]
fn cargo_checks_run_offline_or_reach_only_the_registries_they_need() {
    let manifest = |deps: &str| format!("[package]\nname = \"x\"\nversion = \"0.1.0\"\n{deps}");
    let cargo = |root: &[&str], files: &[(&str, &str)]| {
        let mut f = facts(root);
        for (k, v) in files {
            f.layout.files.insert(k.to_string(), v.to_string());
        }
        let (c, _) = candidates(&f, &Python::default());
        c.into_iter().map(|c| (c.run, c.network)).collect::<Vec<_>>()
    };
    let free = cargo(&["Cargo.toml"], &[("Cargo.toml", &manifest("[dependencies]\nlocal = { path = \"local\" }\n"))]);
    assert_eq!(free[1], ("cargo test --offline --no-fail-fast".to_string(), Vec::new()));
    assert_eq!(free[0].0, "cargo clippy --all-targets --quiet --offline -- -D warnings");
    let deps = manifest(
        "[dev-dependencies]\nitoa = \"1\"\n[target.'cfg(unix)'.dependencies]\nr = { git = \"https://github.com/o/r\" }\n",
    );
    let fetched = cargo(&["Cargo.toml"], &[("Cargo.toml", &deps)]);
    let hosts = vec!["index.crates.io".to_string(), "static.crates.io".to_string(), "github.com".to_string()];
    assert_eq!(fetched[1], ("cargo test --no-fail-fast".to_string(), hosts));
    let vendored = "[source.crates-io]\nreplace-with = \"vendored\"\n[source.vendored]\ndirectory = \"vendor\"\n";
    let v = cargo(&["Cargo.toml", "Cargo.lock", ".cargo"], &[("Cargo.toml", &deps), (".cargo/config.toml", vendored)]);
    assert_eq!(v[1], ("cargo test --offline --no-fail-fast".to_string(), Vec::new()));
    // Vendored, but without a lock file: fetched.
    let v = cargo(&["Cargo.toml", ".cargo"], &[("Cargo.toml", &deps), (".cargo/config.toml", vendored)]);
    assert!(!v[1].1.is_empty(), "{v:?}");
}

#[test]
fn a_check_that_fails_for_the_environment_is_written_commented_out_with_why() {
    let mut f =
        with_file(facts(&["Cargo.toml"]), "Cargo.toml", "[package]\nname = \"x\"\n[dependencies]\nitoa = \"1\"\n");
    f.root = "/w/x".into();
    let python = Python::default();
    let (cands, notes) = candidates(&f, &python);
    let refused = "    Updating crates.io index\nerror: failed to get `itoa` as a dependency of package `x v0.1.0`\n\nCaused by:\n  [56] Failure when receiving data from the peer (CONNECT tunnel failed, response 403)\n";
    let readonly = "error: failed to open `/h/.cargo/registry/cache/itoa-1.0.crate`\n\nCaused by:\n  Read-only file system (os error 30)\n";
    let tried = vec![(cands[0].clone(), Some(ran(101, refused))), (cands[1].clone(), Some(ran(101, readonly)))];
    let (text, why) = propose(&f, &python, &notes, &tried);
    assert!(parse(&text).checks.is_empty(), "{text}");
    assert!(text.contains("# [[check]]\n# name = \"clippy\"\n"), "{text}");
    assert!(text.contains("# network = [\"index.crates.io\", \"static.crates.io\"]"), "{text}");
    assert!(
        why.iter().any(|w| w.starts_with("clippy: left out")
            && w.contains("CONNECT tunnel failed")
            && w.contains("`network`")),
        "{why:?}"
    );
    assert!(why.iter().any(|w| w.starts_with("cargo-test: left out") && w.contains("sandbox.writable")), "{why:?}");
}

#[test]
fn a_check_left_out_names_the_data_path_the_sandbox_hides_but_not_a_program() {
    let mut f = with_file(facts(&["setup.py"]), "setup.py", "");
    f.root = "/tmp/repo".into();
    let python = Python::default();
    let mut data = cand("data", "test");
    data.run = "/bin/sh -c true /tmp/no-such-data/cases.json".into();
    let tried = vec![(data, Some(ran(1, "/tmp/no-such-data/cases.json: No such file or directory\n")))];
    let (_, why) = propose(&f, &python, &[], &tried);
    let hidden: Vec<&String> = why.iter().filter(|w| w.contains("which the sandbox hides")).collect();
    assert_eq!(hidden.len(), 1, "{why:?}");
    assert!(hidden[0].contains("/tmp/no-such-data/cases.json lies under /tmp"), "{why:?}");
    assert!(!hidden[0].contains("/bin/sh lies"), "{why:?}");
}

#[test]
fn init_counts_diagnostics_as_the_run_s_gate_does() {
    let mypy = cand("mypy", "lint");
    let out = "shop/a.py:3: error: Incompatible types in assignment  [assignment]\nshop/a.py:3: note: See https://mypy.rtfd.io\nshop/a.py:9: note: Revealed type is \"int\"\nFound 1 error in 1 file (checked 2 source files)\n";
    assert_eq!(
        judge(&mypy, &ran(1, out)),
        BaseSays::Keep("mypy: 1 diagnostic already on the base: only new ones will fail an attempt".into())
    );
}

#[test]
fn numbers_get_thousands_separators() {
    assert_eq!([thousands(0), thousands(999), thousands(1204), thousands(1234567)], ["0", "999", "1,204", "1,234,567"]);
}

#[test]
fn force_names_what_the_user_added_and_init_would_not_write() {
    let table = |t: &str| t.parse::<toml::Table>().expect("toml");
    let new = table("max_attempts = 3\n[agent]\ntimeout = \"20m\"\n[[check]]\nname = \"pytest\"\nrun = \"pytest\"\n");
    let old = table(
        "max_attempts = 5\n[agent]\ntimeout = \"20m\"\nargs = [\"--model\", \"m\"]\n[worktree]\nshare = [\"node_modules\"]\n[[check]]\nname = \"pytest\"\nrun = \"pytest -x\"\ntimeout = \"1m\"\n[[check]]\nname = \"mine\"\nrun = \"true\"\n",
    );
    assert_eq!(
        crate::init::dropped(&old, &new),
        ["`agent.args`", "check `pytest`.timeout", "check `mine`", "`worktree.share`"]
    );
    assert!(crate::init::dropped(&new, &new).is_empty(), "init's own file is replaced freely");
}
