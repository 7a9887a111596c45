//! Gemini CLI: the turn a chat recording ends with. The task is the turn's prompt (AfterAgent
//! carries the user's own text, without context hooks added); the steps are `write_todos` items;
//! the calls are the tool calls that succeeded.

use super::Trace;
use crate::hooks::dedup::gemini::messages;
use crate::hooks::{Agent, names};
use serde_json::{Value, json};

/// The last turn of the recording; `prompt` is the prompt the hook payload names, if any.
pub fn turn(lines: &[Value], prompt: Option<&str>) -> Option<Trace> {
    let msgs = messages(lines);
    let start = msgs.iter().rposition(|m| user_text(m).is_some())?;
    let task = prompt.map(str::to_string).or_else(|| user_text(msgs[start]))?;
    let (mut steps, mut calls, mut done) = (Vec::new(), Vec::new(), true);
    for m in &msgs[start + 1..] {
        for tc in m.get("toolCalls").and_then(Value::as_array).into_iter().flatten() {
            let name = tc.get("name").and_then(Value::as_str).unwrap_or_default();
            let args = tc.get("args").cloned().unwrap_or(Value::Null);
            if tc.get("status").and_then(Value::as_str) != Some("success") || names::is_refrain(Agent::Gemini, name) {
                continue;
            }
            if name == "write_todos" {
                let todos = args.get("todos").and_then(Value::as_array).cloned().unwrap_or_default();
                steps = todos
                    .iter()
                    .filter_map(|t| t.get("description").and_then(Value::as_str).map(str::to_string))
                    .collect();
                done = todos
                    .iter()
                    .all(|t| matches!(t.get("status").and_then(Value::as_str), Some("completed" | "cancelled")));
            } else {
                calls.push(json!({"tool": name, "input": args}));
            }
        }
    }
    done.then_some(Trace { task: task.trim().to_string(), steps, calls })
}

/// The user's own text of a user message (not the session context Gemini CLI records first).
fn user_text(m: &Value) -> Option<String> {
    if m.get("type").and_then(Value::as_str) != Some("user") {
        return None;
    }
    let parts = m.get("content").and_then(Value::as_array)?;
    let text: Vec<&str> = parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect();
    let text = text.join("\n");
    super::is_user_text(&text).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_turn_becomes_a_trace_without_refrains_own_calls() {
        let lines = vec![
            json!({"id": "u0", "type": "user", "content": [{"text": "<session_context>\nsetup</session_context>"}]}),
            json!({"id": "u1", "type": "user", "content": [{"text": "Fix the typo in notes.txt"}]}),
            json!({"id": "g1", "type": "gemini", "toolCalls": [
                {"id": "c1", "name": "read_file", "args": {"file_path": "notes.txt"}, "status": "success"},
                {"id": "c2", "name": "mcp_refrain_cache_stats", "args": {}, "status": "success"},
                {"id": "c3", "name": "replace", "args": {"file_path": "notes.txt"}, "status": "success"}]}),
        ];
        let t = turn(&lines, None).unwrap();
        assert_eq!(t.task, "Fix the typo in notes.txt");
        assert_eq!(t.calls.iter().map(|c| c["tool"].as_str().unwrap()).collect::<Vec<_>>(), ["read_file", "replace"]);
        assert_eq!(turn(&lines, Some("the prompt as given")).unwrap().task, "the prompt as given");
    }
}
