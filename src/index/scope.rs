//! The points of one scope in memory: ids, int8 codes end to end, a state byte each, and the
//! frozen graph over the first `graph.len()` of them (sorted by id). Points added since the graph
//! was built form the tail, which every search scans exactly; a scope with no graph yet is all
//! tail, so it answers from its first lookup, never waiting for a build.
//!
//! Removed points stay where they are, marked dead (searched through, never returned) until the
//! next build drops them. After a restart, a point of a saved graph whose vector is gone from the
//! store is hollow: it has no code, so the walk steps over it.

use super::graph::Graph;
use super::quant;
use std::sync::Arc;

const LIVE: u8 = 0;
const DEAD: u8 = 1;
const HOLLOW: u8 = 2;

/// Largest tail kept before a rebuild, whatever the graph's size (an exact scan of 50k codes
/// costs a few milliseconds).
const TAIL_MAX: usize = 50_000;

/// One scope's points.
#[derive(Debug, Default)]
pub struct Points {
    dim: usize,
    ids: Vec<u64>,
    codes: Vec<i8>,
    state: Vec<u8>,
    graph: Arc<Graph>,
    live: usize,
    /// Ids removed while a build was running (applied to the build's result).
    removed_during_build: Option<Vec<u64>>,
}

/// The live points a build starts from, sorted by id.
#[derive(Debug)]
pub struct Snapshot {
    /// Vector ids, ascending.
    pub ids: Vec<u64>,
    /// Their codes, end to end.
    pub codes: Vec<i8>,
    /// Dimensions.
    pub dim: usize,
    /// Points the scope held when the snapshot was taken (later ones are re-added as tail).
    taken: usize,
}

impl Points {
    /// Loads a scope from its saved graph (ids ascending, `dim`) and the store's codes, given in
    /// id order by `scan`: saved points missing from the store are hollow, stored points missing
    /// from the graph join the tail.
    pub fn assemble(saved: Option<(usize, Vec<u64>, Graph)>, scan: impl FnOnce(&mut dyn FnMut(u64, &[i8]))) -> Points {
        let (mut p, graph_ids) = match saved {
            Some((dim, ids, graph)) if graph.len() == ids.len() => {
                let n = ids.len();
                let p = Points {
                    dim,
                    codes: vec![0; n * quant::stride(dim)],
                    state: vec![HOLLOW; n],
                    ids: ids.clone(),
                    graph: Arc::new(graph),
                    ..Points::default()
                };
                (p, ids)
            }
            _ => (Points::default(), Vec::new()),
        };
        let mut tail: Vec<(u64, Vec<i8>)> = Vec::new();
        let mut j = 0usize;
        scan(&mut |id, code| {
            while j < graph_ids.len() && graph_ids[j] < id {
                j += 1;
            }
            let s = quant::stride(p.dim);
            if j < graph_ids.len() && graph_ids[j] == id && code.len() == s {
                p.codes[j * s..(j + 1) * s].copy_from_slice(code);
                p.state[j] = LIVE;
                p.live += 1;
            } else {
                tail.push((id, code.to_vec()));
            }
        });
        for (id, code) in tail {
            p.push(id, &code);
        }
        p
    }

    /// Loads a scope from a saved graph that holds its points' codes: `gone` are ids removed since
    /// the save (ascending or not), `later` gives the points stored since (ids above the last
    /// saved one) in id order.
    pub fn restore(
        dim: usize,
        ids: Vec<u64>,
        codes: Vec<i8>,
        graph: Graph,
        gone: &[u64],
        later: impl FnOnce(&mut dyn FnMut(u64, &[i8])),
    ) -> Points {
        let n = ids.len();
        let mut p =
            Points { dim, ids, codes, state: vec![LIVE; n], graph: Arc::new(graph), live: n, ..Points::default() };
        for id in gone {
            if let Ok(i) = p.ids.binary_search(id)
                && p.state[i] == LIVE
            {
                p.state[i] = DEAD;
                p.live -= 1;
            }
        }
        later(&mut |id, code| {
            p.push(id, code);
        });
        p
    }

    fn stride(&self) -> usize {
        quant::stride(self.dim)
    }

