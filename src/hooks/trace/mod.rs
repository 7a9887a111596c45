//! The plan a finished turn followed, read from the agent's own session file (or refrain's
//! journal for agents without a readable one): the task (the user's prompt), the todo items
//! (Claude Code's TodoWrite, Codex's update_plan, Gemini CLI's write_todos, …) and the tool calls
//! that carried them out. Failed, interrupted or unfinished turns yield nothing.

mod gemini;
mod journal;
mod qwen;

use super::journal::Journal;
use super::tasks::{TASK_TOOLS, TaskList};
use super::{Agent, Error, Payload};
use serde::Serialize;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};

/// An executed turn, ready for `plan_store`'s trace path.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Trace {
    /// The task the user gave.
    pub task: String,
    /// The agent's plan items, in order.
    pub steps: Vec<String>,
    /// The tool calls, in order: `{tool, input}`.
    pub calls: Vec<Value>,
}

/// Transcripts larger than this are not read by a hook (it must stay fast).
const MAX_TRANSCRIPT_BYTES: u64 = 64 * 1024 * 1024;

/// Reads the turn the Stop payload refers to; `Ok(None)` when there is nothing worth storing.
pub fn read(agent: Agent, p: &Payload, journal: Option<&Journal>) -> Result<Option<Trace>, Error> {
    if let Agent::Opencode | Agent::Cursor = agent {
        let trace = journal.and_then(|j| journal::turn(agent, &j.entries(), p));
        return Ok(trace.filter(worth_storing));
    }
    let Some(path) = p.transcript_path.as_deref() else { return Ok(None) };
    let err = |source| Error::Transcript { path: path.to_string(), source };
    let file = std::fs::File::open(path).map_err(err)?;
    if file.metadata().map_err(err)?.len() > MAX_TRANSCRIPT_BYTES {
        return Ok(None);
    }
    let lines: Vec<Value> =
        BufReader::new(file).lines().map_while(Result::ok).filter_map(|l| serde_json::from_str(&l).ok()).collect();
    let trace = match agent {
        Agent::Claude => claude(&lines, p.prompt_id.as_deref()),
        Agent::Codex => codex(&lines),
        Agent::Gemini => gemini::turn(&lines, p.prompt.as_deref()),
        Agent::Qwen => qwen::turn(&lines),
        Agent::Opencode | Agent::Cursor => None,
    };
    Ok(trace.filter(worth_storing))
}

fn worth_storing(t: &Trace) -> bool {
    !t.task.trim().is_empty() && (!t.steps.is_empty() || !t.calls.is_empty())
}

/// True for a prompt text that is the user's own (not injected context such as `<system-reminder>`).
fn is_user_text(t: &str) -> bool {
    let t = t.trim();
    !t.is_empty() && !t.starts_with('<') && !t.starts_with("[Request interrupted")
}

/// Text of a Claude user message that is a real prompt (not a tool result or injected context).
fn claude_prompt(entry: &Value) -> Option<String> {
    if entry.get("type")?.as_str()? != "user" || entry.get("isMeta").and_then(Value::as_bool) == Some(true) {
        return None;
    }
    let content = entry.get("message")?.get("content")?;
    let text = match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text")?.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return None,
    };
    let t = text.trim();
    (!t.is_empty() && !t.starts_with('<') && !t.starts_with("[Request interrupted")).then(|| t.to_string())
}

fn claude(lines: &[Value], prompt_id: Option<&str>) -> Option<Trace> {
    // The turn starts at the prompt with this prompt id, else at the last real prompt.
    let start = lines.iter().rposition(|e| {
        claude_prompt(e).is_some() && prompt_id.is_none_or(|id| e.get("promptId").and_then(Value::as_str) == Some(id))
    })?;
    let task = claude_prompt(&lines[start])?;
    let mut calls = Vec::new();
    let mut tasks = TaskList::default();
    for e in &lines[start + 1..] {
        if e.get("isApiErrorMessage").and_then(Value::as_bool) == Some(true) {
            return None;
        }
        tasks.result(e);
        let Some(content) = e.get("message").and_then(|m| m.get("content")) else { continue };
        for block in content.as_array().into_iter().flatten() {
            match block.get("type").and_then(Value::as_str) {
                Some("text")
                    if block
                        .get("text")
                        .and_then(Value::as_str)
                        .is_some_and(|t| t.starts_with("[Request interrupted")) =>
                {
                    return None;
                }
                Some("tool_use") => {
                    let name = block.get("name").and_then(Value::as_str).unwrap_or_default();
                    let input = block.get("input").cloned().unwrap_or(Value::Null);
                    if name.starts_with("mcp__refrain__") {
                        continue;
                    } else if TASK_TOOLS.contains(&name) {
                        tasks.call(name, &input, block.get("id").and_then(Value::as_str));
                    } else {
                        calls.push(json!({"tool": name, "input": input}));
                    }
                }
                _ => {}
            }
        }
    }
    tasks.done().then(|| Trace { task, steps: tasks.steps(), calls })
}

