//! Each agent names its tools and their arguments its own way (`read_file`/`file_path` in Gemini
//! CLI, `read`/`filePath` in opencode, `MCP:server:tool` in Cursor). This brings a call onto
//! Claude Code's names (`Read`/`file_path`, `mcp__server__tool`), which the rest of the hook code
//! speaks, and tells refrain's own tools apart in every spelling.

use super::Agent;
use serde_json::{Map, Value};

/// Claude Code's name for a tool, from the agent's own.
pub fn tool(agent: Agent, name: &str) -> String {
    let canonical = match (agent, name) {
        (Agent::Gemini | Agent::Qwen, "read_file") => "Read",
        (Agent::Gemini | Agent::Qwen, "write_file") => "Write",
        (Agent::Gemini | Agent::Qwen, "replace" | "edit") => "Edit",
        (Agent::Gemini | Agent::Qwen, "glob") => "Glob",
        (Agent::Gemini | Agent::Qwen, "grep_search" | "search_file_content" | "grep") => "Grep",
        (Agent::Gemini | Agent::Qwen, "run_shell_command") => "Bash",
        (Agent::Gemini | Agent::Qwen, "web_fetch") => "WebFetch",
        (Agent::Gemini | Agent::Qwen, "google_web_search" | "web_search") => "WebSearch",
        (Agent::Gemini | Agent::Qwen, "write_todos" | "todo_write") => "TodoWrite",
        (Agent::Opencode, "read") => "Read",
        (Agent::Opencode, "write") => "Write",
        (Agent::Opencode, "edit" | "multiedit" | "patch") => "Edit",
        (Agent::Opencode, "glob") => "Glob",
        (Agent::Opencode, "grep") => "Grep",
        (Agent::Opencode, "bash") => "Bash",
        (Agent::Opencode, "webfetch") => "WebFetch",
        (Agent::Opencode, "websearch") => "WebSearch",
        (Agent::Opencode, "todowrite") => "TodoWrite",
        (Agent::Cursor, "Shell" | "run_terminal_cmd") => "Bash",
        (Agent::Cursor, "read_file") => "Read",
        (Agent::Cursor, "StrReplace" | "search_replace" | "edit_file") => "Edit",
        (Agent::Cursor, "Delete" | "delete_file") => "Write",
        _ => return mcp(agent, name).unwrap_or_else(|| name.to_string()),
    };
    canonical.to_string()
}

/// `mcp__server__tool` for an agent's MCP tool name, when it is one.
fn mcp(agent: Agent, name: &str) -> Option<String> {
    match agent {
        Agent::Cursor => {
            let rest = name.strip_prefix("MCP:")?;
            let (server, tool) = rest.split_once(':').unwrap_or(("", rest));
            Some(format!("mcp__{server}__{tool}"))
        }
        Agent::Gemini => {
            let rest = name.strip_prefix("mcp_").filter(|r| !r.starts_with('_'))?;
            let (server, tool) = rest.split_once('_')?;
            Some(format!("mcp__{server}__{tool}"))
        }
        Agent::Opencode => name.strip_prefix("refrain_").map(|t| format!("mcp__refrain__{t}")),
        _ => None,
    }
}

/// True for refrain's own MCP tools, whatever the agent calls them.
pub fn is_refrain(agent: Agent, name: &str) -> bool {
    tool(agent, name).starts_with("mcp__refrain__")
}

/// The input with the file argument under Claude Code's name (`file_path`) too.
pub fn input(agent: Agent, input: &Value) -> Value {
    let Some(obj) = input.as_object() else { return input.clone() };
    let mut out: Map<String, Value> = obj.clone();
    if !out.contains_key("file_path") {
        let alias = match agent {
            Agent::Opencode => ["filePath"].as_slice(),
            Agent::Gemini | Agent::Qwen => ["absolute_path", "path"].as_slice(),
            Agent::Cursor => ["target_file", "path"].as_slice(),
            _ => [].as_slice(),
        };
        if let Some(v) = alias.iter().find_map(|k| obj.get(*k)) {
            out.insert("file_path".into(), v.clone());
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_agents_names_map_onto_claude_codes() {
        assert_eq!(tool(Agent::Gemini, "read_file"), "Read");
        assert_eq!(tool(Agent::Gemini, "mcp_refrain_plan_lookup"), "mcp__refrain__plan_lookup");
        assert_eq!(tool(Agent::Opencode, "bash"), "Bash");
        assert_eq!(tool(Agent::Cursor, "MCP:refrain:cache_stats"), "mcp__refrain__cache_stats");
        assert_eq!(tool(Agent::Claude, "Read"), "Read");
        assert!(is_refrain(Agent::Opencode, "refrain_plan_feedback"));
        assert!(!is_refrain(Agent::Gemini, "read_file"));
        assert_eq!(input(Agent::Opencode, &json!({"filePath": "/a"}))["file_path"], "/a");
    }
}
