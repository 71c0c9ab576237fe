//! `[[lane]]` and the lane keys of `[retry]` (`lanes`, `choose`,
//! `share_feedback`): several attempt chains of one task at once
//! (`run --lanes`, docs/lanes.md).

use serde::{Deserialize, Serialize};

use super::{CommandSpec, PresetName};

/// The most lanes one task may run.
pub(crate) const MAX_LANES: u32 = 16;

/// One `[[lane]]` table: the agent of a lane, over the task's (`[agent]`).
/// Lane 1 takes the first table, lane 2 the second; a lane without a
/// table uses the task's agent.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct LaneConfig {
    /// A built-in preset for this lane.
    pub preset: Option<PresetName>,
    /// A command for this lane (over the preset's).
    pub command: Option<CommandSpec>,
    /// Appended to the lane's agent command line (its model, say).
    pub args: Vec<String>,
}

/// `retry.choose`: which lane wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChooseMode {
    /// The first lane whose attempt passes every gate; the others are
    /// stopped.
    #[default]
    First,
    /// Every lane runs to its end; the gates choose among those that
    /// passed.
    All,
}
