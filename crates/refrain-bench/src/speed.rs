//! `refrain-bench verify-speed`: what verification adds to a lookup by meaning, on one core, with
//! the embedding time reported apart. For each query: embed it, take the K nearest stored texts,
//! drop what the cheap gates drop, and score the rest in one batch, as `response_cache_get` does.
//! Without a verifier model (the shipped rule: cosine and the cheap gates) only the gates run.
//! Each step is timed twice: wall clock, and the CPU time of the calling thread (with one ONNX
//! thread the model runs on it), which is what the step costs on an idle core when the machine
//! is shared.

use refrain::embed::{Embedder, FastEmbedder, ModelFiles, cosine};
use refrain::verify::gate;
use refrain::verify::model::{self, CrossEncoder};
use std::path::PathBuf;
use std::time::Instant;

/// Flags of `verify-speed`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Model directory (embedding model, runtime, `verifier/`).
    #[arg(long)]
    pub models: PathBuf,
    /// GPTCache's mock_data.json: origins are stored, paraphrases looked up.
    #[arg(long)]
    pub data: PathBuf,
    /// Lookups timed.
    #[arg(long, default_value_t = 300)]
    pub samples: usize,
    /// Nearest candidates per lookup (`matching.candidates`).
    #[arg(long, default_value_t = 8)]
    pub candidates: usize,
}

/// CPU time this thread has used, in ms.
fn thread_cpu_ms() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as f64 * 1000.0 + t.tv_nsec as f64 / 1e6
}

fn quantile(v: &mut [f64], q: f64) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * q).round() as usize]
}

/// Runs the benchmark and prints a Markdown table.
pub fn run(args: &Args) -> anyhow::Result<()> {
    let files = ModelFiles::under(&args.models);
    let embedder = FastEmbedder::load(&files, 1, 256)?;
    let verifier = match CrossEncoder::load(&args.models.join(model::DIR), &files.runtime, 1) {
        Ok(v) => Some(v),
        Err(e) => {
            eprintln!("no verifier model ({e}): timing the rule (cosine and the cheap gates) only");
            None
        }
    };
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&std::fs::read(&args.data)?)?;
    let origins: Vec<String> = rows.iter().filter_map(|r| r["origin"].as_str().map(str::to_string)).collect();
    let queries: Vec<String> = rows.iter().filter_map(|r| r["similar"].as_str().map(str::to_string)).collect();
    let refs: Vec<&str> = origins.iter().map(String::as_str).collect();
    let stored = embedder.embed(&refs)?;
    let (mut embed_ms, mut verify_ms, mut all_ms, mut scored) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut embed_cpu, mut verify_cpu, mut all_cpu) = (Vec::new(), Vec::new(), Vec::new());
    for q in queries.iter().take(args.samples) {
        let (t, cpu) = (Instant::now(), thread_cpu_ms());
        let v = embedder.embed(&[q.as_str()])?.pop().unwrap_or_default();
        embed_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        embed_cpu.push(thread_cpu_ms() - cpu);
        let mut near: Vec<(usize, f32)> = stored.iter().enumerate().map(|(i, s)| (i, cosine(&v, s))).collect();
        near.sort_by(|a, b| b.1.total_cmp(&a.1));
        near.truncate(args.candidates);
        let (t, cpu) = (Instant::now(), thread_cpu_ms());
        let kept: Vec<(&str, f32)> = near
            .iter()
            .filter(|(i, c)| *c >= gate::FLOOR && !gate::GATES.iter().any(|g| g.refuses(q, &origins[*i])))
            .map(|(i, c)| (origins[*i].as_str(), *c))
            .collect();
        if let Some(verifier) = &verifier {
            verifier.score(q, &kept)?;
        }
        verify_ms.push(t.elapsed().as_secs_f64() * 1000.0);
        verify_cpu.push(thread_cpu_ms() - cpu);
        scored.push(kept.len() as f64);
        if let Some(verifier) = &verifier {
            let every: Vec<(&str, f32)> = near.iter().map(|(i, c)| (origins[*i].as_str(), *c)).collect();
            let (t, cpu) = (Instant::now(), thread_cpu_ms());
            verifier.score(q, &every)?;
            all_ms.push(t.elapsed().as_secs_f64() * 1000.0);
            all_cpu.push(thread_cpu_ms() - cpu);
        }
    }
    let n = embed_ms.len();
    let mean_scored = scored.iter().sum::<f64>() / n.max(1) as f64;
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "| step (1 thread, {n} lookups, {} stored) | p50 ms | p90 ms | p99 ms | CPU p50 ms | CPU p90 ms |",
        origins.len()
    )?;
    writeln!(out, "|---|---|---|---|---|---|")?;
    let verify_name = match &verifier {
        Some(_) => {
            format!("verify after the gates ({mean_scored:.1} of {} candidates scored on average)", args.candidates)
        }
        None => format!(
            "verify by the rule: the gates over {} candidates ({mean_scored:.1} pass on average), no model",
            args.candidates
        ),
    };
    let mut rows = vec![
        ("embed the query".to_string(), &mut embed_ms, &mut embed_cpu),
        (verify_name, &mut verify_ms, &mut verify_cpu),
    ];
    if verifier.is_some() {
        rows.push((format!("verify all {} candidates (no gates)", args.candidates), &mut all_ms, &mut all_cpu));
    }
    for (name, v, cpu) in rows {
        let (p50, p90, p99) = (quantile(v, 0.5), quantile(v, 0.9), quantile(v, 0.99));
        let (c50, c90) = (quantile(cpu, 0.5), quantile(cpu, 0.9));
        writeln!(out, "| {name} | {p50:.2} | {p90:.2} | {p99:.2} | {c50:.2} | {c90:.2} |")?;
    }
    Ok(())
}
