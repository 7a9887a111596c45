//! Causes of a cache break, found by comparing two requests level by level, each with the
//! concrete fix. Ranking by tokens lost happens in `explain`, which knows what was cached.

use super::diff::{common_prefix, first_leaf_diff, same_block};
use super::request::{Block, BlockKind, Level, Request};
use super::rules::{Invalidates, ProviderRules};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;

/// What broke (or may have broken) the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CauseKind {
    /// The model id changed.
    ModelChanged,
    /// A tool definition was added.
    ToolAdded,
    /// A tool definition was removed.
    ToolRemoved,
    /// Tools were reordered.
    ToolsReordered,
    /// A tool's description or schema changed.
    ToolSchemaEdited,
    /// The system prompt changed.
    SystemEdited,
    /// An earlier message changed instead of new ones being appended.
    MessageMutated,
    /// Earlier messages were dropped (truncation or compaction).
    MessagesRemoved,
    /// Thinking parameters changed.
    ThinkingChanged,
    /// `tool_choice` changed.
    ToolChoiceChanged,
    /// Another parameter the rules say invalidates a level (e.g. effort).
    ParamChanged,
    /// A parameter whose effect on caching the rules do not know.
    UnknownFieldChanged,
    /// Images were added to or removed from the cached part.
    ImagesChanged,
    /// Breakpoints moved so the new request cannot reach the old cache entry.
    BreakpointsMoved,
    /// A breakpoint's TTL changed.
    TtlChanged,
    /// The time between the requests exceeded the TTL.
    IdleGapExceeded,
    /// The cacheable prefix is below the model's minimum.
    PrefixBelowMinimum,
    /// The agent compacted the conversation (transcript marker).
    Compacted,
}

/// One cause with its evidence and fix.
#[derive(Debug, Clone, Serialize)]
pub struct Cause {
    /// What happened.
    pub kind: CauseKind,
    /// 1 = costliest.
    pub rank: usize,
    /// Whether it sits at the first divergence.
    pub primary: bool,
    /// One sentence with the evidence (names, places, sizes).
    pub summary: String,
    /// The level it invalidates from.
    pub level: Level,
    /// Estimated cached tokens this cause alone invalidates.
    pub tokens_lost: u64,
    /// What to change so it does not happen again.
    pub fix: String,
    /// First block (of the earlier request) it invalidates; None when it invalidates nothing by itself.
    #[serde(skip)]
    pub at_block: Option<usize>,
}

impl Cause {
    /// A cause invalidating from block `at` of the earlier request.
    pub fn new(kind: CauseKind, level: Level, at: Option<usize>, summary: String, fix: String) -> Cause {
        Cause { kind, rank: 0, primary: false, summary, level, tokens_lost: 0, fix, at_block: at }
    }
}

/// Every difference between `a` and `b` that can affect the cache, unranked.
pub fn detect(a: &Request, b: &Request, rules: &ProviderRules) -> Vec<Cause> {
    let mut out = Vec::new();
    if a.model != b.model {
        out.push(Cause::new(
            CauseKind::ModelChanged,
            Level::Tools,
            Some(0),
            format!("model changed: {} -> {}", a.model, b.model),
            "Keep one model per conversation; send side tasks for another model as separate requests instead of switching mid-session.".into(),
        ));
    }
    tools(a, b, &mut out);
    system(a, b, &mut out);
    messages(a, b, &mut out);
    params(a, b, rules, &mut out);
    images(a, b, &mut out);
    out
}

fn blocks_of(r: &Request, level: Level) -> impl Iterator<Item = (usize, &Block)> {
    r.blocks.iter().enumerate().filter(move |(_, b)| b.level == level)
}

