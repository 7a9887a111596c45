//! `explain_cache_break`: why a prompt cache broke between two requests, or everywhere in a
//! transcript — first divergence, ranked causes with fixes, tokens and cost lost.

use super::{Refrain, fail, internal, reply};
use crate::prompt::Rules;
use crate::transcript::Access;
use crate::transcript::analyze::{self, ExplainInput, ExplainReport};
use rmcp::handler::server::{tool::schema_for_output, wrapper::Parameters};
use rmcp::schemars::{self, JsonSchema};
use rmcp::{ErrorData, model::CallToolResult, tool, tool_router};
use serde::{Deserialize, Serialize};

/// Parameters of `explain_cache_break`: either `before` + `after`, or `transcript`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExplainCacheBreakParams {
    /// The earlier request body as sent to the provider (Anthropic Messages, OpenAI Chat
    /// Completions or Responses), or an envelope `{"body": ..., "timestamp": RFC3339, "usage": {...}}`.
    #[serde(default)]
    pub before: Option<serde_json::Value>,
    /// The later request body (same forms as `before`).
    #[serde(default)]
    pub after: Option<serde_json::Value>,
    /// Force the request format: `anthropic`, `openai` or `openai_responses` (default: detected).
    #[serde(default)]
    pub provider: Option<String>,
    /// Path of a Claude Code session (.jsonl) or Codex rollout instead of two requests. Alone, every
    /// break in the session is reported.
    #[serde(default)]
    pub transcript: Option<String>,
    /// With `transcript`: index of the earlier request (0-based).
    #[serde(default)]
    pub from_turn: Option<usize>,
    /// With `transcript`: index of the later request (default `from_turn + 1`).
    #[serde(default)]
    pub to_turn: Option<usize>,
    /// With `transcript`: explain only the last two requests.
    #[serde(default)]
    pub last_two: bool,
}

/// Output of `explain_cache_break`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ExplainCacheBreakOutput {
    /// `pair` (two requests: `broke`, `verdict`, `divergence` {level, index, sub, path,
    /// char_offset, before, after}, `causes` [{kind, rank, primary, summary, level, tokens_lost,
    /// fix}], `tokens` {cached_before, cached_after, lost, counting...}, `cost` {lost_usd...},
    /// `reported`, `layout`) or `session` (`turns`, `breaks` [{from_turn, to_turn, line,
    /// explanation, reported_note}], `efficiency`, `bad_lines`, `compactions`).
    pub report: serde_json::Value,
}

#[tool_router(router = explain_cache_break_router, vis = "pub(crate)")]
impl Refrain {
    /// Explain why the prompt cache broke between two requests (or everywhere in a Claude Code /
    /// Codex transcript): the first divergence (level, message, JSON path, char offset, excerpt),
    /// every cause ranked by cached tokens lost (model, tools, system edits, mutated messages,
    /// thinking/tool_choice, images, breakpoints, TTL, minimum size), the cost, and a fix for each.
    /// Token counts are estimates. Read-only.
    #[tool(
        name = "explain_cache_break",
        output_schema = schema_for_output::<ExplainCacheBreakOutput>(),
        annotations(read_only_hint = true, idempotent_hint = true, destructive_hint = false, open_world_hint = false)
    )]
    pub async fn explain_cache_break(
        &self,
        Parameters(p): Parameters<ExplainCacheBreakParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let cfg = self.app.config.prompt.clone();
        let access = Access::new(&self.app.project.root, &cfg.transcript_roots);
        let input = ExplainInput {
            before: p.before,
            after: p.after,
            provider: p.provider,
            transcript: p.transcript.map(Into::into),
            from_turn: p.from_turn,
            to_turn: p.to_turn,
            last_two: p.last_two,
        };
        let run = move || -> Result<ExplainReport, String> {
            let rules = Rules::load(cfg.rules_file.as_deref()).map_err(|e| e.to_string())?;
            analyze::run_explain(&input, &rules, &access).map_err(|e| e.to_string())
        };
        // Already on this call's own blocking thread (see server::run), inside its budget.
        let report = match run() {
            Ok(r) => r,
            Err(msg) => return fail(msg),
        };
        let text = match &report {
            ExplainReport::Pair(b) => b.verdict.clone(),
            ExplainReport::Session(s) => format!(
                "{} requests, {} cache breaks, {:.0}% of prompt tokens read from cache",
                s.turns,
                s.breaks.len(),
                s.efficiency.cache_read_share * 100.0
            ),
        };
        let value = serde_json::to_value(&report).map_err(|e| internal(e.to_string()))?;
        reply(text, &ExplainCacheBreakOutput { report: value })
    }
}
