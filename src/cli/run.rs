//! `retry-run run`: the attempt loop (docs/commands.md, `run`).

use std::path::{Path, PathBuf};

use clap::Args;

use super::CliError;
use crate::run::{Options, run as run_loop};

/// Run the agent up to N times, each attempt in a clean worktree at the
/// base, until one passes every gate; otherwise escalate with a report.
///
/// Exit 0 when an attempt succeeded (branch retry-run/<task>), 1 when the
/// task escalated, 2 on bad usage or config, 3 when the environment failed
/// (including a task already being run by another process).
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  retry-run run --task-file tasks/fix-login.md -- my-agent --prompt-file {prompt_file}\n  retry-run run --task 'Make the tests pass' --max-attempts 2\n  retry-run run --id fix-login --again        # run a finished task once more\n\nPlaceholders in the agent command: {prompt_file} {worktree} {task_id} {attempt} {max_attempts}"
)]
pub struct RunArgs {
    /// The task: a Markdown file (first `#` heading is the title; optional
    /// TOML front matter between `+++` lines overrides the config).
    #[arg(long, value_name = "FILE.md", conflicts_with = "task")]
    pub task_file: Option<PathBuf>,
    /// The task as text.
    #[arg(long, value_name = "TEXT")]
    pub task: Option<String>,
    /// The task id (default: derived from the title). With neither
    /// --task-file nor --task, the recorded task of that id is run.
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,
    /// The base: any revision. Recorded when the task starts; later runs use
    /// the recorded commit unless --refresh-base.
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    #[arg(long, value_name = "N")]
    pub max_attempts: Option<u32>,
    /// A test that must pass for an attempt to succeed, as its runner names
    /// it (`tests/test_calc.py::test_add`, `tests::adds`); repeatable, added
    /// to the task's `targets`.
    #[arg(long = "target", value_name = "ID")]
    pub targets: Vec<String>,
    /// Run this agent preset (claude-code, codex, aider, gemini, opencode),
    /// over `[agent] preset`.
    #[arg(long, value_name = "NAME")]
    pub preset: Option<String>,
    /// No further attempt starts once the task's recorded agent cost reaches
    /// this many US dollars.
    #[arg(long, value_name = "USD")]
    pub max_cost: Option<f64>,
    /// No further attempt starts once the task's attempts have taken this
    /// long in all (`90s`, `20m`, `2h`).
    #[arg(long, value_name = "DURATION")]
    pub max_duration: Option<String>,
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Run a task that already succeeded or escalated once more (numbering continues).
    #[arg(long)]
    pub again: bool,
    /// Resolve the base anew instead of using the recorded commit.
    #[arg(long)]
    pub refresh_base: bool,
    /// One JSON event per line on stdout, nothing else there.
    #[arg(long, conflicts_with = "quiet")]
    pub json: bool,
    /// Plain progress lines instead of the live line.
    #[arg(long)]
    pub quiet: bool,
    /// The agent command, overriding agent.command.
    #[arg(last = true, value_name = "AGENT")]
    pub agent: Vec<String>,
}

pub fn run(dir: &Path, args: RunArgs) -> Result<i32, CliError> {
    let ending = run_loop(
        dir,
        Options {
            config_path: args.config.map(|p| super::absolute(&p, dir)),
            task_file: args.task_file,
            task_text: args.task,
            id: args.id,
            base: args.base,
            max_attempts: args.max_attempts,
            targets: args.targets,
            again: args.again,
            refresh_base: args.refresh_base,
            agent: args.agent,
            preset: args.preset,
            max_cost: args.max_cost,
            max_duration: args.max_duration,
            json: args.json,
            quiet: args.quiet,
        },
    )?;
    Ok(super::exit::ending(ending))
}
