//! The compaction report: tokens before/after, per-tool actions, where the cached prefix breaks,
//! and whether the next request's cache write pays for what the clearing saves.

use super::compact::{self, Action, Policy, ReplacementLog, ToolSummary};
use super::request::Provider;
use super::rules::Rules;
use super::{Error, TOKEN_COUNTING};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// Cache economics of a compaction.
#[derive(Debug, Clone, Serialize)]
pub struct CacheImpact {
    /// First message whose bytes change (the cached prefix breaks there); None: prefix intact.
    pub breaks_at_message: Option<usize>,
    /// Tokens before that message, still read from the cache.
    pub prefix_tokens_kept: u64,
    /// Tokens the next request must write to the cache.
    pub write_tokens: u64,
    /// USD of the next request's input without compaction (all read from cache).
    pub next_request_usd_without: f64,
    /// USD of the next request's input with compaction (kept prefix read, rest written).
    pub next_request_usd_with: f64,
    /// USD saved on every later request (fewer tokens read).
    pub saving_per_later_request_usd: f64,
    /// Later requests after which the compaction has paid for its cache write (None: never).
    pub pays_back_after_requests: Option<u64>,
    /// One sentence.
    pub verdict: String,
}

/// The full compaction preview.
#[derive(Debug, Clone, Serialize)]
pub struct CompactionPlan {
    /// Whether the messages reached the policy's trigger.
    pub triggered: bool,
    /// The policy applied.
    pub policy: Policy,
    /// Tokens before.
    pub tokens_before: u64,
    /// Tokens after.
    pub tokens_after: u64,
    /// How tokens were counted.
    pub counting: String,
    /// Every action.
    pub actions: Vec<Action>,
    /// Totals per tool.
    pub per_tool: BTreeMap<String, ToolSummary>,
    /// What it does to the prompt cache.
    pub cache: CacheImpact,
    /// The log to pass back next time (same input + log = same bytes).
    pub log: ReplacementLog,
    /// The compacted messages, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<Value>>,
}

/// Compacts and prices the result. `model` selects prices (Anthropic rules when it names Claude).
pub fn preview(
    messages: Vec<Value>,
    policy: &Policy,
    log: Option<&ReplacementLog>,
    model: &str,
    rules: &Rules,
    include_messages: bool,
) -> Result<CompactionPlan, Error> {
    let c = compact::apply_owned(messages, policy, log)?;
    let provider =
        if model.is_empty() || model.contains("claude") { Provider::Anthropic } else { Provider::OpenAiChat };
    let pr = rules.provider(provider);
    let fam = pr.family(if model.is_empty() { "claude-sonnet" } else { model });
    let price = fam.input_usd_per_mtok / 1e6;
    let (wm, rm) = (pr.write_mult(&pr.ttl_default), pr.read_mult(&fam));
    let kept: u64 = match c.first_changed {
        Some(i) => c.messages[..i].iter().map(compact::value_tokens).sum(),
        None => c.tokens_after,
    };
    let write_tokens = c.tokens_after.saturating_sub(kept);
    let without = c.tokens_before as f64 * price * rm;
    let with = kept as f64 * price * rm + write_tokens as f64 * price * wm;
    let saving = c.tokens_before.saturating_sub(c.tokens_after) as f64 * price * rm;
    let extra = with - without;
    let pays = if c.first_changed.is_none() {
        Some(0)
    } else if saving > 0.0 {
        Some((extra.max(0.0) / saving).ceil() as u64)
    } else {
        None
    };
    let verdict = match (c.first_changed, pays) {
        (None, _) => "no new clearing: the cached prefix stays byte-identical".to_string(),
        (Some(i), Some(n)) => format!(
            "the cached prefix breaks at message {i}: the next request writes ~{write_tokens} tokens (${with:.4} instead of ${without:.4}); the clearing saves ${saving:.4} per later request and pays back after {n} more requests"
        ),
        (Some(i), None) => {
            format!("the cached prefix breaks at message {i} and the clearing saves nothing: it does not pay")
        }
    };
    let cache = CacheImpact {
        breaks_at_message: c.first_changed,
        prefix_tokens_kept: kept,
        write_tokens,
        next_request_usd_without: without,
        next_request_usd_with: with,
        saving_per_later_request_usd: saving,
        pays_back_after_requests: pays,
        verdict,
    };
    Ok(CompactionPlan {
        triggered: c.triggered,
        policy: policy.clone(),
        tokens_before: c.tokens_before,
        tokens_after: c.tokens_after,
        counting: TOKEN_COUNTING.into(),
        per_tool: compact::per_tool(&c.actions),
        actions: c.actions,
        cache,
        log: c.log,
        messages: include_messages.then_some(c.messages),
    })
}

