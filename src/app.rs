//! `App`: the cheap-to-clone handle every tool and transport receives.
//!
//! It owns the open store, the embedder and the verifier (both loading in the background), the
//! vector index (its scopes load on first use) and the resolved configuration of one project.

use crate::config::Config;
use crate::embed::{EmbedHandle, ModelFiles};
use crate::index::VectorIndex;
use crate::project::Project;
use crate::store::Store;
use crate::verify::llm::LlmJudge;
use crate::verify::{VerifierFiles, VerifyHandle};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::OnceCell;

/// How long `shutdown` waits for a model load in flight (one takes about a second on an idle
/// machine, several on a loaded one).
const LOAD_SETTLE: Duration = Duration::from_secs(30);

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
            let _ = cell.get_or_try_init(|| open_index(s, dir)).await;
        });
        App(Arc::new(State { config, project, store, embed, verify, index, started: Instant::now() }))
    }

    /// Waits for model loads in flight (at most `LOAD_SETTLE`), then flushes the store; call
    /// before the process exits. A process leaving while the ONNX runtime is still loading a model
    /// on another thread can end by a signal, with a failing exit status and no message: a CLI
    /// command that became the owner for one quick call (`refrain plans list`) did, on a loaded
    /// machine where the load outlasted the call. Index graphs are saved when they are built, so
    /// there is nothing else to write.
    pub async fn shutdown(&self) {
        let loads = async {
            self.embed.settled().await;
            self.verify.settled().await;
        };
        if tokio::time::timeout(LOAD_SETTLE, loads).await.is_err() {
            tracing::warn!(secs = LOAD_SETTLE.as_secs(), "a model was still loading at exit");
        }
        if let Err(e) = self.store.flush_async().await {
            tracing::error!(error = %e, "final store flush failed");
        }
    }

    /// The vector index. Opening it loads nothing (scopes load on first use); only a store
    /// written by an older refrain makes the first call wait, once, for its vectors to convert.
    pub async fn index(&self) -> Result<VectorIndex, crate::index::Error> {
        self.index.get_or_try_init(|| open_index(self.store.clone(), self.project.index_dir())).await.cloned()
    }

    /// The index if it is already open (for stats; never waits).
    pub fn index_now(&self) -> Option<VectorIndex> {
        self.index.get().cloned()
    }
}

async fn open_index(store: Store, dir: std::path::PathBuf) -> Result<VectorIndex, crate::index::Error> {
    // Often first asked for inside a tool call: on the `threads` pool, so no thread started for it
    // inherits a slow call's lowered priority.
    crate::threads::run(move || VectorIndex::open(&store, Some(&dir)), None).await.unwrap_or_else(|e| {
        Err(crate::index::Error::Store(crate::store::Error::Codec { tree: "vectors", message: e.to_string() }))
    })
}
