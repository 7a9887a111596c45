//! Cache-safe compaction: a policy over Anthropic-shaped messages (tool results, tool inputs,
//! thinking), deterministic placeholders, and a replacement log that can be passed back in.
//!
//! Guarantees: the same messages, policy and log always give the same bytes; decisions already in
//! a log are replayed and the messages the log covers are never re-decided, so a fork that shares
//! the prefix compacts to an identical prefix. What it costs and saves is in `compact_cost`.

use super::Error;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};

/// A compaction policy (every field optional; presets live in the rules table).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Policy {
    /// Only compact when the messages hold at least this many input tokens (0: always).
    pub trigger_tokens: u64,
    /// Keep the results of the last N tool uses.
    pub keep_tool_uses: Option<usize>,
    /// Keep everything in the last N user turns.
    pub keep_turns: Option<usize>,
    /// Never clear results of these tools.
    pub exclude_tools: Vec<String>,
    /// Only clear results of these tools (empty: all tools).
    pub only_tools: Vec<String>,
    /// Also clear the inputs of tool calls whose results are cleared.
    pub clear_tool_inputs: bool,
    /// Clear nothing unless at least this many tokens would be cleared.
    pub clear_at_least: u64,
    /// Remove thinking blocks except in the last N assistant messages.
    pub clear_thinking_keep_turns: Option<usize>,
    /// Truncate any tool result above this many tokens.
    pub result_budget_tokens: Option<u64>,
}

/// One replacement decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Replacement {
    /// What was replaced: `result:<tool_use_id>`, `input:<tool_use_id>` or `thinking:<sha256 prefix>`.
    pub target: String,
    /// `cleared`, `truncated` or `removed`.
    pub action: String,
    /// The tool, when known.
    pub tool: Option<String>,
}

/// The replacement decisions of earlier compactions.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplacementLog {
    /// Decisions, in the order they were made.
    pub entries: Vec<Replacement>,
    /// Messages covered by the log: they are only changed by replaying it.
    pub covered_messages: usize,
}

/// One action of a compaction.
#[derive(Debug, Clone, Serialize)]
pub struct Action {
    /// The decision.
    #[serde(flatten)]
    pub replacement: Replacement,
    /// Message index.
    pub message: usize,
    /// Estimated tokens before and after.
    pub tokens_before: u64,
    /// Estimated tokens after.
    pub tokens_after: u64,
    /// Replayed from the log passed in (not a new decision).
    pub replayed: bool,
}

/// What compaction did per tool.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ToolSummary {
    /// Results cleared.
    pub results_cleared: usize,
    /// Results truncated to the budget.
    pub results_truncated: usize,
    /// Inputs cleared.
    pub inputs_cleared: usize,
    /// Estimated tokens saved.
    pub tokens_saved: u64,
}

/// The outcome of applying a policy.
#[derive(Debug, Clone)]
pub struct Compacted {
    /// The compacted messages.
    pub messages: Vec<Value>,
    /// Every action.
    pub actions: Vec<Action>,
    /// The log to pass back next time.
    pub log: ReplacementLog,
    /// Tokens of the input messages.
    pub tokens_before: u64,
    /// Tokens after compaction.
    pub tokens_after: u64,
    /// Whether the trigger was reached (log replays happen regardless).
    pub triggered: bool,
    /// First message changed by a new decision (where the cached prefix breaks).
    pub first_changed: Option<usize>,
}

struct Use {
    msg: usize,
    id: String,
    name: String,
    input_tokens: u64,
}

/// Results and inputs at or below this size are left alone: the placeholder would not be smaller.
const MIN_CLEAR_TOKENS: u64 = 24;

/// What the request budget names when a compaction goes over it.
const WHAT: &str = "compaction";

/// Bytes of an `Action` besides its replacement (message index, token counts, flags).
const ACTION_BYTES: usize = 64;

impl Replacement {
    /// Approximate bytes this replacement holds (for the request budget).
    fn approx_size(&self) -> usize {
        self.target.len() + self.action.len() + self.tool.as_ref().map_or(0, String::len) + 72
    }
}

/// Applies `log` then `policy` to `messages`.
pub fn apply(messages: &[Value], policy: &Policy, log: Option<&ReplacementLog>) -> Result<Compacted, Error> {
    apply_owned(messages.to_vec(), policy, log)
}

