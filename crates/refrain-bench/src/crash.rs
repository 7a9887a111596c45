//! `refrain-bench crash`: the owner process is killed with SIGKILL at a random moment during
//! bursts of acknowledged writes from several server processes, then everything is restarted and
//! every acknowledged write is read back through MCP (exactly, and by meaning for those stored
//! with a query, which needs the vector index rebuilt from the store).
//!
//! Per round: a fresh project; one owner and followers (`refrain serve` over stdio), one writer
//! per process; SIGKILL of the owner after a random number of acknowledgements; the survivors
//! keep writing (one of them takes over); then all are killed and a fresh server checks.

use crate::driver::{self, Setup, Spawned};
use crate::work::{Acked, Check, Op, Rng, counts, ok, sigkill};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

/// How a crash run is shaped.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Rounds to run.
    pub rounds: usize,
    /// Server processes per round (the first owns the store).
    pub processes: usize,
    /// Writes per process per round.
    pub writes: usize,
    /// Seed of the kill moments.
    pub seed: u64,
    /// Store some results with a query (needs the model).
    pub semantic: bool,
}

/// What a crash run found.
#[derive(Debug, Default)]
pub struct Tally {
    /// Rounds run.
    pub rounds: usize,
    /// Writes acknowledged.
    pub acked: usize,
    /// Acknowledged writes not found after the restart.
    pub lost: usize,
    /// Acknowledged writes found with other content.
    pub torn: usize,
    /// Requests that failed on a process that was not killed.
    pub errors: usize,
    /// Rounds where the store did not open, or counts were off (duplicates), or anything failed.
    pub failed_rounds: usize,
    /// Acknowledgements seen before each kill.
    pub kill_points: Vec<usize>,
    /// The first problems, for the report.
    pub problems: Vec<String>,
}

impl Tally {
    /// True when nothing was lost, torn or failed.
    pub fn clean(&self) -> bool {
        self.lost == 0 && self.torn == 0 && self.errors == 0 && self.failed_rounds == 0
    }

    /// The report lines.
    pub fn report(&self, plan: &Plan, elapsed: Duration) -> String {
        let mut k = self.kill_points.clone();
        k.sort_unstable();
        let at = |q: f64| k.get(((k.len().max(1) - 1) as f64 * q) as usize).copied().unwrap_or(0);
        let mut s = format!(
            "crash: {} rounds x {} processes x {} writes (seed {}, semantic {}), {:.0} s\n\
             writes acknowledged: {}\nwrites lost: {}\nwrites torn: {}\n\
             requests failed on surviving processes: {}\nfailed rounds: {}\n\
             owner killed after min / median / max {} / {} / {} acknowledged writes\n",
            self.rounds,
            plan.processes,
            plan.writes,
            plan.seed,
            plan.semantic,
            elapsed.as_secs_f64(),
            self.acked,
            self.lost,
            self.torn,
            self.errors,
            self.failed_rounds,
            at(0.0),
            at(0.5),
            at(1.0)
        );
        for p in self.problems.iter().take(20) {
            s.push_str(&format!("problem: {p}\n"));
        }
        s
    }
}

/// Runs every round under `base` and returns the tally.
pub async fn run(base: &Path, models: &Path, plan: &Plan, mut progress: impl FnMut(&Tally)) -> anyhow::Result<Tally> {
    let mut rng = Rng::new(plan.seed);
    let mut tally = Tally::default();
    for r in 0..plan.rounds {
        let setup = driver::scratch(base, &format!("round-{r}"), models)?;
        let before = (tally.lost, tally.torn, tally.errors);
        if let Err(e) = round(&setup, plan, &mut rng, &mut tally).await {
            tally.failed_rounds += 1;
            tally.problems.push(format!("round {r}: {e:#}"));
        } else if before != (tally.lost, tally.torn, tally.errors) {
            tally.failed_rounds += 1;
        }
        tally.rounds += 1;
        let _ = std::fs::remove_dir_all(base.join(format!("round-{r}")));
        progress(&tally);
    }
    Ok(tally)
}

/// Writes done by one process's client.
struct Burst {
    acked: Vec<Acked>,
    errors: Vec<String>,
}

async fn round(setup: &Setup, plan: &Plan, rng: &mut Rng, tally: &mut Tally) -> anyhow::Result<()> {
    let mut procs: Vec<Spawned> = Vec::new();
    for _ in 0..plan.processes.max(2) {
        let s = driver::spawn(setup).await?;
        ok(s.client.peer(), "cache_stats", json!({})).await?;
        procs.push(s);
    }
    let owner = procs[0].pid();
    let count = Arc::new(AtomicUsize::new(0));
    let killed = Arc::new(AtomicBool::new(false));
    let mut writers = Vec::new();
    for (p, s) in procs.iter().enumerate() {
        let (peer, count, killed) = (s.client.peer().clone(), count.clone(), killed.clone());
        let (writes, semantic) = (plan.writes, plan.semantic);
        writers.push(tokio::spawn(async move {
            let mut b = Burst { acked: Vec::new(), errors: Vec::new() };
            for i in 0..writes {
                let op = Op::nth(p, i, semantic);
                match op.send(&peer).await {
                    Ok(Some(a)) => {
                        b.acked.push(a);
                        count.fetch_add(1, Ordering::SeqCst);
                    }
                    Ok(None) => b.errors.push(format!("{} was refused", op.id)),
                    Err(_) if p == 0 && killed.load(Ordering::SeqCst) => break,
                    Err(e) => b.errors.push(format!("{} on process {p}: {e}", op.id)),
                }
            }
            b
        }));
    }
    let total = plan.processes.max(2) * plan.writes;
    let kill_at = 1 + rng.below((total * 2 / 3).max(1) as u64) as usize;
    let jitter = Duration::from_micros(rng.below(3000));
    while count.load(Ordering::SeqCst) < kill_at && !writers.iter().all(|w| w.is_finished()) {
        tokio::time::sleep(Duration::from_micros(300)).await;
    }
    tokio::time::sleep(jitter).await;
    tally.kill_points.push(count.load(Ordering::SeqCst));
    killed.store(true, Ordering::SeqCst);
    sigkill(owner);
    let mut acked = Vec::new();
    for w in writers {
        let b = w.await?;
        tally.errors += b.errors.len();
        tally.problems.extend(b.errors);
        acked.extend(b.acked);
    }
    // Everyone dies uncleanly; the next server must open the store as it was left.
    for s in &procs {
        sigkill(s.pid());
    }
    for mut s in procs {
        let _ = s.child.wait().await;
    }
    tally.acked += acked.len();
    verify(setup, plan, &acked, tally).await
}

/// A fresh server reads back every acknowledged write and checks the record counts.
async fn verify(setup: &Setup, plan: &Plan, acked: &[Acked], tally: &mut Tally) -> anyhow::Result<()> {
    let fresh = driver::spawn(setup).await?;
    let peer = fresh.client.peer();
    if plan.semantic {
        fresh.wait_model().await?;
    }
    for a in acked {
        match a.check(peer).await? {
            Check::Intact => {}
            Check::Lost => {
                tally.lost += 1;
                tally.problems.push(format!("{} ({:?}) acknowledged but lost", a.op.id, a.op.kind));
            }
            Check::Torn => {
                tally.torn += 1;
                tally.problems.push(format!("{} ({:?}) came back different", a.op.id, a.op.kind));
            }
        }
    }
    let sent: Vec<Op> =
        (0..plan.processes.max(2)).flat_map(|p| (0..plan.writes).map(move |i| Op::nth(p, i, plan.semantic))).collect();
    counts(peer, &sent, acked).await
}
