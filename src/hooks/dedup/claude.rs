//! Claude Code transcripts: the reads still in context when a tool call finishes.
//!
//! A transcript is a tree (`parentUuid`): rewinds and forks leave other branches in the file, and
//! a compaction starts a new root (`compact_boundary`, whose parent is null). The current context
//! is the branch from the entry holding the current call back to its root; a
//! `microcompact_boundary` (old tool results cleared) on it also ends what counts.
//!
//! A subagent's transcript (its own file) keeps only what its model received for a Read, the
//! numbered lines, not the tool's result: the text is taken back out of the numbering.

use super::view::{self, Via};
use super::window::{Seen, Window};
use crate::hooks::Agent;
use serde_json::Value;
use std::collections::HashMap;

/// The reads in context, oldest first, leaving out the call `current`.
pub fn seen(lines: &[Value], current: Option<&str>, cwd: &str) -> Vec<Seen> {
    let mut w = Window::new(None);
    let mut calls: HashMap<String, (String, Value)> = HashMap::new();
    for e in branch(lines, current) {
        let cwd = e.get("cwd").and_then(Value::as_str).unwrap_or(cwd);
        match e.get("type").and_then(Value::as_str) {
            Some("system") => {
                if matches!(
                    e.get("subtype").and_then(Value::as_str),
                    Some("compact_boundary" | "microcompact_boundary")
                ) {
                    w.boundary();
                }
            }
            Some("assistant") => {
                w.message();
                if let Some(u) = e.pointer("/message/usage") {
                    let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
                    w.usage(n("input_tokens") + n("cache_creation_input_tokens") + n("cache_read_input_tokens"));
                }
                for b in blocks(e).filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use")) {
                    let (Some(id), Some(name)) =
                        (b.get("id").and_then(Value::as_str), b.get("name").and_then(Value::as_str))
                    else {
                        continue;
                    };
                    calls.insert(id.to_string(), (name.to_string(), b.get("input").cloned().unwrap_or(Value::Null)));
                }
            }
            Some("user") => {
                if e.get("isCompactSummary").and_then(Value::as_bool) == Some(true) {
                    w.boundary();
                }
                w.message();
                let results: Vec<&Value> =
                    blocks(e).filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result")).collect();
                let single = results.len() == 1;
                for r in results {
                    let id = r.get("tool_use_id").and_then(Value::as_str).unwrap_or_default();
                    let len = r.get("content").map(|c| c.to_string().len()).unwrap_or(0);
                    if Some(id) == current {
                        continue;
                    }
                    let key = calls.get(id).and_then(|(name, input)| view::key(Agent::Claude, name, input, cwd));
                    let Some(key) = key else {
                        w.output(len);
                        continue;
                    };
                    let failed = r.get("is_error").and_then(Value::as_bool) == Some(true);
                    let text = match (single && !failed, e.get("toolUseResult")) {
                        (true, Some(result)) => view::payload_text(Agent::Claude, key.via, result),
                        (true, None) if key.via == Via::ReadTool => {
                            r.get("content").and_then(result_text).and_then(numbered_text).and_then(view::content)
                        }
                        _ => None,
                    };
                    w.read(id, key, text, len);
                }
            }
            _ => {}
        }
    }
    w.finish()
}

/// The text of a tool_result block's content: a string, or a list holding one text part.
fn result_text(content: &Value) -> Option<&str> {
    match content {
        Value::String(s) => Some(s),
        Value::Array(parts) => match parts.as_slice() {
            [part] if part.get("type").and_then(Value::as_str) == Some("text") => part.get("text")?.as_str(),
            _ => None,
        },
        _ => None,
    }
}

/// The file text of a Read result as the model received it (`1\tfirst line\n2\t…`), for
/// transcripts that do not keep the tool's own result (a subagent's). Every line must carry the
/// next number and a tab, so the text taken out numbers back to exactly what the model got;
/// anything else (an added reminder, another format) gives None.
pub fn numbered_text(rendered: &str) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    let mut next: Option<u64> = None;
    for line in rendered.split('\n') {
        let (n, rest) = line.split_once('\t')?;
        let number: u64 = n.parse().ok()?;
        if number.to_string() != n || next.is_some_and(|want| want != number) {
            return None;
        }
        next = Some(number + 1);
        out.push(rest);
    }
    Some(out.join("\n"))
}

fn blocks(e: &Value) -> impl Iterator<Item = &Value> {
    e.pointer("/message/content").and_then(Value::as_array).into_iter().flatten()
}

