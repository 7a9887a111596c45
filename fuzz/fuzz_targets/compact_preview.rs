//! Fuzz target: `compact_preview` request parsing and the compaction itself. Input is JSON
//! `{"messages": [...], "preset": "...", "policy": {...}, "replacement_log": {...},
//! "include_messages": bool, "model": "..."}` as an agent sends it (transcripts are refused: no
//! path is allowed). Must never panic, and compacting the same input twice gives the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use refrain::budget::{Limits, Scope};
use refrain::prompt::{ReplacementLog, Rules};
use refrain::transcript::Access;
use refrain::transcript::analyze::{CompactInput, run_compact};
use serde_json::Value;
use std::sync::LazyLock;
use std::time::Duration;

static RULES: LazyLock<Rules> = LazyLock::new(Rules::builtin);

fuzz_target!(|data: &[u8]| {
    let Ok(v) = serde_json::from_slice::<Value>(data) else { return };
    let log = match v.get("replacement_log").map(|l| serde_json::from_value::<ReplacementLog>(l.clone())) {
        Some(Ok(l)) => Some(l),
        Some(Err(_)) => return,
        None => None,
    };
    let input = CompactInput {
        messages: v.get("messages").and_then(Value::as_array).cloned().or(Some(Vec::new())),
        transcript: None,
        preset: v.get("preset").and_then(Value::as_str).map(str::to_string),
        policy: v.get("policy").cloned(),
        log,
        include_messages: v.get("include_messages").and_then(Value::as_bool).unwrap_or(true),
        model: v.get("model").and_then(Value::as_str).map(str::to_string),
    };
    let access = Access::new(std::path::Path::new("/nonexistent-refrain-fuzz"), &[]);
    let _scope = Scope::enter(Limits { memory_bytes: 64 << 20, timeout: Duration::from_secs(5) });
    let first = run_compact(&input, &RULES, &access).map(|p| serde_json::to_string(&p).unwrap_or_default());
    let second = run_compact(&input, &RULES, &access).map(|p| serde_json::to_string(&p).unwrap_or_default());
    if let (Ok(a), Ok(b)) = (&first, &second) {
        assert_eq!(a, b, "compaction is not deterministic");
    }
});
