//! Whether Codex will run refrain's hooks. Codex 0.169 runs a hook from hooks.json only once the
//! user trusted it: it keeps, in the user's config.toml, a table per handler
//! `[hooks.state."<hooks.json path>:<event>:<group>:<handler>"]` whose `trusted_hash` is the
//! sha256 of the handler's normalised definition (`sha256:<hex>`); a handler without one, or
//! whose definition changed since (another binary path, another `--home`), does not run.
//! refrain never writes that trust itself: it only reads it, to tell the user.

use super::is_refrain_hook;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Seconds Codex assumes when a handler gives no timeout.
const DEFAULT_TIMEOUT_SECS: u64 = 600;

/// refrain's handlers in one Codex hooks.json and whether Codex trusts each.
#[derive(Debug, Clone)]
pub struct Trust {
    /// The hooks.json.
    pub file: PathBuf,
    /// Events whose refrain handler Codex trusts as it is now.
    pub trusted: Vec<String>,
    /// Events whose refrain handler Codex has no trust for (new, or changed since it was trusted).
    pub untrusted: Vec<String>,
    /// Events whose refrain handler the user turned off (`enabled = false`).
    pub disabled: Vec<String>,
}

/// `UserPromptSubmit` -> `user_prompt_submit`, as Codex labels events in its keys and hashes.
pub fn event_label(event: &str) -> String {
    let mut out = String::new();
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The hash Codex records when the user trusts a handler: sha256 over the compact JSON, keys
/// sorted, of `{event_name, hooks: [{async, command, statusMessage?, timeout, type}], matcher?}`.
pub fn handler_hash(label: &str, matcher: Option<&str>, handler: &Value) -> String {
    let mut h = Map::new();
    h.insert("async".into(), Value::Bool(handler["async"].as_bool().unwrap_or(false)));
    h.insert("command".into(), handler["command"].clone());
    if let Some(m) = handler["statusMessage"].as_str().filter(|m| !m.is_empty()) {
        h.insert("statusMessage".into(), Value::String(m.into()));
    }
    let timeout = handler["timeout"].as_u64().unwrap_or(DEFAULT_TIMEOUT_SECS).max(1);
    h.insert("timeout".into(), Value::from(timeout));
    h.insert("type".into(), Value::String("command".into()));
    let mut identity = Map::new();
    identity.insert("event_name".into(), Value::String(label.into()));
    identity.insert("hooks".into(), Value::Array(vec![Value::Object(h)]));
    if let Some(m) = matcher {
        identity.insert("matcher".into(), Value::String(m.into()));
    }
    let text = Value::Object(identity).to_string();
    format!("sha256:{}", hex::encode(Sha256::digest(text.as_bytes())))
}

/// Reads refrain's handlers in `hooks_file` and the trust recorded in `config_file`; None when
/// the hooks file holds none of refrain's.
pub fn check(hooks_file: &Path, config_file: &Path) -> Option<Trust> {
    let hooks: Value = serde_json::from_str(&std::fs::read_to_string(hooks_file).ok()?).ok()?;
    let config: toml::Table =
        std::fs::read_to_string(config_file).ok().and_then(|t| toml::from_str(&t).ok()).unwrap_or_default();
    let state = config.get("hooks").and_then(|h| h.get("state")).and_then(toml::Value::as_table);
    let mut trust =
        Trust { file: hooks_file.to_path_buf(), trusted: Vec::new(), untrusted: Vec::new(), disabled: Vec::new() };
    for (event, groups) in hooks["hooks"].as_object()? {
        let label = event_label(event);
        for (g, group) in groups.as_array().into_iter().flatten().enumerate() {
            let matcher = group["matcher"].as_str();
            for (i, handler) in group["hooks"].as_array().into_iter().flatten().enumerate() {
                if !handler["command"].as_str().is_some_and(is_refrain_hook) {
                    continue;
                }
                let key = format!("{}:{label}:{g}:{i}", hooks_file.display());
                let entry = state.and_then(|s| s.get(&key));
                let recorded = entry.and_then(|e| e.get("trusted_hash")).and_then(toml::Value::as_str);
                let list = if entry.and_then(|e| e.get("enabled")).and_then(toml::Value::as_bool) == Some(false) {
                    &mut trust.disabled
                } else if recorded == Some(handler_hash(&label, matcher, handler).as_str()) {
                    &mut trust.trusted
                } else {
                    &mut trust.untrusted
                };
                list.push(event.clone());
            }
        }
    }
    let any = !(trust.trusted.is_empty() && trust.untrusted.is_empty() && trust.disabled.is_empty());
    any.then_some(trust)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn event_names_become_codex_labels() {
        assert_eq!(event_label("UserPromptSubmit"), "user_prompt_submit");
        assert_eq!(event_label("Stop"), "stop");
        assert_eq!(event_label("PostCompact"), "post_compact");
    }

    #[test]
    fn the_hash_is_codexs() {
        // The currentHash Codex 0.169.0's app-server (`hooks/list`) gives these two handlers.
        let post = json!({"type": "command", "command": "/opt/x/refrain hook codex PostToolUse", "timeout": 10});
        assert_eq!(
            handler_hash("post_tool_use", Some("Bash"), &post),
            "sha256:26996346834c4feaefd53dcad28d53968c83e169a6af88960b8e495e0853af72"
        );
        let stop = json!({"type": "command", "command": "/opt/x/refrain hook codex Stop", "timeout": 20});
        assert_eq!(
            handler_hash("stop", None, &stop),
            "sha256:5640daf1a4eac2c01f0e2de224672851b5284d7ba66a07c455d0eabf257b4bad"
        );
    }

    #[test]
    fn refrains_handlers_are_untrusted_until_their_hash_is_recorded_and_again_once_changed() {
        let dir = tempfile::tempdir().unwrap();
        let (hooks, config) = (dir.path().join("hooks.json"), dir.path().join("config.toml"));
        let handler = json!({"type": "command", "command": "/bin/refrain hook codex Stop", "timeout": 20});
        let doc = json!({"hooks": {"Stop": [
            {"hooks": [{"type": "command", "command": "notify-send done"}]},
            {"hooks": [handler.clone()]},
        ]}});
        std::fs::write(&hooks, doc.to_string()).unwrap();
        let t = check(&hooks, &config).unwrap();
        assert_eq!((t.trusted.len(), t.untrusted.clone()), (0, vec!["Stop".to_string()]));
        let key = format!("{}:stop:1:0", hooks.display());
        let hash = handler_hash("stop", None, &handler);
        std::fs::write(&config, format!("[hooks.state.{key:?}]\ntrusted_hash = {hash:?}\n")).unwrap();
        assert_eq!(check(&hooks, &config).unwrap().trusted, vec!["Stop".to_string()]);
        let moved = doc.to_string().replace("/bin/refrain", "/opt/refrain");
        std::fs::write(&hooks, moved).unwrap();
        assert_eq!(check(&hooks, &config).unwrap().untrusted, vec!["Stop".to_string()]);
    }
}
