//! `retry-run init`: write a `retry-run.toml` for this repository.

use std::io::Write;
use std::path::Path;

use clap::Args;

use super::{CliError, exit};
use crate::git::Repo;
use crate::init::{Facts, propose};

/// Write a retry-run.toml for this repository: checks from its project
/// type (pytest and ruff, cargo test and clippy, package.json's test and
/// lint scripts, go test and go vet), a scope from its source and test
/// directories, and an agent preset from the agent CLIs on PATH. Prints
/// what it chose and why. An existing file is kept unless --force.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// Overwrite an existing retry-run.toml.
    #[arg(long)]
    pub force: bool,
}

pub fn run(dir: &Path, args: InitArgs) -> Result<i32, CliError> {
    let repo = Repo::discover(dir)?;
    let root = repo
        .workdir()
        .ok_or_else(|| CliError::usage("this repository has no working tree (bare); run init in a checkout"))?
        .to_path_buf();
    let target = root.join(crate::config::FILE_NAME);
    if target.exists() && !args.force {
        return Err(CliError::usage(format!(
            "{} exists; keep it, or run `retry-run init --force` to replace it",
            target.display()
        )));
    }
    let mut facts = Facts::default();
    for e in std::fs::read_dir(&root).map_err(|e| CliError::environment(format!("{}: {e}", root.display())))?.flatten()
    {
        let name = e.file_name().to_string_lossy().into_owned();
        if name == ".git" {
            continue;
        }
        if e.path().join("__init__.py").is_file() {
            facts.python_packages.push(name.clone());
        }
        facts.root.push(name);
    }
    facts.root.sort();
    facts.python_packages.sort();
    if let Ok(text) = std::fs::read_to_string(root.join("package.json"))
        && let Ok(v) = serde_json::from_str::<serde_json::Value>(&text)
        && let Some(scripts) = v.get("scripts").and_then(|s| s.as_object())
    {
        facts.npm_scripts = scripts.keys().cloned().collect();
    }
    let on_path = |program: &str| {
        std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
    };
    let pyproject = std::fs::read_to_string(root.join("pyproject.toml")).unwrap_or_default();
    facts.ruff = on_path("ruff") || pyproject.contains("[tool.ruff");
    for name in crate::agents::names() {
        if let Ok(p) = crate::agents::preset(name)
            && on_path(&p.program)
        {
            facts.agents.push(name.to_string());
        }
    }
    let (text, why) = propose(&facts);
    crate::config::Config::parse(&text, &target)
        .map_err(|e| CliError::environment(format!("init wrote a bad config: {e}")))?;
    std::fs::write(&target, &text).map_err(|e| CliError::environment(format!("{}: {e}", target.display())))?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "wrote {}", target.display())?;
    for w in why {
        writeln!(out, "  {w}")?;
    }
    Ok(exit::OK)
}
