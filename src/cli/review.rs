//! `retry-run review TASK`: a reviewer's verdict on a task's result
//! (docs/review.md).

use std::path::{Path, PathBuf};

use clap::{ArgGroup, Args};

use super::{CliError, exit};
use crate::review::{CommentArg, Input, ReviewRequest};

/// Approve or reject a task's result; a rejection leads the next round.
#[derive(Debug, Args)]
#[command(
    group(ArgGroup::new("verdict").required(true).multiple(true).args(["approve", "required_change", "from_log", "from_github_pr", "from_file"])),
    after_help = "Examples:\n  retry-run review fix-login --approve\n  retry-run review fix-login --required-change 'Retry the 429 instead of swallowing it' \\\n      --critique-file notes.md --comment src/http.py:40-44 'this hides the 429'\n  retry-run review fix-login --from-log ci.log --check pytest --rerun\n  retry-run review fix-login --from-github-pr 12\n  retry-run review fix-login --from-file review.json"
)]
pub struct ReviewArgs {
    /// The task id (as `retry-run status` lists them).
    pub task: String,
    /// The attempt judged (default: the task's result, its latest
    /// successful attempt).
    #[arg(long, value_name = "N")]
    pub attempt: Option<u32>,
    /// Approve the result.
    #[arg(long, conflicts_with_all = ["required_change", "critique", "critique_file", "comment", "from_log", "from_github_pr", "from_file", "rerun"])]
    pub approve: bool,
    /// Reject it: the one change the next round must make, as one
    /// imperative sentence.
    #[arg(long, value_name = "SENTENCE")]
    pub required_change: Option<String>,
    /// The critique, kept verbatim (with no --critique or --critique-file,
    /// a rejection reads it from stdin when stdin is not a terminal).
    #[arg(long, value_name = "TEXT", conflicts_with = "critique_file")]
    pub critique: Option<String>,
    /// The critique from a file, kept verbatim.
    #[arg(long, value_name = "FILE")]
    pub critique_file: Option<PathBuf>,
    /// A comment on lines of the attempt's diff: `PATH:LINE` or
    /// `PATH:FIRST-LAST`, then its text. Repeatable.
    #[arg(long, num_args = 2, value_names = ["PATH:LINE[-LINE]", "TEXT"], action = clap::ArgAction::Append)]
    pub comment: Vec<String>,
    /// The reviewer (default: git's committer identity, GIT_COMMITTER_NAME
    /// and GIT_COMMITTER_EMAIL over user.name and user.email).
    #[arg(long, value_name = "NAME")]
    pub by: Option<String>,
    /// Reject with a CI log, read as the output of this check.
    #[arg(long, value_name = "FILE", requires = "check", conflicts_with_all = ["critique", "critique_file", "comment"])]
    pub from_log: Option<PathBuf>,
    /// The check (of retry-run.toml) whose output `--from-log` holds.
    #[arg(long, value_name = "NAME", requires = "from_log")]
    pub check: Option<String>,
    /// Read a pull request's reviews, comments and failed checks with `gh`.
    #[arg(long, value_name = "N", conflicts_with_all = ["from_log", "from_file", "required_change", "critique", "critique_file", "comment"])]
    pub from_github_pr: Option<u64>,
    /// Read the verdict from a review file (JSON, docs/review.md).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["from_log", "required_change", "critique", "critique_file", "comment"])]
    pub from_file: Option<PathBuf>,
    /// After a rejection, start the task's next round at once (as `run
    /// --id TASK --again` does; with --json, its events follow the review
    /// on stdout).
    #[arg(long)]
    pub rerun: bool,
    /// The config file (default: retry-run.toml at the repository root).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Print the recorded review as JSON.
    #[arg(long)]
    pub json: bool,
    /// With --rerun: the agent command, as `run` takes it after `--`.
    #[arg(last = true, value_name = "AGENT")]
    pub agent: Vec<String>,
}

pub(super) fn run(dir: &Path, args: ReviewArgs) -> Result<i32, CliError> {
    let req = request(dir, &args)?;
    let recorded = crate::review::review(dir, req)?;
    for w in &recorded.warnings {
        crate::console::errln!("retry-run: warning: {}", crate::text::visible(w));
    }
    if args.json {
        let json = serde_json::to_string(&recorded.review)
            .map_err(|e| CliError::environment(format!("cannot encode the review: {e}")))?;
        crate::console::outln!("{json}");
    } else {
        let line = crate::review::said(&args.task, &recorded.review);
        let line = crate::text::visible(&line);
        if args.rerun { crate::console::errln!("{line}") } else { crate::console::outln!("{line}") }
    }
    if args.rerun && recorded.review.rejected() {
        return super::run::again(dir, &args.task, args.json, args.config.as_deref(), &args.agent);
    }
    Ok(exit::OK)
}

/// The critique of a rejection made with flags: `--critique`, the file
/// `--critique-file` names, or stdin when it is not a terminal; verbatim.
fn critique(dir: &Path, args: &ReviewArgs) -> Result<Option<String>, CliError> {
    use std::io::{IsTerminal, Read};
    if let Some(c) = &args.critique {
        return Ok(Some(c.clone()));
    }
    if let Some(f) = &args.critique_file {
        let path = super::absolute(f, dir);
        return std::fs::read_to_string(&path)
            .map(Some)
            .map_err(|e| CliError::usage(format!("--critique-file {}: cannot read it: {e}", path.display())));
    }
    let stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(None);
    }
    let mut text = String::new();
    stdin
        .lock()
        .read_to_string(&mut text)
        .map_err(|e| CliError::usage(format!("the critique on stdin: cannot read it: {e}")))?;
    Ok(Some(text).filter(|t| !t.trim().is_empty()))
}

/// The request the flags make.
fn request(dir: &Path, args: &ReviewArgs) -> Result<ReviewRequest, CliError> {
    if args.comment.len() % 2 == 1 {
        return Err(CliError::usage("--comment takes a place and its text: --comment src/app.py:40-44 'why'"));
    }
    let input = if args.approve {
        Input::Approve
    } else if let Some(file) = &args.from_log {
        Input::FromLog {
            file: super::absolute(file, dir),
            check: args.check.clone().unwrap_or_default(),
            required_change: args.required_change.clone(),
        }
    } else if let Some(number) = args.from_github_pr {
        Input::FromGithubPr { number }
    } else if let Some(path) = &args.from_file {
        Input::FromFile { path: super::absolute(path, dir) }
    } else {
        let comments = args
            .comment
            .chunks(2)
            .map(|c| CommentArg { spec: c[0].clone(), text: c.get(1).cloned().unwrap_or_default() })
            .collect();
        Input::Reject {
            required_change: args.required_change.clone().unwrap_or_default(),
            critique: critique(dir, args)?,
            comments,
        }
    };
    Ok(ReviewRequest {
        task: args.task.clone(),
        attempt: args.attempt,
        by: args.by.clone(),
        input,
        config_path: args.config.as_ref().map(|p| super::absolute(p, dir)),
        channel: crate::model::Channel::Cli,
    })
}