/// Applies `log` then `policy` to owned messages (no copy of the input).
pub fn apply_owned(messages: Vec<Value>, policy: &Policy, log: Option<&ReplacementLog>) -> Result<Compacted, Error> {
    if policy.keep_tool_uses.is_none()
        && policy.keep_turns.is_none()
        && policy.result_budget_tokens.is_none()
        && policy.clear_thinking_keep_turns.is_none()
    {
        return Err(Error::BadPolicy("the policy clears nothing: set keep_tool_uses, keep_turns, result_budget_tokens or clear_thinking_keep_turns, or use a preset".into()));
    }
    let mut msgs = messages;
    let tokens_before: u64 = msgs.iter().map(msg_tokens).sum();
    let (uses, results) = index(&msgs);
    let names: HashMap<&str, &str> = uses.iter().map(|u| (u.id.as_str(), u.name.as_str())).collect();
    let log_bytes = log.map_or(0, |l| l.entries.iter().map(Replacement::approx_size).sum::<usize>());
    if !crate::budget::take(log_bytes.saturating_mul(3), WHAT) {
        return Err(Error::OverBudget(WHAT));
    }
    let prior = log.cloned().unwrap_or_default();
    let mut decided: BTreeMap<String, Replacement> = BTreeMap::new();
    for r in &prior.entries {
        decided.entry(r.target.clone()).or_insert_with(|| r.clone());
    }
    let frozen = prior.covered_messages;
    let triggered = tokens_before >= policy.trigger_tokens;
    let mut new = Vec::new();
    if triggered {
        new = decide(&msgs, policy, &uses, &results, &names, frozen, &decided)?;
    }
    let mut actions = Vec::new();
    let mut entries = prior.entries.clone();
    for r in new.iter() {
        decided.insert(r.target.clone(), r.clone());
        entries.push(r.clone());
    }
    let new_targets: std::collections::HashSet<&str> = new.iter().map(|r| r.target.as_str()).collect();
    let mut first_changed = None;
    for (i, m) in msgs.iter_mut().enumerate() {
        if !crate::budget::on_time(WHAT) {
            return Err(Error::OverBudget(WHAT));
        }
        let Some(blocks) = m.get_mut("content").and_then(Value::as_array_mut) else { continue };
        let mut keep = Vec::with_capacity(blocks.len());
        for mut b in blocks.drain(..) {
            let targets: Vec<String> = [target_of(&b), input_target(&b)].into_iter().flatten().collect();
            if targets.is_empty() {
                keep.push(b);
                continue;
            }
            for t in targets {
                if let Some(r) = decided.get(&t) {
                    if !crate::budget::take(r.approx_size() + ACTION_BYTES, WHAT) {
                        return Err(Error::OverBudget(WHAT));
                    }
                    let before = value_tokens(&b);
                    // Truncating copies the result's text once.
                    if r.action == "truncated" && !crate::budget::take(before as usize * 4, WHAT) {
                        return Err(Error::OverBudget(WHAT));
                    }
                    let removed = replace(&mut b, r, policy.result_budget_tokens.unwrap_or(0));
                    let after = if removed { 0 } else { value_tokens(&b) };
                    if before != after || removed {
                        let fresh = new_targets.contains(t.as_str());
                        if fresh && first_changed.is_none_or(|f| i < f) {
                            first_changed = Some(i);
                        }
                        actions.push(Action {
                            replacement: r.clone(),
                            message: i,
                            tokens_before: before,
                            tokens_after: after,
                            replayed: !fresh,
                        });
                    }
                    if removed {
                        break;
                    }
                }
            }
            if !b.is_null() {
                keep.push(b);
            }
        }
        *blocks = keep;
    }
    let tokens_after = msgs.iter().map(msg_tokens).sum();
    let log = ReplacementLog { entries, covered_messages: msgs.len().max(frozen) };
    Ok(Compacted { messages: msgs, actions, log, tokens_before, tokens_after, triggered, first_changed })
}

fn msg_tokens(m: &Value) -> u64 {
    value_tokens(m)
}

/// Estimated tokens of a value's compact JSON, computed without serialising it.
pub fn value_tokens(v: &Value) -> u64 {
    (json_len(v) as u64).div_ceil(4)
}

/// Byte length of a value's compact JSON serialisation.
pub fn json_bytes(v: &Value) -> usize {
    json_len(v)
}

