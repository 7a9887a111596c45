//! The optional LLM canonicaliser: asks any OpenAI-compatible chat-completions endpoint (through
//! async-openai) for a task's canonical action and target kind, within the local vocabulary.
//!
//! Off by default (`llm.enabled`). Answers are cached in the `CANON` tree; any failure, timeout
//! or answer outside the vocabulary falls back to the local normaliser and never fails a lookup.

use super::NORMALISER_VERSION;
use super::lexicon;
use super::normalise::Normalised;
use crate::app::App;
use crate::config::LlmConfig;
use crate::store::trees;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::time::Duration;

/// A cached answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    /// Canonical action.
    pub action: String,
    /// Primary target kind.
    pub kind: String,
}

/// Refines a local normalisation with the canonicaliser when it is enabled.
pub async fn refine(app: &App, task: &str, local: Normalised) -> Normalised {
    let cfg = &app.config.llm;
    if !cfg.enabled {
        return local;
    }
    let cache_key = cache_key(cfg, task);
    if let Ok(Some(a)) = app.store.get::<Answer>(trees::CANON, &cache_key) {
        return apply(local, a);
    }
    match ask(cfg, task).await {
        Ok(a) => {
            if let Err(e) = app.store.put(trees::CANON, &cache_key, &a) {
                tracing::warn!(error = %e, "cannot cache the canonicaliser's answer");
            }
            let _ = crate::stats::bump(&app.store, "plans", "canon_calls", None, 1);
            apply(local, a)
        }
        Err(e) => {
            tracing::warn!(error = %e, "LLM canonicaliser failed; using the local normaliser");
            let _ = crate::stats::bump(&app.store, "plans", "canon_fallbacks", None, 1);
            local
        }
    }
}

fn apply(mut local: Normalised, a: Answer) -> Normalised {
    local.action = a.action;
    if !local.kinds.contains(&a.kind) && a.kind != "none" {
        local.kinds.push(a.kind.clone());
        local.kinds.sort();
    }
    local.kind = a.kind;
    local
}

fn cache_key(cfg: &LlmConfig, task: &str) -> Vec<u8> {
    let mut h = Sha256::new();
    let model = cfg.model.as_deref().unwrap_or_default();
    let base = cfg.base_url.as_deref().unwrap_or_default();
    h.update(format!("{NORMALISER_VERSION}\0{base}\0{model}\0{task}").as_bytes());
    h.finalize().to_vec()
}

/// The canonical actions and kinds the canonicaliser may answer with.
pub fn vocabulary() -> (Vec<&'static str>, Vec<&'static str>) {
    let mut actions: Vec<&str> = lexicon::VERBS.iter().chain(lexicon::PHRASES).map(|(_, a)| *a).collect();
    actions.sort();
    actions.dedup();
    let mut kinds: Vec<&str> = lexicon::KINDS.iter().map(|(_, k)| *k).chain(["symbol", "url", "none"]).collect();
    kinds.sort();
    kinds.dedup();
    (actions, kinds)
}

/// Asks the endpoint once, within the configured timeout.
pub async fn ask(cfg: &LlmConfig, task: &str) -> Result<Answer, String> {
    let base = cfg.base_url.clone().ok_or("llm.base_url is not set")?;
    let model = cfg.model.clone().ok_or("llm.model is not set")?;
    let key = cfg.api_key_env.as_deref().and_then(|v| std::env::var(v).ok()).unwrap_or_else(|| "none".into());
    // reqwest is built without a default TLS provider; it needs one even for plain http.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let (actions, kinds) = vocabulary();
    let system = format!(
        "You classify tasks given to a coding agent. Reply with one JSON object and nothing else: \
         {{\"action\": A, \"kind\": K}}. A is what the task asks to do, one of: {}. K is the primary \
         thing it acts on, one of: {}.",
        actions.join(", "),
        kinds.join(", ")
    );
    let request: async_openai::types::chat::CreateChatCompletionRequest = serde_json::from_value(serde_json::json!({
        "model": model,
        "temperature": 0,
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": task}],
    }))
    .map_err(|e| e.to_string())?;
    let client = async_openai::Client::with_config(
        async_openai::config::OpenAIConfig::new().with_api_base(base).with_api_key(key),
    );
    let timeout = Duration::from_millis(cfg.timeout_ms.max(1));
    let response = tokio::time::timeout(timeout, client.chat().create(request))
        .await
        .map_err(|_| format!("no answer within {} ms", cfg.timeout_ms))?
        .map_err(|e| e.to_string())?;
    let content = response.choices.into_iter().find_map(|c| c.message.content).ok_or("the answer has no content")?;
    parse(&content, &actions, &kinds)
}

/// Parses the first JSON object in the answer and checks it against the vocabulary.
fn parse(content: &str, actions: &[&str], kinds: &[&str]) -> Result<Answer, String> {
    let start = content.find('{').ok_or("no JSON object in the answer")?;
    let end = content.rfind('}').ok_or("no JSON object in the answer")?;
    let a: Answer = serde_json::from_str(content.get(start..=end).unwrap_or_default()).map_err(|e| e.to_string())?;
    let a = Answer { action: a.action.trim().to_lowercase(), kind: a.kind.trim().to_lowercase() };
    if !actions.contains(&a.action.as_str()) || !kinds.contains(&a.kind.as_str()) {
        return Err(format!("answer outside the vocabulary: {} / {}", a.action, a.kind));
    }
    Ok(a)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_outside_the_vocabulary_are_refused() {
        let (a, k) = vocabulary();
        assert!(parse("sure! {\"action\": \"add\", \"kind\": \"flag\"}", &a, &k).is_ok());
        assert!(parse("{\"action\": \"juggle\", \"kind\": \"flag\"}", &a, &k).is_err());
        assert!(parse("no idea", &a, &k).is_err());
    }
}
