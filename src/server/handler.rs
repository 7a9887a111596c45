//! The `ServerHandler` every transport serves.
//!
//! It answers `initialize` from static data (so it is instant, model or not), lists the tools from
//! the router, and sends each tool call over the `Link`: straight to the local tools when this
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
pub const INSTRUCTIONS: &str = "refrain remembers work for this project so you don't pay for it twice.\n\
- Before planning a task, call plan_lookup with the task text; on a hit, follow the returned plan and later report with plan_feedback.\n\
- After finishing a multi-step task, call plan_store with the steps you ran so the next similar task can reuse them.\n\
- Before re-running a read-only tool (file read, grep, web fetch/search, docs lookup), call response_cache_get; after running one, response_cache_put with the files it depends on. If a result served by meaning turns out not to answer your query, say so with response_cache_feedback.\n\
- When a provider's prompt cache misses unexpectedly, call explain_cache_break; before compacting context, compact_preview.\n\
- cache_stats shows what is stored and saved; cache_evict removes entries.\n\
- To see what their agents wasted and why (cache breaks, repeated reads, repeated tasks) and what refrain saved, point the user to `refrain report` in a terminal, or `refrain dashboard`, which prints a local URL to open in a browser.";

/// The MCP handler: a link to the store plus the static tool list.
#[derive(Clone)]
pub struct Handler {
    link: Arc<Link>,
    tools: Arc<Vec<Tool>>,
}

impl Handler {
    /// A handler over a link.
    pub fn new(link: Arc<Link>) -> Handler {
        Handler { link, tools: Arc::new(tools::schema::tools()) }
    }
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("refrain", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
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
