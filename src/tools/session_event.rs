//! `session_event`: note a session event reported by an agent hook: a compaction, a model request
//! (refrain's tool list is paid again), a repeated read answered by a note or a diff, or text a
//! hook added to the context. The last three go to the savings ledger, counted here with the
//! one tokenizer (hook processes are short-lived; the server builds the tokenizer once).

use super::surface;
use super::{Refrain, fail, internal, reply};
use crate::hooks::calls;
use crate::hooks::events::{self, SessionEvent};
use crate::{ledger, stats};
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
    /// The event: `PreCompact`, `PostCompact`, `Request`, `ReadDeduplicated` or `Injected`.
    pub event: String,
    /// The agent's session id.
    pub session_id: Option<String>,
    /// When it happened, in ms since the Unix epoch (default: now).
    pub at_ms: Option<u64>,
    /// `manual` or `auto`.
    pub trigger: Option<String>,
    /// The session transcript file.
    pub transcript_path: Option<String>,
    /// ReadDeduplicated: the estimated tokens the note saved (hooks of older builds; the texts
    /// below are counted instead when given).
    pub tokens_saved: Option<u64>,
    /// ReadDeduplicated: the text the tool returned, which refrain kept out of the context.
    pub removed_text: Option<String>,
    /// ReadDeduplicated and Injected: the text refrain put into the context instead.
    pub added_text: Option<String>,
    /// What it was about (a path; a plan id), for the ledger's listing.
    pub subject: Option<String>,
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
        let now = crate::results::entry::now_ms();
        let tokens_saved = p.tokens_saved;
        let texts = (p.removed_text, p.added_text, p.subject);
        let ev = SessionEvent {
            agent: p.agent,
            event: p.event,
            session_id,
            at_ms: p.at_ms.unwrap_or(now),
            trigger: p.trigger,
            transcript_path: p.transcript_path,
        };
        let store = &self.app.store;
        let kind = match ev.event.as_str() {
            calls::REQUEST => None,
            calls::READ_DEDUPLICATED if ev.trigger.as_deref() == Some("diff") => Some(ledger::Kind::ReadDiff),
            calls::READ_DEDUPLICATED => Some(ledger::Kind::ReadNote),
            calls::INJECTED => Some(ledger::Kind::Injected),
            _ => {
                events::record(store, &ev).map_err(|e| internal(e.to_string()))?;
                return noted(store, &ev).await;
            }
        };
        // Every one of these is followed by a model request, which carries refrain's tool list.
        let per_request = surface::per_request_tokens(&ev.agent, &self.app.config.server);
        ledger::record_request(store, &ev.agent, per_request).map_err(|e| internal(e.to_string()))?;
        let mut saved = tokens_saved.unwrap_or(0);
        if let Some(kind) = kind {
            let (removed, added, subject) = texts;
            let mut line = ledger::Line::counted(
                &ev.agent,
                Some(&ev.session_id),
                kind,
                removed.as_deref().unwrap_or(""),
                added.as_deref().unwrap_or(""),
                subject.as_deref().unwrap_or(""),
            );
            line.at_ms = ev.at_ms;
            if removed.is_none() {
                line.removed = saved;
            }
            saved = line.net().max(0) as u64;
            let new = ledger::record(store, &line).map_err(|e| internal(e.to_string()))?;
            if new && kind == ledger::Kind::Injected && line.subject.starts_with(calls::SUGGESTED) {
                crate::plan::restraint::offered(store).map_err(|e| internal(e.to_string()))?;
            }
        }
        if ev.event == calls::READ_DEDUPLICATED {
            events::record(store, &ev).map_err(|e| internal(e.to_string()))?;
            let agent = Some(ev.agent.as_str());
            let bump =
                |counter, by| stats::bump(store, "dedup", counter, agent, by).map_err(|e| internal(e.to_string()));
            bump("reads_deduplicated", 1)?;
            bump("tokens_saved", saved)?;
        }
        if kind.is_none() {
            // A bare request: counted, nothing else kept (no event line per tool call).
            return reply(
                format!("noted a request of session {}", ev.session_id),
                &SessionEventOutput { session_events: 0 },
            );
        }
        noted(store, &ev).await
    }
}

/// Flushes what was noted and answers with the session's events so far.
async fn noted(store: &crate::store::Store, ev: &SessionEvent) -> Result<CallToolResult, ErrorData> {
    store.flush_async().await.map_err(|e| internal(e.to_string()))?;
    let n = events::of_session(store, &ev.session_id).map_err(|e| internal(e.to_string()))?.len();
    reply(
        format!("noted {} of session {} ({n} events so far)", ev.event, ev.session_id),
        &SessionEventOutput { session_events: n },
    )
}
