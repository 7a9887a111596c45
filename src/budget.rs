//! The per-request work budget: how much intermediate data one tool call may build and until when
//! it may keep building it.
//!
//! The server runs each tool call on its own blocking-pool thread (see `server::run`), so the
//! budget is thread-local: `Scope::enter` sets it for the call, and the pure functions that can
//! grow their output far beyond their input (trace extraction, plan hydration, redaction,
//! transcript parsing, compaction) ask `take` before each piece they add. Once the budget is spent
//! or the deadline has passed, `take` says no, the function stops growing, the store refuses new
//! writes from this call (`allows_writes`), and the server answers with an error naming the limit.
//! Outside a scope (unit tests, fuzzing, the CLI) each `take` is checked alone against
//! `DEFAULT_BYTES`, so no single piece can be unbounded either. `take` never allocates and never
//! panics; work a call hands to another blocking thread goes through `spawn_blocking` here, which
//! carries the budget along, and gives way to other calls as the call itself does once the call
//! has run past `threads::SLOW_AFTER`.

use std::cell::Cell;
use std::time::{Duration, Instant};

/// The memory budget a request gets when the configuration says nothing.
pub const DEFAULT_BYTES: u64 = 256 * 1024 * 1024;
/// The time budget a request gets when the configuration says nothing.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// Which limit a request went over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exceeded {
    /// `server.request_memory_bytes`, while building the named structure.
    Memory(&'static str),
    /// `server.request_timeout_ms`, while building the named structure.
    Time(&'static str),
}

impl Exceeded {
    /// The sentence the agent reads: which limit, what hit it, and the setting that raises it.
    pub fn message(self, limits: &Limits) -> String {
        match self {
            Exceeded::Memory(what) => format!(
                "this request would need more than {} bytes of intermediate data ({what}), the per-request memory limit; \
                 nothing was stored. Send smaller values, or raise server.request_memory_bytes",
                limits.memory_bytes
            ),
            Exceeded::Time(what) => format!(
                "this request ran past its deadline of {} ms ({what}) and was stopped; nothing was stored. \
                 Send a smaller request, or raise server.request_timeout_ms",
                limits.timeout.as_millis()
            ),
        }
    }
}

/// The limits of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Bytes of intermediate data a request may build.
    pub memory_bytes: u64,
    /// How long a request may run.
    pub timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { memory_bytes: DEFAULT_BYTES, timeout: DEFAULT_TIMEOUT }
    }
}

#[derive(Clone, Copy)]
struct Budget {
    left: u64,
    started: Instant,
    deadline: Instant,
    exceeded: Option<Exceeded>,
}

thread_local! {
    static BUDGET: Cell<Option<Budget>> = const { Cell::new(None) };
}

/// The budget of the current thread's request, from `enter` until dropped.
#[must_use = "the budget ends when the scope is dropped"]
pub struct Scope {
    previous: Option<Budget>,
}

impl Scope {
    /// Starts a request's budget on this thread.
    pub fn enter(limits: Limits) -> Scope {
        let started = Instant::now();
        let deadline = started.checked_add(limits.timeout).unwrap_or_else(far_future);
        let budget = Budget { left: limits.memory_bytes, started, deadline, exceeded: None };
        Scope { previous: BUDGET.with(|b| b.replace(Some(budget))) }
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        BUDGET.with(|b| b.set(self.previous));
    }
}

fn far_future() -> Instant {
    Instant::now() + Duration::from_secs(365 * 24 * 3600)
}

/// Asks for `bytes` more of intermediate data for `what` (e.g. "hydrated plan"). False when the
/// request is over its memory or time budget: the caller stops growing its output.
pub fn take(bytes: usize, what: &'static str) -> bool {
    let bytes = bytes as u64;
    BUDGET.with(|cell| {
        let Some(mut b) = cell.get() else { return bytes <= DEFAULT_BYTES };
        if b.exceeded.is_some() {
            return false;
        }
        if bytes > b.left {
            b.exceeded = Some(Exceeded::Memory(what));
        } else if Instant::now() >= b.deadline {
            b.exceeded = Some(Exceeded::Time(what));
        } else {
            b.left -= bytes;
        }
        cell.set(Some(b));
        b.exceeded.is_none()
    })
}

