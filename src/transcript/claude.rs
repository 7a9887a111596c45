//! Claude Code session files: one JSON line per event. User and assistant lines carry one content
//! block each (assistant blocks of one API message share its id and are merged); `system` lines
//! with subtype `compact_boundary` start a new conversation segment; `isSidechain` lines belong to
//! subagents. Newer versions also log each API request (`api-request-shape`, `api-request-blob`,
//! `api-request`), from which requests are rebuilt exactly.
//!
//! Read line by line (`Reader::feed`), so a caller can stream a large file and look at the
//! transcript built so far at any point.

use super::{CompactionMark, Format, Messages, Reconstruction, Transcript, Turn, as_blocks, push_merged, ts};
use crate::prompt::request::{Provider, Usage};
use serde_json::{Map, Value};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// Logged request bodies kept for `base` references: a request builds on a recent one.
const KEEP_REQUESTS: usize = 16;

/// The reader's state: the transcript so far plus what later lines refer back to.
pub(super) struct Reader {
    t: Transcript,
    /// True once the file logged a request: its turns replace the ones derived from messages.
    logged_mode: bool,
    shapes: HashMap<String, Value>,
    blobs: HashMap<String, Value>,
    requests: VecDeque<(String, Arc<Value>)>,
    usage_by_ref: HashMap<String, Usage>,
    last_assistant_id: Option<String>,
    after_compaction: bool,
    recognised: usize,
}

impl Reader {
    /// An empty reader.
    pub(super) fn new() -> Reader {
        Reader {
            t: Transcript::empty(Format::ClaudeCode, Provider::Anthropic),
            logged_mode: false,
            shapes: HashMap::new(),
            blobs: HashMap::new(),
            requests: VecDeque::new(),
            usage_by_ref: HashMap::new(),
            last_assistant_id: None,
            after_compaction: false,
            recognised: 0,
        }
    }

    /// Whether this line is one the reader understands (used to pick the format).
    pub(super) fn recognises(v: &Value) -> bool {
        match v.get("type").and_then(Value::as_str) {
            Some("user" | "assistant") | None => v.get("message").is_some(),
            Some("system") => v.get("subtype").and_then(Value::as_str) == Some("compact_boundary"),
            Some("api-request-shape" | "api-request-blob" | "api-request") => true,
            _ => false,
        }
    }

    /// Reads one line (`n` is its 1-based number).
    pub(super) fn feed(&mut self, n: usize, v: &Value) {
        match v.get("type").and_then(Value::as_str) {
            Some("user" | "assistant") | None if v.get("message").is_some() => self.message(n, v),
            Some("system") if v.get("subtype").and_then(Value::as_str) == Some("compact_boundary") => {
                self.recognised += 1;
                let meta = v.get("compactMetadata");
                self.t.compactions.push(CompactionMark {
                    line: n,
                    trigger: meta.and_then(|m| m.get("trigger")).and_then(Value::as_str).map(str::to_string),
                    pre_tokens: meta.and_then(|m| m.get("preTokens")).and_then(Value::as_u64),
                });
                self.t.segments.push(vec![]);
                self.last_assistant_id = None;
                self.after_compaction = true;
            }
            Some("api-request-shape") => {
                if let (Some(h), Some(shape)) = (v.get("shapeHash").and_then(Value::as_str), v.get("shape")) {
                    self.shapes.insert(h.to_string(), shape.clone());
                }
            }
            Some("api-request-blob") => {
                if let (Some(h), Some(m)) = (v.get("hash").and_then(Value::as_str), v.get("message")) {
                    self.blobs.insert(h.to_string(), m.clone());
                }
            }
            Some("api-request") => self.logged_request(n, v),
            _ => {}
        }
    }

    /// The transcript read so far.
    pub(super) fn transcript(&self) -> &Transcript {
        &self.t
    }

    /// The transcript read so far, for a streaming caller to free what it is done with.
    pub(super) fn transcript_mut(&mut self) -> &mut Transcript {
        &mut self.t
    }

    /// The transcript; None when no line was recognised.
    pub(super) fn finish(self) -> Option<Transcript> {
        (self.recognised > 0 || self.logged_mode).then_some(self.t)
    }

