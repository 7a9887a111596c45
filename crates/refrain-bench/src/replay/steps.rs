//! A recorded session as the hook calls its agent made: a Claude Code transcript or a Codex
//! rollout read in file order, each user prompt a `UserPromptSubmit`, each finished tool call a
//! `PostToolUse` with the call's input and the result the tool returned, each turn's end a `Stop`.
//! Every step says how much of the session file was on disk when its hook fired, so the hook
//! reads the session file exactly as far as the agent had written it.

use refrain::hooks::dedup::view;
use refrain::hooks::{Agent, Event, Payload};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::Read;
use std::path::Path;

/// One hook call.
#[derive(Debug, Clone)]
pub struct Step {
    /// The event.
    pub event: Event,
    /// Lines of the session file written before the hook fires.
    pub upto: usize,
    /// The payload (its `transcript_path` and `session_id` are set by the replay).
    pub payload: Payload,
    /// The `uuid` of the entry that fired it (Claude Code): a resumed session's file starts with
    /// a copy of the entries of the session it resumed, whose hooks fired back then, not again.
    pub uuid: Option<String>,
}

/// A session file, ready to replay.
#[derive(Debug, Clone)]
pub struct Session {
    /// The agent that wrote it.
    pub agent: Agent,
    /// A subagent's own conversation (Claude Code sidechain file): no prompts, no Stop.
    pub subagent: bool,
    /// The file's lines as recorded (lines that do not parse are kept: the hook skips them too).
    pub raw: Vec<String>,
    /// The hook calls, in order.
    pub steps: Vec<Step>,
    /// The first timestamp in the file (sessions of one source replay oldest first).
    pub started: String,
}

/// Reads a `.jsonl` or `.jsonl.zst` session file.
pub fn load(path: &Path) -> anyhow::Result<Session> {
    let bytes = std::fs::read(path)?;
    let text = if path.extension().is_some_and(|e| e == "zst") {
        let mut out = String::new();
        zstd::stream::read::Decoder::new(bytes.as_slice())?.read_to_string(&mut out)?;
        out
    } else {
        String::from_utf8(bytes)?
    };
    Ok(parse(text.lines().map(str::to_string).collect()))
}

/// The hook calls of a session file's lines.
pub fn parse(raw: Vec<String>) -> Session {
    let lines: Vec<Option<Value>> = raw.iter().map(|l| serde_json::from_str(l).ok()).collect();
    let rollout = lines.iter().flatten().take(5).any(|l| {
        matches!(l.get("type").and_then(Value::as_str), Some("session_meta" | "response_item" | "turn_context"))
    });
    let started = lines.iter().flatten().find_map(|l| l.get("timestamp").and_then(Value::as_str)).unwrap_or("");
    let started = started.to_string();
    let (agent, subagent, steps) = if rollout {
        (Agent::Codex, false, codex(&lines))
    } else {
        let side = lines.iter().flatten().find_map(|l| l.get("isSidechain").and_then(Value::as_bool));
        let subagent = side == Some(true);
        (Agent::Claude, subagent, claude(&lines, subagent))
    };
    Session { agent, subagent, raw, steps, started }
}

fn blocks(e: &Value) -> impl Iterator<Item = &Value> {
    e.pointer("/message/content").and_then(Value::as_array).into_iter().flatten()
}

fn of_type<'a>(b: &'a Value, t: &str) -> Option<&'a Value> {
    (b.get("type").and_then(Value::as_str) == Some(t)).then_some(b)
}

/// A user entry's prompt, if it is one the user typed (not a tool result, a slash command's
/// local output, an interruption marker or a compaction summary).
fn claude_prompt(e: &Value) -> Option<String> {
    if e.get("type").and_then(Value::as_str) != Some("user")
        || e.get("isMeta").and_then(Value::as_bool) == Some(true)
        || e.get("isCompactSummary").and_then(Value::as_bool) == Some(true)
        || e.get("toolUseResult").is_some()
    {
        return None;
    }
    let content = e.pointer("/message/content")?;
    let text = match content {
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            if items.iter().any(|b| of_type(b, "tool_result").is_some()) {
                return None;
            }
            items.iter().filter_map(|b| of_type(b, "text")?.get("text")?.as_str()).collect::<Vec<_>>().join("\n")
        }
        _ => return None,
    };
    let local = ["<local-command-stdout>", "<local-command-stderr>", "[Request interrupted", "Caveat: "];
    (!text.trim().is_empty() && !local.iter().any(|m| text.trim_start().starts_with(m))).then_some(text)
}

