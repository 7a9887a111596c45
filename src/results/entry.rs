//! Stored entries and the bookkeeping rows around them.
//!
//! Trees: `responses` (key -> `Entry`), `response_use` (key -> `Use`: LRU ticket, last use, hits;
//! plus the byte counters), `response_lru` (ticket + key -> nothing, oldest first),
//! `response_deps` (path + kind + key -> nothing), `response_texts` (see `texts`) and
//! `response_feedback` (see `feedback`). Only this file writes those rows, so they stay
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
    if let Some(q) = &e.query {
        super::texts::put(store, &e.namespace, &e.tool, q, &e.key)?;
    }
    store.incr(trees::RESPONSE_USE, BYTES_IN, e.bytes)?;
    touch(store, &e.key, false)
}

/// Writes many new entries with their rows in one store batch (bulk imports; buffered, the
/// caller flushes): the rows `write` files, and at once the usage and LRU rows that its touch
/// writes with the next batch of touches. The keys are distinct (the importer keeps the last of
/// each, `store::keep_last`) and no entry exists yet under any of them.
pub fn write_many(store: &Store, entries: &[Entry]) -> store::Result<()> {
    let mut batch = store::Batch::new();
    let (now, mut bytes) = (now_ms(), 0u64);
    for e in entries {
        batch.put(trees::RESPONSES, e.key.as_bytes(), e)?;
        for d in &e.deps {
            batch.put(trees::RESPONSE_DEPS, &dep_row(d, &e.key), &())?;
        }
        if let Some(q) = &e.query {
            super::texts::put_into(&mut batch, &e.namespace, &e.tool, q, &e.key)?;
        }
        bytes = bytes.saturating_add(e.bytes);
        let ticket = store.next_id()?;
        batch.put(trees::RESPONSE_LRU, &lru_row(ticket, &e.key), &())?;
        batch.put(trees::RESPONSE_USE, e.key.as_bytes(), &Use { ticket, last_ms: now, hits: 0 })?;
    }
    store.apply(batch)?;
    store.incr(trees::RESPONSE_USE, BYTES_IN, bytes)?;
    Ok(())
}

/// Moves an entry to the most recently used end (on put and on every hit). The move is held in
/// memory (`Touches`) and written with the next batch: before every flush, every
/// `TOUCH_BATCH` touches, and before the LRU order is read. A crash may lose the touches since
/// the last batch (an entry's place in the LRU order and a few hits), never an entry.
pub fn touch(store: &Store, key: &str, hit: bool) -> store::Result<()> {
    if matches!(store.check_room(), Err(store::Error::Full { .. })) {
        // A full store still serves hits; the entry's place in the LRU order stays as it was.
        return Ok(());
    }
    let ticket = store.next_id()?;
    let touches = store.deferred::<Touches>();
    let full = {
        let mut held = lock(&touches.held);
        let t = held.entry(key.to_string()).or_insert(Touch { ticket, last_ms: 0, hits: 0 });
        (t.ticket, t.last_ms) = (t.ticket.max(ticket), now_ms());
        t.hits += u64::from(hit);
        held.len() >= TOUCH_BATCH
    };
    if full { store::Deferred::write(&*touches, store) } else { Ok(()) }
}

/// Distinct entries touched before the touches are written without waiting for a flush.
const TOUCH_BATCH: usize = 256;

/// One entry's touches since the last batch: its newest ticket, last use and hits counted.
#[derive(Debug, Clone, Copy)]
struct Touch {
    ticket: u64,
    last_ms: u64,
    hits: u64,
}

/// The touches held in memory for one store.
#[derive(Default)]
pub struct Touches {
    held: std::sync::Mutex<std::collections::HashMap<String, Touch>>,
    /// One batch written at a time, so an older batch never overwrites a newer one's rows.
    writing: std::sync::Mutex<()>,
}

fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl store::Deferred for Touches {
    /// Each entry's usage row and LRU row change in one transaction, so concurrent batches and
    /// removals leave exactly one LRU row per entry and lose no hit. A batch's entries share
    /// transactions of up to `TOUCHES_PER_TX`: a sled transaction holds every other write of the
    /// store back while it commits, so one per touched entry cost the owner more than the hits.
    fn write(&self, store: &Store) -> store::Result<()> {
        let _one = lock(&self.writing);
        let held: Vec<(String, Touch)> = std::mem::take(&mut *lock(&self.held)).into_iter().collect();
        for chunk in held.chunks(TOUCHES_PER_TX) {
            store.transaction_freeing(&[trees::RESPONSE_USE, trees::RESPONSE_LRU, trees::RESPONSES], |t| {
                for (key, touch) in chunk {
                    if !t[2].contains(key.as_bytes())? {
                        // Removed since it was touched: its rows must not come back.
                        continue;
                    }
                    let old: Option<Use> = t[0].get(key.as_bytes())?;
                    if let Some(u) = old {
                        t[1].remove(&lru_row(u.ticket, key))?;
                    }
                    let hits = old.map(|u| u.hits).unwrap_or(0) + touch.hits;
                    t[1].put(&lru_row(touch.ticket, key), &())?;
                    t[0].put(key.as_bytes(), &Use { ticket: touch.ticket, last_ms: touch.last_ms, hits })?;
                }
                Ok(())
            })?;
        }
        Ok(())
    }
}

