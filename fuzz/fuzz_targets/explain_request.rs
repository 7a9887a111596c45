//! Fuzz target: request parsing and analysis for `explain_cache_break`. Input is JSON
//! `{"before": ..., "after": ..., "provider": ...}` as an agent would send it; transcripts are
//! refused (no path is allowed), so only the two-request path runs.
#![no_main]

use libfuzzer_sys::fuzz_target;
use refrain::prompt::Rules;
use refrain::transcript::Access;
use refrain::transcript::analyze::{ExplainInput, run_explain};
use serde_json::Value;
use std::sync::LazyLock;

static RULES: LazyLock<Rules> = LazyLock::new(Rules::builtin);

fuzz_target!(|data: &[u8]| {
    let Ok(v) = serde_json::from_slice::<Value>(data) else { return };
    let input = ExplainInput {
        before: v.get("before").cloned(),
        after: v.get("after").cloned(),
        provider: v.get("provider").and_then(Value::as_str).map(str::to_string),
        ..ExplainInput::default()
    };
    let access = Access::new(std::path::Path::new("/nonexistent-refrain-fuzz"), &[]);
    if let Ok(report) = run_explain(&input, &RULES, &access) {
        let _ = serde_json::to_string(&report);
    }
});