    /// Applies usage reported for a request id to the turn carrying it (the last report wins).
    fn usage_for_ref(&mut self, r: &str, u: &Usage) {
        self.usage_by_ref.insert(r.to_string(), u.clone());
        if let Some(t) = self.t.turns.iter_mut().rev().take(KEEP_REQUESTS).find(|t| t.request_id.as_deref() == Some(r))
        {
            t.usage = Some(u.clone());
        }
    }

    fn message(&mut self, n: usize, v: &Value) {
        let s = self;
        s.recognised += 1;
        if v.get("isSidechain").and_then(Value::as_bool) == Some(true) {
            s.t.sidechain_messages += 1;
            return;
        }
        let Some(m) = v.get("message") else { return };
        let role = m.get("role").and_then(Value::as_str).unwrap_or("user");
        let blocks = as_blocks(m.get("content"));
        let epoch = s.t.segments.len() - 1;
        if role != "assistant" {
            let Some(seg) = s.t.segments.last_mut() else { return };
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
            s.usage_for_ref(r, u);
        }
        let Some(seg) = s.t.segments.last_mut() else { return };
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
            if let (false, Some(t), Some(u)) = (s.logged_mode, s.t.turns.last_mut(), usage) {
                t.usage = Some(u);
            }
            return;
        }
        let model = m.get("model").and_then(Value::as_str).unwrap_or_default().to_string();
        if model != "<synthetic>" && !s.logged_mode {
            let request_id = v.get("requestRef").and_then(Value::as_str).map(str::to_string);
            let usage = request_id.as_ref().and_then(|r| s.usage_by_ref.get(r)).cloned().or(usage);
            s.t.turns.push(Turn {
                line: n,
                timestamp_ms: ts(v),
                model,
                usage,
                messages: Messages::Segment { epoch, upto: seg.len() },
                reconstruction: Reconstruction::MessagesOnly,
                after_compaction: std::mem::take(&mut s.after_compaction),
                request_id,
            });
        }
        s.last_assistant_id = id;
        if let Some(seg) = s.t.segments.last_mut() {
            seg.push(serde_json::json!({"role": "assistant", "content": blocks}));
        }
    }

    /// Rebuilds a request from the agent's request log: the base request's first `keep` messages,
    /// then the `tail` blobs (missing blobs are filled from the conversation's latest messages).
    fn logged_request(&mut self, n: usize, v: &Value) {
        let s = self;
        let Some(id) = v.get("id").and_then(Value::as_str) else { return };
        let params = v.get("params").and_then(Value::as_object).cloned().unwrap_or_default();
        let keep = v.get("keep").and_then(Value::as_u64).unwrap_or(0) as usize;
        let base = v.get("base").and_then(Value::as_str).and_then(|b| s.requests.iter().rev().find(|(k, _)| k == b));
        let mut msgs: Vec<Value> = base
            .and_then(|(_, r)| r.get("messages"))
            .and_then(Value::as_array)
            .map(|m| m.iter().take(keep).cloned().collect())
            .unwrap_or_default();
        let tail: Vec<&str> = v
            .get("tail")
            .and_then(Value::as_array)
            .map(|t| t.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let empty = Vec::new();
        let seg = s.t.segments.last().unwrap_or(&empty);
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
        if s.requests.len() >= KEEP_REQUESTS {
            s.requests.pop_front();
        }
        s.requests.push_back((id.to_string(), body.clone()));
        if !s.logged_mode {
            // The request log replaces the turns derived from messages.
            s.logged_mode = true;
            s.t.turns.clear();
        }
        s.t.turns.push(Turn {
            line: n,
            timestamp_ms: ts(v),
            model: params.get("model").and_then(Value::as_str).unwrap_or_default().to_string(),
            usage: s.usage_by_ref.get(id).cloned(),
            messages: Messages::Body(body),
            reconstruction: if missing == 0 { Reconstruction::Exact } else { Reconstruction::Partial },
            after_compaction: std::mem::take(&mut s.after_compaction),
            request_id: Some(id.to_string()),
        });
    }
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
