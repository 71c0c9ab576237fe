//! The MCP protocol on stdio, by rmcp: the tools of [`super::tools`]
//! listed, and each call sent through [`super::channel`] to the run
//! outside the sandbox, whose answer becomes the tool's result (an error
//! the agent reads as a tool error, never a protocol error). Calls may
//! arrive together; each waits on its own thread, and the run refuses a
//! second `run_checks` while one is under way.

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

use super::channel::{self, ToolCall};
use super::tools;

/// What the server tells the agent when it connects.
pub(crate) const INSTRUCTIONS: &str = "retry-run's self-check tools for this attempt. Call `run_checks` before you finish to run the task's gates (checks judged against the base, targets, test integrity, scope) on your work as it is now; it is advisory and capped per attempt, and the real gates run again after you exit. `previous_attempts` tells what earlier attempts did and why they failed; `task` gives the task, its targets, its scope and its gates.";

struct SelfChecks {
    channel: Arc<PathBuf>,
}

impl ServerHandler for SelfChecks {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("retry-run", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let listed = tools::tools()
            .into_iter()
            .map(|t| {
                let schema: JsonObject = match t.input_schema {
                    serde_json::Value::Object(m) => m,
                    _ => JsonObject::new(),
                };
                Tool::new(t.name, t.description, Arc::new(schema))
            })
            .collect();
        Ok(ListToolsResult::with_all_items(listed))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let req = ToolCall {
            tool: request.name.to_string(),
            arguments: request.arguments.map(serde_json::Value::Object).unwrap_or(serde_json::Value::Null),
        };
        let dir = Arc::clone(&self.channel);
        let answer = tokio::task::spawn_blocking(move || channel::ask(&dir, &req))
            .await
            .map_err(|e| format!("the call was lost: {e}"))
            .and_then(|asked| asked.map_err(|e| e.to_string()))
            .unwrap_or_else(channel::Answer::error);
        let content = vec![ContentBlock::text(answer.text)];
        Ok(if answer.is_error { CallToolResult::error(content) } else { CallToolResult::success(content) }.into())
    }
}

/// Serves MCP on stdin and stdout until stdin closes, each call answered
/// through `channel`.
pub(crate) fn serve(channel: PathBuf) -> Result<(), ServeError> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(ServeError::Runtime)?;
    rt.block_on(async {
        let service = SelfChecks { channel: Arc::new(channel) }
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| ServeError::Handshake(e.to_string()))?;
        service.waiting().await.map_err(|e| ServeError::Stopped(e.to_string()))?;
        Ok(())
    })
}

/// Why the server stopped before its input closed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ServeError {
    #[error("cannot start the server's runtime: {0}")]
    Runtime(std::io::Error),
    #[error("the MCP handshake failed: {0}")]
    Handshake(String),
    #[error("the MCP server stopped: {0}")]
    Stopped(String),
}
