//! A thin wrapper over one hnsw_rs graph with parameters validated before calling in (hnsw_rs
//! prints to stdout and exits the process on bad parameters).

use super::distance::UnitDot;
use hnsw_rs::api::AnnT;
use hnsw_rs::hnsw::Hnsw;
use std::path::Path;

const MAX_CONNECTIONS: usize = 16;
const EF_CONSTRUCTION: usize = 200;
const MAX_LAYER: usize = 16;
const EF_SEARCH: usize = 64;

/// One HNSW graph over unit vectors keyed by vector id.
pub struct Graph {
    hnsw: Hnsw<'static, f32, UnitDot>,
}

impl Graph {
    /// Builds a graph from (id, vector) pairs.
    pub fn build(items: &[(u64, Vec<f32>)]) -> Graph {
        let hnsw = Hnsw::new(MAX_CONNECTIONS, items.len().max(1024) * 2, MAX_LAYER, EF_CONSTRUCTION, UnitDot);
        let data: Vec<(&Vec<f32>, usize)> = items.iter().map(|(id, v)| (v, *id as usize)).collect();
        hnsw.parallel_insert(&data);
        Graph { hnsw }
    }

    /// Wraps a graph loaded from a dump.
    pub fn from_hnsw(mut hnsw: Hnsw<'static, f32, UnitDot>) -> Graph {
        hnsw.set_searching_mode(false);
        Graph { hnsw }
    }

    /// Adds one vector.
    pub fn insert(&self, v: &[f32], id: u64) {
        self.hnsw.insert_slice((v, id as usize));
    }

    /// Adds many vectors using every core.
    pub fn insert_many(&self, items: &[(u64, Vec<f32>)]) {
        let data: Vec<(&Vec<f32>, usize)> = items.iter().map(|(id, v)| (v, *id as usize)).collect();
        self.hnsw.parallel_insert(&data);
    }

    /// Points in the graph (live or deleted).
    pub fn len(&self) -> usize {
        self.hnsw.get_nb_point()
    }

    /// Writes the graph and its data under `dir` with `basename`.
    pub fn dump(&self, dir: &Path, basename: &str) -> anyhow::Result<String> {
        self.hnsw.file_dump(dir, basename)
    }

    /// Up to `k` (id, cosine similarity) pairs passing `keep`.
    /// Without deletions (`keep` is None) the unfiltered search runs, which is much cheaper.
    pub fn search(&self, q: &[f32], k: usize, keep: Option<&dyn Fn(&usize) -> bool>) -> Vec<(u64, f32)> {
        let ef = EF_SEARCH.max(k * 2);
        let found = match keep {
            Some(f) => self.hnsw.search_filter(q, k, ef, Some(&f)),
            None => self.hnsw.search(q, k, ef),
        };
        found.into_iter().map(|n| (n.d_id as u64, 1.0 - n.distance)).collect()
    }
}
