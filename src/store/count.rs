//! Record counts of the trees `cache_stats` reports, kept as writes happen.
//!
//! sled counts a tree by walking all of it, and a walk leaves what it read in sled's page cache:
//! at 100k entries one `cache_stats` call grew the server by ~300 MB, and repeated calls by more.
//! So the store counts its own inserts and removals of these trees, and writes each new count to
//! `meta` right after the write it counts (under one lock, so `meta` always holds the latest):
//! a flush that makes a write durable makes its count durable too, whatever kills the process
//! afterwards. A store written before counts were kept (or a transaction that wrote one of these
//! trees) is counted once by a walk, then kept up.
//!
//! A bulk batch (`Store::apply`) writes thousands of rows of a tree and its count once, after
//! them. While it runs, `meta` holds no count for that tree (`begin_batch` removes it, before the
//! first row; `end_batch` writes the new one), so a crash in the middle of a batch leaves the
//! count unknown, to be walked, never short by the rows already written.

use super::trees::{self, TreeName};
use super::{Key, Result};
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering};

/// The trees whose records are counted.
pub const COUNTED: [TreeName; 4] = [trees::PLANS, trees::RESPONSES, trees::VECTORS, trees::EVENTS];

/// Not known: counted by a walk when next asked.
const UNKNOWN: i64 = -1;

/// The counts, one per counted tree, and the `meta` tree they are written to (none for the bare
/// handle that writes deferred rows at close).
pub(super) struct Counts {
    n: [AtomicI64; COUNTED.len()],
    meta: Option<sled::Tree>,
    /// Held while a count changes and is written, so `meta` ends with the latest value.
    lock: Mutex<()>,
    /// Bulk batches writing each tree now: while any is, `meta` holds no count for it.
    batches: [AtomicUsize; COUNTED.len()],
}

/// A count moved by `by` records (an unknown one stays unknown).
fn plus(count: i64, by: i64) -> i64 {
    if count == UNKNOWN { count } else { (count + by).max(0) }
}

fn key(tree: TreeName) -> Vec<u8> {
    Key::new().text("count").text(tree.0).into_bytes()
}

impl Counts {
    /// Every count unknown, written nowhere.
    pub(super) fn unknown() -> Counts {
        Counts {
            n: std::array::from_fn(|_| AtomicI64::new(UNKNOWN)),
            meta: None,
            lock: Mutex::new(()),
            batches: std::array::from_fn(|_| AtomicUsize::new(0)),
        }
    }

    /// The counts in `meta` (unknown where none is there); all zero for a store created just now
    /// (`fresh`).
    pub(super) fn load(meta: &sled::Tree, fresh: bool) -> Result<Counts> {
        let mut counts = Counts::unknown();
        counts.meta = Some(meta.clone());
        for (i, tree) in COUNTED.iter().enumerate() {
            if fresh {
                counts.set(*tree, 0);
            } else if let Some(v) = meta.get(key(*tree))?
                && let Ok(b) = <[u8; 8]>::try_from(v.as_ref())
            {
                counts.n[i].store(i64::from_be_bytes(b), Ordering::Relaxed);
            }
        }
        Ok(counts)
    }

    fn slot(&self, tree: TreeName) -> Option<usize> {
        COUNTED.iter().position(|t| *t == tree)
    }

    /// Whether `tree` is counted.
    pub(super) fn counts(&self, tree: TreeName) -> bool {
        self.slot(tree).is_some()
    }

    /// Changes a count (to `f` of the known value; an unknown one stays unknown) and writes it.
    fn change(&self, tree: TreeName, f: impl FnOnce(i64) -> i64) {
        let Some(i) = self.slot(tree) else { return };
        let _one = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let old = self.n[i].load(Ordering::Acquire);
        let new = f(old);
        if new == old {
            return;
        }
        self.n[i].store(new, Ordering::Release);
        self.write(tree, i);
    }

    /// Writes count `i` to `meta` (removes it while unknown or while a batch writes its tree).
    /// Called with `lock` held.
    fn write(&self, tree: TreeName, i: usize) {
        let Some(meta) = &self.meta else { return };
        let value = self.n[i].load(Ordering::Acquire);
        let written = if value == UNKNOWN || self.batches[i].load(Ordering::Acquire) > 0 {
            meta.remove(key(tree)).map(|_| ())
        } else {
            meta.insert(key(tree), &value.to_be_bytes()).map(|_| ())
        };
        if let Err(e) = written {
            // Unknown in memory too: the next ask walks the tree rather than trust a count
            // `meta` may not hold.
            tracing::warn!(tree = tree.0, error = %e, "record count not written; it is walked when next asked");
            self.n[i].store(UNKNOWN, Ordering::Release);
        }
    }

    /// A bulk batch starts writing `tree`'s rows: its count leaves `meta` until `end_batch`.
    pub(super) fn begin_batch(&self, tree: TreeName) {
        let Some(i) = self.slot(tree) else { return };
        let _one = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        self.batches[i].fetch_add(1, Ordering::AcqRel);
        self.write(tree, i);
    }

    /// A bulk batch wrote `added` new records of `tree` (or stopped on an error after them): the
    /// count is raised and written back once no other batch writes the tree.
    pub(super) fn end_batch(&self, tree: TreeName, added: i64) {
        let Some(i) = self.slot(tree) else { return };
        let _one = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let _ = self.batches[i].fetch_update(Ordering::AcqRel, Ordering::Acquire, |b| b.checked_sub(1));
        self.n[i].store(plus(self.n[i].load(Ordering::Acquire), added), Ordering::Release);
        self.write(tree, i);
    }

