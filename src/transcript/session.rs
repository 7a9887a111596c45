//! Cache breaks over a whole session: every consecutive pair of requests explained, the breaks
//! kept, plus the session's cache efficiency from the reported usage.

use super::{Error, Reconstruction, Transcript};
use crate::prompt::cause::{Cause, CauseKind};
use crate::prompt::explain::{CacheBreak, explain};
use crate::prompt::request::{Level, Provider};
use crate::prompt::rules::Rules;
use serde::Serialize;

/// One break between two turns.
#[derive(Debug, Clone, Serialize)]
pub struct TurnBreak {
    /// Earlier turn index.
    pub from_turn: usize,
    /// Later turn index.
    pub to_turn: usize,
    /// Transcript line of the later turn.
    pub line: usize,
    /// How the later request was rebuilt.
    pub reconstruction: Reconstruction,
    /// The explanation (None for usage-only turns: see `reported_note`).
    pub explanation: Option<CacheBreak>,
    /// What the reported usage says about this pair.
    pub reported_note: Option<String>,
}

/// Input-token totals from reported usage.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Efficiency {
    /// Turns with usage.
    pub turns_with_usage: usize,
    /// Prompt tokens in total (uncached + cache read + cache write).
    pub prompt_tokens: u64,
    /// Tokens read from the cache.
    pub cache_read_tokens: u64,
    /// Tokens written to the cache.
    pub cache_write_tokens: u64,
    /// Share of prompt tokens read from the cache.
    pub cache_read_share: f64,
}

/// The session report.
#[derive(Debug, Clone, Serialize)]
pub struct SessionReport {
    /// `claude_code` or `codex`.
    pub format: super::Format,
    /// Lines read.
    pub lines: usize,
    /// Lines skipped as unreadable.
    pub bad_lines: usize,
    /// Requests found on the main chain.
    pub turns: usize,
    /// How the turns were rebuilt (counts per kind).
    pub reconstruction: std::collections::BTreeMap<String, usize>,
    /// Compactions found.
    pub compactions: usize,
    /// Side-chain (subagent) messages, not analysed.
    pub sidechain_messages: usize,
    /// Every break (or the requested pair).
    pub breaks: Vec<TurnBreak>,
    /// Cache efficiency from reported usage.
    pub efficiency: Efficiency,
}

/// Explains the pair `(from, to)`, or every consecutive pair when `pair` is None (keeping breaks).
pub fn explain_session(t: &Transcript, rules: &Rules, pair: Option<(usize, usize)>) -> Result<SessionReport, Error> {
    let mut breaks = Vec::new();
    match pair {
        Some((a, b)) => breaks.push(explain_pair(t, rules, a, b, true)?),
        None => {
            for i in 1..t.turns.len() {
                // Each pair rebuilds two whole requests: a long session is quadratic work.
                if !crate::budget::on_time("session cache-break report") {
                    break;
                }
                let br = explain_pair(t, rules, i - 1, i, false)?;
                let broke = br.explanation.as_ref().is_some_and(|e| e.broke) || br.reported_note.is_some();
                if broke {
                    breaks.push(br);
                }
            }
        }
    }
    let mut reconstruction = std::collections::BTreeMap::new();
    for turn in &t.turns {
        *reconstruction.entry(format!("{:?}", turn.reconstruction).to_lowercase()).or_insert(0) += 1;
    }
    Ok(SessionReport {
        format: t.format,
        lines: t.lines,
        bad_lines: t.bad_lines,
        turns: t.turns.len(),
        reconstruction,
        compactions: t.compactions.len(),
        sidechain_messages: t.sidechain_messages,
        breaks,
        efficiency: efficiency(t),
    })
}

/// The default pair: the last two requests.
pub fn last_pair(t: &Transcript) -> Option<(usize, usize)> {
    (t.turns.len() >= 2).then(|| (t.turns.len() - 2, t.turns.len() - 1))
}

fn explain_pair(t: &Transcript, rules: &Rules, a: usize, b: usize, always: bool) -> Result<TurnBreak, Error> {
    let tb = t.turns.get(b).ok_or(Error::NoSuchTurn { turn: b, count: t.turns.len() })?;
    let ta = t.turns.get(a).ok_or(Error::NoSuchTurn { turn: a, count: t.turns.len() })?;
    let reported_note = reported_break(t.provider, ta.usage.as_ref(), tb.usage.as_ref());
    let explanation = match (t.request(a), t.request(b)) {
        (Ok(ra), Ok(rb)) => {
            let mut e = explain(&ra, &rb, rules);
            if tb.after_compaction {
                let mark = t.compactions.iter().rev().find(|c| c.line < tb.line);
                let detail = mark
                    .map(|m| {
                        format!(
                            " at line {} (trigger {}, {} tokens before)",
                            m.line,
                            m.trigger.as_deref().unwrap_or("unknown"),
                            m.pre_tokens.map(|p| p.to_string()).unwrap_or("?".into())
                        )
                    })
                    .unwrap_or_default();
                let mut c = Cause::new(CauseKind::Compacted, Level::Messages, None, format!("the agent compacted the conversation{detail}: the history was replaced by a summary"),
                    "Compaction always rewrites the prefix; let it trigger less often (higher threshold) or clear old tool results first with a cache-aware policy (compact_preview).".into());
                c.tokens_lost = e.tokens.lost;
                c.rank = 0;
                e.causes.insert(0, c);
                for (i, c) in e.causes.iter_mut().enumerate() {
                    c.rank = i + 1;
                }
            }
            Some(e)
        }
        (Err(Error::NoBody(_)), _) | (_, Err(Error::NoBody(_)))
            if !always || reported_note.is_some() || ta.usage.is_some() =>
        {
            None
        }
        (Err(e), _) | (_, Err(e)) => return Err(e),
    };
    Ok(TurnBreak {
        from_turn: a,
        to_turn: b,
        line: tb.line,
        reconstruction: tb.reconstruction,
        explanation,
        reported_note,
    })
}

fn reported_break(
    p: Provider,
    a: Option<&crate::prompt::request::Usage>,
    b: Option<&crate::prompt::request::Usage>,
) -> Option<String> {
    let (a, b) = (a?, b?);
    let read = b.cache_read_tokens?;
    let prev = match p {
        Provider::Anthropic => a.cache_read_tokens.unwrap_or(0) + a.cache_creation_tokens.unwrap_or(0),
        _ => a.cache_read_tokens.unwrap_or(0),
    };
    (prev > 0 && read + read / 20 < prev).then(|| {
        format!("reported usage shows a break: the previous request had {prev} tokens cached, this one read {read}")
    })
}

fn efficiency(t: &Transcript) -> Efficiency {
    let mut e = Efficiency::default();
    for u in t.turns.iter().filter_map(|x| x.usage.as_ref()) {
        e.turns_with_usage += 1;
        let read = u.cache_read_tokens.unwrap_or(0);
        let write = u.cache_creation_tokens.unwrap_or(0);
        e.cache_read_tokens += read;
        e.cache_write_tokens += write;
        e.prompt_tokens += u.prompt_total(t.provider).unwrap_or(read + write);
    }
    if e.prompt_tokens > 0 {
        e.cache_read_share = e.cache_read_tokens as f64 / e.prompt_tokens as f64;
    }
    e
}
