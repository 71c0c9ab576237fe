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

use crate::project::{CargoNeeds, Layout, python_import_root};

/// Programs `init` looks for on `PATH`.
pub const PROGRAMS: &[&str] = &[
    "python3", "python", "uv", "poetry", "hatch", "ruff", "flake8", "mypy", "pyright", "black", "npm", "pnpm", "yarn",
    "cargo", "go",
];

/// Programs `init` looks for in a virtualenv's `bin`.
pub const VENV_PROGRAMS: &[&str] = &["python", "ruff", "flake8", "mypy", "pyright", "black"];

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
    /// The checkout's root, absolute.
    pub root: String,
    /// The virtualenvs whose `bin` is on `PATH`, absolute.
    pub path_venvs: Vec<String>,
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

/// Runs a command on the base with the hosts it may reach, for at most so
/// many seconds; `None` when nothing can be run (`--no-run`).
pub type TryRun<'a> = dyn FnMut(&str, &[String], u64) -> Option<Ran> + 'a;

/// The first interpreter that imports pytest, each tried by `try_run`
/// (in the trial's worktree); without a trial, the first, unchecked.
pub fn choose_python(facts: &Facts, try_run: &mut TryRun<'_>) -> Python {
    let mut python = Python { checked: true, ..Python::default() };
    for i in interpreters(facts) {
        let Some(ran) = try_run(&probe_command(&i), &[], 60) else {
            return Python { chosen: Some(i), passed_over: Vec::new(), checked: false };
        };
        if ran.exit_code == Some(0) && !ran.timed_out {
            python.chosen = Some(i);
            return python;
        }
        let first = ran.output.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("").trim();
        let reason = match (ran.timed_out, first.is_empty()) {
            (true, _) => "did not answer within a minute".to_string(),
            (false, true) => format!("exit {}", ran.exit_code.unwrap_or(-1)),
            (false, false) => crate::text::clip(first, 200, "...").into_owned(),
        };
        python.passed_over.push((i, reason));
    }
    python
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
    /// The hosts it may reach through the sandbox's proxy (its `network`).
    pub network: Vec<String>,
}

