//! A shared handle to the embedder that loads it in the background.
//!
//! `EmbedHandle::spawn` returns at once; `embed` waits until loading settles, then either embeds or
//! reports why no model is available. `state` never waits (for `cache_stats`). The vectors of the
//! last `RECENT` texts are kept: an agent often sends one text twice (a lookup that missed, then the
//! store after the work; the prompt hook, then the agent's own plan_lookup).

use super::{Embedder, Error, FastEmbedder, ModelFiles};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::watch;

/// Where the model load stands.
#[derive(Clone)]
pub enum ModelState {
    /// Still loading.
    Loading,
    /// Ready to embed.
    Ready(Arc<dyn Embedder>),
    /// No model; the reason says why and how to fix it.
    Unavailable(String),
}

impl std::fmt::Debug for ModelState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModelState::Loading => write!(f, "Loading"),
            ModelState::Ready(e) => write!(f, "Ready({})", e.name()),
            ModelState::Unavailable(r) => write!(f, "Unavailable({r})"),
        }
    }
}

/// A cheap-to-clone handle to the (possibly loading) embedder.
#[derive(Clone)]
pub struct EmbedHandle {
    rx: watch::Receiver<ModelState>,
    recent: Arc<Mutex<Recent>>,
}

/// Texts embedded recently and their vectors, oldest first.
#[derive(Default)]
struct Recent {
    vectors: HashMap<String, Vec<f32>>,
    order: VecDeque<String>,
}

/// How many recent texts keep their vectors.
const RECENT: usize = 256;

impl Recent {
    fn get(&self, text: &str) -> Option<Vec<f32>> {
        self.vectors.get(text).cloned()
    }

    fn put(&mut self, text: &str, v: &[f32]) {
        if self.vectors.insert(text.to_string(), v.to_vec()).is_none() {
            self.order.push_back(text.to_string());
        }
        while self.order.len() > RECENT {
            if let Some(old) = self.order.pop_front() {
                self.vectors.remove(&old);
            }
        }
    }
}

impl EmbedHandle {
    /// Starts loading the model on a blocking thread and returns immediately.
    pub fn spawn(files: Option<ModelFiles>, threads: usize, max_length: usize) -> EmbedHandle {
        let Some(files) = files else {
            return Self::fixed(ModelState::Unavailable(
                "embeddings are disabled in the configuration (model.enabled = false)".into(),
            ));
        };
        let (tx, rx) = watch::channel(ModelState::Loading);
        crate::threads::spawn_blocking_detached(move || {
            let started = Instant::now();
            let state = match FastEmbedder::load(&files, threads, max_length) {
                Ok(model) => {
                    tracing::info!(elapsed_ms = started.elapsed().as_millis() as u64, "embedding model loaded");
                    ModelState::Ready(Arc::new(model))
                }
                Err(e) => {
                    tracing::warn!(error = %e, "no embedding model: semantic lookups are off, exact lookups still work");
                    ModelState::Unavailable(e.to_string())
                }
            };
            let _ = tx.send(state);
        });
        EmbedHandle { rx, recent: Arc::default() }
    }

    /// A handle with a fixed state (tests, or a model supplied in-process).
    pub fn fixed(state: ModelState) -> EmbedHandle {
        let (_tx, rx) = watch::channel(state);
        EmbedHandle { rx, recent: Arc::default() }
    }

    /// The current state, without waiting.
    pub fn state(&self) -> ModelState {
        self.rx.borrow().clone()
    }

    /// Waits until no load is in flight (loaded, failed, or never started).
    pub async fn settled(&self) {
        let mut rx = self.rx.clone();
        let _ = rx.wait_for(|s| !matches!(s, ModelState::Loading)).await;
    }

    /// Waits for the load to settle and returns the embedder.
    pub async fn ready(&self) -> Result<Arc<dyn Embedder>, Error> {
        let mut rx = self.rx.clone();
        let state = rx
            .wait_for(|s| !matches!(s, ModelState::Loading))
            .await
            .map(|s| s.clone())
            .unwrap_or_else(|_| ModelState::Unavailable("model loader stopped".into()));
        match state {
            ModelState::Ready(e) => Ok(e),
            ModelState::Unavailable(r) => Err(Error::Unavailable(r)),
            ModelState::Loading => Err(Error::Unavailable("model still loading".into())),
        }
    }

    /// Embeds texts off the async runtime.
    pub async fn embed(&self, texts: Vec<String>) -> Result<Vec<Vec<f32>>, Error> {
        let model = self.ready().await?;
        crate::budget::spawn_blocking(move || {
            let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
            model.embed(&refs)
        })
        .await
        .map_err(|e| Error::Failed(e.to_string()))?
    }

    /// Embeds one text.
    pub async fn embed_one(&self, text: &str) -> Result<Vec<f32>, Error> {
        if let Some(v) = self.recent().get(text) {
            return Ok(v);
        }
        let v = self
            .embed(vec![text.to_string()])
            .await?
            .pop()
            .ok_or_else(|| Error::Failed("no vector returned".into()))?;
        self.recent().put(text, &v);
        Ok(v)
    }

    fn recent(&self) -> std::sync::MutexGuard<'_, Recent> {
        self.recent.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Counts the texts it embeds.
    #[derive(Default)]
    struct Counting(AtomicUsize);

    impl Embedder for Counting {
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, Error> {
            self.0.fetch_add(texts.len(), Ordering::SeqCst);
            Ok(texts.iter().map(|t| vec![t.len() as f32]).collect())
        }
        fn dim(&self) -> usize {
            1
        }
        fn name(&self) -> &str {
            "counting"
        }
    }

    #[tokio::test]
    async fn a_text_sent_again_is_not_embedded_again_until_it_ages_out() {
        let model = Arc::new(Counting::default());
        let handle = EmbedHandle::fixed(ModelState::Ready(model.clone()));
        assert_eq!(handle.embed_one("add a flag").await.unwrap(), vec![10.0]);
        assert_eq!(handle.embed_one("add a flag").await.unwrap(), vec![10.0]);
        assert_eq!(model.0.load(Ordering::SeqCst), 1);
        for i in 0..RECENT {
            handle.embed_one(&format!("text {i}")).await.unwrap();
        }
        handle.embed_one("add a flag").await.unwrap();
        assert_eq!(model.0.load(Ordering::SeqCst), RECENT + 2, "the oldest text was forgotten");
    }
}