fn claude(lines: &[Option<Value>], subagent: bool) -> Vec<Step> {
    let mut calls: HashMap<String, (String, Value)> = HashMap::new();
    let mut steps = Vec::new();
    let mut cwd = String::new();
    let mut in_turn = false;
    let uuid = |e: &Value| e.get("uuid").and_then(Value::as_str).map(str::to_string);
    for (i, e) in lines.iter().enumerate() {
        let Some(e) = e else { continue };
        if let Some(c) = e.get("cwd").and_then(Value::as_str) {
            cwd = c.to_string();
        }
        let base = Payload { cwd: Some(cwd.clone()), ..Payload::default() };
        if e.get("type").and_then(Value::as_str) == Some("assistant") {
            for b in blocks(e).filter_map(|b| of_type(b, "tool_use")) {
                if let (Some(id), Some(name)) =
                    (b.get("id").and_then(Value::as_str), b.get("name").and_then(Value::as_str))
                {
                    calls.insert(id.into(), (name.into(), b.get("input").cloned().unwrap_or(json!({}))));
                }
            }
            continue;
        }
        // Older Claude Code versions keep a subagent's entries inline, marked as sidechain: its
        // task prompt is no user prompt.
        let sidechain = subagent || e.get("isSidechain").and_then(Value::as_bool) == Some(true);
        if !sidechain && let Some(prompt) = claude_prompt(e) {
            let id = uuid(e);
            if in_turn {
                steps.push(Step { event: Event::Stop, upto: i, payload: base.clone(), uuid: id.clone() });
            }
            in_turn = true;
            let payload = Payload { prompt: Some(prompt), ..base };
            steps.push(Step { event: Event::UserPromptSubmit, upto: i, payload, uuid: id });
            continue;
        }
        let results: Vec<&Value> = blocks(e).filter_map(|b| of_type(b, "tool_result")).collect();
        let single = results.len() == 1;
        for r in results {
            let Some(id) = r.get("tool_use_id").and_then(Value::as_str) else { continue };
            let Some((name, input)) = calls.get(id) else { continue };
            // The hook receives the tool's own response; Claude Code keeps it as `toolUseResult`
            // (one per entry), else only the block the model read is left.
            let response = match (single, e.get("toolUseResult")) {
                (true, Some(r)) => r.clone(),
                _ => r.get("content").cloned().unwrap_or(Value::Null),
            };
            steps.push(Step {
                event: Event::PostToolUse,
                upto: i,
                payload: Payload {
                    tool_name: Some(name.clone()),
                    tool_input: Some(input.clone()),
                    tool_response: Some(response),
                    tool_use_id: Some(id.to_string()),
                    ..base.clone()
                },
                uuid: uuid(e),
            });
        }
    }
    if in_turn {
        let payload = Payload { cwd: Some(cwd), ..Payload::default() };
        let last = lines.iter().rev().flatten().find_map(uuid);
        steps.push(Step { event: Event::Stop, upto: lines.len(), payload, uuid: last });
    }
    steps
}

/// Codex's own names for its shell tool; its hooks report them as `Bash` with a `command`.
const CODEX_SHELLS: [&str; 4] = ["exec_command", "shell", "local_shell", "unified_exec"];

