//! `retry-run run`: the attempt loop (docs/commands.md, `run`).

use std::path::{Path, PathBuf};

use clap::Args;

use std::time::Duration;

use super::CliError;
use crate::config::DurationSpec;
use crate::run::progress::{Board, Mode, Shared};
use crate::run::queue::{self, Queued, run_all};
use crate::run::{Options, run as run_loop};

/// Run the agent until an attempt passes every gate, or escalate with a report.
///
/// Run the agent up to N times, each attempt in a clean worktree at the
/// base, until one passes every gate; otherwise escalate with a report.
///
/// Exit 0 when an attempt succeeded (branch retry-run/<task>), 1 when the
/// task escalated, 2 on bad usage or config, 3 when the environment failed
/// (including a task already being run by another process). With several
/// tasks: 0 when every task succeeded, 1 when any escalated, 3 when the
/// environment failed for any (the others still run to their end).
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  retry-run run --task-file tasks/fix-login.md -- my-agent --prompt-file {prompt_file}\n  retry-run run --task 'Make the tests pass' --max-attempts 2\n  retry-run run --id fix-login --again        # run a finished task once more\n  retry-run run -j 2 --task-file a.md --task-file b.md --task-file c.md\n  retry-run run --task-file a.md --remote origin   # shared with other machines\n\nPlaceholders in the agent command: {prompt_file} {worktree} {task_id} {attempt} {max_attempts}"
)]
pub struct RunArgs {
    /// The task: a Markdown file (first `#` heading is the title; optional
    /// TOML front matter between `+++` lines overrides the config).
    /// Repeat it to run several tasks.
    #[arg(long, value_name = "FILE.md", conflicts_with = "task")]
    pub task_file: Vec<PathBuf>,
    /// The task as text.
    #[arg(long, value_name = "TEXT")]
    pub task: Option<String>,
    /// The task id (default: derived from the title). With neither
    /// --task-file nor --task, the recorded task of that id is run (repeat
    /// it, or add it to several --task-file, to run several tasks).
    #[arg(long, value_name = "ID")]
    pub id: Vec<String>,
    /// Run at most N tasks (or N lanes of a task) at once; default 1 task,
    /// every lane.
    #[arg(short = 'j', long = "jobs", value_name = "N", value_parser = super::numbers::at_least_one)]
    pub jobs: Option<usize>,
    /// Run K attempt chains of the task at once from the same base, each
    /// with its own worktree and feedback (over `[retry] lanes`).
    #[arg(long, value_name = "K", value_parser = super::numbers::lanes)]
    pub lanes: Option<u32>,
    /// A lane's agent preset, lane by lane (repeat it: the first names
    /// lane 1's, the next lane 2's); over `[[lane]]`.
    #[arg(long = "lane-preset", value_name = "NAME")]
    pub lane_presets: Vec<String>,
    /// Which lane wins: `first` (the first to pass every gate; the others
    /// stop) or `all` (every lane runs to its end; the gates choose).
    #[arg(long, value_name = "HOW", value_parser = ["first", "all"])]
    pub choose: Option<String>,
    /// Share the task through this git remote: pull its record, hold a
    /// lease on it while it runs, push the record at every attempt's start
    /// and end.
    #[arg(long, value_name = "NAME")]
    pub remote: Option<String>,
    /// How long the lease holds without renewal (renewed every third of it).
    #[arg(long, value_name = "DURATION", default_value = "5m", requires = "remote")]
    pub lease: String,
    /// The base: any revision. Recorded when the task starts; later runs use
    /// the recorded commit unless --refresh-base.
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// Run at most N attempts (1 to 1000), over `max_attempts` of the
    /// task and the config.
    #[arg(long, value_name = "N", value_parser = super::numbers::max_attempts)]
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
    #[arg(long, value_name = "USD", value_parser = super::numbers::cost)]
    pub max_cost: Option<f64>,
    /// No further attempt starts once the task's attempts have taken this
    /// long in all (`90s`, `20m`, `2h`).
    #[arg(long, value_name = "DURATION", value_parser = super::numbers::duration)]
    pub max_duration: Option<String>,
    /// The config file (default: retry-run.toml at the repository root).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Run a task that already succeeded or escalated once more (numbering continues).
    #[arg(long)]
    pub again: bool,
    /// Resolve the base anew instead of using the recorded commit.
    #[arg(long)]
    pub refresh_base: bool,
    /// Run the checks on the base again instead of reusing their cached
    /// results from an earlier run on the same base, and every attempt's
    /// checks for real (no earlier run's output reused).
    #[arg(long)]
    pub fresh_baseline: bool,
    /// A --target no check reports on the base is one the agent must
    /// write: run anyway (without it, such a target stops the run, exit 2).
    #[arg(long)]
    pub allow_new_target: bool,
    /// One JSON event per line on stdout, nothing else there.
    #[arg(long, conflicts_with = "quiet")]
    pub json: bool,
    /// Plain progress lines instead of the live line.
    #[arg(long)]
    pub quiet: bool,
    /// The agent command, overriding `[agent] command`, after `--`. Its
    /// placeholders are replaced for each attempt: {prompt_file} (the
    /// prompt's file), {worktree} (the attempt's worktree), {task_id},
    /// {attempt} and {max_attempts}.
    #[arg(last = true, value_name = "AGENT")]
    pub agent: Vec<String>,
}

