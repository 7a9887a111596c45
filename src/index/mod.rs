//! The vector index: nearest stored vectors to a query, within one scope (a tool/namespace for
//! results, the plan library for plans).
//!
//! Derived data over the store's `vectors` tree, which holds every vector once, as int8 codes
//! (`quant`, `records`). A scope is loaded on its first use, from the store and its saved graph
//! (`persist`); each scope has its own lock, and no lock is held while a file is written. Small
//! scopes are scanned exactly; a scope that grows past `HNSW_MIN` gets a graph built in the
//! background by hnsw_rs and frozen into flat arrays (`graph`), saved right after. Until then, and
//! for points added since, lookups scan the codes exactly (`scope`): never a wait for a build.
//! A saved graph is served from a mapping of its file (`mapped`); its checksum is checked on a
//! thread of its own after the scope loads, and until it has passed, hits are re-scored from the
//! store's records (`persist` says why).

mod build;
mod graph;
mod mapped;
mod persist;
pub mod quant;
mod records;
mod scope;

use crate::store::{self, Store};
use records::Tag;
use scope::Points;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard};

/// A scope gets a graph when it holds this many vectors; below, exact scans are as fast.
pub const HNSW_MIN: usize = if cfg!(test) { 256 } else { 4096 };
/// Candidates a graph search keeps (its beam); more finds more, slower.
const EF_SEARCH: usize = 64;

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

/// A vector to store, with the record key it points at.
pub type Targeted = (Vec<u8>, Vec<f32>);

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

/// One scope: its points once loaded, and the flags around loading and building.
struct Slot {
    name: String,
    tag: Tag,
    points: RwLock<Option<Points>>,
    /// Held while the scope loads (and by writes to a scope not loaded yet).
    loading: Mutex<()>,
    building: AtomicBool,
    registered: AtomicBool,
    /// The checksum check of the mapped file the points came from, until a thread takes it.
    check: Mutex<Option<persist::Check>>,
}

struct Inner {
    store: Store,
    dir: Option<PathBuf>,
    scopes: Mutex<HashMap<String, Arc<Slot>>>,
    /// One build at a time (a build already uses every core).
    build_lock: Mutex<()>,
    builds_running: AtomicUsize,
    /// Set during bulk imports: inserts start no background build (the importer builds once).
    held: AtomicBool,
    /// Tests: checksum checks wait for `hold_checks(false)` (to see a scope before its check).
    hold_checks: AtomicBool,
}

