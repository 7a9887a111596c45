//! `response_cache_get`: a cached result by exact arguments or by meaning, checked fresh first.

use super::{Refrain, fail, internal, reply};
use crate::results::{self, GetOutcome, GetRequest, MatchKind};
use rmcp::handler::server::{tool::schema_for_output, wrapper::Parameters};
use rmcp::schemars::{self, JsonSchema};
use rmcp::{ErrorData, model::CallToolResult, tool, tool_router};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Parameters of `response_cache_get`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResponseCacheGetParams {
    /// The tool whose result you want (e.g. `Read`, `Grep`, `WebSearch`).
    pub tool: String,
    /// The arguments you would call the tool with (exact lookup; key order does not matter).
    #[serde(default)]
    pub args: Option<Value>,
    /// A natural-language query to find a stored result by meaning (same tool and namespace only).
    #[serde(default)]
    pub query: Option<String>,
    /// Namespace used when the result was stored; default `default`.
    #[serde(default)]
    pub namespace: Option<String>,
}

/// Output of `response_cache_get`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ResponseCacheGetOutput {
    /// `hit` or `miss`.
    pub status: String,
    /// The cached result (on a hit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// `exact` or `semantic` (on a hit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched: Option<String>,
    /// Similarity of a semantic hit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f32>,
    /// The stored query a semantic hit matched.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matched_query: Option<String>,
    /// The arguments the result was stored with (on a hit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stored_args: Option<Value>,
    /// Seconds since the result was stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub age_secs: Option<u64>,
    /// Seconds until it expires.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_in_secs: Option<u64>,
    /// What was checked before serving it (files statted/hashed, trees walked, git HEAD).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checked: Option<String>,
    /// Why nothing was served (on a miss).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// True when an entry existed but was stale or expired and has been evicted.
    pub stale: bool,
    /// The exact key (pass it to `cache_evict`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

#[tool_router(router = response_cache_get_router, vis = "pub(crate)")]
impl Refrain {
    /// Before re-running a read-only tool, look up its cached result by the same arguments, or by
    /// a natural-language query (same tool and namespace). Files the result depends on are
    /// re-checked first: a changed file makes it a miss that names the file.
    #[tool(
        name = "response_cache_get",
        output_schema = schema_for_output::<ResponseCacheGetOutput>(),
        annotations(read_only_hint = true, idempotent_hint = false, destructive_hint = false, open_world_hint = false)
    )]
    pub async fn response_cache_get(
        &self,
        Parameters(p): Parameters<ResponseCacheGetParams>,
    ) -> Result<CallToolResult, ErrorData> {
        if p.args.is_none() && p.query.as_deref().is_none_or(|q| q.trim().is_empty()) {
            return fail(
                "give args (the tool's arguments, for an exact lookup) or query (a natural-language query, for a lookup by meaning)",
            );
        }
        let req = GetRequest {
            namespace: p.namespace.unwrap_or_default(),
            tool: p.tool.clone(),
            args: p.args,
            query: p.query,
        };
        let out = match results::get(&self.app, req).await.map_err(|e| internal(e.to_string()))? {
            GetOutcome::Hit(h) => {
                let c = &h.checked;
                let mut checked = format!("{} files statted, {} hashed", c.files_statted, c.files_hashed);
                if c.trees_walked > 0 {
                    checked.push_str(&format!(", {} trees walked", c.trees_walked));
                }
                if c.git_head {
                    checked.push_str(", git HEAD compared");
                }
                let (matched, score, matched_query) = match h.matched {
                    MatchKind::Exact => ("exact", None, None),
                    MatchKind::Semantic { score, matched_query } => ("semantic", Some(score), Some(matched_query)),
                };
                ResponseCacheGetOutput {
                    status: "hit".into(),
                    result: Some(h.entry.result),
                    matched: Some(matched.into()),
                    score,
                    matched_query,
                    stored_args: Some(h.entry.args),
                    age_secs: Some(h.age_secs),
                    expires_in_secs: Some(h.expires_in_secs),
                    checked: Some(checked),
                    reason: None,
                    stale: false,
                    key: Some(h.entry.key),
                }
            }
            GetOutcome::Miss { reason, stale, key } => ResponseCacheGetOutput {
                status: "miss".into(),
                result: None,
                matched: None,
                score: None,
                matched_query: None,
                stored_args: None,
                age_secs: None,
                expires_in_secs: None,
                checked: None,
                reason: Some(reason),
                stale,
                key,
            },
        };
        let text = match (&out.status[..], &out.reason) {
            ("hit", _) => {
                let body = match &out.result {
                    Some(Value::String(s)) => s.clone(),
                    Some(v) => v.to_string(),
                    None => String::new(),
                };
                let how = out.matched.as_deref().unwrap_or("");
                format!("hit ({how}) for {}, stored {}s ago, still fresh:\n{body}", p.tool, out.age_secs.unwrap_or(0))
            }
            (_, Some(r)) => format!("miss: {r}"),
            _ => "miss".into(),
        };
        reply(text, &out)
    }
}
