//! Settings for matching: how sure refrain must be before it serves a stored plan or result for a
//! new request. One number decides it; the thresholds are derived from it through the shipped
//! calibration, never set by hand.

use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

/// How strict matching is, and what may help decide.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct MatchingConfig {
    /// Highest share of requests with no right answer stored that may be served something anyway
    /// (0.01 = 1%). Thresholds per kind (plans, results) are derived from it on the calibration
    /// data: lower is stricter (fewer wrong answers, fewer hits).
    pub max_wrong_rate: f64,
    /// Nearest stored requests scored by the verifier per lookup (in one batch).
    pub candidates: usize,
    /// Failed reports (`response_cache_feedback`) after which an entry is no longer served by meaning.
    pub quarantine_after: u32,
    /// Let the configured LLM endpoint (`[llm]`) judge candidates close to the threshold.
    pub llm_judge: bool,
    /// Longest wait for the LLM judge per lookup, in milliseconds (then the verifier's verdict stands).
    pub llm_budget_ms: u64,
    /// Intra-op threads for the verifier model.
    pub threads: usize,
}

impl Default for MatchingConfig {
    fn default() -> Self {
        Self {
            max_wrong_rate: 0.01,
            candidates: 8,
            quarantine_after: 3,
            llm_judge: true,
            llm_budget_ms: 1500,
            threads: 1,
        }
    }
}
