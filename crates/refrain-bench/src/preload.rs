//! Fills a project's store in process before a benchmark server is spawned: `n` plans and `n`
//! results filed through the library's bulk entry points (`results::bulk::import`,
//! `plan::library::import`: the same records `response_cache_put` and `plan_store` write, one
//! store batch per chunk), on every core, then both graphs built once and saved, as a server
//! would. 1M entries take minutes instead of hours of one-at-a-time writes.
//!
//! Bulk vectors are pseudo-random unit vectors (embedding 1M texts would dominate the run);
//! `real` results go through the real put path with embedded queries, so semantic lookups have
//! something true to find among the bulk. `questions` files real texts with their real
//! embeddings, in batches, for runs where every stored text must be a true one.

use crate::core::random_unit;
use crate::families::filler;
use refrain::config::Config;
use refrain::embed::{Embedder, FastEmbedder, ModelFiles};
use refrain::index::VectorIndex;
use refrain::plan::library;
use refrain::plan::template::StoredPlan;
use refrain::project::Project;
use refrain::results::entry::{self, Entry, now_ms};
use refrain::results::key;
use refrain::store::Store;
use serde_json::json;
use std::path::Path;

/// Tool name of the bulk and real results.
pub const TOOL: &str = "WebSearch";
/// Namespace of the preloaded results.
pub const NAMESPACE: &str = "default";
/// Entries filed per store batch: big enough that a batch's apply is cheap per row, small
/// enough that the importing threads take turns often.
const CHUNK: usize = 2000;

/// Runs `work(first, len)` over `0..n` in chunks of `CHUNK`, on every core (rayon's pool: a
/// thread takes another chunk as it finishes one, so the store's batch applies take turns and the
/// building of the next chunk overlaps them). Stops taking chunks at the first error.
fn chunks_on_all_cores(n: usize, work: impl Fn(usize, usize) -> anyhow::Result<()> + Sync) -> anyhow::Result<()> {
    use rayon::prelude::*;
    (0..n.div_ceil(CHUNK)).into_par_iter().try_for_each(|c| {
        let first = c * CHUNK;
        work(first, CHUNK.min(n - first))
    })
}

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

/// Marks a size's store as fully preloaded, for a later run to reuse (a run stopped midway leaves
/// none, and is redone).
pub const PRELOADED: &str = "preloaded";

/// What `fill` returned for a store it filled earlier (with the same `n`, `real` and `stale`):
/// reuses the store instead of filling it again. The expired results, which a run evicts, are
/// written again, so the stale row measures the same thing.
pub fn reuse(project: &Project, n: usize, real: usize, stale: usize) -> anyhow::Result<Loaded> {
    let store = Store::open(&project.db_dir())?;
    let index = VectorIndex::open(&store, Some(&project.index_dir()))?;
    let now = now_ms();
    let stale_items =
        (0..stale).map(|i| (bulk_entry(json!({"stale": i}), None, now.saturating_sub(1000)), None)).collect();
    refrain::results::bulk::import(&store, &index, stale_items)?;
    store.flush()?;
    Ok(Loaded { n, real: (0..real).map(real_query).collect(), stale })
}

/// Writes `n` plans and `n` results (+ `real` semantic results and `stale` expired ones) into
/// the project's store (created without compression when `plain`, as older refrains made them).
pub fn fill(
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
    // Each part opens the store and closes it when done (sled holds a lock on it meanwhile).
    let loaded = results(project, models, n, real, stale)?;
    plans(project, n, Vectors::Random)?;
    Ok(loaded)
}

