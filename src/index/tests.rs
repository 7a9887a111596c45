//! The index as its callers see it: scopes, exact answers before a graph exists, builds in the
//! background, saved graphs across restarts, removals, and stores written by older versions.

use super::*;
use std::path::Path;

/// A pseudo-random unit vector of `dim` dimensions (splitmix64), distinct per seed; the graph's
/// and the scope's unit tests use it too.
pub(super) fn unit_of(seed: u64, dim: usize) -> Vec<f32> {
    let mut x = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut v: Vec<f32> = (0..dim)
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

fn unit(seed: u32) -> Vec<f32> {
    unit_of(u64::from(seed), 16)
}

fn fill(idx: &VectorIndex, scope: &str, range: std::ops::Range<u32>) -> Vec<u64> {
    idx.insert_many(scope, range.map(|i| (format!("t{i}").into_bytes(), unit(i))).collect()).unwrap()
}

fn top(idx: &VectorIndex, scope: &str, seed: u32) -> Option<Vec<u8>> {
    idx.search(scope, &unit(seed), 1, 0.99).unwrap().first().map(|h| h.target.clone())
}

#[test]
fn search_stays_inside_its_scope_and_ranks_by_similarity() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let idx = VectorIndex::rebuild(&store).unwrap();
    idx.insert("a", b"t1", unit(1)).unwrap();
    idx.insert("a", b"t2", unit(2)).unwrap();
    idx.insert("b", b"t3", unit(1)).unwrap();
    let hits = idx.search("a", &unit(1), 5, -1.0).unwrap();
    assert_eq!(hits.len(), 2);
    assert_eq!(hits[0].target, b"t1");
    assert!((hits[0].score - 1.0).abs() < 0.01, "{}", hits[0].score);
    let err = idx.search("a", &[1.0, 0.0], 1, 0.0).unwrap_err().to_string();
    assert!(err.contains("2 dimensions") && err.contains("16"), "{err}");
}

#[test]
fn scopes_load_on_first_use_and_forget_removed_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let idx = VectorIndex::rebuild(&store).unwrap();
    let a = idx.insert("s", b"x", unit(3)).unwrap();
    idx.insert("s", b"y", unit(4)).unwrap();
    idx.remove("s", a).unwrap();
    let again = VectorIndex::rebuild(&store).unwrap();
    assert!(again.sizes().is_empty(), "nothing is loaded before a scope is used");
    let hits = again.search("s", &unit(3), 5, -1.0).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].target, b"y");
    assert_eq!(again.sizes(), vec![("s".to_string(), 1)]);
}

#[test]
fn a_large_scope_answers_exactly_at_once_then_from_its_graph() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let idx = VectorIndex::rebuild(&store).unwrap();
    fill(&idx, "big", 0..(HNSW_MIN as u32 + 50));
    // Whether or not the background build has finished, the answer is right.
    assert_eq!(top(&idx, "big", 77), Some(b"t77".to_vec()));
    idx.wait_idle();
    let slot = idx.slot("big");
    let shape = slot.points.read().unwrap().as_ref().map(Points::shape);
    assert_eq!(shape, Some((HNSW_MIN + 50, 0)), "every point is in the graph after the build");
    for probe in [0, 77, HNSW_MIN as u32 + 49] {
        assert_eq!(top(&idx, "big", probe), Some(format!("t{probe}").into_bytes()));
    }
}

#[test]
fn saved_graphs_reload_with_later_vectors_and_without_removed_ones() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db")).unwrap();
    let graphs = dir.path().join("index");
    let idx = VectorIndex::open(&store, Some(&graphs)).unwrap();
    let ids = fill(&idx, "big", 0..(HNSW_MIN as u32 + 5));
    assert_eq!(idx.build_now("big").unwrap(), HNSW_MIN + 5);
    assert!(persist::file(&graphs, &records::tag("big")).exists(), "the graph is saved right after the build");
    let late = idx.insert("big", b"late", unit(100_000)).unwrap();
    idx.remove("big", ids[9]).unwrap();
    let again = VectorIndex::open(&store, Some(&graphs)).unwrap();
    assert_eq!(top(&again, "big", 100_000), Some(b"late".to_vec()));
    let slot = again.slot("big");
    assert_eq!(slot.points.read().unwrap().as_ref().map(Points::shape), Some((HNSW_MIN + 5, 1)), "loaded, not rebuilt");
    assert_eq!(again.sizes(), vec![("big".to_string(), HNSW_MIN + 5)]);
    assert!(
        again.search("big", &unit(9), 3, 0.0).unwrap().iter().all(|h| h.id != ids[9]),
        "a removed vector stays gone"
    );
    assert_eq!(top(&again, "big", 10), Some(b"t10".to_vec()));
    assert_eq!(again.search("big", &unit(100_000), 1, 0.99).unwrap()[0].id, late);
}

