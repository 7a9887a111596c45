//! Replaying a recorded session: every read in order, with what refrain would have answered it
//! with given what came before. This is how dedup is measured on real transcripts (the bench in
//! refrain-bench) without running the agent again.

use super::view::{self, ReadKey};
use super::{Agent, decide_with, seen_in};
use crate::prompt::estimate_tokens;
use serde_json::Value;
use std::collections::HashMap;

/// One read of a replayed session.
#[derive(Debug, Clone, PartialEq)]
pub struct Replayed {
    /// The file read.
    pub path: String,
    /// Estimated tokens of the output the model received.
    pub tokens: u64,
    /// Tokens a note would have saved (None: refrain would have let the output through).
    pub saved: Option<u64>,
    /// True when the note would have been a diff.
    pub changed: bool,
}

/// Every read of a Claude Code transcript or Codex rollout, replayed in order.
pub fn replay(agent: Agent, lines: &[Value]) -> Vec<Replayed> {
    let mut calls: HashMap<String, (String, Value)> = HashMap::new();
    let mut cwd = String::new();
    let mut out = Vec::new();
    for (i, e) in lines.iter().enumerate() {
        if let Some(c) = e.get("cwd").or_else(|| e.pointer("/payload/cwd")).and_then(Value::as_str) {
            cwd = c.to_string();
        }
        remember_calls(agent, e, &mut calls);
        for (id, now) in results(agent, e) {
            let Some((tool, input)) = calls.get(&id) else { continue };
            let Some(key) = view::key(agent, tool, input, &cwd) else { continue };
            let Some(now) = now(key.via) else { continue };
            let seen = seen_in(agent, &lines[..i], Some(&id), None, &cwd);
            out.push(one(&key, &now, &seen));
        }
    }
    out
}

fn one(key: &ReadKey, now: &str, seen: &[super::window::Seen]) -> Replayed {
    let tokens = estimate_tokens(now);
    match decide_with(key, now, seen) {
        Some(d) => Replayed { path: key.path.clone(), tokens, saved: Some(d.tokens_saved), changed: d.changed },
        None => Replayed { path: key.path.clone(), tokens, saved: None, changed: false },
    }
}

fn remember_calls(agent: Agent, e: &Value, calls: &mut HashMap<String, (String, Value)>) {
    match agent {
        Agent::Claude => {
            let blocks = e.pointer("/message/content").and_then(Value::as_array).into_iter().flatten();
            for b in blocks.filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use")) {
                if let (Some(id), Some(name)) =
                    (b.get("id").and_then(Value::as_str), b.get("name").and_then(Value::as_str))
                {
                    calls.insert(id.into(), (name.into(), b.get("input").cloned().unwrap_or(Value::Null)));
                }
            }
        }
        Agent::Codex => {
            let p = e.get("payload").unwrap_or(&Value::Null);
            if p.get("type").and_then(Value::as_str) != Some("function_call") {
                return;
            }
            if let (Some(id), Some(name)) =
                (p.get("call_id").and_then(Value::as_str), p.get("name").and_then(Value::as_str))
            {
                let raw = p.get("arguments").cloned().unwrap_or(Value::Null);
                let args = raw.as_str().and_then(|s| serde_json::from_str(s).ok()).unwrap_or(raw);
                calls.insert(id.into(), (name.into(), args));
            }
        }
        _ => {}
    }
}

type Text<'a> = Box<dyn Fn(view::Via) -> Option<String> + 'a>;

/// The tool results in an entry: the call id and a way to take the shown text out of it.
fn results<'a>(agent: Agent, e: &'a Value) -> Vec<(String, Text<'a>)> {
    match agent {
        Agent::Claude => {
            let blocks: Vec<&Value> = e
                .pointer("/message/content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
                .collect();
            let (true, Some(result)) = (blocks.len() == 1, e.get("toolUseResult")) else { return Vec::new() };
            let id = blocks[0].get("tool_use_id").and_then(Value::as_str).unwrap_or_default().to_string();
            vec![(id, Box::new(move |via| view::payload_text(Agent::Claude, via, result)))]
        }
        Agent::Codex => {
            let p = e.get("payload").unwrap_or(&Value::Null);
            if p.get("type").and_then(Value::as_str) != Some("function_call_output") {
                return Vec::new();
            }
            let id = p.get("call_id").and_then(Value::as_str).unwrap_or_default().to_string();
            let output = p.get("output").and_then(Value::as_str).unwrap_or_default();
            vec![(id, Box::new(move |_| view::codex_rollout_text(output).and_then(view::content)))]
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_second_of_two_identical_reads_is_the_one_deduplicated() {
        let content: String = (1..=60).map(|i| format!("line {i} of the notes\n")).collect();
        let mut lines = Vec::new();
        for (n, id) in ["t1", "t2"].iter().enumerate() {
            let parent = if n == 0 { Value::Null } else { json!("r1") };
            lines.push(json!({"type": "assistant", "uuid": format!("a{}", n + 1), "parentUuid": parent, "cwd": "/p",
                "message": {"content": [{"type": "tool_use", "id": id, "name": "Read", "input": {"file_path": "/p/n.txt"}}]}}));
            lines.push(
                json!({"type": "user", "uuid": format!("r{}", n + 1), "parentUuid": format!("a{}", n + 1), "cwd": "/p",
                "message": {"content": [{"type": "tool_result", "tool_use_id": id, "content": "..."}]},
                "toolUseResult": {"type": "text", "file": {"filePath": "/p/n.txt", "content": content}}}),
            );
        }
        let got = replay(Agent::Claude, &lines);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].saved, None);
        assert!(got[1].saved.is_some_and(|s| s > 200), "{got:?}");
    }
}
