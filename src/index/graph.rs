//! One scope's navigable graph, built by hnsw_rs and then frozen into flat arrays.
//!
//! hnsw_rs builds the graph (its insertion, neighbour selection and parallel build); its own
//! in-memory form costs about 3 KB per point (an `Arc` per point and per neighbour, sixteen layer
//! vectors each), which at 100k points per scope is more than the whole memory budget. Frozen,
//! a point costs its u32 neighbour ids and nothing else: the codes stay in the scope's one array.
//! Search is the standard HNSW walk (greedy descent through the upper layers, then a beam of `ef`
//! on layer 0) over those arrays.
//!
//! The layer-0 arrays (most of a graph's bytes: up to 24 neighbours a point) are `Slab`s, so a
//! graph loaded from its saved file reads them from the file's mapping (`mapped`); the upper
//! layers (a twelfth of the points, and fewer each layer up) are small and stay in the heap.
//! Every read of layer 0 is bounds-checked, so a mapped graph is only checked for its shape when
//! loaded (an O(n) scan of its arrays is what a mapping avoids), never trusted to index blindly.

use super::mapped::Slab;
use super::quant::CodeDistance;
use hnsw_rs::hnsw::Hnsw;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// Neighbours per point on the upper layers (twice that on layer 0).
pub const MAX_CONNECTIONS: usize = 12;
/// Candidates kept while inserting: lower than the usual 200, which buys a build several times
/// faster for a recall that the search's own beam makes up for.
pub const EF_CONSTRUCTION: usize = 40;
/// Candidates kept while inserting in a bulk build (`build_now`: imports and `refrain index
/// rebuild`), where the build's time grows with the whole store: at 1M pseudo-random vectors
/// the build is nearly all of a preload's CPU, and its cost is about linear in this beam.
pub const EF_BULK: usize = 16;
const MAX_LAYER: usize = 16;

/// One upper layer: its points (sorted) and their neighbours.
#[derive(Debug, Clone, Default, PartialEq)]
struct Layer {
    members: Vec<u32>,
    offsets: Vec<u32>,
    adj: Vec<u32>,
}

impl Layer {
    fn neighbours(&self, p: u32) -> &[u32] {
        match self.members.binary_search(&p) {
            Ok(i) => match (self.offsets.get(i), self.offsets.get(i + 1)) {
                (Some(&a), Some(&b)) => self.adj.get(a as usize..b as usize).unwrap_or(&[]),
                _ => &[],
            },
            Err(_) => &[],
        }
    }
}

/// A frozen graph over points `0..len()` of a scope.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Graph {
    entry: u32,
    offsets0: Slab<u32>,
    adj0: Slab<u32>,
    upper: Vec<Layer>,
}

/// A distance with the point it belongs to, ordered by distance.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Near(f32, u32);

impl Eq for Near {}
impl PartialOrd for Near {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Near {
    fn cmp(&self, o: &Self) -> Ordering {
        self.0.total_cmp(&o.0).then(self.1.cmp(&o.1))
    }
}

impl Graph {
    /// Builds a graph over `n` codes of `stride` bytes laid end to end, using every core.
    pub fn build(codes: &[i8], stride: usize, n: usize, ef_construction: usize) -> Graph {
        if n == 0 || stride == 0 || codes.len() < n * stride {
            return Graph::default();
        }
        // Parameters are valid by construction: hnsw_rs exits the process on bad ones.
        let hnsw: Hnsw<'_, i8, CodeDistance> =
            Hnsw::new(MAX_CONNECTIONS, n, MAX_LAYER, ef_construction.max(MAX_CONNECTIONS), CodeDistance);
        let data: Vec<(&[i8], usize)> = (0..n).map(|i| (&codes[i * stride..(i + 1) * stride], i)).collect();
        hnsw.parallel_insert_slice(&data);
        freeze(&hnsw, n)
    }

    /// Points in the graph.
    pub fn len(&self) -> usize {
        self.offsets0.len().saturating_sub(1)
    }

