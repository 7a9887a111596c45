//! Fuzz target: trace extraction (`plan_store` with a trace). Input is JSON `{"task": "...",
//! "trace": {"context": {...}, "steps": [...]}}`. Runs inside a request budget, as the server does:
//! extraction must end (no loop on any value, the empty string included), never panic, and a
//! template it returns within budget must pass the template checks and keep its slots' names.
#![no_main]

use libfuzzer_sys::fuzz_target;
use refrain::budget::{self, Limits, Scope};
use refrain::plan::extract::{Trace, extract};
use serde_json::Value;
use std::time::Duration;

fuzz_target!(|data: &[u8]| {
    let Ok(v) = serde_json::from_slice::<Value>(data) else { return };
    let task = v.get("task").and_then(Value::as_str).unwrap_or("");
    let Some(Ok(trace)) = v.get("trace").map(|t| serde_json::from_value::<Trace>(t.clone())) else { return };
    let _scope = Scope::enter(Limits { memory_bytes: 16 << 20, timeout: Duration::from_secs(5) });
    if let Ok(e) = extract(task, &trace)
        && budget::exceeded().is_none()
    {
        assert!(e.confidence >= 0.0 && e.confidence <= 1.0, "confidence {}", e.confidence);
        assert!(!e.template.slots.is_empty(), "an extracted template without slots");
        assert!(e.template.slots.iter().all(|s| !s.name.is_empty()), "a slot without a name");
    }
});
