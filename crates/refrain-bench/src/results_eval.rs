//! `refrain-bench results-eval`: the result cache's match quality, measured the way agents use it:
//! the real binary over MCP, `response_cache_put` of one member per family, then
//! `response_cache_get` by meaning for the other members (must hit, with their family's answer),
//! the families' near misses and the members of never-stored families (must miss). Writes one
//! record per lookup (with every candidate's scores, via `explain`) for `calibrate`.

use crate::mcp::Server;
use crate::record::{self, Cand, Record};
use crate::sets::{self, Family, Set};
use anyhow::Context;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Flags of `results-eval`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The refrain binary to drive (a release build).
    #[arg(long, default_value = "target/release/refrain")]
    pub binary: PathBuf,
    /// Model directory given to the server (embedding model, runtime, `verifier/`).
    #[arg(long)]
    pub models: PathBuf,
    /// Directory with the public sets (gptcache/, conala/, clinc150/, hwu64/).
    #[arg(long)]
    pub data: PathBuf,
    /// Directory with refrain's own family files (question.jsonl).
    #[arg(long, default_value = "training/data")]
    pub sets: PathBuf,
    /// Datasets to run.
    #[arg(long, value_delimiter = ',', default_value = "gptcache,conala,clinc,hwu64,question")]
    pub only: Vec<String>,
    /// Splits to run, each in its own namespace: `dev` and `test`, or `train,dev` for the rule's
    /// calibration records (`calibrate --splits train,dev`: the rule learns nothing from `train`;
    /// the verifier model's calibration reads `dev` alone). Run `test` once, after calibrating.
    #[arg(long, value_delimiter = ',', default_value = "dev,test")]
    pub splits: Vec<String>,
    /// Most families per dataset and split (chosen by a seeded hash).
    #[arg(long, default_value_t = 600)]
    pub max_families: usize,
    /// Most lookups per dataset and split.
    #[arg(long, default_value_t = 1500)]
    pub max_lookups: usize,
    /// Records are written here (JSON lines).
    #[arg(long)]
    pub out: PathBuf,
    /// Scratch directory for the servers' homes, projects and logs (default: a temp dir).
    #[arg(long)]
    pub work: Option<PathBuf>,
    /// Extra settings for the server, as KEY=VALUE environment variables.
    #[arg(long)]
    pub env: Vec<String>,
}

const TOOL: &str = "WebSearch";

/// Loads one dataset by name.
pub fn load(name: &str, data: &Path, own: &Path) -> anyhow::Result<Set> {
    match name {
        "gptcache" => sets::gptcache(&data.join("gptcache/mock_data.json")),
        "conala" => sets::conala(&data.join("conala")),
        "clinc" => sets::clinc(&data.join("clinc150/data_full.json")),
        "hwu64" => sets::hwu64(&data.join("hwu64/hwu64.jsonl")),
        other => {
            let own_file = own.join(format!("{other}.jsonl"));
            let shared = data.join(other).join(format!("{other}.jsonl"));
            let path = if own_file.is_file() { own_file } else { shared };
            sets::families(&path, other)
        }
    }
}

/// Runs every dataset and split; prints a summary per dataset and split.
pub async fn run(args: &Args) -> anyhow::Result<()> {
    let tmp;
    let work = match &args.work {
        Some(w) => w.clone(),
        None => {
            tmp = std::env::temp_dir().join(format!("refrain-results-eval-{}", std::process::id()));
            tmp.clone()
        }
    };
    let env: Vec<(String, String)> = args
        .env
        .iter()
        .map(|kv| kv.split_once('=').map(|(k, v)| (k.to_string(), v.to_string())))
        .collect::<Option<_>>()
        .context("--env takes KEY=VALUE")?;
    let mut out = std::io::BufWriter::new(
        std::fs::File::create(&args.out).with_context(|| format!("cannot create {}", args.out.display()))?,
    );
    for name in &args.only {
        let set = load(name, &args.data, &args.sets)?;
        let dir = work.join(name);
        let _ = std::fs::remove_dir_all(&dir);
        for sub in ["home", "project"] {
            std::fs::create_dir_all(dir.join(sub))?;
        }
        let server =
            Server::start(&args.binary, &dir.join("project"), &dir.join("home"), &args.models, &env, &dir.join("log"))
                .await?;
        for split in &args.splits {
            let started = Instant::now();
            let records = run_split(&server, &set, split, args).await?;
            record::write(&mut out, &records)?;
            summarise(name, split, &records, started.elapsed().as_secs_f64());
        }
        server.stop().await;
    }
    use std::io::Write;
    out.flush()?;
    Ok(())
}

fn rank(seed: &str, id: &str) -> String {
    hex::encode(Sha256::digest(format!("{seed}:{id}").as_bytes()))
}

struct Lookup<'a> {
    family: &'a Family,
    text: String,
    expect: &'static str,
    /// The answer serving which is right (None: serving anything is wrong).
    accept: Option<String>,
    /// One of the family's near misses.
    near: bool,
}

