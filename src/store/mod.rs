//! The project store: the only code in refrain that touches sled.
//!
//! One sled tree per record kind (names in `trees`), order-preserving keys built in `keys`, values
//! written as a format-version byte followed by JSON so old databases stay readable. Writes are
//! buffered by sled; callers acknowledge a write only after `flush` (shared by concurrent writers,
//! with usage counters batched in memory: `commit`).

mod batch;
mod commit;
mod count;
pub mod keys;
pub mod trees;
pub mod tx;

pub use batch::{Batch, keep_last};
pub use commit::Deferred;
pub use keys::Key;
pub use trees::TreeName;

use serde::{Serialize, de::DeserializeOwned};
use std::path::{Path, PathBuf};

/// The format version written in front of every value.
pub const FORMAT_VERSION: u8 = 1;

/// Store errors.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Another process holds the database.
    #[error("store at {path} is locked by another process")]
    Locked {
        /// The database directory.
        path: PathBuf,
    },
    /// The database could not be opened because its files are damaged.
    #[error(
        "store at {path} cannot be opened ({message}); move the directory aside to start fresh, nothing else was changed"
    )]
    Corrupt {
        /// The database directory.
        path: PathBuf,
        /// What sled said.
        message: String,
    },
    /// An I/O or sled error while reading or writing.
    #[error("store error: {0}")]
    Sled(#[from] sled::Error),
    /// A value could not be encoded or decoded.
    #[error("store value in tree {tree} is unreadable: {message}")]
    Codec {
        /// The tree.
        tree: &'static str,
        /// What was wrong.
        message: String,
    },
    /// The request writing went over its time or memory budget, so what it built is incomplete.
    #[error("the request went over its budget; nothing it built is stored")]
    OverBudget,
    /// The store reached its configured size limit.
    #[error("store is full ({size} bytes of {limit}); evict entries with cache_evict or raise store.max_store_bytes")]
    Full {
        /// Current size.
        size: u64,
        /// Limit.
        limit: u64,
    },
}

/// A result with a store error.
pub type Result<T> = std::result::Result<T, Error>;

/// A handle to the open project store; cheap to clone.
#[derive(Clone)]
pub struct Store {
    db: sled::Db,
    path: PathBuf,
    /// Size on disk above which writes are refused (0: no limit).
    limit: std::sync::Arc<std::sync::atomic::AtomicU64>,
    /// Group commit and batched counters.
    commit: std::sync::Arc<commit::Commit>,
    /// Record counts of the trees `cache_stats` reports.
    counts: std::sync::Arc<count::Counts>,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

impl Store {
    /// Opens (or creates) the database in `dir`. New stores compress what sled writes (zstd at
    /// its fastest level: JSON records shrink several times); a store created before that keeps
    /// its plain format, which sled cannot change in place.
    pub fn open(dir: &Path) -> Result<Store> {
        Self::open_as(dir, !plain_format(dir))
    }

    /// Opens the store, waiting up to `wait` while it is locked: sled's background flusher holds
    /// the lock a moment after the last handle goes (a server that just exited, a dropped store),
    /// longer on a loaded machine. Sleeps the thread between attempts: for the command line,
    /// benchmarks and tests, never a request.
    pub fn open_when_free(dir: &Path, wait: std::time::Duration) -> Result<Store> {
        let started = std::time::Instant::now();
        loop {
            match Store::open(dir) {
                Err(Error::Locked { .. }) if started.elapsed() < wait => {
                    std::thread::sleep(std::time::Duration::from_millis(50))
                }
                other => return other,
            }
        }
    }

    /// Opens (or creates) a store without compression (what stores created before compression
    /// hold; benchmarks compare the two). Fails on a compressed store.
    pub fn open_uncompressed(dir: &Path) -> Result<Store> {
        Self::open_as(dir, false)
    }

