//! Removing results: by written paths (hooks), by key, by tool, everything stale, everything, and
//! the LRU eviction that keeps the total size under its limit.

use super::entry::{self, now_ms};
use super::fresh::{self, Checked};
use super::{AREA, Result};
use crate::app::App;
use crate::stats;
use crate::store::trees;

/// Which results to evict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EvictWhat {
    /// One entry by its exact key.
    Key(String),
    /// Every result of a tool (in one namespace, or all).
    Tool {
        /// The tool.
        tool: String,
        /// Only this namespace.
        namespace: Option<String>,
    },
    /// Every expired or stale result.
    Stale,
    /// Every result.
    All,
}

/// Removes one entry (and its vector); true when it existed.
async fn remove(app: &App, key: &str) -> Result<bool> {
    match entry::remove(&app.store, key)? {
        Some(e) => {
            drop_vector(app, &e).await?;
            Ok(true)
        }
        None => Ok(false),
    }
}

/// Removes a removed entry's query vector from the index (and the store), if it had one.
pub(super) async fn drop_vector(app: &App, e: &entry::Entry) -> Result<()> {
    if let Some(id) = e.vector {
        app.index().await?.remove(&entry::scope(&e.namespace, &e.tool), id)?;
    }
    Ok(())
}

/// Evicts results; returns how many were removed (flushed).
pub async fn evict(app: &App, what: &EvictWhat) -> Result<usize> {
    let store = &app.store;
    let mut n = 0;
    match what {
        EvictWhat::Key(k) => n += usize::from(remove(app, k).await?),
        EvictWhat::Tool { tool, namespace } => {
            for k in entry::all_keys(store)? {
                let Some(e) = entry::load(store, &k)? else { continue };
                if &e.tool == tool && namespace.as_ref().is_none_or(|ns| &e.namespace == ns) {
                    n += usize::from(remove(app, &k).await?);
                }
            }
        }
        EvictWhat::Stale => {
            let now = now_ms();
            for k in entry::all_keys(store)? {
                let Some(e) = entry::load(store, &k)? else { continue };
                if now >= e.expires_ms || fresh::check(&e.deps, &app.project.root, &mut Checked::default()).is_err() {
                    n += usize::from(remove(app, &k).await?);
                }
            }
        }
        EvictWhat::All => {
            let mut vectors = Vec::new();
            store.for_each::<entry::Entry>(trees::RESPONSES, |_, e| {
                if let Some(id) = e.vector {
                    vectors.push((entry::scope(&e.namespace, &e.tool), id));
                }
                true
            })?;
            n = store.clear(trees::RESPONSES)?;
            for t in [
                trees::RESPONSE_LRU,
                trees::RESPONSE_DEPS,
                trees::RESPONSE_USE,
                trees::RESPONSE_TEXTS,
                trees::RESPONSE_FEEDBACK,
            ] {
                store.clear(t)?;
            }
            if !vectors.is_empty() {
                let index = app.index().await?;
                for (scope, id) in vectors {
                    index.remove(&scope, id)?;
                }
            }
        }
    }
    if n > 0 {
        stats::bump(store, AREA, "evicted", None, n as u64)?;
    }
    store.flush_async().await?;
    Ok(n)
}

/// Drops every result that depends on one of the written `paths` (a file, a directory a result
/// walked, or a directory containing files results read). Returns (key, path) pairs removed.
pub async fn invalidate_paths(app: &App, paths: &[String]) -> Result<Vec<(String, String)>> {
    let root = &app.project.root;
    let mut removed = Vec::new();
    for p in paths {
        let abs = fresh::resolve(root, p);
        let abs_s = abs.display().to_string();
        let mut keys: Vec<String> = entry::dependents(&app.store, &abs_s)?.into_iter().map(|(k, _)| k).collect();
        keys.extend(entry::dependents_below(&app.store, &abs_s)?.into_iter().map(|(k, _)| k));
        // Trees that contain the path.
        for anc in abs.ancestors().skip(1) {
            let a = anc.display().to_string();
            keys.extend(
                entry::dependents(&app.store, &a)?.into_iter().filter(|(_, kind)| kind == "tree").map(|(k, _)| k),
            );
        }
        keys.sort();
        keys.dedup();
        for k in keys {
            if remove(app, &k).await? {
                removed.push((k, fresh::display(root, &abs_s)));
            }
        }
    }
    if !removed.is_empty() {
        stats::bump(&app.store, AREA, "invalidated", None, removed.len() as u64)?;
    }
    app.store.flush_async().await?;
    Ok(removed)
}

/// Evicts least recently used entries until the total is at most `limit` bytes, never the entry
/// just written (`keep`). Returns how many were evicted.
pub(super) async fn shrink_to(app: &App, limit: u64, keep: &str) -> Result<usize> {
    let mut n = 0;
    while entry::total_bytes(&app.store)? > limit {
        let Some(k) = entry::oldest(&app.store)? else { break };
        if k == keep {
            break;
        }
        if !remove(app, &k).await? {
            // A dangling LRU row: drop it so the loop advances.
            app.store.remove(trees::RESPONSE_LRU, &lru_head(&app.store)?)?;
        }
        n += 1;
    }
    if n > 0 {
        stats::bump(&app.store, AREA, "evicted_lru", None, n as u64)?;
    }
    Ok(n)
}

fn lru_head(store: &crate::store::Store) -> Result<Vec<u8>> {
    let mut head = Vec::new();
    store.for_each::<()>(trees::RESPONSE_LRU, |k, ()| {
        head = k.to_vec();
        false
    })?;
    Ok(head)
}
