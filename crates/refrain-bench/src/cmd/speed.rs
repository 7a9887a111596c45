//! `refrain-bench results` speed part: the real binary over stdio, at several store sizes.
//!
//! Each size gets a fresh home and project. The store is filled in process first (most entries
//! exact-only and written in bulk; `--semantic-entries` of them through the real put path with an
//! embedded query, taken from GPTCache's pairs), then `refrain serve` is started and timed with
//! plain JSON-RPC lines: exact hits, semantic hits, flushed puts, a get whose entry depends on
//! 100 files, and `plan_lookup` over 200 stored plans; the semantic get and `plan_lookup` each
//! beside their text's embedding alone. The in-process freshness check of 100 files is timed on
//! its own too.

use super::GlobalArgs;
use anyhow::{Context, bail};
use refrain::app::App;
use refrain::embed::{Embedder, FastEmbedder, ModelFiles};
use refrain::results::entry::{self, Entry, now_ms};
use refrain::results::{PutRequest, fresh, key};
use refrain::store::Store;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

/// What the speed part measures.
#[derive(Debug, Clone)]
pub struct Opts {
    /// GPTCache's pairs (their origins are stored with embedded queries, the paraphrases looked up).
    pub data: std::path::PathBuf,
    /// Store sizes.
    pub sizes: Vec<usize>,
    /// Entries per size that carry an embedding.
    pub semantic_entries: usize,
    /// Timed calls per measurement.
    pub samples: usize,
}

/// Runs the speed benchmark and prints its table.
pub fn run(global: &GlobalArgs, args: &Opts) -> anyhow::Result<()> {
    let queries: Vec<(String, String)> = match std::fs::read(&args.data) {
        Ok(b) => serde_json::from_slice::<Vec<Value>>(&b)?
            .iter()
            .filter_map(|p| Some((p.get("origin")?.as_str()?.to_string(), p.get("similar")?.as_str()?.to_string())))
            .collect(),
        Err(_) => Vec::new(),
    };
    let model_dir = global.model_dir.clone().or_else(|| std::env::var_os("REFRAIN_MODEL_DIR").map(Into::into));
    let mut out = std::io::stdout().lock();
    writeln!(out, "## Result cache speed over stdio (real binary, one client, ms per call: p50 / p99)\n")?;
    writeln!(
        out,
        "| entries | exact hit | semantic hit | its embedding alone (in process) | semantic p50 minus embedding p50 | put (flushed) | get, entry on 100 files | freshness check of 100 files (in process) | plan_lookup ({PLANS} plans) | its embedding alone | plan_lookup p50 minus embedding p50 |"
    )?;
    writeln!(out, "|---|---|---|---|---|---|---|---|---|---|---|")?;
    for &n in &args.sizes {
        let row = one_size(n, args, &queries, model_dir.as_deref())?;
        writeln!(out, "| {n} | {} |", row.join(" | "))?;
        out.flush()?;
    }
    writeln!(
        out,
        "\n{} entries per size carry an embedded query (GPTCache origins); the rest are exact-only, written in bulk.",
        args.semantic_entries.min(queries.len())
    )?;
    Ok(())
}

/// Plans stored for the `plan_lookup` timing (GPTCache origins as tasks, one shell step each).
const PLANS: usize = 200;

/// The p50 gap between two samples, formatted.
fn gap(a: &[f64], b: &[f64]) -> String {
    match (quantile(a, 0.5), quantile(b, 0.5)) {
        (Some(a), Some(b)) => format!("{:.3}", a - b),
        _ => "n/a".into(),
    }
}

/// The q-th quantile (0..=1) of `v`, by nearest rank; None when there are no samples.
fn quantile(v: &[f64], q: f64) -> Option<f64> {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v.get(((v.len().checked_sub(1)?) as f64 * q).round() as usize).copied()
}

fn fmt(v: Vec<f64>) -> String {
    match (quantile(&v, 0.5), quantile(&v, 0.99)) {
        (Some(p50), Some(p99)) => format!("{p50:.3} / {p99:.3}"),
        _ => "n/a".into(),
    }
}

