//! The `ServerHandler` every transport serves.
//!
//! It answers `initialize` from static data (so it is instant, model or not), lists the tools
//! `server.tools` selects (`tools::surface`), and sends each tool call over the `Link`: straight to the local tools when this
//! process owns the store, or to the owner process otherwise.

use super::link::Link;
use crate::tools;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use std::sync::Arc;

/// What the agent reads at `initialize`: when to call which tool.
pub const INSTRUCTIONS: &str = tools::surface::INSTRUCTIONS;

/// The MCP handler: a link to the store plus the static tool list.
#[derive(Clone)]
pub struct Handler {
    link: Arc<Link>,
    tools: Arc<Vec<Tool>>,
}

impl Handler {
    /// A handler over a link, listing the tools its configuration selects (`server.tools`; a
    /// name refrain does not know was refused at start, so here it falls back to the default).
    pub fn new(link: Arc<Link>) -> Handler {
        let selection = tools::surface::Selection::parse(&link.config().server.tools)
            .unwrap_or_else(|_| tools::surface::Selection::default_set());
        Handler { link, tools: Arc::new(tools::surface::listed(&selection)) }
    }
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        let info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("refrain", env!("CARGO_PKG_VERSION")));
        if self.link.config().server.instructions { info.with_instructions(INSTRUCTIONS) } else { info }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult { tools: self.tools.as_ref().clone(), ..Default::default() })
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.link.call_tool(request, Some(context)).await
    }
}
