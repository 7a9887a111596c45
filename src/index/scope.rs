//! The points of one scope in memory: the frozen graph over its first points (sorted by id), their
//! ids and int8 codes, and the points added since the graph was built (the tail), which every
//! search scans exactly; a scope with no graph yet is all tail, so it answers from its first
//! lookup, never waiting for a build.
//!
//! The graph's ids and codes are `Slab`s: loaded from a saved file of the current format they are
//! read from its mapping (`mapped`), so a scope costs the heap only its tail and its removals,
//! whatever its size. Until that file's checksum has been checked (`persist::Check`, off the
//! request path) the scope is not trusted: its callers re-score what it finds from the store's
//! records, `code_of` answers from the tail only, and no build starts from its codes.
//!
//! Removed points stay where they are, dead (searched through, never returned) until the next
//! build drops them. After a restart, a point of a saved graph whose vector is gone from the store
//! is hollow: it has no code, so the walk steps over it. Both are kept as sets of positions, not
//! a byte per point: a scope has few of them (a quarter of the graph dead starts a rebuild).

use super::graph::Graph;
use super::mapped::Slab;
use super::persist::{Saved, Verdict};
use super::quant;
use std::collections::HashSet;
use std::sync::Arc;

/// Largest tail kept before a rebuild, whatever the graph's size (an exact scan of 50k codes
/// costs a few milliseconds).
const TAIL_MAX: usize = 50_000;

/// One scope's points. Positions `0..graph.len()` are the graph's points, the tail's follow.
#[derive(Debug, Default)]
pub struct Points {
    dim: usize,
    /// The graph's point ids, ascending.
    ids: Slab<u64>,
    /// Their codes, end to end.
    codes: Slab<i8>,
    tail_ids: Vec<u64>,
    tail_codes: Vec<i8>,
    /// Positions of removed points.
    dead: HashSet<usize>,
    /// Of those, how many are in the graph.
    dead_in_graph: usize,
    /// Positions of graph points with no code.
    hollow: HashSet<usize>,
    graph: Arc<Graph>,
    live: usize,
    /// Ids removed while a build was running (applied to the build's result).
    removed_during_build: Option<Vec<u64>>,
    /// The checksum verdict of the mapped file the graph's points come from (None: checked
    /// before use, or built by this process).
    verdict: Option<Arc<Verdict>>,
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
    /// from the graph join the tail. The codes come from the store, so they are trusted whatever
    /// the file's checksum says.
    pub fn assemble(saved: Option<(usize, Slab<u64>, Graph)>, scan: impl FnOnce(&mut dyn FnMut(u64, &[i8]))) -> Points {
        let mut p = match saved {
            Some((dim, ids, graph)) if graph.len() == ids.len() => {
                let n = ids.len();
                Points {
                    dim,
                    codes: Slab::Heap(vec![0; n * quant::stride(dim)]),
                    hollow: (0..n).collect(),
                    ids,
                    graph: Arc::new(graph),
                    ..Points::default()
                }
            }
            _ => Points::default(),
        };
        let mut codes = match std::mem::take(&mut p.codes) {
            Slab::Heap(v) => v,
            Slab::Mapped { .. } => Vec::new(),
        };
        let mut tail: Vec<(u64, Vec<i8>)> = Vec::new();
        let mut j = 0usize;
        let s = quant::stride(p.dim);
        scan(&mut |id, code| {
            let graph_ids = p.ids.as_slice();
            while j < graph_ids.len() && graph_ids[j] < id {
                j += 1;
            }
            if j < graph_ids.len() && graph_ids[j] == id && code.len() == s && p.hollow.remove(&j) {
                if let Some(c) = codes.get_mut(j * s..(j + 1) * s) {
                    c.copy_from_slice(code);
                }
                p.live += 1;
            } else {
                tail.push((id, code.to_vec()));
            }
        });
        p.codes = Slab::Heap(codes);
        for (id, code) in tail {
            p.push(id, &code);
        }
        p
    }

