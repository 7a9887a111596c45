//! Codex rollouts: `session_meta` (base instructions), `turn_context` (model), `response_item`
//! (messages, function calls and outputs, reasoning: the Responses API input items),
//! `event_msg` `token_count` (usage with `cached_input_tokens`) and `compacted` (the replacement
//! history after a compaction). A request starts where the model's output items begin.

use super::{CompactionMark, Format, Messages, Reconstruction, Transcript, Turn, push_merged, ts};
use crate::prompt::request::{Provider, Usage};
use serde_json::{Value, json};

/// Reads Codex lines; None when none is recognised.
pub(super) fn read(lines: &[(usize, Value)]) -> Option<Transcript> {
    let mut segments: Vec<Vec<Value>> = vec![vec![]];
    let mut turns: Vec<Turn> = Vec::new();
    let mut compactions = Vec::new();
    let mut system = None;
    let mut model = String::new();
    let mut open = false;
    let mut after_compaction = false;
    let mut last_total: Option<Value> = None;
    for (n, v) in lines {
        let p = v.get("payload").cloned().unwrap_or(Value::Null);
        match v.get("type").and_then(Value::as_str) {
            Some("session_meta") => {
                system = p
                    .get("base_instructions")
                    .and_then(|b| b.get("text").cloned().or_else(|| b.as_str().map(|s| Value::String(s.into()))))
                    .or(system);
            }
            Some("turn_context") => {
                if let Some(m) = p.get("model").and_then(Value::as_str) {
                    model = m.to_string();
                }
            }
            Some("response_item") => {
                let output = is_model_output(&p);
                let epoch = segments.len() - 1;
                let Some(seg) = segments.last_mut() else { continue };
                if output && !open {
                    turns.push(Turn {
                        line: *n,
                        timestamp_ms: ts(v),
                        model: model.clone(),
                        usage: None,
                        messages: Messages::Segment { epoch, upto: seg.len() },
                        reconstruction: Reconstruction::MessagesOnly,
                        after_compaction: std::mem::take(&mut after_compaction),
                        request_id: None,
                    });
                }
                open = output;
                seg.push(p);
            }
            Some("event_msg") if p.get("type").and_then(Value::as_str) == Some("token_count") => {
                let Some(info) = p.get("info").filter(|i| !i.is_null()) else { continue };
                let total = info.get("total_token_usage").cloned();
                if total.is_some() && total == last_total {
                    continue;
                }
                last_total = total;
                let usage = info.get("last_token_usage").and_then(Usage::from_json);
                if let Some(m) = info.get("model").and_then(Value::as_str) {
                    model = m.to_string();
                }
                match turns.last_mut() {
                    Some(t) if t.usage.is_none() && t.reconstruction != Reconstruction::UsageOnly => t.usage = usage,
                    _ => turns.push(Turn {
                        line: *n,
                        timestamp_ms: ts(v),
                        model: model.clone(),
                        usage,
                        messages: Messages::None,
                        reconstruction: Reconstruction::UsageOnly,
                        after_compaction: std::mem::take(&mut after_compaction),
                        request_id: None,
                    }),
                }
            }
            Some("turn.completed") => {
                // `codex exec --json` output: usage per turn, no request content.
                turns.push(Turn {
                    line: *n,
                    timestamp_ms: ts(v),
                    model: model.clone(),
                    usage: v.get("usage").and_then(Usage::from_json),
                    messages: Messages::None,
                    reconstruction: Reconstruction::UsageOnly,
                    after_compaction: false,
                    request_id: None,
                });
            }
            Some("compacted") => {
                compactions.push(CompactionMark { line: *n, trigger: None, pre_tokens: None });
                let history = match p.get("replacement_history").and_then(Value::as_array) {
                    Some(h) => h.clone(),
                    None => vec![
                        json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": p.get("message").and_then(Value::as_str).unwrap_or_default()}]}),
                    ],
                };
                segments.push(history);
                after_compaction = true;
                open = false;
            }
            _ => {}
        }
    }
    let recognised = turns.len() + segments.iter().map(Vec::len).sum::<usize>() + compactions.len();
    if recognised == 0 && model.is_empty() && system.is_none() {
        return None;
    }
    Some(Transcript {
        format: Format::Codex,
        provider: Provider::OpenAiResponses,
        lines: 0,
        bad_lines: 0,
        turns,
        compactions,
        sidechain_messages: 0,
        segments,
        system,
    })
}

fn is_model_output(p: &Value) -> bool {
    match p.get("type").and_then(Value::as_str) {
        Some("message") => p.get("role").and_then(Value::as_str) == Some("assistant"),
        Some("function_call" | "reasoning" | "custom_tool_call" | "local_shell_call" | "web_search_call") => true,
        _ => false,
    }
}

/// Converts Responses input items to Anthropic-shaped messages (for compaction).
pub fn to_messages(items: &[Value]) -> Vec<Value> {
    let mut out = Vec::new();
    for it in items {
        let s = |k: &str| it.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
        match it.get("type").and_then(Value::as_str) {
            Some("message") => {
                let role = if s("role") == "assistant" { "assistant" } else { "user" };
                let text: Vec<&str> = it
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|c| c.get("text").and_then(Value::as_str))
                    .collect();
                push_merged(&mut out, role, vec![json!({"type": "text", "text": text.join("\n")})]);
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
                    Some(Value::Array(parts)) => parts
                        .iter()
                        .filter_map(|c| c.get("text").and_then(Value::as_str))
                        .collect::<Vec<_>>()
                        .join("\n"),
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
                let text: Vec<&str> = it
                    .get("summary")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(|c| c.get("text").and_then(Value::as_str))
                    .collect();
                push_merged(&mut out, "assistant", vec![json!({"type": "thinking", "thinking": text.join("\n")})]);
            }
            _ => {}
        }
    }
    out
}
