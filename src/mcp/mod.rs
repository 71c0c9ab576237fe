//! The self-check server (`retry-run mcp`, docs/mcp.md): an MCP server on
//! stdio that the agent starts inside its sandbox, whose tools let it run
//! the task's gates on its work before it finishes, read what earlier
//! attempts did, and read the task's scope and targets. It answers nothing
//! itself: each call goes through [`channel`] to the run outside the
//! sandbox, which runs the gates confined as the real ones and records the
//! call.
//!
//! - [`tools`]: the tools, their schemas, and a call's arguments checked;
//! - [`channel`]: the files a call and its answer cross the sandbox by;
//! - [`server`]: the MCP protocol on stdio (rmcp).

pub(crate) mod channel;
pub(crate) mod server;
pub(crate) mod tools;