/// Touched entries written per transaction.
const TOUCHES_PER_TX: usize = 64;

/// Reads an entry's usage, touches held in memory included.
pub fn usage(store: &Store, key: &str) -> store::Result<Option<Use>> {
    let stored: Option<Use> = store.get(trees::RESPONSE_USE, key.as_bytes())?;
    let held = lock(&store.deferred::<Touches>().held).get(key).copied();
    Ok(match (stored, held) {
        (s, None) => s,
        (s, Some(t)) => {
            Some(Use { ticket: t.ticket, last_ms: t.last_ms, hits: s.map(|u| u.hits).unwrap_or(0) + t.hits })
        }
    })
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
    if let Some(q) = &e.query {
        super::texts::remove(store, &e.namespace, &e.tool, q, key)?;
    }
    store.remove(trees::RESPONSE_FEEDBACK, key.as_bytes())?;
    store.incr(trees::RESPONSE_USE, BYTES_OUT, e.bytes)?;
    Ok(Some(e))
}

/// Drops an entry's usage and LRU rows in one transaction (a racing hit cannot leave a row).
fn forget_use(store: &Store, key: &str) -> store::Result<()> {
    lock(&store.deferred::<Touches>().held).remove(key);
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

/// The least recently used entry's key (touches held in memory are written first).
pub fn oldest(store: &Store) -> store::Result<Option<String>> {
    store.write_counters()?;
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
        store.flush().unwrap();
        assert_eq!(usage(&store, "k").unwrap().unwrap().hits, 400);
        assert_eq!(store.len(trees::RESPONSE_LRU).unwrap(), 1);
    }

    /// Touches wait in memory, reach the store with the next flush, and survive a reopen; a
    /// touch of an entry removed before the batch was written brings none of its rows back.
    #[test]
    fn touches_are_written_by_a_flush_and_never_revive_a_removed_entry() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path()).unwrap();
            for k in ["a", "b"] {
                write(&store, &entry(k)).unwrap();
            }
            store.flush().unwrap();
            let first = oldest(&store).unwrap();
            assert_eq!(first.as_deref(), Some("a"));
            touch(&store, "a", true).unwrap();
            assert_eq!(store.get::<Use>(trees::RESPONSE_USE, b"a").unwrap().unwrap().hits, 0, "held in memory");
            assert_eq!(oldest(&store).unwrap().as_deref(), Some("b"), "the LRU order counts held touches");
            touch(&store, "b", true).unwrap();
            remove(&store, "b").unwrap();
            store.flush().unwrap();
        }
        let store = Store::open_when_free(dir.path(), std::time::Duration::from_secs(10)).unwrap();
        assert_eq!(usage(&store, "a").unwrap().unwrap().hits, 1);
        assert!(usage(&store, "b").unwrap().is_none());
        assert_eq!(store.len(trees::RESPONSE_LRU).unwrap(), 1);
    }

    /// A batch larger than one transaction writes every touch, in order, and still skips an
    /// entry removed before it was written.
    #[test]
    fn a_batch_of_many_touches_writes_each_once() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let keys: Vec<String> = (0..TOUCHES_PER_TX * 2 + 7).map(|i| format!("k{i:03}")).collect();
        for k in &keys {
            write(&store, &entry(k)).unwrap();
        }
        // Touch them newest first, so the LRU order becomes the reverse of the writes.
        for k in keys.iter().rev() {
            touch(&store, k, true).unwrap();
        }
        remove(&store, &keys[70]).unwrap();
        store.flush().unwrap();
        assert_eq!(store.len(trees::RESPONSE_LRU).unwrap() as usize, keys.len() - 1);
        for (i, k) in keys.iter().enumerate() {
            let u = store.get::<Use>(trees::RESPONSE_USE, k.as_bytes()).unwrap();
            if i == 70 {
                assert!(u.is_none(), "a removed entry's rows stay gone");
            } else {
                assert_eq!(u.unwrap().hits, 1, "{k}");
            }
        }
        assert_eq!(oldest(&store).unwrap().as_deref(), Some(keys.last().unwrap().as_str()));
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
