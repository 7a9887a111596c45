//! Transcript readers: Claude Code session files and Codex rollouts, turned into per-request
//! reconstructions that `prompt::explain` and `prompt::compact` can work on.
//!
//! Bad lines are skipped and counted, never fatal. Paths are checked by `access` before reading.
//! Plain Rust: no rmcp types, no store.

pub mod access;
pub mod analyze;
mod claude;
mod codex;
pub mod lines;
pub mod session;
mod stream;

pub use access::Access;
pub use codex::part_texts;
pub use session::{SessionReport, explain_session};
pub use stream::Stream;

use crate::prompt::request::{Provider, Request, Usage};
use serde::Serialize;
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Errors reading transcripts.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The path is outside the allowed directories.
    #[error(
        "transcript path {path} is outside the allowed directories ({allowed}); move it there or add its directory to prompt.transcript_roots in your own refrain config (a project's refrain.toml cannot)"
    )]
    Forbidden {
        /// The path as asked for.
        path: PathBuf,
        /// The allowed roots.
        allowed: String,
    },
    /// The file could not be read.
    #[error("cannot read transcript {path}: {source}")]
    Read {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file holds no line refrain recognises.
    #[error("{path} is not a Claude Code transcript or Codex rollout ({lines} lines, {bad} unreadable)")]
    Unrecognised {
        /// The path.
        path: PathBuf,
        /// Lines read.
        lines: usize,
        /// Lines that were not JSON.
        bad: usize,
    },
    /// A turn index is out of range.
    #[error("turn {turn} does not exist: the transcript has {count} requests (0..{count})")]
    NoSuchTurn {
        /// Asked for.
        turn: usize,
        /// Available.
        count: usize,
    },
    /// The path is not a regular file (a FIFO or device would block or never end).
    #[error("transcript {0} is not a regular file; give the path of a .jsonl transcript")]
    NotAFile(PathBuf),
    /// Parsing the file would take more than the request's memory budget.
    #[error(
        "transcript {path} has {bytes} bytes, more than this request may parse; give a shorter transcript or raise server.request_memory_bytes"
    )]
    TooLarge {
        /// The path.
        path: PathBuf,
        /// Its size.
        bytes: u64,
    },
    /// A turn has no request body to compare (usage-only line).
    #[error("turn {0} has no request content in the transcript (only usage figures)")]
    NoBody(usize),
}

/// Which agent wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// Claude Code session JSONL.
    ClaudeCode,
    /// Codex rollout JSONL.
    Codex,
}

/// How a turn's request was rebuilt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reconstruction {
    /// From the agent's own request log (system, tools, messages, parameters, breakpoints).
    Exact,
    /// From the request log, with some messages filled in from the conversation.
    Partial,
    /// Messages only (the transcript does not hold system prompt or tools); for Claude Code a
    /// breakpoint on the last block is assumed, as Claude Code places it.
    MessagesOnly,
    /// Usage figures only.
    UsageOnly,
}

/// The messages a request sent.
#[derive(Debug, Clone)]
pub enum Messages {
    /// The first `upto` messages of conversation segment `epoch`.
    Segment {
        /// Segment (a compaction starts a new one).
        epoch: usize,
        /// How many messages.
        upto: usize,
    },
    /// A complete body (exact reconstructions).
    Body(Arc<Value>),
    /// None known.
    None,
}

/// One model request of the session.
#[derive(Debug, Clone)]
pub struct Turn {
    /// 1-based line of the transcript where it starts.
    pub line: usize,
    /// When it was sent.
    pub timestamp_ms: Option<i64>,
    /// Model id.
    pub model: String,
    /// Reported usage.
    pub usage: Option<Usage>,
    /// What was sent.
    pub messages: Messages,
    /// How it was rebuilt.
    pub reconstruction: Reconstruction,
    /// The first request after a compaction.
    pub after_compaction: bool,
    /// Request id in the agent's log, when it has one.
    pub request_id: Option<String>,
}

/// A compaction found in the transcript.
#[derive(Debug, Clone, Serialize)]
pub struct CompactionMark {
    /// 1-based line.
    pub line: usize,
    /// `manual` / `auto` when recorded.
    pub trigger: Option<String>,
    /// Tokens before, when recorded.
    pub pre_tokens: Option<u64>,
}

/// A parsed transcript.
#[derive(Debug, Clone)]
pub struct Transcript {
    /// Which agent wrote it.
    pub format: Format,
    /// Request format of its turns.
    pub provider: Provider,
    /// Lines read.
    pub lines: usize,
    /// Lines that were not JSON (skipped).
    pub bad_lines: usize,
    /// Main-chain model requests in order.
    pub turns: Vec<Turn>,
    /// Compactions.
    pub compactions: Vec<CompactionMark>,
    /// Messages on side chains (subagents), not part of the main conversation.
    pub sidechain_messages: usize,
    /// Conversation segments (Anthropic-shaped messages; a compaction starts a new segment).
    pub segments: Vec<Vec<Value>>,
    /// System prompt / instructions, when the transcript records it.
    pub system: Option<Value>,
}

/// Bytes of parsed JSON and rebuilt requests per byte of transcript text, roughly.
const PARSED_PER_BYTE: usize = 4;

