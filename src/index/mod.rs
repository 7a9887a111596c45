//! The vector index: nearest stored vectors to a query, within one scope (a tool/namespace for
//! results, the plan library for plans).
//!
//! Derived data: the store's `vectors` tree is the truth and the index is rebuilt from it when
//! missing or stale. Small scopes are searched exactly (a scan); a scope that grows past
//! `HNSW_MIN` moves to an hnsw_rs graph. Deleted ids are filtered at search time and dropped by the
//! next rebuild.

mod distance;
mod graph;
mod persist;
mod records;

pub use records::VectorRecord;

use crate::embed::cosine;
use crate::store::{self, Store};
use graph::Graph;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, RwLock};

/// A scope switches from exact scan to HNSW when it holds this many vectors.
pub const HNSW_MIN: usize = if cfg!(test) { 256 } else { 4096 };

/// Index errors.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Reading or writing vectors in the store failed.
    #[error(transparent)]
    Store(#[from] store::Error),
    /// The query has the wrong length.
    #[error("query vector has {got} dimensions, the index holds {want}")]
    Dimension {
        /// Query length.
        got: usize,
        /// Index length.
        want: usize,
    },
}

/// One search hit: the stored vector's id, what it points at, and cosine similarity.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// Vector id.
    pub id: u64,
    /// The record key the vector belongs to.
    pub target: Vec<u8>,
    /// Cosine similarity in [-1, 1].
    pub score: f32,
}

#[derive(Default)]
struct Scope {
    /// id -> (target, vector) for exact scans; emptied when the scope moves to a graph.
    flat: HashMap<u64, (Vec<u8>, Vec<f32>)>,
    /// id -> target for every live id (graph scopes).
    live: HashMap<u64, Vec<u8>>,
    graph: Option<Graph>,
    /// Highest id inserted into the graph.
    max_id: u64,
    /// The graph changed since it was last saved.
    dirty: bool,
}

/// The in-memory index over every scope; cheap to clone.
#[derive(Clone, Default)]
pub struct VectorIndex {
    scopes: Arc<RwLock<HashMap<String, Scope>>>,
}

impl VectorIndex {
    /// Builds the index from the store's vectors (the derived-data rebuild).
    pub fn rebuild(store: &Store) -> Result<VectorIndex, Error> {
        Self::open(store, None)
    }

    /// Builds the index from the store, reusing graph dumps saved under `dir` when they are
    /// consistent with the store (vectors added since are inserted, deleted ones filtered).
    pub fn open(store: &Store, dir: Option<&Path>) -> Result<VectorIndex, Error> {
        let index = VectorIndex::default();
        let mut all: HashMap<String, Vec<(u64, VectorRecord)>> = HashMap::new();
        records::for_each(store, |id, rec| all.entry(rec.scope.clone()).or_default().push((id, rec)))?;
        let manifest = dir.map(persist::read_manifest).unwrap_or_default();
        let mut scopes = index.write();
        for (name, recs) in all {
            let scope = scopes.entry(name.clone()).or_default();
            let loaded = match dir {
                Some(d) if recs.len() >= HNSW_MIN => persist::load(d, &manifest, &name),
                _ => None,
            };
            match loaded {
                // Reuse the dump unless deletions made more than a third of it dead.
                Some((graph, info)) if info.points <= recs.len() * 3 / 2 => {
                    let newer: Vec<(u64, Vec<f32>)> = recs
                        .iter()
                        .filter(|(id, _)| *id > info.max_id)
                        .map(|(id, r)| (*id, r.vector.clone()))
                        .collect();
                    graph.insert_many(&newer);
                    scope.dirty = !newer.is_empty();
                    scope.max_id = recs.iter().map(|(id, _)| *id).max().unwrap_or(info.max_id).max(info.max_id);
                    scope.live = recs.into_iter().map(|(id, r)| (id, r.target)).collect();
                    scope.graph = Some(graph);
                    tracing::info!(scope = %name, added = newer.len(), "index scope loaded from its dump");
                }
                _ => {
                    for (id, rec) in recs {
                        scope.live.insert(id, rec.target.clone());
                        scope.flat.insert(id, (rec.target, rec.vector));
                    }
                    if scope.flat.len() >= HNSW_MIN {
                        promote(scope);
                    }
                }
            }
        }
        drop(scopes);
        Ok(index)
    }

