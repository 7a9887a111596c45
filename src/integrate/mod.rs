//! Registration of refrain with the agents on this machine: Claude Code, Codex CLI, Gemini CLI,
//! Qwen Code, opencode and Cursor.
//!
//! `plan_install` / `plan_uninstall` compute the file edits (pure: read files, return new bytes);
//! `apply` writes them, backing a file up as `<file>.refrain-backup` before its first edit. An
//! uninstall restores the backup byte for byte when nothing but refrain's entries changed since.
//! This module never touches entries it did not add.

pub mod codex_trust;
mod cursor_hooks;
mod edit;
mod hooks_json;
mod mcp;
mod plugin;
mod status;
mod targets;

pub use edit::{Change, FileEdit, apply};
pub use status::{FileState, hook_events, prompt_event, registration};
pub use targets::{Agent, Scope, codex_dir, present};

use std::path::PathBuf;

/// Errors while registering.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A config file could not be read or written.
    #[error("cannot {action} {path}: {source}")]
    Io {
        /// What was being done.
        action: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A config file is not valid JSON or TOML, so refrain will not edit it.
    #[error("{path} is not valid {format} ({message}); fix or move it, then run again")]
    Parse {
        /// The file.
        path: PathBuf,
        /// JSON or TOML.
        format: &'static str,
        /// The parser's message.
        message: String,
    },
    /// A config file has an unexpected shape where refrain needs to write.
    #[error("{path}: `{key}` is not an object/table; refrain will not overwrite it")]
    Shape {
        /// The file.
        path: PathBuf,
        /// The key.
        key: String,
    },
    /// The user's home directory is unknown.
    #[error("cannot find the home directory; set HOME")]
    NoHome,
    /// An agent name was not recognised.
    #[error("unknown agent `{0}`; use claude, codex, gemini, qwen, opencode or cursor")]
    UnknownAgent(String),
    /// A file refrain would write whole exists and is someone else's.
    #[error("{path} exists and was not written by refrain; move it away and run again, or register with --no-hooks")]
    Foreign {
        /// The file.
        path: PathBuf,
    },
}

/// What to register and where.
#[derive(Debug, Clone)]
pub struct Options {
    /// User-wide or project files.
    pub scope: Scope,
    /// Agents named with `--only`; `None` means every agent found on the machine.
    pub only: Option<Vec<Agent>>,
    /// Add the hooks that make reuse automatic.
    pub hooks: bool,
    /// The refrain command agents run (an absolute path to the binary, or `refrain`).
    pub command: String,
    /// The project root (project scope).
    pub project: PathBuf,
    /// The user's home directory.
    pub home: PathBuf,
    /// Settings the agent-started server and hooks must see (REFRAIN_HOME, REFRAIN_MODEL_DIR), as
    /// given at install time; empty when refrain's defaults apply.
    pub env: Vec<(String, String)>,
}

/// The environment variables `install` records, with the hook flag each one maps to.
pub const RECORDED_ENV: [(&str, &str); 2] = [("REFRAIN_HOME", "--home"), ("REFRAIN_MODEL_DIR", "--model-dir")];

/// The edits that register refrain with the chosen agents.
pub fn plan_install(opts: &Options) -> Result<Vec<FileEdit>, Error> {
    let mut out = Vec::new();
    for agent in agents_for(opts, true) {
        for target in targets::files(agent, opts) {
            if let Some(edit) = edit::install(&target, opts)? {
                out.push(edit);
            }
        }
    }
    Ok(out)
}

/// The edits that remove what `plan_install` added.
pub fn plan_uninstall(opts: &Options) -> Result<Vec<FileEdit>, Error> {
    let mut out = Vec::new();
    for agent in agents_for(opts, false) {
        for target in targets::files(agent, &Options { hooks: true, ..opts.clone() }) {
            if let Some(edit) = edit::uninstall(&target)? {
                out.push(edit);
            }
        }
    }
    Ok(out)
}

/// The agents to act on: those named, else (for install) those present, else (uninstall) all.
fn agents_for(opts: &Options, install: bool) -> Vec<Agent> {
    match &opts.only {
        Some(list) => list.clone(),
        None if install => Agent::ALL.into_iter().filter(|&a| targets::present(a, &opts.home)).collect(),
        None => Agent::ALL.to_vec(),
    }
}

/// Parses `claude,codex,cursor`.
pub fn parse_agents(list: &str) -> Result<Vec<Agent>, Error> {
    list.split(',').map(str::trim).filter(|s| !s.is_empty()).map(targets::parse).collect()
}

/// The hook command line for one agent and event, quoting the binary path when needed. Recorded
/// settings (`env`) become the matching flags (`--home`, `--model-dir`) after the event.
pub fn hook_command(command: &str, agent: &str, event: &str, env: &[(String, String)]) -> String {
    let mut line = format!("{} hook {agent} {event}", shell_quote(command));
    for (key, value) in env {
        if let Some((_, flag)) = RECORDED_ENV.iter().find(|(k, _)| k == key) {
            line.push_str(&format!(" {flag} {}", shell_quote(value)));
        }
    }
    line
}

/// A word as the shell reads it: unchanged when safe, else single-quoted.
fn shell_quote(word: &str) -> String {
    let safe = !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+=:@".contains(c));
    if safe { word.to_string() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}

/// True when a hook command was written by refrain (any binary path, any event).
pub fn is_refrain_hook(command: &str) -> bool {
    let Some((bin, rest)) = command.rsplit_once(" hook ") else { return false };
    let bin = bin.trim().trim_matches('\'');
    let ours = bin == "refrain" || bin.ends_with("/refrain");
    let agent = rest.split_whitespace().next().unwrap_or_default();
    ours && Agent::parse(agent).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_commands_are_recognised_whatever_the_path() {
        let env = vec![("REFRAIN_HOME".to_string(), "/data dir/refrain".to_string())];
        assert!(is_refrain_hook(&hook_command("/usr/local/bin/refrain", "claude", "Stop", &[])));
        assert!(is_refrain_hook(&hook_command("/home/a b/refrain", "codex", "Stop", &[])));
        let with_home = hook_command("/home/a b/refrain", "codex", "Stop", &env);
        assert_eq!(with_home, "'/home/a b/refrain' hook codex Stop --home '/data dir/refrain'");
        assert!(is_refrain_hook(&with_home));
        assert!(!is_refrain_hook("/usr/bin/other hook claude Stop"));
        assert!(!is_refrain_hook("refrain serve"));
    }

    #[test]
    fn agent_lists_parse_and_reject_unknown_names() {
        assert_eq!(parse_agents("claude, cursor").unwrap(), vec![Agent::Claude, Agent::Cursor]);
        assert!(parse_agents("claude,vim").is_err());
    }
}
