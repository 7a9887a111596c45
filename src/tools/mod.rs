//! The MCP tools: one file per tool, each a thin adapter from typed params to the domain.
//!
//! Every tool file adds its own `#[tool_router(router = <name>_router)]` block to `Refrain`;
//! `router()` joins them. rmcp lists tools sorted by name, so the list is the same every time
//! (agents' prompt caches depend on it). Errors an agent can fix come back as an `isError` result
//! whose text says how to fix it; our own bugs are internal errors and are logged.

pub mod cache_evict;
pub mod cache_stats;
pub mod compact_preview;
pub mod explain_cache_break;
pub mod plan_feedback;
pub mod plan_list;
pub mod plan_lookup;
pub mod plan_review;
pub mod plan_store;
pub mod response_cache_feedback;
pub mod response_cache_get;
pub mod response_cache_invalidate;
pub mod response_cache_put;
pub mod schema;
pub mod session_event;
pub mod surface;

use crate::app::App;
use rmcp::ErrorData;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{CallToolResult, ContentBlock as Content};
use serde::Serialize;

/// The tool host: the app handle plus the joined tool router.
#[derive(Clone)]
pub struct Refrain {
    /// The project's state.
    pub app: App,
    /// Every registered tool.
    pub tool_router: ToolRouter<Refrain>,
}

impl Refrain {
    /// A tool host for one project.
    pub fn new(app: App) -> Refrain {
        Refrain { app, tool_router: router() }
    }
}

/// Every tool refrain registers. Register only tools that work.
pub fn router() -> ToolRouter<Refrain> {
    Refrain::cache_stats_router()
        + Refrain::cache_evict_router()
        + Refrain::response_cache_get_router()
        + Refrain::response_cache_feedback_router()
        + Refrain::response_cache_put_router()
        + Refrain::response_cache_invalidate_router()
        + Refrain::explain_cache_break_router()
        + Refrain::compact_preview_router()
        + Refrain::plan_lookup_router()
        + Refrain::plan_store_router()
        + Refrain::plan_feedback_router()
        + Refrain::plan_list_router()
        + Refrain::plan_review_router()
        + Refrain::session_event_router()
}

/// A successful result: a short human text plus the structured output.
pub fn reply<T: Serialize>(text: impl Into<String>, out: &T) -> Result<CallToolResult, ErrorData> {
    let value = serde_json::to_value(out).map_err(|e| internal(format!("cannot serialise tool output: {e}")))?;
    let mut result = CallToolResult::success(vec![Content::text(text.into())]);
    result.structured_content = Some(value);
    Ok(result)
}

/// Records in the savings ledger what a reply puts into the agent's context, and returns it.
/// Agents show the model either the text or the structured output (Claude Code and Codex the
/// structured one, Gemini CLI and opencode the text), so the larger of the two is counted; with
/// `carried` (a served result, which the tool's own run would have put there anyway) only the
/// envelope around it is. The line is counted and written after the answer leaves
/// (`ledger::record_later`); a ledger that cannot be written costs the answer nothing.
pub fn ledgered(
    app: &App,
    kind: crate::ledger::Kind,
    subject: &str,
    carried: Option<&serde_json::Value>,
    result: Result<CallToolResult, ErrorData>,
) -> Result<CallToolResult, ErrorData> {
    let Ok(r) = &result else { return result };
    // Serialised here (cheap), counted on the ledger's thread (the tokenizer is not).
    let texts: Vec<String> = match (carried, &r.structured_content) {
        // A served result: only its envelope is refrain's (counting the result itself twice
        // would cost a large hit its speed).
        (Some(_), Some(serde_json::Value::Object(o))) => {
            let mut envelope = o.clone();
            envelope.remove("result");
            vec![serde_json::Value::Object(envelope).to_string()]
        }
        _ => {
            let text: String = r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.as_str())).collect();
            let structured = r.structured_content.as_ref().map(|v| v.to_string()).unwrap_or_default();
            vec![text, structured]
        }
    };
    let subject = subject.to_string();
    crate::ledger::record_later(&app.store, move || {
        let mut line = crate::ledger::Line::counted("mcp", None, kind, "", "", &subject);
        line.added = texts.iter().map(|t| crate::tokens::count(t)).max().unwrap_or(0);
        line
    });
    result
}

/// A failure the agent can fix: an `isError` result with a sentence saying how.
pub fn fail(text: impl Into<String>) -> Result<CallToolResult, ErrorData> {
    Ok(CallToolResult::error(vec![Content::text(text.into())]))
}

/// Our own bug or an infrastructure failure: logged, returned as an internal error.
pub fn internal(msg: impl Into<String>) -> ErrorData {
    let msg = msg.into();
    tracing::error!(error = %msg, "internal error");
    ErrorData::internal_error(msg, None)
}
