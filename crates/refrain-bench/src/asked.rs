//! What an agent that knows its own task answers when refrain asks for values (`needs_values`).
//! A family member's answer is the trace the agent ran for it; a slot refrain asks for is a place
//! in the plan's steps (its `{{params.<name>}}` placeholder, or refrain's guess where it doubts
//! one). Matching each returned step against the member's own step, with those places left open,
//! reads off the value the agent would give: the one its task needs there, whether the task
//! text says it or the agent finds it in its repository (the current version, the file the
//! function lives in).
//!
//! This stands in for the agent only where refrain asked. What refrain filled itself is never
//! corrected here, so a fill that is wrong and not asked about stays wrong.

use regex::Regex;
use serde_json::Value;
use std::collections::BTreeMap;

/// The values the member's own steps hold at each asked slot's places, for the slots every
/// matching step agrees on. `steps` are the steps refrain returned; `answer` the member's.
pub fn values(steps: &Value, unfilled: &[Value], answer: &[Value]) -> BTreeMap<String, String> {
    let asked: Vec<(String, Option<String>)> = unfilled
        .iter()
        .filter_map(|u| {
            let name = u["name"].as_str()?.to_string();
            let guess = match &u["guess"] {
                Value::Null => None,
                Value::String(s) => Some(s.clone()),
                v => Some(v.to_string()),
            };
            Some((name, guess))
        })
        .collect();
    let mut found: BTreeMap<String, String> = BTreeMap::new();
    let mut conflict: Vec<String> = Vec::new();
    for (got, want) in steps.as_array().into_iter().flatten().zip(answer) {
        if got["tool"] != want["tool"] {
            continue;
        }
        let Some(read) = read_off(&got["inputs"], &want["inputs"], &asked) else { continue };
        for (name, v) in read {
            match found.get(&name) {
                Some(old) if *old != v => conflict.push(name),
                _ => {
                    found.insert(name, v);
                }
            }
        }
    }
    found.retain(|k, _| !conflict.contains(k));
    found
}

/// One step: its inputs (as JSON text) with each asked place open, matched against the member's
/// inputs; the values at the open places when they match.
fn read_off(got: &Value, want: &Value, asked: &[(String, Option<String>)]) -> Option<Vec<(String, String)>> {
    let text = serde_json::to_string(got).ok()?;
    let target = serde_json::to_string(want).ok()?;
    // The places: placeholders of asked slots, and their guesses as written in the JSON text.
    let mut marks: Vec<(String, &str)> = Vec::new();
    for (name, guess) in asked {
        marks.push((format!("{{{{params.{name}}}}}"), name));
        if let Some(g) = guess.as_deref().filter(|g| !g.is_empty()) {
            let inner = serde_json::to_string(g).ok()?;
            marks.push((inner[1..inner.len() - 1].to_string(), name));
        }
    }
    marks.sort_by_key(|(m, _)| std::cmp::Reverse(m.len()));
    let mut places: Vec<(usize, usize, &str)> = Vec::new();
    for (mark, name) in &marks {
        for (at, _) in text.match_indices(mark.as_str()) {
            let end = at + mark.len();
            if places.iter().all(|&(s, e, _)| end <= s || at >= e) {
                places.push((at, end, name));
            }
        }
    }
    if places.is_empty() {
        return None;
    }
    places.sort();
    let mut pattern = String::from("^");
    let mut last = 0;
    for (i, (s, e, _)) in places.iter().enumerate() {
        pattern.push_str(&regex::escape(&text[last..*s]));
        pattern.push_str(&format!("(?P<p{i}>.+?)"));
        last = *e;
    }
    pattern.push_str(&regex::escape(&text[last..]));
    pattern.push('$');
    let caps = Regex::new(&pattern).ok()?.captures(&target)?;
    let mut out: Vec<(String, String)> = Vec::new();
    for (i, (_, _, name)) in places.iter().enumerate() {
        let raw = caps.name(&format!("p{i}"))?.as_str();
        let v: String = serde_json::from_str(&format!("\"{raw}\"")).ok()?;
        if out.iter().any(|(n, old)| n == name && *old != v) {
            return None;
        }
        out.push((name.to_string(), v));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_a_placeholder_and_a_guess_off_the_members_own_step() {
        let steps = json!([
            {"tool": "todo", "inputs": {"text": "Delete rand from {{params.path}}"}},
            {"tool": "Edit", "inputs": {"file_path": "a/{{params.path}}", "old_string": "version = \"0.2.0\""}},
        ]);
        let unfilled = [json!({"name": "path", "guess": null}), json!({"name": "version", "guess": "0.2.0"})];
        let answer = vec![
            json!({"tool": "todo", "inputs": {"text": "Delete rand from Cargo.toml"}}),
            json!({"tool": "Edit", "inputs": {"file_path": "a/Cargo.toml", "old_string": "version = \"1.4.1\""}}),
        ];
        let got = values(&steps, &unfilled, &answer);
        assert_eq!(got.get("path").map(String::as_str), Some("Cargo.toml"));
        assert_eq!(got.get("version").map(String::as_str), Some("1.4.1"));
    }

    #[test]
    fn a_step_that_differs_elsewhere_gives_nothing_and_disagreeing_steps_give_nothing() {
        let steps = json!([{"tool": "todo", "inputs": {"text": "Delete {{params.p}} from Cargo.toml"}}]);
        let unfilled = [json!({"name": "p"})];
        let other = vec![json!({"tool": "todo", "inputs": {"text": "Remove rand from Cargo.toml"}})];
        assert!(values(&steps, &unfilled, &other).is_empty());
        let steps = json!([
            {"tool": "todo", "inputs": {"text": "Delete {{params.p}}"}},
            {"tool": "todo", "inputs": {"text": "Check {{params.p}}"}},
        ]);
        let answer = vec![
            json!({"tool": "todo", "inputs": {"text": "Delete a"}}),
            json!({"tool": "todo", "inputs": {"text": "Check b"}}),
        ];
        assert!(values(&steps, &unfilled, &answer).is_empty());
    }
}
