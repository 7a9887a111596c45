//! Foundation figures: spawn-to-initialize time, idle peak memory with and without the model,
//! embedding latency, and vector index search latency at 10k and 100k entries.

use crate::driver::{self, Setup};
use crate::measure::{Row, Samples, markdown, peak_rss_mib};
use refrain::embed::{Embedder, FastEmbedder, ModelFiles, normalise};
use refrain::index::VectorIndex;
use refrain::store::Store;
use std::path::Path;
use std::time::Instant;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#;

/// Time from spawning `refrain serve` to reading its `initialize` answer.
pub async fn startup(setup: &Setup, runs: usize) -> anyhow::Result<Samples> {
    let mut s = Samples::default();
    for _ in 0..runs {
        let started = Instant::now();
        let mut child = driver::command(setup)?.spawn()?;
        let mut stdin = child.stdin.take().ok_or_else(|| anyhow::anyhow!("no stdin"))?;
        let stdout = child.stdout.take().ok_or_else(|| anyhow::anyhow!("no stdout"))?;
        stdin.write_all(INIT.as_bytes()).await?;
        stdin.write_all(b"\n").await?;
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).await?;
        s.push(started.elapsed());
        if !line.contains("\"refrain\"") {
            anyhow::bail!("unexpected initialize answer: {line}");
        }
        // Killed rather than closed: on a large store a graceful exit would first wait for the
        // index rebuild the owner started, which is not part of startup.
        drop(stdin);
        let _ = child.start_kill();
        let _ = child.wait().await;
    }
    Ok(s)
}

/// Peak resident memory of an idle server after the model settled.
pub async fn idle_memory(setup: &Setup) -> anyhow::Result<(String, f64)> {
    let s = driver::spawn(setup).await?;
    let state = s.wait_model().await?;
    let mib = peak_rss_mib(s.pid()).unwrap_or(f64::NAN);
    Ok((state, mib))
}

/// One-sentence embedding latency in process.
pub fn embedding(models: &Path, runs: usize) -> anyhow::Result<Samples> {
    let model = FastEmbedder::load(&ModelFiles::under(models), 1, 256)?;
    let mut s = Samples::default();
    for i in 0..runs {
        let text = format!("how do I add a --verbose flag number {i} to the command line parser in src/cli.rs");
        let started = Instant::now();
        model.embed(&[text.as_str()])?;
        s.push(started.elapsed());
    }
    Ok(s)
}

/// A pseudo-random unit vector (splitmix64).
pub fn random_unit(seed: u64, dim: usize) -> Vec<f32> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut v: Vec<f32> = (0..dim)
        .map(|_| {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((z ^ (z >> 31)) % 20_000) as f32 / 10_000.0 - 1.0
        })
        .collect();
    normalise(&mut v);
    v
}

/// Index search latency at `n` stored vectors (384-d), and the bulk build time (stored and
/// flushed, graph built with every core, in batches of 10k).
pub fn index_search(base: &Path, n: usize, queries: usize) -> anyhow::Result<(f64, Samples)> {
    let dir = base.join(format!("index-{n}"));
    let store = Store::open(&dir)?;
    let index = VectorIndex::open(&store, Some(&dir.join("graphs")))?;
    let started = Instant::now();
    for chunk in (0..n).collect::<Vec<_>>().chunks(10_000) {
        let items = chunk.iter().map(|&i| ((i as u64).to_be_bytes().to_vec(), random_unit(i as u64, 384))).collect();
        index.insert_many("bench", items)?;
    }
    store.flush()?;
    index.build_now("bench")?;
    let build = started.elapsed().as_secs_f64();
    let mut s = Samples::default();
    for q in 0..queries {
        let query = random_unit((q * 7919 % n) as u64, 384);
        let t = Instant::now();
        let hits = index.search("bench", &query, 10, 0.0)?;
        s.push(t.elapsed());
        if hits.is_empty() {
            anyhow::bail!("search found nothing at {n}");
        }
    }
    Ok((build, s))
}

/// Runs every foundation scenario and returns the Markdown table.
pub async fn run(base: &Path, models: &Path, large: bool) -> anyhow::Result<String> {
    let mut rows = Vec::new();
    let with = driver::scratch(base, "with-model", models)?;
    let without = driver::scratch(base, "without-model", &base.join("no-model"))?;
    let s = startup(&with, 30).await?;
    rows.push(Row {
        what: "spawn to initialize, model present (p50/p99/max ms)".into(),
        value: s.summary(),
        target: "< 50 ms".into(),
    });
    let s = startup(&without, 30).await?;
    rows.push(Row {
        what: "spawn to initialize, no model (p50/p99/max ms)".into(),
        value: s.summary(),
        target: "< 50 ms".into(),
    });
    let (state, mib) = idle_memory(&without).await?;
    rows.push(Row {
        what: format!("idle peak RSS, model {state}"),
        value: format!("{mib:.1} MiB"),
        target: String::new(),
    });
    let (state, mib) = idle_memory(&with).await?;
    rows.push(Row {
        what: format!("idle peak RSS, model {state}"),
        value: format!("{mib:.1} MiB"),
        target: String::new(),
    });
    let s = embedding(models, 300)?;
    rows.push(Row {
        what: "embed one sentence, in process (p50/p99/max ms)".into(),
        value: s.summary(),
        target: String::new(),
    });
    let sizes: &[usize] = if large { &[10_000, 100_000] } else { &[10_000] };
    for &n in sizes {
        let (build, s) = index_search(base, n, 1000)?;
        rows.push(Row {
            what: format!("index build, {n} vectors"),
            value: format!("{build:.1} s"),
            target: String::new(),
        });
        rows.push(Row {
            what: format!("index search k=10 at {n} (p50/p99/max ms)"),
            value: s.summary(),
            target: String::new(),
        });
    }
    Ok(markdown("foundation", &rows))
}