    /// Saves every graph scope that changed since its last save. Returns how many were written.
    pub fn save(&self, dir: &Path) -> std::io::Result<usize> {
        let mut scopes = self.write();
        let dirty: Vec<(String, &Graph, u64)> = scopes
            .iter()
            .filter(|(_, s)| s.dirty)
            .filter_map(|(k, s)| s.graph.as_ref().map(|g| (k.clone(), g, s.max_id)))
            .collect();
        let n = dirty.len();
        if n > 0 {
            persist::save(dir, &dirty)?;
        }
        scopes.values_mut().for_each(|s| s.dirty = false);
        Ok(n)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<String, Scope>> {
        self.scopes.write().unwrap_or_else(|p| p.into_inner())
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<String, Scope>> {
        self.scopes.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Stores a vector (buffered in the store; the caller flushes) and indexes it. Returns its id.
    pub fn insert(&self, store: &Store, scope: &str, target: &[u8], vector: Vec<f32>) -> Result<u64, Error> {
        let id = store.next_id()?;
        let rec = VectorRecord { scope: scope.to_string(), target: target.to_vec(), vector };
        records::put(store, id, &rec)?;
        let mut scopes = self.write();
        let s = scopes.entry(rec.scope).or_default();
        s.live.insert(id, rec.target.clone());
        match &s.graph {
            Some(g) => {
                g.insert(&rec.vector, id);
                s.max_id = s.max_id.max(id);
                s.dirty = true;
            }
            None => {
                s.flat.insert(id, (rec.target, rec.vector));
                if s.flat.len() >= HNSW_MIN {
                    promote(s);
                }
            }
        }
        Ok(id)
    }

    /// Stores and indexes many vectors of one scope at once (a bulk import); graph inserts use
    /// every core. The caller flushes. Returns the new ids in input order.
    pub fn insert_many(&self, store: &Store, scope: &str, items: Vec<(Vec<u8>, Vec<f32>)>) -> Result<Vec<u64>, Error> {
        let mut ids = Vec::with_capacity(items.len());
        for (target, vector) in &items {
            let id = store.next_id()?;
            let rec = VectorRecord { scope: scope.to_string(), target: target.clone(), vector: vector.clone() };
            records::put(store, id, &rec)?;
            ids.push(id);
        }
        let mut scopes = self.write();
        let s = scopes.entry(scope.to_string()).or_default();
        let mut for_graph = Vec::new();
        for (&id, (target, vector)) in ids.iter().zip(items) {
            s.live.insert(id, target.clone());
            if s.graph.is_some() {
                for_graph.push((id, vector));
            } else {
                s.flat.insert(id, (target, vector));
            }
        }
        match &s.graph {
            Some(g) => {
                g.insert_many(&for_graph);
                s.max_id = s.max_id.max(ids.iter().copied().max().unwrap_or(0));
                s.dirty = true;
            }
            None if s.flat.len() >= HNSW_MIN => promote(s),
            None => {}
        }
        Ok(ids)
    }

    /// A stored vector by id, read from the store (None when it is gone).
    pub fn stored_vector(&self, store: &Store, id: u64) -> Option<Vec<f32>> {
        records::get(store, id).map(|r| r.vector)
    }

    /// Removes a vector from the store and the index.
    pub fn remove(&self, store: &Store, id: u64) -> Result<(), Error> {
        records::remove(store, id)?;
        for s in self.write().values_mut() {
            if s.live.remove(&id).is_some() {
                s.flat.remove(&id);
                break;
            }
        }
        Ok(())
    }

    /// The `k` nearest live vectors of `scope` with similarity at least `min_score`, best first.
    pub fn search(&self, scope: &str, query: &[f32], k: usize, min_score: f32) -> Vec<Hit> {
        let scopes = self.read();
        let Some(s) = scopes.get(scope) else { return Vec::new() };
        let mut hits: Vec<Hit> = match &s.graph {
            Some(g) => {
                let keep = |id: &usize| s.live.contains_key(&(*id as u64));
                let deleted = g.len() > s.live.len();
                g.search(query, k, if deleted { Some(&keep) } else { None })
            }
            .into_iter()
            .filter_map(|(id, score)| s.live.get(&id).map(|t| Hit { id, target: t.clone(), score }))
            .collect(),
            None => {
                s.flat.iter().map(|(id, (t, v))| Hit { id: *id, target: t.clone(), score: cosine(query, v) }).collect()
            }
        };
        hits.retain(|h| h.score >= min_score);
        hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
        hits.truncate(k);
        hits
    }

    /// Forgets every vector (after the store's vectors tree was cleared).
    pub fn clear(&self) {
        self.write().clear();
    }

    /// Live vectors per scope.
    pub fn sizes(&self) -> Vec<(String, usize)> {
        let mut v: Vec<_> = self.read().iter().map(|(k, s)| (k.clone(), s.live.len())).collect();
        v.sort();
        v
    }

    /// Total live vectors.
    pub fn len(&self) -> usize {
        self.read().values().map(|s| s.live.len()).sum()
    }

    /// True when nothing is indexed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Moves a scope from exact scan to a graph built from its vectors.
fn promote(scope: &mut Scope) {
    let items: Vec<(u64, Vec<f32>)> = scope.flat.drain().map(|(id, (_, v))| (id, v)).collect();
    scope.max_id = items.iter().map(|(id, _)| *id).max().unwrap_or(0);
    scope.graph = Some(Graph::build(&items));
    scope.dirty = true;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pseudo-random unit vector (splitmix64), distinct per seed.
    fn unit(seed: u32) -> Vec<f32> {
        let mut x = u64::from(seed).wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut v: Vec<f32> = (0..16)
            .map(|_| {
                x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
                let mut z = x;
                z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                ((z ^ (z >> 31)) % 2000) as f32 / 1000.0 - 1.0
            })
            .collect();
        crate::embed::normalise(&mut v);
        v
    }

    #[test]
    fn search_stays_inside_its_scope_and_ranks_by_similarity() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let idx = VectorIndex::default();
        idx.insert(&store, "a", b"t1", unit(1)).unwrap();
        idx.insert(&store, "a", b"t2", unit(2)).unwrap();
        idx.insert(&store, "b", b"t3", unit(1)).unwrap();
        let hits = idx.search("a", &unit(1), 5, -1.0);
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[0].target, b"t1");
        assert!((hits[0].score - 1.0).abs() < 1e-5);
    }

    #[test]
    fn rebuild_from_store_matches_and_forgets_removed() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let idx = VectorIndex::default();
        let a = idx.insert(&store, "s", b"x", unit(3)).unwrap();
        idx.insert(&store, "s", b"y", unit(4)).unwrap();
        idx.remove(&store, a).unwrap();
        let again = VectorIndex::rebuild(&store).unwrap();
        let hits = again.search("s", &unit(3), 5, -1.0);
        assert_eq!(hits.len(), 1);
        assert_eq!(hits[0].target, b"y");
    }

    #[test]
    fn saved_graphs_reload_and_pick_up_later_vectors() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("db")).unwrap();
        let idx = VectorIndex::default();
        for i in 0..(HNSW_MIN as u32 + 5) {
            idx.insert(&store, "big", format!("t{i}").as_bytes(), unit(i)).unwrap();
        }
        assert_eq!(idx.save(&dir.path().join("index")).unwrap(), 1);
        let late = idx.insert(&store, "big", b"late", unit(100_000)).unwrap();
        let again = VectorIndex::open(&store, Some(&dir.path().join("index"))).unwrap();
        assert_eq!(again.len(), HNSW_MIN + 6);
        let hits = again.search("big", &unit(100_000), 10, 0.999);
        assert!(hits.iter().any(|h| h.id == late), "a vector stored after the dump is found");
    }

    #[test]
    fn bulk_inserts_match_single_inserts_on_both_sides_of_the_graph_threshold() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let idx = VectorIndex::default();
        let batch = |from: u32, to: u32| (from..to).map(|i| (format!("t{i}").into_bytes(), unit(i))).collect();
        let first = idx.insert_many(&store, "bulk", batch(0, 100)).unwrap();
        assert_eq!(first.len(), 100);
        idx.insert_many(&store, "bulk", batch(100, HNSW_MIN as u32 + 50)).unwrap();
        idx.insert_many(&store, "bulk", batch(HNSW_MIN as u32 + 50, HNSW_MIN as u32 + 80)).unwrap();
        assert_eq!(idx.len(), HNSW_MIN + 80);
        for probe in [3, HNSW_MIN as u32 + 60] {
            let hits = idx.search("bulk", &unit(probe), 1, 0.999);
            assert_eq!(hits[0].target, format!("t{probe}").into_bytes());
        }
        let again = VectorIndex::rebuild(&store).unwrap();
        assert_eq!(again.len(), HNSW_MIN + 80, "bulk-inserted vectors are in the store");
    }

    #[test]
    fn large_scopes_use_the_graph_and_still_find_exact_matches() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let idx = VectorIndex::default();
        for i in 0..(HNSW_MIN as u32 + 10) {
            idx.insert(&store, "big", format!("t{i}").as_bytes(), unit(i)).unwrap();
        }
        let hits = idx.search("big", &unit(77), 3, 0.99);
        assert!(!hits.is_empty());
        assert!(hits[0].score > 0.999);
    }
}
