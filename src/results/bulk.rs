//! Filing many results at once (imports, benchmark preloads): each entry with its query vector,
//! text row, usage and LRU rows, and the put counters, exactly as `response_cache_put` files
//! them one at a time, but written as one store batch per call. Safe to call from several
//! threads at once, each with its own chunk; the caller flushes.

use super::entry::{self, Entry};
use super::{AREA, Result};
use crate::index::VectorIndex;
use crate::stats;
use crate::store::Store;
use std::collections::BTreeMap;

/// Files `items` (entries with their query vectors, already embedded); each entry's `vector` is
/// set here. Keys must be new to the store (a put of an existing key removes the old entry
/// first; an import does not). Returns how many entries were filed.
pub fn import(store: &Store, index: &VectorIndex, items: Vec<(Entry, Option<Vec<f32>>)>) -> Result<usize> {
    // Of items sharing a key the last is kept, as if it had replaced the ones before.
    let kept = crate::store::keep_last(items, |(e, _)| e.key.clone());
    let mut entries = Vec::with_capacity(kept.len());
    // Vectors grouped by scope (results of one tool in one namespace), in input order.
    let mut scopes: BTreeMap<String, Vec<(usize, Vec<f32>)>> = BTreeMap::new();
    for (i, (e, v)) in kept.into_iter().enumerate() {
        if let Some(v) = v {
            scopes.entry(entry::scope(&e.namespace, &e.tool)).or_default().push((i, v));
        }
        entries.push(e);
    }
    for (scope, vectors) in scopes {
        let (at, items): (Vec<usize>, Vec<crate::index::Targeted>) =
            vectors.into_iter().map(|(i, v)| (i, (entries[i].key.as_bytes().to_vec(), v))).unzip();
        for (i, id) in at.into_iter().zip(index.insert_many(&scope, items)?) {
            entries[i].vector = Some(id);
        }
    }
    entry::write_many(store, &entries)?;
    let mut per_tool: BTreeMap<&str, u64> = BTreeMap::new();
    entries.iter().for_each(|e| *per_tool.entry(e.tool.as_str()).or_default() += 1);
    for (tool, n) in per_tool {
        stats::bump(store, AREA, "puts", Some(tool), n)?;
    }
    Ok(entries.len())
}
