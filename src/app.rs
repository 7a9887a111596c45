//! `App`: the cheap-to-clone handle every tool and transport receives.
//!
//! It owns the open store, the embedder and the verifier (both loading in the background), the
//! vector index (rebuilt from the store in the background) and the resolved configuration of one
//! project.

use crate::config::Config;
use crate::embed::{EmbedHandle, ModelFiles};
use crate::index::VectorIndex;
use crate::project::Project;
use crate::store::Store;
use crate::verify::llm::LlmJudge;
use crate::verify::{VerifierFiles, VerifyHandle};
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::OnceCell;

/// Shared state of one project's server.
pub struct State {
    /// The resolved configuration.
    pub config: Config,
    /// The project served.
    pub project: Project,
    /// The open store (this process owns it).
    pub store: Store,
    /// The embedding model, possibly still loading.
    pub embed: EmbedHandle,
    /// The verification stage for plans and results (its model possibly still loading).
    pub verify: VerifyHandle,
    index: Arc<OnceCell<VectorIndex>>,
    /// When this process opened the store.
    pub started: Instant,
}

/// A cheap-to-clone handle over `Arc<State>`.
#[derive(Clone)]
pub struct App(Arc<State>);

impl std::ops::Deref for App {
    type Target = State;
    fn deref(&self) -> &State {
        &self.0
    }
}

impl App {
    /// Wraps an open store; starts loading the model and rebuilding the index in the background.
    /// Must be called inside a tokio runtime.
    pub fn start(config: Config, project: Project, store: Store) -> App {
        let m = &config.matching;
        let llm = LlmJudge::configured(&config.llm, m.llm_judge, m.llm_budget_ms, store.clone());
        let (embed, verify) = if config.model.enabled {
            let dir = config.model.dir.clone().unwrap_or_else(|| config.home().join("models"));
            let mut files = ModelFiles::under(&dir);
            if let Some(rt) = &config.model.runtime {
                files.runtime = rt.clone();
            }
            let verifier = VerifierFiles::under(&dir, files.runtime.clone());
            (
                EmbedHandle::spawn(Some(files), config.model.threads, config.model.max_length),
                VerifyHandle::spawn(Some(verifier), &config.matching, "", llm),
            )
        } else {
            let why = "models are disabled in the configuration (model.enabled = false)";
            (EmbedHandle::spawn(None, 1, 0), VerifyHandle::cosine_only(&config.matching, why))
        };
        store.set_limit(config.store.max_store_bytes);
        let index = Arc::new(OnceCell::new());
        let (cell, s, dir) = (index.clone(), store.clone(), project.index_dir());
        tokio::spawn(async move {
            let _ = cell.get_or_try_init(|| rebuild(s, dir)).await;
        });
        let app = App(Arc::new(State { config, project, store, embed, verify, index, started: Instant::now() }));
        let weak = Arc::downgrade(&app.0);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(SAVE_EVERY);
            tick.tick().await;
            loop {
                tick.tick().await;
                let Some(state) = weak.upgrade() else { break };
                App(state).save_index().await;
            }
        });
        app
    }

    /// Saves changed index graphs to the project's index directory (derived data: a failure only
    /// means the next start rebuilds from the store).
    pub async fn save_index(&self) {
        let (Some(index), dir) = (self.index_now(), self.project.index_dir()) else { return };
        match tokio::task::spawn_blocking(move || index.save(&dir)).await {
            Ok(Ok(n)) if n > 0 => tracing::info!(scopes = n, "vector index saved"),
            Ok(Err(e)) => tracing::warn!(error = %e, "vector index not saved; it will be rebuilt from the store"),
            _ => {}
        }
    }

    /// Flushes the store and saves the index; call before the process exits.
    pub async fn shutdown(&self) {
        if let Err(e) = self.store.flush_async().await {
            tracing::error!(error = %e, "final store flush failed");
        }
        self.save_index().await;
    }

    /// The vector index, waiting for the startup rebuild if it is still running.
    pub async fn index(&self) -> Result<VectorIndex, crate::index::Error> {
        self.index.get_or_try_init(|| rebuild(self.store.clone(), self.project.index_dir())).await.cloned()
    }

    /// The index if it is already built (for stats; never waits).
    pub fn index_now(&self) -> Option<VectorIndex> {
        self.index.get().cloned()
    }
}

/// How often changed index graphs are saved.
const SAVE_EVERY: std::time::Duration = std::time::Duration::from_secs(60);

async fn rebuild(store: Store, dir: std::path::PathBuf) -> Result<VectorIndex, crate::index::Error> {
    let started = Instant::now();
    let index =
        tokio::task::spawn_blocking(move || VectorIndex::open(&store, Some(&dir))).await.unwrap_or_else(|e| {
            Err(crate::index::Error::Store(crate::store::Error::Codec { tree: "vectors", message: e.to_string() }))
        })?;
    tracing::info!(vectors = index.len(), elapsed_ms = started.elapsed().as_millis() as u64, "vector index ready");
    Ok(index)
}
