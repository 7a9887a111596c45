//! Who may set each configuration key: the trust table.
//!
//! The user's own config file, environment and flags may set anything. A project's
//! `refrain.toml` is written by whoever wrote the repository, so it may set only what cannot run
//! code, reach outside the project or send data anywhere (thresholds, TTLs, limits, turning
//! features on or off); everything else needs `refrain trust` for that file's exact content. A
//! unit test walks `Config`'s schema so that no key can be added without a row here.

use toml::Value;

/// Who may set a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// Any layer, a project file included.
    Project,
    /// A project file may lower it (or turn it off), not raise it above what the user's settings give.
    ProjectLowers,
    /// The user's own config, environment or flags, or a project file the user ran `refrain trust` on.
    Trusted,
    /// The user's own config, environment or flags only, whatever `refrain trust` says.
    User,
}

impl Level {
    /// What a project's config file may do with a key of this level, in words.
    pub fn describe(self) -> &'static str {
        match self {
            Level::Project => "yes",
            Level::ProjectLowers => "lower only",
            Level::Trusted => "after refrain trust",
            Level::User => "no",
        }
    }
}

/// One row of the table: a dotted key (a map key covers everything under it), its level, and
/// what a hostile value could do, in words.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    /// The dotted key, e.g. `model.runtime`.
    pub key: &'static str,
    /// Who may set it.
    pub level: Level,
    /// Why a project file may not set it freely (empty for `Project`).
    pub why: &'static str,
}

const fn row(key: &'static str, level: Level, why: &'static str) -> Rule {
    Rule { key, level, why }
}

use Level::{Project, ProjectLowers, Trusted, User};

/// Every key of `Config`.
pub const RULES: &[Rule] = &[
    row("server.max_message_bytes", Project, ""),
    row(
        "server.request_timeout_ms",
        ProjectLowers,
        "a longer deadline lets one request hold a worker for as long as the repository likes",
    ),
    row(
        "server.request_memory_bytes",
        ProjectLowers,
        "a larger budget lets one request grow the server's memory as far as the repository likes",
    ),
    row("server.tools", Project, ""),
    row("server.instructions", Project, ""),
    row("server.token", Trusted, "it sets the HTTP server's bearer token, so whoever wrote the repository can call it"),
    row("server.allowed_origins", Trusted, "it lets web pages on other sites call the HTTP server"),
    row("server.allowed_hosts", Trusted, "it switches off DNS-rebinding protection for other host names"),
    row("server.log_file", Trusted, "it makes refrain write a file at any path"),
    row("store.home", Trusted, "it makes refrain keep its stores at any path"),
    row("store.max_store_bytes", Project, ""),
    row("model.dir", Trusted, "it makes refrain load model files and a shared library from any path (runs code)"),
    row("model.runtime", Trusted, "it makes refrain load a shared library from any path (runs code)"),
    row("model.enabled", Project, ""),
    row("model.threads", ProjectLowers, "more threads take more of the machine"),
    row("model.max_length", Project, ""),
    row("plans.hit_threshold", Project, ""),
    row("plans.neighbours", Project, ""),
    row("plans.quarantine_after", Project, ""),
    row("plans.report_candidates", Project, ""),
    row("plans.max_task_bytes", Project, ""),
    row("plans.max_plan_bytes", Project, ""),
    row("plans.bucket_candidates", Project, ""),
    row("plans.failure_bias", Project, ""),
    row("plans.suggest_min_score", Project, ""),
    row("matching.max_wrong_rate", ProjectLowers, "a higher rate lets wrong plans and answers be served more often"),
    row("matching.candidates", ProjectLowers, "more candidates make every lookup score more pairs"),
    row("matching.quarantine_after", ProjectLowers, "a higher count keeps serving entries agents reported wrong"),
    row("matching.llm_judge", ProjectLowers, "turning the judge on sends request text to the LLM endpoint"),
    row("matching.llm_budget_ms", ProjectLowers, "a longer budget makes lookups wait longer"),
    row("matching.threads", ProjectLowers, "more threads take more of the machine"),
    row("llm.enabled", ProjectLowers, "turning the canonicaliser on sends task text to an endpoint"),
    row("llm.base_url", Trusted, "it sends task text (and the API key) to any URL"),
    row("llm.model", Trusted, "it chooses what is asked of the endpoint"),
    row("llm.api_key_env", User, "it names the environment variable a secret is read from"),
    row("llm.timeout_ms", ProjectLowers, "a longer timeout makes lookups wait longer"),
    row("results.max_entry_bytes", Project, ""),
    row("results.max_args_bytes", Project, ""),
    row("results.max_total_bytes", Project, ""),
    row("results.default_ttl_secs", Project, ""),
    row("results.tool_ttl_secs", Project, ""),
    row("results.disabled_tools", Project, ""),
    row("results.allowed_roots", Trusted, "it lets cached results depend on files outside the project"),
    row("prompt.rules_file", Trusted, "it makes refrain read a file at any path"),
    row("prompt.transcript_roots", Trusted, "it lets transcript tools read files outside the project"),
    row("hooks.serve_cached_network_reads", Project, ""),
    row("hooks.timeout_ms", ProjectLowers, "every agent hook would wait longer"),
    row("hooks.read_only_mcp_tools", Project, ""),
    row("hooks.read_dedup", Project, ""),
    row("hooks.suggest_floor", Project, ""),
    row("hooks.suggest_per_take", Project, ""),
    row("team.url", User, "it sends plans and task text to any database server"),
    row("team.password_env", User, "it names the environment variable a secret is read from"),
    row("team.ca_file", User, "it makes refrain trust any certificate authority for the team database"),
    row("team.publish_after", User, "a lower count shares plans with the team sooner"),
    row("team.accept", User, "it decides whose plans your agents are handed"),
];

