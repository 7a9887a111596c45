//! `cache_evict`: remove plans or results on request.
//!
//! Each capability adds its own targets to `EvictTarget`; `all` clears everything refrain holds
//! for the project except counters.

use super::{Refrain, internal, reply};
use crate::plan::library::Eviction;
use crate::results::{self, EvictWhat};
use crate::store::trees;
use rmcp::handler::server::{tool::schema_for_output, wrapper::Parameters};
use rmcp::schemars::{self, JsonSchema};
use rmcp::{ErrorData, model::CallToolResult, tool, tool_router};
use serde::{Deserialize, Serialize};

/// What to evict.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "target", rename_all = "snake_case", deny_unknown_fields)]
pub enum EvictTarget {
    /// Everything refrain stores for this project (plans, results, vectors); counters stay.
    All,
    /// One cached result by its exact key (from response_cache_put/get).
    ResponseKey {
        /// The exact key.
        key: String,
    },
    /// Every cached result of a tool.
    ResponseTool {
        /// The tool name.
        tool: String,
        /// Only this namespace (default: all).
        #[serde(default)]
        namespace: Option<String>,
    },
    /// Every cached result that expired or whose files changed.
    ResponsesStale,
    /// Every cached result (plans stay).
    Responses,
    /// One plan, by the `plan_id` plan_lookup or plan_store returned.
    Plan {
        /// The plan id.
        plan_id: String,
    },
    /// Every plan of an intent bucket (the `key.bucket` of a lookup).
    PlanBucket {
        /// The bucket key.
        bucket: String,
    },
    /// Every plan made with these versions (give at least one).
    PlanVersion {
        /// Template revision.
        #[serde(default)]
        plan: Option<String>,
        /// Normaliser version.
        #[serde(default)]
        normaliser: Option<u32>,
        /// Extractor version.
        #[serde(default)]
        extractor: Option<u32>,
    },
}

/// Parameters of `cache_evict`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CacheEvictParams {
    /// What to evict.
    pub what: EvictTarget,
}

/// Output of `cache_evict`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CacheEvictOutput {
    /// Records removed.
    pub evicted: usize,
    /// What was removed, in words.
    pub detail: String,
}

#[tool_router(router = cache_evict_router, vis = "pub(crate)")]
impl Refrain {
    /// Evict cached plans or results: one plan, a plan bucket, a result key, a tool's results,
    /// everything stale, everything of a version, or everything.
    #[tool(
        name = "cache_evict",
        output_schema = schema_for_output::<CacheEvictOutput>(),
        annotations(read_only_hint = false, idempotent_hint = true, destructive_hint = true, open_world_hint = false)
    )]
    pub async fn cache_evict(&self, Parameters(p): Parameters<CacheEvictParams>) -> Result<CallToolResult, ErrorData> {
        let store = &self.app.store;
        let out = match p.what {
            EvictTarget::All => {
                let mut n = 0;
                for t in [
                    trees::PLANS,
                    trees::PLAN_BUCKETS,
                    trees::RESPONSES,
                    trees::RESPONSE_LRU,
                    trees::RESPONSE_DEPS,
                    trees::RESPONSE_USE,
                    trees::RESPONSE_TEXTS,
                    trees::RESPONSE_FEEDBACK,
                    trees::VECTORS,
                ] {
                    n += store.clear(t).map_err(|e| internal(e.to_string()))?;
                }
                // Derived from the plans: cleared with them, not counted again.
                for t in [trees::PLAN_HEADS, trees::PLAN_TEXTS, trees::PLAN_TERMS, trees::VECTORS_GONE] {
                    store.clear(t).map_err(|e| internal(e.to_string()))?;
                }
                if let Ok(index) = self.app.index().await {
                    index.clear();
                }
                CacheEvictOutput { evicted: n, detail: "everything stored for this project".into() }
            }
            EvictTarget::ResponseKey { key } => {
                responses(&self.app, EvictWhat::Key(key), "the result with that key").await?
            }
            EvictTarget::ResponseTool { tool, namespace } => {
                let detail = format!("every cached {tool} result");
                responses(&self.app, EvictWhat::Tool { tool, namespace }, &detail).await?
            }
            EvictTarget::ResponsesStale => responses(&self.app, EvictWhat::Stale, "expired or stale results").await?,
            EvictTarget::Responses => responses(&self.app, EvictWhat::All, "every cached result").await?,
            EvictTarget::Plan { plan_id } => return evict_plans(self, Eviction::Plan(plan_id)).await,
            EvictTarget::PlanBucket { bucket } => return evict_plans(self, Eviction::Bucket(bucket)).await,
            EvictTarget::PlanVersion { plan, normaliser, extractor } => {
                return evict_plans(self, Eviction::Version { plan, normaliser, extractor }).await;
            }
        };
        store.flush_async().await.map_err(|e| internal(e.to_string()))?;
        reply(format!("evicted {} records: {}", out.evicted, out.detail), &out)
    }
}

async fn responses(app: &crate::app::App, what: EvictWhat, detail: &str) -> Result<CacheEvictOutput, ErrorData> {
    let evicted = results::evict(app, &what).await.map_err(|e| internal(e.to_string()))?;
    Ok(CacheEvictOutput { evicted, detail: detail.to_string() })
}

async fn evict_plans(r: &Refrain, what: Eviction) -> Result<CallToolResult, ErrorData> {
    match crate::plan::service::evict(&r.app, &what).await {
        Ok(ids) => {
            let out = CacheEvictOutput { evicted: ids.len(), detail: format!("plans: {}", ids.join(", ")) };
            reply(format!("evicted {} plan(s)", out.evicted), &out)
        }
        Err(e) if e.is_caller_fixable() => super::fail(e.to_string()),
        Err(e) => Err(internal(e.to_string())),
    }
}
