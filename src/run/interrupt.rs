//! Whether the run is to stop: SIGINT or SIGTERM came, or the lanes of
//! this run's task were told to stop. Every phase asks between its steps.

use super::RunError;

/// `Err(Interrupted)` once retry-run got SIGINT or SIGTERM;
/// `Err(LaneStopped)` once this lane's task stopped its lanes.
pub(super) fn stop_if_interrupted(task: &str) -> Result<(), RunError> {
    match crate::process::interrupted() {
        Some(signal) => Err(RunError::Interrupted {
            task: task.to_string(),
            signal,
            resume: crate::outcome::resume::resume_command(task, &[], &[]),
        }),
        None if crate::process::lane_stopped() => Err(RunError::LaneStopped { task: task.to_string() }),
        None => Ok(()),
    }
}
