//! `cache_stats`: what refrain holds for this project and how much it has saved.

use super::{Refrain, internal, reply};
use crate::embed::ModelState;
use crate::stats;
use crate::store::trees;
use rmcp::handler::server::{tool::schema_for_output, wrapper::Parameters};
use rmcp::schemars::{self, JsonSchema};
use rmcp::{ErrorData, model::CallToolResult, tool, tool_router};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Parameters of `cache_stats`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CacheStatsParams {
    /// Only report this area: `plans`, `results` or `all` (default).
    #[serde(default)]
    pub area: Option<String>,
}

/// The embedding model's state.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ModelReport {
    /// `ready`, `loading` or `unavailable`.
    pub state: String,
    /// Model name when ready; the reason and the fix when unavailable.
    pub detail: String,
}

/// Output of `cache_stats`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CacheStatsOutput {
    /// refrain's version.
    pub version: String,
    /// The project root served.
    pub project: String,
    /// The store directory.
    pub store_path: String,
    /// Bytes the store occupies on disk.
    pub store_bytes: u64,
    /// Records per kind (plans, results, vectors...).
    pub records: BTreeMap<String, usize>,
    /// Vectors indexed per scope (absent while the index is rebuilding).
    pub index: Option<BTreeMap<String, usize>>,
    /// The embedding model.
    pub model: ModelReport,
    /// Counters per area (`hits`, `misses`, `tokens_saved`, per tool as `counter/tool`).
    pub counters: BTreeMap<String, BTreeMap<String, u64>>,
    /// Seconds since this server opened the store.
    pub uptime_secs: u64,
    /// Settings the project's config file gave that refrain refused and ignored (each names the
    /// key, the file and how to allow it); empty when none.
    pub config_refused: Vec<crate::config::Refused>,
}

#[tool_router(router = cache_stats_router, vis = "pub(crate)")]
impl Refrain {
    /// Report what refrain holds for this project: hits, misses, hit rate, tokens saved, sizes,
    /// per-tool figures, the store path and whether the embedding model is loaded.
    #[tool(
        name = "cache_stats",
        output_schema = schema_for_output::<CacheStatsOutput>(),
        annotations(read_only_hint = true, idempotent_hint = true, destructive_hint = false, open_world_hint = false)
    )]
    pub async fn cache_stats(&self, Parameters(p): Parameters<CacheStatsParams>) -> Result<CallToolResult, ErrorData> {
        let app = &self.app;
        let mut records = BTreeMap::new();
        for t in [trees::PLANS, trees::RESPONSES, trees::VECTORS, trees::EVENTS] {
            records.insert(t.0.to_string(), app.store.len(t).map_err(|e| internal(e.to_string()))?);
        }
        let areas: Vec<&str> = match p.area.as_deref() {
            None | Some("all") => vec!["plans", "results", "prompt"],
            Some(a) => vec![a],
        };
        let mut counters = BTreeMap::new();
        for area in areas {
            counters.insert(area.to_string(), stats::read_area(&app.store, area).map_err(|e| internal(e.to_string()))?);
        }
        let model = match app.embed.state() {
            ModelState::Ready(e) => ModelReport { state: "ready".into(), detail: e.name().to_string() },
            ModelState::Loading => ModelReport { state: "loading".into(), detail: "the model is loading".into() },
            ModelState::Unavailable(r) => ModelReport { state: "unavailable".into(), detail: r },
        };
        let out = CacheStatsOutput {
            version: env!("CARGO_PKG_VERSION").into(),
            project: app.project.root.display().to_string(),
            store_path: app.store.path().display().to_string(),
            store_bytes: app.store.size_on_disk(),
            records,
            index: app.index_now().map(|i| i.sizes().into_iter().collect()),
            model,
            counters,
            uptime_secs: app.started.elapsed().as_secs(),
            config_refused: app.config.refused.clone(),
        };
        let mut text = format!(
            "refrain {} for {}: {} plans, {} results, model {}",
            out.version, out.project, out.records["plans"], out.records["responses"], out.model.state
        );
        if !out.config_refused.is_empty() {
            text.push_str(&format!("; {} project settings refused (see config_refused)", out.config_refused.len()));
        }
        reply(text, &out)
    }
}
