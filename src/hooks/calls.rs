//! The one place that spells the tool names hooks call and the JSON arguments they send, and
//! reads the tools' structured answers. Align it here when a tool's schema changes.

use super::trace::Trace;
use super::{Agent, Event, Payload};
use serde_json::{Value, json};

/// Looks a task up in the plan cache.
pub const PLAN_LOOKUP: &str = "plan_lookup";
/// Stores a plan (here: an executed trace).
pub const PLAN_STORE: &str = "plan_store";
/// Caches a read-only tool result.
pub const RESPONSE_CACHE_PUT: &str = "response_cache_put";
/// Looks a cached tool result up.
pub const RESPONSE_CACHE_GET: &str = "response_cache_get";
/// Invalidates cached results that depend on paths.
pub const RESPONSE_CACHE_INVALIDATE: &str = "response_cache_invalidate";
/// Notes a session event (compaction).
pub const SESSION_EVENT: &str = "session_event";

/// The namespace hook-recorded results live in (one per agent: tool names differ between agents).
pub fn namespace(agent: Agent) -> String {
    format!("hooks/{}", agent.name())
}

/// `plan_lookup` for a submitted prompt (the values come from the prompt itself).
pub fn plan_lookup(prompt: &str, _p: &Payload) -> Value {
    json!({"task": prompt, "via_hook": true})
}

/// Most steps sent for one turn.
const MAX_STEPS: usize = 50;

/// `plan_store` with an executed trace: the todo items (as `todo` steps) then the tool calls,
/// each as a plan step `{tool, inputs, side_effect, family}` with its real values.
pub fn plan_store(agent: Agent, t: &Trace, _p: &Payload) -> Value {
    let todos = t.steps.iter().map(|s| json!({"tool": "todo", "inputs": {"text": s}, "side_effect": false}));
    let calls = t.calls.iter().map(|c| {
        let tool = c.get("tool").and_then(Value::as_str).unwrap_or_default();
        let (family, side_effect) = super::classify::family(&super::names::tool(agent, tool));
        json!({"tool": tool, "inputs": c.get("input").cloned().unwrap_or(json!({})), "side_effect": side_effect, "family": family})
    });
    let steps: Vec<Value> = todos.chain(calls).take(MAX_STEPS).collect();
    json!({"task": t.task, "trace": {"steps": steps}})
}

/// `response_cache_put` for a read-only tool's result; None when there is no result to store.
/// Web searches also send their query, so later searches can find the result by meaning.
pub fn response_cache_put(agent: Agent, p: &Payload, files: &[String], trees: &[String]) -> Option<Value> {
    let args = p.tool_input.clone().unwrap_or(json!({}));
    let query = args.get("query").and_then(Value::as_str).map(str::to_string);
    Some(json!({
        "namespace": namespace(agent),
        "tool": p.tool_name.as_deref()?,
        "args": args,
        "result": p.tool_response.clone()?,
        "query": query,
        "read_only": true,
        "files": files,
        "trees": trees,
    }))
}

/// `response_cache_get` for a tool about to run.
pub fn response_cache_get(agent: Agent, p: &Payload) -> Option<Value> {
    Some(json!({
        "namespace": namespace(agent),
        "tool": p.tool_name.as_deref()?,
        "args": p.tool_input.clone().unwrap_or(json!({})),
    }))
}

/// `response_cache_invalidate` for paths a write touched (a directory covers everything under it).
pub fn invalidate(paths: &[String]) -> Value {
    json!({"paths": paths})
}

/// `session_event` for a compaction.
pub fn session_event(agent: Agent, event: Event, p: &Payload) -> Value {
    json!({
        "agent": agent.name(),
        "event": event.name(),
        "session_id": p.session_id,
        "transcript_path": p.transcript_path,
        "trigger": p.trigger,
        "at_ms": crate::results::entry::now_ms(),
    })
}

/// The session event noting a read answered by a note (`session_event` counts it in stats).
pub fn dedup_event(agent: Agent, p: &Payload, d: &super::dedup::Dedup) -> Value {
    json!({
        "agent": agent.name(),
        "event": READ_DEDUPLICATED,
        "session_id": p.session_id,
        "transcript_path": p.transcript_path,
        "trigger": if d.changed { "diff" } else { "unchanged" },
        "tokens_saved": d.tokens_saved,
        "removed_text": d.replaced,
        "added_text": d.note,
        "subject": d.path,
        "at_ms": crate::results::entry::now_ms(),
    })
}

/// The session event of a model request about to be sent: with `added`, the text a hook put
/// into the context for it (`Injected`), else a bare `Request`.
pub fn request_event(agent: Agent, p: &Payload, added: Option<(&str, &str)>) -> Value {
    let mut v = json!({
        "agent": agent.name(),
        "event": if added.is_some() { INJECTED } else { REQUEST },
        "session_id": p.session_id,
        "at_ms": crate::results::entry::now_ms(),
    });
    if let Some((text, subject)) = added {
        v["added_text"] = json!(text);
        v["subject"] = json!(subject);
    }
    v
}

