//! The hook payload the agents send on stdin (snake_case JSON; every field optional here), and
//! `normalize`, which brings Cursor's and Gemini CLI's own field names onto Claude Code's.

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
    /// Gemini CLI AfterAgent: the final answer of the turn.
    pub prompt_response: Option<String>,
    /// Claude Code, Codex, Qwen Code: the subagent that made the call (absent in the main
    /// conversation).
    pub agent_id: Option<String>,
    /// Claude Code SubagentStop: the subagent's own transcript.
    pub agent_transcript_path: Option<String>,
    /// Qwen Code: the model's own id of the tool call.
    pub tool_call_id: Option<String>,
    /// Cursor: present on every Cursor payload (how refrain tells Cursor apart).
    pub cursor_version: Option<String>,
    /// Cursor: the conversation id (its session id).
    pub conversation_id: Option<String>,
    /// Cursor: the workspace folders (the first is the working directory).
    pub workspace_roots: Option<Vec<String>>,
    /// Cursor postToolUse: the tool's output.
    pub tool_output: Option<Value>,
    /// Cursor afterFileEdit / opencode file.edited: the file written.
    pub file_path: Option<String>,
    /// Cursor stop: `completed`, `aborted` or `error`.
    pub status: Option<String>,
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

    /// True when Cursor sent this payload (Cursor also runs Claude Code's hooks).
    pub fn from_cursor(&self) -> bool {
        self.cursor_version.is_some()
    }

    /// Fills Claude Code's field names from the agent's own: Cursor's conversation id, workspace
    /// root, tool output and edited file; a file edit becomes an `Edit` of that file.
    pub fn normalize(mut self) -> Payload {
        if self.session_id.is_none() {
            self.session_id = self.conversation_id.clone();
        }
        if self.cwd.as_deref().is_none_or(str::is_empty) {
            self.cwd = self.workspace_roots.as_ref().and_then(|r| r.first().cloned());
        }
        if self.tool_response.is_none() {
            self.tool_response = self.tool_output.take();
        }
        if let (None, Some(file)) = (&self.tool_name, &self.file_path) {
            self.tool_name = Some("Edit".into());
            self.tool_input = Some(serde_json::json!({"file_path": file}));
        }
        self
    }
}
