//! The MCP server entry: `mcpServers.refrain` in JSON files (`mcp.refrain` in opencode's),
//! `[mcp_servers.refrain]` in Codex TOML.
//!
//! Edits touch only the `refrain` entry and a container refrain created for it; everything else
//! (other servers, settings, key order, TOML comments) is left as it was.

use serde_json::{Map, Value};
use toml_edit::{Array, DocumentMut, Item, Table, value};

/// The JSON key holding MCP servers (Claude Code, Cursor, Gemini CLI, Qwen Code).
pub const SERVERS: &str = "mcpServers";
/// The JSON key holding MCP servers in opencode.json.
pub const OPENCODE_SERVERS: &str = "mcp";
/// The TOML table holding MCP servers (Codex).
pub const TOML_SERVERS: &str = "mcp_servers";
/// refrain's entry name.
pub const NAME: &str = "refrain";

/// Sets `mcpServers.refrain`; `Err(key)` when a container is not an object.
pub fn add_json(doc: &mut Value, entry: &Value) -> Result<(), String> {
    add_json_at(doc, SERVERS, entry)
}

/// Sets `<servers>.refrain`; `Err(key)` when a container is not an object.
pub fn add_json_at(doc: &mut Value, key: &str, entry: &Value) -> Result<(), String> {
    let root = doc.as_object_mut().ok_or_else(|| "(root)".to_string())?;
    let servers = root.entry(key).or_insert_with(|| Value::Object(Map::new()));
    let servers = servers.as_object_mut().ok_or_else(|| key.to_string())?;
    if servers.get(NAME) != Some(entry) {
        servers.insert(NAME.to_string(), entry.clone());
    }
    Ok(())
}

/// Removes `mcpServers.refrain`, and `mcpServers` when that left it empty. True when changed.
pub fn remove_json(doc: &mut Value) -> bool {
    remove_json_at(doc, SERVERS)
}

/// Removes `<servers>.refrain`, and `<servers>` when that left it empty. True when changed.
pub fn remove_json_at(doc: &mut Value, key: &str) -> bool {
    let Some(root) = doc.as_object_mut() else { return false };
    let Some(servers) = root.get_mut(key).and_then(Value::as_object_mut) else { return false };
    if servers.shift_remove(NAME).is_none() {
        return false;
    }
    if servers.is_empty() {
        root.shift_remove(key);
    }
    true
}

/// Sets `[mcp_servers.refrain]` command, args and the recorded env keys, keeping any other keys
/// (and env entries) the user added to it.
pub fn add_toml(doc: &mut DocumentMut, command: &str, env: &[(String, String)]) -> Result<(), String> {
    let servers = doc.entry(TOML_SERVERS).or_insert_with(|| {
        let mut t = Table::new();
        t.set_implicit(true);
        Item::Table(t)
    });
    let servers = servers.as_table_like_mut().ok_or_else(|| TOML_SERVERS.to_string())?;
    if servers.get(NAME).is_none() {
        servers.insert(NAME, Item::Table(Table::new()));
    }
    let entry =
        servers.get_mut(NAME).and_then(Item::as_table_like_mut).ok_or_else(|| format!("{TOML_SERVERS}.{NAME}"))?;
    if entry.get("command").and_then(Item::as_str) != Some(command) {
        entry.insert("command", value(command));
    }
    let args_ok = entry
        .get("args")
        .and_then(Item::as_array)
        .is_some_and(|a| a.len() == 1 && a.get(0).and_then(|v| v.as_str()) == Some("serve"));
    if !args_ok {
        entry.insert("args", value(Array::from_iter(["serve"])));
    }
    set_toml_env(entry, env).map_err(|()| format!("{TOML_SERVERS}.{NAME}.env"))
}