/// The entries from the root of the current branch to its leaf: the entry holding the tool_use
/// `current` when given and found, else the last entry.
fn branch<'a>(lines: &'a [Value], current: Option<&str>) -> Vec<&'a Value> {
    let uuid = |e: &Value| e.get("uuid").and_then(Value::as_str).map(str::to_string);
    let by_uuid: HashMap<String, &Value> = lines.iter().filter_map(|e| Some((uuid(e)?, e))).collect();
    let holds =
        |e: &&Value| current.is_some_and(|id| blocks(e).any(|b| b.get("id").and_then(Value::as_str) == Some(id)));
    let leaf = lines.iter().rev().find(holds).or_else(|| lines.iter().rev().find(|e| uuid(e).is_some()));
    let mut out = Vec::new();
    let mut next = leaf;
    while let Some(e) = next {
        out.push(e);
        if out.len() > lines.len() {
            break; // a cycle in a damaged file
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

    fn read_entries(uuid: &str, parent: Option<&str>, id: &str, content: &str) -> [Value; 2] {
        [
            json!({"type": "assistant", "uuid": format!("{uuid}a"), "parentUuid": parent, "cwd": "/p",
                "message": {"content": [{"type": "tool_use", "id": id, "name": "Read", "input": {"file_path": "/p/a.rs"}}]}}),
            json!({"type": "user", "uuid": uuid, "parentUuid": format!("{uuid}a"), "cwd": "/p",
                "message": {"content": [{"type": "tool_result", "tool_use_id": id, "content": content}]},
                "toolUseResult": {"type": "text", "file": {"filePath": "/p/a.rs", "content": content}}}),
        ]
    }

    #[test]
    fn reads_on_the_branch_count_and_a_compaction_ends_them() {
        let mut lines: Vec<Value> = read_entries("u1", None, "t1", "fn a() {}\n").into();
        let got = seen(&lines, None, "/p");
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].text.as_deref(), got[0].message), (Some("fn a() {}\n"), 2));
        lines.push(json!({"type": "system", "subtype": "compact_boundary", "uuid": "c1", "parentUuid": null}));
        lines.push(json!({"type": "user", "uuid": "s1", "parentUuid": "c1", "isCompactSummary": true,
            "message": {"content": "summary"}}));
        assert!(seen(&lines, None, "/p").is_empty(), "the read was compacted away");
    }

    #[test]
    fn a_rewound_branch_does_not_count_and_the_current_call_is_left_out() {
        let mut lines: Vec<Value> = read_entries("u1", None, "t1", "one\n").into();
        lines.extend(read_entries("u2", Some("u1"), "t2", "two\n"));
        // The user rewound to u1 and went on from there: u2 is on another branch.
        lines.push(json!({"type": "assistant", "uuid": "x", "parentUuid": "u1",
            "message": {"content": [{"type": "tool_use", "id": "t3", "name": "Read", "input": {"file_path": "/p/a.rs"}}]}}));
        let got = seen(&lines, Some("t3"), "/p");
        assert_eq!(got.iter().map(|s| s.call_id.as_str()).collect::<Vec<_>>(), ["t1"]);
        assert!(seen(&lines[..2], Some("t1"), "/p").is_empty());
    }

    #[test]
    fn numbered_lines_give_back_the_exact_text_or_nothing() {
        assert_eq!(numbered_text("1\ta\n2\tb\r\n3\t").as_deref(), Some("a\nb\r\n"));
        assert_eq!(numbered_text("10\tx\ty\n11\tlast").as_deref(), Some("x\ty\nlast"));
        assert_eq!(numbered_text("1\ta\n3\tb"), None, "a gap");
        assert_eq!(numbered_text("1\ta\n02\tb"), None, "another numbering");
        assert_eq!(numbered_text("1\ta\n\n<system-reminder>x</system-reminder>"), None, "something added");
        assert_eq!(numbered_text("     1\u{2192}a"), None, "an older format");
    }

    /// A subagent's transcript keeps no `toolUseResult`: its reads are taken from what its model
    /// received.
    #[test]
    fn a_subagents_own_transcript_shows_its_reads() {
        let mut lines: Vec<Value> = read_entries("u1", None, "t1", "a\n\n").into();
        lines[1].as_object_mut().unwrap().remove("toolUseResult");
        lines[1]["message"]["content"][0]["content"] = json!("1\ta\n2\t\n3\t");
        lines[1]["isSidechain"] = json!(true);
        let got = seen(&lines, None, "/p");
        assert_eq!(got[0].text.as_deref(), Some("a\n\n"));
        lines[1]["message"]["content"][0]["content"] = json!("[refrain] /p/a.rs is unchanged since your read");
        assert_eq!(seen(&lines, None, "/p")[0].text, None, "a note is no content");
    }
}
