//! Transactions over several trees: a read-modify-write of related rows (an entry's usage and its
//! LRU row) that concurrent requests cannot interleave, so no update is lost and no row is left
//! pointing at a ticket that no longer exists.
//!
//! sled retries the closure on conflict, so it must have no side effects beyond the rows it writes.

use super::{Error, Result, Store, TreeName, decode, encode};
use serde::{Serialize, de::DeserializeOwned};
use sled::Transactional;
use sled::transaction::{ConflictableTransactionError, TransactionError, TransactionalTree};
use std::sync::atomic::{AtomicBool, Ordering};

/// One tree inside a transaction.
pub struct Tx<'a> {
    name: TreeName,
    tree: &'a TransactionalTree,
    /// Set when the body writes this tree and the store counts its records: its count is then
    /// walked again when next asked (a retried body cannot count its own writes).
    wrote_counted: &'a AtomicBool,
}

impl Tx<'_> {
    /// Reads one value.
    pub fn get<T: DeserializeOwned>(&self, key: &[u8]) -> TxResult<Option<T>> {
        match self.tree.get(key)? {
            Some(bytes) => decode(self.name, &bytes).map(Some).map_err(ConflictableTransactionError::Abort),
            None => Ok(None),
        }
    }

    /// Whether a key exists.
    pub fn contains(&self, key: &[u8]) -> TxResult<bool> {
        Ok(self.tree.get(key)?.is_some())
    }

    /// Writes one value.
    pub fn put<T: Serialize>(&self, key: &[u8], value: &T) -> TxResult<()> {
        let bytes = encode(self.name, value).map_err(ConflictableTransactionError::Abort)?;
        self.noted();
        self.tree.insert(key, bytes)?;
        Ok(())
    }

    /// Removes one key; true when it existed.
    pub fn remove(&self, key: &[u8]) -> TxResult<bool> {
        self.noted();
        Ok(self.tree.remove(key)?.is_some())
    }

    fn noted(&self) {
        if super::count::COUNTED.contains(&self.name) {
            self.wrote_counted.store(true, Ordering::Relaxed);
        }
    }
}

/// What a transaction body returns.
pub type TxResult<T> = std::result::Result<T, ConflictableTransactionError<Error>>;

impl Store {
    /// Runs `f` atomically over `trees` (given to `f` in the same order). Refused like any write
    /// when the store is full or the request is over its budget.
    pub fn transaction<R>(&self, trees: &[TreeName], f: impl Fn(&[Tx<'_>]) -> TxResult<R>) -> Result<R> {
        self.check_room()?;
        self.transaction_freeing(trees, f)
    }

    /// `transaction` for bodies that only remove rows: never refused (removal frees room, and a
    /// removal refused halfway would leave rows behind).
    pub fn transaction_freeing<R>(&self, trees: &[TreeName], f: impl Fn(&[Tx<'_>]) -> TxResult<R>) -> Result<R> {
        let opened: Vec<sled::Tree> = trees.iter().map(|t| self.tree(*t)).collect::<Result<_>>()?;
        // One flag per tree: only the counted trees the body wrote have their counts forgotten.
        let wrote_counted: Vec<AtomicBool> = trees.iter().map(|_| AtomicBool::new(false)).collect();
        let outcome = opened.as_slice().transaction(|views: &Vec<TransactionalTree>| {
            let txs: Vec<Tx<'_>> = views
                .iter()
                .zip(trees)
                .zip(&wrote_counted)
                .map(|((tree, name), wrote)| Tx { name: *name, tree, wrote_counted: wrote })
                .collect();
            f(&txs)
        });
        for (t, wrote) in trees.iter().zip(&wrote_counted) {
            if wrote.load(Ordering::Relaxed) {
                self.counts.forget(*t);
            }
        }
        match outcome {
            Ok(r) => Ok(r),
            Err(TransactionError::Abort(e)) => Err(e),
            Err(TransactionError::Storage(e)) => Err(e.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::trees;

    #[test]
    fn concurrent_transactions_lose_no_increment_and_keep_rows_paired() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..100 {
                        store
                            .transaction(&[trees::STATS, trees::CANON], |t| {
                                let n: u64 = t[0].get(b"n")?.unwrap_or(0);
                                t[1].remove(&n.to_be_bytes())?;
                                t[1].put(&(n + 1).to_be_bytes(), &())?;
                                t[0].put(b"n", &(n + 1))
                            })
                            .unwrap();
                    }
                });
            }
        });
        assert_eq!(store.get::<u64>(trees::STATS, b"n").unwrap(), Some(400));
        assert_eq!(store.len(trees::CANON).unwrap(), 1, "exactly one row per counter value survives");
    }
}