fn results(project: &Project, models: &Path, n: usize, real: usize, stale: usize) -> anyhow::Result<Loaded> {
    let store = Store::open(&project.db_dir())?;
    let index = VectorIndex::open(&store, Some(&project.index_dir()))?;
    let now = now_ms();
    // The real ones: their queries embedded by the model, filed as response_cache_put files them.
    let queries: Vec<String> = (0..real).map(real_query).collect();
    if real > 0 {
        let model = FastEmbedder::load(&ModelFiles::under(models), 2, Config::default().model.max_length)?;
        let vectors = model.embed(&queries.iter().map(String::as_str).collect::<Vec<_>>())?;
        let items = queries
            .iter()
            .zip(vectors)
            .enumerate()
            .map(|(i, (q, v))| (answered(NAMESPACE, TOOL, json!({"real": i}), q, i, now), Some(v)))
            .collect();
        refrain::results::bulk::import(&store, &index, items)?;
    }
    let scope = entry::scope(NAMESPACE, TOOL);
    index.hold_builds(true);
    let filed = chunks_on_all_cores(n, |first, len| {
        let items = (first..first + len)
            .map(|i| {
                let args = json!({"q": i});
                let e = bulk_entry(args, Some(format!("bulk query {i}")), now + 86_400_000);
                (e, Some(random_unit(i as u64, 384)))
            })
            .collect();
        refrain::results::bulk::import(&store, &index, items)?;
        Ok(())
    });
    index.hold_builds(false);
    filed?;
    index.build_now(&scope)?;
    let stale_items =
        (0..stale).map(|i| (bulk_entry(json!({"stale": i}), None, now.saturating_sub(1000)), None)).collect();
    refrain::results::bulk::import(&store, &index, stale_items)?;
    store.flush()?;
    Ok(Loaded { n, real: queries, stale })
}

/// A result found by its query, answered `answer <i>`, stored at `now` for a day.
fn answered(namespace: &str, tool: &str, args: serde_json::Value, query: &str, i: usize, now: u64) -> Entry {
    let result = json!(format!("answer {i}"));
    Entry {
        key: key::exact_key(namespace, tool, &args),
        namespace: namespace.into(),
        tool: tool.into(),
        args,
        query: Some(query.to_string()),
        bytes: result.to_string().len() as u64,
        result,
        created_ms: now,
        expires_ms: now + 86_400_000,
        deps: Vec::new(),
        vector: None,
    }
}

/// A bulk result: ~200 bytes of pseudo-random words under the exact key of `args`.
fn bulk_entry(args: serde_json::Value, query: Option<String>, expires_ms: u64) -> Entry {
    let now = now_ms();
    let seed = key_seed(&args);
    Entry {
        key: key::exact_key(NAMESPACE, TOOL, &args),
        namespace: NAMESPACE.into(),
        tool: TOOL.into(),
        args,
        query,
        result: json!(bulk_text(seed, 200)),
        created_ms: now.min(expires_ms.saturating_sub(1)),
        expires_ms,
        deps: Vec::new(),
        vector: None,
        bytes: 200,
    }
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

/// Writes filler plans (and their task vectors) straight into a fresh store, on every core, one
/// store batch per chunk; the graph is built once at the end and saved.
pub fn plans(project: &Project, n: usize, vectors: Vectors) -> anyhow::Result<()> {
    project.prepare()?;
    let store = Store::open(&project.db_dir())?;
    let model = match vectors {
        Vectors::Model(d) => Some(FastEmbedder::load(&ModelFiles::under(d), 2, 256)?),
        _ => None,
    };
    let index = VectorIndex::open(&store, Some(&project.index_dir()))?;
    index.hold_builds(true);
    let filed = chunks_on_all_cores(n, |first, len| {
        let items: Vec<(String, _)> = (first..first + len).map(filler).collect();
        let vectors: Vec<Option<Vec<f32>>> = match (&model, vectors) {
            (Some(m), _) => {
                m.embed(&items.iter().map(|(t, _)| t.as_str()).collect::<Vec<_>>())?.into_iter().map(Some).collect()
            }
            (None, Vectors::Random) => (first..first + len).map(|i| Some(random_unit(i as u64, 384))).collect(),
            (None, _) => vec![None; items.len()],
        };
        let plans = items
            .into_iter()
            .zip(vectors)
            .map(|((task, template), v)| {
                let plan = StoredPlan::for_task(task, "bench-filler", template);
                (plan, v)
            })
            .collect();
        library::import(&store, &index, plans)?;
        Ok(())
    });
    index.hold_builds(false);
    filed?;
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
    index.hold_builds(true);
    for (c, chunk) in texts.chunks(256).enumerate() {
        let vectors = model.embed(&chunk.iter().map(String::as_str).collect::<Vec<_>>())?;
        let first = c * 256;
        let items = chunk
            .iter()
            .zip(vectors)
            .enumerate()
            .map(|(j, (text, v))| {
                let i = first + j;
                (answered(namespace, tool, json!({"q": i}), text, i, now), Some(v))
            })
            .collect();
        refrain::results::bulk::import(&store, &index, items)?;
    }
    index.hold_builds(false);
    index.build_now(&scope)?;
    store.flush()?;
    Ok(texts.len())
}