fn codex(lines: &[Value]) -> Option<Trace> {
    let payload = |e: &Value| e.get("payload").cloned().unwrap_or(Value::Null);
    let is_prompt = |e: &Value| {
        let p = payload(e);
        e.get("type").and_then(Value::as_str) == Some("response_item")
            && p.get("type").and_then(Value::as_str) == Some("message")
            && p.get("role").and_then(Value::as_str) == Some("user")
            && codex_text(&p).is_some_and(|t| !t.trim_start().starts_with('<'))
    };
    let start = lines.iter().rposition(is_prompt)?;
    let task = codex_text(&payload(&lines[start]))?.trim().to_string();
    let (mut steps, mut calls) = (Vec::new(), Vec::new());
    let mut plan_done = true;
    for e in &lines[start + 1..] {
        let p = payload(e);
        match (e.get("type").and_then(Value::as_str), p.get("type").and_then(Value::as_str)) {
            (Some("event_msg"), Some("turn_aborted" | "error")) => return None,
            (Some("response_item"), Some("function_call" | "custom_tool_call")) => {
                let name = p.get("name").and_then(Value::as_str).unwrap_or_default();
                let raw = p.get("arguments").or_else(|| p.get("input")).cloned().unwrap_or(Value::Null);
                let input = raw.as_str().and_then(|s| serde_json::from_str(s).ok()).unwrap_or(raw);
                if name == "update_plan" {
                    let plan = input.get("plan").and_then(Value::as_array).cloned().unwrap_or_default();
                    steps =
                        plan.iter().filter_map(|s| s.get("step").and_then(Value::as_str).map(str::to_string)).collect();
                    plan_done = plan.iter().all(|s| s.get("status").and_then(Value::as_str) == Some("completed"));
                } else {
                    let tool = match p.get("namespace").and_then(Value::as_str) {
                        Some(ns) => format!("{ns}__{name}"),
                        None => name.to_string(),
                    };
                    if !tool.starts_with("mcp__refrain__") {
                        calls.push(json!({"tool": tool, "input": input}));
                    }
                }
            }
            _ => {}
        }
    }
    plan_done.then_some(Trace { task, steps, calls })
}

fn codex_text(p: &Value) -> Option<String> {
    let blocks = p.get("content")?.as_array()?;
    let text: Vec<&str> = blocks.iter().filter_map(|b| b.get("text")?.as_str()).collect();
    (!text.is_empty()).then(|| text.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<Value> {
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }

    #[test]
    fn claude_turn_with_finished_todos_becomes_a_trace() {
        let t = lines(concat!(
            r#"{"type":"user","promptId":"p1","message":{"role":"user","content":"add a flag --x to src/cli.rs"}}"#,
            "\n",
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"TodoWrite","input":{"todos":[{"content":"edit src/cli.rs","status":"completed"},{"content":"run tests","status":"completed"}]}}]}}"#,
            "\n",
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Edit","input":{"file_path":"src/cli.rs"}}]}}"#,
        ));
        let trace = claude(&t, Some("p1")).unwrap();
        assert_eq!(trace.task, "add a flag --x to src/cli.rs");
        assert_eq!(trace.steps, vec!["edit src/cli.rs", "run tests"]);
        assert_eq!(trace.calls, vec![json!({"tool": "Edit", "input": {"file_path": "src/cli.rs"}})]);
    }

    #[test]
    fn claude_task_tools_give_the_steps_and_are_not_calls() {
        let t = lines(concat!(
            r#"{"type":"user","message":{"content":"fix the typo in notes.txt"}}"#,
            "\n",
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"u1","name":"TaskCreate","input":{"subject":"fix notes.txt","description":"d"}}]}}"#,
            "\n",
            r#"{"type":"user","toolUseResult":{"task":{"id":"4"}},"message":{"content":[{"type":"tool_result","tool_use_id":"u1","content":"Task #4 created"}]}}"#,
            "\n",
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"u2","name":"Edit","input":{"file_path":"notes.txt"}}]}}"#,
            "\n",
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"u3","name":"TaskUpdate","input":{"taskId":"4","status":"completed"}}]}}"#,
        ));
        let trace = claude(&t, None).unwrap();
        assert_eq!(trace.steps, vec!["fix notes.txt"]);
        assert_eq!(trace.calls, vec![json!({"tool": "Edit", "input": {"file_path": "notes.txt"}})]);
        assert_eq!(claude(&t[..4], None), None, "a task still open holds the plan back");
    }

    #[test]
    fn claude_turn_left_unfinished_or_interrupted_is_not_stored() {
        let open = lines(concat!(
            r#"{"type":"user","message":{"content":"do it"}}"#,
            "\n",
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"TodoWrite","input":{"todos":[{"content":"a","status":"in_progress"}]}}]}}"#,
        ));
        assert_eq!(claude(&open, None), None);
        let stopped = lines(concat!(
            r#"{"type":"user","message":{"content":"do it"}}"#,
            "\n",
            r#"{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Read","input":{}}]}}"#,
            "\n",
            r#"{"type":"user","message":{"content":[{"type":"text","text":"[Request interrupted by user]"}]}}"#,
        ));
        assert_eq!(claude(&stopped, None), None);
    }

    #[test]
    fn codex_turn_with_update_plan_becomes_a_trace_and_aborted_turns_do_not() {
        let mut t = lines(concat!(
            r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context/>"}]}}"#,
            "\n",
            r#"{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"fix the bug in `parse`"}]}}"#,
            "\n",
            r#"{"type":"response_item","payload":{"type":"function_call","name":"update_plan","arguments":"{\"plan\":[{\"step\":\"find parse\",\"status\":\"completed\"}]}"}}"#,
            "\n",
            r#"{"type":"response_item","payload":{"type":"function_call","name":"echo","namespace":"mcp__everything","arguments":"{\"message\":\"hi\"}"}}"#,
        ));
        let trace = codex(&t).unwrap();
        assert_eq!(trace.task, "fix the bug in `parse`");
        assert_eq!(trace.steps, vec!["find parse"]);
        assert_eq!(trace.calls[0]["tool"], "mcp__everything__echo");
        t.push(json!({"type": "event_msg", "payload": {"type": "turn_aborted"}}));
        assert_eq!(codex(&t), None);
    }
}