impl Transcript {
    /// Nothing read yet: no turns, and one open segment for the first messages.
    fn empty(format: Format, provider: Provider) -> Transcript {
        Transcript {
            format,
            provider,
            lines: 0,
            bad_lines: 0,
            turns: Vec::new(),
            compactions: Vec::new(),
            sidechain_messages: 0,
            segments: vec![vec![]],
            system: None,
        }
    }

    /// Reads a transcript file after checking it against `access`, line by line.
    pub fn open(path: &Path, access: &Access) -> Result<Transcript, Error> {
        let path = access.check(path)?;
        let meta = std::fs::metadata(&path).map_err(|source| Error::Read { path: path.clone(), source })?;
        if !meta.is_file() {
            return Err(Error::NotAFile(path));
        }
        // The conversation read takes a few times the text: charge that before reading a byte.
        if !crate::budget::take((meta.len() as usize).saturating_mul(PARSED_PER_BYTE), "parsed transcript") {
            return Err(Error::TooLarge { path, bytes: meta.len() });
        }
        let file = std::fs::File::open(&path).map_err(|source| Error::Read { path: path.clone(), source })?;
        let mut stream = Stream::new();
        for line in std::io::BufRead::lines(std::io::BufReader::new(file)) {
            let line = line.map_err(|source| Error::Read { path: path.clone(), source })?;
            stream.feed_line(&line);
        }
        let (lines, bad) = (stream.lines, stream.bad_lines);
        stream.finish().ok_or(Error::Unrecognised { path, lines, bad })
    }

    /// Parses JSONL text; None when no line is recognised.
    pub fn parse(text: &str) -> Option<Transcript> {
        let mut stream = Stream::new();
        for l in text.lines() {
            stream.feed_line(l);
        }
        stream.finish()
    }

    /// The latest conversation as Anthropic-shaped messages (for compaction): the last segment.
    pub fn conversation(&self) -> Vec<Value> {
        let last = self.segments.last().map(Vec::as_slice).unwrap_or(&[]);
        match self.format {
            Format::Codex => codex::to_messages(last),
            Format::ClaudeCode => last.to_vec(),
        }
    }

    /// Like `conversation`, without copying the messages.
    pub fn into_conversation(mut self) -> Vec<Value> {
        let last = self.segments.pop().unwrap_or_default();
        match self.format {
            Format::Codex => codex::to_messages(&last),
            Format::ClaudeCode => last,
        }
    }

    /// The model of the latest turn ("" when unknown).
    pub fn model(&self) -> &str {
        self.turns.iter().rev().map(|t| t.model.as_str()).find(|m| !m.is_empty()).unwrap_or("")
    }

    /// The normalised request of turn `i`.
    pub fn request(&self, i: usize) -> Result<Request, Error> {
        let turn = self.turns.get(i).ok_or(Error::NoSuchTurn { turn: i, count: self.turns.len() })?;
        let body = match &turn.messages {
            Messages::Body(b) => b.as_ref().clone(),
            Messages::Segment { epoch, upto } => {
                let msgs = self.segments.get(*epoch).map(|s| &s[..(*upto).min(s.len())]).unwrap_or(&[]);
                let mut o = Map::new();
                o.insert("model".into(), Value::String(turn.model.clone()));
                match self.provider {
                    Provider::OpenAiResponses => {
                        if let Some(s) = &self.system {
                            o.insert("instructions".into(), s.clone());
                        }
                        o.insert("input".into(), Value::Array(msgs.to_vec()));
                    }
                    _ => {
                        // Claude Code puts its moving breakpoint on the last block of every request;
                        // the transcript does not record it, so assume that layout.
                        let mut msgs = msgs.to_vec();
                        if let Some(last) = msgs
                            .last_mut()
                            .and_then(|m| m.get_mut("content"))
                            .and_then(Value::as_array_mut)
                            .and_then(|c| c.last_mut())
                            .and_then(Value::as_object_mut)
                        {
                            last.insert("cache_control".into(), serde_json::json!({"type": "ephemeral"}));
                        }
                        o.insert("messages".into(), Value::Array(msgs));
                    }
                }
                Value::Object(o)
            }
            Messages::None => return Err(Error::NoBody(i)),
        };
        let mut req = Request::parse(&body, Some(self.provider)).map_err(|_| Error::NoBody(i))?;
        req.timestamp_ms = turn.timestamp_ms;
        req.usage = turn.usage.clone();
        Ok(req)
    }
}

/// Pushes a message, merging it into the previous one when the role repeats (as the API sees it).
pub(crate) fn push_merged(msgs: &mut Vec<Value>, role: &str, mut blocks: Vec<Value>) {
    if let Some(last) = msgs.last_mut()
        && last.get("role").and_then(Value::as_str) == Some(role)
        && let Some(arr) = last.get_mut("content").and_then(Value::as_array_mut)
    {
        arr.append(&mut blocks);
        return;
    }
    msgs.push(serde_json::json!({"role": role, "content": blocks}));
}

/// Content as a list of blocks (a string becomes one text block).
pub(crate) fn as_blocks(content: Option<&Value>) -> Vec<Value> {
    match content {
        Some(Value::Array(a)) => a.clone(),
        Some(Value::String(s)) => vec![serde_json::json!({"type": "text", "text": s})],
        _ => vec![],
    }
}

pub(crate) fn ts(v: &Value) -> Option<i64> {
    v.get("timestamp").and_then(Value::as_str).and_then(crate::prompt::time::parse_rfc3339_ms)
}

#[cfg(test)]
mod tests;
