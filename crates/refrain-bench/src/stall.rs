//! `refrain-bench stall`: does one slow request delay the others?
//!
//! Two `refrain serve` processes on one scratch project, the way two agents run it: the first owns
//! the store, the second follows it. Client A sends cheap requests (an exact `response_cache_get`
//! hit) to the owner and times each; client B keeps sending the slowest legal request through the
//! follower (a cache-break report over a long session transcript, which is quadratic work the
//! owner runs until its deadline). The report gives A's latency percentiles with B idle and with
//! B busy, and their ratio.

use anyhow::{Context, bail};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// Arguments of `refrain-bench stall`.
#[derive(Debug, clap::Args)]
pub struct StallArgs {
    /// Cheap requests timed per phase.
    #[arg(long, default_value_t = 1000)]
    requests: usize,
    /// Turns in the slow request's session transcript.
    #[arg(long, default_value_t = 6000)]
    turns: usize,
    /// The slow request's deadline (server.request_timeout_ms), in milliseconds.
    #[arg(long, default_value_t = 30_000)]
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

/// Times `n` exact hits; returns the latencies sorted.
async fn cheap_latencies(s: &mut Serve, n: usize) -> anyhow::Result<Vec<Duration>> {
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        let r = s.call("response_cache_get", json!({"tool": "Grep", "args": {"pattern": "bench"}})).await?;
        out.push(started.elapsed());
        if r["result"]["structuredContent"]["status"] != "hit" {
            bail!("the cheap request did not hit: {r}");
        }
    }
    out.sort();
    Ok(out)
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len().max(1)) - 1;
    sorted.get(i).copied().unwrap_or_default()
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Runs the benchmark and prints the report.
pub async fn run(args: StallArgs) -> anyhow::Result<()> {
    let scratch = std::env::temp_dir().join(format!("refrain-bench-stall-{}", std::process::id()));
    let (project, home) = (scratch.join("project"), scratch.join("home"));
    std::fs::create_dir_all(&project)?;
    std::fs::create_dir_all(&home)?;
    let transcript = project.join("long-session.jsonl");
    std::fs::write(&transcript, long_session(args.turns))?;

    let refrain = crate::driver::binary();
    let mut owner = Serve::start(&refrain, &project, &home, args.timeout_ms).await?;
    owner
        .call("response_cache_put", json!({"tool": "Grep", "args": {"pattern": "bench"}, "result": "bench result"}))
        .await?;
    let mut follower = Serve::start(&refrain, &project, &home, args.timeout_ms).await?;
    follower.call("cache_stats", json!({})).await?;

    cheap_latencies(&mut owner, args.requests.min(100)).await?; // warm up
    let idle = cheap_latencies(&mut owner, args.requests).await?;

    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = stop.clone();
    let slow_args = json!({"transcript": transcript});
    let slow = tokio::spawn(async move {
        let mut sent = Vec::new();
        while !flag.load(std::sync::atomic::Ordering::Relaxed) {
            let started = Instant::now();
            let r = follower.call("explain_cache_break", slow_args.clone()).await;
            sent.push((started.elapsed(), r.map(|v| v["result"]["isError"] == true).unwrap_or(true)));
        }
        sent
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let busy = cheap_latencies(&mut owner, args.requests).await?;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let slow_calls = slow.await?;

    let report = |name: &str, l: &[Duration]| {
        eprintln!(
            "{name:<26} p50 {:>8.2} ms  p90 {:>8.2} ms  p99 {:>8.2} ms  max {:>8.2} ms",
            ms(pct(l, 0.5)),
            ms(pct(l, 0.9)),
            ms(pct(l, 0.99)),
            ms(pct(l, 1.0))
        );
    };
    eprintln!("cheap request: exact response_cache_get hit, {} per phase", args.requests);
    eprintln!(
        "slow request: explain_cache_break over a {}-turn session, deadline {} ms; {} sent while timed, each {:.1} s on average ({} over budget)",
        args.turns,
        args.timeout_ms,
        slow_calls.len(),
        slow_calls.iter().map(|(d, _)| d.as_secs_f64()).sum::<f64>() / slow_calls.len().max(1) as f64,
        slow_calls.iter().filter(|(_, over)| *over).count()
    );
    report("idle", &idle);
    report("while slow requests run", &busy);
    eprintln!("p99 ratio busy/idle: {:.2}", ms(pct(&busy, 0.99)) / ms(pct(&idle, 0.99)).max(1e-9));
    drop(owner);
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}