/// Runs blocking `f` on a pool thread (`threads::run`) under the calling thread's budget, and
/// carries what it spent back. A tool call already runs on its own pool thread with its budget in
/// a thread-local; work it hands to another thread (an HNSW search, an embedding, a rerank) would
/// otherwise run with no budget at all, its store writes would not know the request is over a
/// limit, and it would keep full CPU priority after the call itself gave way as slow. Called
/// outside a request, `f` runs with no budget and never gives way, as before.
pub async fn spawn_blocking<F, R>(f: F) -> Result<R, crate::threads::Error>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    let carried = BUDGET.with(Cell::get);
    let slow_at = carried.and_then(|b| b.started.checked_add(crate::threads::SLOW_AFTER));
    let work = move || {
        // Restored when dropped, also on a panic: a pool thread never keeps another call's budget.
        let _scope = Scope { previous: BUDGET.with(|b| b.replace(carried)) };
        let out = f();
        (out, BUDGET.with(Cell::get))
    };
    let (out, after) = crate::threads::run(work, slow_at).await?;
    if carried.is_some() {
        BUDGET.with(|b| b.set(after));
    }
    Ok(out)
}

/// Marks the current request as over time when its deadline has passed (for long loops that
/// build nothing); false when it is over any limit.
pub fn on_time(what: &'static str) -> bool {
    take(0, what)
}

/// The limit the current request went over, if any.
pub fn exceeded() -> Option<Exceeded> {
    BUDGET.with(|b| b.get().and_then(|b| b.exceeded))
}

/// Whether the current request may still write to the store: a request that went over a limit
/// has built truncated data, which must never be stored.
pub fn allows_writes() -> bool {
    exceeded().is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scope_stops_growth_past_its_bytes_and_names_what_hit_it() {
        let _s = Scope::enter(Limits { memory_bytes: 10, timeout: Duration::from_secs(60) });
        assert!(take(6, "a"));
        assert!(allows_writes());
        assert!(!take(6, "hydrated plan"));
        assert!(!take(1, "later"), "once over, every later ask is refused");
        assert_eq!(exceeded(), Some(Exceeded::Memory("hydrated plan")));
        assert!(!allows_writes());
    }

    #[test]
    fn a_scope_past_its_deadline_refuses_and_says_time() {
        let _s = Scope::enter(Limits { memory_bytes: 10, timeout: Duration::ZERO });
        assert!(!on_time("extracted template"));
        assert_eq!(exceeded(), Some(Exceeded::Time("extracted template")));
        let msg = Exceeded::Time("x").message(&Limits::default());
        assert!(msg.contains("server.request_timeout_ms"), "{msg}");
    }

    #[tokio::test]
    async fn work_handed_to_the_blocking_pool_spends_the_same_budget() {
        let _s = Scope::enter(Limits { memory_bytes: 10, timeout: Duration::from_secs(60) });
        let inside = spawn_blocking(|| (take(6, "a"), take(6, "HNSW search"))).await.unwrap();
        assert_eq!(inside, (true, false), "the pool thread saw the caller's budget");
        assert_eq!(exceeded(), Some(Exceeded::Memory("HNSW search")), "what it spent came back");
        let fresh = spawn_blocking(exceeded).await.unwrap();
        assert_eq!(fresh, Some(Exceeded::Memory("HNSW search")));
        let _ = tokio::task::spawn_blocking(|| assert_eq!(exceeded(), None)).await;
        let after_the_call = crate::threads::run(exceeded, None).await.unwrap();
        assert_eq!(after_the_call, None, "the pool thread kept no budget");
    }

    #[test]
    fn scopes_end_and_nest() {
        {
            let _outer = Scope::enter(Limits { memory_bytes: 1, timeout: Duration::from_secs(60) });
            {
                let _inner = Scope::enter(Limits::default());
                assert!(take(100, "inner"));
            }
            assert!(!take(100, "outer"));
        }
        assert_eq!(exceeded(), None);
        assert!(take(100, "no scope"));
        assert!(!take(DEFAULT_BYTES as usize + 1, "no scope"));
    }
}