#[test]
fn a_damaged_saved_graph_is_ignored_and_answers_stay_right() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db")).unwrap();
    let graphs = dir.path().join("index");
    let idx = VectorIndex::open(&store, Some(&graphs)).unwrap();
    fill(&idx, "big", 0..(HNSW_MIN as u32 + 5));
    idx.build_now("big").unwrap();
    std::fs::write(persist::file(&graphs, &records::tag("big")), b"not a graph").unwrap();
    let again = VectorIndex::open(&store, Some(&graphs)).unwrap();
    assert_eq!(top(&again, "big", 42), Some(b"t42".to_vec()));
    again.wait_idle();
}

#[test]
fn a_store_written_before_int8_codes_opens_and_finds_its_vectors() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db")).unwrap();
    let graphs = dir.path().join("index");
    std::fs::create_dir_all(graphs.join("0123456789abcdef")).unwrap();
    std::fs::write(graphs.join("0123456789abcdef").join("graph.hnsw.graph"), b"old").unwrap();
    std::fs::write(graphs.join("manifest.json"), b"{}").unwrap();
    for i in 0..20u32 {
        records::put_v1(&store, u64::from(i) + 1, "results/default/WebSearch", format!("k{i}").as_bytes(), &unit(i))
            .unwrap();
    }
    let idx = VectorIndex::open(&store, Some(&graphs)).unwrap();
    assert_eq!(top(&idx, "results/default/WebSearch", 13), Some(b"k13".to_vec()));
    assert!(!graphs.join("manifest.json").exists() && !graphs.join("0123456789abcdef").exists());
    idx.remove("results/default/WebSearch", 15).unwrap(); // seed 14
    assert_eq!(top(&idx, "results/default/WebSearch", 14), None);
    assert_eq!(idx.len(), 19, "old ids are kept, so entries still name their vectors");
}

#[test]
fn clearing_forgets_loaded_scopes_and_their_graphs() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db")).unwrap();
    let graphs = dir.path().join("index");
    let idx = VectorIndex::open(&store, Some(&graphs)).unwrap();
    fill(&idx, "big", 0..(HNSW_MIN as u32 + 5));
    idx.build_now("big").unwrap();
    store.clear(crate::store::trees::VECTORS).unwrap();
    idx.clear();
    assert!(!persist::file(&graphs, &records::tag("big")).exists());
    assert_eq!(top(&idx, "big", 3), None);
}

#[test]
fn a_saved_graph_brings_its_codes_and_the_store_adds_only_what_changed_since() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db")).unwrap();
    let graphs = dir.path().join("index");
    let idx = VectorIndex::open(&store, Some(&graphs)).unwrap();
    let ids = fill(&idx, "big", 0..(HNSW_MIN as u32 + 5));
    idx.build_now("big").unwrap();
    let tag = records::tag("big");
    assert!(persist::load(&graphs, &tag).and_then(|s| s.codes).is_some(), "the file holds the codes");
    // A later process removes a vector and adds one without ever loading the scope.
    let later = VectorIndex::open(&store, Some(&graphs)).unwrap();
    later.remove("big", ids[9]).unwrap();
    later.insert("big", b"late", unit(100_000)).unwrap();
    assert_eq!(records::gone(&store, &tag).unwrap(), vec![ids[9]]);
    let again = VectorIndex::open(&store, Some(&graphs)).unwrap();
    assert!(
        again.search("big", &unit(9), 3, 0.0).unwrap().iter().all(|h| h.id != ids[9]),
        "a removed vector stays gone"
    );
    assert_eq!(top(&again, "big", 100_000), Some(b"late".to_vec()));
    assert_eq!(top(&again, "big", 10), Some(b"t10".to_vec()));
    assert_eq!(again.sizes(), vec![("big".to_string(), HNSW_MIN + 5)]);
    let slot = again.slot("big");
    assert_eq!(slot.points.read().unwrap().as_ref().map(Points::shape), Some((HNSW_MIN + 5, 1)), "loaded, not rebuilt");
    // The next build leaves the removed vector out of its file, and the note goes with it.
    again.build_now("big").unwrap();
    assert!(records::gone(&store, &tag).unwrap().is_empty());
    let last = VectorIndex::open(&store, Some(&graphs)).unwrap();
    assert_eq!(last.search("big", &unit(9), 1, 0.99).unwrap().len(), 0);
    assert_eq!(top(&last, "big", 100_000), Some(b"late".to_vec()));
    assert_eq!(last.sizes(), vec![("big".to_string(), HNSW_MIN + 5)]);
}

