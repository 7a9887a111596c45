//! Whether the cache broke between two consecutive requests, and why: the reported usage says
//! whether (and how many cached tokens were lost); `explain_cache_break`'s machinery
//! (`transcript::explain_session` on the pair) says why. Without usage, the explanation's own
//! estimate decides.
//!
//! Transcripts that record only messages (most Claude Code versions, Codex rollouts) do not show
//! the system prompt or tools: there the cause comes from what they do record (a compaction
//! marker, the model ids, a pause longer than the rules' TTL), in explain_cache_break's ranking
//! order and words, and a break they cannot explain is named as such, never guessed.

use super::price::Price;
use crate::prompt::cause::CauseKind;
use crate::prompt::request::{Provider, Usage};
use crate::prompt::rules::Rules;
use crate::transcript::{Reconstruction, Transcript, explain_session};
use serde::Serialize;

/// One cache break.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BreakRecord {
    /// The main cause (`CauseKind` in snake case, or `unexplained`).
    pub kind: String,
    /// The evidence in one sentence.
    pub summary: String,
    /// How to avoid it.
    pub fix: String,
    /// Cached tokens lost.
    pub tokens: u64,
    /// Estimated USD lost.
    pub usd: f64,
    /// `reported` (from the provider's usage) or `estimated` (from the requests).
    pub evidence: &'static str,
    /// UTC date.
    pub date: String,
    /// Transcript line of the later request.
    pub line: usize,
}

/// Kind name of a break the transcript cannot explain.
pub const UNEXPLAINED: &str = "unexplained";
/// Kind name of a break where less than a third of the cached prompt was read again, for a reason
/// the transcript does not show: something early in the prompt changed.
pub const CONVERSATION_REWRITTEN: &str = "conversation_rewritten";

/// The break between turns `i - 1` and `i`, if the cache broke there.
pub fn between(t: &Transcript, i: usize, rules: &Rules, price: Price, date: String) -> Option<BreakRecord> {
    let (a, b) = (t.turns.get(i.checked_sub(1)?)?, t.turns.get(i)?);
    let pr = rules.provider(t.provider);
    let ttl_ms = pr.ttl_secs(&pr.ttl_default) as i64 * 1000;
    let gap_ms = match (a.timestamp_ms, b.timestamp_ms) {
        (Some(x), Some(y)) if y >= x => Some(y - x),
        _ => None,
    };
    let reported = reported_loss(t.provider, a.usage.as_ref(), b.usage.as_ref());
    match reported {
        Some(0) => return None,
        None if !(a.model != b.model || b.after_compaction || gap_ms.is_some_and(|g| g > ttl_ms)) => return None,
        _ => {}
    }
    // Rebuilding both requests costs a pass over the whole context. With the usage reported and
    // only the messages recorded, the requests differ by appended messages alone (the readers
    // build each from the one before), so explaining them could only find what the compaction
    // marker, the model ids and the timestamps say below: skip that pass.
    let recorded =
        |x: &crate::transcript::Turn| matches!(x.reconstruction, Reconstruction::Exact | Reconstruction::Partial);
    let explained = if reported.is_none() || recorded(a) || recorded(b) {
        explain_session(t, rules, Some((i - 1, i)))
            .ok()
            .and_then(|r| r.breaks.into_iter().next())
            .and_then(|tb| tb.explanation)
    } else {
        None
    };
    let tokens = match (reported, &explained) {
        (Some(lost), _) => lost,
        (None, Some(e)) if e.broke => e.tokens.lost,
        _ => return None,
    };
    let min = pr.family(&b.model).min_cacheable_tokens;
    let cause = explained.as_ref().and_then(|e| {
        e.causes
            .iter()
            // Messages-only requests look short: "below the minimum" contradicts a provider that cached.
            .find(|c| !(reported.is_some() && c.kind == CauseKind::PrefixBelowMinimum && tokens >= min))
            .map(|c| (kind_name(c.kind), c.summary.clone(), c.fix.clone()))
    });
    let (kind, summary, fix) = match cause {
        Some(c) => c,
        None if b.after_compaction => (
            kind_name(CauseKind::Compacted),
            "the agent compacted the conversation: the history was replaced by a summary".into(),
            "Compaction always rewrites the prefix; let it trigger less often, or clear old tool results first with a cache-aware policy (compact_preview).".into(),
        ),
        None if a.model != b.model => (
            kind_name(CauseKind::ModelChanged),
            format!("model changed: {} -> {}", a.model, b.model),
            "Keep one model per conversation; send side tasks for another model as separate requests instead of switching mid-session.".into(),
        ),
        None if gap_ms.is_some_and(|g| g > ttl_ms) => (
            kind_name(CauseKind::IdleGapExceeded),
            format!(
                "{}s passed between the requests, more than the {} cache TTL ({}s)",
                gap_ms.unwrap_or(0) / 1000,
                pr.ttl_default,
                ttl_ms / 1000
            ),
            "Use the 1h TTL on the long-lived prefix when pauses exceed 5 minutes, or send a cheap request before the TTL runs out.".into(),
        ),
        None => what_is_known(b.usage.as_ref().and_then(|u| u.cache_read_tokens).unwrap_or(0), tokens, gap_ms),
    };
    Some(BreakRecord {
        kind,
        summary,
        fix,
        tokens,
        usd: price.lost(tokens),
        evidence: if reported.is_some() { "reported" } else { "estimated" },
        date,
        line: b.line,
    })
}

