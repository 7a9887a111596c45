//! What the report reads off each history line besides the requests: the working directory,
//! the user's prompts, and the tool calls that read or write files (for repeated reads).
//!
//! Claude Code: `user`/`assistant` lines with content blocks (`tool_use`, `tool_result`).
//! Codex: `response_item` payloads (`message`, `function_call`, `custom_tool_call`,
//! `local_shell_call` and their outputs). Shell commands are judged by the hooks' rules.

use super::reads::{ReadKey, Repeat, Tracker};
use crate::hooks::classify::shell_file_read;
use crate::prompt::estimate_tokens;
use serde_json::Value;

/// What one line said, for the caller to account.
#[derive(Debug, Default)]
pub struct Seen {
    /// A prompt the user typed.
    pub prompt: Option<String>,
    /// Reads that repeated an unchanged read.
    pub repeats: Vec<Repeat>,
    /// The main conversation's context was compacted here: what it held is no longer sent.
    pub compacted: bool,
}

/// Per-file observation state.
#[derive(Debug, Default)]
pub struct Observer {
    /// The session's working directory, once seen.
    pub cwd: Option<String>,
    /// The session's id, once seen.
    pub session: Option<String>,
    reads: Tracker,
    /// Subagents' conversations recorded inline (Claude Code's sidechain entries), by agent: a
    /// read there is never a repeat of one in the main conversation, nor the other way round.
    side: std::collections::HashMap<String, Tracker>,
    /// The conversation of the entry being read: empty for the main one.
    current: String,
    /// Subagent entries seen: uuid -> the conversation (subagent run) they belong to.
    chains: std::collections::HashMap<String, String>,
}

/// Most subagent entries whose conversation is remembered in one file.
const MAX_CHAIN_ENTRIES: usize = 200_000;

const SHELL_TOOLS: [&str; 5] = ["Bash", "shell", "exec_command", "local_shell", "unified_exec"];

impl Observer {
    /// Reads a Claude Code line (main chain only; the caller skips subagents' lines).
    pub fn claude(&mut self, v: &Value) -> Seen {
        let mut seen = Seen::default();
        if self.cwd.is_none() {
            self.cwd = v.get("cwd").and_then(Value::as_str).map(str::to_string);
        }
        if self.session.is_none() {
            self.session = v.get("sessionId").and_then(Value::as_str).map(str::to_string);
        }
        let kind = v.get("type").and_then(Value::as_str);
        self.current = if v.get("isSidechain").and_then(Value::as_bool) == Some(true) {
            // Each subagent run is its own conversation: the chain of entries its first one starts
            // (its agent id, when Claude Code records one).
            let text = |k: &str| v.get(k).and_then(Value::as_str);
            let conv = text("parentUuid")
                .and_then(|p| self.chains.get(p).cloned())
                .or_else(|| text("agentId").map(str::to_string))
                .or_else(|| text("uuid").map(str::to_string))
                .unwrap_or_else(|| "sidechain".to_string());
            if let Some(u) = text("uuid")
                && self.chains.len() < MAX_CHAIN_ENTRIES
            {
                self.chains.insert(u.to_string(), conv.clone());
            }
            conv
        } else {
            String::new()
        };
        // A compaction, or Claude Code clearing old tool outputs: the window starts anew.
        if kind == Some("system")
            && matches!(v.get("subtype").and_then(Value::as_str), Some("compact_boundary" | "microcompact_boundary"))
        {
            self.reads().reset();
            seen.compacted = self.current.is_empty();
            return seen;
        }
        let Some(content) = v.get("message").and_then(|m| m.get("content")) else { return seen };
        match kind {
            Some("user") => {
                // Injected context, compaction summaries: not something the user asked.
                let flag = |k: &str| v.get(k).and_then(Value::as_bool) == Some(true);
                let meta = flag("isMeta") || flag("isCompactSummary") || flag("isVisibleInTranscriptOnly");
                match content {
                    Value::String(s) if !meta => seen.prompt = prompt_text(s),
                    Value::Array(blocks) => {
                        let mut text = Vec::new();
                        let mut results = false;
                        for b in blocks {
                            match b.get("type").and_then(Value::as_str) {
                                Some("tool_result") => {
                                    results = true;
                                    let id = b.get("tool_use_id").and_then(Value::as_str).unwrap_or_default();
                                    let err = b.get("is_error").and_then(Value::as_bool) == Some(true);
                                    let tokens = result_tokens(b.get("content"));
                                    let text = result_text(b.get("content"));
                                    seen.repeats.extend(self.reads().result(id, &text, tokens, err));
                                }
                                Some("text") => text.extend(b.get("text").and_then(Value::as_str)),
                                _ => {}
                            }
                        }
                        if !meta && !results {
                            seen.prompt = prompt_text(&text.join("\n"));
                        }
                    }
                    _ => {}
                }
            }
            Some("assistant") => {
                for b in content.as_array().into_iter().flatten() {
                    if b.get("type").and_then(Value::as_str) == Some("tool_use") {
                        let name = b.get("name").and_then(Value::as_str).unwrap_or_default();
                        let id = b.get("id").and_then(Value::as_str).unwrap_or_default();
                        let input = b.get("input").cloned().unwrap_or(Value::Null);
                        self.tool_call(name, id, &input);
                    }
                }
            }
            _ => {}
        }
        if !self.current.is_empty() {
            seen.prompt = None;
        }
        seen
    }

