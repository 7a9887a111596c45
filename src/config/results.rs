//! Settings for the result cache.

use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

/// Result cache limits and thresholds.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ResultsConfig {
    /// Largest single stored result, in bytes.
    pub max_entry_bytes: usize,
    /// Total bytes of stored results before LRU eviction.
    pub max_total_bytes: u64,
    /// Default time to live, in seconds, when neither the caller nor a per-tool default sets one.
    pub default_ttl_secs: u64,
    /// Lowest similarity for a semantic hit.
    pub semantic_threshold: f32,
    /// Tools never cached, whatever the caller says.
    pub disabled_tools: Vec<String>,
}

impl Default for ResultsConfig {
    fn default() -> Self {
        Self {
            max_entry_bytes: 1024 * 1024,
            max_total_bytes: 256 * 1024 * 1024,
            default_ttl_secs: 3600,
            semantic_threshold: 0.85,
            disabled_tools: Vec::new(),
        }
    }
}
