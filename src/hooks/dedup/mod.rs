//! Read dedup: when an agent reads again what it already read in its current context window and
//! the file shows the same, the post-tool hook replaces the output with a short note; when only
//! a little changed, with the diff against the earlier read.
//!
//! What the model still has in context comes from the agent's own session file (or refrain's
//! journal for agents without one), read fresh at every call: reads before a compaction, on a
//! rewound branch, before the prompt shrank, or buried under enough newer tool output for the
//! agent to clear them never count. Only the same file, the same tool and the same range is
//! compared. The call itself has already run, so nothing that depends on it having run (Claude
//! Code's read-before-edit check) is affected: refrain replaces output, never denies a call.

pub mod note;
pub mod view;
pub mod window;

mod claude;
mod codex;
pub mod gemini;
mod qwen;
mod replay;

pub use replay::{Replayed, replay};

use super::journal::{self, Journal};
use super::{Agent, Payload};
use crate::prompt::estimate_tokens;
use serde_json::Value;
use std::io::{BufRead, BufReader};
use view::ReadKey;
use window::Seen;

/// Session files larger than this are not read by a hook (it must stay fast).
const MAX_TRANSCRIPT_BYTES: u64 = 64 * 1024 * 1024;
/// opencode clears tool outputs older than its newest 40,000 tokens of them; refrain stays inside.
const OPENCODE_BUDGET: u64 = 30_000;

/// A repeated read answered by a note.
#[derive(Debug, Clone, PartialEq)]
pub struct Dedup {
    /// What the model receives instead of the output.
    pub note: String,
    /// The file read.
    pub path: String,
    /// Estimated tokens the note saves against the full output.
    pub tokens_saved: u64,
    /// True when the note is a diff (the file changed a little).
    pub changed: bool,
}

/// The note for this finished call, or None when it is not a repeated read still in context.
pub fn decide(agent: Agent, p: &Payload, journal: Option<&Journal>) -> Option<Dedup> {
    let tool = p.tool_name.as_deref()?;
    let cwd = p.cwd.as_deref().unwrap_or_default();
    let key = view::key(agent, tool, p.tool_input.as_ref()?, cwd)?;
    let now = view::payload_text(agent, key.via, p.tool_response.as_ref()?)?;
    match agent {
        Agent::Opencode => {
            let seen = journal?.seen(agent, Some(OPENCODE_BUDGET));
            decide_with(&key, &journal::stored_text(&now)?, &seen)
        }
        Agent::Cursor => None,
        _ => decide_with(&key, &now, &transcript_seen(agent, p)?),
    }
}

/// The note for a read of `key` showing `now`, given the reads in context.
pub fn decide_with(key: &ReadKey, now: &str, seen: &[Seen]) -> Option<Dedup> {
    let earlier = seen.iter().rev().find(|s| &s.key == key && s.text.is_some())?;
    let before = earlier.text.as_deref()?;
    let (note, changed) = if before == now {
        (note::unchanged(key, earlier.message, now), false)
    } else {
        (note::changed(key, earlier.message, before, now)?, true)
    };
    let tokens_saved = estimate_tokens(now).checked_sub(estimate_tokens(&note)).filter(|s| *s > 0)?;
    Some(Dedup { note, path: key.path.clone(), tokens_saved, changed })
}

/// The reads in context according to the agent's session file.
fn transcript_seen(agent: Agent, p: &Payload) -> Option<Vec<Seen>> {
    let lines = read_lines(p.transcript_path.as_deref()?)?;
    Some(seen_in(
        agent,
        &lines,
        p.tool_use_id.as_deref(),
        p.tool_call_id.as_deref(),
        p.cwd.as_deref().unwrap_or_default(),
    ))
}

/// The reads in context in a session file's lines, leaving out the call being answered.
fn seen_in(agent: Agent, lines: &[Value], use_id: Option<&str>, call_id: Option<&str>, cwd: &str) -> Vec<Seen> {
    match agent {
        Agent::Claude => claude::seen(lines, use_id, cwd),
        Agent::Codex => codex::seen(lines, use_id, cwd),
        Agent::Gemini => gemini::seen(lines, cwd),
        Agent::Qwen => qwen::seen(lines, call_id, cwd),
        Agent::Opencode | Agent::Cursor => Vec::new(),
    }
}

/// The JSON lines of a session file (unparseable lines skipped); None when absent or too large.
pub fn read_lines(path: &str) -> Option<Vec<Value>> {
    let file = std::fs::File::open(path).ok()?;
    if file.metadata().ok()?.len() > MAX_TRANSCRIPT_BYTES {
        return None;
    }
    Some(BufReader::new(file).lines().map_while(Result::ok).filter_map(|l| serde_json::from_str(&l).ok()).collect())
}
