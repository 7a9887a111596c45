//! `cache_stats`: what refrain holds for this project and how much it has saved.

use super::{Refrain, internal, reply};
use crate::embed::ModelState;
use crate::store::trees;
use crate::{ledger, stats};
use rmcp::handler::server::{tool::schema_for_output, wrapper::Parameters};
use rmcp::schemars::{self, JsonSchema};
use rmcp::{ErrorData, model::CallToolResult, tool, tool_router};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Parameters of `cache_stats`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CacheStatsParams {
    /// Only report this area: `plans`, `results`, `prompt`, `dedup` or `all` (default).
    #[serde(default)]
    pub area: Option<String>,
    /// Also list the newest N lines of the savings ledger (at most 10,000).
    #[serde(default)]
    pub ledger_lines: Option<usize>,
}

/// The savings ledger: what refrain removed from and added to agents' contexts, net.
#[derive(Debug, Serialize, JsonSchema)]
pub struct LedgerReport {
    /// The totals (tokens removed, added, fixed cost of the tool list per request, net).
    #[serde(flatten)]
    pub totals: ledger::Totals,
    /// The net tokens in dollars, at `priced_at`.
    pub usd_net: f64,
    /// The price the dollars use.
    pub priced_at: String,
    /// With `ledger_lines`: the newest lines, newest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<ledger::Line>,
}

/// Most ledger lines one call lists.
const MAX_LEDGER_LINES: usize = 10_000;

/// The ledger's totals, with dollars at the default Anthropic model's input price.
pub fn ledger_report(store: &crate::store::Store, lines: usize) -> crate::store::Result<LedgerReport> {
    let totals = ledger::totals(store)?;
    let rules = crate::prompt::rules::Rules::builtin();
    let family = rules.provider(crate::prompt::request::Provider::Anthropic).family("");
    let per_token = family.input_usd_per_mtok / 1e6;
    Ok(LedgerReport {
        usd_net: totals.net as f64 * per_token,
        priced_at: format!("{} input, ${} per million tokens", family.name, family.input_usd_per_mtok),
        lines: ledger::lines(store, lines.min(MAX_LEDGER_LINES))?,
        totals,
    })
}

/// The embedding model's state.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ModelReport {
    /// `ready`, `loading` or `unavailable`.
    pub state: String,
    /// Model name when ready; the reason and the fix when unavailable.
    pub detail: String,
}

/// How requests are matched to stored plans and results.
#[derive(Debug, Serialize, JsonSchema)]
pub struct MatchingReport {
    /// `cross_encoder` (the verifier model), `cosine` (plain cosine at its calibrated, strict
    /// threshold: no verifier model) or `loading`.
    pub method: String,
    /// The verifier model, or why plain cosine is used and how to fix it.
    pub detail: String,
    /// `matching.max_wrong_rate`: the highest share of requests without a stored answer that may
    /// be served something.
    pub max_wrong_rate: f64,
    /// Thresholds derived from it, per `kind/method`.
    pub thresholds: BTreeMap<String, ThresholdReport>,
    /// Where the calibration came from.
    pub calibration: String,
}

/// One derived threshold.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ThresholdReport {
    /// The lowest score served.
    pub value: f32,
    /// The calibration dataset that set it (the strictest).
    pub set_by: String,
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
    /// How requests are matched (verifier model or cosine) and at which thresholds.
    pub matching: MatchingReport,
    /// Counters per area (`hits`, `misses`, `tokens_saved`, per tool as `counter/tool`).
    pub counters: BTreeMap<String, BTreeMap<String, u64>>,
    /// Seconds since this server opened the store.
    pub uptime_secs: u64,
    /// Settings the project's config file gave that refrain refused and ignored (each names the
    /// key, the file and how to allow it); empty when none.
    pub config_refused: Vec<crate::config::Refused>,
    /// The savings ledger, net of everything refrain added.
    pub ledger: LedgerReport,
}

#[tool_router(router = cache_stats_router, vis = "pub(crate)")]
impl Refrain {
    /// Report what refrain holds for this project: hits, misses, hit rate, tokens saved, sizes,
    /// per-tool figures, the store path, whether the embedding and verifier models are loaded and
    /// the matching thresholds.
    #[tool(
        name = "cache_stats",
        output_schema = schema_for_output::<CacheStatsOutput>(),
        annotations(read_only_hint = true, idempotent_hint = true, destructive_hint = false, open_world_hint = false)
    )]
    pub async fn cache_stats(&self, Parameters(p): Parameters<CacheStatsParams>) -> Result<CallToolResult, ErrorData> {
        let app = &self.app;
        // Tool replies' ledger lines are written after their answers: include every one so far.
        ledger::settle().await;
        let mut records = BTreeMap::new();
        for t in [trees::PLANS, trees::RESPONSES, trees::VECTORS, trees::EVENTS] {
            records.insert(t.0.to_string(), app.store.len(t).map_err(|e| internal(e.to_string()))?);
        }
        let areas: Vec<&str> = match p.area.as_deref() {
            None | Some("all") => vec!["plans", "results", "prompt", "dedup"],
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
        let r = app.verify.report();
        let matching = MatchingReport {
            method: r.method,
            detail: r.detail,
            max_wrong_rate: r.max_wrong_rate,
            thresholds: r
                .thresholds
                .into_iter()
                .map(|(k, value, set_by)| (k, ThresholdReport { value, set_by }))
                .collect(),
            calibration: r.calibration,
        };
        let out = CacheStatsOutput {
            version: env!("CARGO_PKG_VERSION").into(),
            project: app.project.root.display().to_string(),
            store_path: app.store.path().display().to_string(),
            store_bytes: app.store.size_on_disk(),
            records,
            index: app.index_now().map(|i| i.sizes().into_iter().collect()),
            model,
            matching,
            counters,
            uptime_secs: app.started.elapsed().as_secs(),
            config_refused: app.config.refused.clone(),
            ledger: ledger_report(&app.store, p.ledger_lines.unwrap_or(0)).map_err(|e| internal(e.to_string()))?,
        };
        let mut text = format!(
            "refrain {} for {} (store {}): {} plans, {} results, model {}, matching by {}",
            out.version,
            out.project,
            out.store_path,
            out.records["plans"],
            out.records["responses"],
            out.model.state,
            out.matching.method
        );
        if let Some(p) = out.counters.get("plans") {
            let n = |k: &str| p.get(k).copied().unwrap_or(0);
            text.push_str(&format!(
                "; plans: {} hits, {} misses, {} suggestions, {} suggestions accepted (never counted as hits), {} blocks of near plans offered by the prompt hook",
                n("hits"),
                n("misses"),
                n("suggestions"),
                n("suggestions_accepted"),
                n(crate::plan::restraint::BLOCKS)
            ));
        }
        if let Some(d) = out.counters.get("dedup").filter(|d| d.get("reads_deduplicated").is_some_and(|n| *n > 0)) {
            let n = |k: &str| d.get(k).copied().unwrap_or(0);
            text.push_str(&format!(
                "; {} repeated reads answered with a note ({} tokens saved)",
                n("reads_deduplicated"),
                n("tokens_saved")
            ));
        }
        let l = &out.ledger.totals;
        text.push_str(&format!(
            "; net {} tokens (${:.4}): {} removed, {} added, {} for the tool list over {} requests",
            l.net, out.ledger.usd_net, l.removed, l.added, l.fixed, l.requests
        ));
        if !out.config_refused.is_empty() {
            text.push_str(&format!("; {} project settings refused (see config_refused)", out.config_refused.len()));
        }
        reply(text, &out)
    }
}