    fn open_as(dir: &Path, compress: bool) -> Result<Store> {
        let db = sled::Config::new()
            .path(dir)
            .cache_capacity(CACHE_BYTES)
            .use_compression(compress)
            .compression_factor(COMPRESSION_LEVEL)
            .open()
            .map_err(|e| classify(dir, e))?;
        let counts = std::sync::Arc::new(count::Counts::load(&db.open_tree(trees::META.0)?, !db.was_recovered())?);
        let commit = std::sync::Arc::new(commit::Commit::new(db.clone()));
        Ok(Store { db, path: dir.to_path_buf(), limit: Default::default(), commit, counts })
    }

    /// Refuses writes once the store occupies more than `bytes` on disk (0: no limit).
    pub fn set_limit(&self, bytes: u64) {
        self.limit.store(bytes, std::sync::atomic::Ordering::Relaxed);
    }

    /// `Error::Full` when the store is past its size limit; callers that replace an entry check
    /// first, so a refused write never loses the entry it would have replaced.
    pub fn check_room(&self) -> Result<()> {
        if !crate::budget::allows_writes() {
            return Err(Error::OverBudget);
        }
        let limit = self.limit.load(std::sync::atomic::Ordering::Relaxed);
        if limit == 0 {
            return Ok(());
        }
        let size = self.size_on_disk();
        if size > limit { Err(Error::Full { size, limit }) } else { Ok(()) }
    }

    /// The database directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn tree(&self, name: TreeName) -> Result<sled::Tree> {
        Ok(self.db.open_tree(name.0)?)
    }

    /// Reads one value.
    pub fn get<T: DeserializeOwned>(&self, tree: TreeName, key: &[u8]) -> Result<Option<T>> {
        match self.tree(tree)?.get(key)? {
            Some(bytes) => decode(tree, &bytes).map(Some),
            None => Ok(None),
        }
    }

    /// Whether a key exists.
    pub fn contains(&self, tree: TreeName, key: &[u8]) -> Result<bool> {
        Ok(self.tree(tree)?.contains_key(key)?)
    }

    /// Writes one value (buffered until `flush`).
    pub fn put<T: Serialize>(&self, tree: TreeName, key: &[u8], value: &T) -> Result<()> {
        self.check_room()?;
        self.insert(tree, key, encode(tree, value)?)
    }

    /// Inserts raw bytes, counting a new key.
    fn insert(&self, tree: TreeName, key: &[u8], value: impl Into<sled::IVec>) -> Result<()> {
        if self.tree(tree)?.insert(key, value)?.is_none() {
            self.counts.add(tree, 1);
        }
        Ok(())
    }

    /// Removes one key; true when it existed.
    pub fn remove(&self, tree: TreeName, key: &[u8]) -> Result<bool> {
        let existed = self.tree(tree)?.remove(key)?.is_some();
        if existed {
            self.counts.add(tree, -1);
        }
        Ok(existed)
    }

    /// Every (key, value) whose key starts with `prefix`, in key order.
    pub fn scan<T: DeserializeOwned>(&self, tree: TreeName, prefix: &[u8]) -> Result<Vec<(Vec<u8>, T)>> {
        let mut out = Vec::new();
        for item in self.tree(tree)?.scan_prefix(prefix) {
            let (k, v) = item?;
            out.push((k.to_vec(), decode(tree, &v)?));
        }
        Ok(out)
    }

    /// Every key starting with `prefix`, in key order, without decoding values.
    pub fn keys(&self, tree: TreeName, prefix: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.tree(tree)?.scan_prefix(prefix).keys().map(|k| Ok(k?.to_vec())).collect()
    }

    /// Visits values in key order until `f` returns false; values that fail to decode are skipped.
    pub fn for_each<T: DeserializeOwned>(&self, tree: TreeName, mut f: impl FnMut(&[u8], T) -> bool) -> Result<()> {
        for item in self.tree(tree)?.iter() {
            let (k, v) = item?;
            match decode(tree, &v) {
                Ok(value) => {
                    if !f(&k, value) {
                        break;
                    }
                }
                Err(e) => tracing::warn!(tree = tree.0, error = %e, "skipping unreadable record"),
            }
        }
        Ok(())
    }