/// A break the transcript cannot explain, said with what it does show: how much of the prompt
/// the provider still read (the start of a prompt is its system prompt and tools, then the
/// conversation from its first message), and the time since the previous request.
fn what_is_known(kept: u64, lost: u64, gap_ms: Option<i64>) -> (String, String, String) {
    let gap = gap_ms.map(|g| format!(", {}s after the previous request", g / 1000)).unwrap_or_default();
    let capture = "Capture the two requests (a logging proxy, or a Claude Code version that logs requests) and run `refrain explain` on them";
    match kept {
        // Less than a third kept: the change sits early in the prompt (system prompt, tools or
        // the first messages), not in the last turns.
        k if k * 3 < k + lost => (
            CONVERSATION_REWRITTEN.to_string(),
            format!(
                "only the first {kept} of {} cached tokens were read: most of the conversation was written again{gap}; the transcript does not record what changed that early in the prompt",
                kept + lost
            ),
            format!(
                "{capture}; look for what changes early in each request (the system prompt, a reminder in the first message) and keep it stable."
            ),
        ),
        _ => (
            UNEXPLAINED.to_string(),
            format!(
                "the provider read {kept} cached tokens where the previous request left {}{gap}; the transcript does not record what changed (it omits the system prompt and tools)",
                kept + lost
            ),
            format!("{capture}."),
        ),
    }
}

/// Cached tokens lost according to the reported usage: Some(0) when it shows no break, None
/// when either request has no usage.
fn reported_loss(p: Provider, a: Option<&Usage>, b: Option<&Usage>) -> Option<u64> {
    let (a, b) = (a?, b?);
    let read = b.cache_read_tokens?;
    let prev = match p {
        Provider::Anthropic => a.cache_read_tokens.unwrap_or(0) + a.cache_creation_tokens.unwrap_or(0),
        _ => a.cache_read_tokens.unwrap_or(0),
    };
    // Same 5% tolerance as the session report: small drops are counting noise.
    Some(if prev > 0 && read + read / 20 < prev { prev - read } else { 0 })
}

/// A cause kind's name as reports print it.
pub fn kind_name(k: CauseKind) -> String {
    serde_json::to_value(k).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_else(|| format!("{k:?}"))
}

/// What a cause kind means, for the report's tables and charts (at most 44 characters, so a
/// chart label is never cut; the example and fix beside it say more).
pub fn label(kind: &str) -> &'static str {
    match kind {
        "model_changed" => "the model changed mid-session",
        "tool_added" => "a tool was added mid-session",
        "tool_removed" => "a tool was removed mid-session",
        "tools_reordered" => "tools were reordered",
        "tool_schema_edited" => "a tool's definition changed",
        "system_edited" => "the system prompt changed (a timestamp?)",
        "message_mutated" => "an earlier message was edited",
        "messages_removed" => "earlier messages were dropped",
        "thinking_changed" => "thinking settings changed",
        "tool_choice_changed" => "tool_choice changed",
        "param_changed" => "a request parameter that resets the cache",
        "unknown_field_changed" => "a request field of unknown effect changed",
        "images_changed" => "images in the cached part changed",
        "breakpoints_moved" => "cache breakpoints moved out of reach",
        "ttl_changed" => "a breakpoint's TTL changed",
        "idle_gap_exceeded" => "a pause longer than the cache TTL",
        "prefix_below_minimum" => "prompt below the minimum cacheable size",
        "compacted" => "the agent compacted the conversation",
        "conversation_rewritten" => "most of the conversation written again",
        _ => "not explained by what the transcript records",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_break_nothing_explains_says_how_much_was_still_read_and_when() {
        let (kind, summary, _) = what_is_known(15_000, 110_000, Some(90_000));
        assert_eq!(kind, CONVERSATION_REWRITTEN);
        assert!(summary.contains("only the first 15000 of 125000") && summary.contains("90s after"), "{summary}");
        let (kind, summary, fix) = what_is_known(80_000, 20_000, None);
        assert_eq!(kind, UNEXPLAINED);
        assert!(summary.contains("read 80000 cached tokens where the previous request left 100000"), "{summary}");
        assert!(fix.contains("refrain explain"), "{fix}");
        assert!(label(CONVERSATION_REWRITTEN).len() <= 44);
    }
}
