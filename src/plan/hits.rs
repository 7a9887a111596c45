//! Plan hit stamps (the hit counter and the last hit time) held in memory and written in
//! batches, like the results' LRU touches: rewriting a plan's whole record on every hit cost a
//! read, a JSON round trip and a page rewrite per lookup. They reach the store before every
//! flush, every `BATCH` distinct plans hit, and when the store closes; a crash may lose the hits
//! since the last batch, never a plan. Reads of a plan add what is held.

use super::template::Record;
use crate::store::{self, Deferred, Store, trees};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

/// Distinct plans hit before their stamps are written without waiting for a flush.
const BATCH: usize = 256;

/// One plan's hits since the last batch and the newest hit time (unix seconds).
#[derive(Debug, Clone, Copy, Default)]
struct Stamp {
    hits: u64,
    last: u64,
}

/// The hit stamps held in memory for one store.
#[derive(Default)]
pub struct Hits {
    held: Mutex<HashMap<String, Stamp>>,
    /// One batch written at a time, so no hit is counted twice or lost between two batches.
    writing: Mutex<()>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Deferred for Hits {
    fn write(&self, store: &Store) -> store::Result<()> {
        let _one = lock(&self.writing);
        let held = std::mem::take(&mut *lock(&self.held));
        for (id, s) in held {
            // A plan removed since its hit stays removed (the update leaves a missing record).
            store.update(trees::PLANS, id.as_bytes(), |rec: Option<Record>| {
                rec.map(|mut r| {
                    r.plan.counters.hits += s.hits;
                    r.plan.last_hit_at = Some(r.plan.last_hit_at.unwrap_or(0).max(s.last));
                    r
                })
            })?;
        }
        Ok(())
    }
}

/// Counts a hit on plan `id` at `at` (unix seconds).
pub fn record(store: &Store, id: &str, at: u64) -> store::Result<()> {
    let hits = store.deferred::<Hits>();
    let full = {
        let mut held = lock(&hits.held);
        let s = held.entry(id.to_string()).or_default();
        s.hits += 1;
        s.last = s.last.max(at);
        held.len() >= BATCH
    };
    if full { hits.write(store) } else { Ok(()) }
}

/// Adds the hits held for its plan to a record read from the store.
pub fn overlay(store: &Store, rec: &mut Record) {
    if let Some(s) = lock(&store.deferred::<Hits>().held).get(&rec.plan.id) {
        rec.plan.counters.hits += s.hits;
        rec.plan.last_hit_at = Some(rec.plan.last_hit_at.unwrap_or(0).max(s.last));
    }
}

/// Drops what is held for a plan being removed.
pub fn forget(store: &Store, id: &str) {
    lock(&store.deferred::<Hits>().held).remove(id);
}
