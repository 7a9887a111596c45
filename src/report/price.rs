//! Dollars from tokens, at the provider rules table's prices (`prompt/rules.toml`): estimates,
//! labelled so wherever they are shown. Only input-side prices are in the table, so only
//! input-side figures (cache reads, writes, misses) are priced.

use super::model::Tokens;
use crate::prompt::request::{Provider, Usage};
use crate::prompt::rules::Rules;

/// The prices that apply to one model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// USD per input token.
    pub per_token: f64,
    /// Cache-write multiplier (default TTL).
    pub write: f64,
    /// Cache-read multiplier.
    pub read: f64,
    /// Anthropic counts cached tokens apart from `input_tokens`; OpenAI counts them inside.
    pub separate_cache: bool,
}

impl Price {
    /// The prices of `model` under `provider`'s rules.
    pub fn of(rules: &Rules, provider: Provider, model: &str) -> Price {
        let pr = rules.provider(provider);
        let fam = pr.family(model);
        Price {
            per_token: fam.input_usd_per_mtok / 1e6,
            write: pr.write_mult(&pr.ttl_default),
            read: pr.read_mult(&fam),
            separate_cache: provider == Provider::Anthropic,
        }
    }

    /// Reported usage as token figures and their estimated cost.
    pub fn tokens(&self, u: &Usage) -> Tokens {
        let read = u.cache_read_tokens.unwrap_or(0);
        let write = u.cache_creation_tokens.unwrap_or(0);
        let input = u.input_tokens.unwrap_or(0);
        let uncached = if self.separate_cache { input } else { input.saturating_sub(read) };
        let usd = (uncached as f64 + read as f64 * self.read + write as f64 * self.write) * self.per_token;
        Tokens { requests: 1, uncached, cache_read: read, cache_write: write, input_usd: usd }
    }

    /// What losing `tokens` cached tokens costs: they are written again (Anthropic) or paid in
    /// full (OpenAI) instead of read.
    pub fn lost(&self, tokens: u64) -> f64 {
        let extra = if self.separate_cache { self.write - self.read } else { 1.0 - self.read };
        tokens as f64 * self.per_token * extra
    }

    /// What adding `tokens` to the context costs once (written to the cache, or paid in full).
    pub fn added(&self, tokens: u64) -> f64 {
        let mult = if self.separate_cache { self.write } else { 1.0 };
        tokens as f64 * self.per_token * mult
    }
}

/// How the report words its dollar figures.
pub fn note(rules: &Rules) -> String {
    format!(
        "estimates: input-side prices and cache multipliers from refrain's provider rules table (as of {}); output tokens are not priced",
        rules.as_of
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anthropic_and_openai_usage_are_priced_their_own_way() {
        let rules = Rules::builtin();
        // Claude Sonnet: $3/Mtok, writes 1.25x, reads 0.1x.
        let p = Price::of(&rules, Provider::Anthropic, "claude-sonnet-4-20250514");
        let t =
            p.tokens(&Usage { input_tokens: Some(100), cache_read_tokens: Some(10), cache_creation_tokens: Some(25) });
        assert_eq!((t.uncached, t.cache_read, t.cache_write), (100, 10, 25));
        assert!((t.input_usd - (100.0 + 1.0 + 31.25) * 3e-6).abs() < 1e-12);
        assert!((p.lost(1000) - 1000.0 * 3e-6 * 1.15).abs() < 1e-12);
        // GPT-5 (codex): $1.25/Mtok, cached input inside input_tokens, reads 0.1x.
        let p = Price::of(&rules, Provider::OpenAiResponses, "gpt-5.2-codex");
        let t =
            p.tokens(&Usage { input_tokens: Some(1000), cache_read_tokens: Some(250), cache_creation_tokens: None });
        assert_eq!((t.uncached, t.cache_read), (750, 250));
        assert!((t.input_usd - (750.0 + 25.0) * 1.25e-6).abs() < 1e-12);
    }
}