/// Makes `env` hold exactly the recorded values among refrain's own keys (REFRAIN_HOME,
/// REFRAIN_MODEL_DIR); other keys stay. An env table left empty is removed.
fn set_toml_env(entry: &mut dyn toml_edit::TableLike, env: &[(String, String)]) -> Result<(), ()> {
    if env.is_empty() && entry.get("env").is_none() {
        return Ok(());
    }
    if entry.get("env").is_none() {
        entry.insert("env", value(toml_edit::InlineTable::new()));
    }
    let table = entry.get_mut("env").and_then(Item::as_table_like_mut).ok_or(())?;
    for (key, _) in super::RECORDED_ENV {
        let want = env.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
        match want {
            Some(v) if table.get(key).and_then(Item::as_str) != Some(v) => {
                table.insert(key, value(v));
            }
            None if table.contains_key(key) => {
                table.remove(key);
            }
            _ => {}
        }
    }
    if table.is_empty() {
        entry.remove("env");
    }
    Ok(())
}

/// Removes `[mcp_servers.refrain]`, and an implicit `mcp_servers` left empty. True when changed.
pub fn remove_toml(doc: &mut DocumentMut) -> bool {
    let Some(servers) = doc.get_mut(TOML_SERVERS).and_then(Item::as_table_like_mut) else { return false };
    if servers.remove(NAME).is_none() {
        return false;
    }
    let drop_container =
        servers.is_empty() && doc.get(TOML_SERVERS).and_then(Item::as_table).is_some_and(Table::is_implicit);
    if drop_container {
        doc.remove(TOML_SERVERS);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_entry_is_added_beside_other_servers_and_removed_alone() {
        let mut doc = json!({"theme": "dark", "mcpServers": {"other": {"command": "x"}}});
        let orig = doc.clone();
        add_json(&mut doc, &json!({"command": "refrain"})).unwrap();
        assert_eq!(doc["mcpServers"]["other"], json!({"command": "x"}));
        assert!(remove_json(&mut doc));
        assert_eq!(doc, orig);
        assert!(!remove_json(&mut doc));
    }

    #[test]
    fn toml_entry_keeps_comments_and_other_servers() {
        let text = "# my config\nmodel = \"o3\" # keep\n\n[mcp_servers.other]\ncommand = \"x\"\n";
        let mut doc: DocumentMut = text.parse().unwrap();
        add_toml(&mut doc, "/bin/refrain", &[]).unwrap();
        let added = doc.to_string();
        assert!(added.contains("[mcp_servers.refrain]\ncommand = \"/bin/refrain\"\nargs = [\"serve\"]"), "{added}");
        assert!(added.starts_with("# my config\nmodel = \"o3\" # keep"));
        assert!(remove_toml(&mut doc));
        assert_eq!(doc.to_string(), text);
    }

    #[test]
    fn toml_env_records_refrain_settings_and_keeps_the_users_own() {
        let mut doc: DocumentMut =
            "[mcp_servers.refrain]\ncommand = \"x\"\nenv = { RUST_LOG = \"debug\" }\n".parse().unwrap();
        let env = vec![("REFRAIN_HOME".to_string(), "/data/refrain".to_string())];
        add_toml(&mut doc, "refrain", &env).unwrap();
        let once = doc.to_string();
        assert!(once.contains("RUST_LOG = \"debug\"") && once.contains("REFRAIN_HOME = \"/data/refrain\""), "{once}");
        add_toml(&mut doc, "refrain", &env).unwrap();
        assert_eq!(doc.to_string(), once, "a second install changes nothing");
        add_toml(&mut doc, "refrain", &[]).unwrap();
        assert!(!doc.to_string().contains("REFRAIN_HOME") && doc.to_string().contains("RUST_LOG"));
    }

    #[test]
    fn toml_container_created_for_refrain_goes_away_with_it() {
        let mut doc: DocumentMut = "model = \"o3\"\n".parse().unwrap();
        add_toml(&mut doc, "refrain", &[]).unwrap();
        assert!(remove_toml(&mut doc));
        assert_eq!(doc.to_string(), "model = \"o3\"\n");
    }
}
