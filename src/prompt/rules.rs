//! Provider rules for prompt caching, loaded from one data table (`rules.toml`).
//!
//! The built-in table is compiled in; a user file (`prompt.rules_file`) replaces it whole. This
//! module only answers questions about the table (families, prices, TTLs, what a change
//! invalidates); it never decides whether a cache broke.

use super::Error;
use super::compact::Policy;
use super::request::{Level, Provider};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

/// The built-in table.
pub const BUILTIN: &str = include_str!("rules.toml");

/// The whole rules table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rules {
    /// When the figures were last checked.
    pub as_of: String,
    /// Where they come from.
    pub source: String,
    /// Anthropic Messages.
    pub anthropic: ProviderRules,
    /// OpenAI Chat Completions and Responses.
    pub openai: ProviderRules,
    /// Named compaction policies.
    #[serde(default)]
    pub presets: BTreeMap<String, Policy>,
}

/// One provider's caching rules.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderRules {
    /// Levels in prefix order.
    pub prefix_order: Vec<String>,
    /// TTL used when a breakpoint names none.
    pub ttl_default: String,
    /// TTL names to seconds.
    pub ttls: BTreeMap<String, u64>,
    /// Cache-write price multiplier per TTL.
    pub write_multiplier: BTreeMap<String, f64>,
    /// Cache-read price multiplier (families may override).
    pub read_multiplier: f64,
    /// How many blocks before a breakpoint a read looks for an earlier entry.
    pub lookback_blocks: usize,
    /// Most breakpoints a request may carry (0: automatic caching).
    pub max_breakpoints: usize,
    /// Family used when no pattern matches.
    pub default_family: String,
    /// Cached prefixes are counted in steps of this many tokens.
    pub token_granularity: u64,
    /// Parameter name -> level it invalidates (`all`, `system`, `messages`, `none`).
    pub invalidation: BTreeMap<String, String>,
    /// Model families, most specific first.
    pub family: Vec<Family>,
}

/// A model family's figures.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Family {
    /// Display name.
    pub name: String,
    /// Substrings of the model id that select this family.
    #[serde(rename = "match")]
    pub patterns: Vec<String>,
    /// Shortest prefix the provider caches.
    pub min_cacheable_tokens: u64,
    /// Base input price, USD per million tokens.
    pub input_usd_per_mtok: f64,
    /// Cache-read multiplier for this family, when it differs from the provider's.
    #[serde(default)]
    pub read_multiplier: Option<f64>,
}

/// What a parameter change invalidates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Invalidates {
    /// The whole prefix.
    All,
    /// This level and every later one.
    From(Level),
    /// Nothing.
    Nothing,
    /// Not in the table.
    Unknown,
}

impl Rules {
    /// The built-in rules, or the file when one is given.
    pub fn load(file: Option<&Path>) -> Result<Rules, Error> {
        match file {
            None => Rules::parse(BUILTIN, "built-in rules"),
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| Error::Rules(format!("cannot read {}: {e}", path.display())))?;
                if path.extension().is_some_and(|x| x == "json") {
                    serde_json::from_str(&text).map_err(|e| Error::Rules(format!("{}: {e}", path.display())))
                } else {
                    Rules::parse(&text, &path.display().to_string())
                }
            }
        }
    }

    /// Parses a TOML table.
    pub fn parse(text: &str, origin: &str) -> Result<Rules, Error> {
        toml::from_str(text).map_err(|e| Error::Rules(format!("{origin}: {e}")))
    }

    /// The built-in rules (they are tested to parse).
    pub fn builtin() -> Rules {
        match Rules::parse(BUILTIN, "built-in rules") {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(error = %e, "built-in prompt rules do not parse");
                Rules::empty()
            }
        }
    }

    fn empty() -> Rules {
        let p = ProviderRules {
            prefix_order: vec![],
            ttl_default: "5m".into(),
            ttls: BTreeMap::from([("5m".to_string(), 300)]),
            write_multiplier: BTreeMap::new(),
            read_multiplier: 0.1,
            lookback_blocks: 20,
            max_breakpoints: 4,
            default_family: String::new(),
            token_granularity: 1,
            invalidation: BTreeMap::new(),
            family: vec![],
        };
        Rules { as_of: String::new(), source: String::new(), anthropic: p.clone(), openai: p, presets: BTreeMap::new() }
    }

    /// The rules of one provider.
    pub fn provider(&self, p: Provider) -> &ProviderRules {
        match p {
            Provider::Anthropic => &self.anthropic,
            Provider::OpenAiChat | Provider::OpenAiResponses => &self.openai,
        }
    }
}

