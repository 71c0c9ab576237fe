//! The checks `init` may propose for a project, from its layout, the
//! programs on `PATH` and in its virtualenvs, and the interpreter chosen
//! for its tests; and what was found without a check (a tool configured
//! but not installed). Pure.

use super::detect::Facts;
use super::python::{Python, interpreters};
use crate::project::CargoNeeds;

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
