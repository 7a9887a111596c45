//! Claude Code session files: one JSON line per event. User and assistant lines carry one content
//! block each (assistant blocks of one API message share its id and are merged); `system` lines
//! with subtype `compact_boundary` start a new conversation segment; `isSidechain` lines belong to
//! subagents. Newer versions also log each API request (`api-request-shape`, `api-request-blob`,
//! `api-request`), from which requests are rebuilt exactly.

use super::{CompactionMark, Format, Messages, Reconstruction, Transcript, Turn, as_blocks, push_merged, ts};
use crate::prompt::request::{Provider, Usage};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::Arc;

#[derive(Default)]
struct State {
    segments: Vec<Vec<Value>>,
    derived: Vec<Turn>,
    logged: Vec<Turn>,
    compactions: Vec<CompactionMark>,
    sidechain: usize,
    shapes: HashMap<String, Value>,
    blobs: HashMap<String, Value>,
    requests: HashMap<String, Arc<Value>>,
    usage_by_ref: HashMap<String, Usage>,
    last_assistant_id: Option<String>,
    after_compaction: bool,
    recognised: usize,
}

/// Reads Claude Code lines; None when none is recognised.
pub(super) fn read(lines: &[(usize, Value)]) -> Option<Transcript> {
    let mut s = State { segments: vec![vec![]], ..State::default() };
    for (n, v) in lines {
        match v.get("type").and_then(Value::as_str) {
            Some("user" | "assistant") | None if v.get("message").is_some() => message(&mut s, *n, v),
            Some("system") if v.get("subtype").and_then(Value::as_str) == Some("compact_boundary") => {
                s.recognised += 1;
                let meta = v.get("compactMetadata");
                s.compactions.push(CompactionMark {
                    line: *n,
                    trigger: meta.and_then(|m| m.get("trigger")).and_then(Value::as_str).map(str::to_string),
                    pre_tokens: meta.and_then(|m| m.get("preTokens")).and_then(Value::as_u64),
                });
                s.segments.push(vec![]);
                s.last_assistant_id = None;
                s.after_compaction = true;
            }
            Some("api-request-shape") => {
                if let (Some(h), Some(shape)) = (v.get("shapeHash").and_then(Value::as_str), v.get("shape")) {
                    s.shapes.insert(h.to_string(), shape.clone());
                }
            }
            Some("api-request-blob") => {
                if let (Some(h), Some(m)) = (v.get("hash").and_then(Value::as_str), v.get("message")) {
                    s.blobs.insert(h.to_string(), m.clone());
                }
            }
            Some("api-request") => logged_request(&mut s, *n, v),
            _ => {}
        }
    }
    if s.recognised == 0 && s.logged.is_empty() {
        return None;
    }
    let mut turns = if s.logged.is_empty() { s.derived } else { s.logged };
    for t in turns.iter_mut() {
        if let Some(u) = t.request_id.as_ref().and_then(|r| s.usage_by_ref.get(r)) {
            t.usage = Some(u.clone());
        }
    }
    Some(Transcript {
        format: Format::ClaudeCode,
        provider: Provider::Anthropic,
        lines: 0,
        bad_lines: 0,
        turns,
        compactions: s.compactions,
        sidechain_messages: s.sidechain,
        segments: s.segments,
        system: None,
    })
}