    /// Writes raw bytes (for compact records such as vectors; the caller owns the format).
    pub fn put_bytes(&self, tree: TreeName, key: &[u8], value: &[u8]) -> Result<()> {
        self.check_room()?;
        self.insert(tree, key, value)
    }

    /// Reads raw bytes written by `put_bytes`.
    pub fn get_bytes(&self, tree: TreeName, key: &[u8]) -> Result<Option<Vec<u8>>> {
        Ok(self.tree(tree)?.get(key)?.map(|v| v.to_vec()))
    }

    /// Visits raw (key, value) pairs whose key starts with `prefix`, in key order, until `f`
    /// returns false.
    pub fn scan_bytes(&self, tree: TreeName, prefix: &[u8], f: impl FnMut(&[u8], &[u8]) -> bool) -> Result<()> {
        self.scan_bytes_from(tree, prefix, prefix, f)
    }

    /// Visits raw (key, value) pairs whose key starts with `prefix` and is at least `from`, in key
    /// order, until `f` returns false (a range read: what comes before `from` is never read).
    pub fn scan_bytes_from(
        &self,
        tree: TreeName,
        prefix: &[u8],
        from: &[u8],
        mut f: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        for item in self.tree(tree)?.range(from..) {
            let (k, v) = item?;
            if !k.starts_with(prefix) || !f(&k, &v) {
                break;
            }
        }
        Ok(())
    }

    /// Writes an empty marker record, never refused for room: markers record removals, which a
    /// full store must still be able to make.
    pub fn put_marker(&self, tree: TreeName, key: &[u8]) -> Result<()> {
        self.insert(tree, key, &[] as &[u8])
    }

    /// Visits raw (key, value) pairs in key order.
    pub fn for_each_bytes(&self, tree: TreeName, mut f: impl FnMut(&[u8], &[u8])) -> Result<()> {
        for item in self.tree(tree)?.iter() {
            let (k, v) = item?;
            f(&k, &v);
        }
        Ok(())
    }

    /// Number of records in a tree. The trees `cache_stats` reports are counted as they are
    /// written (`count`); others, and a counted tree whose count is not known, are walked.
    pub fn len(&self, tree: TreeName) -> Result<usize> {
        if let Some(n) = self.counts.get(tree) {
            return Ok(n);
        }
        let n = self.tree(tree)?.len();
        if self.counts.counts(tree) {
            self.counts.set(tree, n);
        }
        Ok(n)
    }

    /// Removes every record of a tree; returns how many there were.
    pub fn clear(&self, tree: TreeName) -> Result<usize> {
        let n = self.len(tree)?;
        self.tree(tree)?.clear()?;
        self.counts.set(tree, 0);
        Ok(n)
    }

    /// Atomically increments a counter stored as a big-endian u64 and returns the new value.
    pub fn incr(&self, tree: TreeName, key: &[u8], by: u64) -> Result<u64> {
        let t = self.tree(tree)?;
        let new = t.update_and_fetch(key, |old| {
            let cur = old.and_then(|b| <[u8; 8]>::try_from(b).ok()).map(u64::from_be_bytes).unwrap_or(0);
            Some(cur.saturating_add(by).to_be_bytes().to_vec())
        })?;
        Ok(new.and_then(|b| <[u8; 8]>::try_from(b.as_ref()).ok()).map(u64::from_be_bytes).unwrap_or(0))
    }

