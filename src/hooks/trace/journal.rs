//! opencode and Cursor: the turn refrain's journal ends with. The task is the last prompt; the
//! steps are the todo items of the agent's todo tool; the calls are the tool calls after it.

use super::Trace;
use crate::hooks::dedup::journal::Entry;
use crate::hooks::{Agent, Payload, names};
use serde_json::{Value, json};

/// The last turn of a journal; a Cursor turn that ended in error or was aborted is not a plan.
pub fn turn(agent: Agent, entries: &[Entry], p: &Payload) -> Option<Trace> {
    if p.status.as_deref().is_some_and(|s| s != "completed") {
        return None;
    }
    let start = entries.iter().rposition(|e| matches!(e, Entry::Prompt { .. }))?;
    let Entry::Prompt { text: task } = &entries[start] else { return None };
    let (mut steps, mut calls, mut done) = (Vec::new(), Vec::new(), true);
    for e in &entries[start + 1..] {
        let Entry::Call { tool, input, .. } = e else { continue };
        if names::is_refrain(agent, tool) {
            continue;
        }
        if names::tool(agent, tool) == "TodoWrite" {
            let todos = input.get("todos").and_then(Value::as_array).cloned().unwrap_or_default();
            steps = todos.iter().filter_map(|t| t.get("content").and_then(Value::as_str).map(str::to_string)).collect();
            done = todos
                .iter()
                .all(|t| matches!(t.get("status").and_then(Value::as_str), Some("completed" | "cancelled")));
        } else {
            calls.push(json!({"tool": tool, "input": input}));
        }
    }
    done.then(|| Trace { task: task.trim().to_string(), steps, calls })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_prompt_and_its_calls_are_the_turn() {
        let call = |tool: &str| Entry::Call {
            id: "c".into(),
            tool: tool.into(),
            input: json!({"filePath": "/p/n.txt"}),
            cwd: "/p".into(),
            output_len: 1,
            text: None,
            exact: false,
        };
        let entries = vec![
            Entry::Prompt { text: "old task".into() },
            call("read"),
            Entry::Prompt { text: "Fix the typo".into() },
            call("read"),
            call("refrain_cache_stats"),
            call("edit"),
        ];
        let t = turn(Agent::Opencode, &entries, &Payload::default()).unwrap();
        assert_eq!((t.task.as_str(), t.calls.len()), ("Fix the typo", 2));
        let aborted = Payload { status: Some("aborted".into()), ..Payload::default() };
        assert_eq!(turn(Agent::Cursor, &entries, &aborted), None);
    }
}