/// A policy from a preset name, overridden field by field by `overrides` (a JSON object).
pub fn resolve_policy(rules: &Rules, preset: Option<&str>, overrides: Option<&Value>) -> Result<Policy, Error> {
    let mut base = match preset {
        Some(name) => serde_json::to_value(rules.presets.get(name).ok_or_else(|| {
            Error::BadPolicy(format!(
                "unknown preset {name}; known presets: {}",
                rules.presets.keys().cloned().collect::<Vec<_>>().join(", ")
            ))
        })?)
        .map_err(|e| Error::BadPolicy(e.to_string()))?,
        None => Value::Object(Default::default()),
    };
    if let (Some(Value::Object(o)), Value::Object(b)) = (overrides, &mut base) {
        for (k, v) in o {
            if !v.is_null() {
                b.insert(k.clone(), v.clone());
            }
        }
    }
    serde_json::from_value(base).map_err(|e| Error::BadPolicy(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn convo(results: usize, bytes: usize) -> Vec<Value> {
        let mut m = vec![json!({"role": "user", "content": [{"type": "text", "text": "go"}]})];
        for i in 0..results {
            let id = format!("toolu_{i}");
            m.push(
                json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "Read", "input": {}}]}),
            );
            m.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "z".repeat(bytes)}]}));
        }
        m
    }

    #[test]
    fn presets_resolve_and_fields_override_them() {
        let rules = Rules::builtin();
        let p = resolve_policy(&rules, Some("anthropic_clear_tool_uses"), Some(&json!({"keep_tool_uses": 5}))).unwrap();
        assert_eq!((p.trigger_tokens, p.keep_tool_uses), (100_000, Some(5)));
        assert!(resolve_policy(&rules, Some("nope"), None).unwrap_err().to_string().contains("known presets"));
        assert!(resolve_policy(&rules, None, Some(&json!({"keep_tool_use": 1}))).is_err(), "typos are refused");
    }

    #[test]
    fn clearing_big_old_results_pays_back_and_names_the_break() {
        let rules = Rules::builtin();
        let p = resolve_policy(&rules, Some("anthropic_clear_tool_uses"), Some(&json!({"trigger_tokens": 0}))).unwrap();
        let plan = preview(convo(10, 40_000), &p, None, "claude-sonnet-4-5", &rules, false).unwrap();
        assert_eq!(plan.per_tool["Read"].results_cleared, 7);
        assert_eq!(plan.cache.breaks_at_message, Some(2));
        assert!(plan.cache.pays_back_after_requests.is_some_and(|n| n >= 1), "{}", plan.cache.verdict);
        assert!(plan.messages.is_none());
    }

    mod props {
        use super::*;
        use proptest::prelude::*;

        /// A conversation of tool uses with results of random tools and sizes, some thinking.
        fn conversation() -> impl Strategy<Value = Vec<Value>> {
            let tool = prop::sample::select(vec!["Read", "Bash", "Grep", "Edit", "WebFetch"]);
            prop::collection::vec((tool, 0usize..3000, any::<bool>()), 1..14).prop_map(|uses| {
                let mut m = vec![json!({"role": "user", "content": [{"type": "text", "text": "go"}]})];
                for (i, (name, size, think)) in uses.into_iter().enumerate() {
                    let id = format!("toolu_{i}");
                    let mut content = vec![json!({"type": "tool_use", "id": id, "name": name, "input": {"n": i}})];
                    if think {
                        content.insert(0, json!({"type": "thinking", "thinking": "t".repeat(size / 3), "signature": "s"}));
                    }
                    m.push(json!({"role": "assistant", "content": content}));
                    m.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "x".repeat(size)}]}));
                }
                m
            })
        }

        fn policy() -> impl Strategy<Value = Policy> {
            (0usize..5, prop::option::of(0usize..3), prop::option::of(10u64..400), any::<bool>()).prop_map(
                |(keep, thinking, budget, inputs)| Policy {
                    keep_tool_uses: Some(keep),
                    clear_thinking_keep_turns: thinking,
                    result_budget_tokens: budget,
                    clear_tool_inputs: inputs,
                    ..Policy::default()
                },
            )
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(64))]
            /// Same messages + policy -> byte-identical preview; replaying its log on the same
            /// messages gives the same messages again.
            #[test]
            fn preview_is_deterministic_and_its_log_replays(m in conversation(), p in policy()) {
                let rules = Rules::builtin();
                let a = preview(m.clone(), &p, None, "claude-sonnet-4-5", &rules, true).unwrap();
                let b = preview(m.clone(), &p, None, "claude-sonnet-4-5", &rules, true).unwrap();
                prop_assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap());
                let replay = preview(m, &p, Some(&a.log), "claude-sonnet-4-5", &rules, true).unwrap();
                prop_assert_eq!(&replay.messages, &a.messages);
                prop_assert!(a.tokens_after <= a.tokens_before);
            }
        }
    }
}