    /// Atomically rewrites one value: `f` sees the current value (None when absent) and returns
    /// the new one (None leaves the key as it is). Concurrent updates of one key never lose each
    /// other's changes (`f` may run more than once). Returns the value written, if any.
    pub fn update<T: Serialize + DeserializeOwned>(
        &self,
        tree: TreeName,
        key: &[u8],
        mut f: impl FnMut(Option<T>) -> Option<T>,
    ) -> Result<Option<T>> {
        self.check_room()?;
        let t = self.tree(tree)?;
        let mut failure = None;
        let mut written = None;
        let mut existed = false;
        let now = t.update_and_fetch(key, |old| {
            failure = None;
            written = None;
            existed = old.is_some();
            let current = match old.map(|b| decode::<T>(tree, b)).transpose() {
                Ok(v) => v,
                Err(e) => {
                    failure = Some(e);
                    return old.map(<[u8]>::to_vec);
                }
            };
            let Some(new) = f(current) else { return old.map(<[u8]>::to_vec) };
            match encode(tree, &new) {
                Ok(bytes) => {
                    written = Some(new);
                    Some(bytes)
                }
                Err(e) => {
                    failure = Some(e);
                    old.map(<[u8]>::to_vec)
                }
            }
        })?;
        self.counts.add(tree, i64::from(now.is_some()) - i64::from(existed));
        match failure {
            Some(e) => Err(e),
            None => Ok(written),
        }
    }

    /// Reads a counter written by `incr`.
    pub fn counter(&self, tree: TreeName, key: &[u8]) -> Result<u64> {
        let v = self.tree(tree)?.get(key)?;
        Ok(v.and_then(|b| <[u8; 8]>::try_from(b.as_ref()).ok()).map(u64::from_be_bytes).unwrap_or(0))
    }

    /// A fresh monotonically increasing id, unique within this database.
    pub fn next_id(&self) -> Result<u64> {
        Ok(self.db.generate_id()?)
    }

    /// Makes every buffered write (and the batched counters) durable. Call before acknowledging
    /// a write; async code calls `flush_async`.
    pub fn flush(&self) -> Result<()> {
        self.write_counters()?;
        self.db.flush()?;
        Ok(())
    }

    /// Bytes the database occupies on disk.
    pub fn size_on_disk(&self) -> u64 {
        self.db.size_on_disk().unwrap_or(0)
    }
}

/// sled's page cache: the hot part of the trees (it counts sled's own estimate of a page's size,
/// which undercounts, so the resident cost is somewhat higher).
const CACHE_BYTES: u64 = 64 * 1024 * 1024;
/// zstd level of new stores (1: the fastest).
const COMPRESSION_LEVEL: i32 = 1;

/// Whether `dir` holds a store sled wrote without compression (its `conf` file says so).
fn plain_format(dir: &Path) -> bool {
    std::fs::read(dir.join("conf"))
        .is_ok_and(|b| b.windows(b"use_compression: false".len()).any(|w| w == b"use_compression: false"))
}

fn classify(dir: &Path, e: sled::Error) -> Error {
    match e {
        sled::Error::Io(ref io) if io.kind() == std::io::ErrorKind::WouldBlock || io.to_string().contains("lock") => {
            Error::Locked { path: dir.to_path_buf() }
        }
        sled::Error::Corruption { .. } | sled::Error::Unsupported(_) | sled::Error::ReportableBug(_) => {
            Error::Corrupt { path: dir.to_path_buf(), message: e.to_string() }
        }
        other => Error::Corrupt { path: dir.to_path_buf(), message: other.to_string() },
    }
}

fn encode<T: Serialize>(tree: TreeName, value: &T) -> Result<Vec<u8>> {
    let mut out = vec![FORMAT_VERSION];
    serde_json::to_writer(&mut out, value).map_err(|e| Error::Codec { tree: tree.0, message: e.to_string() })?;
    Ok(out)
}

