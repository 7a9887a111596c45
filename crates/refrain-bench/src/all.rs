//! `refrain-bench all`: one table of every figure users ask about, each taken by driving the real
//! binary over stdio the way an agent does, at several store sizes.
//!
//! Per size the store is filled in process (`preload`, graphs built and saved as a server would),
//! or, with `--keep`, reused when an earlier `--keep` run filled it (the table says so). Then:
//! the store's open time, spawn-to-initialize on that store, the first semantic
//! response_cache_get and the first plan_lookup after start (timed samples follow at once, with
//! no warm-up), the embedding time for reference, plan_lookup,
//! plan_store, response_cache_get (exact, semantic, stale), response_cache_put,
//! explain_cache_break and compact_preview on large inputs, throughput with 1, 4 and 16
//! concurrent clients (one server process each, as agents run them), the owner's peak memory
//! and the store's size on disk.

use crate::driver::{self, Spawned};
use crate::families::filler;
use crate::measure::{Samples, peak_rss_mib, rss_mib, status_mib};
use crate::preload::{self, Loaded, NAMESPACE, TOOL};
use crate::work::{Rng, call};
use refrain::project::Project;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The large inputs of the prompt tools (built by the caller from captured request shapes).
#[derive(Debug, Clone)]
pub struct PromptInputs {
    /// The earlier request.
    pub before: Value,
    /// The later request.
    pub after: Value,
    /// Estimated tokens of one request.
    pub tokens: u64,
    /// A Claude Code transcript's text.
    pub transcript: String,
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Opts {
    /// Store sizes (plans and results each).
    pub sizes: Vec<usize>,
    /// Timed calls per measure.
    pub samples: usize,
    /// Model directory.
    pub models: PathBuf,
    /// Concurrency levels for the throughput rows.
    pub clients: Vec<usize>,
    /// Keep each size's store afterwards (for a look at it, or a later run), instead of removing
    /// it; reuse one an earlier run kept.
    pub keep: bool,
    /// Create the stores without compression (as refrain did before), for comparison.
    pub plain: bool,
}

/// One measure across sizes.
struct Line {
    what: String,
    target: &'static str,
    values: Vec<String>,
}

/// Runs every size and renders the Markdown table.
pub async fn run(base: &Path, opts: &Opts, prompt: &PromptInputs) -> anyhow::Result<String> {
    let mut lines: Vec<Line> = Vec::new();
    for &n in &opts.sizes {
        let started = Instant::now();
        let rows = one_size(base, n, opts, prompt).await?;
        eprintln!("{n} entries measured in {:.0} s", started.elapsed().as_secs_f64());
        for (i, (what, target, value)) in rows.into_iter().enumerate() {
            if lines.len() <= i {
                lines.push(Line { what, target, values: Vec::new() });
            }
            lines[i].values.push(value);
        }
        if !opts.keep {
            let _ = std::fs::remove_dir_all(base.join(format!("size-{n}")));
        }
        // The sizes so far, on stderr: a run that fails at a later size (1M: the longest) keeps
        // the columns it measured.
        let done = &opts.sizes[..lines.first().map_or(0, |l| l.values.len())];
        eprintln!("table so far:\n{}", render(&lines, done));
    }
    Ok(render(&lines, &opts.sizes))
}

/// The Markdown table of `lines`, one column per size.
fn render(lines: &[Line], sizes: &[usize]) -> String {
    let mut out = String::from("| measure |");
    sizes.iter().for_each(|n| out.push_str(&format!(" {} |", human(*n))));
    out.push_str(" target |\n|---|");
    sizes.iter().for_each(|_| out.push_str("---|"));
    out.push_str("---|\n");
    for l in lines {
        out.push_str(&format!("| {} | {} | {} |\n", l.what, l.values.join(" | "), l.target));
    }
    out
}

fn human(n: usize) -> String {
    if n >= 1000 && n.is_multiple_of(1000) { format!("{}k entries", n / 1000) } else { format!("{n} entries") }
}

type Row = (String, &'static str, String);

/// One measure; also printed to stderr at once, so a long run that is stopped still tells what it
/// had measured.
fn row(what: &str, target: &'static str, value: String) -> Row {
    eprintln!("| {what} | {value} |");
    (what.to_string(), target, value)
}

async fn one_size(base: &Path, n: usize, opts: &Opts, prompt: &PromptInputs) -> anyhow::Result<Vec<Row>> {
    let setup = driver::scratch(base, &format!("size-{n}"), &opts.models)?;
    let project = Project::at(setup.project.clone(), &setup.home);
    let t = Instant::now();
    let cpu = process_cpu_s();
    let marker = setup.home.join(preload::PRELOADED);
    let reused = opts.keep && marker.exists();
    let loaded = if reused {
        preload::reuse(&project, n, 200, opts.samples)?
    } else {
        let loaded = preload::fill(&project, &opts.models, n, 200, opts.samples, opts.plain)?;
        if opts.keep {
            std::fs::write(&marker, b"")?;
        }
        loaded
    };
    let preloaded = if reused {
        "not run: the store kept by an earlier `all --keep` run was reused (its expired results written again)"
            .to_string()
    } else {
        format!("{:.1} / {:.1}", t.elapsed().as_secs_f64(), process_cpu_s() - cpu)
    };
    let mut rows = vec![
        row("machine load average after the preload (1 / 5 / 15 min)", "", crate::throughput::load_average()),
        row("preload in process: plans + results, graphs built and saved (wall s / CPU s)", "", preloaded),
    ];
    // Timed from the attempt that gets the store (sled's flusher may hold its lock a moment after
    // the preload's or the reuse's last handle went).
    let mut attempts = 0;
    let opened = loop {
        let t = Instant::now();
        match refrain::store::Store::open(&project.db_dir()) {
            Ok(store) => {
                refrain::index::VectorIndex::open(&store, Some(&project.index_dir()))?;
                break t.elapsed();
            }
            Err(refrain::store::Error::Locked { .. }) if attempts < 600 => {
                attempts += 1;
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            Err(e) => return Err(e.into()),
        }
    };
    rows.push(row(
        "store open in process: sled + index handle, scopes load on first use (ms)",
        "",
        format!("{:.1}", opened.as_secs_f64() * 1000.0),
    ));
    let s = crate::core::startup(&setup, 10).await?;
    rows.push(row("spawn to initialize (p50 / p99 / max ms)", "< 50 ms", s.summary()));
    let transcript = setup.project.join("session.jsonl");
    std::fs::write(&transcript, &prompt.transcript)?;
    let server = driver::spawn(&setup).await?;
    server.wait_model().await?;
    let t = Instant::now();
    server.ok("response_cache_get", json!({"namespace": NAMESPACE, "tool": TOOL, "query": loaded.real[0]})).await?;
    rows.push(row(
        "first semantic response_cache_get after start, model loaded, scope loaded from its saved graph (ms)",
        "< 1 s",
        format!("{:.1}", t.elapsed().as_secs_f64() * 1000.0),
    ));
    // The query above is found by its stored text, without the index; a reworded one is looked
    // up by meaning, which loads the results scope.
    let t = Instant::now();
    let reworded = format!("{}, please", loaded.real[1 % loaded.real.len()]);
    server.ok("response_cache_get", json!({"namespace": NAMESPACE, "tool": TOOL, "query": reworded})).await?;
    rows.push(row(
        "first response_cache_get by meaning after start (a reworded query: embedded, results scope loaded and searched) (ms)",
        "< 1 s",
        format!("{:.1}", t.elapsed().as_secs_f64() * 1000.0),
    ));
    let t = Instant::now();
    server.ok("plan_lookup", json!({"task": filler(0).0})).await?;
    rows.push(row("first plan_lookup after start (ms)", "< 1 s", format!("{:.1}", t.elapsed().as_secs_f64() * 1000.0)));
    let e = crate::core::embedding(&opts.models, 50)?;
    rows.push(row("embed one sentence in process, for reference (p50 / p99 / max ms)", "", e.summary()));
    rows.extend(tools(&server, &loaded, opts.samples).await?);
    let mib = |field: &str| status_mib(server.pid(), field).unwrap_or(f64::NAN);
    rows.push(row(
        "server RSS after the lookups and writes above, model loaded, both scopes loaded (now / peak MiB)",
        "< 300 MB",
        format!(
            "{:.0} / {:.0}",
            rss_mib(server.pid()).unwrap_or(f64::NAN),
            peak_rss_mib(server.pid()).unwrap_or(f64::NAN)
        ),
    ));
    // File-backed pages (a mapped saved graph, the model's file) are page cache the kernel can
    // drop and read again; anonymous ones are the heap.
    rows.push(row(
        "that RSS split: anonymous (heap) / file-backed (mapped files, reclaimable page cache) (MiB)",
        "",
        format!("{:.0} / {:.0}", mib("RssAnon:"), mib("RssFile:")),
    ));
    rows.extend(prompt_rows(&server, prompt, &transcript).await?);
    for &c in &opts.clients {
        let rate = crate::throughput::run(&setup, &server, c, opts.samples, n).await?;
        rows.push(row(
            &format!("throughput, {c} concurrent client(s), 80% exact get / 20% put (requests/s, CPU per request)"),
            "",
            rate.cell(),
        ));
    }
    let stats = server.ok("cache_stats", json!({})).await?;
    rows.push(row(
        "server peak RSS over the whole run, 10 MB transcript and 16 clients included (MiB)",
        "",
        format!("{:.0}", peak_rss_mib(server.pid()).unwrap_or(f64::NAN)),
    ));
    rows.push(row(
        "store size on disk (MiB)",
        "",
        format!("{:.1}", stats["store_bytes"].as_u64().unwrap_or(0) as f64 / 1_048_576.0),
    ));
    let mut server = server;
    server.child.kill().await?;
    let (shares, disk) = crate::trees::shares(&project.db_dir())?;
    let data: u64 = shares.iter().map(|s| s.bytes).sum();
    let per = |b: u64| b as f64 / (2 * n.max(1)) as f64;
    rows.push(row(
        "bytes per entry (plan or result) on disk / in keys + values (B)",
        "< 2.5 KB on disk",
        format!("{:.0} / {:.0}", per(disk), per(data)),
    ));
    let top: Vec<String> = shares
        .iter()
        .take(6)
        .map(|s| format!("{} {:.1} MiB ({} records)", s.tree, s.bytes as f64 / 1_048_576.0, s.records))
        .collect();
    rows.push(row("keys + values by tree, largest first", "", top.join(", ")));
    rows.push(row(
        "machine load average at the end of this size (1 / 5 / 15 min)",
        "",
        crate::throughput::load_average(),
    ));
    Ok(rows)
}

/// Times `samples` calls; `good` says whether an answer is the expected one. Returns the
/// summary with the count of expected answers and the server's own CPU time per call (which a
/// busy machine does not inflate the way it inflates latency).
async fn timed(
    server: &Spawned,
    samples: usize,
    mut args: impl FnMut(usize) -> (&'static str, Value),
    good: impl Fn(&Value) -> bool,
) -> anyhow::Result<String> {
    let mut s = Samples::default();
    let mut hits = 0;
    let cpu = cpu_ns(server.pid());
    for k in 0..samples {
        let (tool, a) = args(k);
        let t = Instant::now();
        let r = call(server.client.peer(), tool, a).await?;
        s.push(t.elapsed());
        let out = r.structured_content.unwrap_or(Value::Null);
        hits += usize::from(r.is_error != Some(true) && good(&out));
    }
    let cpu = cpu_ns(server.pid()).saturating_sub(cpu) as f64 / 1e6 / samples.max(1) as f64;
    Ok(format!("{} ({hits}/{samples}), server CPU {cpu:.2} ms/call", s.summary()))
}

/// CPU seconds this process has used, finished threads included (/proc/self/stat, 100 Hz ticks).
pub fn process_cpu_s() -> f64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let fields: Vec<&str> = s.rsplit_once(')').map(|(_, r)| r.split_whitespace().collect()).unwrap_or_default();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

/// CPU time a process's live threads have run, ns (from /proc, scheduler accounting).
fn cpu_ns(pid: u32) -> u64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return 0 };
    tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()))
        .sum()
}