/// The session event name of a deduplicated read.
pub const READ_DEDUPLICATED: &str = "ReadDeduplicated";
/// The session event name of a model request about to be sent (refrain's tool list is paid again).
pub const REQUEST: &str = "Request";
/// The session event name of text a hook added to the agent's context.
pub const INJECTED: &str = "Injected";
/// How an injected block of near plans names itself in the ledger (then the first plan's id):
/// the server counts these blocks (`plan::restraint`).
pub const SUGGESTED: &str = "suggested ";

/// A plan lookup hit, as the prompt hook shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanHit {
    /// The plan id to report with plan_feedback.
    pub plan_id: Option<String>,
    /// The filled plan (steps or the whole plan object).
    pub plan: Value,
    /// The match score.
    pub score: Option<f64>,
    /// Where the plan came from.
    pub provenance: Option<Value>,
    /// Successes this user reported for the plan before this hit.
    pub own_successes: u64,
}

/// Reads a `plan_lookup` answer (`{status, hit: {plan_id, score, steps, provenance}}`); None on a miss.
pub fn read_plan_hit(out: &Value) -> Option<PlanHit> {
    if out.get("status").and_then(Value::as_str) != Some("hit") {
        return None;
    }
    let hit = out.get("hit")?;
    let plan_id = hit.get("plan_id").map(|v| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string()));
    Some(PlanHit {
        plan_id,
        plan: hit.clone(),
        score: hit.get("score").and_then(Value::as_f64),
        provenance: hit.get("provenance").cloned(),
        own_successes: hit.pointer("/counters/own_successes").and_then(Value::as_u64).unwrap_or(0),
    })
}

/// A near plan a missed lookup suggested.
#[derive(Debug, Clone, PartialEq)]
pub struct NearPlan {
    /// Its id (the first characters are enough to take it).
    pub plan_id: String,
    /// The task it was stored for.
    pub task: String,
    /// Its score.
    pub score: f64,
    /// Its values against the new task's ("`30` vs yours `7`"), empty when they share all.
    pub differs: String,
}

/// Reads a missed `plan_lookup` answer's suggestions no gate refused, when the best clears
/// `floor`; at most two (the block they make stays within its budget).
pub fn read_suggestions(out: &Value, floor: f32) -> Vec<NearPlan> {
    // What a gate refused is for an agent that asked to judge, not for a hook to offer unasked.
    let list: Vec<Value> = out
        .get("suggestions")
        .and_then(Value::as_array)
        .map(|l| l.iter().filter(|s| s.get("gated").and_then(Value::as_bool) != Some(true)).cloned().collect())
        .unwrap_or_default();
    let best = list.first().and_then(|s| s.get("score")).and_then(Value::as_f64).unwrap_or(0.0);
    if out.get("status").and_then(Value::as_str) != Some("miss") || best < f64::from(floor) {
        return Vec::new();
    }
    list.iter()
        .take(2)
        .filter_map(|s| {
            let differs = s
                .get("differs")
                .and_then(|d| serde_json::from_value::<crate::plan::report::Differs>(d.clone()).ok())
                .map(|d| d.phrase())
                .unwrap_or_default();
            Some(NearPlan {
                plan_id: s.get("plan_id")?.as_str()?.to_string(),
                task: s.get("task")?.as_str()?.to_string(),
                score: s.get("score").and_then(Value::as_f64).unwrap_or(0.0),
                differs,
            })
        })
        .collect()
}

/// Reads a `response_cache_get` answer (`{status, result}`); the cached result on a fresh hit.
pub fn read_cache_hit(out: &Value) -> Option<Value> {
    if out.get("status").and_then(Value::as_str) != Some("hit") {
        return None;
    }
    out.get("result").cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_hits_are_injected_never_suggestions() {
        let hit = json!({"status": "hit", "result": "r"});
        assert_eq!(read_cache_hit(&hit), Some(json!("r")));
        let suggestion = json!({"status": "miss", "reason": "asks something different",
            "suggestion": {"query": "a near stored query", "score": 0.7, "threshold": 0.9}});
        assert_eq!(read_cache_hit(&suggestion), None);
    }

    #[test]
    fn a_hook_offers_near_plans_no_gate_refused_and_only_above_its_floor() {
        let near = |id: &str, score: f64, gated: bool| json!({"plan_id": id, "task": format!("task {id}"), "score": score, "failed": "verifier", "detail": "", "gated": gated});
        let miss = |list: Vec<Value>| json!({"status": "miss", "suggestions": list});
        let ids = |v: Vec<NearPlan>| v.into_iter().map(|n| n.plan_id).collect::<Vec<_>>();
        // A refused plan above the floor is skipped; the next one decides whether the block shows.
        assert_eq!(ids(read_suggestions(&miss(vec![near("a", 0.9, true), near("b", 0.7, false)]), 0.6)), ["b"]);
        assert!(read_suggestions(&miss(vec![near("a", 0.9, true), near("b", 0.5, false)]), 0.6).is_empty());
        assert_eq!(ids(read_suggestions(&miss(vec![near("a", 0.8, false), near("b", 0.7, false)]), 0.6)), ["a", "b"]);
        assert!(read_suggestions(&json!({"status": "hit", "suggestions": [near("a", 0.9, false)]}), 0.6).is_empty());
    }
}
