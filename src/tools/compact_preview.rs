//! `compact_preview`: what a cache-aware compaction policy would clear, what it saves, where the
//! cached prefix breaks and whether it pays — without changing anything.

use super::{Refrain, fail, internal, reply};
use crate::prompt::{ReplacementLog, Rules};
use crate::transcript::Access;
use crate::transcript::analyze::{self, CompactInput};
use rmcp::handler::server::{tool::schema_for_output, wrapper::Parameters};
use rmcp::schemars::{self, JsonSchema};
use rmcp::{ErrorData, model::CallToolResult, tool, tool_router};
use serde::{Deserialize, Serialize};

/// Policy fields; each overrides the preset's value.
#[derive(Debug, Default, Clone, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyParams {
    /// Only compact at or above this many input tokens (0: always).
    pub trigger_tokens: Option<u64>,
    /// Keep the results of the last N tool uses; clear older ones.
    pub keep_tool_uses: Option<usize>,
    /// Keep everything in the last N user turns.
    pub keep_turns: Option<usize>,
    /// Never clear results of these tools.
    pub exclude_tools: Option<Vec<String>>,
    /// Only clear results of these tools.
    pub only_tools: Option<Vec<String>>,
    /// Also clear the inputs of the cleared tool calls.
    pub clear_tool_inputs: Option<bool>,
    /// Clear nothing unless at least this many tokens would go.
    pub clear_at_least: Option<u64>,
    /// Remove thinking except in the last N assistant messages.
    pub clear_thinking_keep_turns: Option<usize>,
    /// Truncate any tool result above this many tokens.
    pub result_budget_tokens: Option<u64>,
}

/// Parameters of `compact_preview`: `messages` or `transcript`, plus a preset and/or policy.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompactPreviewParams {
    /// Anthropic-style messages (`[{role, content: [blocks]}]`) to compact.
    #[serde(default)]
    pub messages: Option<Vec<serde_json::Value>>,
    /// Or the path of a Claude Code session / Codex rollout (its latest conversation is used).
    #[serde(default)]
    pub transcript: Option<String>,
    /// `anthropic_clear_tool_uses` (default), `claude_code_microcompact` or `agentcache`.
    #[serde(default)]
    pub preset: Option<String>,
    /// Policy fields overriding the preset.
    #[serde(default)]
    pub policy: Option<PolicyParams>,
    /// The `log` of an earlier preview (`{entries: [{target, action, tool}], covered_messages}`):
    /// its decisions are replayed byte for byte and the messages it covers are not re-decided.
    #[serde(default)]
    pub replacement_log: Option<serde_json::Value>,
    /// Return the compacted messages too.
    #[serde(default)]
    pub include_messages: bool,
    /// Model id for prices (default: the transcript's).
    #[serde(default)]
    pub model: Option<String>,
}

/// Output of `compact_preview`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct CompactPreviewOutput {
    /// `triggered`, `tokens_before`, `tokens_after`, `counting`, `actions` [{target, action, tool,
    /// message, tokens_before, tokens_after, replayed}], `per_tool`, `cache` {breaks_at_message,
    /// write_tokens, next_request_usd_with/without, saving_per_later_request_usd,
    /// pays_back_after_requests, verdict}, `log` (pass back as `replacement_log`), `messages`.
    pub plan: serde_json::Value,
}

#[tool_router(router = compact_preview_router, vis = "pub(crate)")]
impl Refrain {
    /// Preview a cache-aware compaction of a conversation (messages or a transcript): which old
    /// tool results, inputs and thinking a policy clears (per tool, with token estimates), tokens
    /// before/after, where the cached prefix breaks and whether the cache write pays. Placeholders
    /// are deterministic; pass the returned log back to get identical bytes. Read-only.
    #[tool(
        name = "compact_preview",
        output_schema = schema_for_output::<CompactPreviewOutput>(),
        annotations(read_only_hint = true, idempotent_hint = true, destructive_hint = false, open_world_hint = false)
    )]
    pub async fn compact_preview(
        &self,
        Parameters(p): Parameters<CompactPreviewParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let cfg = self.app.config.prompt.clone();
        let access = Access::new(&self.app.project.root, &cfg.transcript_roots);
        let policy = p.policy.map(|x| serde_json::to_value(x).map_err(|e| internal(e.to_string()))).transpose()?;
        let log = match p.replacement_log.map(serde_json::from_value::<ReplacementLog>).transpose() {
            Ok(l) => l,
            Err(e) => return fail(format!("replacement_log is not a log returned by compact_preview: {e}")),
        };
        let input = CompactInput {
            messages: p.messages,
            transcript: p.transcript.map(Into::into),
            preset: p.preset,
            policy,
            log,
            include_messages: p.include_messages,
            model: p.model,
        };
        let run = move || {
            let rules = Rules::load(cfg.rules_file.as_deref()).map_err(|e| e.to_string())?;
            analyze::run_compact(&input, &rules, &access).map_err(|e| e.to_string())
        };
        // Already on this call's own blocking thread (see server::run), inside its budget.
        let plan = match run() {
            Ok(r) => r,
            Err(msg) => return fail(msg),
        };
        let text = format!(
            "{} -> {} tokens (estimate), {} actions; {}",
            plan.tokens_before,
            plan.tokens_after,
            plan.actions.len(),
            plan.cache.verdict
        );
        let value = serde_json::to_value(&plan).map_err(|e| internal(e.to_string()))?;
        reply(text, &CompactPreviewOutput { plan: value })
    }
}
