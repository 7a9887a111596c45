//! `response_cache_feedback`: the agent's word on a result served by meaning. A wrong report
//! raises that entry's own threshold; repeated wrong reports quarantine it from lookups by meaning.

use super::{Refrain, fail, internal, reply};
use crate::results::feedback::{self, FeedbackError, Verdict};
use rmcp::handler::server::{tool::schema_for_output, wrapper::Parameters};
use rmcp::schemars::{self, JsonSchema};
use rmcp::{ErrorData, model::CallToolResult, tool, tool_router};
use serde::{Deserialize, Serialize};

/// What the served result was.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FeedbackOutcome {
    /// It does not answer the query it was served for.
    Wrong,
    /// It answered the query.
    Right,
    /// Serve a quarantined entry by meaning again.
    Release,
}

/// Parameters of `response_cache_feedback`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResponseCacheFeedbackParams {
    /// The `key` response_cache_get returned with the hit.
    pub key: String,
    /// `wrong`, `right`, or `release` (serve a quarantined entry by meaning again).
    pub outcome: FeedbackOutcome,
    /// The query the result was served for; with it, that query is never served this entry again.
    #[serde(default)]
    pub query: Option<String>,
    /// What was wrong (kept with the quarantine reason).
    #[serde(default)]
    pub reason: Option<String>,
}

/// Output of `response_cache_feedback`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ResponseCacheFeedbackOutput {
    /// The entry.
    pub key: String,
    /// Wrong reports so far.
    pub wrong: u32,
    /// Right reports so far.
    pub right: u32,
    /// How far this entry's threshold is raised above the calibrated one.
    pub threshold_raise: f32,
    /// Why it is no longer served by meaning, when quarantined (exact lookups still serve it).
    pub quarantined: Option<String>,
}

#[tool_router(router = response_cache_feedback_router, vis = "pub(crate)")]
impl Refrain {
    /// Report that a result response_cache_get served by meaning was wrong (or right). A wrong
    /// report raises that entry's threshold so the query is not served it again; after
    /// `matching.quarantine_after` wrong reports it is no longer served by meaning.
    #[tool(
        name = "response_cache_feedback",
        output_schema = schema_for_output::<ResponseCacheFeedbackOutput>(),
        annotations(read_only_hint = false, idempotent_hint = false, destructive_hint = false, open_world_hint = false)
    )]
    pub async fn response_cache_feedback(
        &self,
        Parameters(p): Parameters<ResponseCacheFeedbackParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let verdict = match p.outcome {
            FeedbackOutcome::Wrong => Verdict::Wrong,
            FeedbackOutcome::Right => Verdict::Right,
            FeedbackOutcome::Release => Verdict::Release,
        };
        let query = p.query.as_deref().filter(|q| !q.trim().is_empty());
        match feedback::report(&self.app, &p.key, verdict, query, p.reason.as_deref()).await {
            Ok(f) => {
                let state = match &f.quarantined {
                    Some(q) => format!("quarantined from lookups by meaning ({q})"),
                    None => format!("threshold raised by {:.2}", f.bias),
                };
                let text = format!("result {}: {} wrong, {} right reports; {state}", p.key, f.wrong, f.right);
                let out = ResponseCacheFeedbackOutput {
                    key: p.key,
                    wrong: f.wrong,
                    right: f.right,
                    threshold_raise: f.bias,
                    quarantined: f.quarantined,
                };
                reply(text, &out)
            }
            Err(FeedbackError::NoSuchKey(k)) => fail(FeedbackError::NoSuchKey(k).to_string()),
            Err(FeedbackError::Results(e)) if e.is_caller_fixable() => fail(e.to_string()),
            Err(e) => Err(internal(e.to_string())),
        }
    }
}
