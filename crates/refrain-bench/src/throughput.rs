//! Requests per second with several concurrent clients, each on its own `refrain serve` process
//! as agents run them (the first is the owner, the others follow it over the project socket), on
//! a mix of 80% exact `response_cache_get` hits and 20% `response_cache_put`.
//!
//! A rate on a shared machine moves with everyone else's load, so each run also reports the CPU
//! time spent per request, by the owner, by the followers and by this client: that figure is what
//! a change to the request path changes, whatever the load.

use crate::driver::{self, Setup, Spawned};
use crate::preload::{NAMESPACE, TOOL};
use crate::work::{Rng, call};
use serde_json::json;
use std::time::Instant;

/// One throughput run.
#[derive(Debug, Clone)]
pub struct Rate {
    /// Requests per second over all clients.
    pub per_sec: f64,
    /// Calls answered with an error.
    pub errors: usize,
    /// The owner's CPU time per request (all requests), ms.
    pub owner_ms: f64,
    /// The followers' CPU time per relayed request, ms (0 with one client).
    pub follower_ms: f64,
    /// This benchmark process's CPU time per request (the clients' side), ms.
    pub client_ms: f64,
    /// The machine's load average (1 / 5 / 15 min) when the run ended.
    pub load: String,
}

impl Rate {
    /// The rate with its errors, as a table cell.
    pub fn cell(&self) -> String {
        let errors = if self.errors > 0 { format!(" ({} errors)", self.errors) } else { String::new() };
        format!(
            "{:.0}{errors}, CPU ms/request: owner {:.3}, follower {:.3}, client {:.3}",
            self.per_sec, self.owner_ms, self.follower_ms, self.client_ms
        )
    }
}

/// Runs `per` calls on each of `clients` clients against a store of `n` results (exact keys
/// `{"q": i}`); `first` is the owner, the other servers are spawned here and stopped after.
pub async fn run(setup: &Setup, first: &Spawned, clients: usize, per: usize, n: usize) -> anyhow::Result<Rate> {
    let mut extra = Vec::new();
    for _ in 1..clients.max(1) {
        extra.push(driver::spawn(setup).await?);
    }
    // Followers connect to the owner on their first call: do it now, outside the timed part.
    for s in &extra {
        s.ok("cache_stats", json!({})).await?;
    }
    let peers: Vec<_> =
        std::iter::once(first.client.peer().clone()).chain(extra.iter().map(|s| s.client.peer().clone())).collect();
    let follower_pids: Vec<u32> = extra.iter().map(Spawned::pid).collect();
    let (owner_cpu, follower_cpu, client_cpu) =
        (cpu_ms(first.pid()), follower_pids.iter().map(|p| cpu_ms(*p)).sum::<f64>(), self_cpu_ms());
    let started = Instant::now();
    let mut tasks = Vec::new();
    for (c, peer) in peers.into_iter().enumerate() {
        tasks.push(tokio::spawn(async move {
            let mut rng = Rng::new(c as u64 + 1);
            let mut errors = 0;
            for i in 0..per {
                let (tool, args) = if i % 5 == 4 {
                    let args = json!({"namespace": NAMESPACE, "tool": TOOL, "args": {"tp": format!("{clients}-{c}-{i}")}, "result": "x", "read_only": true});
                    ("response_cache_put", args)
                } else {
                    ("response_cache_get", json!({"namespace": NAMESPACE, "tool": TOOL, "args": {"q": rng.below(n.max(1) as u64)}}))
                };
                match call(&peer, tool, args).await {
                    Ok(r) if r.is_error != Some(true) => {}
                    _ => errors += 1,
                }
            }
            errors
        }));
    }
    let mut errors = 0;
    for t in tasks {
        errors += t.await?;
    }
    let elapsed = started.elapsed().as_secs_f64();
    let total = (clients.max(1) * per) as f64;
    let relayed = ((clients.max(1) - 1) * per).max(1) as f64;
    let followers_now = follower_pids.iter().map(|p| cpu_ms(*p)).sum::<f64>();
    Ok(Rate {
        per_sec: total / elapsed,
        errors,
        owner_ms: (cpu_ms(first.pid()) - owner_cpu) / total,
        follower_ms: if extra.is_empty() { 0.0 } else { (followers_now - follower_cpu) / relayed },
        client_ms: (self_cpu_ms() - client_cpu) / total,
        load: load_average(),
    })
}

/// The machine's load average over 1 / 5 / 15 minutes.
pub fn load_average() -> String {
    let s = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    s.split_whitespace().take(3).collect::<Vec<_>>().join(" / ")
}

/// CPU time a process has used, exited threads included, ms (/proc, 100 Hz ticks).
fn cpu_ms(pid: u32) -> f64 {
    stat_cpu_ms(&std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default())
}

fn self_cpu_ms() -> f64 {
    stat_cpu_ms(&std::fs::read_to_string("/proc/self/stat").unwrap_or_default())
}

/// utime + stime of a `/proc/<pid>/stat` line, ms.
fn stat_cpu_ms(stat: &str) -> f64 {
    let fields: Vec<&str> = stat.rsplit_once(')').map(|(_, r)| r.split_whitespace().collect()).unwrap_or_default();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) * 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_cpu_reads_user_and_system_ticks_after_the_name() {
        // A process name may hold spaces and parentheses; the fields count from the last ')'.
        let line = "42 (a (b) c) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0 1";
        assert_eq!(stat_cpu_ms(line), 3000.0);
    }
}