async fn tools(server: &Spawned, loaded: &Loaded, samples: usize) -> anyhow::Result<Vec<Row>> {
    let n = loaded.n.max(1) as u64;
    let mut rng = Rng::new(0xB0B);
    let mut rows = Vec::new();
    let hit = |v: &Value| v["status"] == "hit";
    let v = timed(server, samples, |_| ("plan_lookup", json!({"task": filler(rng.below(n) as usize).0})), hit).await?;
    rows.push(row("plan_lookup, stored task (p50 / p99 / max ms, hits)", "5 / 15 ms at 100k + embedding", v));
    let v = timed(
        server,
        samples,
        |k| {
            let (task, template) = filler(loaded.n + 10_000 + k);
            ("plan_store", json!({"task": task, "template": template}))
        },
        |v| v["plan_id"].is_string(),
    )
    .await?;
    rows.push(row("plan_store, new plan, flushed (p50 / p99 / max ms, stored)", "", v));
    let mut rng = Rng::new(0xCAFE);
    let v = timed(
        server,
        samples,
        |_| ("response_cache_get", json!({"namespace": NAMESPACE, "tool": TOOL, "args": {"q": rng.below(n)}})),
        hit,
    )
    .await?;
    rows.push(row("response_cache_get exact (p50 / p99 / max ms, hits)", "< 0.3 ms p50", v));
    let real = &loaded.real;
    let v = timed(
        server,
        samples,
        |k| ("response_cache_get", json!({"namespace": NAMESPACE, "tool": TOOL, "query": real[k % real.len()]})),
        hit,
    )
    .await?;
    rows.push(row("response_cache_get semantic (p50 / p99 / max ms, hits)", "embedding + 1 ms p50", v));
    let v = timed(
        server,
        samples.min(loaded.stale),
        |k| ("response_cache_get", json!({"namespace": NAMESPACE, "tool": TOOL, "args": {"stale": k}})),
        |v| v["status"] == "miss" && v["stale"] == true,
    )
    .await?;
    rows.push(row("response_cache_get stale: expired entry evicted (p50 / p99 / max ms, stale misses)", "", v));
    let v = timed(
        server,
        samples,
        |k| {
            let args = json!({"namespace": NAMESPACE, "tool": TOOL, "args": {"put": k}, "result": format!("put {k}"), "read_only": true});
            ("response_cache_put", args)
        },
        |v| v["stored"] == true,
    )
    .await?;
    rows.push(row("response_cache_put, flushed (p50 / p99 / max ms, stored)", "< 1 ms p50", v));
    Ok(rows)
}

async fn prompt_rows(server: &Spawned, prompt: &PromptInputs, transcript: &Path) -> anyhow::Result<Vec<Row>> {
    let runs = 10;
    let v = timed(
        server,
        runs,
        |_| ("explain_cache_break", json!({"before": prompt.before, "after": prompt.after})),
        |v| v["report"].is_object(),
    )
    .await?;
    let what =
        format!("explain_cache_break, two requests of ~{}k tokens (p50 / p99 / max ms, ok)", prompt.tokens / 1000);
    let mut rows = vec![row(&what, "< 50 ms", v)];
    let v = timed(
        server,
        runs,
        |_| ("compact_preview", json!({"transcript": transcript, "preset": "anthropic_clear_tool_uses"})),
        |v| v.is_object(),
    )
    .await?;
    let what =
        format!("compact_preview, {} MB transcript (p50 / p99 / max ms, ok)", prompt.transcript.len() / 1_000_000);
    rows.push(row(&what, "< 300 ms", v));
    Ok(rows)
}