fn codex(lines: &[Option<Value>]) -> Vec<Step> {
    let mut calls: HashMap<String, (String, Value)> = HashMap::new();
    let mut steps = Vec::new();
    let mut cwd = String::new();
    let mut in_turn = false;
    for (i, e) in lines.iter().enumerate() {
        let Some(e) = e else { continue };
        let p = e.get("payload").unwrap_or(&Value::Null);
        let ptype = p.get("type").and_then(Value::as_str);
        let base = Payload { cwd: Some(cwd.clone()), ..Payload::default() };
        match (e.get("type").and_then(Value::as_str), ptype) {
            (Some("session_meta" | "turn_context"), _) => {
                if let Some(c) = p.get("cwd").and_then(Value::as_str) {
                    cwd = c.to_string();
                }
            }
            (Some("event_msg"), Some("user_message")) => {
                let Some(prompt) = p.get("message").and_then(Value::as_str).filter(|m| !m.trim().is_empty()) else {
                    continue;
                };
                if in_turn {
                    steps.push(Step { event: Event::Stop, upto: i, payload: base.clone(), uuid: None });
                }
                in_turn = true;
                let payload = Payload { prompt: Some(prompt.to_string()), ..base };
                steps.push(Step { event: Event::UserPromptSubmit, upto: i, payload, uuid: None });
            }
            (Some("response_item"), Some("function_call" | "custom_tool_call" | "local_shell_call")) => {
                let (Some(id), Some(name)) =
                    (p.get("call_id").and_then(Value::as_str), p.get("name").and_then(Value::as_str))
                else {
                    continue;
                };
                let raw = p.get("arguments").or_else(|| p.get("input")).cloned().unwrap_or(Value::Null);
                let args = raw.as_str().and_then(|s| serde_json::from_str(s).ok()).unwrap_or(raw);
                calls.insert(id.into(), (name.into(), args));
            }
            (Some("response_item"), Some("function_call_output" | "custom_tool_call_output")) => {
                let Some(id) = p.get("call_id").and_then(Value::as_str) else { continue };
                let Some((name, args)) = calls.get(id) else { continue };
                let output = match p.get("output") {
                    Some(Value::String(s)) => s.clone(),
                    Some(v) => v.get("content").and_then(Value::as_str).map(str::to_string).unwrap_or(v.to_string()),
                    None => String::new(),
                };
                let (tool, input, response) = if CODEX_SHELLS.contains(&name.as_str()) {
                    let command = args.get("cmd").or_else(|| args.get("command")).cloned().unwrap_or(Value::Null);
                    let stdout = view::codex_rollout_text(&output).unwrap_or(output);
                    ("Bash".to_string(), json!({"command": command}), Value::String(stdout))
                } else {
                    (name.clone(), args.clone(), Value::String(output))
                };
                let payload = Payload {
                    tool_name: Some(tool),
                    tool_input: Some(input),
                    tool_response: Some(response),
                    tool_use_id: Some(id.to_string()),
                    ..base
                };
                steps.push(Step { event: Event::PostToolUse, upto: i, payload, uuid: None });
            }
            _ => {}
        }
    }
    if in_turn {
        let payload = Payload { cwd: Some(cwd), ..Payload::default() };
        steps.push(Step { event: Event::Stop, upto: lines.len(), payload, uuid: None });
    }
    steps
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_transcript_becomes_prompts_tool_calls_and_turn_ends_in_order() {
        let lines = [
            json!({"type": "user", "uuid": "u1", "cwd": "/p", "message": {"content": "read the notes"}}),
            json!({"type": "assistant", "uuid": "a1", "parentUuid": "u1", "message": {"content": [
                {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/p/n.txt"}}]}}),
            json!({"type": "user", "uuid": "r1", "parentUuid": "a1", "message": {"content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "x"}]},
                "toolUseResult": {"type": "text", "file": {"filePath": "/p/n.txt", "content": "x\n"}}}),
            json!({"type": "user", "uuid": "u2", "parentUuid": "r1", "message": {"content": "<local-command-stdout>ok</local-command-stdout>"}}),
            json!({"type": "user", "uuid": "u3", "parentUuid": "r1", "message": {"content": [{"type": "text", "text": "again"}]}}),
        ];
        let s = parse(lines.iter().map(Value::to_string).chain(["{broken".to_string()]).collect());
        assert_eq!(s.agent, Agent::Claude);
        let got: Vec<(Event, usize)> = s.steps.iter().map(|st| (st.event, st.upto)).collect();
        assert_eq!(
            got,
            [
                (Event::UserPromptSubmit, 0),
                (Event::PostToolUse, 2),
                (Event::Stop, 4),
                (Event::UserPromptSubmit, 4),
                (Event::Stop, 6)
            ]
        );
        assert_eq!(s.steps[1].payload.tool_response.as_ref().unwrap()["file"]["content"], "x\n");
        assert_eq!(s.steps[3].payload.prompt.as_deref(), Some("again"));
        // Each step names the entry that fired it (a resumed session's copies are known by it).
        let uuids: Vec<Option<&str>> = s.steps.iter().map(|st| st.uuid.as_deref()).collect();
        assert_eq!(uuids, [Some("u1"), Some("r1"), Some("u3"), Some("u3"), Some("u3")]);
    }

    #[test]
    fn a_rollout_shell_call_is_reported_as_codex_hooks_report_it() {
        let lines = [
            json!({"type": "session_meta", "payload": {"id": "s", "cwd": "/p"}}),
            json!({"type": "event_msg", "payload": {"type": "user_message", "message": "show the notes"}}),
            json!({"type": "response_item", "payload": {"type": "function_call", "name": "exec_command", "call_id": "c1",
                "arguments": json!({"cmd": "cat notes.txt"}).to_string()}}),
            json!({"type": "response_item", "payload": {"type": "function_call_output", "call_id": "c1",
                "output": "Chunk ID: 1\nProcess exited with code 0\nOutput:\na\nb\n"}}),
        ];
        let s = parse(lines.iter().map(Value::to_string).collect());
        assert_eq!(s.agent, Agent::Codex);
        let call = &s.steps[1].payload;
        assert_eq!((call.tool_name.as_deref(), s.steps[1].upto), (Some("Bash"), 3));
        assert_eq!(call.tool_input, Some(json!({"command": "cat notes.txt"})));
        assert_eq!(call.tool_response, Some(json!("a\nb\n")));
        assert_eq!(s.steps.last().map(|st| st.event), Some(Event::Stop));
    }
}