fn json_len(v: &Value) -> usize {
    match v {
        Value::Null => 4,
        Value::Bool(b) => {
            if *b {
                4
            } else {
                5
            }
        }
        Value::Number(n) => n.to_string().len(),
        Value::String(s) => str_len(s),
        Value::Array(a) => 2 + a.iter().map(json_len).sum::<usize>() + a.len().saturating_sub(1),
        Value::Object(o) => {
            2 + o.iter().map(|(k, x)| str_len(k) + 1 + json_len(x)).sum::<usize>() + o.len().saturating_sub(1)
        }
    }
}

fn str_len(s: &str) -> usize {
    2 + s.len()
        + s.bytes()
            .map(|b| match b {
                b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 1,
                0..=0x1f => 5,
                _ => 0,
            })
            .sum::<usize>()
}

fn index(msgs: &[Value]) -> (Vec<Use>, Vec<(usize, String, u64)>) {
    let mut uses = Vec::new();
    let mut results = Vec::new();
    for (i, m) in msgs.iter().enumerate() {
        for b in m.get("content").and_then(Value::as_array).into_iter().flatten() {
            let s = |k: &str| b.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
            match b.get("type").and_then(Value::as_str) {
                Some("tool_use" | "server_tool_use") => uses.push(Use {
                    msg: i,
                    id: s("id"),
                    name: s("name"),
                    input_tokens: b.get("input").map(value_tokens).unwrap_or(0),
                }),
                // The content alone: it is what a clearing replaces.
                Some("tool_result") => {
                    results.push((i, s("tool_use_id"), b.get("content").map(value_tokens).unwrap_or(0)))
                }
                _ => {}
            }
        }
    }
    (uses, results)
}