#[test]
fn a_list_holding_a_vector_of_another_dimension_writes_none_of_it() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path()).unwrap();
    let idx = VectorIndex::rebuild(&store).unwrap();
    idx.insert("s", b"first", unit(1)).unwrap();
    let mixed = vec![(b"ok".to_vec(), unit(2)), (b"short".to_vec(), vec![1.0, 0.0])];
    let err = idx.insert_many("s", mixed).unwrap_err().to_string();
    assert!(err.contains("2 dimensions") && err.contains("16"), "{err}");
    let wrong = vec![(b"a".to_vec(), vec![0.6, 0.8]), (b"b".to_vec(), vec![1.0, 0.0])];
    assert!(idx.insert_many("s", wrong).is_err(), "the scope already holds 16-dimension vectors");
    assert_eq!(idx.search("s", &unit(2), 5, -1.0).unwrap().len(), 1, "only the first vector is stored");
    let again = VectorIndex::rebuild(&store).unwrap();
    assert_eq!(again.search("s", &unit(2), 5, -1.0).unwrap().len(), 1, "nor is anything left in the store");
}

/// A scope of `HNSW_MIN + extra` points built and saved under `graphs`; returns its ids.
fn built(store: &Store, graphs: &Path, extra: u32) -> Vec<u64> {
    let idx = VectorIndex::open(store, Some(graphs)).unwrap();
    let ids = fill(&idx, "big", 0..(HNSW_MIN as u32 + extra));
    idx.build_now("big").unwrap();
    let slot = idx.slot("big");
    let mapped = slot.points.read().unwrap().as_ref().is_some_and(Points::is_mapped);
    assert!(mapped || cfg!(target_endian = "big"), "after a build the scope is served from its saved file");
    ids
}

/// Every probe's top 5 (id, score), as `idx` answers.
fn answers(idx: &VectorIndex, probes: impl Iterator<Item = u32>) -> Vec<Vec<(u64, f32)>> {
    probes
        .map(|s| idx.search("big", &unit(s), 5, -1.0).unwrap().into_iter().map(|h| (h.id, h.score)).collect())
        .collect()
}

#[test]
fn a_mapped_scope_answers_as_the_same_graph_read_into_the_heap() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db")).unwrap();
    let graphs = dir.path().join("index");
    built(&store, &graphs, 200);
    let tag = records::tag("big");
    let mapped = VectorIndex::open(&store, Some(&graphs)).unwrap();
    let probes = || (0..HNSW_MIN as u32 + 200).step_by(7).chain([1_000_000, 1_000_001]);
    let from_map = answers(&mapped, probes());
    mapped.wait_idle();
    assert!(mapped.slot("big").points.read().unwrap().as_ref().is_some_and(|p| p.trusted() && p.is_mapped()));
    assert_eq!(from_map, answers(&mapped, probes()), "the same before and after the check");
    // The same graph, ids and codes in a file of format 2, which is read into the heap.
    let s = persist::load(&graphs, &tag).unwrap();
    let old = persist::old_file(&s.ids, s.codes.as_deref(), s.dim, &s.graph);
    drop(s);
    std::fs::write(persist::file(&graphs, &tag), old).unwrap();
    let heap = VectorIndex::open(&store, Some(&graphs)).unwrap();
    assert_eq!(answers(&heap, probes()), from_map);
    // Loaded the old way (whole, checked), then rewritten in the current format and mapped.
    heap.wait_idle();
    assert!(persist::load(&graphs, &tag).is_some_and(|s| s.check.is_some_and(persist::Check::run)), "format 3 now");
    let slot = heap.slot("big");
    assert!(slot.points.read().unwrap().as_ref().is_some_and(|p| p.is_mapped() || cfg!(target_endian = "big")));
    assert_eq!(slot.points.read().unwrap().as_ref().map(Points::shape), Some((HNSW_MIN + 200, 0)), "not rebuilt");
    assert_eq!(answers(&heap, probes()), from_map);
    let again = VectorIndex::open(&store, Some(&graphs)).unwrap();
    assert_eq!(answers(&again, probes()), from_map);
}

/// Overwrites `len` bytes at `at` of the scope's saved file (leaving its checksum stale).
fn damage(graphs: &Path, at: usize, bytes: &[u8]) {
    let f = persist::file(graphs, &records::tag("big"));
    let mut b = std::fs::read(&f).unwrap();
    b[at..at + bytes.len()].copy_from_slice(bytes);
    // A new file renamed into place, as refrain writes them (never changed in place).
    std::fs::write(f.with_extension("tmp"), &b).unwrap();
    std::fs::rename(f.with_extension("tmp"), &f).unwrap();
}

