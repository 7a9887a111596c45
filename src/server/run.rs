//! Running one tool call in the owner process: on its own pool thread, under the request's time
//! and memory budget.
//!
//! Tools mix async waits with blocking work (sled reads, writes and flushes, file hashing, tree
//! walks, embedding, HNSW search and insert, regex redaction of large bodies). Each call is driven
//! by `Handle::block_on` on a thread of `threads`' pool, so none of that ever occupies an async
//! worker and the protocol keeps answering. A call still running after `threads::SLOW_AFTER`
//! drops to the lowest CPU priority, so a slow request never delays the cheap ones beside it
//! (its thread then retires). The thread also carries the call's `budget::Scope`, which the
//! growing pure functions consult.
//!
//! Past its deadline a call is answered with an error at once. Its thread is abandoned, not
//! killed: it stops at the next budget check, and the store refuses its writes from then on, so
//! an entry is written whole or not at all. A panic inside a tool is an internal error for that
//! call only.

use crate::budget::{self, Exceeded, Limits};
use crate::config::Config;
use crate::threads;
use crate::tools::Refrain;
use rmcp::ErrorData;
use rmcp::RoleServer;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock as Content};
use rmcp::service::RequestContext;

/// The request limits set in the configuration.
pub fn limits(config: &Config) -> Limits {
    Limits {
        memory_bytes: config.server.request_memory_bytes,
        timeout: std::time::Duration::from_millis(config.server.request_timeout_ms),
    }
}

/// Calls a tool on the blocking pool under `limits`.
pub async fn call(
    refrain: Refrain,
    request: CallToolRequestParams,
    context: RequestContext<RoleServer>,
    limits: Limits,
) -> Result<CallToolResponse, ErrorData> {
    let tool = request.name.to_string();
    let handle = tokio::runtime::Handle::current();
    let slow_at = std::time::Instant::now().checked_add(threads::SLOW_AFTER);
    let task = threads::run(
        move || {
            let _scope = budget::Scope::enter(limits);
            let out = handle.block_on(refrain.tool_router.call(ToolCallContext::new(&refrain, request, context)));
            (out, budget::exceeded())
        },
        slow_at,
    );
    match tokio::time::timeout(limits.timeout, task).await {
        Ok(Ok((out, None))) => out,
        Ok(Ok((_, Some(over)))) => Ok(over_budget(&tool, over, &limits)),
        Ok(Err(e)) => {
            let msg = format!("{tool} failed inside refrain ({e}); the server goes on serving, please report this");
            tracing::error!(tool, error = %e, "tool call failed inside refrain");
            Err(ErrorData::internal_error(msg, None))
        }
        Err(_) => {
            tracing::warn!(tool, timeout_ms = limits.timeout.as_millis() as u64, "tool call abandoned at its deadline");
            Ok(over_budget(&tool, Exceeded::Time("the call as a whole"), &limits))
        }
    }
}

fn over_budget(tool: &str, over: Exceeded, limits: &Limits) -> CallToolResponse {
    tracing::warn!(tool, limit = ?over, "tool call over its budget");
    let text = format!("{tool}: {}", over.message(limits));
    CallToolResponse::Complete(CallToolResult::error(vec![Content::text(text)]))
}
