//! The entry points tools and commands share: explain a request pair or a transcript, and
//! preview a compaction of messages or a transcript. Input validation lives here so the MCP
//! tool and the CLI give the same answers and the same error sentences.

use super::session::{SessionReport, explain_session, last_pair};
use super::{Access, Transcript};
use crate::prompt::compact::{Policy, ReplacementLog};
use crate::prompt::compact_cost::{CompactionPlan, preview, resolve_policy};
use crate::prompt::explain::{CacheBreak, explain};
use crate::prompt::request::{Provider, Request};
use crate::prompt::rules::Rules;
use serde::Serialize;
use serde_json::Value;
use std::path::PathBuf;

/// Errors the caller can fix (bad input, forbidden path, unknown preset...).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad or missing arguments.
    #[error("{0}")]
    Input(String),
    /// A request or policy problem.
    #[error(transparent)]
    Prompt(#[from] crate::prompt::Error),
    /// A transcript problem.
    #[error(transparent)]
    Transcript(#[from] super::Error),
}

/// What to explain.
#[derive(Debug, Clone, Default)]
pub struct ExplainInput {
    /// The earlier request body (or `{body, timestamp, usage}` envelope).
    pub before: Option<Value>,
    /// The later request body.
    pub after: Option<Value>,
    /// Force a provider (`anthropic`, `openai`, `openai_responses`).
    pub provider: Option<String>,
    /// A transcript instead of two requests.
    pub transcript: Option<PathBuf>,
    /// Earlier turn index in the transcript.
    pub from_turn: Option<usize>,
    /// Later turn index in the transcript.
    pub to_turn: Option<usize>,
    /// Explain only the last two requests of the transcript.
    pub last_two: bool,
}

/// The answer: one pair, or a session.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum ExplainReport {
    /// Two requests.
    Pair(Box<CacheBreak>),
    /// A transcript.
    Session(Box<SessionReport>),
}

/// Explains two requests or a transcript.
pub fn run_explain(input: &ExplainInput, rules: &Rules, access: &Access) -> Result<ExplainReport, Error> {
    let provider =
        match input.provider.as_deref() {
            None => None,
            Some(p) => Some(Provider::from_name(p).ok_or_else(|| {
                Error::Input(format!("unknown provider {p}: use anthropic, openai or openai_responses"))
            })?),
        };
    match (&input.before, &input.after, &input.transcript) {
        (Some(a), Some(b), None) => {
            let ra = Request::parse(a, provider)?;
            let rb = Request::parse(b, provider.or(Some(ra.provider)))?;
            Ok(ExplainReport::Pair(Box::new(explain(&ra, &rb, rules))))
        }
        (None, None, Some(path)) => {
            let t = Transcript::open(path, access)?;
            let pair = match (input.from_turn, input.to_turn) {
                (Some(a), Some(b)) => Some((a, b)),
                (Some(a), None) => Some((a, a + 1)),
                (None, Some(b)) => Some((b.saturating_sub(1), b)),
                (None, None) if input.last_two => Some(last_pair(&t).ok_or_else(|| {
                    Error::Input(format!("the transcript has {} requests: two are needed", t.turns.len()))
                })?),
                (None, None) => None,
            };
            Ok(ExplainReport::Session(Box::new(explain_session(&t, rules, pair)?)))
        }
        _ => Err(Error::Input(
            "give either `before` and `after` (two request bodies as JSON objects) or `transcript` (a path), not both"
                .into(),
        )),
    }
}

/// What to compact.
#[derive(Debug, Clone, Default)]
pub struct CompactInput {
    /// Anthropic-shaped messages.
    pub messages: Option<Vec<Value>>,
    /// Or a transcript path (its latest conversation segment is used).
    pub transcript: Option<PathBuf>,
    /// A preset name from the rules table.
    pub preset: Option<String>,
    /// Policy fields overriding the preset (a JSON object).
    pub policy: Option<Value>,
    /// The log of an earlier compaction.
    pub log: Option<ReplacementLog>,
    /// Return the compacted messages.
    pub include_messages: bool,
    /// Model id for prices (default: the transcript's, else a Claude Sonnet price).
    pub model: Option<String>,
}

/// Previews a compaction.
pub fn run_compact(input: &CompactInput, rules: &Rules, access: &Access) -> Result<CompactionPlan, Error> {
    let policy: Policy = if input.preset.is_none() && input.policy.is_none() {
        resolve_policy(rules, Some("anthropic_clear_tool_uses"), None)?
    } else {
        resolve_policy(rules, input.preset.as_deref(), input.policy.as_ref())?
    };
    let (messages, model) = match (&input.messages, &input.transcript) {
        (Some(m), None) => {
            if let Some(i) = m.iter().position(|x| x.get("role").and_then(Value::as_str).is_none()) {
                return Err(Error::Input(format!(
                    "messages[{i}] is not a message: each must be an object with a \"role\" and its \"content\""
                )));
            }
            (m.clone(), input.model.clone().unwrap_or_default())
        }
        (None, Some(path)) => {
            let t = Transcript::open(path, access)?;
            let model = input.model.clone().unwrap_or_else(|| t.model().to_string());
            (t.into_conversation(), model)
        }
        _ => {
            return Err(Error::Input(
                "give either `messages` (an array of Anthropic-style messages) or `transcript` (a path), not both"
                    .into(),
            ));
        }
    };
    Ok(preview(messages, &policy, input.log.as_ref(), &model, rules, input.include_messages)?)
}
