//! Which agents exist, and which files register refrain with each of them in each scope.

use super::{Error, Options};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// A coding agent refrain registers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    /// Claude Code.
    Claude,
    /// Codex CLI.
    Codex,
    /// Cursor.
    Cursor,
}

/// User-wide or per-project registration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Scope {
    /// The user's own config files (every project).
    User,
    /// Files in the project, to commit and share.
    Project,
}

/// How a file is edited.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A JSON file with `mcpServers.refrain`.
    McpJson(Value),
    /// Codex `config.toml` with `[mcp_servers.refrain]`.
    McpToml,
    /// A JSON file with `hooks.<Event>[]` groups (Claude Code settings, Codex hooks.json).
    Hooks(Vec<HookSpec>),
}

/// One hook group refrain adds.
#[derive(Debug, Clone, PartialEq)]
pub struct HookSpec {
    /// The event name, as the agent spells it.
    pub event: &'static str,
    /// Tool-name matcher (regex), when the event takes one.
    pub matcher: Option<&'static str>,
    /// Seconds the agent waits for the hook.
    pub timeout_secs: u64,
}

/// A file to edit for one agent.
#[derive(Debug, Clone)]
pub struct Target {
    /// The agent.
    pub agent: Agent,
    /// The file.
    pub path: PathBuf,
    /// How to edit it.
    pub kind: Kind,
}

impl Agent {
    /// Every agent, in a stable order.
    pub const ALL: [Agent; 3] = [Agent::Claude, Agent::Codex, Agent::Cursor];

    /// The agent's short name.
    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Cursor => "cursor",
        }
    }

    /// Parses a short name.
    pub fn parse(s: &str) -> Result<Agent, Error> {
        Agent::ALL.into_iter().find(|a| a.name() == s).ok_or_else(|| Error::UnknownAgent(s.to_string()))
    }

    /// True when the agent's config directory or binary exists on this machine.
    pub fn present(self, home: &Path) -> bool {
        let dir = match self {
            Agent::Claude => claude_dir(home),
            Agent::Codex => codex_dir(home),
            Agent::Cursor => home.join(".cursor"),
        };
        dir.exists() || (self == Agent::Claude && claude_json(home).exists()) || on_path(self.name())
    }
}

fn claude_dir(home: &Path) -> PathBuf {
    std::env::var_os("CLAUDE_CONFIG_DIR").map(PathBuf::from).unwrap_or_else(|| home.join(".claude"))
}

fn claude_json(home: &Path) -> PathBuf {
    match std::env::var_os("CLAUDE_CONFIG_DIR") {
        Some(d) => PathBuf::from(d).join(".claude.json"),
        None => home.join(".claude.json"),
    }
}

fn codex_dir(home: &Path) -> PathBuf {
    std::env::var_os("CODEX_HOME").map(PathBuf::from).unwrap_or_else(|| home.join(".codex"))
}

fn on_path(bin: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(bin).is_file()))
}

/// The stdio server entry for JSON configs, with the recorded environment.
fn server_entry(agent: Agent, command: &str, env: &[(String, String)]) -> Value {
    let env: serde_json::Map<String, Value> = env.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
    match agent {
        Agent::Claude => json!({"type": "stdio", "command": command, "args": ["serve"], "env": env}),
        _ if env.is_empty() => json!({"command": command, "args": ["serve"]}),
        _ => json!({"command": command, "args": ["serve"], "env": env}),
    }
}

/// The hooks refrain installs for Claude Code.
pub fn claude_hooks() -> Vec<HookSpec> {
    vec![
        HookSpec { event: "UserPromptSubmit", matcher: None, timeout_secs: 10 },
        HookSpec { event: "PreToolUse", matcher: Some("WebFetch|WebSearch"), timeout_secs: 10 },
        HookSpec {
            event: "PostToolUse",
            matcher: Some("Read|Grep|Glob|WebFetch|WebSearch|Edit|Write|MultiEdit|NotebookEdit|Bash|mcp__.*"),
            timeout_secs: 10,
        },
        HookSpec { event: "Stop", matcher: None, timeout_secs: 20 },
        HookSpec { event: "PreCompact", matcher: None, timeout_secs: 10 },
        HookSpec { event: "PostCompact", matcher: None, timeout_secs: 10 },
    ]
}

/// The hooks refrain installs for Codex (hooks.json has the same shape as Claude Code's).
/// Codex 0.169 also has PreToolUse, but its only network read (web_search) runs on the provider's
/// side and never reaches a hook, so a PreToolUse hook would run on every call for nothing.
pub fn codex_hooks() -> Vec<HookSpec> {
    vec![
        HookSpec { event: "UserPromptSubmit", matcher: None, timeout_secs: 10 },
        HookSpec { event: "PostToolUse", matcher: None, timeout_secs: 10 },
        HookSpec { event: "Stop", matcher: None, timeout_secs: 20 },
        HookSpec { event: "PreCompact", matcher: None, timeout_secs: 10 },
        HookSpec { event: "PostCompact", matcher: None, timeout_secs: 10 },
    ]
}

/// The files to edit for one agent in the chosen scope.
pub fn files(agent: Agent, opts: &Options) -> Vec<Target> {
    let (home, project, user) = (&opts.home, &opts.project, opts.scope == Scope::User);
    let mut out = Vec::new();
    let mut push = |path: PathBuf, kind: Kind| out.push(Target { agent, path, kind });
    match agent {
        Agent::Claude => {
            let mcp = if user { claude_json(home) } else { project.join(".mcp.json") };
            push(mcp, Kind::McpJson(server_entry(agent, &opts.command, &opts.env)));
            if opts.hooks {
                let settings =
                    if user { claude_dir(home).join("settings.json") } else { project.join(".claude/settings.json") };
                push(settings, Kind::Hooks(claude_hooks()));
            }
        }
        Agent::Codex => {
            let dir = if user { codex_dir(home) } else { project.join(".codex") };
            push(dir.join("config.toml"), Kind::McpToml);
            if opts.hooks {
                push(dir.join("hooks.json"), Kind::Hooks(codex_hooks()));
            }
        }
        Agent::Cursor => {
            let dir = if user { home.join(".cursor") } else { project.join(".cursor") };
            push(dir.join("mcp.json"), Kind::McpJson(server_entry(agent, &opts.command, &opts.env)));
        }
    }
    out
}