pub(super) fn run(dir: &Path, args: RunArgs) -> Result<i32, CliError> {
    // Whether namespaces can be used is asked of bubblewrap while the
    // repository, the config and the task are read.
    crate::sandbox::layers::namespaces::probe_early();
    if args.jobs == Some(0) {
        return Err(CliError::usage("-j must be at least 1"));
    }
    let lease = DurationSpec::parse(&args.lease).map_err(|e| CliError::usage(format!("--lease: {e}")))?.value;
    if lease < Duration::from_secs(1) {
        return Err(CliError::usage("--lease must be at least 1s"));
    }
    let several = args.task_file.len() > 1 || (args.id.len() > 1 && args.task_file.len() != 1 && args.task.is_none());
    if !several {
        let mut opts = options(dir, &args, lease);
        opts.task_file = args.task_file.first().cloned();
        opts.task_text = args.task.clone();
        opts.id = args.id.first().cloned();
        if args.id.len() > 1 {
            return Err(CliError::usage("one --task-file takes one --id; give each task its own file"));
        }
        return Ok(super::exit::ending(run_loop(dir, opts)?));
    }
    if args.task.is_some() {
        return Err(CliError::usage("--task runs one task; for several, give each a --task-file"));
    }
    // Each --task-file is a task, each --id a recorded one; all checked first.
    let mut queue: Vec<Queued> = Vec::new();
    let sources =
        args.task_file.iter().map(|f| (Some(f.clone()), None)).chain(args.id.iter().map(|i| (None, Some(i.clone()))));
    for (file, id) in sources {
        let mut opts = options(dir, &args, lease);
        opts.task_file = file;
        opts.id = id;
        let id = crate::run::task_id(dir, &opts)?;
        if queue.iter().any(|q| q.id == id) {
            return Err(CliError::usage(format!("task {id} is given twice")));
        }
        queue.push(Queued { id, opts });
    }
    let mode = Mode::pick(args.json, args.quiet);
    let board = (mode == Mode::Live).then(Board::new);
    let results = run_all(dir, queue, args.jobs.unwrap_or(1), &Shared { board: board.clone() });
    if let Some(b) = &board {
        b.close();
    }
    // The table quotes each task's ending, an error's text among them.
    let table = crate::text::visible(&queue::table(&results)).into_owned();
    if args.json {
        crate::console::err!("{table}");
    } else {
        crate::console::out!("{table}");
    }
    Ok(queue::exit_code(&results))
}

/// `run --id ID --again [--json] [--config PATH] [-- AGENT]`, as typed: the
/// next round of a task (`review --rerun`), its exit code `run`'s.
pub(super) fn again(
    dir: &Path,
    id: &str,
    json: bool,
    config: Option<&Path>,
    agent: &[String],
) -> Result<i32, CliError> {
    #[derive(clap::Parser)]
    struct Again {
        #[command(flatten)]
        run: RunArgs,
    }
    let mut words: Vec<std::ffi::OsString> = ["run", "--id", id, "--again"].iter().map(Into::into).collect();
    if json {
        words.push("--json".into());
    }
    if let Some(c) = config {
        words.extend(["--config".into(), c.as_os_str().to_owned()]);
    }
    if !agent.is_empty() {
        words.push("--".into());
        words.extend(agent.iter().map(Into::into));
    }
    let args = <Again as clap::Parser>::try_parse_from(words).map_err(|e| CliError::usage(e.to_string()))?;
    run(dir, args.run)
}

/// What every task of this `run` shares.
fn options(dir: &Path, args: &RunArgs, lease: Duration) -> Options {
    Options {
        config_path: args.config.as_ref().map(|p| super::absolute(p, dir)),
        task_file: None,
        task_text: None,
        id: None,
        base: args.base.clone(),
        max_attempts: args.max_attempts,
        targets: args.targets.clone(),
        again: args.again,
        refresh_base: args.refresh_base,
        fresh_baseline: args.fresh_baseline,
        allow_new_target: args.allow_new_target,
        agent: args.agent.clone(),
        preset: args.preset.clone(),
        max_cost: args.max_cost,
        max_duration: args.max_duration.clone(),
        json: args.json,
        quiet: args.quiet,
        remote: args.remote.clone(),
        lease: Some(lease),
        lanes: args.lanes,
        lane_presets: args.lane_presets.clone(),
        choose: args.choose.as_deref().map(|c| match c {
            "all" => crate::config::lanes::ChooseMode::All,
            _ => crate::config::lanes::ChooseMode::First,
        }),
        jobs: args.jobs.unwrap_or(usize::MAX),
    }
}
