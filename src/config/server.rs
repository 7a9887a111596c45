//! Settings for transports, the store location and agent hooks.

use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Transports and request limits.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    /// Largest JSON-RPC message accepted, in bytes (stdio, HTTP and the owner socket).
    pub max_message_bytes: usize,
    /// Bearer token required on HTTP; mandatory when binding a non-loopback address.
    pub token: Option<String>,
    /// Extra Origin values accepted on HTTP besides loopback origins (e.g. `https://app.example.com`).
    pub allowed_origins: Vec<String>,
    /// Extra Host names accepted on HTTP besides loopback names and the address the server listens
    /// on (e.g. a DNS name in front of a non-loopback bind).
    pub allowed_hosts: Vec<String>,
    /// Log to this file instead of stderr.
    pub log_file: Option<PathBuf>,
    /// Milliseconds a tool call may run before it is answered with an error and abandoned; a
    /// follower waits this long (plus a moment) for the owner process before saying it is stuck.
    pub request_timeout_ms: u64,
    /// Bytes of intermediate data one tool call may build (extracted templates, hydrated plans,
    /// redacted text, parsed transcripts, compaction output) before it is refused.
    pub request_memory_bytes: u64,
    /// The tools listed to agents: `default` (plan_lookup, plan_store, plan_feedback,
    /// response_cache_get, explain_cache_break, compact_preview, with short schemas), `all` (every
    /// tool, full schemas), or tool names, in any mix. Every listed tool costs tokens on each
    /// request of agents that send tool definitions; unlisted tools stay callable by name.
    pub tools: Vec<String>,
    /// Send the server's one-line instructions at `initialize` (which tool holds plans, which
    /// results). Off by default: Claude Code adds them to every request even with refrain's tools
    /// deferred, and the tool names, their descriptions and the hooks already say it.
    pub instructions: bool,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            max_message_bytes: 8 * 1024 * 1024,
            token: None,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            log_file: None,
            request_timeout_ms: crate::budget::DEFAULT_TIMEOUT.as_millis() as u64,
            request_memory_bytes: crate::budget::DEFAULT_BYTES,
            tools: vec!["default".to_string()],
            instructions: false,
        }
    }
}

/// Where stores live.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct StoreConfig {
    /// Root directory for all projects' stores and the model files (default: the user's data dir).
    pub home: Option<PathBuf>,
    /// Largest store size on disk, in bytes, before puts are refused (0: no limit).
    pub max_store_bytes: u64,
}

/// Agent hook behaviour.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct HooksConfig {
    /// Serve fresh cached results for WebFetch/WebSearch instead of running the tool.
    pub serve_cached_network_reads: bool,
    /// Milliseconds a hook may spend before it gives up quietly.
    pub timeout_ms: u64,
    /// MCP tools whose results the post-tool hook records as read-only, besides those whose name
    /// starts with a read verb (get, list, read, search, …): `mcp__server__tool` or `mcp__server__*`.
    pub read_only_mcp_tools: Vec<String>,
    /// Answer a repeated read of an unchanged file still in the agent's context with a short note
    /// (or only the diff when it changed a little) instead of the full output.
    pub read_dedup: bool,
    /// Lowest score of the best near plan at which the prompt hook shows the agent a short block
    /// of near plans (possibly unrelated, for it to take or ignore) when no plan was served; above
    /// 1 shows none. The default was set on the development split (see docs/plans.md).
    pub suggest_floor: f32,
    /// The prompt hook offers blocks of near plans in a project while its agent takes at least
    /// one plan in every this many blocks offered (`plan_lookup` with `plan_id`); with none taken
    /// it stops after this many, until one is. 0 never stops.
    pub suggest_per_take: u64,
}

impl Default for HooksConfig {
    fn default() -> Self {
        Self {
            serve_cached_network_reads: false,
            timeout_ms: 2000,
            read_only_mcp_tools: Vec::new(),
            read_dedup: true,
            suggest_floor: SUGGEST_FLOOR,
            suggest_per_take: SUGGEST_PER_TAKE,
        }
    }
}

/// The default `hooks.suggest_floor`: on the coding families' development split, the block shows
/// for 23% of prompts whose task was never stored (the bound is 30%), 39% of near misses,
/// and brings the right plan for 27% of the paraphrases no plan was served for.
pub const SUGGEST_FLOOR: f32 = 0.6;

/// The default `hooks.suggest_per_take`. A block is about 90 tokens, sent again with every later
/// request of its session (on the replayed public sessions, about 60 of them); ten untaken blocks
/// cost about as much as a note in place of one re-read file saves. So an agent that never takes
/// a near plan pays for ten blocks per project, and no more.
pub const SUGGEST_PER_TAKE: u64 = 10;
