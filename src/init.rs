//! `retry-run init`: a `retry-run.toml` proposed from what the repository
//! holds. Pure: the facts are gathered by `cli/init.rs`, and what the
//! proposed commands did when run once on the base is passed in; the
//! choice of interpreter, checks, scope and agent preset, and the reason
//! for each, are made here.
//!
//! The steps, each pure, with the edge's runs between them:
//! 1. [`interpreters`]: the Python interpreters that may run the tests, the
//!    project's own first; the edge runs [`probe_command`] with each until
//!    one imports pytest ([`Python`]).
//! 2. [`candidates`]: the checks to try, with that interpreter.
//! 3. [`judge`]: what one check's run on the base says (totals, failing
//!    tests, diagnostics already there), or that it cannot start.
//! 4. [`propose`]: the file and the lines saying why.

use std::fmt::Write;

use crate::project::{Layout, python_import_root};

/// Programs `init` looks for on `PATH`.
pub const PROGRAMS: &[&str] =
    &["python3", "python", "uv", "poetry", "hatch", "ruff", "flake8", "mypy", "npm", "pnpm", "yarn", "cargo", "go"];

/// Programs `init` looks for in a virtualenv's `bin`.
pub const VENV_PROGRAMS: &[&str] = &["python", "ruff", "flake8", "mypy"];

/// The virtualenv directories of a checkout, in the order they are tried.
pub const VENV_DIRS: &[&str] = &[".venv", "venv"];

/// The time each proposed command is given on the base, in seconds.
pub const TRIAL_SECS: u64 = 5 * 60;

/// What `init` looked at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    pub layout: Layout,
    /// Agent presets whose CLI is on `PATH`, in preset order.
    pub agents: Vec<String>,
    /// The [`PROGRAMS`] on `PATH`.
    pub on_path: Vec<String>,
    /// The checkout's virtualenvs ([`VENV_DIRS`]).
    pub venvs: Vec<Venv>,
}

impl Facts {
    fn on_path(&self, program: &str) -> bool {
        self.on_path.iter().any(|p| p == program)
    }

    /// The first virtualenv holding `program`, and that program's path.
    fn venv_program(&self, program: &str) -> Option<(&Venv, String)> {
        self.venvs
            .iter()
            .find(|v| v.programs.iter().any(|p| p == program))
            .map(|v| (v, shell_word(&format!("{}/{program}", v.bin))))
    }
}

/// A virtualenv of the checkout.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Venv {
    /// Its directory's name (`.venv`).
    pub name: String,
    /// Its `bin` directory, absolute: it is ignored, so not in the fresh
    /// worktree where checks run, and is named where it is.
    pub bin: String,
    /// The [`VENV_PROGRAMS`] in its `bin`.
    pub programs: Vec<String>,
}

/// A Python interpreter that may run the project's tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interpreter {
    /// The command that starts it (`/p/.venv/bin/python`, `uv run python`).
    pub run: String,
    /// Where it was found, in words.
    pub from: String,
}

/// The interpreters that may run the tests, in the order they are tried:
/// the checkout's virtualenvs, `uv run` (`uv.lock` and uv on `PATH`),
/// `poetry run` (`poetry.lock` and poetry on `PATH`), `hatch run` (hatch
/// configured and on `PATH`), then `python3` (or `python`) on `PATH`.
/// Empty for a project that is not Python's.
pub fn interpreters(f: &Facts) -> Vec<Interpreter> {
    let l = &f.layout;
    if !l.is_python() {
        return Vec::new();
    }
    let mut out: Vec<Interpreter> = f
        .venvs
        .iter()
        .filter(|v| v.programs.iter().any(|p| p == "python"))
        .map(|v| Interpreter {
            run: shell_word(&format!("{}/python", v.bin)),
            from: format!("the checkout's {}", v.name),
        })
        .collect();
    let managers = [
        ("uv", l.has("uv.lock"), "uv.lock"),
        ("poetry", l.has("poetry.lock"), "poetry.lock"),
        ("hatch", l.configures("hatch").is_some(), "hatch's config"),
    ];
    for (tool, used, sign) in managers {
        if used && f.on_path(tool) {
            out.push(Interpreter { run: format!("{tool} run python"), from: format!("{sign}, and {tool} is on PATH") });
        }
    }
    for py in ["python3", "python"] {
        if f.on_path(py) {
            out.push(Interpreter { run: py.into(), from: format!("{py} on PATH") });
            break;
        }
    }
    out
}

