//! Codex rollouts: `session_meta` (base instructions), `turn_context` (model), `response_item`
//! (messages, function calls and outputs, reasoning: the Responses API input items),
//! `event_msg` `token_count` (usage with `cached_input_tokens`) and `compacted` (the replacement
//! history after a compaction). A request starts where the model's output items begin.
//! Read line by line (`Reader::feed`), like the Claude Code reader.

use super::{CompactionMark, Format, Messages, Reconstruction, Transcript, Turn, push_merged, ts};
use crate::prompt::request::{Provider, Usage};
use serde_json::{Value, json};

/// The reader's state: the transcript so far plus the current model and request boundary.
pub(super) struct Reader {
    t: Transcript,
    model: String,
    open: bool,
    after_compaction: bool,
    last_total: Option<Value>,
}

impl Reader {
    /// An empty reader.
    pub(super) fn new() -> Reader {
        Reader {
            t: Transcript::empty(Format::Codex, Provider::OpenAiResponses),
            model: String::new(),
            open: false,
            after_compaction: false,
            last_total: None,
        }
    }

    /// Whether this line is one the reader understands (used to pick the format).
    pub(super) fn recognises(v: &Value) -> bool {
        matches!(
            v.get("type").and_then(Value::as_str),
            Some("session_meta" | "response_item" | "turn_context" | "event_msg" | "thread.started" | "turn.completed")
        )
    }

    /// The transcript read so far.
    pub(super) fn transcript(&self) -> &Transcript {
        &self.t
    }

    /// The transcript read so far, for a streaming caller to free what it is done with.
    pub(super) fn transcript_mut(&mut self) -> &mut Transcript {
        &mut self.t
    }

    /// The transcript; None when nothing was recognised.
    pub(super) fn finish(self) -> Option<Transcript> {
        let t = &self.t;
        let recognised = t.turns.len() + t.segments.iter().map(Vec::len).sum::<usize>() + t.compactions.len();
        (recognised > 0 || !self.model.is_empty() || t.system.is_some()).then_some(self.t)
    }

    /// Reads one line (`n` is its 1-based number).
    pub(super) fn feed(&mut self, n: usize, v: &Value) {
        let null = Value::Null;
        let p = v.get("payload").unwrap_or(&null);
        match v.get("type").and_then(Value::as_str) {
            Some("session_meta") => {
                self.t.system = p
                    .get("base_instructions")
                    .and_then(|b| b.get("text").cloned().or_else(|| b.as_str().map(|s| Value::String(s.into()))))
                    .or(self.t.system.take());
            }
            Some("turn_context") => {
                if let Some(m) = p.get("model").and_then(Value::as_str) {
                    self.model = m.to_string();
                }
            }
            Some("response_item") => {
                let output = is_model_output(p);
                let epoch = self.t.segments.len() - 1;
                let Some(seg) = self.t.segments.last_mut() else { return };
                if output && !self.open {
                    self.t.turns.push(Turn {
                        line: n,
                        timestamp_ms: ts(v),
                        model: self.model.clone(),
                        usage: None,
                        messages: Messages::Segment { epoch, upto: seg.len() },
                        reconstruction: Reconstruction::MessagesOnly,
                        after_compaction: std::mem::take(&mut self.after_compaction),
                        request_id: None,
                    });
                }
                self.open = output;
                seg.push(p.clone());
            }
            Some("event_msg") if p.get("type").and_then(Value::as_str) == Some("token_count") => {
                let Some(info) = p.get("info").filter(|i| !i.is_null()) else { return };
                let total = info.get("total_token_usage").cloned();
                if total.is_some() && total == self.last_total {
                    return;
                }
                self.last_total = total;
                let usage = info.get("last_token_usage").and_then(Usage::from_json);
                if let Some(m) = info.get("model").and_then(Value::as_str) {
                    self.model = m.to_string();
                }
                match self.t.turns.last_mut() {
                    Some(t) if t.usage.is_none() && t.reconstruction != Reconstruction::UsageOnly => t.usage = usage,
                    _ => self.t.turns.push(Turn {
                        line: n,
                        timestamp_ms: ts(v),
                        model: self.model.clone(),
                        usage,
                        messages: Messages::None,
                        reconstruction: Reconstruction::UsageOnly,
                        after_compaction: std::mem::take(&mut self.after_compaction),
                        request_id: None,
                    }),
                }
            }
            Some("turn.completed") => {
                // `codex exec --json` output: usage per turn, no request content.
                self.t.turns.push(Turn {
                    line: n,
                    timestamp_ms: ts(v),
                    model: self.model.clone(),
                    usage: v.get("usage").and_then(Usage::from_json),
                    messages: Messages::None,
                    reconstruction: Reconstruction::UsageOnly,
                    after_compaction: false,
                    request_id: None,
                });
            }
            Some("compacted") => {
                self.t.compactions.push(CompactionMark { line: n, trigger: None, pre_tokens: None });
                let history = match p.get("replacement_history").and_then(Value::as_array) {
                    Some(h) => h.clone(),
                    None => vec![
                        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": p.get("message").and_then(Value::as_str).unwrap_or_default()}]}),
                    ],
                };
                self.t.segments.push(history);
                self.after_compaction = true;
                self.open = false;
            }
            _ => {}
        }
    }
}

