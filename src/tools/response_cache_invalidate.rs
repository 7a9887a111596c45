//! `response_cache_invalidate`: drop cached results that depend on paths just written.
//!
//! For hooks and agents after Edit/Write/shell commands: the next get would notice the change
//! anyway, but invalidating at write time frees the space and keeps stats honest.

use super::{Refrain, internal, reply};
use crate::results;
use rmcp::handler::server::{tool::schema_for_output, wrapper::Parameters};
use rmcp::schemars::{self, JsonSchema};
use rmcp::{ErrorData, model::CallToolResult, tool, tool_router};
use serde::{Deserialize, Serialize};

/// Parameters of `response_cache_invalidate`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResponseCacheInvalidateParams {
    /// Paths written or deleted (relative to the project root or absolute); a directory
    /// invalidates everything under it.
    pub paths: Vec<String>,
}

/// One invalidated entry.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Invalidated {
    /// The entry's exact key.
    pub key: String,
    /// The written path that invalidated it.
    pub path: String,
}

/// Output of `response_cache_invalidate`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ResponseCacheInvalidateOutput {
    /// Entries removed.
    pub invalidated: Vec<Invalidated>,
}

#[tool_router(router = response_cache_invalidate_router, vis = "pub(crate)")]
impl Refrain {
    /// After writing files (Edit, Write, a shell command), drop every cached result that depends
    /// on them.
    #[tool(
        name = "response_cache_invalidate",
        output_schema = schema_for_output::<ResponseCacheInvalidateOutput>(),
        annotations(read_only_hint = false, idempotent_hint = true, destructive_hint = true, open_world_hint = false)
    )]
    pub async fn response_cache_invalidate(
        &self,
        Parameters(p): Parameters<ResponseCacheInvalidateParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let removed = results::invalidate_paths(&self.app, &p.paths).await.map_err(|e| internal(e.to_string()))?;
        let out = ResponseCacheInvalidateOutput {
            invalidated: removed.into_iter().map(|(key, path)| Invalidated { key, path }).collect(),
        };
        reply(format!("{} cached results invalidated", out.invalidated.len()), &out)
    }
}
