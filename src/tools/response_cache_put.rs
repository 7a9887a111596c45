//! `response_cache_put`: store a read-only tool's result with what it depends on.

use super::{Refrain, fail, internal, reply};
use crate::results::{self, PutOutcome, PutRequest, fresh};
use rmcp::handler::server::{tool::schema_for_output, wrapper::Parameters};
use rmcp::schemars::{self, JsonSchema};
use rmcp::{ErrorData, model::CallToolResult, tool, tool_router};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Parameters of `response_cache_put`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResponseCachePutParams {
    /// The tool that produced the result (e.g. `Read`, `Grep`, `WebSearch`, `mcp__github__get_issue`).
    pub tool: String,
    /// The tool's arguments exactly as called (object key order does not matter).
    #[serde(default)]
    pub args: Value,
    /// The result to cache: text or any JSON.
    pub result: Value,
    /// A natural-language query (web search, question, docs lookup) so later calls can find the
    /// result by meaning within the same tool and namespace.
    #[serde(default)]
    pub query: Option<String>,
    /// Namespace separating unrelated callers (e.g. an MCP server name); default `default`.
    #[serde(default)]
    pub namespace: Option<String>,
    /// Whether the tool only reads. Known read-only tools (Read, Grep, Glob, WebFetch...) are
    /// recognised without it; tools that write are never cached.
    #[serde(default)]
    pub read_only: Option<bool>,
    /// True when the tool call failed: errors are never cached.
    #[serde(default)]
    pub is_error: bool,
    /// Files the result depends on (relative to the project root); a change makes it stale.
    /// Read's `file_path` and Grep/Glob's `path` are added automatically.
    #[serde(default)]
    pub files: Vec<String>,
    /// Directories whose whole tree the result depends on (glob/grep-like results).
    #[serde(default)]
    pub trees: Vec<String>,
    /// True when the result depends on the current git commit.
    #[serde(default)]
    pub git_head: bool,
    /// Time to live in seconds (default: per tool; file tools long, web tools short).
    #[serde(default)]
    pub ttl_secs: Option<u64>,
}

/// Output of `response_cache_put`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ResponseCachePutOutput {
    /// Whether the result was stored.
    pub stored: bool,
    /// Why it was or was not stored.
    pub reason: String,
    /// The exact key (pass it to `cache_evict` to remove the entry).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// Stored size in bytes.
    pub bytes: u64,
    /// Time to live applied, in seconds.
    pub ttl_secs: u64,
    /// Dependencies recorded (project-relative paths; `git HEAD`).
    pub depends_on: Vec<String>,
    /// Secrets redacted before storing.
    pub redactions: u32,
    /// Whether the query can be found by meaning (or why not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub semantic: Option<String>,
    /// Older entries evicted to stay under the size limit.
    pub evicted: usize,
}

#[tool_router(router = response_cache_put_router, vis = "pub(crate)")]
impl Refrain {
    /// Store the result of a read-only tool call (file read, grep, web fetch/search, read-only MCP
    /// tool, LLM answer) with the files it depends on, so response_cache_get can serve it later.
    /// Secrets are redacted first; errors and tools that write are never stored.
    #[tool(
        name = "response_cache_put",
        output_schema = schema_for_output::<ResponseCachePutOutput>(),
        annotations(read_only_hint = false, idempotent_hint = true, destructive_hint = false, open_world_hint = false)
    )]
    pub async fn response_cache_put(
        &self,
        Parameters(p): Parameters<ResponseCachePutParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let req = PutRequest {
            namespace: p.namespace.unwrap_or_default(),
            tool: p.tool,
            args: p.args,
            result: p.result,
            query: p.query,
            read_only: p.read_only,
            is_error: p.is_error,
            files: p.files,
            trees: p.trees,
            git_head: p.git_head,
            ttl_secs: p.ttl_secs,
        };
        let tool = req.tool.clone();
        let root = self.app.project.root.clone();
        let outcome = match results::put(&self.app, req).await {
            Ok(o) => o,
            Err(e) if e.is_caller_fixable() => return fail(e.to_string()),
            Err(e) => return Err(internal(e.to_string())),
        };
        let out = match outcome {
            PutOutcome::Stored { key, bytes, ttl_secs, deps, redactions, semantic, evicted, policy } => {
                ResponseCachePutOutput {
                    stored: true,
                    reason: policy,
                    key: Some(key),
                    bytes,
                    ttl_secs,
                    depends_on: deps.iter().map(|d| describe(&root, d)).collect(),
                    redactions,
                    semantic: semantic.map(|s| s.err().unwrap_or_else(|| "indexed for lookups by meaning".into())),
                    evicted,
                }
            }
            PutOutcome::Skipped { reason } => ResponseCachePutOutput {
                stored: false,
                reason,
                key: None,
                bytes: 0,
                ttl_secs: 0,
                depends_on: Vec::new(),
                redactions: 0,
                semantic: None,
                evicted: 0,
            },
        };
        let text = if out.stored {
            format!(
                "stored {tool} result ({} bytes, {} dependencies, {} secrets redacted)",
                out.bytes,
                out.depends_on.len(),
                out.redactions
            )
        } else {
            format!("not stored: {}", out.reason)
        };
        reply(text, &out)
    }
}

/// A dependency in words, relative to the project root.
pub fn describe(root: &std::path::Path, d: &fresh::Dep) -> String {
    match d {
        fresh::Dep::File { path, exists: false, .. } => format!("{} (absent)", fresh::display(root, path)),
        fresh::Dep::File { path, .. } => fresh::display(root, path),
        fresh::Dep::Tree { path, files, .. } => format!("{}/ ({files} files)", fresh::display(root, path)),
        fresh::Dep::GitHead { commit, .. } => format!("git HEAD {}", commit.get(..12).unwrap_or(commit)),
    }
}