    /// True when the graph has no points.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn neighbours(&self, layer: usize, p: u32) -> &[u32] {
        if layer == 0 {
            let i = p as usize;
            match (self.offsets0.get(i), self.offsets0.get(i + 1)) {
                (Some(&a), Some(&b)) => self.adj0.get(a as usize..b as usize).unwrap_or(&[]),
                _ => &[],
            }
        } else {
            self.upper.get(layer - 1).map_or(&[], |l| l.neighbours(p))
        }
    }

    /// The `ef` nearest points by `dist` (None: a point that cannot be measured, which the walk
    /// steps over), nearest first.
    pub fn search(&self, ef: usize, dist: impl Fn(u32) -> Option<f32>) -> Vec<(f32, u32)> {
        let n = self.len();
        if n == 0 {
            return Vec::new();
        }
        let mut cur = self.entry;
        let entry_d = dist(cur);
        let mut cur_d = entry_d.unwrap_or(f32::MAX);
        for layer in (1..=self.upper.len()).rev() {
            loop {
                let mut moved = false;
                for &nb in self.neighbours(layer, cur) {
                    if let Some(d) = dist(nb).filter(|d| *d < cur_d) {
                        (cur, cur_d, moved) = (nb, d, true);
                    }
                }
                if !moved {
                    break;
                }
            }
        }
        let mut visited = vec![0u64; n.div_ceil(64)];
        // A point out of range (a damaged mapped file) counts as seen, so it is never measured.
        let mut seen = |p: u32| {
            if p as usize >= n {
                return true;
            }
            let (w, b) = (p as usize / 64, 1u64 << (p % 64));
            let was = visited.get(w).is_none_or(|x| x & b != 0);
            if let Some(x) = visited.get_mut(w) {
                *x |= b;
            }
            was
        };
        seen(cur);
        let mut todo = BinaryHeap::new(); // nearest first (reversed)
        let mut best = BinaryHeap::new(); // farthest first
        todo.push(std::cmp::Reverse(Near(cur_d, cur)));
        if cur != self.entry || entry_d.is_some() {
            best.push(Near(cur_d, cur));
        }
        while let Some(std::cmp::Reverse(Near(d, p))) = todo.pop() {
            if best.len() >= ef && best.peek().is_some_and(|w: &Near| d > w.0) {
                break;
            }
            for &nb in self.neighbours(0, p) {
                if seen(nb) {
                    continue;
                }
                let Some(nd) = dist(nb) else { continue };
                if best.len() < ef || best.peek().is_some_and(|w| nd < w.0) {
                    todo.push(std::cmp::Reverse(Near(nd, nb)));
                    best.push(Near(nd, nb));
                    if best.len() > ef {
                        best.pop();
                    }
                }
            }
        }
        let mut out: Vec<(f32, u32)> = best.into_iter().map(|Near(d, p)| (d, p)).collect();
        out.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        out
    }

