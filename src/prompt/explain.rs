//! `explain`: did the cache break between two requests, where, why, and what it cost.
//!
//! Simulates the provider's prefix cache from the rules table: the earlier request writes an entry
//! at each breakpoint (Anthropic) or for its whole prompt (OpenAI, automatic, 128-token steps); the
//! later request reads the longest entry it still shares, within the lookback window, before the
//! TTL ran out. Every cause found by `cause::detect` is ranked by the cached tokens it invalidates.

use super::cause::{self, Cause, CauseKind};
use super::diff::{Divergence, first_divergence};
use super::request::{Level, Provider, Request};
use super::rules::{ProviderRules, Rules};
use serde::Serialize;

/// Token figures of a comparison (estimates).
#[derive(Debug, Clone, Serialize)]
pub struct TokenFigures {
    /// Prompt tokens of the earlier request.
    pub before_total: u64,
    /// Prompt tokens of the later request.
    pub after_total: u64,
    /// Tokens the earlier request left in the cache.
    pub cached_before: u64,
    /// Tokens the later request reads from the cache (predicted).
    pub cached_after: u64,
    /// Cached tokens lost.
    pub lost: u64,
    /// The model family's minimum cacheable prefix.
    pub min_cacheable: u64,
    /// How these were counted.
    pub counting: String,
}

/// The price of the break.
#[derive(Debug, Clone, Serialize)]
pub struct CostFigures {
    /// The model family the prices come from.
    pub family: String,
    /// Base input price, USD per million tokens.
    pub input_usd_per_mtok: f64,
    /// Cache-write multiplier used.
    pub write_multiplier: f64,
    /// Cache-read multiplier used.
    pub read_multiplier: f64,
    /// Extra USD the lost tokens cost on the later request (written or paid in full instead of read).
    pub lost_usd: f64,
}

/// What the provider reported for the later request, against the prediction.
#[derive(Debug, Clone, Serialize)]
pub struct ReportedCheck {
    /// Reported cache-read tokens.
    pub cache_read_tokens: u64,
    /// Reported cache-write tokens.
    pub cache_creation_tokens: Option<u64>,
    /// Predicted cache-read tokens.
    pub predicted_read_tokens: u64,
    /// Whether they agree (within 25% or 512 tokens: the prediction is an estimate).
    pub agrees: bool,
    /// One sentence.
    pub note: String,
}

/// A cache breakpoint of the later request.
#[derive(Debug, Clone, Serialize)]
pub struct BreakpointLayout {
    /// JSON path of the block carrying it.
    pub path: String,
    /// Its TTL.
    pub ttl: String,
    /// Tokens up to and including that block.
    pub prefix_tokens: u64,
}

/// The explanation of one request pair.
#[derive(Debug, Clone, Serialize)]
pub struct CacheBreak {
    /// Request format.
    pub provider: Provider,
    /// Model of the later request.
    pub model: String,
    /// Whether cached tokens were lost.
    pub broke: bool,
    /// One-sentence verdict.
    pub verdict: String,
    /// Where the requests first differ (None: the later one only appends).
    pub divergence: Option<Divergence>,
    /// Every cause, costliest first.
    pub causes: Vec<Cause>,
    /// Token figures.
    pub tokens: TokenFigures,
    /// Cost figures.
    pub cost: CostFigures,
    /// Reported usage against the prediction, when usage is known.
    pub reported: Option<ReportedCheck>,
    /// The later request's breakpoints.
    pub layout: Vec<BreakpointLayout>,
    /// Seconds between the requests, when both timestamps are known.
    pub idle_gap_secs: Option<u64>,
    /// Date of the provider rules used.
    pub rules_as_of: String,
}

struct Entry {
    len: usize,
    tokens: u64,
    ttl: String,
}