/// The command that says whether `i` can import pytest (exit 0).
pub fn probe_command(i: &Interpreter) -> String {
    format!("{} -c 'import pytest'", i.run)
}

/// The interpreter the tests run with.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Python {
    /// The first of [`interpreters`] that imports pytest (with `--no-run`,
    /// the first, unchecked).
    pub chosen: Option<Interpreter>,
    /// Those tried before it, each with why it was passed over (the first
    /// line of what it printed).
    pub passed_over: Vec<(Interpreter, String)>,
    /// Whether the interpreters were run; `false` with `--no-run`.
    pub checked: bool,
}

/// A check `init` may propose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub name: String,
    pub run: String,
    /// `test` or `lint`.
    pub kind: &'static str,
    /// Why it is proposed.
    pub why: String,
}

/// The checks to try on the base, and lines saying what was found without
/// a check (a tool configured but not installed).
pub fn candidates(f: &Facts, python: &Python) -> (Vec<Candidate>, Vec<String>) {
    let l = &f.layout;
    let mut out = Vec::new();
    let mut notes = Vec::new();
    let mut add = |name: &str, run: String, kind: &'static str, why: String| {
        out.push(Candidate { name: name.into(), run, kind, why });
    };
    if l.is_python() {
        let py = python.chosen.as_ref();
        if let Some(i) = py {
            add("pytest", format!("{} -m pytest", i.run), "test", format!("with {}, {}", i.run, i.from));
        }
        // The interpreter that runs a tool as a module: the tests', else the first found.
        let module_py = py.cloned().or_else(|| interpreters(f).into_iter().next());
        for (lock, tool) in [("uv.lock", "uv"), ("poetry.lock", "poetry")] {
            if l.has(lock) && !f.on_path(tool) {
                notes.push(format!("{lock} is here but {tool} is not on PATH: `{tool} run python` is not tried"));
            }
        }
        let ruff = l.configures("ruff");
        match (f.venv_program("ruff"), ruff, f.on_path("ruff")) {
            (Some((v, path)), _, _) => add(
                "ruff",
                format!("{path} check --output-format=concise ."),
                "lint",
                format!("ruff is in the checkout's {}{}", v.name, configured_in(ruff)),
            ),
            (None, Some(file), true) => add(
                "ruff",
                "ruff check --output-format=concise .".into(),
                "lint",
                format!("ruff is configured in {file} and on PATH"),
            ),
            (None, Some(file), false) => {
                notes.push(format!("ruff is configured in {file} but not installed (not on PATH nor in a virtualenv of the checkout): no ruff check"));
            }
            (None, None, true) => {
                notes.push("ruff is on PATH but this project does not configure it: no ruff check".into());
            }
            (None, None, false) => {}
        }
        for (tool, args) in [("flake8", ""), ("mypy", " .")] {
            let Some(file) = l.configures(tool) else { continue };
            let why = format!("{tool} is configured in {file}");
            if let Some((v, path)) = f.venv_program(tool) {
                add(tool, format!("{path}{args}"), "lint", format!("{why} and is in the checkout's {}", v.name));
            } else if let Some(i) = &module_py {
                add(tool, format!("{} -m {tool}{args}", i.run), "lint", format!("{why}: run with {}", i.run));
            } else if f.on_path(tool) {
                add(tool, format!("{tool}{args}"), "lint", format!("{why} and is on PATH"));
            } else {
                notes.push(format!("{why}, but no interpreter was found to run it: no {tool} check"));
            }
        }
    }
    if l.has("Cargo.toml") {
        let why = "Rust project (Cargo.toml)".to_string();
        add("clippy", "cargo clippy --all-targets --quiet -- -D warnings".into(), "lint", why.clone());
        add("cargo-test", "cargo test --quiet".into(), "test", why);
    }
    if let Some(runner) = l.node_runner() {
        let scripts = l.npm_scripts();
        for (script, kind) in [("lint", "lint"), ("test", "test")] {
            if scripts.iter().any(|s| s == script) {
                add(
                    &format!("{runner}-{script}"),
                    format!("{runner} run --silent {script}"),
                    kind,
                    format!("package.json has a `{script}` script, run with {runner} (its lock file)"),
                );
            }
        }
    }
    if l.has("go.mod") {
        let why = "Go module (go.mod)".to_string();
        add("go-vet", "go vet ./...".into(), "lint", why.clone());
        add("go-test", "go test -v ./...".into(), "test", why);
    }
    (out, notes)
}