    /// Appends the graph's bytes (little-endian u32 arrays, each prefixed by its length), as
    /// files of formats 1 and 2 hold them.
    #[cfg(test)]
    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.entry.to_le_bytes());
        put_arr(out, &self.offsets0);
        put_arr(out, &self.adj0);
        self.write_upper(out);
    }

    /// Appends the upper layers' bytes (as `write` lays them out after layer 0).
    pub fn write_upper(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&(self.upper.len() as u32).to_le_bytes());
        for l in &self.upper {
            put_arr(out, &l.members);
            put_arr(out, &l.offsets);
            put_arr(out, &l.adj);
        }
    }

    /// The entry point.
    pub fn entry(&self) -> u32 {
        self.entry
    }

    /// Layer 0: where each point's neighbours start in `adj0` (`len() + 1` offsets).
    pub fn offsets0(&self) -> &[u32] {
        &self.offsets0
    }

    /// Layer 0: every point's neighbours, end to end.
    pub fn adj0(&self) -> &[u32] {
        &self.adj0
    }

    /// Whether layer 0 is read from a mapped file.
    #[cfg(test)]
    pub fn is_mapped(&self) -> bool {
        self.offsets0.is_mapped() || self.adj0.is_mapped()
    }

    /// A graph whose layer 0 is given (typically mapped from a saved file) and whose upper layers
    /// are read from `upper` (what `write_upper` wrote). Checked for shape only: `offsets0` has
    /// `n + 1` entries, the entry point and the upper layers are in range. Layer 0's contents are
    /// not scanned: every read of them is bounds-checked instead.
    pub fn from_parts(entry: u32, offsets0: Slab<u32>, adj0: Slab<u32>, mut upper: &[u8]) -> Option<Graph> {
        let n = offsets0.len().checked_sub(1)?;
        let up = read_upper(&mut upper)?;
        let g = Graph { entry, offsets0, adj0, upper: up };
        (upper.is_empty() && (n == 0 || (entry as usize) < n) && g.upper_consistent()).then_some(g)
    }

    /// Reads what `write` wrote; None when the bytes are not a consistent graph.
    pub fn read(b: &mut &[u8]) -> Option<Graph> {
        let entry = u32_of(b)?;
        let offsets0 = arr_of(b)?;
        let adj0 = arr_of(b)?;
        let upper = read_upper(b)?;
        let g = Graph { entry, offsets0: offsets0.into(), adj0: adj0.into(), upper };
        g.consistent().then_some(g)
    }

    /// Every id and offset in range, so a damaged dump can never index out of bounds.
    fn consistent(&self) -> bool {
        let n = self.len() as u32;
        (n == 0 || self.entry < n) && csr(&self.offsets0, &self.adj0, n) && self.upper_consistent()
    }

    /// The upper layers' ids and offsets in range.
    fn upper_consistent(&self) -> bool {
        let n = self.len() as u32;
        self.upper.iter().all(|l| {
            l.offsets.len() == l.members.len() + 1
                && l.members.windows(2).all(|w| w[0] < w[1])
                && l.members.iter().all(|&p| p < n)
                && csr(&l.offsets, &l.adj, n)
        })
    }
}

/// Offsets ascending from 0 to the end of `adj`, every neighbour below `n`.
fn csr(off: &[u32], adj: &[u32], n: u32) -> bool {
    off.first() == Some(&0)
        && off.windows(2).all(|w| w[0] <= w[1])
        && off.last().is_some_and(|&e| e as usize == adj.len())
        && adj.iter().all(|&p| p < n)
}

/// Reads what `write_upper` wrote: at most `MAX_LAYER` layers (the most a build makes).
fn read_upper(b: &mut &[u8]) -> Option<Vec<Layer>> {
    let layers = u32_of(b)? as usize;
    if layers > MAX_LAYER {
        return None;
    }
    (0..layers).map(|_| Some(Layer { members: arr_of(b)?, offsets: arr_of(b)?, adj: arr_of(b)? })).collect()
}

fn put_arr(out: &mut Vec<u8>, a: &[u32]) {
    out.extend_from_slice(&(a.len() as u32).to_le_bytes());
    a.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes()));
}

fn u32_of(b: &mut &[u8]) -> Option<u32> {
    let (head, rest) = b.split_at_checked(4)?;
    *b = rest;
    Some(u32::from_le_bytes(head.try_into().ok()?))
}

fn arr_of(b: &mut &[u8]) -> Option<Vec<u32>> {
    let n = u32_of(b)? as usize;
    let (head, rest) = b.split_at_checked(n.checked_mul(4)?)?;
    *b = rest;
    Some(head.chunks_exact(4).filter_map(|c| c.try_into().ok().map(u32::from_le_bytes)).collect())
}