/// The rule for a dotted key (a map's rule covers its entries); `None` for a key `Config` lacks.
pub fn rule(key: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| key == r.key || key.strip_prefix(r.key).is_some_and(|rest| rest.starts_with('.')))
}

/// Whether `value` is no more than `base` (numbers by value, `false` below `true`); `None` when
/// they cannot be compared (a value of the wrong type, which deserialising then reports).
pub fn is_lower_or_equal(value: &Value, base: Option<&Value>) -> Option<bool> {
    match (value, base?) {
        (Value::Integer(v), Value::Integer(b)) => Some(v <= b),
        (Value::Float(v), Value::Float(b)) => Some(v <= b),
        (Value::Integer(v), Value::Float(b)) => Some((*v as f64) <= *b),
        (Value::Boolean(v), Value::Boolean(b)) => Some(!v || *b),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use serde_json::Value as Json;

    /// Every leaf key of `Config`, from its JSON schema (so `Option` fields, which serialise to
    /// nothing, are included). A map (additionalProperties) is one leaf.
    fn schema_keys() -> Vec<String> {
        let schema = rmcp::schemars::schema_for!(Config);
        let root = schema.as_value().clone();
        let mut keys = Vec::new();
        walk(&root, &root, "", &mut keys);
        keys
    }

    fn walk(root: &Json, node: &Json, prefix: &str, out: &mut Vec<String>) {
        let node = resolve(root, node);
        match node.get("properties").and_then(Json::as_object) {
            Some(props) => {
                for (k, v) in props {
                    let key = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                    walk(root, v, &key, out);
                }
            }
            None => out.push(prefix.to_string()),
        }
    }

    fn resolve<'a>(root: &'a Json, node: &'a Json) -> &'a Json {
        match node.get("$ref").and_then(Json::as_str).and_then(|r| r.strip_prefix("#/")) {
            Some(path) => path.split('/').fold(root, |n, part| &n[part]),
            None => node,
        }
    }

    #[test]
    fn every_config_key_is_classified_and_every_row_names_a_key() {
        let keys = schema_keys();
        assert!(keys.len() >= 30, "the schema walk found too few keys: {keys:?}");
        let unclassified: Vec<&String> = keys.iter().filter(|k| !RULES.iter().any(|r| r.key == k.as_str())).collect();
        assert!(unclassified.is_empty(), "add these keys to config::keys::RULES: {unclassified:?}");
        let stale: Vec<&str> = RULES.iter().map(|r| r.key).filter(|k| !keys.iter().any(|s| s == k)).collect();
        assert!(stale.is_empty(), "these rows name no Config key: {stale:?}");
    }

    #[test]
    fn every_guarded_key_says_why() {
        for r in RULES {
            assert_eq!(r.level == Level::Project, r.why.is_empty(), "{}", r.key);
            if r.level == Level::ProjectLowers {
                let default = crate::config::screen::default_of(r.key);
                assert!(
                    matches!(default, Some(Value::Integer(_) | Value::Boolean(_) | Value::Float(_))),
                    "{}: {default:?}",
                    r.key
                );
            }
        }
        // A project file cannot raise the wrong-hit rate, whether written as a float or an integer.
        let rate = crate::config::screen::default_of("matching.max_wrong_rate");
        assert_eq!(is_lower_or_equal(&Value::Float(0.5), rate.as_ref()), Some(false));
        assert_eq!(is_lower_or_equal(&Value::Integer(1), rate.as_ref()), Some(false));
        assert_eq!(is_lower_or_equal(&Value::Float(0.001), rate.as_ref()), Some(true));
    }

    #[test]
    fn path_valued_keys_are_never_open_to_project_files() {
        for key in [
            "model.runtime",
            "model.dir",
            "store.home",
            "server.log_file",
            "prompt.rules_file",
            "prompt.transcript_roots",
            "results.allowed_roots",
        ] {
            assert!(matches!(rule(key).map(|r| r.level), Some(Level::Trusted)), "{key}");
        }
        assert_eq!(rule("llm.api_key_env").map(|r| r.level), Some(Level::User));
        for key in ["team.url", "team.password_env", "team.ca_file", "team.publish_after", "team.accept"] {
            assert_eq!(rule(key).map(|r| r.level), Some(Level::User), "{key}");
        }
    }

    #[test]
    fn map_rows_cover_their_entries_only() {
        assert_eq!(rule("results.tool_ttl_secs.Read").map(|r| r.key), Some("results.tool_ttl_secs"));
        assert!(rule("results.tool_ttl_secsX").is_none());
        assert!(rule("nope.key").is_none());
    }

    #[test]
    fn lowering_compares_numbers_and_booleans() {
        let i = Value::Integer;
        assert_eq!(is_lower_or_equal(&i(500), Some(&i(2000))), Some(true));
        assert_eq!(is_lower_or_equal(&i(2000), Some(&i(2000))), Some(true));
        assert_eq!(is_lower_or_equal(&i(60000), Some(&i(2000))), Some(false));
        assert_eq!(is_lower_or_equal(&Value::Boolean(false), Some(&Value::Boolean(false))), Some(true));
        assert_eq!(is_lower_or_equal(&Value::Boolean(true), Some(&Value::Boolean(false))), Some(false));
        assert_eq!(is_lower_or_equal(&Value::String("1".into()), Some(&i(2))), None);
    }
}