fn configured_in(file: Option<&str>) -> String {
    file.map(|f| format!(", configured in {f}")).unwrap_or_default()
}

/// How a proposed command ended on the base.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ran {
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    /// Its output, paths relative to the worktree.
    pub output: String,
}

/// What one run on the base says about a check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// It runs: what it found, in a line.
    Keep(String),
    /// It cannot start: why, in a line.
    Leave(String),
}

/// Signs in an output that a command could not start.
const CANNOT_START: [&str; 5] =
    ["No module named", "No such file or directory", "command not found", ": not found", "Permission denied"];

/// What `ran` (the candidate `c` on the base) says: its tests' totals and
/// failing ids, or its diagnostics already on the base; or that it cannot
/// start (exit 126 or 127, or a failure printing only "No module named",
/// "No such file or directory", "not found", with no test or diagnostic
/// read).
pub fn judge(c: &Candidate, ran: &Ran) -> Found {
    let tests = crate::test_results::read(&ran.output);
    let diagnostics = crate::diagnostics::parse_auto(&ran.output);
    let first_sign = || {
        ran.output
            .lines()
            .find(|l| CANNOT_START.iter().any(|s| l.contains(s)))
            .map(|l| crate::text::clip(l.trim(), 200, "...").into_owned())
    };
    let name = &c.name;
    if ran.timed_out {
        return Found::Keep(format!(
            "{name}: did not finish within {} minutes on the base; raise its timeout if it needs longer",
            TRIAL_SECS / 60
        ));
    }
    let failed = ran.exit_code != Some(0);
    let nothing_read =
        tests.ran.is_none() && tests.passed.is_empty() && tests.failed.is_empty() && diagnostics.is_empty();
    if matches!(ran.exit_code, Some(126 | 127)) || (failed && nothing_read && first_sign().is_some()) {
        let why = first_sign().unwrap_or_else(|| format!("exit {}", ran.exit_code.unwrap_or(-1)));
        return Found::Leave(format!("{name}: left out, `{}` cannot start here: {why}", c.run));
    }
    if c.kind == "test" {
        if c.name == "pytest" && ran.exit_code == Some(5) {
            return Found::Keep(format!("{name}: collected no tests on the base"));
        }
        let failing = tests.failed.len() as u64;
        let passed = match tests.ran {
            Some(n) => n.saturating_sub(failing),
            None => tests.passed.len() as u64,
        };
        let mut line = format!("{name}: {} passed", thousands(passed));
        if failing > 0 {
            let shown: Vec<&str> = tests.failed.iter().take(3).map(String::as_str).collect();
            let more = if failing > 3 { format!(" and {} more", failing - 3) } else { String::new() };
            let _ = write!(line, ", {} failing: {}{more}", thousands(failing), shown.join(", "));
        } else if failed {
            let _ = write!(line, ", but it exits {} on the base", ran.exit_code.unwrap_or(-1));
        }
        return Found::Keep(line);
    }
    let n = diagnostics.len() as u64;
    Found::Keep(match (n, failed) {
        (0, false) => format!("{name}: no diagnostic on the base"),
        (0, true) => format!("{name}: exits {} on the base, with no diagnostic read", ran.exit_code.unwrap_or(-1)),
        (1, _) => format!("{name}: 1 diagnostic already on the base: only new ones will fail an attempt"),
        _ => format!("{name}: {} diagnostics already on the base: only new ones will fail an attempt", thousands(n)),
    })
}

/// `1204` as `1,204`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `word` as one shell word: single-quoted when it holds anything but
/// letters, digits and `/._-+`.
fn shell_word(word: &str) -> String {
    if !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c)) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

/// Directories that usually hold source or tests.
const SOURCE_DIRS: &[&str] = &[
    "src", "lib", "app", "pkg", "cmd", "internal", "crates", "packages", "tests", "test", "spec", "benches", "examples",
];

