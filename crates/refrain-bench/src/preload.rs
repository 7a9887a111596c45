//! Fills a project's store in process before a benchmark server is spawned: `n` plans and `n`
//! results written through the library (records plus their vectors), so 100k entries take
//! seconds instead of 100k MCP calls. The vector index itself is left to the server, which
//! rebuilds it from the store's vectors at startup, as after any crash.
//!
//! Bulk vectors are pseudo-random unit vectors (embedding 100k texts would dominate the run);
//! `real` results go through the real put path with embedded queries, so semantic lookups have
//! something true to find among the bulk. `questions` files real texts with their real
//! embeddings, in batches, for runs where every stored text must be a true one.

use crate::core::random_unit;
use crate::families::filler;
use refrain::app::App;
use refrain::config::Config;
use refrain::embed::{Embedder, FastEmbedder, ModelFiles};
use refrain::index::VectorIndex;
use refrain::plan::key::IntentKey;
use refrain::plan::library::{self, Record};
use refrain::plan::normalise::normalise;
use refrain::plan::template::{Counters, Provenance, StoredPlan, Versions, plan_id};
use refrain::project::Project;
use refrain::results::entry::{self, Entry, now_ms};
use refrain::results::{PutRequest, key};
use refrain::store::Store;
use serde_json::json;
use std::path::Path;

/// Tool name of the bulk and real results.
pub const TOOL: &str = "WebSearch";
/// Namespace of the preloaded results.
pub const NAMESPACE: &str = "default";
/// Vectors written per throwaway index (below the graph threshold, so nothing is built here).
const CHUNK: usize = 4000;

/// What was preloaded, for the timed calls to aim at.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// Results with exact keys `{"q": i}` for i in 0..n.
    pub n: usize,
    /// Queries stored through the real put path.
    pub real: Vec<String>,
    /// Expired results with keys `{"stale": i}`.
    pub stale: usize,
}

/// The query stored with real result `i` (200 distinct ones; near-identical stored queries would
/// make the verifier refuse to choose, as it should).
pub fn real_query(i: usize) -> String {
    let verbs =
        ["configure", "debug", "profile", "test", "document", "benchmark", "upgrade", "secure", "deploy", "monitor"];
    let objects = [
        "connection pool",
        "retry policy",
        "log rotation",
        "TLS certificates",
        "rate limiter",
        "cache eviction",
        "database migrations",
        "websocket handshake",
        "json schema validation",
        "cron scheduler",
        "thread pool",
        "memory allocator",
        "error reporting",
        "feature flags",
        "config reload",
        "message queue",
        "search index",
        "image resizing",
        "pdf export",
        "email templates",
    ];
    format!("how do I {} the {} of our web service", verbs[i % verbs.len()], objects[(i / verbs.len()) % objects.len()])
}

/// Writes `n` plans and `n` results (+ `real` semantic results and `stale` expired ones) into
/// the project's store (created without compression when `plain`, as older refrains made them).
/// Runs its own runtime on a separate thread.
pub fn fill(
    home: &Path,
    project: &Project,
    models: &Path,
    n: usize,
    real: usize,
    stale: usize,
    plain: bool,
) -> anyhow::Result<Loaded> {
    project.prepare()?;
    if plain {
        Store::open_uncompressed(&project.db_dir())?.flush()?;
    }
    let (home, project, models) = (home.to_path_buf(), project.clone(), models.to_path_buf());
    std::thread::spawn(move || -> anyhow::Result<Loaded> {
        // Results first: the app started for the real puts rebuilds its index from a store that
        // holds nothing yet, so no background build outlives it and keeps the store open.
        let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
        let loaded = rt.block_on(results(&home, project.clone(), &models, n, real, stale))?;
        rt.shutdown_timeout(std::time::Duration::from_secs(2));
        plans(&project, n, Vectors::Random)?;
        Ok(loaded)
    })
    .join()
    .map_err(|_| anyhow::anyhow!("the preload thread panicked"))?
}