#[test]
fn a_damaged_code_in_a_mapped_file_never_makes_a_hit_and_its_check_sends_the_scope_back_to_the_store() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db")).unwrap();
    let graphs = dir.path().join("index");
    let ids = built(&store, &graphs, 50);
    let n = ids.len();
    let stride = quant::stride(16);
    let codes_at = persist::HEADER + n * 8;
    // Two of point 7's neighbours get point 7's code: a search for 7 meets them next to it.
    let s = persist::load(&graphs, &records::tag("big")).unwrap();
    let (off, adj) = (s.graph.offsets0(), s.graph.adj0());
    let near: Vec<usize> = adj[off[7] as usize..off[8] as usize].iter().take(2).map(|p| *p as usize).collect();
    drop(s);
    let seven: Vec<u8> = quant::encode(&unit(7)).iter().map(|c| *c as u8).collect();
    near.iter().for_each(|&p| damage(&graphs, codes_at + p * stride, &seven));
    let idx = VectorIndex::open(&store, Some(&graphs)).unwrap();
    idx.hold_checks(true);
    let hits = idx.search("big", &unit(7), 3, 0.9).unwrap();
    assert_eq!(hits.iter().map(|h| h.target.clone()).collect::<Vec<_>>(), vec![b"t7".to_vec()], "{hits:?}");
    assert!((hits[0].score - 1.0).abs() < 0.01);
    let slot = idx.slot("big");
    assert!(slot.points.read().unwrap().as_ref().is_some_and(|p| !p.trusted()), "not trusted before its check");
    let p = near[0];
    assert!(idx.stored_vector("big", ids[p]).is_some_and(|v| crate::embed::cosine(&v, &unit(p as u32)) > 0.99));
    let own = top(&idx, "big", p as u32);
    assert!(own.is_none() || own == Some(format!("t{p}").into_bytes()), "lost while its code is damaged, or itself");
    idx.hold_checks(false);
    idx.wait_idle();
    // The check failed: the scope was loaded again from the store, and rebuilt and saved.
    let now = persist::load(&graphs, &records::tag("big")).unwrap();
    assert!(now.check.unwrap().run(), "a good file again");
    assert_eq!(top(&idx, "big", 7), Some(b"t7".to_vec()));
    assert_eq!(top(&idx, "big", p as u32), Some(format!("t{p}").into_bytes()));
    assert_eq!(idx.sizes(), vec![("big".to_string(), n)]);
}

#[test]
fn a_flipped_bit_in_a_mapped_file_loses_at_most_a_hit_until_its_check_falls_back() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("db")).unwrap();
    let graphs = dir.path().join("index");
    let ids = built(&store, &graphs, 50);
    let n = ids.len();
    let pad8 = |x: usize| x.div_ceil(8) * 8;
    let offsets0_at = pad8(persist::HEADER + n * 8 + n * quant::stride(16));
    let adj0_at = pad8(offsets0_at + (n + 1) * 4);
    // One bit of point 20's id (it names another stored vector now), one of a layer-0 neighbour.
    let id_at = persist::HEADER + 20 * 8;
    damage(&graphs, id_at, &(ids[20] ^ 1).to_le_bytes());
    let f = persist::file(&graphs, &records::tag("big"));
    let b = std::fs::read(&f).unwrap();
    damage(&graphs, adj0_at + 41, &[b[adj0_at + 41] ^ 0x40]);
    let idx = VectorIndex::open(&store, Some(&graphs)).unwrap();
    idx.hold_checks(true);
    assert!(idx.search("big", &unit(5), 1, 0.9).is_ok());
    let slot = idx.slot("big");
    assert!(slot.points.read().unwrap().as_ref().is_some_and(|p| p.is_mapped() && !p.trusted()), "mapped, unchecked");
    for probe in [20, 21, 5] {
        let hits = idx.search("big", &unit(probe), 3, 0.9).unwrap();
        assert!(
            hits.iter().all(|h| h.target == format!("t{probe}").into_bytes()),
            "probe {probe}: only its own vector can be a hit, got {hits:?}"
        );
    }
    idx.hold_checks(false);
    idx.wait_idle();
    assert!(persist::load(&graphs, &records::tag("big")).unwrap().check.unwrap().run());
    for probe in [20, 21, 5] {
        assert_eq!(top(&idx, "big", probe), Some(format!("t{probe}").into_bytes()));
    }
    assert_eq!(idx.sizes(), vec![("big".to_string(), n)]);
}
