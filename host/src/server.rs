//! The MCP face of Signpost: an rmcp [`ServerHandler`] per session.
//!
//! Each MCP session (one stdio connection; one HTTP session later) gets its
//! own [`History`], so the policy sees what *this* agent did. Tool calls run
//! on tokio's blocking pool: policy calls are synchronous and bounded by the
//! policy deadline, and WASI host functions must not run on an async worker.

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};

use crate::pipeline::Signpost;
use crate::session::History;
use crate::tools::TOOL_NAMES;

const INSTRUCTIONS: &str = "Signpost serves a code graph. Start with resolve (a name) or search (words) to \
get 40-hex ids, then describe an id or walk its neighbors. Every result carries `hints`: actionable ones are \
complete calls you can send as they are. Text results start with [state_tag]; `→ next:` lines are those calls.";

/// One MCP session's handler.
#[derive(Clone)]
pub struct Session {
    signpost: Arc<Signpost>,
    history: Arc<Mutex<History>>,
}

impl Session {
    /// A new session with an empty history.
    pub fn new(signpost: Arc<Signpost>) -> Self {
        Session { signpost, history: Arc::new(Mutex::new(History::default())) }
    }
}

impl ServerHandler for Session {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("signpost", env!("CARGO_PKG_VERSION")).with_title("Signpost"))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.signpost.tools().to_vec()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.signpost.tools().iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let name = request.name.to_string();
        if !TOOL_NAMES.contains(&name.as_str()) {
            return Err(McpError::invalid_params(
                format!("unknown tool `{}`; tools: {}", crate::clip(&name), TOOL_NAMES.join(", ")),
                None,
            ));
        }
        let args = request.arguments.unwrap_or_default();
        let (signpost, history) = (self.signpost.clone(), self.history.clone());
        let response = tokio::task::spawn_blocking(move || signpost.call(&name, args, &history))
            .await
            .map_err(|e| McpError::internal_error(format!("tool call failed: {e}"), None))?;
        let content = vec![ContentBlock::text(response.text)];
        let mut result =
            if response.is_error { CallToolResult::error(content) } else { CallToolResult::success(content) };
        result.structured_content = Some(response.structured);
        Ok(result.into())
    }
}