    /// Adds `by` records to a known count.
    pub(super) fn add(&self, tree: TreeName, by: i64) {
        if by != 0 {
            self.change(tree, |v| plus(v, by));
        }
    }

    /// The count, when known.
    pub(super) fn get(&self, tree: TreeName) -> Option<usize> {
        self.slot(tree).map(|i| self.n[i].load(Ordering::Acquire)).filter(|v| *v != UNKNOWN).map(|v| v as usize)
    }

    /// Sets a count (after a walk or a clear).
    pub(super) fn set(&self, tree: TreeName, value: usize) {
        self.change(tree, |_| value as i64);
    }

    /// Forgets a count: the next ask walks the tree.
    pub(super) fn forget(&self, tree: TreeName) {
        self.change(tree, |_| UNKNOWN);
    }
}

#[cfg(test)]
mod tests {
    use crate::store::{Store, trees};

    fn walked(store: &Store, tree: trees::TreeName) -> usize {
        store.db.open_tree(tree.0).unwrap().len()
    }

    #[test]
    fn counts_follow_inserts_replacements_updates_removals_and_reopens() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path()).unwrap();
            assert_eq!(store.len(trees::PLANS).unwrap(), 0);
            for i in 0..10u8 {
                store.put(trees::PLANS, &[i], &"plan").unwrap();
            }
            store.put(trees::PLANS, &[3], &"replaced").unwrap();
            store.remove(trees::PLANS, &[4]).unwrap();
            store.remove(trees::PLANS, &[40]).unwrap();
            store.update(trees::PLANS, &[50], |_: Option<String>| Some("new".to_string())).unwrap();
            store.update(trees::PLANS, &[5], |_: Option<String>| Some("changed".to_string())).unwrap();
            store.put_bytes(trees::VECTORS, b"v", b"code").unwrap();
            assert_eq!(store.counts.get(trees::PLANS), Some(10), "kept, not walked");
            assert_eq!(store.len(trees::PLANS).unwrap(), walked(&store, trees::PLANS));
            assert_eq!(store.len(trees::VECTORS).unwrap(), 1);
            store.flush().unwrap();
        }
        let store = Store::open(dir.path()).unwrap();
        assert_eq!(store.counts.get(trees::PLANS), Some(10), "read back from meta");
        assert_eq!(store.len(trees::RESPONSES).unwrap(), 0);
        // A transaction that writes a counted tree makes its count walked again.
        store.transaction(&[trees::PLANS], |t| t[0].put(&[60], &"in a transaction")).unwrap();
        assert_eq!(store.counts.get(trees::PLANS), None);
        assert_eq!(store.len(trees::PLANS).unwrap(), 11);
        assert_eq!(store.clear(trees::PLANS).unwrap(), 11);
        assert_eq!(store.len(trees::PLANS).unwrap(), 0);
    }

    #[test]
    fn a_new_store_starts_counted() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        assert_eq!(store.counts.get(trees::VECTORS), Some(0), "nothing to walk in a new store");
        store.put_bytes(trees::VECTORS, b"v", b"code").unwrap();
        drop(store);
        let store = Store::open(dir.path()).unwrap();
        assert_eq!(store.counts.get(trees::VECTORS), Some(1), "written at close and read back");
    }

    #[test]
    fn counts_flushed_with_their_writes_survive_a_process_that_never_closes() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        (0..7u8).for_each(|i| store.put(trees::PLANS, &[i], &i).unwrap());
        store.remove(trees::PLANS, &[0]).unwrap();
        store.flush().unwrap();
        // A killed process runs no destructor: only what the flush made durable is there.
        let db = store.db.clone();
        std::mem::forget(store);
        let meta = db.open_tree(trees::META.0).unwrap();
        let again = super::Counts::load(&meta, false).unwrap();
        assert_eq!(again.get(trees::PLANS), Some(6));
    }

    #[test]
    fn a_store_written_before_counts_is_walked_once() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path()).unwrap();
            (0..5u8).for_each(|i| store.put(trees::RESPONSES, &[i], &i).unwrap());
            store.counts.forget(trees::RESPONSES);
            store.flush().unwrap();
        }
        let store = Store::open(dir.path()).unwrap();
        assert_eq!(store.counts.get(trees::RESPONSES), None);
        assert_eq!(store.len(trees::RESPONSES).unwrap(), 5);
        store.put(trees::RESPONSES, &[9], &9u8).unwrap();
        assert_eq!(store.counts.get(trees::RESPONSES), Some(6));
    }

    #[test]
    fn a_transaction_forgets_only_the_counts_of_trees_it_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        store.put(trees::RESPONSES, &[1], &1u8).unwrap();
        store.put(trees::PLANS, &[1], &1u8).unwrap();
        store
            .transaction(&[trees::RESPONSES, trees::PLANS], |t| {
                t[0].contains(&[1])?;
                t[1].put(&[2], &2u8)
            })
            .unwrap();
        assert_eq!(store.counts.get(trees::RESPONSES), Some(1), "only read: its count is kept");
        assert_eq!(store.counts.get(trees::PLANS), None, "written: walked when next asked");
        assert_eq!(store.len(trees::PLANS).unwrap(), 2);
    }
}