    /// Reads a Codex rollout line.
    pub fn codex(&mut self, v: &Value) -> Seen {
        let mut seen = Seen::default();
        let Some(p) = v.get("payload") else { return seen };
        match v.get("type").and_then(Value::as_str) {
            Some("session_meta") => {
                self.cwd = p.get("cwd").and_then(Value::as_str).map(str::to_string).or(self.cwd.take());
                self.session = p.get("id").and_then(Value::as_str).map(str::to_string).or(self.session.take());
            }
            Some("turn_context") => {
                if let Some(cwd) = p.get("cwd").and_then(Value::as_str) {
                    self.cwd = Some(cwd.to_string());
                }
            }
            Some("compacted") => {
                self.reads.reset();
                seen.compacted = true;
            }
            Some("response_item") => self.codex_item(p, &mut seen),
            _ => {}
        }
        seen
    }

    fn codex_item(&mut self, p: &Value, seen: &mut Seen) {
        let s = |k: &str| p.get(k).and_then(Value::as_str).unwrap_or_default();
        match s("type") {
            "message" if s("role") == "user" => {
                seen.prompt = prompt_text(&crate::transcript::part_texts(p.get("content")));
            }
            "function_call" => {
                let args = match p.get("arguments") {
                    Some(Value::String(a)) => serde_json::from_str(a).unwrap_or(Value::Null),
                    Some(other) => other.clone(),
                    None => Value::Null,
                };
                self.tool_call(s("name"), s("call_id"), &args);
            }
            "custom_tool_call" => {
                let input = p.get("input").cloned().unwrap_or(Value::Null);
                self.tool_call(s("name"), s("call_id"), &serde_json::json!({"input": input}));
            }
            "local_shell_call" => {
                let action = p.get("action").cloned().unwrap_or(Value::Null);
                self.tool_call("local_shell", s("call_id"), &action);
            }
            "function_call_output" | "custom_tool_call_output" | "local_shell_call_output" => {
                let tokens = result_tokens(p.get("output"));
                let text = result_text(p.get("output"));
                seen.repeats.extend(self.reads.result(s("call_id"), &text, tokens, false));
            }
            _ => {}
        }
    }

    /// The reads of the conversation the current entry belongs to.
    fn reads(&mut self) -> &mut Tracker {
        if self.current.is_empty() { &mut self.reads } else { self.side.entry(self.current.clone()).or_default() }
    }

    /// A tool call: a read to remember, or nothing.
    fn tool_call(&mut self, name: &str, id: &str, input: &Value) {
        let cwd = self.cwd.clone().unwrap_or_default();
        let text = |k: &str| input.get(k).and_then(Value::as_str).map(str::to_string);
        if name == "Read" {
            if let Some(path) = text("file_path") {
                let range = format!(
                    "{}:{}",
                    input.get("offset").map(Value::to_string).unwrap_or_default(),
                    input.get("limit").map(Value::to_string).unwrap_or_default()
                );
                let range = if range == ":" { String::new() } else { range };
                self.reads().call(id, ReadKey { path, range });
            }
        } else if SHELL_TOOLS.contains(&name) {
            let Some(command) = command_of(input) else { return };
            let dir = text("workdir").unwrap_or(cwd);
            if let Some(files) = shell_file_read(&command, &dir) {
                let path = files.join(" ");
                self.reads().call(id, ReadKey { path, range: command.clone() });
            }
        }
    }
}

