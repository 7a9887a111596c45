//! Shared body of the transcript fuzz targets.

use refrain::prompt::Rules;
use refrain::prompt::compact_cost::{preview, resolve_policy};
use refrain::transcript::Transcript;
use refrain::transcript::session::explain_session;
use std::sync::LazyLock;

static RULES: LazyLock<Rules> = LazyLock::new(Rules::builtin);

/// Parses `text` and runs what `explain_cache_break` and `compact_preview` run on a transcript.
pub fn exercise(text: &str) {
    let Some(t) = Transcript::parse(text) else { return };
    for i in 0..t.turns.len().min(8) {
        let _ = t.request(i);
    }
    let model = t.model().to_string();
    let _ = explain_session(&t, &RULES, None);
    if let Ok(policy) = resolve_policy(&RULES, Some("anthropic_clear_tool_uses"), None) {
        let _ = preview(t.into_conversation(), &policy, None, &model, &RULES, false);
    }
}