/// Explains the change from request `a` to request `b`.
pub fn explain(a: &Request, b: &Request, rules: &Rules) -> CacheBreak {
    let pr = rules.provider(b.provider);
    let fam = pr.family(&b.model);
    let cum = cumulative(a);
    let div = first_divergence(a, b);
    let mut causes = cause::detect(a, b, pr);
    let common = div.as_ref().map(|d| d.block).unwrap_or(a.blocks.len());
    let valid_upto = causes
        .iter()
        .filter(|c| !matches!(c.kind, CauseKind::UnknownFieldChanged))
        .filter_map(|c| c.at_block)
        .min()
        .unwrap_or(usize::MAX);
    let reach = common.min(valid_upto);
    let gap_ms = match (a.timestamp_ms, b.timestamp_ms) {
        (Some(x), Some(y)) if y >= x => Some(y - x),
        _ => None,
    };
    let all_entries = entries(a, pr, &cum);
    let below_min: Vec<&Entry> = all_entries.iter().filter(|e| e.tokens < fam.min_cacheable_tokens).collect();
    let valid: Vec<&Entry> = all_entries.iter().filter(|e| e.tokens >= fam.min_cacheable_tokens).collect();
    let cached_before = valid.iter().map(|e| e.tokens).max().unwrap_or(0);
    let alive: Vec<&&Entry> =
        valid.iter().filter(|e| gap_ms.is_none_or(|g| g <= pr.ttl_secs(&e.ttl) as i64 * 1000)).collect();
    let (ideal_after, cached_after) = match b.provider {
        Provider::Anthropic => {
            let ideal = alive.iter().filter(|e| e.len <= reach).map(|e| e.tokens).max().unwrap_or(0);
            let read = b.blocks.iter().enumerate().filter(|(_, x)| x.breakpoint.is_some()).flat_map(|(p, _)| {
                alive
                    .iter()
                    .filter(move |e| e.len <= reach.min(p + 1) && e.len + pr.lookback_blocks > p)
                    .map(|e| e.tokens)
            });
            (ideal, read.max().unwrap_or(0))
        }
        _ => {
            let shared =
                if alive.is_empty() { 0 } else { round_down(cum[reach.min(a.blocks.len())], pr.token_granularity) };
            let read = if shared >= fam.min_cacheable_tokens { shared.min(cached_before) } else { 0 };
            (read, read)
        }
    };
    let lost = cached_before.saturating_sub(cached_after);
    extra_causes(&mut causes, a, b, pr, &fam, gap_ms, &below_min, &valid, ideal_after, cached_after);
    rank(&mut causes, &cum, cached_before, div.as_ref().map(|d| d.block));
    let ttl = valid.iter().map(|e| e.ttl.clone()).next().unwrap_or_else(|| pr.ttl_default.clone());
    let (wm, rm) = (pr.write_mult(&ttl), pr.read_mult(&fam));
    let extra = if b.provider == Provider::Anthropic { wm - rm } else { 1.0 - rm };
    let cost = CostFigures {
        family: fam.name.clone(),
        input_usd_per_mtok: fam.input_usd_per_mtok,
        write_multiplier: wm,
        read_multiplier: rm,
        lost_usd: lost as f64 * fam.input_usd_per_mtok / 1e6 * extra,
    };
    let reported = check_reported(a, b, cached_after);
    let broke = lost > 0;
    let verdict = verdict(broke, lost, cached_before, &causes, &cost);
    let layout = layout(b);
    CacheBreak {
        provider: b.provider,
        model: b.model.clone(),
        broke,
        verdict,
        divergence: div,
        causes,
        tokens: TokenFigures {
            before_total: a.tokens(),
            after_total: b.tokens(),
            cached_before,
            cached_after,
            lost,
            min_cacheable: fam.min_cacheable_tokens,
            counting: super::TOKEN_COUNTING.into(),
        },
        cost,
        reported,
        layout,
        idle_gap_secs: gap_ms.map(|g| (g / 1000) as u64),
        rules_as_of: rules.as_of.clone(),
    }
}

fn cumulative(r: &Request) -> Vec<u64> {
    let mut cum = Vec::with_capacity(r.blocks.len() + 1);
    let mut t = 0;
    cum.push(0);
    for b in &r.blocks {
        t += b.tokens;
        cum.push(t);
    }
    cum
}

