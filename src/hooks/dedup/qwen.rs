//! Qwen Code chat recordings: the reads still in context when a tool call finishes. Entries form
//! a tree (`parentUuid`) like Claude Code's; a `chat_compression` system entry ends what came
//! before. Qwen Code also clears old tool outputs, so the same budget as Gemini CLI applies.

use super::gemini::MASKING_BUDGET;
use super::view;
use super::window::{Seen, Window};
use crate::hooks::Agent;
use serde_json::Value;
use std::collections::HashMap;

/// The reads in context, oldest first, leaving out the call `current` (the model's call id).
pub fn seen(lines: &[Value], current: Option<&str>, cwd: &str) -> Vec<Seen> {
    let mut w = Window::new(Some(MASKING_BUDGET));
    let mut calls: HashMap<String, (String, Value)> = HashMap::new();
    for e in branch(lines) {
        let cwd = e.get("cwd").and_then(Value::as_str).unwrap_or(cwd);
        let parts = e.pointer("/message/parts").and_then(Value::as_array).into_iter().flatten();
        match e.get("type").and_then(Value::as_str) {
            Some("system") if e.get("subtype").and_then(Value::as_str) == Some("chat_compression") => w.boundary(),
            Some("user") => w.message(),
            Some("assistant") => {
                w.message();
                if let Some(n) = e.pointer("/usageMetadata/promptTokenCount").and_then(Value::as_u64) {
                    w.usage(n);
                }
                for fc in parts.filter_map(|p| p.get("functionCall")) {
                    let (Some(id), Some(name)) =
                        (fc.get("id").and_then(Value::as_str), fc.get("name").and_then(Value::as_str))
                    else {
                        continue;
                    };
                    calls.insert(id.to_string(), (name.to_string(), fc.get("args").cloned().unwrap_or(Value::Null)));
                }
            }
            Some("tool_result") => {
                w.message();
                let ok = e.pointer("/toolCallResult/status").and_then(Value::as_str) == Some("success");
                for fr in parts.filter_map(|p| p.get("functionResponse")) {
                    let id = fr.get("id").and_then(Value::as_str).unwrap_or_default();
                    let output = fr.pointer("/response/output").and_then(Value::as_str).unwrap_or_default();
                    if Some(id) == current {
                        continue;
                    }
                    match calls.get(id).and_then(|(name, args)| view::key(Agent::Qwen, name, args, cwd)) {
                        Some(key) => {
                            let text = ok.then(|| view::tool_text(Agent::Qwen, key.via, output)).flatten();
                            w.read(id, key, text.and_then(view::content), output.len());
                        }
                        None => w.output(output.len()),
                    }
                }
            }
            _ => {}
        }
    }
    w.finish()
}

/// The entries from the root of the branch ending at the last entry.
pub(crate) fn branch(lines: &[Value]) -> Vec<&Value> {
    let by_uuid: HashMap<&str, &Value> =
        lines.iter().filter_map(|e| Some((e.get("uuid").and_then(Value::as_str)?, e))).collect();
    let mut out = Vec::new();
    let mut next = lines.iter().rev().find(|e| e.get("uuid").is_some());
    while let Some(e) = next {
        out.push(e);
        if out.len() > lines.len() {
            break;
        }
        next = e.get("parentUuid").and_then(Value::as_str).and_then(|p| by_uuid.get(p).copied());
    }
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_count_until_a_compression() {
        let mut lines = vec![
            json!({"uuid": "a", "parentUuid": null, "type": "assistant", "cwd": "/p",
                "message": {"parts": [{"functionCall": {"id": "c1", "name": "read_file", "args": {"file_path": "/p/n.txt"}}}]}}),
            json!({"uuid": "b", "parentUuid": "a", "type": "tool_result", "cwd": "/p", "toolCallResult": {"status": "success"},
                "message": {"parts": [{"functionResponse": {"id": "c1", "name": "read_file", "response": {"output": "x\n"}}}]}}),
        ];
        assert_eq!(seen(&lines, Some("c2"), "/p")[0].text.as_deref(), Some("x\n"));
        assert!(seen(&lines, Some("c1"), "/p").is_empty(), "the current call is left out");
        lines.push(json!({"uuid": "c", "parentUuid": "b", "type": "system", "subtype": "chat_compression"}));
        assert!(seen(&lines, Some("c2"), "/p").is_empty());
    }

    #[test]
    fn an_empty_shell_output_between_two_reads_hides_nothing() {
        let text: String =
            (1..=40).map(|i| format!("line {i} of the guide, long enough to be worth a note\n")).collect();
        let call = |id: &str, uuid: &str, parent: Value| {
            json!({"uuid": uuid, "parentUuid": parent, "type": "assistant", "cwd": "/p", "message": {"parts": [
                {"functionCall": {"id": id, "name": "run_shell_command", "args": {"command": "cat g.md"}}}]}})
        };
        let result = |id: &str, uuid: &str, parent: &str, shown: &str| {
            let output = format!(
                "Command: cat g.md\nDirectory: (root)\nOutput: {shown}\nError: (none)\nExit Code: 0\nSignal: (none)"
            );
            json!({"uuid": uuid, "parentUuid": parent, "type": "tool_result", "cwd": "/p", "toolCallResult": {"status": "success"},
                "message": {"parts": [{"functionResponse": {"id": id, "name": "run_shell_command", "response": {"output": output}}}]}})
        };
        let lines = [
            call("c1", "a", Value::Null),
            result("c1", "b", "a", &text),
            call("c2", "c", json!("b")),
            result("c2", "d", "c", "(empty)"),
            call("c3", "e", json!("d")),
        ];
        let key = view::key(Agent::Qwen, "run_shell_command", &json!({"command": "cat g.md"}), "/p").unwrap();
        let d = super::super::decide_with(&key, &text, &seen(&lines, Some("c3"), "/p"));
        assert!(d.is_some_and(|d| d.note.contains("unchanged since your read")), "the first read was hidden");
    }
}
