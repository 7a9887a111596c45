//! Codex rollouts: the reads still in context when a shell call finishes. A `compacted` item ends
//! what came before; the stdout of a shell read is what follows `Output:` in its recorded output.

use super::view;
use super::window::{Seen, Window};
use crate::hooks::Agent;
use serde_json::Value;
use std::collections::HashMap;

/// The reads in context, oldest first, leaving out the call `current`.
pub fn seen(lines: &[Value], current: Option<&str>, cwd: &str) -> Vec<Seen> {
    let mut w = Window::new(None);
    let mut calls: HashMap<String, (String, Value)> = HashMap::new();
    let mut cwd = cwd.to_string();
    for e in lines {
        let p = e.get("payload").unwrap_or(&Value::Null);
        let ptype = p.get("type").and_then(Value::as_str);
        match (e.get("type").and_then(Value::as_str), ptype) {
            (Some("compacted"), _) | (Some("response_item"), Some("compaction")) => w.boundary(),
            (Some("session_meta" | "turn_context"), _) => {
                if let Some(c) = p.get("cwd").and_then(Value::as_str) {
                    cwd = c.to_string();
                }
            }
            (Some("event_msg"), Some("token_count")) => {
                if let Some(n) = p.pointer("/info/last_token_usage/input_tokens").and_then(Value::as_u64) {
                    w.usage(n);
                }
            }
            (Some("response_item"), Some("message")) => w.message(),
            (Some("response_item"), Some("function_call" | "local_shell_call")) => {
                let (Some(id), Some(name)) =
                    (p.get("call_id").and_then(Value::as_str), p.get("name").and_then(Value::as_str))
                else {
                    continue;
                };
                let raw = p.get("arguments").cloned().unwrap_or(Value::Null);
                let args = raw.as_str().and_then(|s| serde_json::from_str(s).ok()).unwrap_or(raw);
                calls.insert(id.to_string(), (name.to_string(), args));
            }
            (Some("response_item"), Some("function_call_output" | "custom_tool_call_output")) => {
                w.message();
                let id = p.get("call_id").and_then(Value::as_str).unwrap_or_default();
                let output = output_text(p.get("output").unwrap_or(&Value::Null));
                if Some(id) == current {
                    continue;
                }
                let key = calls.get(id).and_then(|(name, args)| {
                    let dir = args.get("workdir").and_then(Value::as_str).unwrap_or(&cwd);
                    view::key(Agent::Codex, name, args, dir)
                });
                match key {
                    Some(key) => {
                        let text = view::codex_rollout_text(&output).and_then(view::content);
                        w.read(id, key, text, output.len());
                    }
                    None => w.output(output.len()),
                }
            }
            _ => {}
        }
    }
    w.finish()
}

/// A recorded output as text: a string, or the text items of a list.
fn output_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            items.iter().filter_map(|i| i.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n")
        }
        Value::Object(o) => o.get("content").map(output_text).unwrap_or_default(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str, cmd: &str) -> Value {
        json!({"type": "response_item", "payload": {"type": "function_call", "name": "exec_command", "call_id": id,
            "arguments": json!({"cmd": cmd}).to_string()}})
    }

    fn output(id: &str, stdout: &str) -> Value {
        json!({"type": "response_item", "payload": {"type": "function_call_output", "call_id": id,
            "output": format!("Chunk ID: 1\nWall time: 0.0 seconds\nProcess exited with code 0\nOutput:\n{stdout}")}})
    }

    #[test]
    fn shell_reads_count_until_a_compaction() {
        let mut lines = vec![
            json!({"type": "session_meta", "payload": {"cwd": "/p"}}),
            call("c1", "cat notes.txt"),
            output("c1", "a\nb\n"),
            call("c2", "cat notes.txt"),
        ];
        let got = seen(&lines, Some("c2"), "/x");
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].key.path.as_str(), got[0].text.as_deref()), ("/p/notes.txt", Some("a\nb\n")));
        lines.insert(3, json!({"type": "compacted", "payload": {"message": "summary"}}));
        assert!(seen(&lines, Some("c2"), "/x").is_empty());
    }

    /// A Codex subagent's payload carries its agent_id and its own rollout: the rollout is read
    /// only when its session_meta names that thread.
    #[test]
    fn a_subagent_reads_only_its_own_rollout() {
        let dir = tempfile::tempdir().unwrap();
        let rollout = dir.path().join("rollout.jsonl");
        let lines = [
            json!({"type": "session_meta", "payload": {"id": "01a2-child", "parent_thread_id": "01a2-root", "cwd": "/p"}}),
            call("c1", "cat notes.txt"),
            output("c1", &"a line of the notes, long enough to be worth a note\n".repeat(20)),
            call("c2", "cat notes.txt"),
        ];
        std::fs::write(&rollout, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
        let p = crate::hooks::Payload {
            transcript_path: Some(rollout.to_string_lossy().into_owned()),
            cwd: Some("/p".into()),
            tool_name: Some("exec_command".into()),
            tool_input: Some(json!({"cmd": "cat notes.txt"})),
            tool_response: Some(json!("a line of the notes, long enough to be worth a note\n".repeat(20))),
            tool_use_id: Some("c2".into()),
            agent_id: Some("01a2-child".into()),
            ..crate::hooks::Payload::default()
        };
        assert!(super::super::decide(Agent::Codex, &p, None).is_some(), "its own re-read");
        let other = crate::hooks::Payload { agent_id: Some("01a2-sibling".into()), ..p };
        assert_eq!(super::super::decide(Agent::Codex, &other, None), None, "another thread's rollout");
    }
}