fn decode<T: DeserializeOwned>(tree: TreeName, bytes: &[u8]) -> Result<T> {
    match bytes.split_first() {
        Some((&FORMAT_VERSION, body)) => {
            serde_json::from_slice(body).map_err(|e| Error::Codec { tree: tree.0, message: e.to_string() })
        }
        Some((v, _)) => Err(Error::Codec { tree: tree.0, message: format!("unknown format version {v}") }),
        None => Err(Error::Codec { tree: tree.0, message: "empty value".into() }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concurrent_updates_of_one_key_lose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..250 {
                        store.update::<u64>(trees::STATS, b"n", |v| Some(v.unwrap_or(0) + 1)).unwrap();
                    }
                });
            }
        });
        assert_eq!(store.get::<u64>(trees::STATS, b"n").unwrap(), Some(1000));
        let untouched = store.update::<u64>(trees::STATS, b"absent", |_| None).unwrap();
        assert_eq!(untouched, None);
        assert_eq!(store.get::<u64>(trees::STATS, b"absent").unwrap(), None);
    }

    #[test]
    fn a_locked_store_opens_once_its_holder_lets_go_and_not_after_the_wait() {
        let dir = tempfile::tempdir().unwrap();
        let held = Store::open(dir.path()).unwrap();
        let short = Store::open_when_free(dir.path(), std::time::Duration::ZERO);
        assert!(matches!(short, Err(Error::Locked { .. })), "{:?}", short.err());
        let holder = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(200));
            drop(held);
        });
        let s = Store::open_when_free(dir.path(), std::time::Duration::from_secs(30)).unwrap();
        s.put(trees::META, b"k", &"v".to_string()).unwrap();
        holder.join().unwrap();
    }

    #[test]
    fn values_survive_reopen_after_flush() {
        let dir = tempfile::tempdir().unwrap();
        {
            let s = Store::open(dir.path()).unwrap();
            s.put(trees::META, b"k", &"v".to_string()).unwrap();
            s.flush().unwrap();
        }
        let s = Store::open(dir.path()).unwrap();
        assert_eq!(s.get::<String>(trees::META, b"k").unwrap().as_deref(), Some("v"));
    }

    #[test]
    fn a_store_written_without_compression_still_opens_and_keeps_its_records() {
        let dir = tempfile::tempdir().unwrap();
        {
            let db = sled::Config::new().path(dir.path()).open().unwrap();
            db.open_tree(trees::META.0)
                .unwrap()
                .insert(b"k", encode(trees::META, &"old".to_string()).unwrap())
                .unwrap();
            db.flush().unwrap();
        }
        assert!(plain_format(dir.path()));
        let s = Store::open_when_free(dir.path(), std::time::Duration::from_secs(10)).unwrap();
        assert_eq!(s.get::<String>(trees::META, b"k").unwrap().as_deref(), Some("old"));
        s.put(trees::META, b"n", &"new".to_string()).unwrap();
        s.flush().unwrap();
        let fresh = tempfile::tempdir().unwrap();
        Store::open(fresh.path()).unwrap().flush().unwrap();
        assert!(!plain_format(fresh.path()), "new stores are compressed");
    }

    #[test]
    fn unknown_format_version_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        s.tree(trees::META).unwrap().insert(b"k", vec![9u8, b'1']).unwrap();
        let err = s.get::<u32>(trees::META, b"k").unwrap_err().to_string();
        assert!(err.contains("format version 9"), "{err}");
    }

    #[test]
    fn a_full_store_refuses_writes_and_keeps_what_it_has() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        s.put(trees::META, b"kept", &1u32).unwrap();
        s.flush().unwrap();
        s.set_limit(1);
        let err = s.put(trees::META, b"new", &2u32).unwrap_err().to_string();
        assert!(err.contains("store is full") && err.contains("max_store_bytes"), "{err}");
        assert_eq!(s.get::<u32>(trees::META, b"kept").unwrap(), Some(1));
    }

    #[test]
    fn counters_add_up() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        s.incr(trees::STATS, b"hits", 2).unwrap();
        assert_eq!(s.incr(trees::STATS, b"hits", 3).unwrap(), 5);
        assert_eq!(s.counter(trees::STATS, b"hits").unwrap(), 5);
    }
}
