//! What the agents' files say about refrain now, for `refrain doctor`: whether each registration
//! file holds exactly what `refrain install` would write, which command its MCP entry runs, and
//! which hook events refrain registers for each agent.

use super::targets::{self, Agent, Kind, Target};
use super::{Error, Options, edit, mcp};
use serde_json::Value;
use std::path::PathBuf;

/// One registration file of one agent.
#[derive(Debug, Clone)]
pub struct FileState {
    /// The file.
    pub path: PathBuf,
    /// What refrain keeps in it: "MCP server entry", "hooks" or both.
    pub holds: &'static str,
    /// True when it holds an MCP entry or hooks of refrain's.
    pub mcp: bool,
    /// True when `refrain install` would leave it as it is.
    pub current: bool,
    /// The command refrain's MCP entry runs, when the file has one.
    pub command: Option<String>,
}

/// The state of each file `refrain install` writes for `agent` with these options.
pub fn registration(agent: Agent, opts: &Options) -> Result<Vec<FileState>, Error> {
    let mut out = Vec::new();
    for target in targets::files(agent, opts) {
        let current = edit::install(&target, opts)?.is_none();
        let (holds, mcp) = match target.kind {
            Kind::McpJson(_) | Kind::McpToml | Kind::Opencode(_) => ("MCP server entry", true),
            Kind::Settings { ref hooks, .. } if !hooks.is_empty() => ("MCP server entry and hooks", true),
            Kind::Settings { .. } => ("MCP server entry", true),
            Kind::Hooks(_) | Kind::CursorHooks(_) | Kind::Plugin(_) => ("hooks", false),
        };
        let command = if mcp { registered_command(&target) } else { None };
        out.push(FileState { path: target.path, holds, mcp, current, command });
    }
    Ok(out)
}

/// The command of refrain's MCP entry in a file, if it has one.
fn registered_command(target: &Target) -> Option<String> {
    let text = std::fs::read_to_string(&target.path).ok()?;
    if matches!(target.kind, Kind::McpToml) {
        let doc: toml::Table = toml::from_str(&text).ok()?;
        let entry = doc.get(mcp::TOML_SERVERS)?.get(mcp::NAME)?;
        return entry.get("command")?.as_str().map(str::to_string);
    }
    let doc: Value = serde_json::from_str(&text).ok()?;
    let key = if matches!(target.kind, Kind::Opencode(_)) { mcp::OPENCODE_SERVERS } else { mcp::SERVERS };
    let command = &doc[key][mcp::NAME]["command"];
    command.as_str().or_else(|| command[0].as_str()).map(str::to_string)
}

/// The hook events refrain registers for an agent, as the agent names them (and as `refrain
/// hook` records them).
pub fn hook_events(agent: Agent) -> Vec<&'static str> {
    let specs = match agent {
        Agent::Claude => targets::claude_hooks(),
        Agent::Codex => targets::codex_hooks(),
        Agent::Gemini => targets::gemini_hooks(),
        Agent::Qwen => targets::qwen_hooks(),
        Agent::Opencode => {
            return vec!["chat.message", "tool.execute.after", "session.idle", "session.compacted", "file.edited"];
        }
        Agent::Cursor => return targets::CURSOR_EVENTS.to_vec(),
    };
    specs.into_iter().map(|s| s.event).collect()
}

/// The event that fires at every prompt: the one a session cannot miss.
pub fn prompt_event(agent: Agent) -> &'static str {
    match agent {
        Agent::Claude | Agent::Codex | Agent::Qwen => "UserPromptSubmit",
        Agent::Gemini => "BeforeAgent",
        Agent::Opencode => "chat.message",
        Agent::Cursor => "beforeSubmitPrompt",
    }
}
