//! Stored entries and the bookkeeping rows around them.
//!
//! Trees: `responses` (key -> `Entry`), `response_use` (key -> `Use`: LRU ticket, last use, hits;
//! plus the byte counters), `response_lru` (ticket + key -> nothing, oldest first) and
//! `response_deps` (path + kind + key -> nothing). Only this file writes those rows, so they stay
//! consistent: an entry is removed with all its rows, and its bytes are subtracted only by the
//! caller that actually removed it.

use super::fresh::Dep;
use crate::store::{self, Key, Store, trees};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One cached result.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Entry {
    /// Hex exact key.
    pub key: String,
    /// Caller-chosen namespace (e.g. an MCP server or an agent).
    pub namespace: String,
    /// The tool that produced the result.
    pub tool: String,
    /// The arguments (secrets redacted).
    pub args: Value,
    /// The natural-language query, when the entry is found by meaning too (secrets redacted).
    pub query: Option<String>,
    /// The result (secrets redacted).
    pub result: Value,
    /// Stored at, ms since the epoch.
    pub created_ms: u64,
    /// Expires at, ms since the epoch.
    pub expires_ms: u64,
    /// What the result depends on.
    pub deps: Vec<Dep>,
    /// The query's vector id in the index, when embedded.
    pub vector: Option<u64>,
    /// Size of the stored result, in bytes (counts toward the total limit).
    pub bytes: u64,
}

/// Usage of one entry: its LRU ticket, last use and hit count.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Use {
    /// Position in the LRU order (higher = used more recently).
    pub ticket: u64,
    /// Last put or hit, ms since the epoch.
    pub last_ms: u64,
    /// Hits served.
    pub hits: u64,
}

const BYTES_IN: &[u8] = b"~bytes_in";
const BYTES_OUT: &[u8] = b"~bytes_out";

/// Milliseconds since the epoch.
pub fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// The scope of an entry's query vector: results of one tool in one namespace.
pub fn scope(namespace: &str, tool: &str) -> String {
    format!("results/{namespace}/{tool}")
}

/// The kind segment of a dependency row.
pub fn dep_kind(d: &Dep) -> &'static str {
    match d {
        Dep::File { .. } => "file",
        Dep::Tree { .. } => "tree",
        Dep::GitHead { .. } => "git",
    }
}

/// The path a dependency row is filed under (git HEAD under `.git/HEAD`, so file writes elsewhere
/// in the repository do not touch it).
pub fn dep_row_path(d: &Dep) -> String {
    match d {
        Dep::GitHead { root, .. } => format!("{root}/.git/HEAD"),
        other => other.path().to_string(),
    }
}

fn dep_row(d: &Dep, key: &str) -> Vec<u8> {
    Key::new().text(&dep_row_path(d)).text(dep_kind(d)).raw(key.as_bytes()).into_bytes()
}

fn lru_row(ticket: u64, key: &str) -> Vec<u8> {
    Key::new().u64(ticket).raw(key.as_bytes()).into_bytes()
}

/// Reads an entry.
pub fn load(store: &Store, key: &str) -> store::Result<Option<Entry>> {
    store.get(trees::RESPONSES, key.as_bytes())
}

/// Writes a new entry with its rows (buffered; the caller flushes). Any previous entry under the
/// same key must have been removed first.
pub fn write(store: &Store, e: &Entry) -> store::Result<()> {
    store.put(trees::RESPONSES, e.key.as_bytes(), e)?;
    for d in &e.deps {
        store.put(trees::RESPONSE_DEPS, &dep_row(d, &e.key), &())?;
    }
    store.incr(trees::RESPONSE_USE, BYTES_IN, e.bytes)?;
    touch(store, &e.key, false)
}

/// Moves an entry to the most recently used end (on put and on every hit). The usage row and the
/// LRU row change in one transaction, so concurrent hits lose no count and leave no stale row.
pub fn touch(store: &Store, key: &str, hit: bool) -> store::Result<()> {
    if matches!(store.check_room(), Err(store::Error::Full { .. })) {
        // A full store still serves hits; the entry's place in the LRU order stays as it was.
        return Ok(());
    }
    let ticket = store.next_id()?;
    let last_ms = now_ms();
    store.transaction(&[trees::RESPONSE_USE, trees::RESPONSE_LRU, trees::RESPONSES], |t| {
        if !t[2].contains(key.as_bytes())? {
            // Removed since it was read: a hit must not bring its rows back.
            return Ok(());
        }
        let old: Option<Use> = t[0].get(key.as_bytes())?;
        if let Some(u) = old {
            t[1].remove(&lru_row(u.ticket, key))?;
        }
        let hits = old.map(|u| u.hits).unwrap_or(0) + u64::from(hit);
        t[1].put(&lru_row(ticket, key), &())?;
        t[0].put(key.as_bytes(), &Use { ticket, last_ms, hits })
    })
}

