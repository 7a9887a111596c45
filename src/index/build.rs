//! Building a scope's graph: snapshot the live codes under a short write lock, build with hnsw_rs
//! on every core with no lock held, swap the frozen graph in under a short write lock, then save
//! it (again with no lock held) and serve the scope's points from the saved file's mapping. One
//! build runs at a time; a scope has at most one in flight.
//! A background build's threads run at the lowest CPU priority: it takes every core for seconds,
//! and the calls served meanwhile must not wait behind it. A bulk build (`build_now`: imports,
//! `refrain index rebuild`) serves no calls and keeps the process's priority: at the lowest, any
//! other busy process on the machine starves it (a 1M-point build took minutes longer).

use super::graph::Graph;
use super::{Inner, Slot, lock, persist, quant, records};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::Ordering;
use std::time::Instant;

/// How a build's threads are scheduled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Priority {
    /// The lowest: a background build while calls are served.
    Background,
    /// The process's own: a bulk build that nothing waits behind.
    Bulk,
}

/// Builds and installs the scope's graph with a beam of `ef` while inserting, then saves it.
/// The caller has set `slot.building`; it is cleared here. Returns the points in the new graph
/// (0 when nothing was built).
pub(super) fn run(inner: &Inner, slot: &Slot, ef: usize, priority: Priority) -> usize {
    let _one = lock(&inner.build_lock);
    let n = build_and_save(inner, slot, ef, priority).unwrap_or(0);
    slot.building.store(false, Ordering::Release);
    n
}

fn build_and_save(inner: &Inner, slot: &Slot, ef: usize, priority: Priority) -> Option<usize> {
    // Not from a mapped file whose checksum has not passed yet (its codes are not trusted).
    let snap = slot.points.write().unwrap_or_else(|p| p.into_inner()).as_mut().filter(|p| p.trusted())?.snapshot();
    let (n, dim) = (snap.ids.len(), snap.dim);
    let started = Instant::now();
    let build = || Graph::build(&snap.codes, quant::stride(dim), n, ef);
    let pool = match priority {
        Priority::Background => low_priority_pool(),
        Priority::Bulk => None,
    };
    let built = catch_unwind(AssertUnwindSafe(|| match pool {
        Some(pool) => pool.install(build),
        None => build(),
    }));
    let Ok(graph) = built else {
        tracing::error!(scope = %slot.name, "index build failed; the scope stays searched exactly");
        if let Some(p) = slot.points.write().unwrap_or_else(|p| p.into_inner()).as_mut() {
            p.abandon_build();
        }
        return None;
    };
    let build_ms = started.elapsed().as_millis() as u64;
    // Saved before it is swapped in, with no lock held: the file needs the snapshot's codes,
    // which the swap moves into the scope.
    let saved =
        inner.dir.as_deref().map(|dir| (dir, persist::save(dir, &slot.tag, dim, &snap.ids, &snap.codes, &graph)));
    // The file just written, mapped back: the scope serves its points from it and drops the
    // snapshot's heap copy. Its checksum is not checked again (these are the bytes just written).
    let mapped = match &saved {
        Some((dir, Ok(_))) => persist::load(dir, &slot.tag).filter(|s| s.check.is_some()),
        _ => None,
    };
    // The scope may have been cleared while the build ran: then its file goes too.
    let installed =
        slot.points.write().unwrap_or_else(|p| p.into_inner()).as_mut().map(|p| p.install(snap, graph, mapped));
    let Some((_, ids)) = installed else {
        if let Some((dir, _)) = saved {
            persist::remove(dir, &slot.tag);
        }
        return None;
    };
    match saved {
        Some((_, Ok(bytes))) => {
            tracing::info!(scope = %slot.name, points = n, build_ms, bytes, "index graph built and saved");
            // Removals noted before the snapshot are in no saved file any more.
            if let Err(e) = records::forget_gone(&inner.store, &slot.tag, &ids) {
                tracing::warn!(scope = %slot.name, error = %e, "noted removals not forgotten; they are read at the next load");
            }
        }
        Some((_, Err(e))) => {
            tracing::warn!(scope = %slot.name, error = %e, "index graph built but not saved; the next start builds it again")
        }
        None => {}
    }
    Some(n)
}

/// A rayon pool for one build, its threads at the lowest CPU priority (they serve nothing else
/// and end with the pool). None if it cannot start: the build then runs on rayon's global pool.
fn low_priority_pool() -> Option<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .thread_name(|i| format!("refrain-index-build-{i}"))
        .start_handler(|_| {
            crate::threads::lower_this_thread();
        })
        .build()
        .map_err(|e| tracing::debug!(error = %e, "index build pool not started; building on the shared pool"))
        .ok()
}
