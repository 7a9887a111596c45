//! `session_event`: note a session event reported by an agent hook: a compaction, or a repeated
//! read answered by a note (counted in `cache_stats` under `dedup`).

use super::{Refrain, fail, internal, reply};
use crate::hooks::events::{self, SessionEvent};
use crate::stats;
use rmcp::handler::server::{tool::schema_for_output, wrapper::Parameters};
use rmcp::schemars::{self, JsonSchema};
use rmcp::{ErrorData, model::CallToolResult, tool, tool_router};
use serde::{Deserialize, Serialize};

/// Parameters of `session_event`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionEventParams {
    /// The agent: `claude-code`, `codex`, `gemini-cli`, `qwen-code`, `opencode` or `cursor`.
    pub agent: String,
    /// The event: `PreCompact`, `PostCompact` or `ReadDeduplicated`.
    pub event: String,
    /// The agent's session id.
    pub session_id: Option<String>,
    /// When it happened, in ms since the Unix epoch (default: now).
    pub at_ms: Option<u64>,
    /// `manual` or `auto`.
    pub trigger: Option<String>,
    /// The session transcript file.
    pub transcript_path: Option<String>,
    /// ReadDeduplicated: the estimated tokens the note saved.
    pub tokens_saved: Option<u64>,
}

/// Output of `session_event`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionEventOutput {
    /// Events noted for this session so far.
    pub session_events: usize,
}

#[tool_router(router = session_event_router, vis = "pub(crate)")]
impl Refrain {
    /// Note a compaction of an agent session, or a repeated read refrain answered with a note
    /// (called by refrain's hooks; agents need not call it).
    #[tool(
        name = "session_event",
        output_schema = schema_for_output::<SessionEventOutput>(),
        annotations(read_only_hint = false, idempotent_hint = true, destructive_hint = false, open_world_hint = false)
    )]
    pub async fn session_event(
        &self,
        Parameters(p): Parameters<SessionEventParams>,
    ) -> Result<CallToolResult, ErrorData> {
        let Some(session_id) = p.session_id.filter(|s| !s.is_empty()) else {
            return fail("session_id is required: pass the agent's session id from the hook payload");
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as u64)
            .unwrap_or(0);
        let tokens_saved = p.tokens_saved;
        let ev = SessionEvent {
            agent: p.agent,
            event: p.event,
            session_id,
            at_ms: p.at_ms.unwrap_or(now),
            trigger: p.trigger,
            transcript_path: p.transcript_path,
        };
        let store = &self.app.store;
        events::record(store, &ev).map_err(|e| internal(e.to_string()))?;
        if ev.event == crate::hooks::calls::READ_DEDUPLICATED {
            let agent = Some(ev.agent.as_str());
            let bump =
                |counter, by| stats::bump(store, "dedup", counter, agent, by).map_err(|e| internal(e.to_string()));
            bump("reads_deduplicated", 1)?;
            bump("tokens_saved", tokens_saved.unwrap_or(0))?;
        }
        store.flush_async().await.map_err(|e| internal(e.to_string()))?;
        let n = events::of_session(store, &ev.session_id).map_err(|e| internal(e.to_string()))?.len();
        reply(
            format!("noted {} of session {} ({n} events so far)", ev.event, ev.session_id),
            &SessionEventOutput { session_events: n },
        )
    }
}
