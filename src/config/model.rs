//! Settings for the embedding model and the ONNX runtime it runs on.

use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Where the model and runtime are, and how to run them.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct ModelConfig {
    /// Directory holding `ort/libonnxruntime.so` and `all-MiniLM-L6-v2-int8/` (default: HOME/models).
    pub dir: Option<PathBuf>,
    /// Path to the ONNX runtime shared library (default: DIR/ort/libonnxruntime.so).
    pub runtime: Option<PathBuf>,
    /// Set to false to run without embeddings (exact lookups only).
    pub enabled: bool,
    /// Intra-op threads for ONNX Runtime.
    pub threads: usize,
    /// Longest input in tokens.
    pub max_length: usize,
}

impl Default for ModelConfig {
    fn default() -> Self {
        Self { dir: None, runtime: None, enabled: true, threads: 1, max_length: 256 }
    }
}
