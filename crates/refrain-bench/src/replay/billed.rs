//! What a replayed session's ledger lines cost and save as the provider bills them: every token
//! in an agent's context is sent again with every later request, until a compaction drops it.
//!
//! The ledger counts a note's removed tokens and an injected plan's added tokens once, and
//! refrain's tool list once per request. But a tool result that a note replaced would have been
//! sent with every request after it, and so is an injected plan: both sides are carried, as the
//! tool list is. So each line is also weighed by the requests that carried it (from the request
//! its hook answered up to the end of the session, or the first compaction after it), and priced
//! as prompt caching bills it: written once (Anthropic's cache-write price, OpenAI's plain input
//! price), read from the cache by every later request. The tool list is priced the same way over
//! all the session's requests. Cache breaks (an idle gap past the cache's lifetime, a changed
//! prefix) make every carried token dearer on both sides; they are not modelled here.

use refrain::prompt::request::Provider;
use refrain::prompt::rules::Rules;
use refrain::report::price::Price;
use serde::Serialize;

/// One hook call of a session, as far as the ledger saw it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fired {
    /// Lines of the session file on disk when it fired.
    pub upto: usize,
    /// Model requests the ledger counted for it.
    pub requests: u64,
    /// Ledger lines it wrote.
    pub lines: u64,
}

/// A ledger line's two sides.
#[derive(Debug, Clone, Copy)]
pub struct Sides {
    /// Tokens removed.
    pub removed: u64,
    /// Tokens added.
    pub added: u64,
}

/// A session's figures weighed by the requests that carried them.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Billed {
    /// Tokens removed times the requests that would have carried them.
    pub removed: u64,
    /// Tokens added times the requests that carried them.
    pub added: u64,
    /// The tool list over every request (as the ledger counts it).
    pub fixed: u64,
    /// removed - added - fixed.
    pub net: i64,
    /// The same in dollars, at cache-write (or plain input) price for the first request that
    /// carried each token and cache-read price for the others, at the session's model's prices.
    pub usd_removed: f64,
    /// Dollars of what was added.
    pub usd_added: f64,
    /// Dollars of the tool list.
    pub usd_fixed: f64,
    /// usd_removed - usd_added - usd_fixed.
    pub usd_net: f64,
}

impl Billed {
    /// Adds another session's figures.
    pub fn add(&mut self, o: &Billed) {
        self.removed += o.removed;
        self.added += o.added;
        self.fixed += o.fixed;
        self.net += o.net;
        self.usd_removed += o.usd_removed;
        self.usd_added += o.usd_added;
        self.usd_fixed += o.usd_fixed;
        self.usd_net += o.usd_net;
    }
}

/// The price a session's tokens are billed at: its own model's, by the provider rules table.
pub fn price_of(codex: bool, model: &str) -> Price {
    let rules = Rules::builtin();
    let provider = if codex { Provider::OpenAiResponses } else { Provider::Anthropic };
    Price::of(&rules, provider, model)
}

/// Weighs one session. `fired` holds its hook calls in order; `lines` its ledger lines, oldest
/// first (the k-th line was written by the hook call whose running line count reached k);
/// `compactions` the session-file line numbers where its context was compacted; `per_request`
/// the tool list's tokens on each request.
pub fn weigh(fired: &[Fired], lines: &[Sides], compactions: &[usize], per_request: u64, price: &Price) -> Billed {
    let first = if price.separate_cache { price.write } else { 1.0 };
    // Input-token equivalents of `tokens` carried by `n` requests: written (or paid) once, read
    // from the cache by the rest.
    let cost = |tokens: u64, n: u64| {
        if n == 0 { 0.0 } else { tokens as f64 * (first + price.read * (n - 1) as f64) * price.per_token }
    };
    let mut b = Billed::default();
    let mut line = 0usize;
    for (i, f) in fired.iter().enumerate() {
        let end = compactions.iter().copied().find(|&c| c >= f.upto).unwrap_or(usize::MAX);
        let carried: u64 = fired[i..].iter().take_while(|g| g.upto <= end).map(|g| g.requests).sum();
        for s in lines.iter().skip(line).take(f.lines as usize) {
            b.removed += s.removed * carried;
            b.added += s.added * carried;
            b.usd_removed += cost(s.removed, carried);
            b.usd_added += cost(s.added, carried);
        }
        line += f.lines as usize;
    }
    let requests: u64 = fired.iter().map(|f| f.requests).sum();
    b.fixed = per_request * requests;
    b.usd_fixed = cost(per_request, requests);
    b.net = b.removed as i64 - b.added as i64 - b.fixed as i64;
    b.usd_net = b.usd_removed - b.usd_added - b.usd_fixed;
    b
}

