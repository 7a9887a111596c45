//! Cursor's `hooks.json`: `{"version": 1, "hooks": {"<event>": [{"command": "..."}]}}`, flat
//! entries with no matcher. refrain recognises its own entries by their command and never edits
//! anyone else's; a file refrain created goes away whole on uninstall.

use super::is_refrain_hook;
use serde_json::{Map, Value, json};

/// The key holding hook events.
pub const HOOKS: &str = "hooks";
/// The file format version refrain writes.
pub const VERSION: u64 = 1;

fn is_ours(h: &Value) -> bool {
    h.get("command").and_then(Value::as_str).is_some_and(is_refrain_hook)
}

/// Adds (or updates in place) refrain's entry for every event; `Err(key)` on a wrong shape.
pub fn add(doc: &mut Value, events: &[&str], command_for: impl Fn(&str) -> String) -> Result<(), String> {
    let root = doc.as_object_mut().ok_or_else(|| "(root)".to_string())?;
    root.entry("version").or_insert(json!(VERSION));
    let hooks = root.entry(HOOKS).or_insert_with(|| Value::Object(Map::new()));
    let hooks = hooks.as_object_mut().ok_or_else(|| HOOKS.to_string())?;
    for event in events {
        let list = hooks.entry(*event).or_insert_with(|| Value::Array(Vec::new()));
        let list = list.as_array_mut().ok_or_else(|| format!("{HOOKS}.{event}"))?;
        let entry = json!({"command": command_for(event)});
        match list.iter().position(is_ours) {
            Some(i) => {
                list[i] = entry;
                let mut seen = 0;
                list.retain(|h| {
                    !is_ours(h) || {
                        seen += 1;
                        seen == 1
                    }
                });
            }
            None => list.push(entry),
        }
    }
    Ok(())
}

/// Removes refrain's entries, the events they leave empty, and `hooks` (with `version`) when
/// nothing else is left in them. True when changed.
pub fn remove(doc: &mut Value) -> bool {
    let Some(root) = doc.as_object_mut() else { return false };
    let Some(hooks) = root.get_mut(HOOKS).and_then(Value::as_object_mut) else { return false };
    let mut changed = false;
    hooks.retain(|_, list| {
        let Some(items) = list.as_array_mut() else { return true };
        let n = items.len();
        items.retain(|h| !is_ours(h));
        changed |= items.len() != n;
        !(items.is_empty() && n > 0)
    });
    if changed && hooks.is_empty() {
        root.shift_remove(HOOKS);
        if root.len() == 1 && root.get("version") == Some(&json!(VERSION)) {
            root.shift_remove("version");
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::integrate::hook_command;

    #[test]
    fn entries_are_added_once_beside_foreign_ones_and_removed_alone() {
        let cmd = |e: &str| hook_command("/opt/refrain", "cursor", e, &[]);
        let mut doc = json!({"version": 1, "hooks": {"stop": [{"command": "./notify.sh"}]}});
        let orig = doc.clone();
        add(&mut doc, &["beforeSubmitPrompt", "stop"], cmd).unwrap();
        let once = doc.clone();
        add(&mut doc, &["beforeSubmitPrompt", "stop"], cmd).unwrap();
        assert_eq!(doc, once);
        assert_eq!(doc["hooks"]["stop"].as_array().unwrap().len(), 2);
        assert_eq!(doc["hooks"]["beforeSubmitPrompt"][0]["command"], "/opt/refrain hook cursor beforeSubmitPrompt");
        assert!(remove(&mut doc));
        assert_eq!(doc, orig);
        let mut fresh = json!({});
        add(&mut fresh, &["stop"], cmd).unwrap();
        assert!(remove(&mut fresh));
        assert_eq!(fresh, json!({}));
    }
}
