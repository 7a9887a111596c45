//! Qwen Code: the turn a chat recording ends with (the branch ending at its last entry). The task
//! is the first text of the turn's user message; the steps are `todo_write` items; the calls are
//! the model's function calls.

use super::Trace;
use crate::hooks::dedup::qwen::branch;
use crate::hooks::{Agent, names};
use serde_json::{Value, json};

/// The last turn of the recording.
pub fn turn(lines: &[Value]) -> Option<Trace> {
    let chain = branch(lines);
    let start = chain.iter().rposition(|e| user_text(e).is_some())?;
    let task = user_text(chain[start])?;
    let (mut steps, mut calls, mut done) = (Vec::new(), Vec::new(), true);
    for e in &chain[start + 1..] {
        if e.get("type").and_then(Value::as_str) != Some("assistant") {
            continue;
        }
        let parts = e.pointer("/message/parts").and_then(Value::as_array).into_iter().flatten();
        for fc in parts.filter_map(|p| p.get("functionCall")) {
            let name = fc.get("name").and_then(Value::as_str).unwrap_or_default();
            let args = fc.get("args").cloned().unwrap_or(Value::Null);
            if names::is_refrain(Agent::Qwen, name) {
                continue;
            }
            if name == "todo_write" {
                let todos = args.get("todos").and_then(Value::as_array).cloned().unwrap_or_default();
                steps =
                    todos.iter().filter_map(|t| t.get("content").and_then(Value::as_str).map(str::to_string)).collect();
                done = todos.iter().all(|t| t.get("status").and_then(Value::as_str) == Some("completed"));
            } else {
                calls.push(json!({"tool": name, "input": args}));
            }
        }
    }
    done.then_some(Trace { task, steps, calls })
}

fn user_text(e: &Value) -> Option<String> {
    if e.get("type").and_then(Value::as_str) != Some("user") {
        return None;
    }
    let parts = e.pointer("/message/parts").and_then(Value::as_array)?;
    let first = parts.iter().find_map(|p| p.get("text").and_then(Value::as_str))?;
    super::is_user_text(first).then(|| first.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_turn_becomes_a_trace() {
        let lines = vec![
            json!({"uuid": "1", "parentUuid": null, "type": "user", "message": {"parts": [{"text": "Fix the typo"}]}}),
            json!({"uuid": "2", "parentUuid": "1", "type": "assistant", "message": {"parts": [
                {"functionCall": {"id": "c1", "name": "read_file", "args": {"file_path": "/p/n.txt"}}},
                {"functionCall": {"id": "c2", "name": "mcp__refrain__cache_stats", "args": {}}}]}}),
        ];
        let t = turn(&lines).unwrap();
        assert_eq!((t.task.as_str(), t.calls.len()), ("Fix the typo", 1));
    }
}
