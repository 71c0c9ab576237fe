//! The command line: one file per subcommand (`completions.rs` also holds
//! `man`, `sync.rs` `push` and `pull`), plus [`error`], which maps errors to
//! exit codes, and `repo_args.rs`, what `scope` and `diff` share. This file
//! parses the arguments and runs the command.

mod agents;
mod clean;
mod completions;
mod context;
mod demo;
mod diff;
mod enrich;
pub(crate) mod error;
mod init;
mod inspect;
mod judge_output;
mod land;
mod log;
mod mcp;
pub(crate) mod numbers;
mod paths;
mod repo_args;
mod report;
mod review;
mod run;
mod sandbox;
mod scope;
mod stats;
mod status;
mod summarize;
mod sync;
mod ui;
mod ui_page;
pub(crate) mod worktree;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

pub use error::{CliError, exit};
pub(crate) use paths::{absolute, input_file};

/// Run AI coding agents in clean worktrees and feed each failure to the next try.
///
/// Run AI coding agents in clean git worktrees, check what they changed,
/// and tell the next attempt what went wrong.
#[derive(Debug, Parser)]
#[command(name = "retry-run", version, max_term_width = 100)]
pub struct Cli {
    /// Run as if started in DIR (like `git -C`).
    #[arg(short = 'C', value_name = "DIR", global = true)]
    pub dir: Option<PathBuf>,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    Run(run::RunArgs),
    Demo(demo::DemoArgs),
    Context(context::ContextArgs),
    Report(report::ReportArgs),
    Review(review::ReviewArgs),
    Land(land::LandArgs),
    Ui(ui::UiArgs),
    Stats(stats::StatsArgs),
    Scope(scope::ScopeArgs),
    Diff(diff::DiffArgs),
    Enrich(enrich::EnrichArgs),
    Summarize(summarize::SummarizeArgs),
    Log(log::LogArgs),
    Worktree(worktree::WorktreeArgs),
    Status(status::StatusArgs),
    Inspect(inspect::InspectArgs),
    Clean(clean::CleanArgs),
    Sandbox(sandbox::SandboxArgs),
    Mcp(mcp::McpArgs),
    Agents(agents::AgentsArgs),
    Init(init::InitArgs),
    Completions(completions::CompletionsArgs),
    Man(completions::ManArgs),
    Push(sync::PushArgs),
    #[command(hide = true)]
    JudgeOutput(judge_output::JudgeOutputArgs),
    Pull(sync::PullArgs),
    #[command(hide = true)]
    UiPage(ui_page::UiPageArgs),
    #[command(hide = true)]
    Supervisor(sandbox::SupervisorArgs),
}

/// Parses the command line, runs the command, returns the exit code.
pub fn main() -> i32 {
    let all: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = match Cli::try_parse_from(&all) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { exit::USAGE } else { exit::OK };
        }
    };
    let dir = match &cli.dir {
        Some(d) => d.clone(),
        None => match std::env::current_dir() {
            Ok(d) => d,
            Err(e) => {
                crate::console::errln!("retry-run: error: cannot read the current directory: {e}");
                return exit::ENVIRONMENT;
            }
        },
    };
    if !dir.is_dir() {
        let e =
            CliError::usage(format!("{}: no such directory", dir.display())).with_hint("check the path given to -C");
        for line in e.lines() {
            crate::console::errln!("{}", crate::text::visible(&line));
        }
        return e.code;
    }
    let result = match cli.command {
        Command::Run(args) => run::run(&dir, args),
        Command::Demo(args) => demo::run(&dir, args),
        Command::Context(args) => context::run(&dir, args),
        Command::Report(args) => report::run(&dir, args),
        Command::Review(args) => review::run(&dir, args),
        Command::Land(args) => land::run(&dir, args),
        Command::Ui(args) => ui::run(&dir, args),
        Command::Stats(args) => stats::run(&dir, args),
        Command::Scope(args) => scope::run(&dir, args),
        Command::Diff(args) => diff::run(&dir, args),
        Command::Enrich(args) => enrich::run(&dir, args),
        Command::Summarize(args) => summarize::run(&dir, args),
        Command::Log(args) => log::run(&dir, args),
        Command::Worktree(args) => worktree::run(&dir, args),
        Command::Status(args) => status::run(&dir, args),
        Command::Inspect(args) => inspect::run(&dir, args),
        Command::Clean(args) => clean::run(&dir, args),
        Command::Sandbox(args) => sandbox::run(&dir, args),
        Command::Mcp(args) => mcp::run(&dir, args),
        Command::Agents(args) => agents::run(&dir, args),
        Command::Init(args) => init::run(&dir, args),
        Command::Completions(args) => completions::completions(<Cli as clap::CommandFactory>::command(), args),
        Command::Man(args) => completions::man(<Cli as clap::CommandFactory>::command(), args),
        Command::Push(args) => sync::push(&dir, args),
        Command::JudgeOutput(args) => judge_output::run(&dir, args),
        Command::Pull(args) => sync::pull(&dir, args),
        Command::UiPage(args) => ui_page::run(&dir, args),
        Command::Supervisor(args) => Ok(sandbox::supervise(&args)),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            for line in e.lines() {
                crate::console::errln!("{}", crate::text::visible(&line));
            }
            e.code
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// Every command's one-line `about` fits a line of help; the detail is
    /// in `--help`'s long text and in docs/.
    #[test]
    fn every_about_is_one_short_line() {
        fn walk(cmd: &clap::Command, path: &str, long: &mut Vec<String>) {
            let about = cmd.get_about().map(|a| a.to_string()).unwrap_or_default();
            if about.is_empty() || about.chars().count() >= 80 || about.contains('\n') {
                long.push(format!("{path}: {about:?}"));
            }
            for sub in cmd.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), long);
            }
        }
        let mut long = Vec::new();
        let cli = super::Cli::command();
        walk(&cli, "retry-run", &mut long);
        assert!(long.is_empty(), "abouts of 80 characters or more, or none:\n{}", long.join("\n"));
    }
}