fn tools(a: &Request, b: &Request, out: &mut Vec<Cause>) {
    let ta: HashMap<&str, (usize, &Block)> =
        blocks_of(a, Level::Tools).filter_map(|(i, x)| name(x).map(|n| (n, (i, x)))).collect();
    let tb: HashMap<&str, &Block> = blocks_of(b, Level::Tools).filter_map(|(_, x)| name(x).map(|n| (n, x))).collect();
    let (na, nb) = (a.tool_names(), b.tool_names());
    for (pos, n) in nb.iter().enumerate() {
        if !ta.contains_key(n) {
            let at =
                blocks_of(a, Level::Tools).nth(pos).map(|(i, _)| i).unwrap_or_else(|| a.level_start(Level::System));
            out.push(Cause::new(CauseKind::ToolAdded, Level::Tools, Some(at), format!("tool added: {n} (position {pos})"),
                format!("Register {n} from the first request of the session (or append new tools after a stable, sorted list) instead of adding it mid-conversation.")));
        }
    }
    for n in &na {
        if !tb.contains_key(n) {
            let at = ta.get(n).map(|(i, _)| *i);
            out.push(Cause::new(CauseKind::ToolRemoved, Level::Tools, at, format!("tool removed: {n}"),
                format!("Keep {n} defined for the whole session (disable it in the prompt or reject its calls) instead of dropping its definition.")));
        }
    }
    let ca: Vec<&str> = na.iter().copied().filter(|n| tb.contains_key(n)).collect();
    let cb: Vec<&str> = nb.iter().copied().filter(|n| ta.contains_key(n)).collect();
    if ca != cb {
        let first = ca.iter().zip(&cb).position(|(x, y)| x != y).unwrap_or(0);
        let at = ca.get(first).and_then(|n| ta.get(n)).map(|(i, _)| *i);
        out.push(Cause::new(
            CauseKind::ToolsReordered,
            Level::Tools,
            at,
            format!(
                "tools reordered from position {first}: {} now where {} was",
                cb.get(first).unwrap_or(&"?"),
                ca.get(first).unwrap_or(&"?")
            ),
            "Sort tool definitions by name (or keep one fixed order) every time the request is built.".into(),
        ));
    }
    for n in &ca {
        if let (Some((i, x)), Some(y)) = (ta.get(n), tb.get(n))
            && x.text != y.text
        {
            let (va, vb) = (
                serde_json::from_str::<Value>(&x.text).unwrap_or_default(),
                serde_json::from_str::<Value>(&y.text).unwrap_or_default(),
            );
            let (path, _, _) = first_leaf_diff(&va, &vb);
            let delta = y.text.chars().count() as i64 - x.text.chars().count() as i64;
            out.push(Cause::new(CauseKind::ToolSchemaEdited, Level::Tools, Some(*i),
                format!("tool schema changed: {n} at {}{} ({delta:+} chars)", n, if path.is_empty() { String::new() } else { path }),
                format!("Make {n}'s definition deterministic: no timestamps, counters or ids in its description or schema, and a stable key order.")));
        }
    }
}

fn name(b: &Block) -> Option<&str> {
    if let BlockKind::Tool(n) = &b.kind { Some(n) } else { None }
}

fn system(a: &Request, b: &Request, out: &mut Vec<Cause>) {
    let sa: Vec<(usize, &Block)> = blocks_of(a, Level::System).collect();
    let sb: Vec<(usize, &Block)> = blocks_of(b, Level::System).collect();
    for k in 0..sa.len().max(sb.len()) {
        let (x, y) = (sa.get(k), sb.get(k));
        let at = x.map(|(i, _)| *i).or_else(|| Some(a.level_start(Level::Messages)));
        let (summary, fix) = match (x, y) {
            (Some((_, x)), Some((_, y))) if x.text == y.text && x.role == y.role => continue,
            (Some((_, x)), Some((_, y))) => {
                let (ta, tb) = (plain(&x.text), plain(&y.text));
                let (off, byte) = common_prefix(&ta, &tb);
                let delta = tb.chars().count() as i64 - ta.chars().count() as i64;
                let near: String = tb[byte..].chars().take(30).collect();
                (
                    format!(
                        "system prompt changed ({delta:+} chars) in {} at char {off}: now \"{}\"",
                        y.path,
                        near.replace('\n', " ")
                    ),
                    format!(
                        "Move volatile text (the part at char {off} of {}) out of the cached prefix: put it after the last cache breakpoint, e.g. in the newest user message.",
                        y.path
                    ),
                )
            }
            (Some((_, x)), None) => (
                format!("system block removed: {} ({} chars)", x.path, x.text.chars().count()),
                "Keep the system prompt's blocks fixed for the session.".into(),
            ),
            (None, Some((_, y))) => (
                format!("system block added: {} ({} chars)", y.path, y.text.chars().count()),
                "Append late context as a message after the last breakpoint instead of adding a system block.".into(),
            ),
            (None, None) => continue,
        };
        out.push(Cause::new(CauseKind::SystemEdited, Level::System, at, summary, fix));
    }
}

