//! Record counts of the trees `cache_stats` reports, kept as writes happen.
//!
//! sled counts a tree by walking all of it, and a walk leaves what it read in sled's page cache:
//! at 100k entries one `cache_stats` call grew the server by ~300 MB, and repeated calls by more.
//! So the store counts its own inserts and removals of these trees and writes the counts to `meta`
//! with every flush. A store written before counts were kept (or a transaction that wrote one of
//! these trees) is counted once by a walk, then kept up. A crash may lose the count changes of
//! writes made since the last flush, as it may lose those writes themselves; the next walk (after
//! `refrain index rebuild`, say) sets it right.

use super::trees::{self, TreeName};
use super::{Key, Result};
use std::sync::atomic::{AtomicI64, Ordering};

/// The trees whose records are counted.
pub const COUNTED: [TreeName; 4] = [trees::PLANS, trees::RESPONSES, trees::VECTORS, trees::EVENTS];

/// In `meta` while the store is closed after a clean close (see `Counts::load`).
const CLEAN: &[u8] = b"count-clean";

/// Not known: counted by a walk when next asked.
const UNKNOWN: i64 = -1;

/// The counts, one per counted tree, and what the last write put in `meta` (behind a lock, so
/// two flushes writing at once cannot leave an older count in `meta` than the one noted).
pub(super) struct Counts([AtomicI64; COUNTED.len()], std::sync::Mutex<[i64; COUNTED.len()]>);

fn key(tree: TreeName) -> Vec<u8> {
    Key::new().text("count").text(tree.0).into_bytes()
}

impl Counts {
    /// Every count unknown.
    pub(super) fn unknown() -> Counts {
        Counts(std::array::from_fn(|_| AtomicI64::new(UNKNOWN)), std::sync::Mutex::new([UNKNOWN; COUNTED.len()]))
    }

    /// The counts written when the store was last closed cleanly (all zero for a store created
    /// just now, `fresh`). After a process that had it open was killed, they are unknown: a
    /// flush can make a write durable before the count that goes with it, so the counts are
    /// walked once instead. The clean mark is taken away until the next clean close.
    pub(super) fn load(meta: &sled::Tree, fresh: bool) -> Result<Counts> {
        let counts = Counts::unknown();
        if fresh {
            counts.0.iter().for_each(|n| n.store(0, Ordering::Relaxed));
            return Ok(counts);
        }
        if meta.remove(CLEAN)?.is_none() {
            return Ok(counts);
        }
        for (i, tree) in COUNTED.iter().enumerate() {
            if let Some(v) = meta.get(key(*tree))?
                && let Ok(b) = <[u8; 8]>::try_from(v.as_ref())
            {
                counts.0[i].store(i64::from_be_bytes(b), Ordering::Relaxed);
                counts.1.lock().unwrap_or_else(|p| p.into_inner())[i] = i64::from_be_bytes(b);
            }
        }
        Ok(counts)
    }

    fn slot(&self, tree: TreeName) -> Option<&AtomicI64> {
        COUNTED.iter().position(|t| *t == tree).map(|i| &self.0[i])
    }

    /// Whether `tree` is counted.
    pub(super) fn counts(&self, tree: TreeName) -> bool {
        self.slot(tree).is_some()
    }

    /// Adds `by` records to a known count.
    pub(super) fn add(&self, tree: TreeName, by: i64) {
        if let Some(n) = self.slot(tree) {
            let _ = n.fetch_update(Ordering::AcqRel, Ordering::Acquire, |v| (v != UNKNOWN).then(|| (v + by).max(0)));
        }
    }

    /// The count, when known.
    pub(super) fn get(&self, tree: TreeName) -> Option<usize> {
        self.slot(tree).map(|n| n.load(Ordering::Acquire)).filter(|v| *v != UNKNOWN).map(|v| v as usize)
    }

    /// Sets a count (after a walk or a clear).
    pub(super) fn set(&self, tree: TreeName, value: usize) {
        if let Some(n) = self.slot(tree) {
            n.store(value as i64, Ordering::Release);
        }
    }

