//! The optional LLM judge: where the user configured an OpenAI-compatible endpoint (`[llm]`, the
//! same client as the canonicaliser), it may decide candidates whose score lies close to the
//! threshold, both ways. Never required: every failure, timeout or unclear answer leaves the
//! verifier's verdict as it was. Answers are cached per pair in the store.
//!
//! The judge's own error rate depends on the user's model, so it is not part of the calibration.

use crate::config::LlmConfig;
use crate::store::{Store, trees};
use sha2::{Digest, Sha256};
use std::time::Duration;

/// Version of the prompt (part of the cache key: a new prompt asks again).
const PROMPT_VERSION: u32 = 1;

const SYSTEM: &str = "You decide whether two requests sent to a coding assistant ask for the same thing, \
so that the answer stored for the first one fully and correctly answers the second. Different numbers, \
versions, names, paths, directions (A to B versus B to A), negations or constraints make them different. \
Reply with one JSON object and nothing else: {\"same\": true} or {\"same\": false}.";

/// A configured judge.
#[derive(Clone)]
pub struct LlmJudge {
    cfg: LlmConfig,
    store: Store,
    budget: Duration,
}

impl LlmJudge {
    /// A judge when the user enabled one: `llm.enabled` with a base URL and a model, and
    /// `matching.llm_judge`. The budget bounds the whole lookup's wait.
    pub fn configured(cfg: &LlmConfig, enabled: bool, budget_ms: u64, store: Store) -> Option<LlmJudge> {
        let usable = enabled && cfg.enabled && cfg.base_url.is_some() && cfg.model.is_some();
        let budget = Duration::from_millis(budget_ms.min(cfg.timeout_ms).max(1));
        usable.then(|| LlmJudge { cfg: cfg.clone(), store, budget })
    }

    /// Judges pairs (stored, query) of one lookup concurrently within the budget; `None` where no
    /// clear answer came in time.
    pub async fn judge(&self, kind: &str, query: &str, stored: &[&str]) -> Vec<Option<bool>> {
        let asks = stored.iter().map(|s| self.one(kind, query, s));
        match tokio::time::timeout(self.budget, futures::future::join_all(asks)).await {
            Ok(answers) => answers,
            Err(_) => {
                tracing::warn!(
                    budget_ms = self.budget.as_millis() as u64,
                    "LLM judge gave no answer in time; the verifier's verdict stands"
                );
                vec![None; stored.len()]
            }
        }
    }

    async fn one(&self, kind: &str, query: &str, stored: &str) -> Option<bool> {
        let key = self.cache_key(kind, query, stored);
        if let Ok(Some(same)) = self.store.get::<bool>(trees::VERIFY_LLM, &key) {
            return Some(same);
        }
        match self.ask(query, stored).await {
            Ok(same) => {
                if let Err(e) = self.store.put(trees::VERIFY_LLM, &key, &same) {
                    tracing::warn!(error = %e, "cannot cache the LLM judge's answer");
                }
                Some(same)
            }
            Err(e) => {
                tracing::warn!(error = %e, "LLM judge failed; the verifier's verdict stands");
                None
            }
        }
    }

    fn cache_key(&self, kind: &str, query: &str, stored: &str) -> Vec<u8> {
        let mut h = Sha256::new();
        let base = self.cfg.base_url.as_deref().unwrap_or_default();
        let model = self.cfg.model.as_deref().unwrap_or_default();
        for part in [&PROMPT_VERSION.to_string(), base, model, kind, stored, query] {
            h.update((part.len() as u64).to_be_bytes());
            h.update(part.as_bytes());
        }
        h.finalize().to_vec()
    }

    async fn ask(&self, query: &str, stored: &str) -> Result<bool, String> {
        let base = self.cfg.base_url.clone().ok_or("llm.base_url is not set")?;
        let model = self.cfg.model.clone().ok_or("llm.model is not set")?;
        let key = self.cfg.api_key_env.as_deref().and_then(|v| std::env::var(v).ok()).unwrap_or_else(|| "none".into());
        // reqwest is built without a default TLS provider; it needs one even for plain http.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let user = format!("First request (stored):\n{stored}\n\nSecond request (new):\n{query}");
        let request: async_openai::types::chat::CreateChatCompletionRequest =
            serde_json::from_value(serde_json::json!({
                "model": model,
                "temperature": 0,
                "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}],
            }))
            .map_err(|e| e.to_string())?;
        let client = async_openai::Client::with_config(
            async_openai::config::OpenAIConfig::new().with_api_base(base).with_api_key(key),
        );
        let response = client.chat().create(request).await.map_err(|e| e.to_string())?;
        let content =
            response.choices.into_iter().find_map(|c| c.message.content).ok_or("the answer has no content")?;
        parse(&content)
    }
}

/// Reads `{"same": bool}` from the first JSON object in the answer.
fn parse(content: &str) -> Result<bool, String> {
    let start = content.find('{').ok_or("no JSON object in the answer")?;
    let end = content.rfind('}').ok_or("no JSON object in the answer")?;
    let v: serde_json::Value =
        serde_json::from_str(content.get(start..=end).unwrap_or_default()).map_err(|e| e.to_string())?;
    v["same"].as_bool().ok_or_else(|| format!("the answer has no boolean `same`: {v}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_clear_boolean_counts() {
        assert_eq!(parse("{\"same\": true}"), Ok(true));
        assert_eq!(parse("Sure. {\"same\": false}"), Ok(false));
        assert!(parse("{\"same\": \"maybe\"}").is_err());
        assert!(parse("yes").is_err());
    }
}