/// The command line of a shell tool call: `command` (a string, or an argv whose `bash -lc`
/// script is the command) or `cmd`.
fn command_of(input: &Value) -> Option<String> {
    match input.get("command").or_else(|| input.get("cmd"))? {
        Value::String(s) => Some(s.clone()),
        Value::Array(argv) => {
            let words: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
            match words.as_slice() {
                [sh, flag, script] if sh.ends_with("sh") && flag.starts_with('-') => Some(script.to_string()),
                _ => Some(words.join(" ")),
            }
        }
        _ => None,
    }
}

/// The text a tool result gave the model, exactly (its parts joined as they are).
fn result_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .map(|p| p.get("text").and_then(Value::as_str).map(str::to_string).unwrap_or_else(|| p.to_string()))
            .collect::<Vec<_>>()
            .join("\n"),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// Tokens of a tool result's content (text, text blocks, or anything else as JSON).
fn result_tokens(content: Option<&Value>) -> u64 {
    match content {
        Some(Value::String(s)) => estimate_tokens(s),
        Some(Value::Array(parts)) => parts
            .iter()
            .map(|p| match p.get("text").and_then(Value::as_str) {
                Some(t) => estimate_tokens(t),
                None => estimate_tokens(&p.to_string()),
            })
            .sum(),
        Some(other) => estimate_tokens(&other.to_string()),
        None => 0,
    }
}

/// A prompt the user typed, shortened; None for injected context (`<...>` blocks, commands,
/// interruptions) and empty text.
fn prompt_text(text: &str) -> Option<String> {
    let t = text.trim();
    if t.is_empty() || t.starts_with('<') || t.starts_with("[Request interrupted") || t.starts_with("# AGENTS.md") {
        return None;
    }
    let one_line: String = t.split_whitespace().collect::<Vec<_>>().join(" ");
    Some(one_line.chars().take(MAX_PROMPT_CHARS).collect())
}

/// Prompts are kept up to this many characters (enough to match a plan, short enough to list).
const MAX_PROMPT_CHARS: usize = 400;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn claude_reads_prompts_and_repeated_reads() {
        let mut o = Observer::default();
        let prompt =
            o.claude(&json!({"type": "user", "cwd": "/p", "message": {"role": "user", "content": "fix the  bug"}}));
        assert_eq!(prompt.prompt.as_deref(), Some("fix the bug"));
        let read = |id: &str| json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "Read", "input": {"file_path": "/p/a.rs"}}]}});
        let result = |id: &str| json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "x".repeat(400)}]}});
        o.claude(&read("t1"));
        assert!(o.claude(&result("t1")).repeats.is_empty());
        o.claude(&read("t2"));
        assert_eq!(o.claude(&result("t2")).repeats, vec![Repeat { path: "/p/a.rs".into(), tokens: 100 }]);
        let injected = o.claude(
            &json!({"type": "user", "message": {"role": "user", "content": "<command-name>/compact</command-name>"}}),
        );
        assert!(injected.prompt.is_none());
    }

    #[test]
    fn codex_shell_reads_and_patches() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rs"), "fn main() {}").unwrap();
        let cwd = dir.path().to_string_lossy().into_owned();
        let mut o = Observer::default();
        o.codex(&json!({"type": "session_meta", "payload": {"cwd": cwd, "id": "s1"}}));
        let call = |id: &str| {
            json!({"type": "response_item", "payload": {"type": "function_call", "name": "shell", "call_id": id,
            "arguments": json!({"command": ["bash", "-lc", "cat a.rs"]}).to_string()}})
        };
        let out_of = |id: &str, text: &str| json!({"type": "response_item", "payload": {"type": "function_call_output", "call_id": id, "output": text}});
        let out = |id: &str| out_of(id, "fn main() {}");
        o.codex(&call("c1"));
        assert!(o.codex(&out("c1")).repeats.is_empty());
        o.codex(&call("c2"));
        assert_eq!(o.codex(&out("c2")).repeats.len(), 1);
        o.codex(&json!({"type": "response_item", "payload": {"type": "custom_tool_call", "name": "apply_patch", "call_id": "p",
            "input": "*** Begin Patch\n*** Update File: a.rs\n@@\n-x\n+y\n*** End Patch"}}));
        o.codex(&call("c3"));
        assert!(o.codex(&out_of("c3", "fn main() { y }")).repeats.is_empty(), "patched in between: another text");
        // A shell command in between hides nothing: the same text again is a repeat.
        o.codex(&call("c4"));
        assert_eq!(o.codex(&out_of("c4", "fn main() { y }")).repeats.len(), 1);
        let p = o.codex(&json!({"type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "add a flag"}]}}));
        assert_eq!(p.prompt.as_deref(), Some("add a flag"));
    }
}
