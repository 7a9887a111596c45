//! The threads request work runs on, and how a request that runs long gives way to the others.
//!
//! Every tool call, and the blocking work a call hands off (embedding, reranking, vector search),
//! runs on a thread of this pool instead of tokio's blocking pool. The caller names the instant
//! its work counts as slow (`SLOW_AFTER` past the call's start); work still running then has its
//! thread's CPU priority lowered to the lowest (per-thread nice 19, `setpriority` on the thread
//! id), so on a busy machine the scheduler runs every cheap call first and the slow one gets what
//! CPU is left over. Nothing else changes for the slow call: it keeps its deadline and its budget,
//! and on an idle machine it still gets a whole core.
//!
//! A thread cannot raise its priority again without privilege, so a lowered thread retires when
//! its work ends and never serves another call. The others are reused (a call does not pay for a
//! thread start) and exit after `IDLE_KEEP` without work. Work whose caller stops waiting (a call
//! past its deadline, a cancelled request) is lowered at once.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Condvar, LazyLock, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How long work runs at normal priority before it counts as slow and gives way.
pub const SLOW_AFTER: Duration = Duration::from_millis(50);
/// The nice value of a slow call's thread: the lowest priority there is.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
const LOWEST: i32 = 19;
/// Threads running or waiting for work at most; more work waits for a thread to free up.
const MAX_THREADS: usize = 512;
/// How long an idle thread waits for work before it exits.
const IDLE_KEEP: Duration = Duration::from_secs(10);

/// Why work did not run to its end.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The work panicked (the message, when it had one).
    #[error("the work panicked: {0}")]
    Panicked(String),
    /// No thread could be started to run it.
    #[error("no thread could be started to run the work: {0}")]
    NoThread(String),
}

/// Runs blocking `f` on a pool thread and waits for its result without blocking the async
/// runtime. From `slow_at` on (if given), `f`'s thread runs at the lowest priority, as it does
/// when this future is dropped before `f` ends.
pub async fn run<F, R>(f: F, slow_at: Option<Instant>) -> Result<R, Error>
where
    F: FnOnce() -> R + Send + 'static,
    R: Send + 'static,
{
    let (tx, mut rx) = tokio::sync::oneshot::channel();
    let ctl = Arc::new(Ctl::default());
    let work = Box::new(move || {
        let _ = tx.send(catch_unwind(AssertUnwindSafe(f)));
    });
    if slow_at.is_some_and(|at| at <= Instant::now()) {
        // Handed off by a call that is slow already: it starts lowered, with no moment at full priority.
        ctl.state().lower_on_start = true;
    }
    submit(Job { work, ctl: ctl.clone() });
    let mut abandoned = LowerOnDrop(Some(ctl.clone()));
    let out = match slow_at {
        Some(at) => tokio::select! {
            out = &mut rx => out,
            () = tokio::time::sleep_until(at.into()) => {
                ctl.lower();
                rx.await
            }
        },
        None => rx.await,
    };
    abandoned.0 = None;
    match out {
        Ok(Ok(r)) => Ok(r),
        Ok(Err(panic)) => Err(Error::Panicked(panic_message(panic.as_ref()))),
        Err(_) => Err(Error::NoThread("the pool dropped the work".into())),
    }
}

/// Runs blocking `f` on tokio's blocking pool without waiting for it (model loads), asked for
/// from an async worker: called from a slow call's lowered thread, `tokio::task::spawn_blocking`
/// could start a blocking thread there that inherits the lowered priority and keeps it for good.
/// The runtime's shutdown waits for `f` as for any blocking task. Needs a runtime context.
pub fn spawn_blocking_detached<F: FnOnce() + Send + 'static>(f: F) {
    tokio::spawn(async move {
        let _ = tokio::task::spawn_blocking(f).await;
    });
}

/// Lowers the current thread to the lowest CPU priority, for good. Only for threads that never
/// serve a call afterwards (a background index build's own threads); false if the system refused.
pub fn lower_this_thread() -> bool {
    current_tid().is_some_and(lower_thread)
}

fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into())
}

/// Lowers the work's thread when the waiting future goes away before the work ends.
struct LowerOnDrop(Option<Arc<Ctl>>);

impl Drop for LowerOnDrop {
    fn drop(&mut self) {
        if let Some(ctl) = self.0.take() {
            ctl.lower();
        }
    }
}

