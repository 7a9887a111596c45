//! `response_cache_get`: a cached result by exact arguments or by meaning, checked fresh first.

use super::{Refrain, fail, internal, reply};
use crate::ledger;
use crate::results::semantic::{Scored, Suggestion};
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
    /// Report every stored query considered by meaning with its scores (for evaluations; costs
    /// a model call per candidate).
    #[serde(default)]
    pub explain: bool,
}

/// A stored query that came close but failed verification. It is not served: if it asks what
/// you ask, call again with `query` set to exactly this text (same tool and namespace) and its
/// stored answer is served by the exact-text match.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SuggestionOut {
    /// The stored query's own text.
    pub query: String,
    /// Its verification score.
    pub score: f32,
    /// The score it had to reach.
    pub threshold: f32,
    /// The gate that refused it before scoring, if one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
}

/// A stored query considered by meaning (with `explain`).
#[derive(Debug, Serialize, JsonSchema)]
pub struct CandidateOut {
    /// The stored query.
    pub query: String,
    /// The entry's exact key.
    pub key: String,
    /// Cosine similarity of the embeddings.
    pub cosine: f32,
    /// The verifier model's score, when it scored this candidate.
    pub verifier: Option<f32>,
    /// The score the decision used (`method` says which).
    pub score: f32,
    /// The threshold it had to reach (the entry's own raise included).
    pub threshold: f32,
    /// `exact`, `cross_encoder`, `cosine` or `llm`.
    pub method: String,
    /// Whether it passed verification.
    pub accepted: bool,
    /// The cheap gate that dropped it before scoring, if any.
    pub failed: Option<String>,
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
    /// Verification score of a semantic hit (1 for the same query text).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f32>,
    /// How a semantic hit was verified: `exact` (same text), `cross_encoder`, `cosine` or `llm`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<String>,
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
    /// The exact key (pass it to `cache_evict`, or to `response_cache_feedback` when a result
    /// served by meaning was wrong).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// On a miss: the nearest stored query that failed verification (the first of
    /// `suggestions`). Not a hit; judge it yourself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suggestion: Option<SuggestionOut>,
    /// On a miss: up to three near stored queries, nearest first. Not hits: if one asks what you
    /// ask, look it up again with its exact text.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<SuggestionOut>,
    /// Every stored query considered by meaning (only with `explain`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub candidates: Option<Vec<CandidateOut>>,
}

fn candidates(considered: Vec<Scored>, explain: bool) -> Option<Vec<CandidateOut>> {
    explain.then(|| {
        considered
            .into_iter()
            .map(|c| {
                let v = c.assessed.verdict;
                CandidateOut {
                    query: c.query,
                    key: c.key,
                    cosine: c.cosine,
                    verifier: c.assessed.model_score,
                    score: v.score,
                    threshold: v.threshold,
                    method: v.method.name().into(),
                    accepted: v.accepted,
                    failed: c.assessed.gate.map(|g| g.reason().to_string()),
                }
            })
            .collect()
    })
}

fn suggestion(s: Suggestion) -> SuggestionOut {
    SuggestionOut { query: s.query, score: s.score, threshold: s.threshold, failed: s.gate.map(str::to_string) }
}

#[tool_router(router = response_cache_get_router, vis = "pub(crate)")]
impl Refrain {
    /// Before re-running a read-only tool, look up its cached result by the same arguments, or by
    /// a natural-language query (same tool and namespace). Files the result depends on are
    /// re-checked first: a changed file makes it a miss that names the file. A miss may carry up
    /// to three `suggestions` (stored queries that came close, nearest first, never hits): if you
    /// judge that one asks what you ask, call again with `query` set to exactly its `query` text
    /// (same tool and namespace): a stored query's own text always reaches its entry, so that
    /// serves its answer.
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
            explain: p.explain,
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
                let (matched, score, matched_query, method) = match h.matched {
                    MatchKind::Exact => ("exact", None, None, None),
                    MatchKind::Semantic { score, matched_query, method } => {
                        ("semantic", Some(score), Some(matched_query), Some(method.name().to_string()))
                    }
                };
                ResponseCacheGetOutput {
                    status: "hit".into(),
                    result: Some(h.entry.result),
                    matched: Some(matched.into()),
                    score,
                    method,
                    matched_query,
                    stored_args: Some(h.entry.args),
                    age_secs: Some(h.age_secs),
                    expires_in_secs: Some(h.expires_in_secs),
                    checked: Some(checked),
                    reason: None,
                    stale: false,
                    key: Some(h.entry.key),
                    suggestion: None,
                    suggestions: Vec::new(),
                    candidates: candidates(h.considered, p.explain),
                }
            }
            GetOutcome::Miss { reason, stale, key, suggestions: near, considered } => ResponseCacheGetOutput {
                status: "miss".into(),
                result: None,
                matched: None,
                score: None,
                method: None,
                matched_query: None,
                stored_args: None,
                age_secs: None,
                expires_in_secs: None,
                checked: None,
                reason: Some(reason),
                stale,
                key,
                suggestion: near.first().cloned().map(suggestion),
                suggestions: near.into_iter().map(suggestion).collect(),
                candidates: candidates(considered, p.explain),
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
            (_, Some(r)) if out.suggestions.is_empty() => format!("miss: {r}"),
            (_, Some(r)) => {
                let lines: Vec<String> = out
                    .suggestions
                    .iter()
                    .map(|s| match &s.failed {
                        Some(g) => format!("- {:?} ({g})", s.query),
                        None => format!("- {:?} ({:.2})", s.query, s.score),
                    })
                    .collect();
                format!(
                    "miss: {r}. Near stored queries, not served (if one asks what you ask, look it up with its exact text):\n{}",
                    lines.join("\n")
                )
            }
            _ => "miss".into(),
        };
        let (kind, carried) = match &out.result {
            Some(r) => (ledger::Kind::ResultServed, Some(r.clone())),
            None => (ledger::Kind::ResultMiss, None),
        };
        super::ledgered(&self.app, kind, &p.tool, carried.as_ref(), reply(text, &out))
    }
}