fn one_size(
    n: usize,
    args: &Opts,
    queries: &[(String, String)],
    model_dir: Option<&Path>,
) -> anyhow::Result<Vec<String>> {
    let tmp = std::env::temp_dir().join(format!("refrain-bench-{}-{n}", std::process::id()));
    let (home, project) = (tmp.join("home"), tmp.join("project"));
    std::fs::create_dir_all(&project)?;
    // Files last modified an hour ago, as most of a project is (recently written files are
    // re-hashed on every check; see results::fresh::RACY_NS).
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    for i in 0..100 {
        let f = project.join(format!("f{i}.rs"));
        std::fs::write(&f, format!("// file {i}\n"))?;
        std::fs::File::options().write(true).open(&f)?.set_modified(hour_ago)?;
    }
    let semantic = args.semantic_entries.min(queries.len()).min(n);
    fill(&home, &project, model_dir, n, &queries[..semantic])?;
    let fresh_row = freshness_in_process(&project, args.samples)?;
    let mut srv = Server::start(&home, &project, model_dir)?;
    let mut rng = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = |m: usize| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        (rng % m as u64) as usize
    };
    let mut exact = Vec::new();
    for _ in 0..args.samples {
        let i = next(n);
        let (ms, v) =
            srv.call("response_cache_get", json!({"tool": "Read", "args": {"file_path": format!("bench/{i}.rs")}}))?;
        if v["structuredContent"]["status"] == "hit" {
            exact.push(ms);
        }
    }
    let (mut sem, mut alone) = (Vec::new(), Vec::new());
    // The embedding alone, side by side: the same model, runtime and thread count as the server,
    // in this process, on the same text right after each get (so both see the same load).
    let embedder = match model_dir {
        Some(d) => Some(FastEmbedder::load(&ModelFiles::under(d), 1, 256)?),
        None => None,
    };
    // Each paraphrase once: a text sent twice would be served from the recent-vector memory and
    // measure no embedding at all.
    for (s, (_, q)) in queries.iter().take(args.samples.min(semantic)).enumerate() {
        let (ms, v) = srv.call("response_cache_get", json!({"tool": "WebSearch", "query": q}))?;
        if v["structuredContent"]["status"] == "hit" && s > 0 {
            sem.push(ms);
            if let Some(e) = &embedder {
                let t = Instant::now();
                e.embed(&[q.as_str()])?;
                alone.push(t.elapsed().as_secs_f64() * 1000.0);
            }
        }
    }
    let get_gap = gap(&sem, &alone);
    let mut puts = Vec::new();
    for i in 0..args.samples {
        let (ms, v) = srv.call(
            "response_cache_put",
            json!({"tool": "Read", "args": {"file_path": format!("new/{i}.rs")}, "result": "fn x() {}"}),
        )?;
        if v["structuredContent"]["stored"] == true {
            puts.push(ms);
        }
    }
    let files: Vec<String> = (0..100).map(|i| format!("f{i}.rs")).collect();
    srv.call(
        "response_cache_put",
        json!({"tool": "Grep", "args": {"pattern": "file"}, "result": "100 matches", "files": files}),
    )?;
    let mut dep100 = Vec::new();
    for _ in 0..args.samples {
        let (ms, v) = srv.call("response_cache_get", json!({"tool": "Grep", "args": {"pattern": "file"}}))?;
        if v["structuredContent"]["status"] == "hit" {
            dep100.push(ms);
        }
    }
    let (plans, plans_alone) = plan_lookups(&mut srv, queries, args.samples, embedder.as_ref())?;
    let plan_gap = gap(&plans, &plans_alone);
    drop(srv);
    let _ = std::fs::remove_dir_all(&tmp);
    Ok(vec![
        fmt(exact),
        fmt(sem),
        fmt(alone),
        get_gap,
        fmt(puts),
        fmt(dep100),
        fresh_row,
        fmt(plans),
        fmt(plans_alone),
        plan_gap,
    ])
}

/// Stores `PLANS` plans over stdio (GPTCache origins as tasks) and times `plan_lookup` of their
/// paraphrases, each with "please " in front (a text the server has not embedded yet), beside the
/// same text's embedding alone in this process. A lookup that misses is timed too: it does the same
/// work.
fn plan_lookups(
    srv: &mut Server,
    queries: &[(String, String)],
    samples: usize,
    embedder: Option<&FastEmbedder>,
) -> anyhow::Result<(Vec<f64>, Vec<f64>)> {
    let (mut timed, mut alone) = (Vec::new(), Vec::new());
    let plans = &queries[..PLANS.min(queries.len())];
    for (i, (origin, _)) in plans.iter().enumerate() {
        let trace =
            json!({"steps": [{"tool": "Bash", "inputs": {"command": format!("echo {i}")}, "side_effect": false}]});
        srv.call("plan_store", json!({"task": origin, "trace": trace}))?;
    }
    for (s, (_, q)) in plans.iter().take(samples).enumerate() {
        let task = format!("please {q}");
        let (ms, _) = srv.call("plan_lookup", json!({"task": task}))?;
        if s == 0 {
            continue;
        }
        timed.push(ms);
        if let Some(e) = embedder {
            let t = Instant::now();
            e.embed(&[task.as_str()])?;
            alone.push(t.elapsed().as_secs_f64() * 1000.0);
        }
    }
    Ok((timed, alone))
}