    fn code(&self, i: usize) -> &[i8] {
        let s = self.stride();
        &self.codes[i * s..(i + 1) * s]
    }

    /// The code of a live point by id (None when absent, removed or hollow): a binary search in
    /// the graph's ids, a scan of the tail.
    pub fn code_of(&self, id: u64) -> Option<&[i8]> {
        let g = self.graph.len().min(self.ids.len());
        let i = self.ids[..g]
            .binary_search(&id)
            .ok()
            .or_else(|| self.ids[g..].iter().position(|x| *x == id).map(|i| i + g))?;
        (self.state[i] == LIVE).then(|| self.code(i))
    }

    /// Dimensions of the scope's vectors (0 while empty).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Live points.
    pub fn live(&self) -> usize {
        self.live
    }

    /// Adds a point; false when its code has another dimension than the scope's.
    pub fn push(&mut self, id: u64, code: &[i8]) -> bool {
        let Some(dim) = quant::dim_of(code.len()) else { return false };
        if self.ids.is_empty() && self.graph.is_empty() {
            self.dim = dim;
        }
        if dim != self.dim {
            return false;
        }
        self.ids.push(id);
        self.codes.extend_from_slice(code);
        self.state.push(LIVE);
        self.live += 1;
        true
    }

    /// Marks a point removed; true when it was live here.
    pub fn remove(&mut self, id: u64) -> bool {
        let g = self.graph.len();
        let at = match self.ids[..g].binary_search(&id) {
            Ok(i) => Some(i),
            Err(_) => self.ids[g..].iter().position(|x| *x == id).map(|i| g + i),
        };
        let Some(i) = at.filter(|&i| self.state[i] == LIVE) else { return false };
        self.state[i] = DEAD;
        self.live -= 1;
        if let Some(log) = &mut self.removed_during_build {
            log.push(id);
        }
        true
    }

    /// Whether the scope should (re)build its graph: big enough, and a tail (or a share of dead
    /// points) that makes the exact part or the detours too costly.
    pub fn wants_build(&self, min_points: usize) -> bool {
        let g = self.graph.len();
        let tail = self.ids.len() - g;
        let limit = (g / 8).clamp(min_points, TAIL_MAX.max(min_points));
        self.live >= min_points && (tail > limit || g > 0 && (g - self.graph_live()) * 4 > g)
    }

    fn graph_live(&self) -> usize {
        self.state[..self.graph.len()].iter().filter(|s| **s == LIVE).count()
    }

    /// The live points, sorted by id, for a build; removals from now on are logged.
    pub fn snapshot(&mut self) -> Snapshot {
        let mut order: Vec<(u64, usize)> =
            self.ids.iter().enumerate().filter(|(i, _)| self.state[*i] == LIVE).map(|(i, id)| (*id, i)).collect();
        order.sort_unstable();
        let mut codes = Vec::with_capacity(order.len() * self.stride());
        order.iter().for_each(|(_, i)| codes.extend_from_slice(self.code(*i)));
        self.removed_during_build = Some(Vec::new());
        Snapshot { ids: order.into_iter().map(|(id, _)| id).collect(), codes, dim: self.dim, taken: self.ids.len() }
    }

    /// Replaces the graph with one built from `snap`: points added since the snapshot become the
    /// new tail, removals since are applied. Returns the graph and its ids, to be saved.
    pub fn install(&mut self, snap: Snapshot, graph: Graph) -> (Arc<Graph>, Vec<u64>) {
        let n = snap.ids.len();
        let mut next = Points {
            dim: snap.dim,
            ids: snap.ids,
            codes: snap.codes,
            state: vec![LIVE; n],
            graph: Arc::new(graph),
            live: n,
            removed_during_build: None,
        };
        for i in snap.taken..self.ids.len() {
            if next.push(self.ids[i], self.code(i)) && self.state[i] != LIVE {
                next.remove(self.ids[i]);
            }
        }
        for id in self.removed_during_build.take().unwrap_or_default() {
            next.remove(id);
        }
        *self = next;
        (self.graph.clone(), self.ids[..n].to_vec())
    }

