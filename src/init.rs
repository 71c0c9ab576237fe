//! `retry-run init`: a `retry-run.toml` proposed from what the repository
//! holds. Pure: the facts are gathered by `cli/init.rs`; the choice of
//! checks, scope and agent preset, and the reason for each, are made here.

use std::fmt::Write;

/// What `init` looked at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// Names of the files and directories at the repository root.
    pub root: Vec<String>,
    /// Top-level directories holding an `__init__.py` (Python packages).
    pub python_packages: Vec<String>,
    /// The script names of `package.json`.
    pub npm_scripts: Vec<String>,
    /// Agent presets whose CLI is on `PATH`, in preset order.
    pub agents: Vec<String>,
    /// Whether `ruff` is on `PATH` or configured in `pyproject.toml`.
    pub ruff: bool,
}

/// Directories that usually hold source or tests.
const SOURCE_DIRS: &[&str] = &[
    "src", "lib", "app", "pkg", "cmd", "internal", "crates", "packages", "tests", "test", "spec", "benches", "examples",
];

/// The config text and one line per choice saying why.
pub fn propose(f: &Facts) -> (String, Vec<String>) {
    let has = |name: &str| f.root.iter().any(|r| r == name);
    let mut why = Vec::new();
    let mut checks: Vec<(&str, String, &str)> = Vec::new(); // (name, run, kind)
    let python = has("pyproject.toml") || has("setup.py") || has("setup.cfg") || has("requirements.txt");
    if python {
        checks.push(("pytest", "python3 -m pytest -rA".into(), "test"));
        why.push("Python project (pyproject.toml, setup.py or requirements.txt): pytest, with -rA so that targets are reported".into());
        if f.ruff {
            checks.push(("ruff", "ruff check --output-format=concise .".into(), "lint"));
            why.push("ruff is installed or configured: ruff check".into());
        }
    }
    if has("Cargo.toml") {
        checks.push(("clippy", "cargo clippy --all-targets --quiet -- -D warnings".into(), "lint"));
        checks.push(("cargo-test", "cargo test --quiet".into(), "test"));
        why.push("Rust project (Cargo.toml): cargo clippy and cargo test".into());
    }
    if has("package.json") {
        for (script, kind) in [("lint", "lint"), ("test", "test")] {
            if f.npm_scripts.iter().any(|s| s == script) {
                checks.push((
                    if script == "test" { "npm-test" } else { "npm-lint" },
                    format!("npm run --silent {script}"),
                    kind,
                ));
                why.push(format!("package.json has a `{script}` script: npm run {script}"));
            }
        }
    }
    if has("go.mod") {
        checks.push(("go-vet", "go vet ./...".into(), "lint"));
        checks.push(("go-test", "go test -v ./...".into(), "test"));
        why.push("Go module (go.mod): go vet and go test -v".into());
    }
    if checks.is_empty() {
        why.push("no project type recognised (pyproject.toml, Cargo.toml, package.json, go.mod): no checks; add [[check]] sections".into());
    }
    let mut allow: Vec<String> = SOURCE_DIRS.iter().filter(|d| has(d)).map(|d| format!("{d}/**")).collect();
    for p in &f.python_packages {
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

    let mut t = String::new();
    let _ = writeln!(t, "# retry-run.toml, written by `retry-run init`. Every key is documented in the README.");
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
    for (name, run, kind) in &checks {
        let _ = writeln!(t, "\n[[check]]\nname = {name:?}\nrun = {run:?}\nkind = {kind:?}");
    }
    (t, why)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(root: &[&str]) -> Facts {
        Facts { root: root.iter().map(|s| s.to_string()).collect(), ..Facts::default() }
    }

    #[test]
    fn each_project_type_gets_its_checks_and_the_file_parses() {
        let cases: &[(Facts, &[&str])] = &[
            (
                Facts { ruff: true, python_packages: vec!["shop".into()], ..facts(&["pyproject.toml", "tests"]) },
                &["pytest", "ruff"],
            ),
            (facts(&["Cargo.toml", "src", "tests"]), &["clippy", "cargo-test"]),
            (
                Facts { npm_scripts: vec!["test".into(), "lint".into()], ..facts(&["package.json", "src"]) },
                &["npm-lint", "npm-test"],
            ),
            (facts(&["go.mod", "cmd", "internal"]), &["go-vet", "go-test"]),
            (facts(&["README.md"]), &[]),
        ];
        for (f, want) in cases {
            let (text, why) = propose(f);
            let c = crate::config::Config::parse(&text, std::path::Path::new("retry-run.toml"))
                .unwrap_or_else(|e| panic!("{e}\n{text}"));
            let names: Vec<&str> = c.checks.iter().map(|c| c.name.as_str()).collect();
            assert_eq!(names, *want, "{text}");
            assert!(!why.is_empty());
        }
        let (text, _) =
            propose(&Facts { ruff: true, python_packages: vec!["shop".into()], ..facts(&["pyproject.toml", "tests"]) });
        let c = crate::config::Config::parse(&text, std::path::Path::new("retry-run.toml")).expect("parses");
        assert_eq!(c.scope.allow, ["tests/**", "shop/**"]);
    }

    #[test]
    fn the_first_agent_on_path_is_the_preset() {
        let (text, why) = propose(&Facts { agents: vec!["aider".into(), "gemini".into()], ..facts(&["go.mod"]) });
        let c = crate::config::Config::parse(&text, std::path::Path::new("retry-run.toml")).expect("parses");
        assert_eq!(c.agent.preset.map(|p| p.0).as_deref(), Some("aider"));
        assert!(why.iter().any(|w| w.contains("aider, gemini")));
        let (text, _) = propose(&facts(&[]));
        assert!(text.contains("# preset = "));
    }
}
