//! One `Config`, merged once: defaults < `refrain.toml` (user, then project) < `REFRAIN_*` env < flags.
//!
//! This module is the only place that reads the environment for settings. Each section lives in its
//! own file; `refrain config` prints the resolved values and where each came from.

mod matching;
mod model;
mod plans;
mod prompt;
mod results;
mod server;
mod sources;

pub use matching::MatchingConfig;
pub use model::ModelConfig;
pub use plans::{LlmConfig, PlansConfig};
pub use prompt::PromptConfig;
pub use results::ResultsConfig;
pub use server::{HooksConfig, ServerConfig, StoreConfig};
pub use sources::{Source, Sourced};

use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Every setting refrain reads, with its defaults.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Transports, message limits and HTTP access.
    pub server: ServerConfig,
    /// Where project stores live.
    pub store: StoreConfig,
    /// The embedding model and ONNX runtime.
    pub model: ModelConfig,
    /// Plan cache thresholds and the optional LLM canonicaliser.
    pub plans: PlansConfig,
    /// The optional LLM canonicaliser (any OpenAI-compatible endpoint).
    pub llm: LlmConfig,
    /// Result cache limits, TTLs and thresholds.
    pub results: ResultsConfig,
    /// How sure refrain must be before serving a stored plan or result for a new request.
    pub matching: MatchingConfig,
    /// Prompt-cache analysis: provider rules and transcript roots.
    pub prompt: PromptConfig,
    /// Agent hook behaviour.
    pub hooks: HooksConfig,
}

/// Errors while resolving the configuration.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A config file could not be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A config file is not valid TOML or has unknown keys.
    #[error("invalid config in {origin}: {message}")]
    Invalid {
        /// The file or env var that held the bad value.
        origin: String,
        /// What was wrong.
        message: String,
    },
}

/// Values given on the command line, applied last.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// `--home`.
    pub home: Option<PathBuf>,
    /// `--log-file`.
    pub log_file: Option<PathBuf>,
    /// `--token`.
    pub token: Option<String>,
    /// `--model-dir`.
    pub model_dir: Option<PathBuf>,
}

impl Config {
    /// Resolves the configuration for a project root, from every layer.
    pub fn load(project_root: Option<&Path>, flags: &Overrides) -> Result<Sourced, Error> {
        sources::resolve(project_root, flags)
    }

    /// The directory holding every project's store and the shared model files.
    pub fn home(&self) -> PathBuf {
        self.store.home.clone().unwrap_or_else(default_home)
    }
}

/// The user's data directory for refrain (`directories`), or `./.refrain` when none exists.
pub fn default_home() -> PathBuf {
    directories::ProjectDirs::from("dev", "refrain", "refrain")
        .map(|d| d.data_dir().to_path_buf())
        .unwrap_or_else(|| PathBuf::from(".refrain"))
}