fn round_down(t: u64, step: u64) -> u64 {
    if step <= 1 { t } else { t / step * step }
}

fn entries(a: &Request, pr: &ProviderRules, cum: &[u64]) -> Vec<Entry> {
    match a.provider {
        Provider::Anthropic => a
            .blocks
            .iter()
            .enumerate()
            .filter_map(|(k, x)| {
                x.breakpoint.as_ref().map(|ttl| Entry { len: k + 1, tokens: cum[k + 1], ttl: ttl.clone() })
            })
            .collect(),
        _ => vec![Entry {
            len: a.blocks.len(),
            tokens: round_down(a.tokens(), pr.token_granularity),
            ttl: pr.ttl_default.clone(),
        }],
    }
}

#[allow(clippy::too_many_arguments)]
fn extra_causes(
    causes: &mut Vec<Cause>,
    a: &Request,
    b: &Request,
    pr: &ProviderRules,
    fam: &super::rules::Family,
    gap_ms: Option<i64>,
    below_min: &[&Entry],
    valid: &[&Entry],
    ideal_after: u64,
    cached_after: u64,
) {
    if let Some(g) = gap_ms {
        let expired: Vec<&&Entry> = valid.iter().filter(|e| g > pr.ttl_secs(&e.ttl) as i64 * 1000).collect();
        if let Some(e) = expired.iter().min_by_key(|e| e.len) {
            causes.push(Cause::new(CauseKind::IdleGapExceeded, Level::Tools, Some(e.len.saturating_sub(1).min(first_bp(a, e.len))),
                format!("{}s passed between the requests, more than the {} TTL ({}s) of the cached prefix", g / 1000, e.ttl, pr.ttl_secs(&e.ttl)),
                "Use the 1h TTL on the long-lived prefix when pauses exceed 5 minutes (writes cost 2x instead of 1.25x), or send a cheap request before the TTL runs out.".into()));
        }
    }
    if valid.is_empty()
        && (!below_min.is_empty() || (b.provider != Provider::Anthropic && a.tokens() < fam.min_cacheable_tokens))
    {
        let biggest = below_min.iter().map(|e| e.tokens).max().unwrap_or_else(|| a.tokens());
        causes.push(Cause::new(CauseKind::PrefixBelowMinimum, Level::Tools, None,
            format!("the cacheable prefix ({biggest} tokens) is below {}'s minimum of {} tokens, so nothing was cached", fam.name, fam.min_cacheable_tokens),
            format!("Caching only starts at {} tokens for this model: place breakpoints after at least that much stable content, or accept that short prompts are not cached.", fam.min_cacheable_tokens)));
    }
    if b.provider == Provider::Anthropic {
        let bp = |r: &Request| {
            r.blocks
                .iter()
                .filter_map(|x| x.breakpoint.as_ref().map(|t| (x.path.clone(), t.clone())))
                .collect::<Vec<_>>()
        };
        let (pa, pb) = (bp(a), bp(b));
        if ideal_after > cached_after {
            causes.push(Cause::new(CauseKind::BreakpointsMoved, Level::Messages, None,
                format!("breakpoints moved ({} -> {}): no breakpoint of the new request is within {} blocks after the old cache entry, so {} cached tokens were unreachable",
                    names(&pa), names(&pb), pr.lookback_blocks, ideal_after - cached_after),
                format!("Keep a breakpoint at the end of the stable prefix and move the last one forward by at most {} blocks per request, or add an intermediate breakpoint.", pr.lookback_blocks)));
            if let Some(c) = causes.last_mut() {
                c.tokens_lost = ideal_after - cached_after;
            }
        }
        for (path, ttl) in &pb {
            if let Some((_, old)) = pa.iter().find(|(p, t)| p == path && t != ttl) {
                causes.push(Cause::new(CauseKind::TtlChanged, Level::Messages, None, format!("TTL of the breakpoint at {path} changed: {old} -> {ttl}"),
                    "Keep TTLs fixed per breakpoint (1h breakpoints must come before 5m ones); a changed TTL writes a new entry at the new price.".into()));
            }
        }
    }
}

