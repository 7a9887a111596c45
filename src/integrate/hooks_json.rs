//! Hook groups in a JSON settings file: `hooks.<Event>[] = {matcher?, hooks: [{type, command, timeout}]}`.
//!
//! Claude Code's settings.json and Codex's hooks.json share this shape. refrain recognises its own
//! handlers by their command (`.../refrain hook <agent> <event>`) and never edits anyone else's.

use super::is_refrain_hook;
use super::targets::HookSpec;
use serde_json::{Map, Value, json};

/// The key holding hook events.
pub const HOOKS: &str = "hooks";

fn handler(command: &str, spec: &HookSpec, millis: bool) -> Value {
    let timeout = if millis { spec.timeout_secs * 1000 } else { spec.timeout_secs };
    json!({"type": "command", "command": command, "timeout": timeout})
}

fn group(command: &str, spec: &HookSpec, millis: bool) -> Value {
    let mut g = Map::new();
    if let Some(m) = spec.matcher {
        g.insert("matcher".into(), Value::String(m.into()));
    }
    g.insert("hooks".into(), Value::Array(vec![handler(command, spec, millis)]));
    Value::Object(g)
}

fn is_ours(h: &Value) -> bool {
    h.get("command").and_then(Value::as_str).is_some_and(is_refrain_hook)
}

/// Adds (or updates in place) refrain's handler for every event in `specs`.
/// `command_for(event)` gives the command line; `millis` writes timeouts in milliseconds (Gemini
/// CLI). `Err(key)` when a container has the wrong type.
pub fn add(
    doc: &mut Value,
    specs: &[HookSpec],
    millis: bool,
    command_for: impl Fn(&str) -> String,
) -> Result<(), String> {
    let root = doc.as_object_mut().ok_or_else(|| "(root)".to_string())?;
    let hooks = root.entry(HOOKS).or_insert_with(|| Value::Object(Map::new()));
    let hooks = hooks.as_object_mut().ok_or_else(|| HOOKS.to_string())?;
    for spec in specs {
        let command = command_for(spec.event);
        let groups = hooks.entry(spec.event).or_insert_with(|| Value::Array(Vec::new()));
        let groups = groups.as_array_mut().ok_or_else(|| format!("{HOOKS}.{}", spec.event))?;
        let mut placed = false;
        for g in groups.iter_mut() {
            let Some(list) = g.get_mut("hooks").and_then(Value::as_array_mut) else { continue };
            let only_ours = list.iter().all(is_ours);
            let mut i = 0;
            while i < list.len() {
                if !is_ours(&list[i]) {
                    i += 1;
                } else if placed {
                    list.remove(i);
                } else {
                    list[i] = handler(&command, spec, millis);
                    placed = true;
                    i += 1;
                }
            }
            if placed && only_ours {
                *g = group(&command, spec, millis);
            }
        }
        groups.retain(|g| g.get("hooks").and_then(Value::as_array).is_none_or(|l| !l.is_empty()));
        if !placed {
            groups.push(group(&command, spec, millis));
        }
    }
    Ok(())
}

/// Removes every refrain handler, and the groups, events and `hooks` object that left empty.
pub fn remove(doc: &mut Value) -> bool {
    let Some(root) = doc.as_object_mut() else { return false };
    let Some(hooks) = root.get_mut(HOOKS).and_then(Value::as_object_mut) else { return false };
    let mut changed = false;
    let events: Vec<String> = hooks.keys().cloned().collect();
    for event in events {
        let Some(groups) = hooks.get_mut(&event).and_then(Value::as_array_mut) else { continue };
        let mut event_changed = false;
        for g in groups.iter_mut() {
            if let Some(list) = g.get_mut("hooks").and_then(Value::as_array_mut) {
                let n = list.len();
                list.retain(|h| !is_ours(h));
                event_changed |= list.len() != n;
            }
        }
        if event_changed {
            groups.retain(|g| g.get("hooks").and_then(Value::as_array).is_none_or(|l| !l.is_empty()));
            if groups.is_empty() {
                hooks.shift_remove(&event);
            }
            changed = true;
        }
    }
    if changed && hooks.is_empty() {
        root.shift_remove(HOOKS);
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::integrate::hook_command;
    use crate::integrate::targets::claude_hooks;

    fn cmd(event: &str) -> String {
        hook_command("/opt/refrain", "claude", event, &[])
    }

    #[test]
    fn adding_twice_changes_nothing_and_keeps_foreign_hooks() {
        let mut doc =
            json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}, "model": "x"});
        let orig = doc.clone();
        add(&mut doc, &claude_hooks(), false, cmd).unwrap();
        let once = doc.clone();
        add(&mut doc, &claude_hooks(), false, cmd).unwrap();
        assert_eq!(doc, once);
        assert_eq!(doc["hooks"]["Stop"][0]["hooks"][0]["command"], "notify-send done");
        assert_eq!(doc["hooks"]["Stop"].as_array().unwrap().len(), 2);
        assert!(remove(&mut doc));
        assert_eq!(doc, orig);
    }

    #[test]
    fn a_moved_binary_updates_the_existing_handler_in_place() {
        let mut doc = json!({});
        add(&mut doc, &claude_hooks(), false, cmd).unwrap();
        add(&mut doc, &claude_hooks(), false, |e| hook_command("/new/refrain", "claude", e, &[])).unwrap();
        assert_eq!(doc["hooks"]["Stop"].as_array().unwrap().len(), 1);
        assert_eq!(doc["hooks"]["Stop"][0]["hooks"][0]["command"], "/new/refrain hook claude Stop");
        assert!(remove(&mut doc));
        assert_eq!(doc, json!({}));
    }
}
