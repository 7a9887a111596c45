//! Fewer writes and fewer flushes under load.
//!
//! Group commit: writers that ask for a flush while one is running wait for it to end, then share
//! the next one; each is still answered only after a flush that began after its own writes had
//! reached sled. Batched counters: usage counters (hits, misses, tokens saved) add up in memory
//! and reach sled in one batch before every flush, or once enough have piled up; a crash may
//! lose the increments since the last batch, never an acknowledged entry. Deferred writes: a
//! layer above the store may hold its own rows in memory the same way (`Deferred`, e.g. the
//! results' LRU touches); they are written with the counters.

use super::{Error, Result, Store, TreeName};
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Increments held in memory before they are written as one batch.
const BATCH_OPS: u64 = 256;

/// The store's group-commit and counter-batch state, shared by every clone of the handle. The
/// last clone to go writes what is still batched.
pub(super) struct Commit {
    db: sled::Db,
    /// Flush tickets handed out so far.
    asked: AtomicU64,
    /// The highest ticket a finished flush covered.
    covered: AtomicU64,
    /// Held while a flush runs; writers queue behind it and then share the next flush.
    flushing: tokio::sync::Mutex<()>,
    /// Counter increments not yet written.
    pending: Mutex<Pending>,
    /// Writes held in memory by layers above the store, one holder per type.
    deferred: Mutex<Vec<Holder>>,
}

/// Rows a layer above the store keeps in memory and writes in batches: before every flush,
/// whenever its owner asks, and when the last handle on the store closes. A crash loses what is
/// held, so only rows whose loss costs no acknowledged write may be deferred.
pub trait Deferred: Send + Sync + 'static {
    /// Writes what is held into the store (buffered like any write) and forgets it.
    fn write(&self, store: &Store) -> Result<()>;
}

struct Holder {
    kind: TypeId,
    any: Arc<dyn Any + Send + Sync>,
    writer: Arc<dyn Deferred>,
}

#[derive(Default)]
struct Pending {
    adds: HashMap<(&'static str, Vec<u8>), u64>,
    ops: u64,
}

impl Commit {
    pub(super) fn new(db: sled::Db) -> Commit {
        Commit {
            db,
            asked: AtomicU64::new(0),
            covered: AtomicU64::new(0),
            flushing: tokio::sync::Mutex::new(()),
            pending: Mutex::new(Pending::default()),
            deferred: Mutex::new(Vec::new()),
        }
    }

    fn writers(&self) -> Vec<Arc<dyn Deferred>> {
        self.deferred.lock().unwrap_or_else(|p| p.into_inner()).iter().map(|h| h.writer.clone()).collect()
    }

    /// Writes the batched increments into their trees (buffered like any write).
    fn write(&self) -> Result<()> {
        let adds = {
            let mut p = lock(&self.pending);
            p.ops = 0;
            std::mem::take(&mut p.adds)
        };
        for ((tree, key), by) in adds {
            self.db.open_tree(tree)?.update_and_fetch(&key, |old| {
                let cur = old.and_then(|b| <[u8; 8]>::try_from(b).ok()).map(u64::from_be_bytes).unwrap_or(0);
                Some(cur.saturating_add(by).to_be_bytes().to_vec())
            })?;
        }
        Ok(())
    }
}

impl Drop for Commit {
    fn drop(&mut self) {
        let writers = self.writers();
        if !writers.is_empty() {
            // The handles are gone; a bare one over the same database writes what is held.
            let bare = Store {
                db: self.db.clone(),
                path: PathBuf::new(),
                limit: Default::default(),
                commit: Arc::new(Commit::new(self.db.clone())),
                counts: Arc::new(super::count::Counts::unknown()),
            };
            for w in writers {
                if let Err(e) = w.write(&bare) {
                    tracing::warn!(error = %e, "deferred rows not written at close");
                }
            }
        }
        if let Err(e) = self.write().and_then(|()| Ok(self.db.flush().map(|_| ())?)) {
            tracing::warn!(error = %e, "usage counters not written at close");
        }
    }
}

fn lock(m: &Mutex<Pending>) -> MutexGuard<'_, Pending> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Store {
    /// Adds `by` to a counter in memory; it is written with the next batch, which every flush
    /// writes first. Read counters after `write_counters`.
    pub fn incr_batched(&self, tree: TreeName, key: &[u8], by: u64) -> Result<()> {
        let full = {
            let mut p = lock(&self.commit.pending);
            let v = p.adds.entry((tree.0, key.to_vec())).or_insert(0);
            *v = v.saturating_add(by);
            p.ops += 1;
            p.ops >= BATCH_OPS
        };
        if full { self.write_counters() } else { Ok(()) }
    }

    /// Writes the counter increments and deferred rows held in memory into the store (buffered
    /// like any write).
    pub fn write_counters(&self) -> Result<()> {
        for w in self.commit.writers() {
            w.write(self)?;
        }
        self.commit.write()
    }

