//! The JSON a hook prints, in the shape Claude Code and Codex both read
//! (`hookSpecificOutput` with `hookEventName`; Codex accepts the same fields).

use super::calls::PlanHit;
use serde_json::{Value, json};

/// Longest cached result handed back through a deny reason (agents truncate long reasons anyway).
const MAX_REASON_CHARS: usize = 60_000;

/// UserPromptSubmit: add text to the agent's context.
pub fn prompt_context(text: &str) -> Value {
    json!({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": text}})
}

/// The context text for a plan hit: the filled plan, where it came from, how to report back.
pub fn plan_context(hit: &PlanHit) -> String {
    let mut out = String::from("refrain found a stored plan for this kind of task");
    if let Some(score) = hit.score {
        out.push_str(&format!(" (match score {score:.2})"));
    }
    out.push_str(". Follow it if it fits; adapt it if not.\n\nPlan:\n");
    match hit.plan.get("steps").and_then(Value::as_array) {
        Some(steps) => {
            for (i, s) in steps.iter().enumerate() {
                let text = s.as_str().map(str::to_string).or_else(|| step_text(s)).unwrap_or_else(|| s.to_string());
                out.push_str(&format!("{}. {text}\n", i + 1));
            }
        }
        None => out.push_str(&format!("{}\n", serde_json::to_string_pretty(&hit.plan).unwrap_or_default())),
    }
    if let Some(p) = &hit.provenance {
        out.push_str(&format!("\nProvenance: {}\n", compact(p)));
    }
    let id = hit.plan_id.as_deref().unwrap_or("<the plan id above>");
    out.push_str(&format!(
        "\nWhen you are done, report whether this plan worked: call the refrain tool plan_feedback with plan_id \"{id}\" and success true or false (with a short reason when it failed)."
    ));
    out
}

/// One plan step as a line: a todo's text, else `tool op inputs`.
fn step_text(s: &Value) -> Option<String> {
    let tool = s.get("tool")?.as_str()?;
    let inputs = s.get("inputs").filter(|v| !v.is_null() && v.as_object().is_none_or(|o| !o.is_empty()));
    if tool == "todo" {
        return inputs.and_then(|i| i.get("text")).and_then(Value::as_str).map(str::to_string);
    }
    let mut line = tool.to_string();
    if let Some(op) = s.get("op").and_then(Value::as_str) {
        line.push(' ');
        line.push_str(op);
    }
    if let Some(i) = inputs {
        line.push(' ');
        line.push_str(&i.to_string());
    }
    Some(line)
}

fn compact(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// PreToolUse: deny the tool and hand the agent the cached result as the reason.
pub fn serve_cached(tool: &str, result: &Value) -> Value {
    let body = match result {
        Value::String(s) => s.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    };
    let body: String = body.chars().take(MAX_REASON_CHARS).collect();
    let reason = format!(
        "refrain already holds a fresh result of this exact {tool} call, so it was not run again. Use this result as the tool's output:\n\n{body}"
    );
    json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": reason}})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_context_numbers_steps_and_asks_for_feedback() {
        let hit = PlanHit {
            plan_id: Some("p7".into()),
            plan: json!({"steps": [{"tool": "todo", "inputs": {"text": "edit src/main.rs"}}, {"tool": "Bash", "op": "cargo test", "inputs": {}}]}),
            score: Some(0.91),
            provenance: Some(json!("stored from a claude-code session")),
        };
        let text = plan_context(&hit);
        assert!(text.contains("1. edit src/main.rs\n2. Bash cargo test\n"), "{text}");
        assert!(text.contains("plan_feedback with plan_id \"p7\""));
        assert!(text.contains("Provenance: stored from a claude-code session"));
    }
}
