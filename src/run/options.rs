//! What `run` was asked to do ([`Options`], the command line's), where a
//! run of a task sits ([`Placement`]: alone, among other tasks, or one
//! lane of a task), and how it ended ([`TaskRan`]).

use std::path::PathBuf;

use super::Ending;
use super::lanes::shared::LaneRun;
use super::progress::{Mode, Progress, Shared};

/// What `run` was asked to do.
#[derive(Debug, Clone, Default)]
pub(crate) struct Options {
    pub config_path: Option<PathBuf>,
    pub task_file: Option<PathBuf>,
    pub task_text: Option<String>,
    pub id: Option<String>,
    pub base: Option<String>,
    pub max_attempts: Option<u32>,
    /// `--target`: added to the config's `targets`.
    pub targets: Vec<String>,
    pub again: bool,
    pub refresh_base: bool,
    /// Run the checks on the base again instead of taking them from the
    /// cache of earlier runs (`--fresh-baseline`).
    pub fresh_baseline: bool,
    /// `--allow-new-target`: a target no check reports on the base does
    /// not stop the run (the agent is to write its test).
    pub allow_new_target: bool,
    /// The agent command after `--`, overriding `agent.command`.
    pub agent: Vec<String>,
    /// `--preset`: over `agent.preset`.
    pub preset: Option<String>,
    /// `--max-cost` (USD) and `--max-duration`: over `retry.max_cost_usd`
    /// and `retry.max_duration`.
    pub max_cost: Option<f64>,
    pub max_duration: Option<String>,
    pub json: bool,
    pub quiet: bool,
    /// `--remote`: share the task through this git remote, under a lease.
    pub remote: Option<String>,
    /// `--lease`: how long the lease holds without a renewal.
    pub lease: Option<std::time::Duration>,
    /// `--lanes`: attempt chains of the task at once.
    pub lanes: Option<u32>,
    /// `--lane-preset`: each lane's agent preset, by lane.
    pub lane_presets: Vec<String>,
    /// `--choose`: over `retry.choose`.
    pub choose: Option<crate::config::lanes::ChooseMode>,
    /// `-j`: how many lanes run at once.
    pub jobs: usize,
}

/// Where a run of a task sits.
#[derive(Debug, Clone)]
pub(crate) enum Placement {
    /// The only task of this `run`.
    Alone,
    /// One of several tasks (`run -j`): progress lines and JSON events
    /// carry the task's id.
    Among(Shared),
    /// One lane of a task (`run --lanes`), its lines beside the other
    /// lanes'.
    Lane(LaneRun, Shared),
}

impl Placement {
    /// The label the run's JSON events carry: the record's id, when other
    /// runs print beside this one.
    pub(crate) fn label(&self, id: &str) -> Option<String> {
        (!matches!(self, Placement::Alone)).then(|| id.to_string())
    }

    /// How a run of task `id` here shows its progress; built once per run.
    pub(crate) fn progress(&self, opts: &Options, id: &str) -> Progress {
        let mode = Mode::pick(opts.json, opts.quiet);
        match self {
            Placement::Alone => Progress::new(mode),
            Placement::Among(shared) => Progress::among(mode, id, shared),
            Placement::Lane(l, shared) => Progress::among(mode, &format!("{} lane {}", l.task, l.lane), shared),
        }
    }
}

/// How a run of one task ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TaskRan {
    pub ending: Ending,
    /// The task had ended before this run, which did nothing.
    pub earlier: bool,
}
