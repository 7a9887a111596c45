//! `refrain-bench stall`: does one slow request delay the others?
//!
//! Two `refrain serve` processes on one scratch project, the way two agents run it: the first owns
//! the store, the second follows it. Client A sends cheap requests (an exact `response_cache_get`
//! hit) to the owner back to back and times each; client B sends the slowest legal request through
//! the follower (a cache-break report over a long session transcript, quadratic work the owner
//! runs until its deadline). Idle and busy windows alternate in one run: B idle for a window, then
//! one slow request in flight, then idle again. Both phases therefore see the same machine load,
//! which on a shared machine drifts far more between runs than one slow request changes anything.
//! A cheap request counts for the phase it started in; those that start between windows count for
//! neither. The report gives each phase's p50 / p99 / p99.9 per run, the busy/idle ratios, their
//! spread over the runs, and the load average around each run.

use anyhow::{Context, bail};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// Arguments of `refrain-bench stall`.
#[derive(Debug, clap::Args)]
pub struct StallArgs {
    /// Runs, each with fresh servers and store.
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Idle/busy window pairs per run.
    #[arg(long, default_value_t = 6)]
    rounds: usize,
    /// Length of an idle window, in milliseconds (a busy window lasts one slow request).
    #[arg(long, default_value_t = 5_000)]
    idle_ms: u64,
    /// Turns in the slow request's session transcript.
    #[arg(long, default_value_t = 6000)]
    turns: usize,
    /// The slow request's deadline (server.request_timeout_ms), in milliseconds. The slow request
    /// runs until it; a call gives way 50 ms after it starts whatever its deadline, so a shorter
    /// deadline only makes windows shorter (and counts a slow call's first 50 ms more often).
    #[arg(long, default_value_t = 5_000)]
    timeout_ms: u64,
}

/// One `refrain serve` over stdio, spoken to line by line.
struct Serve {
    _child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: u64,
}

impl Serve {
    async fn start(bin: &Path, project: &Path, home: &Path, timeout_ms: u64) -> anyhow::Result<Serve> {
        let mut child = Command::new(bin)
            .args(["serve", "--project"])
            .arg(project)
            .env("REFRAIN_HOME", home)
            .env("REFRAIN__MODEL__ENABLED", "false")
            .env("REFRAIN__SERVER__REQUEST_TIMEOUT_MS", timeout_ms.to_string())
            .env("REFRAIN_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("cannot run {}", bin.display()))?;
        let stdin = child.stdin.take().context("stdin")?;
        let lines = BufReader::new(child.stdout.take().context("stdout")?).lines();
        let mut s = Serve { _child: child, stdin, lines, next_id: 1 };
        s.request("initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "refrain-bench", "version": "0"}})).await?;
        s.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await?;
        Ok(s)
    }

    async fn send(&mut self, v: Value) -> anyhow::Result<()> {
        let mut line = v.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).await?;
        self.stdin.flush().await?;
        Ok(())
    }

    async fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})).await?;
        loop {
            let line = tokio::time::timeout(Duration::from_secs(120), self.lines.next_line())
                .await
                .context("no answer within 120 s")??
                .context("the server closed its output")?;
            let v: Value = serde_json::from_str(&line).with_context(|| format!("not JSON: {line}"))?;
            if v["id"] == id {
                return Ok(v);
            }
        }
    }

    async fn call(&mut self, tool: &str, args: Value) -> anyhow::Result<Value> {
        self.request("tools/call", json!({"name": tool, "arguments": args})).await
    }
}

/// A Claude Code session with `turns` requests.
fn long_session(turns: usize) -> String {
    let mut out = String::new();
    for i in 0..turns {
        let user = json!({"type": "user", "isSidechain": false, "message": {"role": "user", "content": format!("question {i}")}});
        let assistant = json!({"type": "assistant", "isSidechain": false, "message": {"id": format!("m{i}"), "role": "assistant",
            "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": format!("answer {i}")}]}});
        out.push_str(&format!("{user}\n{assistant}\n"));
    }
    out
}

const NEITHER: u8 = 0;
const IDLE: u8 = 1;
const BUSY: u8 = 2;

/// Client A: exact hits back to back until `stop`; latencies of those started in each phase.
async fn cheap_loop(
    mut s: Serve,
    phase: Arc<AtomicU8>,
    stop: Arc<AtomicBool>,
) -> anyhow::Result<(Vec<Duration>, Vec<Duration>)> {
    let (mut idle, mut busy) = (Vec::new(), Vec::new());
    while !stop.load(Ordering::Relaxed) {
        let p = phase.load(Ordering::Relaxed);
        let started = Instant::now();
        let r = s.call("response_cache_get", json!({"tool": "Grep", "args": {"pattern": "bench"}})).await?;
        let took = started.elapsed();
        if r["result"]["structuredContent"]["status"] != "hit" {
            bail!("the cheap request did not hit: {r}");
        }
        match p {
            IDLE => idle.push(took),
            BUSY => busy.push(took),
            _ => {}
        }
    }
    idle.sort();
    busy.sort();
    Ok((idle, busy))
}

fn pct(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len().max(1)) - 1;
    sorted.get(i).copied().unwrap_or_default().as_secs_f64() * 1000.0
}

fn load_average() -> String {
    let s = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    s.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
}

/// One run's figures.
struct RunFigures {
    idle: Vec<Duration>,
    busy: Vec<Duration>,
    slow: Vec<(Duration, bool)>,
    load: (String, String),
}

impl RunFigures {
    fn ratio(&self, p: f64) -> f64 {
        pct(&self.busy, p) / pct(&self.idle, p).max(1e-9)
    }
}