/// One piece of work and the switch that lowers the thread running it.
struct Job {
    work: Box<dyn FnOnce() + Send>,
    ctl: Arc<Ctl>,
}

/// Shared between the waiting side (which may lower the work) and the thread running it. Both
/// sides hold the lock while they act, so a thread is only ever lowered while it runs this work.
#[derive(Default)]
struct Ctl(Mutex<CtlState>);

#[derive(Default)]
struct CtlState {
    tid: Option<Tid>,
    lower_on_start: bool,
    lowered: bool,
    done: bool,
}

impl Ctl {
    fn state(&self) -> MutexGuard<'_, CtlState> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Lowers the thread running the work, or has the work start lowered if it has not started.
    fn lower(&self) {
        let mut s = self.state();
        if s.done || s.lowered {
            return;
        }
        match s.tid {
            Some(tid) => s.lowered = lower_thread(tid),
            None => s.lower_on_start = true,
        }
    }

    /// Called by the running thread before the work.
    fn start(&self) {
        let mut s = self.state();
        s.tid = current_tid();
        if let (true, Some(tid)) = (s.lower_on_start, s.tid) {
            s.lowered = lower_thread(tid);
        }
    }

    /// Called by the running thread after the work; true when its thread was lowered.
    fn finish(&self) -> bool {
        let mut s = self.state();
        s.done = true;
        s.lowered
    }
}

/// A thread's id as `setpriority` takes it (Linux: per-thread priorities).
#[cfg(target_os = "linux")]
type Tid = rustix::thread::Pid;
/// Elsewhere priorities are per process: slow calls keep theirs.
#[cfg(not(target_os = "linux"))]
type Tid = ();

#[cfg(target_os = "linux")]
fn current_tid() -> Option<Tid> {
    Some(rustix::thread::gettid())
}

#[cfg(not(target_os = "linux"))]
fn current_tid() -> Option<Tid> {
    None
}

