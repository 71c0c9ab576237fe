//! `retry-run init`: write a `retry-run.toml` for this repository.

use std::io::Write;
use std::path::Path;
use std::time::Duration;

use clap::Args;

use super::{CliError, exit};
use crate::git::Repo;
use crate::init::{self, Facts, Ran, Venv};
use crate::project::Layout;
use crate::run::trial::Trial;

/// Write a retry-run.toml for this repository, after trying its checks.
///
/// Write a retry-run.toml for this repository. Finds the project's own
/// Python interpreter (.venv, venv, uv, poetry, hatch, else python3) and
/// keeps the first that can import pytest; its lint tools (ruff, flake8,
/// mypy, where configured); package.json's test and lint scripts (npm,
/// pnpm or yarn by lock file); cargo test and clippy; go test and go vet.
/// Runs each proposed check once on HEAD, confined in a throwaway
/// worktree, says what it found (test totals, failing tests, diagnostics
/// already there), and comments out a check that cannot work here. The scope
/// comes from the source and test directories, the agent preset from the
/// agent CLIs on PATH. An existing file is kept unless --force.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// Overwrite an existing retry-run.toml.
    #[arg(long)]
    pub force: bool,
    /// Run nothing: propose the checks without trying them on the base.
    #[arg(long)]
    pub no_run: bool,
}

pub fn run(dir: &Path, args: InitArgs) -> Result<i32, CliError> {
    let repo = Repo::find(dir)?;
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
    let facts = facts(&root);
    let mut out = std::io::stdout().lock();
    // The sandbox of the config there is (replaced with --force), else the defaults.
    let config = std::fs::read_to_string(&target)
        .ok()
        .and_then(|t| crate::config::Config::parse(&t, &target).ok())
        .unwrap_or_default();
    // A jest project's trial runs where its task worktrees will (jest finds
    // nothing under the git directory).
    let mut config = config;
    if let Some((dir, _)) = init::worktree_root(&facts)
        && config.worktree.root.is_empty()
    {
        config.worktree.root = dir;
    }
    let mut trial = None;
    let mut said = Vec::new();
    if args.no_run {
        said.push("nothing was run (--no-run): the checks are proposed untried".to_string());
    } else {
        writeln!(
            out,
            "trying the checks on HEAD in a throwaway worktree (at most {} minutes each)...",
            init::TRIAL_SECS / 60
        )?;
        out.flush()?;
        match Trial::start(&repo, &config) {
            Ok(t) => {
                said.push(format!("each check was run once on HEAD in a throwaway worktree, {}", t.sandbox));
                trial = Some(t);
            }
            Err(e) => said.push(format!("the checks could not be tried on HEAD ({e}): they are proposed untried")),
        }
    }
    let mut try_run = |cmd: &str, network: &[String], secs: u64| -> Option<Ran> {
        let t = trial.as_mut()?;
        Some(match t.run(cmd, network, Duration::from_secs(secs)) {
            Ok(r) => Ran { exit_code: r.exit_code, timed_out: r.timed_out, output: r.output },
            Err(e) => Ran { exit_code: Some(127), timed_out: false, output: e },
        })
    };
    let python = init::choose_python(&facts, &mut try_run);
    let (candidates, notes) = init::candidates(&facts, &python);
    let tried: Vec<(init::Candidate, Option<Ran>)> = candidates
        .into_iter()
        .map(|c| {
            let ran = try_run(&c.run, &c.network, init::TRIAL_SECS);
            (c, ran)
        })
        .collect();
    drop(trial);
    let (text, why) = init::propose(&facts, &python, &notes, &tried);
    crate::config::Config::parse(&text, &target)
        .map_err(|e| CliError::environment(format!("init wrote a bad config: {e}")))?;
    std::fs::write(&target, &text).map_err(|e| CliError::environment(format!("{}: {e}", target.display())))?;
    writeln!(out, "wrote {}", target.display())?;
    for w in said.iter().chain(&why) {
        writeln!(out, "  {w}")?;
    }
    Ok(exit::OK)
}

/// What the checkout and `PATH` hold.
fn facts(root: &Path) -> Facts {
    let path = std::env::var_os("PATH");
    let on_path =
        |program: &str| path.as_ref().is_some_and(|p| crate::process::programs_on_path(program, p).next().is_some());
    let mut facts = Facts { layout: Layout::read(root), root: root.display().to_string(), ..Facts::default() };
    facts.path_venvs = crate::project::virtualenvs_on_path(path.as_deref().unwrap_or_default());
    facts.on_path = init::PROGRAMS.iter().filter(|p| on_path(p)).map(|p| p.to_string()).collect();
    for name in init::VENV_DIRS {
        let bin = root.join(name).join("bin");
        let programs: Vec<String> =
            init::VENV_PROGRAMS.iter().filter(|p| bin.join(p).is_file()).map(|p| p.to_string()).collect();
        if !programs.is_empty() {
            facts.venvs.push(Venv { name: name.to_string(), bin: bin.display().to_string(), programs });
        }
    }
    for name in crate::agents::names() {
        if let Ok(p) = crate::agents::preset(name)
            && on_path(&p.program)
        {
            facts.agents.push(name.to_string());
        }
    }
    facts
}
