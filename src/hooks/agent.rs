//! Which agent sent a hook and which of refrain's events it means. Each agent names its events in
//! its own way (Gemini CLI's `AfterTool`, Cursor's `postToolUse`, opencode's plugin events); they
//! all map onto the few events refrain acts on.

use super::Error;

/// The agent sending the hook; also the agents `refrain install` registers with (`integrate`), so
/// a hook command it writes names its agent the way `parse` reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    /// Claude Code.
    Claude,
    /// Codex CLI.
    Codex,
    /// Gemini CLI.
    Gemini,
    /// Qwen Code (Claude-format hooks).
    Qwen,
    /// opencode, through refrain's plugin.
    Opencode,
    /// Cursor (its own hooks.json, or Claude Code's hooks that Cursor also runs).
    Cursor,
}

impl Agent {
    /// Every agent, in a stable order.
    pub const ALL: [Agent; 6] =
        [Agent::Claude, Agent::Codex, Agent::Gemini, Agent::Qwen, Agent::Opencode, Agent::Cursor];

    /// Parses the name used on the `refrain hook` command line.
    pub fn parse(s: &str) -> Result<Agent, Error> {
        Agent::ALL.into_iter().find(|a| a.arg() == s).ok_or_else(|| Error::Unknown(s.to_string()))
    }

    /// The short name: on the `refrain hook` command line and in `refrain install --only`.
    pub fn arg(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
            Agent::Qwen => "qwen",
            Agent::Opencode => "opencode",
            Agent::Cursor => "cursor",
        }
    }

    /// The name used in stored records.
    pub fn name(self) -> &'static str {
        match self {
            Agent::Claude => "claude-code",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini-cli",
            Agent::Qwen => "qwen-code",
            Agent::Opencode => "opencode",
            Agent::Cursor => "cursor",
        }
    }
}

/// The hook events refrain answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The user submitted a prompt.
    UserPromptSubmit,
    /// Before a tool runs.
    PreToolUse,
    /// After a tool ran.
    PostToolUse,
    /// The agent finished its turn.
    Stop,
    /// Before a compaction.
    PreCompact,
    /// After a compaction.
    PostCompact,
}

impl Event {
    /// Parses an event name as the agent spells it (Claude Code's names are accepted from every
    /// agent, since several agents reuse them).
    pub fn parse(agent: Agent, s: &str) -> Result<Event, Error> {
        let by_agent = match (agent, s) {
            (Agent::Gemini, "BeforeAgent") => Some(Event::UserPromptSubmit),
            (Agent::Gemini, "BeforeTool") => Some(Event::PreToolUse),
            (Agent::Gemini, "AfterTool") => Some(Event::PostToolUse),
            (Agent::Gemini, "AfterAgent") => Some(Event::Stop),
            (Agent::Gemini, "PreCompress") => Some(Event::PreCompact),
            (Agent::Cursor, "beforeSubmitPrompt") => Some(Event::UserPromptSubmit),
            (Agent::Cursor, "postToolUse" | "afterFileEdit") => Some(Event::PostToolUse),
            (Agent::Cursor, "stop") => Some(Event::Stop),
            (Agent::Cursor, "preCompact") => Some(Event::PreCompact),
            (Agent::Opencode, "chat.message") => Some(Event::UserPromptSubmit),
            (Agent::Opencode, "tool.execute.after" | "file.edited") => Some(Event::PostToolUse),
            (Agent::Opencode, "session.idle") => Some(Event::Stop),
            (Agent::Opencode, "session.compacted") => Some(Event::PostCompact),
            _ => None,
        };
        if let Some(e) = by_agent {
            return Ok(e);
        }
        Ok(match s {
            "UserPromptSubmit" => Event::UserPromptSubmit,
            "PreToolUse" => Event::PreToolUse,
            "PostToolUse" => Event::PostToolUse,
            "Stop" => Event::Stop,
            "PreCompact" => Event::PreCompact,
            "PostCompact" => Event::PostCompact,
            other => return Err(Error::Unknown(other.to_string())),
        })
    }

    /// The event name as Claude Code spells it (used in stored records and answers).
    pub fn name(self) -> &'static str {
        match self {
            Event::UserPromptSubmit => "UserPromptSubmit",
            Event::PreToolUse => "PreToolUse",
            Event::PostToolUse => "PostToolUse",
            Event::Stop => "Stop",
            Event::PreCompact => "PreCompact",
            Event::PostCompact => "PostCompact",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_agent_round_trips_and_native_event_names_map() {
        for a in Agent::ALL {
            assert_eq!(Agent::parse(a.arg()).unwrap(), a);
        }
        assert!(Agent::parse("vim").is_err());
        assert_eq!(Event::parse(Agent::Gemini, "AfterTool").unwrap(), Event::PostToolUse);
        assert_eq!(Event::parse(Agent::Gemini, "PreCompress").unwrap(), Event::PreCompact);
        assert_eq!(Event::parse(Agent::Cursor, "afterFileEdit").unwrap(), Event::PostToolUse);
        assert_eq!(Event::parse(Agent::Opencode, "session.idle").unwrap(), Event::Stop);
        assert_eq!(Event::parse(Agent::Qwen, "PostToolUse").unwrap(), Event::PostToolUse);
        assert!(Event::parse(Agent::Claude, "AfterTool").is_err(), "Gemini's names are Gemini's only");
    }
}