fn plain(text: &str) -> String {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(o)) => o
            .get("text")
            .or_else(|| o.get("content"))
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| text.to_string()),
        _ => text.to_string(),
    }
}

/// Block ranges of each message: (message index, start, end) in prefix order.
fn spans(r: &Request) -> Vec<(usize, usize, usize)> {
    let mut out: Vec<(usize, usize, usize)> = Vec::new();
    for (i, b) in
        r.blocks.iter().enumerate().filter(|(_, b)| {
            b.level == Level::Messages || b.path.starts_with("messages") || b.path.starts_with("input")
        })
    {
        match out.last_mut() {
            Some(last) if last.0 == b.index => last.2 = i + 1,
            _ => out.push((b.index, i, i + 1)),
        }
    }
    out
}

fn messages(a: &Request, b: &Request, out: &mut Vec<Cause>) {
    let (ma, mb) = (spans(a), spans(b));
    let mut mutated = Vec::new();
    for (k, (x, y)) in ma.iter().zip(&mb).enumerate() {
        let xs = &a.blocks[x.1..x.2];
        let ys = &b.blocks[y.1..y.2];
        let is_last = k + 1 == ma.len();
        let appended = is_last && ys.len() >= xs.len() && xs.iter().zip(ys).all(|(p, q)| same_block(p, q));
        if !appended && (xs.len() != ys.len() || xs.iter().zip(ys).any(|(p, q)| !same_block(p, q))) {
            mutated.push((k, x.1, xs, ys));
        }
    }
    // Messages dropped from the middle or the start: the rest is A's messages in order.
    let same_msg = |x: &(usize, usize, usize), y: &(usize, usize, usize)| {
        let (xs, ys) = (&a.blocks[x.1..x.2], &b.blocks[y.1..y.2]);
        xs.len() == ys.len() && xs.iter().zip(ys).all(|(p, q)| p.text == q.text && p.role == q.role)
    };
    let removed_only = mb.len() < ma.len() && {
        let mut it = ma.iter();
        mb.iter().all(|y| it.any(|x| same_msg(x, y)))
    };
    if removed_only {
        let k = ma.iter().zip(&mb).position(|(x, y)| !same_msg(x, y)).unwrap_or(mb.len());
        let start = ma.get(k).map(|m| m.1);
        out.push(Cause::new(CauseKind::MessagesRemoved, Level::Messages, start,
            format!("{} earlier messages were dropped from message {k} on ({} -> {} messages): the history was truncated or compacted", ma.len() - mb.len(), ma.len(), mb.len()),
            "Truncate or compact rarely and only when the cache write pays off (compact_preview shows when); otherwise keep the history append-only.".into()));
        return;
    }
    if let Some((k, start, xs, ys)) = mutated.first() {
        let j = xs.iter().zip(ys.iter()).position(|(p, q)| !same_block(p, q)).unwrap_or(xs.len().min(ys.len()));
        let what = xs.get(j).or(ys.get(j)).map(|blk| describe_kind(&blk.kind)).unwrap_or_else(|| "content".into());
        let more =
            if mutated.len() > 1 { format!(" (and {} later messages)", mutated.len() - 1) } else { String::new() };
        let (role, path) =
            ys.first().or(xs.first()).map(|b| (b.role.clone().unwrap_or_default(), b.path.clone())).unwrap_or_default();
        out.push(Cause::new(CauseKind::MessageMutated, Level::Messages, Some(start + j.min(xs.len())),
            format!("earlier message {k} ({role}, {what}) was edited instead of appended to, at {path}{more}"),
            "Never edit earlier messages or tool results: append corrections as new messages; if old results must shrink, clear them with deterministic placeholders and a replacement log (compact_preview).".into()));
    }
    if mb.len() < ma.len() {
        let start = ma.get(mb.len()).map(|m| m.1);
        out.push(Cause::new(CauseKind::MessagesRemoved, Level::Messages, start,
            format!("{} earlier messages were dropped ({} -> {} messages): the history was truncated or compacted", ma.len() - mb.len(), ma.len(), mb.len()),
            "Truncate or compact rarely and only when the cache write pays off (compact_preview shows when); otherwise keep the history append-only.".into()));
    }
}