/// Fills the store: `n` exact-only `Read` entries written in bulk, plus `semantic` WebSearch
/// entries through the real put path (embedding their queries).
fn fill(
    home: &Path,
    project: &Path,
    model_dir: Option<&Path>,
    n: usize,
    semantic: &[(String, String)],
) -> anyhow::Result<()> {
    let mut config = refrain::config::Config::default();
    config.store.home = Some(home.to_path_buf());
    config.model.dir = model_dir.map(Path::to_path_buf);
    let project = refrain::project::Project::at(project.canonicalize()?, home);
    project.prepare()?;
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    rt.block_on(async move {
        let store = Store::open(&project.db_dir())?;
        let now = now_ms();
        for i in 0..n {
            let args = json!({"file_path": format!("bench/{i}.rs")});
            let k = key::exact_key("default", "Read", &args);
            let e = Entry {
                key: k,
                namespace: "default".into(),
                tool: "Read".into(),
                args,
                query: None,
                result: json!(format!("// contents of bench/{i}.rs\nfn f{i}() {{}}\n")),
                created_ms: now,
                expires_ms: now + 86_400_000,
                deps: Vec::new(),
                vector: None,
                bytes: 40,
            };
            entry::write(&store, &e)?;
        }
        store.flush_async().await?;
        let app = App::start(config, project, store);
        for (i, (origin, _)) in semantic.iter().enumerate() {
            let req = PutRequest {
                tool: "WebSearch".into(),
                args: json!({"query": origin, "n": i}),
                result: json!(format!("answer {i}")),
                query: Some(origin.clone()),
                ..Default::default()
            };
            refrain::results::put(&app, req).await?;
        }
        app.index().await?;
        app.store.flush_async().await?;
        Ok::<_, anyhow::Error>(())
    })?;
    rt.shutdown_timeout(std::time::Duration::from_secs(2));
    Ok(())
}

fn freshness_in_process(project: &Path, samples: usize) -> anyhow::Result<String> {
    let deps: Vec<fresh::Dep> =
        (0..100).map(|i| fresh::capture_file(&project.join(format!("f{i}.rs")))).collect::<Result<_, _>>()?;
    let mut v = Vec::new();
    for _ in 0..samples {
        let t = Instant::now();
        if fresh::check(&deps, project, &mut fresh::Checked::default()).is_err() {
            bail!("benchmark files changed during the run");
        }
        v.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    Ok(fmt(v))
}

/// `refrain serve` over stdio, spoken to with JSON-RPC lines.
struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    id: u64,
}

impl Server {
    fn start(home: &Path, project: &Path, model_dir: Option<&Path>) -> anyhow::Result<Server> {
        let exe = crate::driver::binary();
        let mut cmd = Command::new(exe);
        cmd.arg("--home").arg(home).arg("--project").arg(project);
        if let Some(m) = model_dir {
            cmd.arg("--model-dir").arg(m);
        }
        let mut child = cmd.arg("serve").stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null()).spawn()?;
        let stdin = child.stdin.take().context("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("no stdout")?);
        let mut s = Server { child, stdin, stdout, id: 0 };
        s.request("initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "refrain-bench", "version": "0"}}))?;
        writeln!(s.stdin, "{}", json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        // Warm up: wait for the model and the index so the timings measure steady state.
        s.call("response_cache_get", json!({"tool": "WebSearch", "query": "warm up"}))?;
        Ok(s)
    }

    fn request(&mut self, method: &str, params: Value) -> anyhow::Result<Value> {
        self.id += 1;
        writeln!(self.stdin, "{}", json!({"jsonrpc": "2.0", "id": self.id, "method": method, "params": params}))?;
        self.stdin.flush()?;
        let mut line = String::new();
        loop {
            line.clear();
            if self.stdout.read_line(&mut line)? == 0 {
                bail!("refrain serve exited");
            }
            let v: Value = serde_json::from_str(&line)?;
            if v.get("id") == Some(&json!(self.id)) {
                return v.get("result").cloned().with_context(|| format!("{method} failed: {v}"));
            }
        }
    }

    /// Calls a tool; returns the round trip in ms and the result.
    fn call(&mut self, tool: &str, arguments: Value) -> anyhow::Result<(f64, Value)> {
        let t = Instant::now();
        let v = self.request("tools/call", json!({"name": tool, "arguments": arguments}))?;
        Ok((t.elapsed().as_secs_f64() * 1000.0, v))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
