//! The checks `init` may propose for a project, from its layout, the
//! programs on `PATH` and in its virtualenvs, and the interpreter chosen
//! for its tests; and what was found without a check (a tool configured
//! but not installed). Pure.

use super::detect::Facts;
use super::python::{Interpreter, Python, interpreters};
use crate::project::CargoNeeds;

/// A check `init` may propose.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Candidate {
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
pub(crate) fn candidates(f: &Facts, python: &Python) -> (Vec<Candidate>, Vec<String>) {
    let l = &f.layout;
    let mut found = Found::default();
    if l.is_python() {
        python_checks(f, python, &mut found);
    }
    if l.has("Cargo.toml") {
        cargo_checks(f, &mut found);
    }
    if let Some(runner) = l.node_runner() {
        node_checks(f, runner, &mut found);
    }
    if l.has("go.mod") {
        let why = "Go module (go.mod)".to_string();
        found.add("go-vet", "go vet ./...".into(), "lint", why.clone());
        found.add("go-test", "go test -v ./...".into(), "test", why);
    }
    (found.checks, found.notes)
}

/// The checks found so far, and the notes.
#[derive(Default)]
struct Found {
    checks: Vec<Candidate>,
    notes: Vec<String>,
}

impl Found {
    fn add(&mut self, name: &str, run: String, kind: &'static str, why: String) {
        self.checks.push(Candidate { name: name.into(), run, kind, why, network: Vec::new() });
    }
}

/// A Python project's: pytest with the chosen interpreter, then its lint
/// tools.
fn python_checks(f: &Facts, python: &Python, found: &mut Found) {
    let l = &f.layout;
    let py = python.chosen.as_ref();
    if let Some(i) = py {
        found.add("pytest", format!("{} -m pytest", i.run), "test", format!("with {}, {}", i.run, i.from));
    }
    for (lock, tool) in [("uv.lock", "uv"), ("poetry.lock", "poetry")] {
        if l.has(lock) && !f.on_path(tool) {
            found.notes.push(format!("{lock} is here but {tool} is not on PATH: `{tool} run python` is not tried"));
        }
    }
    ruff_checks(f, found);
    // The interpreter that runs a tool as a module: the tests', else the first found.
    let module_py = py.cloned().or_else(|| interpreters(f).into_iter().next());
    module_lint_checks(f, module_py.as_ref(), found);
    // pyright reads its own include and exclude.
    if let Some(file) = l.configures("pyright") {
        let why = format!("pyright is configured in {file}");
        match (f.venv_program("pyright"), f.on_path("pyright")) {
            (Some((v, path)), _) => {
                found.add("pyright", path, "lint", format!("{why} and is in the checkout's {}", v.name))
            }
            (None, true) => found.add("pyright", "pyright".into(), "lint", format!("{why} and is on PATH")),
            (None, false) => found.notes.push(format!("{why} but not installed: no pyright check")),
        }
    }
}