/// The index over every scope of one store; cheap to clone.
#[derive(Clone)]
pub struct VectorIndex(Arc<Inner>);

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl VectorIndex {
    /// The index of `store`, with graphs saved under `dir`. Loads nothing (scopes load on first
    /// use); converts vectors written by an older refrain first.
    pub fn open(store: &Store, dir: Option<&Path>) -> Result<VectorIndex, Error> {
        let migrated = records::migrate(store)?;
        if migrated > 0 {
            store.flush()?;
            if let Some(d) = dir {
                persist::remove_old_format(d);
            }
            tracing::info!(vectors = migrated, "vectors converted to int8 codes");
        }
        Ok(VectorIndex(Arc::new(Inner {
            store: store.clone(),
            dir: dir.map(Path::to_path_buf),
            scopes: Mutex::new(HashMap::new()),
            build_lock: Mutex::new(()),
            builds_running: AtomicUsize::new(0),
            held: AtomicBool::new(false),
            hold_checks: AtomicBool::new(false),
        })))
    }

    /// An index without saved graphs (every scope built from the store when needed).
    pub fn rebuild(store: &Store) -> Result<VectorIndex, Error> {
        Self::open(store, None)
    }

    fn slot(&self, scope: &str) -> Arc<Slot> {
        lock(&self.0.scopes)
            .entry(scope.to_string())
            .or_insert_with(|| {
                Arc::new(Slot {
                    name: scope.to_string(),
                    tag: records::tag(scope),
                    points: RwLock::new(None),
                    loading: Mutex::new(()),
                    building: AtomicBool::new(false),
                    registered: AtomicBool::new(false),
                    check: Mutex::new(None),
                })
            })
            .clone()
    }

    /// The scope's points, loading them first if needed.
    fn loaded<'a>(&self, slot: &'a Arc<Slot>, schedule: bool) -> Result<RwLockReadGuard<'a, Option<Points>>, Error> {
        {
            let g = slot.points.read().unwrap_or_else(|p| p.into_inner());
            if g.is_some() {
                return Ok(g);
            }
        }
        let loading = lock(&slot.loading);
        let (mut check, mut upgrade) = (None, false);
        if slot.points.read().unwrap_or_else(|p| p.into_inner()).is_none() {
            let started = std::time::Instant::now();
            let saved = self.0.dir.as_deref().and_then(|d| persist::load(d, &slot.tag));
            let mut failed = None;
            // The stored codes with ids above `after` (all of them for None), to `f`.
            let mut read = |after: Option<u64>, f: &mut dyn FnMut(u64, &[i8])| {
                if let Err(e) = records::scan_after(&self.0.store, &slot.tag, after, |id, code| f(id, code)) {
                    failed = Some(e);
                }
            };
            let points = match saved {
                Some(persist::Saved { dim, ids, codes: Some(codes), graph, check: c }) if self.saved_here(&ids)? => {
                    // Codes from the file; from the store only what changed since the save.
                    let gone = records::gone(&self.0.store, &slot.tag)?;
                    let after = ids.last().copied();
                    let verdict = c.as_ref().map(persist::Check::verdict);
                    upgrade = c.is_none();
                    check = c;
                    Points::restore(dim, ids, codes, graph, verdict, &gone, |f| read(after, f))
                }
                // Codes from the store, matched to the file's ids: nothing in the file can make
                // a wrong hit (damage could only cost recall), so its checksum is not waited for.
                saved => Points::assemble(saved.map(|s| (s.dim, s.ids, s.graph)), |f| read(None, f)),
            };
            if let Some(e) = failed {
                return Err(e.into());
            }
            let (graph, tail) = points.shape();
            let mapped = points.is_mapped();
            tracing::info!(scope = %slot.name, graph, tail, mapped, elapsed_ms = started.elapsed().as_millis() as u64, "index scope loaded");
            *slot.points.write().unwrap_or_else(|p| p.into_inner()) = Some(points);
        }
        // Started with the loading lock released (a failed check takes it to reload the scope).
        drop(loading);
        if let Some(c) = check {
            *lock(&slot.check) = Some(c);
            if !self.0.hold_checks.load(Ordering::Acquire) {
                self.start_check(slot);
            }
        } else if upgrade && self.0.dir.is_some() {
            self.in_background(slot, "refrain-index-upgrade", |index, slot| index.upgrade(slot));
        }
        if schedule {
            self.maybe_build(slot);
        }
        Ok(slot.points.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// Whether a saved graph's ids can come from this store: its ids are handed out in increasing
    /// order, so a file whose last id is not below the store's next one belongs to another store
    /// (a store directory replaced under its index), and is read the slow way, codes from the store.
    fn saved_here(&self, ids: &[u64]) -> Result<bool, Error> {
        let last = ids.last().copied().unwrap_or(0);
        Ok(self.0.store.next_id()? > last)
    }

    /// Runs the scope's pending checksum check on a thread of its own.
    fn start_check(&self, slot: &Arc<Slot>) {
        self.in_background(slot, "refrain-index-check", |index, slot| index.finish_check(slot));
    }

    /// Runs `work` on a thread of its own at the lowest priority, counted as background work
    /// (`wait_idle`); inline if no thread can start.
    fn in_background(&self, slot: &Arc<Slot>, name: &str, work: fn(&VectorIndex, &Arc<Slot>)) {
        let s = slot.clone();
        let spawned = self.spawn_counted(name, move |index| {
            crate::threads::lower_this_thread();
            work(index, &s);
        });
        if let Err(e) = spawned {
            tracing::debug!(error = %e, name, "index background thread not started; running inline");
            work(self, slot);
        }
    }

    /// Starts `work` on a thread of its own, counted as background work (`wait_idle`) until it
    /// returns. When no thread can start, nothing ran and nothing stays counted.
    fn spawn_counted(&self, name: &str, work: impl FnOnce(&VectorIndex) + Send + 'static) -> std::io::Result<()> {
        let index = self.clone();
        self.0.builds_running.fetch_add(1, Ordering::AcqRel);
        let spawned = std::thread::Builder::new().name(name.into()).spawn(move || {
            work(&index);
            index.0.builds_running.fetch_sub(1, Ordering::AcqRel);
        });
        if spawned.is_err() {
            self.0.builds_running.fetch_sub(1, Ordering::AcqRel);
        }
        spawned.map(drop)
    }

    /// Rewrites a scope loaded from a file of an older format in the current one, then serves its
    /// points from the new file's mapping (the heap copy is dropped). Holds the build lock (no
    /// build saves meanwhile) and the scope's read lock while writing (searches go on; inserts
    /// wait for the write, once).
    fn upgrade(&self, slot: &Arc<Slot>) {
        let Some(dir) = &self.0.dir else { return };
        let _one = lock(&self.0.build_lock);
        let started = std::time::Instant::now();
        let written = {
            let g = slot.points.read().unwrap_or_else(|p| p.into_inner());
            let Some(p) = g.as_ref().filter(|p| !p.is_mapped() && p.trusted()) else { return };
            p.save_graph_part(dir, &slot.tag)
        };
        if let Err(e) = written {
            tracing::warn!(scope = %slot.name, error = %e, "saved index graph not rewritten in the current format");
            return;
        }
        let Some(saved) = persist::load(dir, &slot.tag).filter(|s| s.check.is_some()) else { return };
        let remapped = {
            let mut points = slot.points.write().unwrap_or_else(|p| p.into_inner());
            if points.is_none() {
                // Cleared while the file was written: the file goes too.
                persist::remove(dir, &slot.tag);
            }
            points.as_mut().is_some_and(|p| p.remap(saved))
        };
        tracing::info!(scope = %slot.name, remapped, elapsed_ms = started.elapsed().as_millis() as u64, "saved index graph rewritten in the current format");
    }

    /// Checks the file the scope's points are mapped from. When it passes, the scope is trusted
    /// (and may build); when it fails, the points are dropped, the file removed, and the scope
    /// loaded again from the store alone, which searches it exactly and schedules a rebuild.
    fn finish_check(&self, slot: &Arc<Slot>) {
        let Some(check) = lock(&slot.check).take() else { return };
        let verdict = check.verdict();
        let started = std::time::Instant::now();
        if check.run() {
            tracing::debug!(scope = %slot.name, elapsed_ms = started.elapsed().as_millis() as u64, "saved index graph checked");
            self.maybe_build(slot);
            return;
        }
        tracing::warn!(scope = %slot.name, "saved index graph fails its checksum; the scope is loaded again from the store and rebuilt");
        let dropped = {
            let _l = lock(&slot.loading);
            let mut points = slot.points.write().unwrap_or_else(|p| p.into_inner());
            // Unless a reload or a clear has replaced them already.
            let ours = points.as_ref().is_some_and(|p| p.checked_by(&verdict));
            if ours {
                *points = None;
                if let Some(d) = &self.0.dir {
                    persist::remove(d, &slot.tag);
                }
            }
            ours
        };
        if dropped && let Err(e) = self.loaded(slot, true) {
            tracing::warn!(scope = %slot.name, error = %e, "index scope not loaded again; it loads on its next use");
        }
    }

    /// Tests: holds checksum checks of scopes loaded from now on (true), or runs the held ones
    /// and stops holding (false).
    #[cfg(test)]
    fn hold_checks(&self, held: bool) {
        self.0.hold_checks.store(held, Ordering::Release);
        if !held {
            let slots: Vec<Arc<Slot>> = lock(&self.0.scopes).values().cloned().collect();
            slots.iter().filter(|s| lock(&s.check).is_some()).for_each(|s| self.start_check(s));
        }
    }

    /// Stores a vector (buffered in the store; the caller flushes) and indexes it. Returns its id.
    pub fn insert(&self, scope: &str, target: &[u8], vector: Vec<f32>) -> Result<u64, Error> {
        Ok(self.insert_many(scope, vec![(target.to_vec(), vector)])?.remove(0))
    }

    /// Stores and indexes many vectors of one scope (the caller flushes). Returns the new ids in
    /// input order. Every vector is checked before anything is written (one of another
    /// dimension writes none), the codes are encoded on the caller's thread, and the records go
    /// to the store as one batch, so bulk importers on several threads share the cores.
    pub fn insert_many(&self, scope: &str, items: Vec<Targeted>) -> Result<Vec<u64>, Error> {
        let slot = self.slot(scope);
        if !slot.registered.swap(true, Ordering::Relaxed) {
            records::register(&self.0.store, scope)?;
        }
        let dim = items.first().map_or(0, |(_, v)| v.len());
        if let Some((_, v)) = items.iter().find(|(_, v)| v.len() != dim) {
            return Err(Error::Dimension { got: v.len(), want: dim });
        }
        let coded: Vec<(Vec<u8>, Vec<i8>)> = items.into_iter().map(|(t, v)| (t, quant::encode(&v))).collect();
        let mut added = Vec::with_capacity(coded.len());
        {
            // Written under the loading lock, so a load neither misses nor doubles these.
            let _l = lock(&slot.loading);
            // A scope not loaded yet is checked against its stored records.
            let loaded = slot.points.read().unwrap_or_else(|p| p.into_inner()).as_ref().map(Points::dim);
            let have = match loaded {
                Some(d) => d,
                None => records::stored_dim(&self.0.store, &slot.tag)?.unwrap_or(0),
            };
            if have > 0 && dim > 0 && have != dim {
                return Err(Error::Dimension { got: dim, want: have });
            }
            let mut batch = store::Batch::new();
            for (target, code) in coded {
                let id = self.0.store.next_id()?;
                records::put_into(&mut batch, &slot.tag, id, &target, &code);
                added.push((id, code));
            }
            self.0.store.apply(batch)?;
            if let Some(p) = slot.points.write().unwrap_or_else(|p| p.into_inner()).as_mut() {
                added.iter().for_each(|(id, code)| {
                    p.push(*id, code);
                });
            }
        }
        self.maybe_build(&slot);
        Ok(added.into_iter().map(|(id, _)| id).collect())
    }

    /// A stored vector of `scope` by id (decoded from its int8 code; None when it is gone): from
    /// the scope's points when they hold it, else read back from the store.
    pub fn stored_vector(&self, scope: &str, id: u64) -> Option<Vec<f32>> {
        let slot = self.slot(scope);
        if let Some(v) = slot
            .points
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
            .and_then(|p| p.code_of(id).map(quant::decode))
        {
            return Some(v);
        }
        let code = records::code(&self.0.store, &records::tag(scope), id).ok()??;
        Some(quant::decode(&code))
    }

    /// Removes a vector of `scope` from the store and the index.
    pub fn remove(&self, scope: &str, id: u64) -> Result<(), Error> {
        let slot = self.slot(scope);
        let _l = lock(&slot.loading);
        records::remove(&self.0.store, &slot.tag, id)?;
        if let Some(p) = slot.points.write().unwrap_or_else(|p| p.into_inner()).as_mut() {
            p.remove(id);
        }
        Ok(())
    }

    /// The `k` nearest live vectors of `scope` with similarity at least `min_score`, best first.
    /// Loads the scope on its first use (blocking: call from a blocking context).
    pub fn search(&self, scope: &str, query: &[f32], k: usize, min_score: f32) -> Result<Vec<Hit>, Error> {
        let slot = self.slot(scope);
        let (found, trusted) = {
            let guard = self.loaded(&slot, true)?;
            let Some(points) = guard.as_ref() else { return Ok(Vec::new()) };
            if points.live() > 0 && points.dim() != query.len() {
                return Err(Error::Dimension { got: query.len(), want: points.dim() });
            }
            (points.search(query, k, min_score, EF_SEARCH.max(k * 2)), points.trusted())
        };
        let mut hits: Vec<Hit> = Vec::with_capacity(found.len());
        for (id, score) in found {
            if trusted {
                if let Some(target) = records::target(&self.0.store, &slot.tag, id)? {
                    hits.push(Hit { id, target, score });
                }
                continue;
            }
            // Points from a file not checked yet: each hit is scored again from its record in
            // the store, so a damaged id or code can lose a hit, never make one.
            if let Some((target, code)) = records::record(&self.0.store, &slot.tag, id)? {
                let score = quant::cosine_f32(query, &code);
                if score >= min_score && hits.iter().all(|h| h.id != id) {
                    hits.push(Hit { id, target, score });
                }
            }
        }
        if !trusted {
            hits.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
        }
        Ok(hits)
    }

    /// Builds the scope's graph now (bulk imports, `refrain index rebuild`) and saves it, with
    /// the bulk build's narrower beam (`graph::EF_BULK`), on every core at the process's own
    /// priority (a background build runs at the lowest). Returns the points in the graph.
    pub fn build_now(&self, scope: &str) -> Result<usize, Error> {
        let slot = self.slot(scope);
        // A build starts from the scope's codes: from a mapped file, only once its check passed
        // (a failed one reloads the scope from the store).
        loop {
            let guard = self.loaded(&slot, false)?;
            if guard.as_ref().is_none_or(Points::trusted) {
                break;
            }
            drop(guard);
            if lock(&slot.check).is_some() && self.0.hold_checks.load(Ordering::Acquire) {
                self.finish_check(&slot);
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        while slot.building.swap(true, Ordering::AcqRel) {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        Ok(build::run(&self.0, &slot, graph::EF_BULK, build::Priority::Bulk))
    }

    /// Builds every registered scope's graph now; returns (scope, points) pairs.
    pub fn build_all(&self) -> Result<Vec<(String, usize)>, Error> {
        let mut out = Vec::new();
        for name in records::scopes(&self.0.store)? {
            out.push((name.clone(), self.build_now(&name)?));
        }
        Ok(out)
    }

    /// Holds (true) or releases (false) background builds: a bulk import holds them while it
    /// inserts, so the graph is built once at the end (`build_now`) instead of again and again
    /// as the scope grows. Lookups meanwhile scan exactly, as for any scope without a graph.
    pub fn hold_builds(&self, held: bool) {
        self.0.held.store(held, Ordering::Release);
    }

    /// Starts a background build if the scope wants one and none is running.
    fn maybe_build(&self, slot: &Arc<Slot>) {
        if self.0.held.load(Ordering::Acquire) {
            return;
        }
        let wants =
            slot.points.read().unwrap_or_else(|p| p.into_inner()).as_ref().is_some_and(|p| p.wants_build(HNSW_MIN));
        if wants && !slot.building.swap(true, Ordering::AcqRel) {
            let building = slot.clone();
            // Not lowered here: the build's own pool runs at the lowest priority (`build`).
            let spawned = self.spawn_counted("refrain-index-build", move |index| {
                build::run(&index.0, &building, graph::EF_CONSTRUCTION, build::Priority::Background);
            });
            if let Err(e) = spawned {
                // No build runs, so none will clear the flag: clear it, or the scope would never
                // be offered another build until the process restarts.
                slot.building.store(false, Ordering::Release);
                tracing::warn!(error = %e, "index build not started; lookups stay exact, a later insert tries again");
            }
        }
    }

    /// Waits until no background build or checksum check is running (tests, benchmarks, shutdown).
    pub fn wait_idle(&self) {
        while self.0.builds_running.load(Ordering::Acquire) > 0 {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }

    /// Forgets every vector (after the store's vectors tree was cleared) and its saved graphs.
    pub fn clear(&self) {
        let slots: Vec<Arc<Slot>> = lock(&self.0.scopes).drain().map(|(_, s)| s).collect();
        for s in slots {
            *s.points.write().unwrap_or_else(|p| p.into_inner()) = None;
            if let Some(d) = &self.0.dir {
                persist::remove(d, &s.tag);
            }
        }
    }

    /// Live vectors per scope loaded so far.
    pub fn sizes(&self) -> Vec<(String, usize)> {
        let slots: Vec<Arc<Slot>> = lock(&self.0.scopes).values().cloned().collect();
        let mut v: Vec<(String, usize)> = slots
            .iter()
            .filter_map(|s| {
                let g = s.points.read().unwrap_or_else(|p| p.into_inner());
                g.as_ref().map(|p| (s.name.clone(), p.live()))
            })
            .collect();
        v.sort();
        v
    }

    /// Live vectors in the scopes loaded so far.
    pub fn len(&self) -> usize {
        self.sizes().iter().map(|(_, n)| n).sum()
    }

    /// True when no loaded scope holds a vector.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests;