async fn run_split(server: &Server, set: &Set, split: &str, args: &Args) -> anyhow::Result<Vec<Record>> {
    let mut fams: Vec<&Family> = set.families.iter().filter(|f| f.split == split && !f.members.is_empty()).collect();
    fams.sort_by_cached_key(|f| rank("families", &f.id));
    fams.truncate(args.max_families);
    let namespace = format!("{}-{split}", set.name);
    let mut answers: HashMap<String, String> = HashMap::new();
    let mut lookups = Vec::new();
    for (i, f) in fams.iter().enumerate() {
        let stored = i % 3 != 2;
        if stored {
            let out = server
                .call(
                    "response_cache_put",
                    json!({"tool": TOOL, "namespace": namespace, "args": {"q": f.members[0]}, "query": f.members[0],
                           "result": f.answer, "read_only": true, "ttl_secs": 30 * 86400}),
                )
                .await?;
            if let Some(k) = out["key"].as_str() {
                answers.insert(k.to_string(), f.answer.clone());
            }
            if !set.negatives_only {
                for m in f.members.iter().skip(1).take(3) {
                    lookups.push(Lookup {
                        family: f,
                        text: m.clone(),
                        expect: "hit",
                        accept: Some(f.answer.clone()),
                        near: false,
                    });
                }
            }
            for (n, a) in f.negatives.iter().take(3) {
                lookups.push(Lookup { family: f, text: n.clone(), expect: "miss", accept: a.clone(), near: true });
            }
        } else {
            for m in f.members.iter().take(2) {
                lookups.push(Lookup {
                    family: f,
                    text: m.clone(),
                    expect: "miss",
                    accept: Some(f.answer.clone()),
                    near: false,
                });
            }
        }
    }
    lookups.sort_by_cached_key(|l| rank("lookups", &format!("{}\0{}", l.family.id, l.text)));
    lookups.truncate(args.max_lookups);
    let mut records = Vec::with_capacity(lookups.len());
    for l in &lookups {
        let started = Instant::now();
        let out = server
            .call("response_cache_get", json!({"tool": TOOL, "namespace": namespace, "query": l.text, "explain": true}))
            .await?;
        let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
        records.push(to_record(set, split, l, &out, &answers, latency_ms));
    }
    Ok(records)
}

fn to_record(
    set: &Set,
    split: &str,
    l: &Lookup<'_>,
    out: &Value,
    answers: &HashMap<String, String>,
    latency_ms: f64,
) -> Record {
    let ok = |answer: Option<&str>| answer.is_some() && answer == l.accept.as_deref();
    let served = out["status"] == "hit";
    let served_answer = out["result"].as_str();
    let right = if served { ok(served_answer) } else { l.expect == "miss" };
    let exact = served && out["method"] == "exact";
    let cands: Vec<(Cand, String, f32)> = out["candidates"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|c| {
                    let answer = c["key"].as_str().and_then(|k| answers.get(k)).map(String::as_str);
                    let cand = Cand {
                        text: c["query"].as_str().unwrap_or_default().to_string(),
                        right: ok(answer),
                        cosine: c["cosine"].as_f64().unwrap_or(0.0) as f32,
                        verifier: c["verifier"].as_f64().map(|v| v as f32),
                        gate: c["failed"].as_str().map(str::to_string),
                        exact: c["method"] == "exact",
                    };
                    (
                        cand,
                        c["query"].as_str().unwrap_or_default().to_string(),
                        c["score"].as_f64().unwrap_or(0.0) as f32,
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let mut r = Record {
        dataset: set.name.clone(),
        split: split.into(),
        kind: "result".into(),
        family: l.family.id.clone(),
        query: l.text.clone(),
        expect: l.expect.into(),
        served,
        right,
        method: out["method"].as_str().map(str::to_string),
        latency_ms: Some(latency_ms),
        near_miss: l.near,
        suggestions: out["suggestions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s["query"].as_str().map(str::to_string))
            .collect(),
        ..Record::default()
    };
    if exact {
        r.best = out["matched_query"].as_str().map(str::to_string);
        r.best_right = ok(served_answer);
        (r.cosine, r.score) = (Some(1.0), Some(1.0));
        let text = r.best.clone().unwrap_or_default();
        r.candidates = vec![Cand { text, right: r.best_right, cosine: 1.0, verifier: None, gate: None, exact: true }];
        return r;
    }
    if let Some((c, text, score)) = cands.iter().filter(|(c, _, _)| c.gate.is_none()).max_by(|a, b| a.2.total_cmp(&b.2))
    {
        r.best = Some(text.clone());
        r.best_right = c.right;
        (r.cosine, r.score) = (Some(c.cosine), Some(*score));
    }
    r.candidates = cands.into_iter().map(|(c, _, _)| c).collect();
    r
}

fn summarise(name: &str, split: &str, records: &[Record], secs: f64) {
    let pos: Vec<&Record> = records.iter().filter(|r| r.expect == "hit").collect();
    let neg: Vec<&Record> = records.iter().filter(|r| r.expect == "miss").collect();
    let pct = |n: usize, d: usize| if d == 0 { 0.0 } else { 100.0 * n as f64 / d as f64 };
    let hits = pos.iter().filter(|r| r.served && r.right).count();
    let wrong = pos.iter().filter(|r| r.served && !r.right).count();
    let neg_served = neg.iter().filter(|r| r.served).count();
    let near: Vec<&&Record> = neg.iter().filter(|r| r.near_miss).collect();
    let near_served = near.iter().filter(|r| r.served).count();
    eprintln!(
        "{name} {split}: {} positives: {:.1}% right hits, {:.1}% wrong hits; {} negatives: {:.1}% served, of which {} near misses: {near_served} served ({:.0} s)",
        pos.len(),
        pct(hits, pos.len()),
        pct(wrong, pos.len()),
        neg.len(),
        pct(neg_served, neg.len()),
        near.len(),
        secs
    );
}