fn message(s: &mut State, n: usize, v: &Value) {
    s.recognised += 1;
    if v.get("isSidechain").and_then(Value::as_bool) == Some(true) {
        s.sidechain += 1;
        return;
    }
    let Some(m) = v.get("message") else { return };
    let role = m.get("role").and_then(Value::as_str).unwrap_or("user");
    let blocks = as_blocks(m.get("content"));
    let epoch = s.segments.len() - 1;
    let Some(seg) = s.segments.last_mut() else { return };
    if role != "assistant" {
        s.last_assistant_id = None;
        if !blocks.is_empty() {
            push_merged(seg, role, blocks);
        }
        return;
    }
    let id = m.get("id").and_then(Value::as_str).map(str::to_string);
    let usage = m.get("usage").and_then(Usage::from_json);
    if let Some(r) = v.get("requestRef").and_then(Value::as_str)
        && let Some(u) = &usage
    {
        s.usage_by_ref.insert(r.to_string(), u.clone());
    }
    let same = id.is_some() && id == s.last_assistant_id;
    if same {
        // Another block of the same API message: merge, skipping exact duplicates.
        if let Some(arr) = seg.last_mut().and_then(|l| l.get_mut("content")).and_then(Value::as_array_mut) {
            for b in blocks {
                if !arr.contains(&b) {
                    arr.push(b);
                }
            }
        }
        if let (Some(t), Some(u)) = (s.derived.last_mut(), usage) {
            t.usage = Some(u);
        }
        return;
    }
    let model = m.get("model").and_then(Value::as_str).unwrap_or_default().to_string();
    if model != "<synthetic>" {
        s.derived.push(Turn {
            line: n,
            timestamp_ms: ts(v),
            model,
            usage,
            messages: Messages::Segment { epoch, upto: seg.len() },
            reconstruction: Reconstruction::MessagesOnly,
            after_compaction: std::mem::take(&mut s.after_compaction),
            request_id: v.get("requestRef").and_then(Value::as_str).map(str::to_string),
        });
    }
    s.last_assistant_id = id;
    seg.push(serde_json::json!({"role": "assistant", "content": blocks}));
}

/// Rebuilds a request from the agent's request log: the base request's first `keep` messages,
/// then the `tail` blobs (missing blobs are filled from the conversation's latest messages).
fn logged_request(s: &mut State, n: usize, v: &Value) {
    let Some(id) = v.get("id").and_then(Value::as_str) else { return };
    let params = v.get("params").and_then(Value::as_object).cloned().unwrap_or_default();
    let base: Vec<Value> = v
        .get("base")
        .and_then(Value::as_str)
        .and_then(|b| s.requests.get(b))
        .and_then(|r| r.get("messages"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let keep = v.get("keep").and_then(Value::as_u64).unwrap_or(0) as usize;
    let tail: Vec<&str> = v
        .get("tail")
        .and_then(Value::as_array)
        .map(|t| t.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let seg = s.segments.last().cloned().unwrap_or_default();
    let mut msgs: Vec<Value> = base.into_iter().take(keep).collect();
    let mut missing = 0;
    for (j, h) in tail.iter().enumerate() {
        match s.blobs.get(*h) {
            Some(m) => msgs.push(m.clone()),
            None => {
                missing += 1;
                let from_end = tail.len() - j;
                if let Some(m) = seg.len().checked_sub(from_end).and_then(|k| seg.get(k)) {
                    msgs.push(m.clone());
                }
            }
        }
    }
    let mut body = Map::new();
    for (k, val) in &params {
        if k != "betas" {
            body.insert(k.clone(), val.clone());
        }
    }
    if let Some(b) = params.get("betas") {
        body.insert("betas".into(), b.clone());
    }
    if let Some(shape) = v.get("shapeHash").and_then(Value::as_str).and_then(|h| s.shapes.get(h)) {
        for key in ["tools", "system"] {
            if let Some(x) = shape.get(key) {
                body.insert(key.into(), x.clone());
            }
        }
    }
    body.insert("messages".into(), Value::Array(msgs));
    let mut body = Value::Object(body);
    for cc in v.get("cacheControl").and_then(Value::as_array).into_iter().flatten() {
        if let (Some(path), Some(val)) = (cc.get("path").and_then(Value::as_array), cc.get("value")) {
            set_at(&mut body, path, val);
        }
    }
    let body = Arc::new(body);
    s.requests.insert(id.to_string(), body.clone());
    s.logged.push(Turn {
        line: n,
        timestamp_ms: ts(v),
        model: params.get("model").and_then(Value::as_str).unwrap_or_default().to_string(),
        usage: None,
        messages: Messages::Body(body),
        reconstruction: if missing == 0 { Reconstruction::Exact } else { Reconstruction::Partial },
        after_compaction: std::mem::take(&mut s.after_compaction),
        request_id: Some(id.to_string()),
    });
}

fn set_at(body: &mut Value, path: &[Value], val: &Value) {
    let mut cur = body;
    for p in path {
        let next = match p {
            Value::String(k) => cur.get_mut(k.as_str()),
            Value::Number(i) => i.as_u64().and_then(|i| cur.get_mut(i as usize)),
            _ => None,
        };
        match next {
            Some(n) => cur = n,
            None => return,
        }
    }
    if let Some(o) = cur.as_object_mut() {
        o.insert("cache_control".into(), val.clone());
    }
}