fn is_model_output(p: &Value) -> bool {
    match p.get("type").and_then(Value::as_str) {
        Some("message") => p.get("role").and_then(Value::as_str) == Some("assistant"),
        Some("function_call" | "reasoning" | "custom_tool_call" | "local_shell_call" | "web_search_call") => true,
        _ => false,
    }
}

/// The `text` of each part of a Responses item's list (a message's `content`, a reasoning's
/// `summary`, a tool output's parts), one per line; empty when it is not a list.
pub fn part_texts(parts: Option<&Value>) -> String {
    let texts: Vec<&str> = parts
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("text").and_then(Value::as_str))
        .collect();
    texts.join("\n")
}

/// Converts Responses input items to Anthropic-shaped messages (for compaction).
pub fn to_messages(items: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    for it in items {
        let s = |k: &str| it.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
        match it.get("type").and_then(Value::as_str) {
            Some("message") => {
                let role = if s("role") == "assistant" { "assistant" } else { "user" };
                push_merged(&mut out, role, vec![json!({"type": "text", "text": part_texts(it.get("content"))})]);
            }
            Some("function_call" | "custom_tool_call" | "local_shell_call") => {
                let args = it
                    .get("arguments")
                    .or_else(|| it.get("input"))
                    .or_else(|| it.get("action"))
                    .cloned()
                    .unwrap_or(Value::Null);
                let input = match &args {
                    Value::String(a) => serde_json::from_str(a).unwrap_or(json!({"raw": a})),
                    other => other.clone(),
                };
                push_merged(
                    &mut out,
                    "assistant",
                    vec![json!({"type": "tool_use", "id": s("call_id"), "name": s("name"), "input": input})],
                );
            }
            Some("function_call_output" | "custom_tool_call_output" | "local_shell_call_output") => {
                let content = match it.get("output") {
                    Some(Value::String(o)) => o.clone(),
                    Some(parts @ Value::Array(_)) => part_texts(Some(parts)),
                    Some(other) => other.to_string(),
                    None => String::new(),
                };
                push_merged(
                    &mut out,
                    "user",
                    vec![json!({"type": "tool_result", "tool_use_id": s("call_id"), "content": content})],
                );
            }
            Some("reasoning") => {
                let thinking = part_texts(it.get("summary"));
                push_merged(&mut out, "assistant", vec![json!({"type": "thinking", "thinking": thinking})]);
            }
            _ => {}
        }
    }
    out
}