/// One run: fresh servers, `rounds` idle/busy window pairs.
async fn one_run(args: &StallArgs, scratch: &Path, transcript: &Path) -> anyhow::Result<RunFigures> {
    let (project, home) = (scratch.join("project"), scratch.join("home"));
    std::fs::create_dir_all(&project)?;
    std::fs::create_dir_all(&home)?;
    let transcript_here = project.join("long-session.jsonl");
    std::fs::copy(transcript, &transcript_here)?;
    let refrain = crate::driver::binary();
    let mut owner = Serve::start(&refrain, &project, &home, args.timeout_ms).await?;
    owner
        .call("response_cache_put", json!({"tool": "Grep", "args": {"pattern": "bench"}, "result": "bench result"}))
        .await?;
    let mut follower = Serve::start(&refrain, &project, &home, args.timeout_ms).await?;
    follower.call("cache_stats", json!({})).await?;
    for _ in 0..200 {
        owner.call("response_cache_get", json!({"tool": "Grep", "args": {"pattern": "bench"}})).await?; // warm up
    }

    let load_before = load_average();
    let (phase, stop) = (Arc::new(AtomicU8::new(NEITHER)), Arc::new(AtomicBool::new(false)));
    let cheap = tokio::spawn(cheap_loop(owner, phase.clone(), stop.clone()));
    let slow_args = json!({"transcript": transcript_here});
    let mut slow = Vec::new();
    for _ in 0..args.rounds {
        phase.store(IDLE, Ordering::Relaxed);
        tokio::time::sleep(Duration::from_millis(args.idle_ms)).await;
        phase.store(BUSY, Ordering::Relaxed);
        let started = Instant::now();
        let r = follower.call("explain_cache_break", slow_args.clone()).await;
        slow.push((started.elapsed(), r.map(|v| v["result"]["isError"] == true).unwrap_or(true)));
        // The slow call's thread retires as it answers; the next idle window starts after that.
        phase.store(NEITHER, Ordering::Relaxed);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    stop.store(true, Ordering::Relaxed);
    let (idle, busy) = cheap.await??;
    Ok(RunFigures { idle, busy, slow, load: (load_before, load_average()) })
}

fn spread(mut v: Vec<f64>) -> String {
    v.sort_by(f64::total_cmp);
    let median = v.get(v.len() / 2).copied().unwrap_or(0.0);
    format!(
        "min {:.2}  median {:.2}  max {:.2}",
        v.first().copied().unwrap_or(0.0),
        median,
        v.last().copied().unwrap_or(0.0)
    )
}

/// Runs the benchmark and prints the report.
pub async fn run(args: StallArgs) -> anyhow::Result<()> {
    let scratch = std::env::temp_dir().join(format!("refrain-bench-stall-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let transcript = scratch.join("long-session.jsonl");
    std::fs::write(&transcript, long_session(args.turns))?;
    eprintln!(
        "cheap request: exact response_cache_get hit on the owner, back to back; slow request: explain_cache_break over a {}-turn session through the follower, deadline {} ms",
        args.turns, args.timeout_ms
    );
    eprintln!(
        "{} runs of {} rounds: {} ms idle, then one slow request in flight (busy); the phases alternate within each run",
        args.runs, args.rounds, args.idle_ms
    );
    let mut runs = Vec::new();
    for i in 0..args.runs {
        let dir = scratch.join(format!("run{i}"));
        let f = one_run(&args, &dir, &transcript).await.with_context(|| format!("run {}", i + 1))?;
        let _ = std::fs::remove_dir_all(&dir);
        let line = |l: &[Duration]| {
            format!(
                "n {:>6}  p50 {:>6.2}  p99 {:>6.2}  p99.9 {:>6.2}  max {:>7.2} ms",
                l.len(),
                pct(l, 0.5),
                pct(l, 0.99),
                pct(l, 0.999),
                pct(l, 1.0)
            )
        };
        let over = f.slow.iter().filter(|(_, over)| *over).count();
        let secs = f.slow.iter().map(|(d, _)| d.as_secs_f64()).sum::<f64>() / f.slow.len().max(1) as f64;
        eprintln!(
            "run {}: load 1/5/15 min {} -> {}; slow requests {} ({} at their deadline), {:.1} s each",
            i + 1,
            f.load.0,
            f.load.1,
            f.slow.len(),
            over,
            secs
        );
        eprintln!("  idle  {}", line(&f.idle));
        eprintln!("  busy  {}", line(&f.busy));
        eprintln!("  busy/idle  p50 {:.2}  p99 {:.2}  p99.9 {:.2}", f.ratio(0.5), f.ratio(0.99), f.ratio(0.999));
        runs.push(f);
    }
    let within = runs.iter().filter(|f| f.ratio(0.99) <= 2.0).count();
    eprintln!("over {} runs:", runs.len());
    eprintln!("  idle p99        {}", spread(runs.iter().map(|f| pct(&f.idle, 0.99)).collect()));
    eprintln!("  busy p99        {}", spread(runs.iter().map(|f| pct(&f.busy, 0.99)).collect()));
    eprintln!("  busy/idle p50   {}", spread(runs.iter().map(|f| f.ratio(0.5)).collect()));
    eprintln!("  busy/idle p99   {}", spread(runs.iter().map(|f| f.ratio(0.99)).collect()));
    eprintln!("  busy/idle p99.9 {}", spread(runs.iter().map(|f| f.ratio(0.999)).collect()));
    eprintln!("  p99 within 2x of idle in {within} of {} runs", runs.len());
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}