fn first_bp(a: &Request, len: usize) -> usize {
    a.blocks.iter().position(|x| x.breakpoint.is_some()).unwrap_or(len.saturating_sub(1))
}

fn names(v: &[(String, String)]) -> String {
    if v.is_empty() { "none".into() } else { v.iter().map(|(p, t)| format!("{p}@{t}")).collect::<Vec<_>>().join(", ") }
}

fn rank(causes: &mut [Cause], cum: &[u64], cached_before: u64, div_block: Option<usize>) {
    for c in causes.iter_mut() {
        if let Some(at) = c.at_block {
            c.tokens_lost = c.tokens_lost.max(cached_before.saturating_sub(cum[at.min(cum.len() - 1)]));
            c.primary = div_block.is_some_and(|d| d == at) || (at == 0 && c.tokens_lost > 0);
        }
    }
    // Equal losses: the specific cause (images, thinking...) before the generic "message edited".
    let generic = |c: &Cause| matches!(c.kind, CauseKind::MessageMutated | CauseKind::UnknownFieldChanged);
    causes.sort_by(|x, y| {
        y.tokens_lost.cmp(&x.tokens_lost).then(generic(x).cmp(&generic(y))).then(y.primary.cmp(&x.primary))
    });
    for (i, c) in causes.iter_mut().enumerate() {
        c.rank = i + 1;
    }
}

fn check_reported(a: &Request, b: &Request, predicted: u64) -> Option<ReportedCheck> {
    let u = b.usage.as_ref()?;
    let read = u.cache_read_tokens?;
    let tolerance = (read.max(predicted) as f64 * 0.25).max(512.0);
    let agrees = (read as f64 - predicted as f64).abs() <= tolerance;
    let prev = a.usage.as_ref().and_then(|p| Some(p.cache_read_tokens? + p.cache_creation_tokens.unwrap_or(0)));
    let mut note = if agrees {
        format!("reported cache read {read} agrees with the predicted {predicted}")
    } else {
        format!(
            "reported cache read {read} disagrees with the predicted {predicted}: the request bodies may be incomplete (transcripts omit system and tools), or the estimate is off"
        )
    };
    if let Some(p) = prev
        && read + read / 20 < p
    {
        note.push_str(&format!(
            "; the provider reports a break: {p} tokens were cached by the previous request, {read} read now"
        ));
    }
    Some(ReportedCheck {
        cache_read_tokens: read,
        cache_creation_tokens: u.cache_creation_tokens,
        predicted_read_tokens: predicted,
        agrees,
        note,
    })
}

fn layout(b: &Request) -> Vec<BreakpointLayout> {
    let mut t = 0;
    let mut out = Vec::new();
    for x in &b.blocks {
        t += x.tokens;
        if let Some(ttl) = &x.breakpoint {
            out.push(BreakpointLayout { path: x.path.clone(), ttl: ttl.clone(), prefix_tokens: t });
        }
    }
    out
}

fn verdict(broke: bool, lost: u64, cached_before: u64, causes: &[Cause], cost: &CostFigures) -> String {
    match (broke, causes.first()) {
        (true, Some(c)) => format!(
            "cache broke: ~{lost} of ~{cached_before} cached tokens lost (~${:.4}); main cause: {}",
            cost.lost_usd, c.summary
        ),
        (true, None) => format!("cache broke: ~{lost} of ~{cached_before} cached tokens lost (~${:.4})", cost.lost_usd),
        (false, _) if cached_before == 0 => match causes.iter().find(|c| c.kind == CauseKind::PrefixBelowMinimum) {
            Some(c) => format!("nothing was cached: {}", c.summary),
            None => "nothing was cached by the earlier request (no breakpoint reached the minimum)".into(),
        },
        (false, _) => format!("cache intact: ~{cached_before} cached tokens still readable"),
    }
}
