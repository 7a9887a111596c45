//! Gemini CLI chat recordings: the reads still in context when a tool call finishes.
//!
//! A recording is a log of records: messages (a later record with the same id replaces the
//! earlier one), `$rewindTo` (drops a message and everything after it) and `$set` (metadata, or
//! the whole message list). Compression is not recorded, and Gemini CLI also masks old tool
//! outputs beyond its most recent ones, so a read counts only while the prompt has not shrunk
//! and while less than `MASKING_BUDGET` tokens of tool output came after it.

use super::view;
use super::window::{Seen, Window};
use crate::hooks::Agent;
use serde_json::Value;

/// Gemini CLI keeps the newest 50,000 tokens of tool output unmasked; refrain stays well inside.
pub const MASKING_BUDGET: u64 = 40_000;

/// The reads in context, oldest first. The call being answered is not recorded yet when the
/// AfterTool hook runs, so nothing needs leaving out.
pub fn seen(lines: &[Value], cwd: &str) -> Vec<Seen> {
    let mut w = Window::new(Some(MASKING_BUDGET));
    for m in messages(lines) {
        match m.get("type").and_then(Value::as_str) {
            Some("user") => w.message(),
            Some("gemini") => {
                w.message();
                if let Some(n) = m.pointer("/tokens/input").and_then(Value::as_u64) {
                    w.usage(n);
                }
                for tc in m.get("toolCalls").and_then(Value::as_array).into_iter().flatten() {
                    call(&mut w, tc, cwd);
                }
            }
            _ => {}
        }
    }
    w.finish()
}

fn call(w: &mut Window, tc: &Value, cwd: &str) {
    let output = tc
        .pointer("/result/0/functionResponse/response/output")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| tc.get("result").map(Value::to_string).unwrap_or_default());
    let name = tc.get("name").and_then(Value::as_str).unwrap_or_default();
    let args = tc.get("args").unwrap_or(&Value::Null);
    let (Some(key), Some(id)) = (view::key(Agent::Gemini, name, args, cwd), tc.get("id").and_then(Value::as_str))
    else {
        w.output(output.len());
        return;
    };
    let ok = tc.get("status").and_then(Value::as_str) == Some("success");
    let text = ok.then(|| view::tool_text(Agent::Gemini, key.via, &output)).flatten().and_then(view::content);
    w.read(id, key, text, output.len());
}

/// The messages as they stand at the end of the log.
pub fn messages(lines: &[Value]) -> Vec<&Value> {
    let mut out: Vec<&Value> = Vec::new();
    for r in lines {
        if let Some(to) = r.get("$rewindTo").and_then(Value::as_str) {
            match out.iter().position(|m| m.get("id").and_then(Value::as_str) == Some(to)) {
                Some(i) => out.truncate(i),
                None => out.clear(),
            }
        } else if let Some(set) = r.get("$set") {
            if let Some(all) = set.get("messages").and_then(Value::as_array) {
                out = all.iter().collect();
            }
        } else if let Some(id) = r.get("id").and_then(Value::as_str) {
            if r.get("type").is_none() {
                continue;
            }
            match out.iter().position(|m| m.get("id").and_then(Value::as_str) == Some(id)) {
                Some(i) => out[i] = r,
                None => out.push(r),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn turn(id: &str, call: &str, output: &str) -> Value {
        json!({"id": id, "type": "gemini", "tokens": {"input": 5000}, "toolCalls": [{"id": call, "name": "read_file",
            "args": {"file_path": "notes.txt"}, "status": "success",
            "result": [{"functionResponse": {"id": call, "name": "read_file", "response": {"output": output}}}]}]})
    }

    #[test]
    fn updated_records_replace_earlier_ones_and_rewinds_drop_messages() {
        let lines = vec![
            json!({"sessionId": "s", "projectHash": "h"}),
            json!({"id": "u1", "type": "user", "content": [{"text": "read it"}]}),
            json!({"id": "g1", "type": "gemini", "content": ""}),
            turn("g1", "c1", "a\nb\n"),
        ];
        let got = seen(&lines, "/p");
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].key.path.as_str(), got[0].text.as_deref()), ("/p/notes.txt", Some("a\nb\n")));
        let mut rewound = lines.clone();
        rewound.push(json!({"$rewindTo": "g1"}));
        assert!(seen(&rewound, "/p").is_empty());
    }

    #[test]
    fn masked_or_compressed_history_forgets_reads() {
        let big = "x".repeat(200_000);
        let lines = vec![
            turn("g1", "c1", "a\n"),
            json!({"id": "g2", "type": "gemini", "toolCalls": [{"id": "c2",
            "name": "grep_search", "args": {}, "status": "success",
            "result": [{"functionResponse": {"response": {"output": big}}}]}]}),
        ];
        assert!(seen(&lines, "/p").is_empty(), "50k tokens of newer tool output mask the read");
        let mut shrunk = vec![turn("g1", "c1", "a\n")];
        shrunk.push(json!({"id": "g2", "type": "gemini", "tokens": {"input": 900}}));
        assert!(seen(&shrunk, "/p").is_empty(), "the prompt shrank: the history was compressed");
    }
}
