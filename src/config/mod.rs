//! One `Config`, merged once: defaults < `refrain.toml` (user, then project) < `REFRAIN_*` env < flags.
//!
//! This module is the only place that reads the environment for settings. Each section lives in its
//! own file; `keys` says who may set each key, `screen` holds a project file to that, `trust` keeps
//! the user's `refrain trust` records, and `refrain config` prints the resolved values, where each
//! came from and what was refused.

mod dotted;
pub mod keys;
mod matching;
mod model;
mod plans;
mod prompt;
mod removed;
mod results;
pub mod screen;
mod server;
mod sources;
mod team;
pub mod trust;

pub use matching::MatchingConfig;
pub use model::ModelConfig;
pub use plans::{LlmConfig, PlansConfig};
pub use prompt::PromptConfig;
pub use removed::REMOVED;
pub use results::ResultsConfig;
pub use screen::Refused;
pub use server::{HooksConfig, ServerConfig, StoreConfig};
pub use sources::{ProjectFile, Source, Sourced, hide_password, project_files, read_table, user_file};
pub use team::{Accept, TeamConfig};

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
    /// The team plan library on PostgreSQL (off unless `team.url` is set).
    pub team: TeamConfig,
    /// Settings a project's config file gave that were refused (not a key: filled in by `load`).
    #[serde(skip)]
    #[schemars(skip)]
    pub refused: Vec<Refused>,
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
    /// A config sets a key refrain no longer reads.
    #[error("{origin} sets {key}, which refrain no longer reads: {instead}")]
    Removed {
        /// The file, variable or flag that set it.
        origin: String,
        /// The dotted key.
        key: &'static str,
        /// What to do instead.
        instead: &'static str,
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
