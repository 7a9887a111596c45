//! Screening a project's config file against the trust table (`keys`): what it may set stays,
//! everything else is taken out and reported as a [`Refused`] setting naming the key, the file,
//! why, and how to allow it.
//!
//! Unknown keys are left in so that deserialising reports them with the file named, as for any
//! other file.

use super::dotted;
use super::keys::{self, Level};
use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;
use std::path::{Path, PathBuf};
use toml::{Table, Value};

/// A setting a project file gave that refrain ignored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Refused {
    /// The dotted key.
    pub key: String,
    /// The project file that set it.
    pub file: PathBuf,
    /// What was wrong and how to allow it, in one sentence.
    pub reason: String,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} in {} refused: {}", self.key, self.file.display(), self.reason)
    }
}

/// Splits a project file's table into what it may set and what is refused. `trusted`: the user
/// ran `refrain trust` on this exact content. `base` gives the value the user's own settings
/// (or the default) hold for a key, for keys a project may only lower.
pub fn screen(table: Table, file: &Path, trusted: bool, base: impl Fn(&str) -> Option<Value>) -> (Table, Vec<Refused>) {
    let mut leaves = Vec::new();
    flatten(table, String::new(), &mut leaves);
    let mut kept = Table::new();
    let mut refused = Vec::new();
    for (key, value) in leaves {
        match verdict(&key, &value, trusted, &base) {
            None => dotted::set(&mut kept, &key, value),
            Some(reason) => refused.push(Refused { key, file: file.to_path_buf(), reason }),
        }
    }
    (kept, refused)
}

/// The built-in default of a dotted key (for screening without the user's settings at hand).
pub fn default_of(key: &str) -> Option<Value> {
    let table = Table::try_from(super::Config::default()).ok()?;
    let mut parts = key.split('.');
    let mut cur = table.get(parts.next()?)?;
    for part in parts {
        cur = cur.as_table()?.get(part)?;
    }
    Some(cur.clone())
}

/// Why a project file may not set `key` to `value`, or `None` when it may.
fn verdict(key: &str, value: &Value, trusted: bool, base: &impl Fn(&str) -> Option<Value>) -> Option<String> {
    let rule = keys::rule(key)?;
    let trust_hint = "run `refrain trust` in the project to allow this file as it is now, or set it in your own \
                      config file, environment or flags";
    match rule.level {
        Level::Project => None,
        Level::ProjectLowers if trusted => None,
        Level::ProjectLowers => {
            let base = base(rule.key);
            // Not comparable (a wrong type): kept, so deserialising names the key and the file.
            if keys::is_lower_or_equal(value, base.as_ref()) != Some(false) {
                return None;
            }
            let shown = base.map(|b| b.to_string()).unwrap_or_else(|| "its default".into());
            Some(format!(
                "a project's config file may lower {key} but not raise it above {shown}: {}; {trust_hint}",
                rule.why
            ))
        }
        Level::Trusted if trusted => None,
        Level::Trusted => Some(format!("a project's config file may not set it: {}; {trust_hint}", rule.why)),
        Level::User => Some(format!(
            "only your own config file, environment or flags may set it, even in a trusted project: {}",
            rule.why
        )),
    }
}

/// Dotted leaf keys of a table; a sub-table under a map key (`results.tool_ttl_secs`) is a leaf
/// of its map row, so each entry is judged by that row.
fn flatten(table: Table, prefix: String, out: &mut Vec<(String, Value)>) {
    for (k, v) in table {
        let key = if prefix.is_empty() { k } else { format!("{prefix}.{k}") };
        match v {
            Value::Table(t) if keys::rule(&key).is_none() => flatten(t, key, out),
            other => out.push((key, other)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &str, trusted: bool) -> (Table, Vec<Refused>) {
        let base = |k: &str| match k {
            "hooks.timeout_ms" => Some(Value::Integer(2000)),
            "llm.enabled" => Some(Value::Boolean(false)),
            _ => None,
        };
        screen(text.parse().unwrap(), Path::new("/p/refrain.toml"), trusted, base)
    }

    #[test]
    fn safe_keys_stay_and_dangerous_ones_are_refused_with_key_and_file() {
        let (kept, refused) = run(
            "[results]\ndefault_ttl_secs = 60\n[results.tool_ttl_secs]\nRead = 5\n[model]\nruntime = \"/x.so\"\n[hooks]\ntimeout_ms = 60000\n",
            false,
        );
        assert_eq!(kept.to_string(), "[results]\ndefault_ttl_secs = 60\n\n[results.tool_ttl_secs]\nRead = 5\n");
        let keys: Vec<&str> = refused.iter().map(|r| r.key.as_str()).collect();
        assert_eq!(keys, ["hooks.timeout_ms", "model.runtime"]);
        let shown = refused[1].to_string();
        assert!(
            shown.contains("model.runtime in /p/refrain.toml refused") && shown.contains("refrain trust"),
            "{shown}"
        );
        assert!(refused[0].reason.contains("not raise it above 2000"), "{}", refused[0].reason);
    }

    #[test]
    fn lowering_is_allowed_and_trust_lifts_all_but_user_only_keys() {
        let (kept, refused) = run("[hooks]\ntimeout_ms = 500\n[llm]\nenabled = false\n", false);
        assert!(refused.is_empty(), "{refused:?}");
        assert_eq!(kept["hooks"]["timeout_ms"].as_integer(), Some(500));
        let text = "[llm]\nenabled = true\nbase_url = \"http://x\"\napi_key_env = \"GITHUB_TOKEN\"\n";
        let (kept, refused) = run(text, true);
        assert_eq!(kept["llm"]["base_url"].as_str(), Some("http://x"));
        assert_eq!(refused.len(), 1);
        assert_eq!(refused[0].key, "llm.api_key_env");
        assert!(refused[0].reason.contains("even in a trusted project"), "{}", refused[0].reason);
    }

    #[test]
    fn unknown_keys_are_kept_for_the_deserialiser_to_report() {
        let (kept, refused) = run("[results]\nbogus = 1\n", false);
        assert!(refused.is_empty());
        assert_eq!(kept["results"]["bogus"].as_integer(), Some(1));
    }
}
