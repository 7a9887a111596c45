//! `refrain-bench results-repeat`: a stored question asked again word for word must be served its
//! own entry, however many near twins the store holds. The real binary over MCP: `entries`
//! distinct utterances from intent sets (many differ by a word or two) are stored with their own
//! answers and real embeddings (filled in process before the server starts), then `samples` of
//! them are asked again exactly over MCP; each must hit with its own answer.

use crate::mcp::Server;
use crate::preload;
use crate::sets::{self, Set};
use refrain::project::Project;
use serde_json::json;
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Instant;

/// Flags of `results-repeat`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The refrain binary to drive (a release build).
    #[arg(long, default_value = "target/release/refrain")]
    pub binary: PathBuf,
    /// Model directory given to the server.
    #[arg(long)]
    pub models: PathBuf,
    /// Directory with the public sets (clinc150/, hwu64/).
    #[arg(long)]
    pub data: PathBuf,
    /// Store sizes to measure (each in a fresh store).
    #[arg(long, value_delimiter = ',', default_value = "2000,20000")]
    pub entries: Vec<usize>,
    /// Stored questions asked again per size.
    #[arg(long, default_value_t = 200)]
    pub samples: usize,
    /// Scratch directory for the servers' homes and projects (default: a temp dir).
    #[arg(long)]
    pub work: Option<PathBuf>,
}

const TOOL: &str = "WebSearch";
const NAMESPACE: &str = "repeat";

fn rank(text: &str) -> String {
    hex::encode(Sha256::digest(format!("repeat:{text}").as_bytes()))
}

/// Distinct utterances of both intent sets, in a seeded order.
fn utterances(data: &std::path::Path) -> anyhow::Result<Vec<String>> {
    let mut seen = BTreeSet::new();
    let sets: Vec<Set> =
        vec![sets::hwu64(&data.join("hwu64/hwu64.jsonl"))?, sets::clinc(&data.join("clinc150/data_full.json"))?];
    let mut out: Vec<String> = sets
        .iter()
        .flat_map(|s| s.families.iter().flat_map(|f| f.members.iter().cloned()))
        .filter(|t| seen.insert(refrain::verify::text::normalise(t)))
        .collect();
    out.sort_by_cached_key(|t| rank(t));
    Ok(out)
}

/// Runs each size; prints a Markdown table.
pub async fn run(args: &Args) -> anyhow::Result<()> {
    let texts = utterances(&args.data)?;
    let work = args
        .work
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join(format!("refrain-repeat-{}", std::process::id())));
    use std::io::Write;
    let mut out = std::io::stdout();
    writeln!(
        out,
        "| entries | asked again word for word | served their own entry | served another | missed | get p50 ms |"
    )?;
    writeln!(out, "|---|---|---|---|---|---|")?;
    for &n in &args.entries {
        anyhow::ensure!(
            n <= texts.len(),
            "only {} distinct utterances; ask for at most that many entries",
            texts.len()
        );
        let dir = work.join(n.to_string());
        let _ = std::fs::remove_dir_all(&dir);
        for sub in ["home", "project"] {
            std::fs::create_dir_all(dir.join(sub))?;
        }
        // Filled in process (records, text rows and real embeddings, as `bench all` preloads):
        // 20,000 puts one MCP call at a time take an hour on a loaded machine.
        let started = Instant::now();
        let project = Project::at(dir.join("project").canonicalize()?, &dir.join("home"));
        preload::questions(&project, &args.models, NAMESPACE, TOOL, &texts[..n])?;
        eprintln!("{n} entries stored in {:.0} s", started.elapsed().as_secs_f64());
        let server =
            Server::start(&args.binary, &dir.join("project"), &dir.join("home"), &args.models, &[], &dir.join("log"))
                .await?;
        let step = (n / args.samples.max(1)).max(1);
        let (mut own, mut other, mut missed, mut ms) = (0, 0, 0, Vec::new());
        for i in (0..n).step_by(step).take(args.samples) {
            let t = Instant::now();
            let out = server
                .call("response_cache_get", json!({"tool": TOOL, "namespace": NAMESPACE, "query": texts[i]}))
                .await?;
            ms.push(t.elapsed().as_secs_f64() * 1000.0);
            match (out["status"].as_str(), out["result"].as_str()) {
                (Some("hit"), Some(r)) if r == format!("answer {i}") => own += 1,
                (Some("hit"), _) => other += 1,
                _ => missed += 1,
            }
        }
        server.stop().await;
        ms.sort_by(f64::total_cmp);
        let p50 = ms.get(ms.len() / 2).copied().unwrap_or(0.0);
        writeln!(out, "| {n} | {} | {own} | {other} | {missed} | {p50:.2} |", ms.len())?;
        out.flush()?;
    }
    Ok(())
}