fn human_turn_starts(msgs: &[Value]) -> Vec<usize> {
    msgs.iter()
        .enumerate()
        .filter(|(_, m)| m.get("role").and_then(Value::as_str) == Some("user"))
        .filter(|(_, m)| match m.get("content") {
            Some(Value::String(_)) => true,
            Some(Value::Array(bs)) => {
                bs.iter().any(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                    && !bs.iter().any(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
            }
            _ => false,
        })
        .map(|(i, _)| i)
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn decide(
    msgs: &[Value],
    p: &Policy,
    uses: &[Use],
    results: &[(usize, String, u64)],
    names: &HashMap<&str, &str>,
    frozen: usize,
    done: &BTreeMap<String, Replacement>,
) -> Result<Vec<Replacement>, Error> {
    let turns = human_turn_starts(msgs);
    let turn_floor =
        p.keep_turns.map(|n| if n == 0 { msgs.len() } else { turns.iter().rev().nth(n - 1).copied().unwrap_or(0) });
    let use_floor = p
        .keep_tool_uses
        .map(|n| if n == 0 { usize::MAX } else { uses.iter().rev().nth(n - 1).map(|u| u.msg).unwrap_or(0) });
    let kept_ids: std::collections::HashSet<&str> =
        p.keep_tool_uses.map(|n| uses.iter().rev().take(n).map(|u| u.id.as_str()).collect()).unwrap_or_default();
    let mut input_tokens_of: HashMap<&str, u64> = HashMap::new();
    for u in uses {
        input_tokens_of.entry(u.id.as_str()).or_insert(u.input_tokens);
    }
    let placeholders = placeholder_results(msgs);
    let mut out = Vec::new();
    let mut cleared_tokens = 0;
    for (msg, id, tokens) in results {
        if !crate::budget::take(id.len() + 96, WHAT) {
            return Err(Error::OverBudget(WHAT));
        }
        let target = format!("result:{id}");
        if *msg < frozen || done.contains_key(&target) {
            continue;
        }
        let tool = names.get(id.as_str()).map(|s| s.to_string());
        let tname = tool.clone().unwrap_or_default();
        let old_by_uses = use_floor.is_some() && !kept_ids.contains(id.as_str());
        let old_by_turns = turn_floor.is_some_and(|f| *msg < f);
        let protected_by_turns = turn_floor.is_some_and(|f| *msg >= f);
        let eligible = !p.exclude_tools.contains(&tname) && (p.only_tools.is_empty() || p.only_tools.contains(&tname));
        // Clearing must remove tokens: the content must outweigh the placeholder it becomes.
        let shown = tool.as_deref().unwrap_or("tool");
        let placeholder = value_tokens(&Value::String(cleared_result(shown, id)));
        let big_enough = *tokens > MIN_CLEAR_TOKENS.max(placeholder);
        if eligible
            && big_enough
            && (old_by_uses || old_by_turns)
            && !protected_by_turns
            && !placeholders.contains(&(*msg, id.as_str()))
        {
            cleared_tokens += tokens;
            out.push(Replacement { target, action: "cleared".into(), tool: tool.clone() });
            let input_tokens = input_tokens_of.get(id.as_str()).copied().unwrap_or(0);
            let input_placeholder = value_tokens(&cleared_input(shown, id));
            if p.clear_tool_inputs && input_tokens > MIN_CLEAR_TOKENS.max(input_placeholder) {
                out.push(Replacement { target: format!("input:{id}"), action: "cleared".into(), tool });
            }
        } else if let Some(budget) = p.result_budget_tokens
            && *tokens > budget + 16
        {
            out.push(Replacement { target, action: "truncated".into(), tool });
        }
    }
    if cleared_tokens < p.clear_at_least {
        out.retain(|r| r.action != "cleared");
    }
    if let Some(keep) = p.clear_thinking_keep_turns {
        let assistants: Vec<usize> = msgs
            .iter()
            .enumerate()
            .filter(|(_, m)| m.get("role").and_then(Value::as_str) == Some("assistant"))
            .map(|(i, _)| i)
            .collect();
        let floor = if keep == 0 { usize::MAX } else { assistants.iter().rev().nth(keep - 1).copied().unwrap_or(0) };
        for (i, m) in msgs.iter().enumerate().filter(|(i, _)| *i >= frozen && *i < floor) {
            for b in m.get("content").and_then(Value::as_array).into_iter().flatten() {
                if !crate::budget::on_time(WHAT) {
                    return Err(Error::OverBudget(WHAT));
                }
                if let Some(t) = target_of(b).filter(|t| t.starts_with("thinking:"))
                    && !done.contains_key(&t)
                {
                    let _ = i;
                    out.push(Replacement { target: t, action: "removed".into(), tool: None });
                }
            }
        }
    }
    Ok(out)
}

/// The (message, tool_use_id) of every result already cleared by an earlier compaction, found in
/// one pass (a per-result scan of its message would be quadratic in a message's blocks).
fn placeholder_results(msgs: &[Value]) -> std::collections::HashSet<(usize, &str)> {
    let mut out = std::collections::HashSet::new();
    for (i, m) in msgs.iter().enumerate() {
        for b in m.get("content").and_then(Value::as_array).into_iter().flatten() {
            if let Some(id) = b.get("tool_use_id").and_then(Value::as_str)
                && content_starts_with(b, "[refrain: cleared")
            {
                out.insert((i, id));
            }
        }
    }
    out
}

/// Whether `content_text(b)` starts with `prefix` (a prefix without a newline), without copying it.
fn content_starts_with(b: &Value, prefix: &str) -> bool {
    match b.get("content") {
        Some(Value::String(s)) => s.starts_with(prefix),
        Some(Value::Array(parts)) => {
            parts.iter().find_map(|p| p.get("text").and_then(Value::as_str)).is_some_and(|t| t.starts_with(prefix))
        }
        _ => false,
    }
}

fn target_of(b: &Value) -> Option<String> {
    match b.get("type").and_then(Value::as_str)? {
        "tool_result" => Some(format!("result:{}", b.get("tool_use_id")?.as_str()?)),
        "thinking" | "redacted_thinking" => {
            let text = b.get("thinking").or_else(|| b.get("data")).map(Value::to_string).unwrap_or_default();
            Some(format!("thinking:{}", &hex::encode(Sha256::digest(text.as_bytes()))[..16]))
        }
        _ => None,
    }
}

fn input_target(b: &Value) -> Option<String> {
    (b.get("type").and_then(Value::as_str)? == "tool_use")
        .then(|| Some(format!("input:{}", b.get("id")?.as_str()?)))
        .flatten()
}

fn content_text(b: &Value) -> String {
    match b.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => {
            parts.iter().filter_map(|p| p.get("text").and_then(Value::as_str)).collect::<Vec<_>>().join("\n")
        }
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

/// What a cleared result's content becomes.
fn cleared_result(tool: &str, id: &str) -> String {
    format!("[refrain: cleared result of {tool} ({id})]")
}

/// What a cleared tool input becomes.
fn cleared_input(tool: &str, id: &str) -> Value {
    json!({"refrain_cleared": format!("[refrain: cleared input of {tool} ({id})]")})
}

/// Applies one decision to a block. Returns true when the block is removed (set to null).
fn replace(b: &mut Value, r: &Replacement, budget: u64) -> bool {
    let tool = r.tool.as_deref().unwrap_or("tool");
    let id = r.target.split_once(':').map(|x| x.1).unwrap_or_default();
    match (r.target.split(':').next(), r.action.as_str()) {
        (Some("thinking"), _) => {
            *b = Value::Null;
            true
        }
        (Some("input"), _) if b.get("type").and_then(Value::as_str) == Some("tool_use") => {
            b["input"] = cleared_input(tool, id);
            false
        }
        (Some("result"), "cleared") if b.get("type").and_then(Value::as_str) == Some("tool_result") => {
            b["content"] = Value::String(cleared_result(tool, id));
            false
        }
        (Some("result"), "truncated") if b.get("type").and_then(Value::as_str) == Some("tool_result") => {
            let text = content_text(b);
            let note = format!("\n[refrain: truncated result of {tool} ({id}) to {budget} tokens]");
            let keep_bytes = (budget as usize * 4).saturating_sub(note.len() + 64);
            if text.len() > keep_bytes + note.len() {
                let mut cut = keep_bytes.min(text.len());
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                b["content"] = Value::String(format!("{}{note}", &text[..cut]));
            }
            false
        }
        _ => false,
    }
}

/// Per-tool totals of a set of actions.
pub fn per_tool(actions: &[Action]) -> BTreeMap<String, ToolSummary> {
    let mut out: BTreeMap<String, ToolSummary> = BTreeMap::new();
    for a in actions {
        let key = a.replacement.tool.clone().unwrap_or_else(|| {
            if a.replacement.target.starts_with("thinking") { "(thinking)".into() } else { "(unknown tool)".into() }
        });
        let s = out.entry(key).or_default();
        match (a.replacement.target.split(':').next(), a.replacement.action.as_str()) {
            (Some("input"), _) => s.inputs_cleared += 1,
            (_, "truncated") => s.results_truncated += 1,
            (Some("result"), _) => s.results_cleared += 1,
            _ => {}
        }
        s.tokens_saved += a.tokens_before.saturating_sub(a.tokens_after);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    /// A Claude Code-like conversation: `n` tool uses (Read/Bash/Edit in turn), thinking in each
    /// assistant message.
    fn convo(n: usize, start: usize) -> Vec<Value> {
        let mut m = Vec::new();
        if start == 0 {
            m.push(json!({"role": "user", "content": [{"type": "text", "text": "fix the bug"}]}));
        }
        for i in start..start + n {
            let name = ["Read", "Bash", "Edit"][i % 3];
            let id = format!("toolu_{i:03}");
            m.push(json!({"role": "assistant", "content": [
                {"type": "thinking", "thinking": format!("plan step {i}"), "signature": "sig"},
                {"type": "tool_use", "id": id, "name": name, "input": {"path": format!("src/f{i}.rs"), "new_text": "y".repeat(200)}}]}));
            m.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": format!("line {i}\n").repeat(400)}]}));
        }
        m
    }

    fn policy(keep: usize) -> Policy {
        Policy { keep_tool_uses: Some(keep), ..Policy::default() }
    }

    fn bytes(m: &[Value]) -> String {
        serde_json::to_string(m).unwrap()
    }

    #[test]
    fn same_input_and_log_give_the_same_bytes() {
        let m = convo(8, 0);
        let p = Policy { clear_thinking_keep_turns: Some(1), clear_tool_inputs: true, ..policy(3) };
        let first = apply(&m, &p, None).unwrap();
        let again = apply(&m, &p, None).unwrap();
        assert_eq!(bytes(&first.messages), bytes(&again.messages));
        let replayed = apply(&m, &p, Some(&first.log)).unwrap();
        assert_eq!(bytes(&first.messages), bytes(&replayed.messages));
        assert!(replayed.actions.iter().all(|a| a.replayed), "no new decisions on replay");
        assert_eq!(replayed.first_changed, None, "replaying the log keeps the cached prefix");
        let twice = apply(&first.messages, &p, Some(&first.log)).unwrap();
        assert_eq!(bytes(&first.messages), bytes(&twice.messages), "compacting the compacted output changes nothing");
    }

    #[test]
    fn a_fork_sharing_the_prefix_compacts_to_an_identical_prefix() {
        let parent = convo(6, 0);
        let p = policy(2);
        let c1 = apply(&parent, &p, None).unwrap();
        let mut fork = parent.clone();
        fork.extend(convo(4, 6));
        let c2 = apply(&fork, &p, Some(&c1.log)).unwrap();
        assert_eq!(bytes(&c2.messages[..parent.len()]), bytes(&c1.messages));
        assert!(c2.actions.iter().any(|a| !a.replayed), "new results in the fork are still compacted");
        assert!(c2.first_changed.is_some_and(|i| i >= parent.len()));
    }

    #[rstest]
    #[case::keep_three(policy(3), 5, 0)]
    #[case::keep_all(policy(100), 0, 0)]
    #[case::exclude_edit(Policy { exclude_tools: vec!["Edit".into()], ..policy(3) }, 4, 0)]
    #[case::only_read(Policy { only_tools: vec!["Read".into()], ..policy(3) }, 2, 0)]
    #[case::with_inputs(Policy { clear_tool_inputs: true, ..policy(3) }, 5, 5)]
    #[case::clear_at_least_not_met(Policy { clear_at_least: 1_000_000, ..policy(3) }, 0, 0)]
    #[case::trigger_not_reached(Policy { trigger_tokens: 1_000_000, ..policy(3) }, 0, 0)]
    fn policies_clear_what_they_say(#[case] p: Policy, #[case] results: usize, #[case] inputs: usize) {
        let c = apply(&convo(8, 0), &p, None).unwrap();
        let count = |prefix: &str| c.actions.iter().filter(|a| a.replacement.target.starts_with(prefix)).count();
        assert_eq!(count("result:"), results);
        assert_eq!(count("input:"), inputs);
        assert!(c.tokens_after <= c.tokens_before);
        if results > 0 {
            let text = bytes(&c.messages);
            assert!(text.contains("[refrain: cleared result of Read (toolu_000)]"));
            assert!(text.contains(&"line 7\\n".repeat(10)), "the newest result is kept");
        }
    }

    #[test]
    fn thinking_is_removed_except_the_last_turns() {
        let p = Policy { clear_thinking_keep_turns: Some(2), ..Policy::default() };
        let c = apply(&convo(5, 0), &p, None).unwrap();
        let thinking = bytes(&c.messages).matches("\"thinking\"").count();
        assert_eq!(c.actions.len(), 3);
        assert_eq!(thinking, 2 * 2, "type and field of the two kept blocks");
    }

    #[test]
    fn oversized_results_are_truncated_to_the_budget_once() {
        let p = Policy { result_budget_tokens: Some(300), ..Policy::default() };
        let c = apply(&convo(2, 0), &p, None).unwrap();
        assert_eq!(c.actions.len(), 2);
        assert!(c.actions.iter().all(|a| a.tokens_after <= 300 + 40), "{:?}", c.actions);
        let again = apply(&c.messages, &p, None).unwrap();
        assert!(again.actions.is_empty(), "truncated results fit the budget");
    }

    #[test]
    fn value_tokens_match_the_serialised_length() {
        let v = json!({"a": [1, true, null, "q\"uote\n\u{1}é"], "b": {"c": -2.5}});
        assert_eq!(json_len(&v), v.to_string().len());
    }

    #[test]
    fn a_policy_that_clears_nothing_is_refused() {
        assert!(apply(&convo(1, 0), &Policy::default(), None).is_err());
    }

    #[test]
    fn decisions_past_the_request_budget_are_refused_naming_compaction() {
        use crate::budget::{Exceeded, Limits, Scope, exceeded};
        let _s = Scope::enter(Limits { memory_bytes: 4096, timeout: std::time::Duration::from_secs(60) });
        let err = apply_owned(convo(200, 0), &policy(1), None).err();
        assert!(matches!(err, Some(Error::OverBudget("compaction"))), "{err:?}");
        assert_eq!(exceeded(), Some(Exceeded::Memory("compaction")));
    }

    #[test]
    fn a_result_cleared_earlier_is_not_cleared_again() {
        let p = Policy { trigger_tokens: 0, ..policy(1) };
        let once = apply(&convo(6, 0), &p, None).unwrap();
        assert_eq!(once.actions.iter().filter(|a| a.replacement.target.starts_with("result:")).count(), 5);
        let again = apply_owned(once.messages, &p, None).unwrap();
        assert!(again.actions.is_empty(), "cleared again: {:?}", again.actions);
    }
}
