//! Settings for the result cache.

use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Result cache limits and thresholds.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ResultsConfig {
    /// Largest single stored result, in bytes.
    pub max_entry_bytes: usize,
    /// Largest tool arguments (and largest query), as JSON, accepted by the result cache, in bytes.
    pub max_args_bytes: usize,
    /// Total bytes of stored results before LRU eviction.
    pub max_total_bytes: u64,
    /// Default time to live, in seconds, when neither the caller nor a per-tool default sets one.
    pub default_ttl_secs: u64,
    /// Time to live per tool, in seconds (overrides the built-in per-tool defaults).
    pub tool_ttl_secs: BTreeMap<String, u64>,
    /// Tools never cached, whatever the caller says.
    pub disabled_tools: Vec<String>,
    /// Directories outside the project that cached results may depend on (results may always
    /// depend on files inside the project; nothing else is read or hashed).
    pub allowed_roots: Vec<PathBuf>,
}

impl Default for ResultsConfig {
    fn default() -> Self {
        Self {
            max_entry_bytes: 1024 * 1024,
            max_args_bytes: 64 * 1024,
            max_total_bytes: 256 * 1024 * 1024,
            default_ttl_secs: 3600,
            tool_ttl_secs: BTreeMap::new(),
            disabled_tools: Vec::new(),
            allowed_roots: Vec::new(),
        }
    }
}

/// Built-in time to live for tools whose results are freshness-checked (file reads, searches):
/// long, because a change to what they read invalidates them anyway.
pub const FILE_TOOL_TTL_SECS: u64 = 24 * 3600;
/// Built-in time to live for web results: they change without refrain seeing it.
pub const WEB_TOOL_TTL_SECS: u64 = 1800;

impl ResultsConfig {
    /// The time to live for a tool's results when the caller gives none.
    pub fn ttl_for(&self, tool: &str) -> u64 {
        if let Some(t) = self.tool_ttl_secs.get(tool) {
            return *t;
        }
        match tool {
            "Read" | "Grep" | "Glob" | "LS" | "NotebookRead" | "read_file" | "list_dir" | "grep_files" | "Bash"
            | "shell" | "exec_command" => FILE_TOOL_TTL_SECS,
            "WebFetch" | "WebSearch" | "web_search" | "fetch" => WEB_TOOL_TTL_SECS,
            _ => self.default_ttl_secs,
        }
    }
}