/// Reads an entry's usage.
pub fn usage(store: &Store, key: &str) -> store::Result<Option<Use>> {
    store.get(trees::RESPONSE_USE, key.as_bytes())
}

/// Removes an entry and its rows. Returns the entry when this call removed it (so its vector can
/// be dropped from the index), `None` when it was already gone.
pub fn remove(store: &Store, key: &str) -> store::Result<Option<Entry>> {
    let Some(e) = load(store, key)? else { return Ok(None) };
    if !store.remove(trees::RESPONSES, key.as_bytes())? {
        return Ok(None);
    }
    for d in &e.deps {
        store.remove(trees::RESPONSE_DEPS, &dep_row(d, key))?;
    }
    forget_use(store, key)?;
    store.incr(trees::RESPONSE_USE, BYTES_OUT, e.bytes)?;
    Ok(Some(e))
}

/// Drops an entry's usage and LRU rows in one transaction (a racing hit cannot leave a row).
fn forget_use(store: &Store, key: &str) -> store::Result<()> {
    store.transaction_freeing(&[trees::RESPONSE_USE, trees::RESPONSE_LRU], |t| {
        if let Some(u) = t[0].get::<Use>(key.as_bytes())? {
            t[1].remove(&lru_row(u.ticket, key))?;
        }
        t[0].remove(key.as_bytes())?;
        Ok(())
    })
}

/// Bytes of stored results.
pub fn total_bytes(store: &Store) -> store::Result<u64> {
    let added = store.counter(trees::RESPONSE_USE, BYTES_IN)?;
    Ok(added.saturating_sub(store.counter(trees::RESPONSE_USE, BYTES_OUT)?))
}

/// The least recently used entry's key.
pub fn oldest(store: &Store) -> store::Result<Option<String>> {
    let mut found = None;
    store.for_each::<()>(trees::RESPONSE_LRU, |k, ()| {
        found = k.get(8..).map(|b| String::from_utf8_lossy(b).into_owned());
        false
    })?;
    Ok(found)
}

/// Keys of entries with a dependency row under exactly `path`, with the row's kind.
pub fn dependents(store: &Store, path: &str) -> store::Result<Vec<(String, String)>> {
    let prefix = Key::new().text(path).into_bytes();
    parse_rows(store, &prefix)
}

/// Keys of entries with a dependency strictly below the directory `path`.
pub fn dependents_below(store: &Store, path: &str) -> store::Result<Vec<(String, String)>> {
    let mut prefix = path.trim_end_matches('/').as_bytes().to_vec();
    prefix.push(b'/');
    parse_rows(store, &prefix)
}

fn parse_rows(store: &Store, prefix: &[u8]) -> store::Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for k in store.keys(trees::RESPONSE_DEPS, prefix)? {
        // path \0 kind \0 key(64 hex)
        let Some(split) = k.len().checked_sub(64) else { continue };
        let key = String::from_utf8_lossy(&k[split..]).into_owned();
        let head = &k[..split.saturating_sub(1)];
        let kind = head.rsplit(|b| *b == 0).next().map(|b| String::from_utf8_lossy(b).into_owned()).unwrap_or_default();
        out.push((key, kind));
    }
    Ok(out)
}

/// Every entry key (for stale sweeps and tool evictions).
pub fn all_keys(store: &Store) -> store::Result<Vec<String>> {
    Ok(store.keys(trees::RESPONSES, b"")?.into_iter().map(|k| String::from_utf8_lossy(&k).into_owned()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(key: &str) -> Entry {
        Entry {
            key: key.into(),
            namespace: "default".into(),
            tool: "Grep".into(),
            args: serde_json::json!({}),
            query: None,
            result: serde_json::json!("r"),
            created_ms: 1,
            expires_ms: u64::MAX,
            deps: Vec::new(),
            vector: None,
            bytes: 1,
        }
    }

    /// Many concurrent hits on one entry: every hit is counted and exactly one LRU row remains.
    #[test]
    fn concurrent_hits_lose_no_count_and_leave_one_lru_row() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        write(&store, &entry("k")).unwrap();
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..50 {
                        touch(&store, "k", true).unwrap();
                    }
                });
            }
        });
        assert_eq!(usage(&store, "k").unwrap().unwrap().hits, 400);
        assert_eq!(store.len(trees::RESPONSE_LRU).unwrap(), 1);
    }

    /// Regression: a hit on a full store used to drop the entry's LRU row and then fail.
    #[test]
    fn a_hit_on_a_full_store_keeps_the_lru_rows() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        write(&store, &entry("k")).unwrap();
        let before = usage(&store, "k").unwrap().unwrap();
        store.flush().unwrap();
        store.set_limit(1);
        assert!(store.check_room().is_err(), "the store must be full for this test");
        touch(&store, "k", true).unwrap();
        let after = usage(&store, "k").unwrap().unwrap();
        assert_eq!((before.ticket, before.hits), (after.ticket, after.hits));
        assert!(store.contains(trees::RESPONSE_LRU, &lru_row(before.ticket, "k")).unwrap());
    }
}
