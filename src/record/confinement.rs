//! How the record says a task and its processes were confined: the
//! sandbox's own report types (`retry_run_sandbox::policy::reported`), which the
//! record's events carry as they are.

pub(crate) use crate::sandbox::policy::reported::{ConfinedRecord, ModelEndpoint, SandboxPlan, word};