async fn results(
    home: &Path,
    project: Project,
    models: &Path,
    n: usize,
    real: usize,
    stale: usize,
) -> anyhow::Result<Loaded> {
    let store = Store::open(&project.db_dir())?;
    let mut config = Config::default();
    config.model.dir = Some(models.to_path_buf());
    config.store.home = Some(home.to_path_buf());
    let app = App::start(config, project, store);
    let mut queries = Vec::new();
    for i in 0..real {
        let q = real_query(i);
        let req = PutRequest {
            tool: TOOL.into(),
            args: json!({"real": i}),
            result: json!(format!("answer {i}")),
            query: Some(q.clone()),
            ttl_secs: Some(86_400),
            ..Default::default()
        };
        refrain::results::put(&app, req).await?;
        queries.push(q);
    }
    let store = &app.store;
    let now = now_ms();
    let scope = entry::scope(NAMESPACE, TOOL);
    let index = app.index().await?;
    index.hold_builds(true);
    for chunk in (0..n).collect::<Vec<_>>().chunks(CHUNK) {
        let keys: Vec<(String, serde_json::Value)> = chunk
            .iter()
            .map(|&i| {
                let args = json!({"q": i});
                (key::exact_key(NAMESPACE, TOOL, &args), args)
            })
            .collect();
        let items =
            keys.iter().zip(chunk).map(|((k, _), &i)| (k.as_bytes().to_vec(), random_unit(i as u64, 384))).collect();
        let ids = index.insert_many(&scope, items)?;
        for (((k, args), &i), id) in keys.into_iter().zip(chunk).zip(ids) {
            write(store, k, args, Some(format!("bulk query {i}")), now + 86_400_000, Some(id))?;
        }
    }
    index.hold_builds(false);
    index.build_now(&scope)?;
    for i in 0..stale {
        let args = json!({"stale": i});
        let k = key::exact_key(NAMESPACE, TOOL, &args);
        write(store, k, args, None, now.saturating_sub(1000), None)?;
    }
    store.flush_async().await?;
    app.shutdown().await;
    Ok(Loaded { n, real: queries, stale })
}

fn write(
    store: &Store,
    key: String,
    args: serde_json::Value,
    query: Option<String>,
    expires_ms: u64,
    vector: Option<u64>,
) -> anyhow::Result<()> {
    let now = now_ms();
    let seed = key_seed(&args);
    let e = Entry {
        key,
        namespace: NAMESPACE.into(),
        tool: TOOL.into(),
        args,
        query,
        result: json!(bulk_text(seed, 200)),
        created_ms: now.min(expires_ms.saturating_sub(1)),
        expires_ms,
        deps: Vec::new(),
        vector,
        bytes: 200,
    };
    entry::write(store, &e)?;
    Ok(())
}

/// About `len` bytes of words drawn pseudo-randomly from a small vocabulary: a stand-in for a
/// tool's output that compresses about as well as real text (a run of one letter would shrink
/// to nothing and flatter the store's size on disk).
pub fn bulk_text(seed: u64, len: usize) -> String {
    const WORDS: [&str; 64] = [
        "the", "error", "returns", "function", "value", "file", "line", "src", "config", "request", "response",
        "cache", "timeout", "user", "server", "client", "build", "test", "failed", "passed", "warning", "module",
        "import", "export", "struct", "field", "type", "string", "number", "array", "object", "null", "true", "false",
        "query", "result", "page", "index", "key", "path", "http", "json", "status", "code", "message", "debug",
        "info", "trace", "thread", "lock", "write", "read", "open", "close", "token", "session", "retry", "limit",
        "offset", "version", "update", "delete", "create", "list",
    ];
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = String::with_capacity(len + 16);
    while out.len() < len {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        out.push_str(WORDS[(x % 64) as usize]);
        out.push(if x.is_multiple_of(11) { '\n' } else { ' ' });
        if x.is_multiple_of(7) {
            out.push_str(&(x % 10_000).to_string());
            out.push(' ');
        }
    }
    out
}

fn key_seed(args: &serde_json::Value) -> u64 {
    args.to_string().bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3))
}

/// Where preloaded plans get their task vectors.
#[derive(Debug, Clone, Copy)]
pub enum Vectors<'a> {
    /// No vectors (exact buckets and wording only).
    None,
    /// Embedded with the model in this directory.
    Model(&'a Path),
    /// Pseudo-random unit vectors: the index has the size, without the embedding time.
    Random,
}