    /// Forgets a build that did not finish.
    pub fn abandon_build(&mut self) {
        self.removed_during_build = None;
    }

    /// Up to `k` (id, cosine) of the live points nearest `query`, best first, at least `min`.
    pub fn search(&self, query: &[f32], k: usize, min: f32, ef: usize) -> Vec<(u64, f32)> {
        if self.live == 0 || query.len() != self.dim || k == 0 {
            return Vec::new();
        }
        let q = quant::encode(query);
        let g = self.graph.len();
        let mut near: Vec<(f32, usize)> = self
            .graph
            .search(ef.max(k), |p| {
                let i = p as usize;
                (self.state[i] != HOLLOW).then(|| 1.0 - quant::cosine(&q, self.code(i)))
            })
            .into_iter()
            .map(|(d, p)| (d, p as usize))
            .filter(|(_, i)| self.state[*i] == LIVE)
            .collect();
        near.extend(
            (g..self.ids.len()).filter(|i| self.state[*i] == LIVE).map(|i| (1.0 - quant::cosine(&q, self.code(i)), i)),
        );
        // Rank by the int8 distance, then re-score the best with the f32 query.
        let keep = (k * 2).max(k + 8);
        if near.len() > keep {
            near.select_nth_unstable_by(keep, |a, b| a.0.total_cmp(&b.0));
            near.truncate(keep);
        }
        let mut out: Vec<(u64, f32)> = near
            .into_iter()
            .map(|(_, i)| (self.ids[i], quant::cosine_f32(query, self.code(i))))
            .filter(|(_, s)| *s >= min)
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out.truncate(k);
        out
    }

    /// Points in the graph, and points in the exact tail.
    pub fn shape(&self) -> (usize, usize) {
        (self.graph.len(), self.ids.len() - self.graph.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(seed: u64) -> Vec<i8> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut v: Vec<f32> = (0..8)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 2000) as f32 / 1000.0 - 1.0
            })
            .collect();
        crate::embed::normalise(&mut v);
        quant::encode(&v)
    }

    #[test]
    fn a_build_keeps_points_added_and_removed_while_it_ran() {
        let mut p = Points::default();
        for id in 0..40 {
            p.push(id, &code(id));
        }
        p.remove(3);
        let snap = p.snapshot();
        assert_eq!(snap.ids.len(), 39);
        p.push(100, &code(100));
        p.remove(5);
        let graph = Graph::build(&snap.codes, quant::stride(snap.dim), snap.ids.len(), 16);
        let (g, ids) = p.install(snap, graph);
        assert_eq!((g.len(), ids.len()), (39, 39));
        assert_eq!(p.shape(), (39, 1));
        assert_eq!(p.live(), 39, "40 - 3 - 5 + 100");
        let q = quant::decode(&code(100));
        assert_eq!(p.search(&q, 1, 0.9, 16).first().map(|h| h.0), Some(100));
        let q5 = quant::decode(&code(5));
        assert!(p.search(&q5, 3, 0.0, 16).iter().all(|h| h.0 != 5));
    }

    #[test]
    fn a_saved_graph_is_reassembled_with_the_store_as_it_is_now() {
        let mut p = Points::default();
        for id in 0..30 {
            p.push(id * 2, &code(id * 2));
        }
        let snap = p.snapshot();
        let graph = Graph::build(&snap.codes, quant::stride(8), 30, 16);
        let ids = snap.ids.clone();
        // Now the store has lost id 4 and gained id 61.
        let stored: Vec<u64> = (0..30).map(|i| i * 2).filter(|id| *id != 4).chain([61]).collect();
        let again = Points::assemble(Some((8, ids, graph)), |f| stored.iter().for_each(|id| f(*id, &code(*id))));
        assert_eq!(again.live(), 30);
        assert_eq!(again.shape(), (30, 1));
        assert!(again.search(&quant::decode(&code(4)), 5, 0.0, 16).iter().all(|h| h.0 != 4));
        assert_eq!(again.search(&quant::decode(&code(61)), 1, 0.9, 16)[0].0, 61);
        assert_eq!(again.search(&quant::decode(&code(10)), 1, 0.9, 16)[0].0, 10);
    }
}
