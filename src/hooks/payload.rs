//! The hook payload both agents send on stdin (snake_case JSON; every field optional here).

use serde::Deserialize;
use serde_json::Value;

/// A hook payload; unknown fields are ignored, missing ones are `None`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Payload {
    /// The agent's session id.
    pub session_id: Option<String>,
    /// The session transcript (Claude Code JSONL) or rollout (Codex JSONL).
    pub transcript_path: Option<String>,
    /// The agent's working directory.
    pub cwd: Option<String>,
    /// The event name.
    pub hook_event_name: Option<String>,
    /// Claude Code: the prompt this turn answers.
    pub prompt_id: Option<String>,
    /// Codex: the turn id.
    pub turn_id: Option<String>,
    /// UserPromptSubmit: the prompt text.
    pub prompt: Option<String>,
    /// Tool events: the tool's name (`Read`, `mcp__server__tool`, …).
    pub tool_name: Option<String>,
    /// Tool events: the tool's input.
    pub tool_input: Option<Value>,
    /// PostToolUse: the tool's output.
    pub tool_response: Option<Value>,
    /// Tool events: the call id.
    pub tool_use_id: Option<String>,
    /// Stop: true when a Stop hook already made the agent continue.
    pub stop_hook_active: Option<bool>,
    /// Stop: the agent's last message.
    pub last_assistant_message: Option<String>,
    /// Compaction events: `manual` or `auto`.
    pub trigger: Option<String>,
    /// PostCompact: the summary the compaction produced.
    pub compact_summary: Option<String>,
}

impl Payload {
    /// Parses a payload; anything but a JSON object is malformed.
    pub fn parse(bytes: &[u8]) -> Result<Payload, super::Error> {
        let value: Value = serde_json::from_slice(bytes).map_err(|e| super::Error::Payload(e.to_string()))?;
        if !value.is_object() {
            return Err(super::Error::Payload("not a JSON object".into()));
        }
        serde_json::from_value(value).map_err(|e| super::Error::Payload(e.to_string()))
    }
}