    /// Loads a scope from a saved graph that holds its points' codes: `gone` are ids removed since
    /// the save (ascending or not), `later` gives the points stored since (ids above the last
    /// saved one) in id order. `verdict` is the file's pending checksum check, if any.
    pub fn restore(
        dim: usize,
        ids: Slab<u64>,
        codes: Slab<i8>,
        graph: Graph,
        verdict: Option<Arc<Verdict>>,
        gone: &[u64],
        later: impl FnOnce(&mut dyn FnMut(u64, &[i8])),
    ) -> Points {
        let n = ids.len();
        let mut p = Points { dim, ids, codes, graph: Arc::new(graph), live: n, verdict, ..Points::default() };
        for id in gone {
            if let Ok(i) = p.ids.binary_search(id)
                && p.dead.insert(i)
            {
                p.dead_in_graph += 1;
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

    /// Points in the graph.
    fn g(&self) -> usize {
        self.ids.len()
    }

    /// The code at a position (None out of range).
    fn code(&self, i: usize) -> Option<&[i8]> {
        let s = self.stride();
        let g = self.g();
        if i < g { self.codes.get(i * s..(i + 1) * s) } else { self.tail_codes.get((i - g) * s..(i - g + 1) * s) }
    }

    /// The id at a position.
    fn id(&self, i: usize) -> Option<u64> {
        let g = self.g();
        if i < g { self.ids.get(i).copied() } else { self.tail_ids.get(i - g).copied() }
    }

    fn is_live(&self, i: usize) -> bool {
        (self.dead.is_empty() || !self.dead.contains(&i)) && (self.hollow.is_empty() || !self.hollow.contains(&i))
    }

    /// The position of an id: a binary search in the graph's ids (when `graph`), a scan of the
    /// tail.
    fn position(&self, id: u64, graph: bool) -> Option<usize> {
        let g = self.g();
        graph
            .then(|| self.ids.binary_search(&id).ok())
            .flatten()
            .or_else(|| self.tail_ids.iter().position(|x| *x == id).map(|i| i + g))
    }

    /// Whether the graph's points can be used as they are: they were checked or built here, or
    /// their file's checksum check has passed.
    pub fn trusted(&self) -> bool {
        self.verdict.as_ref().is_none_or(|v| v.is_good())
    }

    /// The code of a live point by id (None when absent, removed or hollow, or in a graph not
    /// trusted yet: the caller then reads the store).
    pub fn code_of(&self, id: u64) -> Option<&[i8]> {
        let i = self.position(id, self.trusted())?;
        if self.is_live(i) { self.code(i) } else { None }
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
        if self.ids.is_empty() && self.tail_ids.is_empty() && self.graph.is_empty() {
            self.dim = dim;
        }
        if dim != self.dim {
            return false;
        }
        self.tail_ids.push(id);
        self.tail_codes.extend_from_slice(code);
        self.live += 1;
        true
    }

    /// Marks a point removed; true when it was live here.
    pub fn remove(&mut self, id: u64) -> bool {
        let Some(i) = self.position(id, true).filter(|&i| self.is_live(i)) else { return false };
        self.dead.insert(i);
        if i < self.g() {
            self.dead_in_graph += 1;
        }
        self.live -= 1;
        if let Some(log) = &mut self.removed_during_build {
            log.push(id);
        }
        true
    }

    /// Whether the scope should (re)build its graph: big enough, trusted, and a tail (or a share
    /// of dead points) that makes the exact part or the detours too costly.
    pub fn wants_build(&self, min_points: usize) -> bool {
        let g = self.g();
        let tail = self.tail_ids.len();
        let limit = (g / 8).clamp(min_points, TAIL_MAX.max(min_points));
        self.trusted() && self.live >= min_points && (tail > limit || g > 0 && (g - self.graph_live()) * 4 > g)
    }

    fn graph_live(&self) -> usize {
        self.g().saturating_sub(self.dead_in_graph + self.hollow.len())
    }

    /// The live points, sorted by id, for a build; removals from now on are logged.
    pub fn snapshot(&mut self) -> Snapshot {
        let total = self.g() + self.tail_ids.len();
        let mut order: Vec<(u64, usize)> = (0..total)
            .filter(|&i| self.is_live(i) && self.code(i).is_some())
            .filter_map(|i| Some((self.id(i)?, i)))
            .collect();
        order.sort_unstable();
        let mut codes = Vec::with_capacity(order.len() * self.stride());
        order.iter().filter_map(|(_, i)| self.code(*i)).for_each(|c| codes.extend_from_slice(c));
        self.removed_during_build = Some(Vec::new());
        Snapshot { ids: order.into_iter().map(|(id, _)| id).collect(), codes, dim: self.dim, taken: total }
    }

    /// Replaces the graph with one built from `snap`: points added since the snapshot become the
    /// new tail, removals since are applied. `saved` is the graph's file as just written and
    /// mapped back: when it holds the snapshot's points, they are served from it (and the
    /// snapshot's heap copy is dropped). Returns the graph and its ids, to be saved.
    pub fn install(&mut self, snap: Snapshot, graph: Graph, saved: Option<Saved>) -> (Arc<Graph>, Vec<u64>) {
        let n = snap.ids.len();
        let same = |s: &Saved| s.dim == snap.dim && s.graph.len() == n && s.ids.as_slice() == snap.ids.as_slice();
        let (ids, codes, graph) = match saved.filter(same) {
            Some(Saved { ids, codes: Some(codes), graph: mapped, .. }) => (ids, codes, mapped),
            _ => (Slab::Heap(snap.ids), Slab::Heap(snap.codes), graph),
        };
        let mut next = Points { dim: snap.dim, ids, codes, graph: Arc::new(graph), live: n, ..Points::default() };
        for i in snap.taken..self.g() + self.tail_ids.len() {
            let (Some(id), Some(code)) = (self.id(i), self.code(i)) else { continue };
            if next.push(id, code) && !self.is_live(i) {
                next.remove(id);
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
        let g = self.g();
        let mut near: Vec<(f32, usize)> = self
            .graph
            .search(ef.max(k), |p| {
                let i = p as usize;
                if !self.hollow.is_empty() && self.hollow.contains(&i) || i >= g {
                    return None;
                }
                self.code(i).map(|c| 1.0 - quant::cosine(&q, c))
            })
            .into_iter()
            .map(|(d, p)| (d, p as usize))
            .filter(|(_, i)| self.is_live(*i))
            .collect();
        near.extend((g..g + self.tail_ids.len()).filter(|i| self.is_live(*i)).filter_map(|i| {
            let c = self.code(i)?;
            Some((1.0 - quant::cosine(&q, c), i))
        }));
        // Rank by the int8 distance, then re-score the best with the f32 query.
        let keep = (k * 2).max(k + 8);
        if near.len() > keep {
            near.select_nth_unstable_by(keep, |a, b| a.0.total_cmp(&b.0));
            near.truncate(keep);
        }
        let mut out: Vec<(u64, f32)> = near
            .into_iter()
            .filter_map(|(_, i)| Some((self.id(i)?, quant::cosine_f32(query, self.code(i)?))))
            .filter(|(_, s)| *s >= min)
            .collect();
        out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        out.truncate(k);
        out
    }

    /// Points in the graph, and points in the exact tail.
    pub fn shape(&self) -> (usize, usize) {
        (self.g(), self.tail_ids.len())
    }

    /// Saves the graph's points (ids, codes, graph: the file they were loaded from, in the
    /// current format). Returns the file's size.
    pub fn save_graph_part(&self, dir: &std::path::Path, tag: &super::records::Tag) -> std::io::Result<u64> {
        super::persist::save(dir, tag, self.dim, &self.ids, &self.codes, &self.graph)
    }

    /// Serves the graph's points from `saved` (the same points, mapped from the file
    /// `save_graph_part` just wrote); false, and nothing changed, when its shape differs.
    pub fn remap(&mut self, saved: Saved) -> bool {
        let Some(codes) = saved.codes else { return false };
        let fits = saved.dim == self.dim
            && saved.ids.len() == self.g()
            && codes.len() == self.codes.len()
            && saved.graph.len() == self.graph.len()
            && saved.ids.last() == self.ids.last();
        if fits {
            (self.ids, self.codes, self.graph) = (saved.ids, codes, Arc::new(saved.graph));
        }
        fits
    }

    /// Whether the graph's points come from the file whose checksum check settles `verdict`.
    pub fn checked_by(&self, verdict: &Arc<Verdict>) -> bool {
        self.verdict.as_ref().is_some_and(|v| Arc::ptr_eq(v, verdict))
    }

    /// Whether the graph's points are read from a mapped file.
    pub fn is_mapped(&self) -> bool {
        self.ids.is_mapped() || self.codes.is_mapped()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(seed: u64) -> Vec<i8> {
        quant::encode(&crate::index::tests::unit_of(seed, 8))
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
        let (g, ids) = p.install(snap, graph, None);
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
        let again = Points::assemble(Some((8, ids.into(), graph)), |f| stored.iter().for_each(|id| f(*id, &code(*id))));
        assert_eq!(again.live(), 30);
        assert_eq!(again.shape(), (30, 1));
        assert!(again.search(&quant::decode(&code(4)), 5, 0.0, 16).iter().all(|h| h.0 != 4));
        assert_eq!(again.search(&quant::decode(&code(61)), 1, 0.9, 16)[0].0, 61);
        assert_eq!(again.search(&quant::decode(&code(10)), 1, 0.9, 16)[0].0, 10);
    }
}