fn describe_kind(k: &BlockKind) -> String {
    match k {
        BlockKind::ToolResult(id) => format!("tool result {id}"),
        BlockKind::ToolUse(n) => format!("tool call {n}"),
        BlockKind::Thinking => "thinking".into(),
        BlockKind::Image => "image".into(),
        BlockKind::Other(t) => t.clone(),
        _ => "text".into(),
    }
}

fn params(a: &Request, b: &Request, rules: &ProviderRules, out: &mut Vec<Cause>) {
    let keys = a.params.keys().chain(b.params.keys().filter(|k| !a.params.contains_key(*k)));
    for k in keys {
        let (x, y) = (a.params.get(k), b.params.get(k));
        if x == y {
            continue;
        }
        let show = |v: Option<&Value>| v.map(|v| clip(&v.to_string(), 80)).unwrap_or_else(|| "(absent)".into());
        let change = format!("{} -> {}", show(x), show(y));
        let inv = rules.invalidates(k);
        let (level, at) = match inv {
            Invalidates::All => (Level::Tools, Some(0)),
            Invalidates::From(l) => (l, Some(a.level_start(l))),
            Invalidates::Nothing => continue,
            Invalidates::Unknown => (Level::Messages, None),
        };
        let cause = match (k.as_str(), inv) {
            ("thinking", _) => Cause::new(CauseKind::ThinkingChanged, level, at, format!("thinking changed: {change}"),
                "Keep thinking settings (enabled, type, budget) fixed for the session; changing them invalidates the messages cache.".into()),
            ("tool_choice", _) => Cause::new(CauseKind::ToolChoiceChanged, level, at, format!("tool_choice changed: {change}"),
                "Keep tool_choice fixed; steer tool use through the prompt, or send the forced call as a separate request.".into()),
            (_, Invalidates::Unknown) => Cause::new(CauseKind::UnknownFieldChanged, level, at,
                format!("{k} changed: {change} (refrain's rules do not say whether it affects caching)"),
                format!("Check whether {k} has to change between turns; if caching still breaks, keep it fixed.")),
            _ => Cause::new(CauseKind::ParamChanged, level, at, format!("{k} changed: {change}"),
                format!("Keep {k} fixed for the session; a change invalidates the {} level and everything after it.", level.name())),
        };
        out.push(cause);
    }
}

fn images(a: &Request, b: &Request, out: &mut Vec<Cause>) {
    let n = a.blocks.len().min(b.blocks.len());
    let ia: usize = a.blocks.iter().map(|x| x.images).sum();
    let ib: usize = b.blocks[..n].iter().map(|x| x.images).sum();
    if ia != ib {
        let at = a.blocks.iter().zip(&b.blocks).position(|(x, y)| x.images != y.images).unwrap_or(n);
        out.push(Cause::new(
            CauseKind::ImagesChanged,
            Level::Messages,
            Some(a.level_start(Level::Messages).min(at)),
            format!("images in the cached part changed: {ia} -> {ib}"),
            "Do not add or strip images in earlier messages; add new images only in new messages.".into(),
        ));
    }
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() > n { format!("{}…", s.chars().take(n).collect::<String>()) } else { s.to_string() }
}