impl ProviderRules {
    /// The family a model id belongs to (the default family, else a zero-priced placeholder).
    pub fn family(&self, model: &str) -> Family {
        let m = model.to_ascii_lowercase();
        let found = self.family.iter().find(|f| f.patterns.iter().any(|p| m.contains(&p.to_ascii_lowercase())));
        let fallback = || self.family.iter().find(|f| f.name == self.default_family);
        found.or_else(fallback).cloned().unwrap_or(Family {
            name: "unknown".into(),
            patterns: vec![],
            min_cacheable_tokens: 1024,
            input_usd_per_mtok: 0.0,
            read_multiplier: None,
        })
    }

    /// Seconds a TTL name stands for (the default TTL when unknown).
    pub fn ttl_secs(&self, ttl: &str) -> u64 {
        self.ttls.get(ttl).or_else(|| self.ttls.get(&self.ttl_default)).copied().unwrap_or(300)
    }

    /// The cache-write multiplier for a TTL.
    pub fn write_mult(&self, ttl: &str) -> f64 {
        self.write_multiplier.get(ttl).or_else(|| self.write_multiplier.get(&self.ttl_default)).copied().unwrap_or(1.25)
    }

    /// The cache-read multiplier for a family.
    pub fn read_mult(&self, fam: &Family) -> f64 {
        fam.read_multiplier.unwrap_or(self.read_multiplier)
    }

    /// What a change to this parameter invalidates.
    pub fn invalidates(&self, param: &str) -> Invalidates {
        match self.invalidation.get(param).map(String::as_str) {
            Some("all") => Invalidates::All,
            Some("system") => Invalidates::From(Level::System),
            Some("messages") => Invalidates::From(Level::Messages),
            Some("tools") => Invalidates::From(Level::Tools),
            Some("none") => Invalidates::Nothing,
            _ => Invalidates::Unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[test]
    fn builtin_rules_parse_with_date_and_presets() {
        let r = Rules::parse(BUILTIN, "built-in").unwrap();
        assert!(!r.as_of.is_empty());
        assert_eq!(r.anthropic.prefix_order, ["tools", "system", "messages"]);
        assert!(r.presets.contains_key("anthropic_clear_tool_uses"));
        assert!(r.presets.contains_key("claude_code_microcompact"));
    }

    #[rstest]
    #[case(Provider::Anthropic, "claude-opus-4-5-20251101", 4096, 5.0)]
    #[case(Provider::Anthropic, "claude-opus-4-1-20250805", 1024, 15.0)]
    #[case(Provider::Anthropic, "claude-sonnet-4-5", 1024, 3.0)]
    #[case(Provider::Anthropic, "claude-3-5-haiku-latest", 2048, 0.8)]
    #[case(Provider::OpenAiChat, "gpt-4o-2024-08-06", 1024, 2.5)]
    #[case(Provider::OpenAiResponses, "gpt-5-codex", 1024, 1.25)]
    fn family_figures_come_from_the_table(
        #[case] p: Provider,
        #[case] model: &str,
        #[case] min: u64,
        #[case] price: f64,
    ) {
        let r = Rules::builtin();
        let f = r.provider(p).family(model);
        assert_eq!(f.min_cacheable_tokens, min, "{model}");
        assert!((f.input_usd_per_mtok - price).abs() < 1e-9, "{model}");
    }

    #[rstest]
    #[case("tool_choice", Invalidates::From(Level::Messages))]
    #[case("thinking", Invalidates::From(Level::Messages))]
    #[case("model", Invalidates::All)]
    #[case("max_tokens", Invalidates::Nothing)]
    #[case("some_new_field", Invalidates::Unknown)]
    fn invalidation_matrix_is_data(#[case] param: &str, #[case] want: Invalidates) {
        assert_eq!(Rules::builtin().anthropic.invalidates(param), want);
    }

    #[test]
    fn a_user_file_replaces_the_table() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rules.toml");
        std::fs::write(&path, BUILTIN.replace("min_cacheable_tokens = 4096", "min_cacheable_tokens = 9999")).unwrap();
        let r = Rules::load(Some(&path)).unwrap();
        assert_eq!(r.anthropic.family("claude-opus-4-5").min_cacheable_tokens, 9999);
        assert!(Rules::load(Some(&dir.path().join("missing.toml"))).is_err());
    }
}