    /// The store's holder of deferred rows of type `T`, created on first use; its rows are
    /// written with the batched counters (`write_counters`, every flush, the last close).
    pub fn deferred<T: Deferred + Default>(&self) -> Arc<T> {
        let mut held = self.commit.deferred.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(t) = held.iter().find(|h| h.kind == TypeId::of::<T>()).and_then(|h| h.any.clone().downcast().ok()) {
            return t;
        }
        let t = Arc::new(T::default());
        held.push(Holder { kind: TypeId::of::<T>(), any: t.clone(), writer: t.clone() });
        t
    }

    /// Makes every write made before the call durable, sharing the flush with concurrent
    /// callers (group commit), without blocking the async runtime. The flush itself runs on a
    /// `threads` pool thread at normal priority, never one lowered for a slow call (tokio's
    /// blocking pool could start it from such a thread, and it would inherit the priority), and
    /// not as sled's own `flush_async`: concurrent `flush_async` calls can deadlock in sled 0.34
    /// (spacejam/sled#1308, seen here as every request stalling with 16 busy clients).
    pub async fn flush_async(&self) -> Result<()> {
        let c = &self.commit;
        // The caller's writes are done: any flush that starts after this ticket covers them.
        let ticket = c.asked.fetch_add(1, Ordering::SeqCst) + 1;
        let _turn = c.flushing.lock().await;
        if c.covered.load(Ordering::SeqCst) >= ticket {
            return Ok(());
        }
        let upto = c.asked.load(Ordering::SeqCst);
        self.write_counters()?;
        let db = self.db.clone();
        match crate::threads::run(move || db.flush(), None).await {
            Ok(r) => {
                r?;
                c.covered.fetch_max(upto, Ordering::SeqCst);
                Ok(())
            }
            Err(e) => Err(Error::Sled(sled::Error::ReportableBug(format!("store flush task failed: {e}")))),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::store::{Store, trees};
    use std::path::Path;

    /// Opens the store again; sled's background flusher may hold the lock a moment after the last
    /// handle goes, longer on a loaded machine.
    fn reopen(dir: &Path) -> Store {
        Store::open_when_free(dir, std::time::Duration::from_secs(10)).unwrap()
    }

    #[test]
    fn batched_counters_are_written_by_a_flush_and_survive_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        {
            let s = Store::open(dir.path()).unwrap();
            for _ in 0..10 {
                s.incr_batched(trees::STATS, b"hits", 3).unwrap();
            }
            assert_eq!(s.counter(trees::STATS, b"hits").unwrap(), 0, "held in memory until a batch is written");
            s.flush().unwrap();
            assert_eq!(s.counter(trees::STATS, b"hits").unwrap(), 30);
        }
        let s = reopen(dir.path());
        assert_eq!(s.counter(trees::STATS, b"hits").unwrap(), 30);
    }

    #[test]
    fn batched_counters_are_written_when_the_store_closes() {
        let dir = tempfile::tempdir().unwrap();
        {
            let s = Store::open(dir.path()).unwrap();
            let other = s.clone();
            s.incr_batched(trees::STATS, b"hits", 4).unwrap();
            drop(s);
            other.incr_batched(trees::STATS, b"hits", 1).unwrap();
        }
        let s = reopen(dir.path());
        assert_eq!(s.counter(trees::STATS, b"hits").unwrap(), 5);
    }

    #[test]
    fn many_increments_are_written_without_a_flush() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        for _ in 0..super::BATCH_OPS {
            s.incr_batched(trees::STATS, b"misses", 1).unwrap();
        }
        assert_eq!(s.counter(trees::STATS, b"misses").unwrap(), super::BATCH_OPS);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn concurrent_writers_sharing_flushes_lose_no_write_and_no_increment() {
        let dir = tempfile::tempdir().unwrap();
        {
            let s = Store::open(dir.path()).unwrap();
            let mut tasks = Vec::new();
            for w in 0..16u32 {
                let s = s.clone();
                tasks.push(tokio::spawn(async move {
                    for i in 0..20u32 {
                        s.put(trees::META, format!("w{w}-{i}").as_bytes(), &i).unwrap();
                        s.incr_batched(trees::STATS, b"writes", 1).unwrap();
                        s.flush_async().await.unwrap();
                    }
                }));
            }
            for t in tasks {
                t.await.unwrap();
            }
        }
        let s = reopen(dir.path());
        for w in 0..16u32 {
            for i in 0..20u32 {
                assert_eq!(s.get::<u32>(trees::META, format!("w{w}-{i}").as_bytes()).unwrap(), Some(i));
            }
        }
        assert_eq!(s.counter(trees::STATS, b"writes").unwrap(), 320);
    }
}
