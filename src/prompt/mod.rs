//! Prompt-cache analysis: provider request models, provider rules (data), cache-break
//! explanation and cache-safe compaction.
//!
//! Plain Rust over `serde_json` values: no rmcp types, no store. Token counts here are
//! estimates (see [`estimate_tokens`]); every report says so.

pub mod cause;
pub mod compact;
pub mod compact_cost;
pub mod diff;
pub mod explain;
pub mod request;
pub mod rules;
pub mod time;

pub use compact::{Policy, ReplacementLog};
pub use compact_cost::{CompactionPlan, preview};
pub use explain::{CacheBreak, explain};
pub use request::{Provider, Request};
pub use rules::Rules;

/// How token counts were obtained, as reports state it.
pub const TOKEN_COUNTING: &str =
    "estimate: about 4 bytes of UTF-8 per token (no tokenizer for these models is bundled); expect +-20%";

/// Errors of prompt-cache analysis.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A request body could not be understood.
    #[error("invalid request: {0}")]
    BadRequest(String),
    /// The provider rules could not be loaded.
    #[error("invalid provider rules: {0}")]
    Rules(String),
    /// A compaction policy or log is unusable.
    #[error("invalid compaction policy: {0}")]
    BadPolicy(String),
    /// The request went over its time or memory budget while building the named structure (the
    /// server answers with the limit's own message).
    #[error("the request went over its budget while building the {0}")]
    OverBudget(&'static str),
}

/// Estimated tokens of a text: about 4 bytes per token, rounded up.
pub fn estimate_tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}

#[cfg(test)]
mod explain_tests;