/// The config text and one line per choice saying why. `tried` holds each
/// candidate with how it ran on the base (`None`: not run, `--no-run`);
/// those that cannot start are left out.
pub fn propose(
    f: &Facts,
    python: &Python,
    notes: &[String],
    tried: &[(Candidate, Option<Ran>)],
) -> (String, Vec<String>) {
    let l = &f.layout;
    let mut why = Vec::new();
    if l.is_python() {
        let root = match python_import_root(l) {
            Some("src") => "imports from src/ (the checks get it on PYTHONPATH)".to_string(),
            Some(_) => "imports from the root (the checks get it on PYTHONPATH)".to_string(),
            None => "no import root found".to_string(),
        };
        let tests = l.test_paths();
        let tests = if tests.is_empty() {
            "no test directory found".to_string()
        } else {
            format!("tests in {}", tests.join(", "))
        };
        why.push(format!("Python project: {root}; {tests}"));
        for (i, reason) in &python.passed_over {
            why.push(format!("passed over {} ({}): {reason}", i.run, i.from));
        }
        match (&python.chosen, python.checked) {
            (Some(i), true) => why.push(format!("interpreter: {} ({}), which can import pytest", i.run, i.from)),
            (Some(i), false) => why.push(format!("interpreter: {} ({}), not checked (--no-run)", i.run, i.from)),
            (None, _) if interpreters(f).is_empty() => why
                .push("no Python interpreter found (.venv, venv, uv, poetry, hatch, python3): no pytest check".into()),
            (None, _) => why.push("no interpreter found that can import pytest: no pytest check".into()),
        }
    }
    why.extend(notes.iter().cloned());
    let mut checks: Vec<&Candidate> = Vec::new();
    for (c, ran) in tried {
        match ran.as_ref().map(|r| judge(c, r)) {
            None => {
                why.push(format!("{}: {} (not run on the base: --no-run)", c.name, c.why));
                checks.push(c);
            }
            Some(Found::Keep(line)) => {
                why.push(format!("{line} ({})", c.why));
                checks.push(c);
            }
            Some(Found::Leave(line)) => why.push(line),
        }
    }
    if tried.is_empty() && !l.is_python() {
        why.push("no project type recognised (pyproject.toml, Cargo.toml, package.json, go.mod): no checks; add [[check]] sections".into());
    }
    let mut allow: Vec<String> = SOURCE_DIRS.iter().filter(|d| l.has(d)).map(|d| format!("{d}/**")).collect();
    for p in l.packages.iter().chain(l.test_paths().iter().filter(|t| l.has(t))) {
        let g = format!("{p}/**");
        if !allow.contains(&g) {
            allow.push(g);
        }
    }
    if allow.is_empty() {
        why.push("no source or test directories found: the scope allows every path".into());
    } else {
        why.push(format!("scope: the source and test directories found ({})", allow.join(", ")));
    }
    let preset = f.agents.first();
    match preset {
        Some(p) => why.push(format!("agent: {p}, the first agent CLI found on PATH ({})", f.agents.join(", "))),
        None => why.push("agent: no agent CLI found on PATH; set [agent] preset or command".into()),
    }
    why.push("every key is documented in docs/config.md".into());

    let mut t = String::new();
    let _ = writeln!(t, "# retry-run.toml, written by `retry-run init`. Every key is documented in docs/config.md.");
    let _ = writeln!(t, "max_attempts = 3\n");
    let _ = writeln!(t, "[agent]");
    match preset {
        Some(p) => {
            let _ = writeln!(t, "preset = {p:?}");
        }
        None => {
            let _ = writeln!(t, "# preset = \"claude-code\"   # or codex, aider, gemini, opencode");
        }
    }
    let _ = writeln!(t, "timeout = \"20m\"\n");
    let _ = writeln!(t, "[scope]");
    let list: Vec<String> = allow.iter().map(|a| format!("{a:?}")).collect();
    let _ = writeln!(t, "allow = [{}]", list.join(", "));
    let _ = writeln!(t, "deny = [\".github/**\"]");
    for c in checks {
        let _ = writeln!(t, "\n[[check]]\nname = {:?}\nrun = {:?}\nkind = {:?}", c.name, c.run, c.kind);
    }
    let _ = writeln!(t, "\n# More checks, the sandbox, the verifier and the retry prompt: see docs/config.md.");
    (t, why)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    /// The whole pipeline with nothing run (`--no-run`).
    fn unrun(f: &Facts) -> (String, Vec<String>) {
        let python = Python { chosen: interpreters(f).into_iter().next(), passed_over: Vec::new(), checked: false };
        let (cands, notes) = candidates(f, &python);
        let tried: Vec<(Candidate, Option<Ran>)> = cands.into_iter().map(|c| (c, None)).collect();
        propose(f, &python, &notes, &tried)
    }

    fn parse(text: &str) -> crate::config::Config {
        crate::config::Config::parse(text, std::path::Path::new("retry-run.toml"))
            .unwrap_or_else(|e| panic!("{e}\n{text}"))
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
            assert!(
                text.starts_with("# retry-run.toml") && text.contains("docs/config.md") && !text.contains("README")
            );
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
        f.venvs = vec![Venv {
            name: "venv".into(),
            bin: "/p/venv/bin".into(),
            programs: vec!["flake8".into(), "ruff".into()],
        }];
        let (c, _) = candidates(&f, &python);
        assert_eq!(c[1].run, "/p/venv/bin/ruff check --output-format=concise .");
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
        Candidate { name: name.into(), run: format!("{name} run"), kind, why: "because".into() }
    }

    fn ran(code: i32, output: &str) -> Ran {
        Ran { exit_code: Some(code), timed_out: false, output: output.into() }
    }

    #[test]
    fn a_run_on_the_base_tells_totals_failures_diagnostics_or_that_it_cannot_start() {
        let pytest = cand("pytest", "test");
        let out = "..F\n=== short test summary info ===\nFAILED tests/test_x.py::test_y - assert 1 == 2\n1 failed, 1204 passed in 3.2s\n";
        assert_eq!(
            judge(&pytest, &ran(1, out)),
            Found::Keep("pytest: 1,204 passed, 1 failing: tests/test_x.py::test_y".into())
        );
        assert_eq!(judge(&pytest, &ran(0, "3 passed in 0.1s\n")), Found::Keep("pytest: 3 passed".into()));
        assert!(matches!(judge(&pytest, &ran(5, "no tests ran in 0.01s\n")), Found::Keep(l) if l.contains("no tests")));
        let missing = ran(1, "/usr/bin/python3: No module named pytest\n");
        assert!(
            matches!(judge(&pytest, &missing), Found::Leave(l) if l.contains("No module named pytest") && l.contains("`pytest run`"))
        );
        assert!(matches!(judge(&pytest, &ran(127, "sh: 1: pytest: not found\n")), Found::Leave(_)));
        // A test failing with "No such file" is still a test run.
        let file = "FAILED tests/t.py::test_open - FileNotFoundError: No such file or directory\n1 failed in 0.1s\n";
        assert!(matches!(judge(&pytest, &ran(1, file)), Found::Keep(l) if l.contains("0 passed, 1 failing")));
        let ruff = cand("ruff", "lint");
        let diags = "shop/a.py:1:1: F401 [*] `os` imported but unused\nshop/b.py:2:5: E711 Comparison to `None`\nFound 2 errors.\n";
        assert_eq!(
            judge(&ruff, &ran(1, diags)),
            Found::Keep("ruff: 2 diagnostics already on the base: only new ones will fail an attempt".into())
        );
        assert_eq!(
            judge(&ruff, &ran(0, "All checks passed!\n")),
            Found::Keep("ruff: no diagnostic on the base".into())
        );
        let timed = Ran { timed_out: true, ..Ran::default() };
        assert!(matches!(judge(&ruff, &timed), Found::Keep(l) if l.contains("did not finish within 5 minutes")));
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
        assert!(
            why.iter().any(|w| w.starts_with("flake8: left out") && w.contains("No module named flake8")),
            "{why:?}"
        );
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

    #[test]
    fn numbers_get_thousands_separators() {
        assert_eq!(
            [thousands(0), thousands(999), thousands(1204), thousands(1234567)],
            ["0", "999", "1,204", "1,234,567"]
        );
    }
}