#[cfg(target_os = "linux")]
fn lower_thread(tid: Tid) -> bool {
    match rustix::process::setpriority_process(Some(tid), LOWEST) {
        Ok(()) => true,
        Err(e) => {
            tracing::debug!(error = %e, "could not lower a slow call's thread priority");
            false
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_thread(_tid: Tid) -> bool {
    false
}

struct Pool {
    state: Mutex<PoolState>,
    work: Condvar,
    /// Asks the nursery thread for one more worker; None if the nursery could not start.
    nursery: Option<Mutex<std::sync::mpsc::Sender<()>>>,
}

#[derive(Default)]
struct PoolState {
    queue: VecDeque<Job>,
    idle: usize,
    threads: usize,
}

/// A new thread inherits the priority of the thread that starts it, and work often asks for a
/// thread from a call's own thread, which may have been lowered. So workers are started by the
/// nursery, a thread of their own that only ever starts threads and always runs at the priority
/// the process started with (it is started by the first caller, before any thread was lowered).
static POOL: LazyLock<Pool> = LazyLock::new(|| {
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let nursery = std::thread::Builder::new().name("refrain-nursery".into()).spawn(move || {
        for () in rx {
            spawn_worker();
        }
    });
    if let Err(e) = &nursery {
        tracing::debug!(error = %e, "no nursery thread; workers start from the caller's thread");
    }
    Pool { state: Mutex::default(), work: Condvar::new(), nursery: nursery.ok().map(|_| Mutex::new(tx)) }
});

fn pool() -> MutexGuard<'static, PoolState> {
    POOL.state.lock().unwrap_or_else(|p| p.into_inner())
}

fn submit(job: Job) {
    let mut s = pool();
    s.queue.push_back(job);
    if s.idle >= s.queue.len() {
        POOL.work.notify_one();
        return;
    }
    start_thread(s);
}

/// Starts a thread for the queued work, unless the pool is full (then the work waits for a
/// thread to free up).
fn start_thread(mut s: MutexGuard<'static, PoolState>) {
    if s.threads >= MAX_THREADS {
        return;
    }
    s.threads += 1;
    drop(s);
    let asked = POOL.nursery.as_ref().is_some_and(|n| n.lock().unwrap_or_else(|p| p.into_inner()).send(()).is_ok());
    if !asked {
        spawn_worker();
    }
}

/// Starts one worker (counted already). If it cannot start and no other runs, the queued work
/// is dropped, which its waiters see as an error.
fn spawn_worker() {
    if let Err(e) = std::thread::Builder::new().name("refrain-call".into()).spawn(worker) {
        tracing::warn!(error = %e, "could not start a thread for request work");
        let mut s = pool();
        s.threads -= 1;
        if s.threads == 0 {
            s.queue.clear();
        }
    }
}

fn worker() {
    let mut s = pool();
    loop {
        if let Some(job) = s.queue.pop_front() {
            drop(s);
            job.ctl.start();
            // `run` catches its own panics to report them; this keeps the thread count right whatever a job does.
            let _ = catch_unwind(AssertUnwindSafe(job.work));
            let lowered = job.ctl.finish();
            s = pool();
            if lowered {
                // Its priority cannot be raised back: retire, and leave no queued work without a thread.
                s.threads -= 1;
                if s.queue.len() > s.idle {
                    start_thread(s);
                }
                return;
            }
            continue;
        }
        s.idle += 1;
        let (guard, waited) = POOL.work.wait_timeout(s, IDLE_KEEP).unwrap_or_else(|p| p.into_inner());
        s = guard;
        s.idle -= 1;
        if waited.timed_out() && s.queue.is_empty() {
            s.threads -= 1;
            return;
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn nice_of_current_thread() -> i32 {
        rustix::process::getpriority_process(Some(rustix::thread::gettid())).unwrap_or(i32::MIN)
    }

    #[tokio::test]
    async fn work_done_before_its_slow_instant_keeps_its_priority() {
        let slow_at = Instant::now() + Duration::from_secs(30);
        let nice = run(nice_of_current_thread, Some(slow_at)).await.unwrap();
        assert_eq!(nice, nice_of_current_thread(), "quick work ran at the caller's priority");
    }

    #[tokio::test]
    async fn slow_work_is_lowered_and_its_thread_retires() {
        let (tid, before, after) = run(
            || {
                let before = nice_of_current_thread();
                std::thread::sleep(SLOW_AFTER * 4);
                (rustix::thread::gettid(), before, nice_of_current_thread())
            },
            Some(Instant::now() + SLOW_AFTER),
        )
        .await
        .unwrap();
        assert_eq!(after, LOWEST, "slow work ends at the lowest priority (it began at {before})");
        // Later work never runs on the lowered thread, and runs at normal priority.
        for _ in 0..8 {
            let (t, nice) = run(|| (rustix::thread::gettid(), nice_of_current_thread()), None).await.unwrap();
            assert_ne!(t, tid, "a lowered thread served later work");
            assert_eq!(nice, before);
        }
    }

    #[tokio::test]
    async fn work_past_its_slow_instant_before_it_starts_starts_lowered() {
        let nice = run(nice_of_current_thread, Some(Instant::now() - Duration::from_millis(1))).await.unwrap();
        assert_eq!(nice, LOWEST);
    }

    #[tokio::test]
    async fn threads_started_for_a_lowered_call_run_at_normal_priority() {
        let normal = nice_of_current_thread();
        let handle = tokio::runtime::Handle::current();
        // A lowered call hands off more work at once than there are idle threads: new threads
        // start, and they must not inherit the lowered priority.
        let inner = run(
            move || {
                let lowered = nice_of_current_thread();
                let handed = (0..8).map(|_| {
                    run(
                        || {
                            std::thread::sleep(Duration::from_millis(30));
                            nice_of_current_thread()
                        },
                        None,
                    )
                });
                (lowered, handle.block_on(futures::future::join_all(handed)))
            },
            Some(Instant::now() - Duration::from_millis(1)),
        )
        .await
        .unwrap();
        assert_eq!(inner.0, LOWEST);
        assert!(inner.1.iter().all(|n| n.as_ref().is_ok_and(|n| *n == normal)), "{:?}", inner.1);
    }

    #[tokio::test]
    async fn a_panic_is_an_error_and_the_pool_goes_on() {
        let err = run(|| -> u32 { std::panic::panic_any("boom".to_string()) }, None).await.unwrap_err();
        assert!(err.to_string().contains("boom"), "{err}");
        assert_eq!(run(|| 7, None).await.unwrap(), 7);
    }

    #[tokio::test]
    async fn abandoned_work_is_lowered() {
        let (tx, rx) = std::sync::mpsc::channel();
        let waiting = run(
            move || {
                std::thread::sleep(SLOW_AFTER);
                let _ = tx.send(nice_of_current_thread());
            },
            None,
        );
        let _ = tokio::time::timeout(Duration::from_millis(5), waiting).await;
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)).unwrap(), LOWEST);
    }
}
