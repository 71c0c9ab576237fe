//! `retry-run land TASK`: the task's result brought onto a branch, the
//! gates run again on what lands when the branch moved (docs/commands.md,
//! docs/review.md).

use std::path::{Path, PathBuf};

use clap::Args;

use super::{CliError, exit};
use crate::run::land::{LandEnded, LandError, LandOptions};

/// Bring a task's result onto a branch; the gates run again on a replay.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  retry-run land fix-login\n  retry-run land fix-login --onto release-2.1 --merge\n  retry-run land fix-login --onto fix-login-pr --push origin --pr"
)]
pub struct LandArgs {
    /// The task id (as `retry-run status` lists them).
    pub task: String,
    /// The local branch to land onto (default: the current branch).
    #[arg(long, value_name = "BRANCH")]
    pub onto: Option<String>,
    /// When the branch moved past the task's base: a merge commit of its
    /// tip and the task's commit, rather than one squashed commit.
    #[arg(long)]
    pub merge: bool,
    /// Push the updated branch to REMOTE (`git push REMOTE BRANCH`).
    #[arg(long, value_name = "REMOTE")]
    pub push: Option<String>,
    /// Open a pull request for the branch with `gh pr create` (its body
    /// the top of `retry-run report`); pushes to --push's remote, else
    /// to origin.
    #[arg(long)]
    pub pr: bool,
    /// Keep the task's branch `retry-run/<task>` (removed by default).
    #[arg(long)]
    pub keep_branch: bool,
    /// The config file (default: retry-run.toml at the repository root).
    #[arg(long, value_name = "PATH")]
    pub config: Option<PathBuf>,
}

pub(super) fn run(dir: &Path, args: LandArgs) -> Result<i32, CliError> {
    let opts = LandOptions {
        task: args.task,
        onto: args.onto,
        merge: args.merge,
        push: args.push,
        pr: args.pr,
        keep_branch: args.keep_branch,
        config_path: args.config,
    };
    match crate::run::land::land(dir, &opts)? {
        LandEnded::Rejected { text, .. } => {
            crate::console::errln!("{text}");
            Ok(exit::FOUND)
        }
        LandEnded::Landed { landed, notes, completed } => {
            let l = &landed;
            let short = crate::outcome::land::short(&l.commit);
            if completed {
                crate::console::outln!(
                    "task {} had landed on {} as {short} before it was stopped; the land is recorded now",
                    opts.task,
                    l.onto
                );
            } else {
                crate::console::outln!("task {} landed on {}: {short} ({})", opts.task, l.onto, l.how.as_str());
            }
            if l.replayed && !l.gates.is_empty() {
                let from = crate::outcome::land::short(&l.from);
                crate::console::outln!("  replayed onto {from}; gates: {}", crate::text::visible(&l.gates.join(", ")));
            }
            for n in &notes {
                crate::console::outln!("  {}", crate::text::visible(n));
            }
            if let Some(r) = &l.pushed {
                crate::console::outln!("  pushed: {r} {}", l.onto);
            }
            if let Some(pr) = &l.pr {
                crate::console::outln!("  pull request: {}", crate::text::visible(pr));
            }
            Ok(exit::OK)
        }
    }
}

impl From<LandError> for CliError {
    fn from(e: LandError) -> Self {
        let code = if e.is_usage() { exit::USAGE } else { exit::ENVIRONMENT };
        let hint = e.hint().filter(|h| !h.is_empty());
        CliError::of(code, e, hint)
    }
}