    /// Forgets a count: the next ask walks the tree.
    pub(super) fn forget(&self, tree: TreeName) {
        if let Some(n) = self.slot(tree) {
            n.store(UNKNOWN, Ordering::Release);
        }
    }

    /// Writes the counts and marks them clean: the store is closing (the caller flushes).
    pub(super) fn close(&self, meta: &sled::Tree) -> Result<()> {
        self.write(meta)?;
        meta.insert(CLEAN, &[] as &[u8])?;
        Ok(())
    }

    /// Writes the counts that changed since the last write into `meta` (an unknown one is
    /// removed), buffered like any write.
    pub(super) fn write(&self, meta: &sled::Tree) -> Result<()> {
        let mut written = self.1.lock().unwrap_or_else(|p| p.into_inner());
        for (i, tree) in COUNTED.iter().enumerate() {
            let v = self.0[i].load(Ordering::Acquire);
            if written[i] == v {
                continue;
            }
            if v == UNKNOWN {
                meta.remove(key(*tree))?;
            } else {
                meta.insert(key(*tree), &v.to_be_bytes())?;
            }
            written[i] = v;
        }
        Ok(())
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
            assert_eq!(store.commit.counts.get(trees::PLANS), Some(10), "kept, not walked");
            assert_eq!(store.len(trees::PLANS).unwrap(), walked(&store, trees::PLANS));
            assert_eq!(store.len(trees::VECTORS).unwrap(), 1);
            store.flush().unwrap();
        }
        let store = Store::open(dir.path()).unwrap();
        assert_eq!(store.commit.counts.get(trees::PLANS), Some(10), "read back from the clean close");
        assert_eq!(store.len(trees::RESPONSES).unwrap(), 0);
        // A transaction that writes a counted tree makes its count walked again.
        store.transaction(&[trees::PLANS], |t| t[0].put(&[60], &"in a transaction")).unwrap();
        assert_eq!(store.commit.counts.get(trees::PLANS), None);
        assert_eq!(store.len(trees::PLANS).unwrap(), 11);
        assert_eq!(store.clear(trees::PLANS).unwrap(), 11);
        assert_eq!(store.len(trees::PLANS).unwrap(), 0);
    }

    #[test]
    fn a_new_store_starts_counted() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        assert_eq!(store.commit.counts.get(trees::VECTORS), Some(0), "nothing to walk in a new store");
        store.put_bytes(trees::VECTORS, b"v", b"code").unwrap();
        drop(store);
        let store = Store::open(dir.path()).unwrap();
        assert_eq!(store.commit.counts.get(trees::VECTORS), Some(1), "written at close and read back");
    }

    #[test]
    fn counts_are_walked_again_after_a_close_that_was_not_clean() {
        let dir = tempfile::tempdir().unwrap();
        drop(Store::open(dir.path()).unwrap());
        let store = Store::open(dir.path()).unwrap();
        store.put(trees::PLANS, b"p", &1u8).unwrap();
        store.flush().unwrap();
        // A killed process never closes: what it flushed is there, the clean mark is not.
        std::mem::forget(store.clone());
        let db = store.db.clone();
        std::mem::forget(store);
        let meta = db.open_tree(trees::META.0).unwrap();
        let again = super::Counts::load(&meta, false).unwrap();
        assert_eq!(again.get(trees::PLANS), None, "walked, not trusted");
    }

    #[test]
    fn a_store_written_before_counts_is_walked_once() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = Store::open(dir.path()).unwrap();
            (0..5u8).for_each(|i| store.put(trees::RESPONSES, &[i], &i).unwrap());
            store.commit.counts.forget(trees::RESPONSES);
            store.flush().unwrap();
        }
        let store = Store::open(dir.path()).unwrap();
        assert_eq!(store.commit.counts.get(trees::RESPONSES), None);
        assert_eq!(store.len(trees::RESPONSES).unwrap(), 5);
        store.put(trees::RESPONSES, &[9], &9u8).unwrap();
        assert_eq!(store.commit.counts.get(trees::RESPONSES), Some(6));
    }
}
