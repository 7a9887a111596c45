//! Settings for the plan cache and the optional LLM canonicaliser.

use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

/// Plan cache thresholds.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct PlansConfig {
    /// No longer used: whether a plan is for a task is decided by the value gates and the
    /// verifier (`matching.max_wrong_rate`). Kept so existing configuration files still load.
    pub hit_threshold: f32,
    /// Nearest task embeddings considered besides exact-text matches and the bucket.
    pub neighbours: usize,
    /// Most plans of the task's intent bucket considered besides the neighbours.
    pub bucket_candidates: usize,
    /// Failures in a row after which a plan is quarantined.
    pub quarantine_after: u32,
    /// How much each reported failure raises that plan's verifier threshold (a success halves the
    /// raise again).
    pub failure_bias: f32,
    /// Lowest score (the verifier's, else the masked tasks' cosine) at which a near stored plan
    /// comes back as one of a miss's `suggestions` (never a hit). 0.3 was chosen on refrain's
    /// development families (docs/plans.md).
    pub suggest_min_score: f32,
    /// Candidates reported with a lookup (the nearest ones, with the stage they failed).
    pub report_candidates: usize,
    /// Longest task text accepted by `plan_store` and `plan_lookup`, in bytes.
    pub max_task_bytes: usize,
    /// Largest plan (template or trace, as JSON) accepted by `plan_store`, in bytes.
    pub max_plan_bytes: usize,
}

impl Default for PlansConfig {
    fn default() -> Self {
        Self {
            hit_threshold: 0.3,
            neighbours: 16,
            bucket_candidates: 32,
            quarantine_after: 3,
            failure_bias: 0.05,
            suggest_min_score: 0.3,
            report_candidates: 5,
            max_task_bytes: 16 * 1024,
            max_plan_bytes: 256 * 1024,
        }
    }
}

/// The optional LLM canonicaliser: any OpenAI-compatible chat-completions endpoint.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct LlmConfig {
    /// Off by default.
    pub enabled: bool,
    /// Base URL, e.g. `http://127.0.0.1:8080/v1`.
    pub base_url: Option<String>,
    /// Model name sent to the endpoint.
    pub model: Option<String>,
    /// Name of the env var holding the API key (never the key itself).
    pub api_key_env: Option<String>,
    /// Give up and fall back to the local normaliser after this many milliseconds.
    pub timeout_ms: u64,
}

impl Default for LlmConfig {
    fn default() -> Self {
        Self { enabled: false, base_url: None, model: None, api_key_env: None, timeout_ms: 3000 }
    }
}
