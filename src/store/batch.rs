//! Bulk writes: rows gathered in memory, per tree, then written tree by tree in key order, for
//! imports that file thousands of records at once (`refrain-bench`'s preload, plan libraries).
//! Gathering (encoding, hashing) runs on the importing threads in parallel; the writes are plain
//! sled inserts, not sled's atomic `apply_batch`, which in sled 0.34 serialises every writer and
//! held memory far past the cache capacity (30k plans + 30k results: 761 MiB peak with it,
//! 472 MiB without; at 1M the import passed 19 GiB).
//!
//! Nothing is atomic: a crash in the middle may leave some rows written and not others, so an
//! importer flushes after `apply` and acknowledges nothing before that. A counted tree's count
//! is out of `meta` while its rows are written (`Counts::begin_batch`): after such a crash it is
//! walked when next asked, not left short by the rows of the batch in flight.

use super::{Result, Store, TreeName, encode};
use serde::Serialize;

/// Of items sharing a key, the last (as successive puts would leave them), the others in input
/// order: what a bulk import keeps before it indexes and files its items.
pub fn keep_last<T, K: Eq + std::hash::Hash>(items: Vec<T>, key: impl Fn(&T) -> K) -> Vec<T> {
    let mut last = std::collections::HashMap::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        last.insert(key(item), i);
    }
    items.into_iter().enumerate().filter(|(i, item)| last.get(&key(item)) == Some(i)).map(|(_, x)| x).collect()
}

/// One tree's rows: (key, value) in the order added.
type Rows = Vec<(Vec<u8>, Vec<u8>)>;

/// Rows to write, grouped by tree.
#[derive(Default)]
pub struct Batch {
    trees: Vec<(TreeName, Rows)>,
    rows: usize,
}

impl Batch {
    /// An empty batch.
    pub fn new() -> Batch {
        Batch::default()
    }

    fn tree(&mut self, tree: TreeName) -> &mut Rows {
        let i = match self.trees.iter().position(|(t, _)| *t == tree) {
            Some(i) => i,
            None => {
                self.trees.push((tree, Vec::new()));
                self.trees.len() - 1
            }
        };
        &mut self.trees[i].1
    }

    /// Adds one value, encoded as `Store::put` encodes it.
    pub fn put<T: Serialize>(&mut self, tree: TreeName, key: &[u8], value: &T) -> Result<()> {
        let bytes = encode(tree, value)?;
        self.tree(tree).push((key.to_vec(), bytes));
        self.rows += 1;
        Ok(())
    }

    /// Adds raw bytes, as `Store::put_bytes` writes them.
    pub fn put_bytes(&mut self, tree: TreeName, key: &[u8], value: &[u8]) {
        self.tree(tree).push((key.to_vec(), value.to_vec()));
        self.rows += 1;
    }

    /// Rows gathered.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// True when no row was gathered.
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }
}

impl Store {
    /// Writes a batch's rows (buffered like any write; the caller flushes). Refused like any
    /// write when the store is full or the request is over its budget.
    pub fn apply(&self, batch: Batch) -> Result<()> {
        self.check_room()?;
        for (tree, mut rows) in batch.trees {
            // Key order, the last of equal keys kept (as a sled batch would). Plain inserts, not
            // `apply_batch`: sled 0.34's batches hold memory far past its cache capacity.
            rows.reverse();
            rows.sort_by(|a, b| a.0.cmp(&b.0));
            rows.dedup_by(|later, earlier| later.0 == earlier.0);
            // The tree opened once, and a counted tree's count written once for its rows, not
            // once per row (it was an extra insert into `meta`, under a lock, for every record).
            let handle = self.tree(tree)?;
            self.counts.begin_batch(tree);
            let mut added = 0i64;
            let inserted = rows.into_iter().try_for_each(|(k, v)| {
                added += i64::from(handle.insert(k, v)?.is_none());
                Ok::<(), sled::Error>(())
            });
            self.counts.end_batch(tree, added);
            inserted?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::trees;

    #[test]
    fn a_batch_writes_what_single_puts_write() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (Store::open(&dir.path().join("a")).unwrap(), Store::open(&dir.path().join("b")).unwrap());
        let mut batch = Batch::new();
        for i in 0..50u32 {
            let k = format!("k{i}");
            batch.put(trees::META, k.as_bytes(), &i).unwrap();
            batch.put_bytes(trees::VECTORS, k.as_bytes(), &i.to_le_bytes());
            a.put(trees::META, k.as_bytes(), &i).unwrap();
            a.put_bytes(trees::VECTORS, k.as_bytes(), &i.to_le_bytes()).unwrap();
        }
        // Of rows with one key, the last added wins, as with successive puts.
        batch.put(trees::META, b"k3", &99u32).unwrap();
        a.put(trees::META, b"k3", &99u32).unwrap();
        assert_eq!(batch.len(), 101);
        b.apply(batch).unwrap();
        for tree in [trees::META, trees::VECTORS] {
            let rows = |s: &Store| {
                let mut v = Vec::new();
                s.for_each_bytes(tree, |k, x| v.push((k.to_vec(), x.to_vec()))).unwrap();
                v
            };
            assert_eq!(rows(&a), rows(&b));
        }
    }

    #[test]
    fn a_batch_counts_the_new_records_of_a_counted_tree_once_and_only_new_ones() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        s.put(trees::RESPONSES, b"k0", &0u32).unwrap();
        let mut batch = Batch::new();
        for i in 0..20u32 {
            batch.put(trees::RESPONSES, format!("k{i}").as_bytes(), &i).unwrap();
        }
        // k0 exists already and k5 is added twice: 19 new records, 20 in all.
        batch.put(trees::RESPONSES, b"k5", &55u32).unwrap();
        s.apply(batch).unwrap();
        assert_eq!(s.len(trees::RESPONSES).unwrap(), 20);
        s.flush().unwrap();
        drop(s);
        // The count is in `meta`, not walked again: the reopened store reads the same number.
        let again = Store::open(dir.path()).unwrap();
        assert_eq!(again.counts.get(trees::RESPONSES), Some(20), "read from meta");
        assert_eq!(again.len(trees::RESPONSES).unwrap(), 20);
    }

    #[test]
    fn a_batch_cut_off_by_a_crash_leaves_its_count_walked_not_short() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        s.put(trees::RESPONSES, b"k0", &0u32).unwrap();
        // What a crash between a batch's rows and its count leaves on disk: the rows and no
        // count (before, the count of before the batch: 1 for 30 records).
        s.counts.begin_batch(trees::RESPONSES);
        let handle = s.tree(trees::RESPONSES).unwrap();
        for i in 1..30u32 {
            handle.insert(format!("k{i}").as_bytes(), encode(trees::RESPONSES, &i).unwrap()).unwrap();
        }
        s.flush().unwrap();
        drop(handle);
        drop(s);
        let again = Store::open(dir.path()).unwrap();
        assert_eq!(again.counts.get(trees::RESPONSES), None, "no count to trust");
        assert_eq!(again.len(trees::RESPONSES).unwrap(), 30, "walked");
        // Counted again from there on.
        again.put(trees::RESPONSES, b"k30", &30u32).unwrap();
        assert_eq!(again.len(trees::RESPONSES).unwrap(), 31);
    }

    #[test]
    fn keep_last_keeps_the_last_of_each_key_in_input_order() {
        let kept = keep_last(vec![("a", 1), ("b", 2), ("a", 3), ("c", 4), ("b", 5)], |(k, _)| *k);
        assert_eq!(kept, vec![("a", 3), ("c", 4), ("b", 5)]);
    }
}
