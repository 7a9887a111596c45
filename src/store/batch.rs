//! Bulk writes: rows gathered in memory, per tree, and applied as one sled batch per tree, for
//! imports that file thousands of records at once (`refrain-bench`'s preload, plan libraries).
//! Gathering (encoding, hashing) can run on many threads; each apply writes a tree's rows in key
//! order under one log reservation instead of one insert call per row.
//!
//! A batch is applied tree by tree: a crash in the middle may leave the first trees written and
//! not the others, so an importer flushes after `apply` and acknowledges nothing before that.

use super::{Result, Store, TreeName, encode};
use serde::Serialize;

/// Rows to write, grouped by tree.
#[derive(Default)]
pub struct Batch {
    trees: Vec<(TreeName, sled::Batch)>,
    rows: usize,
}

impl Batch {
    /// An empty batch.
    pub fn new() -> Batch {
        Batch::default()
    }

    fn tree(&mut self, tree: TreeName) -> &mut sled::Batch {
        let i = match self.trees.iter().position(|(t, _)| *t == tree) {
            Some(i) => i,
            None => {
                self.trees.push((tree, sled::Batch::default()));
                self.trees.len() - 1
            }
        };
        &mut self.trees[i].1
    }

    /// Adds one value, encoded as `Store::put` encodes it.
    pub fn put<T: Serialize>(&mut self, tree: TreeName, key: &[u8], value: &T) -> Result<()> {
        let bytes = encode(tree, value)?;
        self.tree(tree).insert(key, bytes);
        self.rows += 1;
        Ok(())
    }

    /// Adds raw bytes, as `Store::put_bytes` writes them.
    pub fn put_bytes(&mut self, tree: TreeName, key: &[u8], value: &[u8]) {
        self.tree(tree).insert(key, value);
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
        for (tree, rows) in batch.trees {
            self.tree(tree)?.apply_batch(rows)?;
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
        assert_eq!(batch.len(), 100);
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
}
