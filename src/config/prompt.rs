//! Settings for prompt-cache analysis.

use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Provider rules and the directories transcripts may be read from.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct PromptConfig {
    /// A TOML or JSON file overriding the built-in provider rules.
    pub rules_file: Option<PathBuf>,
    /// Extra directories transcripts may be read from (the agents' own and the project are always allowed).
    pub transcript_roots: Vec<PathBuf>,
}