/// The session-file line numbers where a Claude Code context was compacted (a compaction
/// boundary or summary; a microcompaction, which clears old tool results, counts too) or a
/// Codex rollout's was (`compacted`).
pub fn compactions(raw: &[String]) -> Vec<usize> {
    raw.iter()
        .enumerate()
        .filter(|(_, l)| {
            let Ok(v) = serde_json::from_str::<serde_json::Value>(l) else { return false };
            let sub = v.get("subtype").and_then(serde_json::Value::as_str);
            matches!(sub, Some("compact_boundary" | "microcompact_boundary"))
                || v.get("isCompactSummary").and_then(serde_json::Value::as_bool) == Some(true)
                || v.get("type").and_then(serde_json::Value::as_str) == Some("compacted")
        })
        .map(|(i, _)| i)
        .collect()
}

/// The model a session used most often (its assistant messages' `model`, or a Codex
/// `turn_context`'s), or "" when none is named.
pub fn model_of(raw: &[String]) -> String {
    let mut counts: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for l in raw {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(l) else { continue };
        let m = v.pointer("/message/model").or_else(|| v.pointer("/payload/model")).and_then(serde_json::Value::as_str);
        if let Some(m) = m.filter(|m| !m.is_empty() && !m.starts_with('<')) {
            *counts.entry(m.to_string()).or_default() += 1;
        }
    }
    counts.into_iter().max_by_key(|(_, n)| *n).map(|(m, _)| m).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn anthropic() -> Price {
        Price { per_token: 3e-6, write: 1.25, read: 0.1, separate_cache: true }
    }

    #[test]
    fn a_note_saves_on_every_request_after_it_until_a_compaction() {
        // Five hook calls, one request each; the third wrote a note removing 1,000 tokens and
        // adding 50. A compaction sits after the fourth.
        let fired: Vec<Fired> = (0..5).map(|i| Fired { upto: i * 10, requests: 1, lines: u64::from(i == 2) }).collect();
        let lines = [Sides { removed: 1000, added: 50 }];
        let b = weigh(&fired, &lines, &[], 100, &anthropic());
        assert_eq!((b.removed, b.added, b.fixed), (3000, 150, 500), "carried by calls 2, 3 and 4");
        assert_eq!(b.net, 3000 - 150 - 500);
        let compacted = weigh(&fired, &lines, &[35], 100, &anthropic());
        assert_eq!((compacted.removed, compacted.added), (2000, 100), "the compaction after call 3 drops it");
        // Dollars: written once at 1.25x, read twice at 0.1x.
        assert!((b.usd_removed - 1000.0 * (1.25 + 0.2) * 3e-6).abs() < 1e-12);
        assert!((b.usd_fixed - 100.0 * (1.25 + 0.4) * 3e-6).abs() < 1e-12);
    }

    #[test]
    fn lines_go_to_the_call_that_wrote_them_in_order() {
        let fired = [Fired { upto: 1, requests: 1, lines: 2 }, Fired { upto: 2, requests: 2, lines: 1 }];
        let lines = [Sides { removed: 1, added: 0 }, Sides { removed: 10, added: 0 }, Sides { removed: 100, added: 0 }];
        let b = weigh(&fired, &lines, &[], 0, &anthropic());
        assert_eq!(b.removed, 3 + 3 * 10 + 2 * 100);
    }

    #[test]
    fn compactions_and_models_are_read_from_the_session_file() {
        let raw: Vec<String> = [
            r#"{"type":"assistant","message":{"model":"claude-sonnet-4-5"}}"#,
            r#"{"type":"system","subtype":"compact_boundary"}"#,
            r#"{"type":"user","isCompactSummary":true}"#,
            "not json",
            r#"{"type":"assistant","message":{"model":"<synthetic>"}}"#,
        ]
        .map(str::to_string)
        .into();
        assert_eq!(compactions(&raw), [1, 2]);
        assert_eq!(model_of(&raw), "claude-sonnet-4-5");
    }
}