/// Copies hnsw_rs's graph into flat arrays (data ids are the point indices `0..n`).
fn freeze(hnsw: &Hnsw<'_, i8, CodeDistance>, n: usize) -> Graph {
    let mut levels = vec![0u8; n];
    let mut lists: Vec<Vec<Vec<u32>>> = vec![Vec::new(); n];
    for p in hnsw.get_point_indexation() {
        let i = p.get_origin_id();
        if i >= n {
            continue;
        }
        levels[i] = p.get_point_id().0;
        lists[i] = p
            .get_neighborhood_id()
            .into_iter()
            .take(usize::from(levels[i]) + 1)
            .map(|l| l.into_iter().map(|nb| nb.d_id as u32).filter(|&d| (d as usize) < n).collect())
            .collect();
    }
    let top = levels.iter().copied().max().unwrap_or(0);
    let entry = levels.iter().position(|&l| l == top).unwrap_or(0) as u32;
    let (mut offsets0, mut adj0) = (Vec::with_capacity(n + 1), Vec::new());
    for l in &lists {
        offsets0.push(adj0.len() as u32);
        adj0.extend(l.first().into_iter().flatten());
    }
    offsets0.push(adj0.len() as u32);
    let upper = (1..=usize::from(top))
        .map(|layer| {
            let mut l = Layer::default();
            for (i, lv) in levels.iter().enumerate() {
                if usize::from(*lv) >= layer {
                    l.members.push(i as u32);
                    l.offsets.push(l.adj.len() as u32);
                    l.adj.extend(lists[i].get(layer).into_iter().flatten());
                }
            }
            l.offsets.push(l.adj.len() as u32);
            l
        })
        .collect();
    Graph { entry, offsets0: offsets0.into(), adj0: adj0.into(), upper }
}

#[cfg(test)]
mod tests {
    use super::super::quant;
    use super::*;

    fn codes(n: usize, dim: usize) -> Vec<i8> {
        (0..n as u64).flat_map(|i| quant::encode(&crate::index::tests::unit_of(i, dim))).collect()
    }

    #[test]
    fn a_frozen_graph_finds_every_point_and_survives_its_bytes() {
        let (n, dim) = (600, 16);
        let c = codes(n, dim);
        let s = quant::stride(dim);
        let g = Graph::build(&c, s, n, EF_CONSTRUCTION);
        assert_eq!(g.len(), n);
        let found = (0..n)
            .filter(|&i| {
                let q = &c[i * s..(i + 1) * s];
                let d = |p: u32| Some(1.0 - quant::cosine(q, &c[p as usize * s..(p as usize + 1) * s]));
                g.search(32, d).first().map(|x| x.1) == Some(i as u32)
            })
            .count();
        assert!(found >= n * 98 / 100, "{found} of {n} points found as their own nearest");
        let mut bytes = Vec::new();
        g.write(&mut bytes);
        assert_eq!(Graph::read(&mut bytes.as_slice()), Some(g.clone()));
        bytes[9] ^= 0xff; // an offset out of range
        assert!(Graph::read(&mut bytes.as_slice()).is_none() || Graph::read(&mut bytes.as_slice()) != Some(g));
    }

    #[test]
    fn a_bulk_build_with_the_narrow_beam_still_finds_the_true_neighbours() {
        let (n, dim, k) = (3000, 48, 10);
        let c = codes(n, dim);
        let s = quant::stride(dim);
        let g = Graph::build(&c, s, n, EF_BULK);
        let (mut found, mut wanted) = (0, 0);
        for i in (0..n).step_by(15) {
            let q = &c[i * s..(i + 1) * s];
            let dist = |p: u32| 1.0 - quant::cosine(q, &c[p as usize * s..(p as usize + 1) * s]);
            let mut exact: Vec<(f32, u32)> = (0..n as u32).map(|p| (dist(p), p)).collect();
            exact.sort_by(|a, b| a.0.total_cmp(&b.0));
            let got: Vec<u32> = g.search(64, |p| Some(dist(p))).into_iter().take(k).map(|x| x.1).collect();
            found += exact[..k].iter().filter(|(_, p)| got.contains(p)).count();
            wanted += k;
        }
        assert!(found * 100 >= wanted * 90, "recall@{k} {found} of {wanted}");
    }

    #[test]
    fn unmeasurable_points_are_stepped_over() {
        let (n, dim) = (300, 8);
        let c = codes(n, dim);
        let s = quant::stride(dim);
        let g = Graph::build(&c, s, n, EF_CONSTRUCTION);
        let q = &c[5 * s..6 * s];
        let d =
            |p: u32| (!p.is_multiple_of(3)).then(|| 1.0 - quant::cosine(q, &c[p as usize * s..(p as usize + 1) * s]));
        let got = g.search(16, d);
        assert!(got.iter().all(|(_, p)| !p.is_multiple_of(3)));
        assert_eq!(got.first().map(|x| x.1), Some(5));
    }
}