/// Writes filler plans (and their task vectors) straight into a fresh store. Each chunk uses a
/// throwaway in-memory index, so no graph is built here: the vectors land in the store and the
/// server builds its index from them at startup.
pub fn plans(project: &Project, n: usize, vectors: Vectors) -> anyhow::Result<()> {
    project.prepare()?;
    let store = Store::open(&project.db_dir())?;
    let model = match vectors {
        Vectors::Model(d) => Some(FastEmbedder::load(&ModelFiles::under(d), 2, 256)?),
        _ => None,
    };
    let index = VectorIndex::open(&store, Some(&project.index_dir()))?;
    index.hold_builds(true);
    for chunk in (0..n).collect::<Vec<_>>().chunks(256) {
        let items: Vec<(String, _)> = chunk.iter().map(|&i| filler(i)).collect();
        let vectors = match (&model, vectors) {
            (Some(m), _) => {
                m.embed(&items.iter().map(|(t, _)| t.as_str()).collect::<Vec<_>>())?.into_iter().map(Some).collect()
            }
            (None, Vectors::Random) => chunk.iter().map(|&i| Some(crate::core::random_unit(i as u64, 384))).collect(),
            (None, _) => vec![None; items.len()],
        };
        for ((task, template), v) in items.into_iter().zip(vectors) {
            let norm = normalise(&task);
            let key = IntentKey::of(&norm);
            let id = plan_id(&key.bucket, &template);
            let vector = v.map(|v| index.insert(library::SCOPE, id.as_bytes(), v)).transpose()?;
            let plan = StoredPlan {
                id,
                key,
                versions: Versions { plan: "1".into(), normaliser: refrain::plan::NORMALISER_VERSION, extractor: None },
                template,
                skeleton: norm.skeleton,
                provenance: Provenance { source: "bench-filler".into(), task, confidence: None },
                stored_at: 0,
                last_hit_at: None,
                counters: Counters::default(),
                quarantined: None,
            };
            library::put(&store, &Record { plan, vector })?;
        }
    }
    index.hold_builds(false);
    index.build_now(library::SCOPE)?;
    store.flush()?;
    Ok(())
}

/// Stores `texts` as results of `tool` in `namespace` straight into the project's store, each with
/// its real embedding (embedded in batches) and the result `answer <i>`, filed the way
/// `response_cache_put` files them: the entry, its query's text row and its vector. The server
/// builds its index from the vectors at startup. Returns how many were stored.
pub fn questions(
    project: &Project,
    models: &Path,
    namespace: &str,
    tool: &str,
    texts: &[String],
) -> anyhow::Result<usize> {
    project.prepare()?;
    let store = Store::open(&project.db_dir())?;
    let model = FastEmbedder::load(&ModelFiles::under(models), 2, Config::default().model.max_length)?;
    let index = VectorIndex::open(&store, Some(&project.index_dir()))?;
    let scope = entry::scope(namespace, tool);
    let now = now_ms();
    for (c, chunk) in texts.chunks(256).enumerate() {
        let vectors = model.embed(&chunk.iter().map(String::as_str).collect::<Vec<_>>())?;
        let first = c * 256;
        let keys: Vec<String> =
            (first..first + chunk.len()).map(|i| key::exact_key(namespace, tool, &json!({"q": i}))).collect();
        let ids = index.insert_many(&scope, keys.iter().map(|k| k.as_bytes().to_vec()).zip(vectors).collect())?;
        for (j, (k, id)) in keys.into_iter().zip(ids).enumerate() {
            let i = first + j;
            let result = json!(format!("answer {i}"));
            let e = Entry {
                key: k,
                namespace: namespace.into(),
                tool: tool.into(),
                args: json!({"q": i}),
                query: Some(chunk[j].clone()),
                bytes: result.to_string().len() as u64,
                result,
                created_ms: now,
                expires_ms: now + 86_400_000,
                deps: Vec::new(),
                vector: Some(id),
            };
            entry::write(&store, &e)?;
        }
    }
    index.build_now(&scope)?;
    store.flush()?;
    Ok(texts.len())
}