/// ruff's check, and its formatter's where configured: the checkout's
/// ruff, else one on `PATH` where ruff is configured. No path: ruff then
/// checks what its own config includes and excludes; `--no-fix` over a
/// `fix = true`, `--check` for the formatter: a check never rewrites what
/// is judged.
fn ruff_checks(f: &Facts, found: &mut Found) {
    let l = &f.layout;
    let ruff = l.configures("ruff");
    let ruff_format = l.files.get("pyproject.toml").is_some_and(|t| t.contains("[tool.ruff.format"));
    let ruff_program = match (f.venv_program("ruff"), ruff, f.on_path("ruff")) {
        (Some((v, path)), _, _) => Some((path, format!("ruff is in the checkout's {}{}", v.name, configured_in(ruff)))),
        (None, Some(file), true) => Some(("ruff".to_string(), format!("ruff is configured in {file} and on PATH"))),
        _ => None,
    };
    if let Some((path, why)) = &ruff_program {
        found.add("ruff", format!("{path} check --no-fix --output-format=concise"), "lint", why.clone());
        if ruff_format {
            found.add(
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
            found.notes.push(format!("ruff is configured in {file} but not installed (not on PATH nor in a virtualenv of the checkout): no ruff check"));
        }
        (false, None, true) => {
            found.notes.push("ruff is on PATH but this project does not configure it: no ruff check".into());
        }
        (false, None, false) => {}
    }
}

/// flake8, mypy and black where configured: the checkout's, else run as a
/// module by `module_py`, else the one on `PATH`. mypy with `files` (or
/// `packages`, `modules`) in its config checks those; `mypy .` would check
/// everything else too.
fn module_lint_checks(f: &Facts, module_py: Option<&Interpreter>, found: &mut Found) {
    let l = &f.layout;
    let mypy_args = if l.mypy_names_its_targets() { "" } else { " ." };
    for (tool, args) in [("flake8", ""), ("mypy", mypy_args), ("black", " --check .")] {
        let Some(file) = l.configures(tool) else { continue };
        let why = format!("{tool} is configured in {file}");
        if let Some((v, path)) = f.venv_program(tool) {
            found.add(tool, format!("{path}{args}"), "lint", format!("{why} and is in the checkout's {}", v.name));
        } else if let Some(i) = module_py {
            found.add(tool, format!("{} -m {tool}{args}", i.run), "lint", format!("{why}: run with {}", i.run));
        } else if f.on_path(tool) {
            found.add(tool, format!("{tool}{args}"), "lint", format!("{why} and is on PATH"));
        } else {
            found.notes.push(format!("{why}, but no interpreter was found to run it: no {tool} check"));
        }
    }
}

/// A Rust project's: `cargo test` names every test (no `--quiet`) and runs
/// every test binary (`--no-fail-fast`); offline when nothing is to be
/// fetched, else given the hosts it fetches from.
fn cargo_checks(f: &Facts, found: &mut Found) {
    let l = &f.layout;
    let (offline, needs, hosts) = match l.cargo_needs() {
        CargoNeeds::Offline(why) => (" --offline", format!("{why}: run offline"), Vec::new()),
        CargoNeeds::Hosts(hosts, why) => {
            let said = format!("{why}: it may reach {} through the sandbox's proxy", hosts.join(", "));
            ("", said, hosts)
        }
    };
    let why = format!("Rust project (Cargo.toml); {needs}");
    found.add("clippy", format!("cargo clippy --all-targets --quiet{offline} -- -D warnings"), "lint", why.clone());
    found.add("cargo-test", format!("cargo test{offline} --no-fail-fast"), "test", why);
    for c in found.checks.iter_mut().filter(|c| c.name == "clippy" || c.name == "cargo-test") {
        c.network = hosts.clone();
    }
    if let Some(file) = l.configures("rustfmt") {
        found.add("rustfmt", "cargo fmt --check".into(), "lint", format!("rustfmt is configured in {file}"));
    }
}

/// A Node project's `lint` and `test` scripts, run with its package
/// manager; a script that rewrites files is run without its writing flag
/// where it can be, else left out.
fn node_checks(f: &Facts, runner: &str, found: &mut Found) {
    let l = &f.layout;
    let scripts = l.npm_scripts();
    for (script, kind) in [("lint", "lint"), ("test", "test")] {
        let text = l.npm_script(script).unwrap_or_default();
        if let Some(flag) = writes(&text) {
            match without_writes(&text) {
                Some(cmd) => found.add(
                    &format!("{runner}-{script}"),
                    format!("{} {cmd}", exec(runner)),
                    kind,
                    format!("package.json's `{script}` script without its `{flag}`, which would rewrite the worktree"),
                ),
                None => found.notes.push(format!(
                    "package.json's `{script}` script runs `{flag}`, which rewrites the worktree: no {runner}-{script} check; add a script without it"
                )),
            }
            continue;
        }
        if scripts.iter().any(|s| s == script) {
            // A runner whose default reporter names no passing test gets
            // the one that does (its tests run the same).
            let (extra, said) = match test_runner(&text) {
                Some("vitest") if kind == "test" && bundles_config(l) => (
                    "--reporter=verbose --configLoader=runner",
                    "; vitest's verbose reporter names every test; its config is loaded without bundling, which would write into the checkout's node_modules/.vite-temp",
                ),
                Some("vitest") if kind == "test" => {
                    ("--reporter=verbose", "; vitest's verbose reporter names every test")
                }
                Some("jest") if kind == "test" => ("--verbose", "; jest's --verbose names every test"),
                _ => ("", ""),
            };
            found.add(
                &format!("{runner}-{script}"),
                format!("{runner} run --silent {script}{}", script_args(runner, extra)),
                kind,
                format!("package.json has a `{script}` script, run with {runner} (its lock file){said}"),
            );
        }
    }
    if !scripts.iter().any(|s| s == "lint") {
        linters(f, runner, found);
    }
    type_check(f, runner, &scripts, found);
}

/// Arguments given to a package script: npm needs `--` before them; pnpm,
/// yarn and bun pass the words after the script's name on (pnpm would pass
/// a `--` too, which a runner reads as the end of its options).
fn script_args(runner: &str, args: &str) -> String {
    match (args, runner) {
        ("", _) => String::new(),
        (_, "npm") => format!(" -- {args}"),
        _ => format!(" {args}"),
    }
}

/// Without a `lint` script: the linters the project installs and
/// configures, each in an output retry-run reads (ESLint's stylish, its
/// default; Biome's default reporter; oxlint's default).
fn linters(f: &Facts, runner: &str, found: &mut Found) {
    let l = &f.layout;
    let eslint =
        ["eslint.config.js", "eslint.config.mjs", "eslint.config.cjs", "eslint.config.ts", "eslint.config.mts"]
            .into_iter()
            .chain([".eslintrc.js", ".eslintrc.cjs", ".eslintrc.json", ".eslintrc.yml", ".eslintrc.yaml", ".eslintrc"])
            .find(|c| l.has(c));
    let tools = [
        ("eslint", eslint, "eslint ."),
        ("biome", ["biome.json", "biome.jsonc"].into_iter().find(|c| l.has(c)), "biome lint ."),
        ("oxlint", [".oxlintrc.json", "oxlintrc.json"].into_iter().find(|c| l.has(c)), "oxlint"),
    ];
    for (tool, config, cmd) in tools {
        let package = if tool == "biome" { "@biomejs/biome" } else { tool };
        if let Some(config) = config
            && l.npm_depends_on(package)
        {
            found.add(
                tool,
                format!("{} {cmd}", exec(runner)),
                "lint",
                format!("{config}, and package.json installs {package} (no `lint` script): its default output, which retry-run reads"),
            );
        }
    }
}

/// Whether vitest bundles a config file of the project on start, into
/// `node_modules/.vite-temp` beside the `node_modules` it resolves: the
/// checkout's, read-only to a check. vitest 3.1 and later load it with
/// `--configLoader=runner` instead, writing nothing.
fn bundles_config(l: &crate::project::Layout) -> bool {
    let config = ["vitest.config", "vite.config"]
        .iter()
        .any(|c| ["ts", "mts", "cts", "js", "mjs", "cjs"].iter().any(|e| l.has(&format!("{c}.{e}"))));
    let loader = l.npm_dependency("vitest").is_some_and(|range| {
        let v = range.trim_start_matches(|c: char| !c.is_ascii_digit());
        let mut parts = v.split('.').map(|p| p.parse::<u32>().unwrap_or(0));
        let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
        major > 3 || major == 3 && minor >= 1
    });
    config && loader
}

/// The test runner a script's text starts, when it is vitest or jest.
fn test_runner(script: &str) -> Option<&'static str> {
    let words = script.split_whitespace().map(|w| w.rsplit('/').next().unwrap_or(w));
    words.into_iter().find_map(|w| match w {
        "vitest" => Some("vitest"),
        "jest" => Some("jest"),
        _ => None,
    })
}

/// A TypeScript project's type check: its own script (`typecheck`,
/// `type-check`, `tsc`, `types`), else `tsc --noEmit` of its
/// `tsconfig.json`, read as tsc writes it.
fn type_check(f: &Facts, runner: &str, scripts: &[String], found: &mut Found) {
    let l = &f.layout;
    if !l.has("tsconfig.json") {
        return;
    }
    match ["typecheck", "type-check", "tsc", "types"].iter().find(|s| scripts.iter().any(|x| x == *s)) {
        Some(script) => found.add(
            &format!("{runner}-{script}"),
            format!("{runner} run --silent {script}"),
            "lint",
            format!("tsconfig.json, and package.json's `{script}` script type-checks it"),
        ),
        None => found.add(
            "tsc",
            format!("{} tsc --noEmit --pretty false", exec(runner)),
            "lint",
            "tsconfig.json: the TypeScript compiler's type check, without emitting".to_string(),
        ),
    }
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
        "bun" => "bun x",
        _ => "npm exec --",
    }
}

fn configured_in(file: Option<&str>) -> String {
    file.map(|f| format!(", configured in {f}")).unwrap_or_default()
}