/// The checks to try on the base, and lines saying what was found without
/// a check (a tool configured but not installed).
pub fn candidates(f: &Facts, python: &Python) -> (Vec<Candidate>, Vec<String>) {
    let l = &f.layout;
    let mut out = Vec::new();
    let mut notes = Vec::new();
    let mut cargo_hosts: Vec<String> = Vec::new();
    let mut add = |name: &str, run: String, kind: &'static str, why: String| {
        out.push(Candidate { name: name.into(), run, kind, why, network: Vec::new() });
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
        // No path: ruff then checks what its own config includes and
        // excludes; `--no-fix` over a `fix = true`, `--check` for the
        // formatter: a check never rewrites what is judged.
        let ruff = l.configures("ruff");
        let ruff_format = l.files.get("pyproject.toml").is_some_and(|t| t.contains("[tool.ruff.format"));
        let ruff_program = match (f.venv_program("ruff"), ruff, f.on_path("ruff")) {
            (Some((v, path)), _, _) => {
                Some((path, format!("ruff is in the checkout's {}{}", v.name, configured_in(ruff))))
            }
            (None, Some(file), true) => Some(("ruff".to_string(), format!("ruff is configured in {file} and on PATH"))),
            _ => None,
        };
        if let Some((path, why)) = &ruff_program {
            add("ruff", format!("{path} check --no-fix --output-format=concise"), "lint", why.clone());
            if ruff_format {
                add(
                    "ruff-format",
                    format!("{path} format --check"),
                    "lint",
                    format!("{why}; [tool.ruff.format] is set"),
                );
            }
        }
        match (ruff_program.is_some(), ruff, f.on_path("ruff")) {
            (true, _, _) => {}
            (false, Some(file), _) => {
                notes.push(format!("ruff is configured in {file} but not installed (not on PATH nor in a virtualenv of the checkout): no ruff check"));
            }
            (false, None, true) => {
                notes.push("ruff is on PATH but this project does not configure it: no ruff check".into());
            }
            (false, None, false) => {}
        }
        // mypy with `files` (or `packages`, `modules`) in its config checks
        // those; `mypy .` would check everything else too.
        let mypy_args = if l.mypy_names_its_targets() { "" } else { " ." };
        for (tool, args) in [("flake8", ""), ("mypy", mypy_args), ("black", " --check .")] {
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
        // pyright reads its own include and exclude.
        if let Some(file) = l.configures("pyright") {
            let why = format!("pyright is configured in {file}");
            match (f.venv_program("pyright"), f.on_path("pyright")) {
                (Some((v, path)), _) => {
                    add("pyright", path, "lint", format!("{why} and is in the checkout's {}", v.name))
                }
                (None, true) => add("pyright", "pyright".into(), "lint", format!("{why} and is on PATH")),
                (None, false) => notes.push(format!("{why} but not installed: no pyright check")),
            }
        }
    }
    if l.has("Cargo.toml") {
        // `cargo test` names every test (no `--quiet`) and runs every test
        // binary (`--no-fail-fast`); offline when nothing is to be
        // fetched, else given the hosts it fetches from.
        let (offline, needs) = match l.cargo_needs() {
            CargoNeeds::Offline(why) => (" --offline", format!("{why}: run offline")),
            CargoNeeds::Hosts(hosts, why) => {
                let said = format!("{why}: it may reach {} through the sandbox's proxy", hosts.join(", "));
                cargo_hosts = hosts;
                ("", said)
            }
        };
        let why = format!("Rust project (Cargo.toml); {needs}");
        add("clippy", format!("cargo clippy --all-targets --quiet{offline} -- -D warnings"), "lint", why.clone());
        add("cargo-test", format!("cargo test{offline} --no-fail-fast"), "test", why);
        if let Some(file) = l.configures("rustfmt") {
            add("rustfmt", "cargo fmt --check".into(), "lint", format!("rustfmt is configured in {file}"));
        }
    }
    if let Some(runner) = l.node_runner() {
        let scripts = l.npm_scripts();
        for (script, kind) in [("lint", "lint"), ("test", "test")] {
            let text = l.npm_script(script).unwrap_or_default();
            if let Some(flag) = writes(&text) {
                match without_writes(&text) {
                    Some(cmd) => add(
                        &format!("{runner}-{script}"),
                        format!("{} {cmd}", exec(runner)),
                        kind,
                        format!("package.json's `{script}` script without its `{flag}`, which would rewrite the worktree"),
                    ),
                    None => notes.push(format!(
                        "package.json's `{script}` script runs `{flag}`, which rewrites the worktree: no {runner}-{script} check; add a script without it"
                    )),
                }
                continue;
            }
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
    for c in out.iter_mut().filter(|c| c.name == "clippy" || c.name == "cargo-test") {
        c.network = cargo_hosts.clone();
    }
    (out, notes)
}

/// The flag of a script's text that rewrites files (`--fix`, `--write`,
/// `-w`), if it has one.
fn writes(script: &str) -> Option<&'static str> {
    ["--fix", "--write", "-w"].into_iter().find(|f| script.split_whitespace().any(|w| w == *f))
}

/// A script that runs one tool with a writing flag, as a command that
/// only checks: `eslint --fix src` as `eslint src`, `prettier --write .`
/// as `prettier --check .`; `None` for more than one command (`&&`, `;`,
/// `|`) or another tool.
fn without_writes(script: &str) -> Option<String> {
    if script.contains("&&") || script.contains(';') || script.contains('|') {
        return None;
    }
    let words: Vec<&str> = script.split_whitespace().collect();
    let swap: &[(&str, &str)] = match words.first() {
        Some(&"eslint") => &[("--fix", "")],
        Some(&"prettier") => &[("--write", "--check"), ("-w", "--check")],
        _ => return None,
    };
    let kept: Vec<&str> = words
        .iter()
        .map(|w| swap.iter().find(|(from, _)| w == from).map_or(*w, |(_, to)| *to))
        .filter(|w| !w.is_empty())
        .collect();
    Some(kept.join(" "))
}

/// How a Node package manager runs a program the project installs.
fn exec(runner: &str) -> &'static str {
    match runner {
        "pnpm" => "pnpm exec",
        "yarn" => "yarn",
        _ => "npm exec --",
    }
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

/// Signs in an output that a command could not start, or could not do
/// its work for a reason of the environment (a tool or module missing,
/// the network refused, a path it must write kept read-only), each with
/// what to do when there is more to say than the line itself.
const CANNOT_START: [(&str, &str); 12] = [
    ("No module named", ""),
    ("No such file or directory", ""),
    ("command not found", ""),
    (": not found", ""),
    ("Permission denied", ""),
    ("CONNECT tunnel failed", "the sandbox's proxy refused a host it needs: add the host to the check's `network`"),
    ("Could not resolve host", "it needs the network: add the host to the check's `network`"),
    ("Temporary failure in name resolution", "it needs the network: add the host to the check's `network`"),
    ("Network is unreachable", "it needs the network: add the host to the check's `network`"),
    ("Read-only file system", "the sandbox keeps that path read-only: list its directory in `sandbox.writable`"),
    (
        "--offline was specified",
        "it needs dependencies that are not vendored: commit Cargo.lock and vendor them, or drop --offline and give it the registry's hosts in `network`",
    ),
    ("Operation not permitted", ""),
];

/// What `ran` (the candidate `c` on the base) says: its tests' totals and
/// failing ids, or its diagnostics already on the base, counted as `run`
/// counts them ([`crate::outcome::check::counted`]: errors, not notes);
/// or that it cannot start or work here (exit 126 or 127, or a failure
/// printing one of [`CANNOT_START`] with no test or diagnostic read).
pub fn judge(c: &Candidate, ran: &Ran) -> Found {
    let tests = crate::test_results::read(&ran.output);
    let enriched: Vec<crate::enrich::Enriched> = crate::diagnostics::parse_as(None, &ran.output)
        .into_iter()
        .map(|diagnostic| crate::enrich::Enriched { diagnostic, scope: None, snippet: None })
        .collect();
    let counted = crate::outcome::check::counted(&enriched).count();
    let first_sign = || {
        let (line, fix) = ran
            .output
            .lines()
            .find_map(|l| CANNOT_START.iter().find(|(s, _)| l.contains(s)).map(|(_, fix)| (l, fix)))?;
        let line = crate::text::clip(line.trim(), 200, "...").into_owned();
        Some(if fix.is_empty() { line } else { format!("{line} ({fix})") })
    };
    let name = &c.name;
    if ran.timed_out {
        return Found::Keep(format!(
            "{name}: did not finish within {} minutes on the base; raise its timeout if it needs longer",
            TRIAL_SECS / 60
        ));
    }
    let failed = ran.exit_code != Some(0);
    let nothing_read = tests.ran.is_none() && tests.passed.is_empty() && tests.failed.is_empty() && counted == 0;
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
    let n = counted as u64;
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

/// Where the task worktrees of a jest project live: jest skips every file
/// under a path that holds `/.git/`, where they live by default, so its
/// tests would never be found. A directory beside the checkout, named after
/// it, with the reason; `None` when the default serves.
pub fn worktree_root(f: &Facts) -> Option<(String, String)> {
    if !f.layout.uses_jest() {
        return None;
    }
    let name = std::path::Path::new(&f.root).file_name()?.to_string_lossy().into_owned();
    Some((
        format!("../{name}.retry-run-worktrees"),
        "jest skips every file under a path that holds /.git/, where task worktrees live by default".to_string(),
    ))
}

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
    let kept = [f.root.clone()];
    let on_path = crate::project::hides::hidden("", &f.path_venvs, &kept);
    why.extend(on_path.iter().map(|h| h.advice()));
    // Each check, and the reason it is left out (commented in the file).
    let mut checks: Vec<(&Candidate, Option<String>)> = Vec::new();
    for (c, ran) in tried {
        match ran.as_ref().map(|r| judge(c, r)) {
            None => {
                why.push(format!("{}: {} (not run on the base: --no-run)", c.name, c.why));
                checks.push((c, None));
            }
            Some(Found::Keep(line)) => {
                why.push(format!("{line} ({})", c.why));
                checks.push((c, None));
            }
            Some(Found::Leave(line)) => {
                let named = crate::project::hides::hidden(&c.run, &[], &kept);
                let line = match named.first() {
                    Some(h) => format!("{line}; {}", h.advice()),
                    None => line,
                };
                why.push(format!("{line} (written commented out)"));
                checks.push((c, Some(line)));
            }
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
    if let Some((root, reason)) = worktree_root(f) {
        why.push(format!("worktrees: beside the checkout ({root}): {reason}"));
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
    if let Some((root, reason)) = worktree_root(f) {
        let _ = writeln!(t, "[worktree]\n# {reason}:\nroot = {root:?}\n");
    }
    let _ = writeln!(t, "[scope]");
    let list: Vec<String> = allow.iter().map(|a| format!("{a:?}")).collect();
    let _ = writeln!(t, "allow = [{}]", list.join(", "));
    let _ = writeln!(t, "deny = [\".github/**\"]");
    for (c, left_out) in checks {
        let mut block = format!("[[check]]\nname = {:?}\nrun = {:?}\nkind = {:?}\n", c.name, c.run, c.kind);
        if !c.network.is_empty() {
            let hosts: Vec<String> = c.network.iter().map(|h| format!("{h:?}")).collect();
            let _ = writeln!(block, "network = [{}]", hosts.join(", "));
        }
        match left_out {
            None => {
                let _ = write!(t, "\n{block}");
            }
            Some(reason) => {
                let _ = writeln!(t, "\n# Left out: it failed on the base for a reason of the environment:");
                for l in reason.lines() {
                    let _ = writeln!(t, "# {l}");
                }
                for l in block.lines() {
                    let _ = writeln!(t, "# {l}");
                }
            }
        }
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
        let free =
            cargo(&["Cargo.toml"], &[("Cargo.toml", &manifest("[dependencies]\nlocal = { path = \"local\" }\n"))]);
        assert_eq!(free[1], ("cargo test --offline --no-fail-fast".to_string(), Vec::new()));
        assert_eq!(free[0].0, "cargo clippy --all-targets --quiet --offline -- -D warnings");
        let deps = manifest(
            "[dev-dependencies]\nitoa = \"1\"\n[target.'cfg(unix)'.dependencies]\nr = { git = \"https://github.com/o/r\" }\n",
        );
        let fetched = cargo(&["Cargo.toml"], &[("Cargo.toml", &deps)]);
        let hosts = vec!["index.crates.io".to_string(), "static.crates.io".to_string(), "github.com".to_string()];
        assert_eq!(fetched[1], ("cargo test --no-fail-fast".to_string(), hosts));
        let vendored = "[source.crates-io]\nreplace-with = \"vendored\"\n[source.vendored]\ndirectory = \"vendor\"\n";
        let v =
            cargo(&["Cargo.toml", "Cargo.lock", ".cargo"], &[("Cargo.toml", &deps), (".cargo/config.toml", vendored)]);
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
    fn paths_the_sandbox_hides_are_named() {
        let mut f = with_file(facts(&["setup.py"]), "setup.py", "");
        f.root = "/tmp/repo".into();
        f.path_venvs = vec!["/tmp/v".into(), "/tmp/repo/.venv".into()];
        let (_, why) = unrun(&f);
        let hidden: Vec<&String> = why.iter().filter(|w| w.contains("which the sandbox hides")).collect();
        assert_eq!(hidden.len(), 1, "{why:?}");
        assert!(hidden[0].starts_with("/tmp/v lies under /tmp"), "{why:?}");
    }

    #[test]
    fn init_counts_diagnostics_as_the_run_s_gate_does() {
        let mypy = cand("mypy", "lint");
        let out = "shop/a.py:3: error: Incompatible types in assignment  [assignment]\nshop/a.py:3: note: See https://mypy.rtfd.io\nshop/a.py:9: note: Revealed type is \"int\"\nFound 1 error in 1 file (checked 2 source files)\n";
        assert_eq!(
            judge(&mypy, &ran(1, out)),
            Found::Keep("mypy: 1 diagnostic already on the base: only new ones will fail an attempt".into())
        );
    }

    #[test]
    fn numbers_get_thousands_separators() {
        assert_eq!(
            [thousands(0), thousands(999), thousands(1204), thousands(1234567)],
            ["0", "999", "1,204", "1,234,567"]
        );
    }
}
