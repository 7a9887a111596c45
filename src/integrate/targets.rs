//! Which files register refrain with each agent in each scope. The agents are the hooks' own
//! (`hooks::Agent`): a registered hook names its agent as `refrain hook` parses it.

use super::{Error, Options};
pub use crate::hooks::Agent;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

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
    /// A settings.json holding both `mcpServers.refrain` and hook groups (Gemini CLI, Qwen Code);
    /// `millis`: hook timeouts are written in milliseconds.
    Settings {
        /// The MCP server entry.
        server: Value,
        /// The hooks (none with `--no-hooks`).
        hooks: Vec<HookSpec>,
        /// Timeouts in milliseconds (Gemini CLI) rather than seconds.
        millis: bool,
    },
    /// opencode.json with `mcp.refrain`.
    Opencode(Value),
    /// Cursor's hooks.json: flat entries per event.
    CursorHooks(Vec<&'static str>),
    /// A file refrain writes whole (the opencode plugin).
    Plugin(String),
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

/// Parses an agent's short name (as `refrain hook` takes it).
pub fn parse(s: &str) -> Result<Agent, Error> {
    Agent::parse(s).map_err(|_| Error::UnknownAgent(s.to_string()))
}

/// True when the agent's config directory or binary exists on this machine.
pub fn present(agent: Agent, home: &Path) -> bool {
    let dir = match agent {
        Agent::Claude => claude_dir(home),
        Agent::Codex => codex_dir(home),
        Agent::Gemini => home.join(".gemini"),
        Agent::Qwen => home.join(".qwen"),
        Agent::Opencode => opencode_dir(home),
        Agent::Cursor => home.join(".cursor"),
    };
    dir.exists() || (agent == Agent::Claude && claude_json(home).exists()) || on_path(agent.arg())
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

/// Codex's home (`$CODEX_HOME`, else `~/.codex`).
pub fn codex_dir(home: &Path) -> PathBuf {
    std::env::var_os("CODEX_HOME").map(PathBuf::from).unwrap_or_else(|| home.join(".codex"))
}

/// opencode's user config directory (`$XDG_CONFIG_HOME/opencode`, else `~/.config/opencode`).
fn opencode_dir(home: &Path) -> PathBuf {
    let base = std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from).filter(|p| p.is_absolute());
    base.unwrap_or_else(|| home.join(".config")).join("opencode")
}

fn on_path(bin: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(bin).is_file()))
}

/// The stdio server entry for JSON configs, with the recorded environment.
fn server_entry(agent: Agent, command: &str, env: &[(String, String)]) -> Value {
    let env: serde_json::Map<String, Value> = env.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect();
    match agent {
        Agent::Claude => json!({"type": "stdio", "command": command, "args": ["serve"], "env": env}),
        Agent::Opencode if env.is_empty() => json!({"type": "local", "command": [command, "serve"], "enabled": true}),
        Agent::Opencode => {
            json!({"type": "local", "command": [command, "serve"], "enabled": true, "environment": env})
        }
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

/// The hooks refrain installs for Gemini CLI (timeouts in milliseconds). Its PreCompress fires
/// before every request whether it compresses or not, so refrain only notes it.
pub fn gemini_hooks() -> Vec<HookSpec> {
    vec![
        HookSpec { event: "BeforeAgent", matcher: None, timeout_secs: 10 },
        HookSpec {
            event: "AfterTool",
            matcher: Some(
                "read_file|read_many_files|glob|grep_search|search_file_content|replace|write_file|run_shell_command|web_fetch|google_web_search|mcp_.*",
            ),
            timeout_secs: 10,
        },
        HookSpec { event: "AfterAgent", matcher: None, timeout_secs: 20 },
        HookSpec { event: "PreCompress", matcher: None, timeout_secs: 10 },
    ]
}

/// The hooks refrain installs for Qwen Code: Claude Code's format and events, every tool, so the
/// same list as Codex's.
pub fn qwen_hooks() -> Vec<HookSpec> {
    codex_hooks()
}

/// The events refrain registers in Cursor's hooks.json.
pub const CURSOR_EVENTS: [&str; 5] = ["beforeSubmitPrompt", "postToolUse", "afterFileEdit", "preCompact", "stop"];

/// The flags the hook command takes for the recorded settings (`--home DIR`, `--model-dir DIR`).
fn hook_flags(env: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    for (key, value) in env {
        if let Some((_, flag)) = super::RECORDED_ENV.iter().find(|(k, _)| k == key) {
            out.push(flag.to_string());
            out.push(value.clone());
        }
    }
    out
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
        Agent::Gemini | Agent::Qwen => {
            let dot = if agent == Agent::Gemini { ".gemini" } else { ".qwen" };
            let dir = if user { home.join(dot) } else { project.join(dot) };
            let hooks = match (opts.hooks, agent) {
                (false, _) => Vec::new(),
                (true, Agent::Gemini) => gemini_hooks(),
                (true, _) => qwen_hooks(),
            };
            let server = server_entry(agent, &opts.command, &opts.env);
            push(dir.join("settings.json"), Kind::Settings { server, hooks, millis: agent == Agent::Gemini });
        }
        Agent::Opencode => {
            let (config, plugins) = if user {
                (opencode_dir(home).join("opencode.json"), opencode_dir(home).join("plugin"))
            } else {
                (project.join("opencode.json"), project.join(".opencode/plugin"))
            };
            push(config, Kind::Opencode(server_entry(agent, &opts.command, &opts.env)));
            if opts.hooks {
                let text = super::plugin::text(&opts.command, &hook_flags(&opts.env));
                push(plugins.join("refrain.js"), Kind::Plugin(text));
            }
        }
        Agent::Cursor => {
            let dir = if user { home.join(".cursor") } else { project.join(".cursor") };
            push(dir.join("mcp.json"), Kind::McpJson(server_entry(agent, &opts.command, &opts.env)));
            if opts.hooks {
                push(dir.join("hooks.json"), Kind::CursorHooks(CURSOR_EVENTS.to_vec()));
            }
        }
    }
    out
}
