//! `refrain-bench plans` and `refrain-bench clinc`: rerunnable measurements of the plan cache.
//!
//! `plans` drives the real binary over stdio (MCP, as an agent would): it stores one plan per
//! task family, looks up paraphrases and hard negatives, and times `plan_lookup` with filler
//! plans preloaded to the requested library sizes. `clinc` reports how the local normaliser
//! groups the CLINC150 intents (Larson et al. 2019, CC BY 3.0).

use super::GlobalArgs;
use crate::families::{FAMILIES, negative, render};
use crate::preload::{Vectors, plans as plans_preload};
use clap::Subcommand;
use refrain::plan::key::IntentKey;
use refrain::plan::normalise::normalise;
use refrain::project::Project;
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// The plan-cache scenarios of `refrain-bench`.
#[derive(Debug, Subcommand)]
pub enum Scenario {
    /// Plan lookup quality and latency through the real binary over stdio.
    Plans {
        /// Library sizes to time (plans stored, fillers included).
        #[arg(long, value_delimiter = ',', default_value = "100,10000")]
        sizes: Vec<usize>,
        /// Run without the embedding model (exact buckets and wording only).
        #[arg(long)]
        no_model: bool,
        /// Print every miss and false hit.
        #[arg(long)]
        verbose: bool,
    },
    /// How the local normaliser groups CLINC150 intents.
    Clinc {
        /// Path to CLINC150 `data_full.json`.
        #[arg(long)]
        data: PathBuf,
    },
}

/// Runs a plan-cache benchmark.
pub fn run(global: &GlobalArgs, scenario: Scenario) -> anyhow::Result<ExitCode> {
    match scenario {
        Scenario::Clinc { data } => clinc(&data),
        Scenario::Plans { sizes, no_model, verbose } => {
            let model_dir = super::models(global)?;
            let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
            for size in sizes {
                runtime.block_on(plans(size, (!no_model).then_some(model_dir.clone()), verbose))?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

#[derive(Default)]
struct Tally {
    para: usize,
    hits: usize,
    correct: usize,
    wrong_plan: usize,
    neg: usize,
    false_hits: usize,
    latencies: Vec<f64>,
}

async fn plans(size: usize, model_dir: Option<PathBuf>, verbose: bool) -> anyhow::Result<()> {
    let tmp = std::env::temp_dir().join(format!("refrain-bench-{}-{size}", std::process::id()));
    let (home, root) = (tmp.join("home"), tmp.join("project"));
    std::fs::create_dir_all(&root)?;
    let root = root.canonicalize()?;
    let fillers = size.saturating_sub(FAMILIES.len());
    let started = Instant::now();
    let vectors = model_dir.as_deref().map_or(Vectors::None, Vectors::Model);
    plans_preload(&Project::at(root.clone(), &home), fillers, vectors)?;
    eprintln!("size {size}: preloaded {fillers} filler plans in {:.1}s", started.elapsed().as_secs_f64());
    // Without a model the server gets an empty model directory: exact buckets and wording only.
    let models = model_dir.clone().unwrap_or_else(|| tmp.join("no-model"));
    let server = crate::driver::spawn(&crate::driver::Setup { home, project: root, models }).await?;
    let client = &server.client;
    let call = |name: &'static str, args: Value| {
        let args = args.as_object().cloned().unwrap_or_default();
        async move {
            let r = client.call_tool(CallToolRequestParams::new(name).with_arguments(args)).await?;
            anyhow::Ok((r.is_error == Some(true), r.structured_content.unwrap_or(Value::Null)))
        }
    };
    let mut ids = HashMap::new();
    for f in FAMILIES {
        let task = render(f.seed, &f.values(0));
        let (err, out) = call("plan_store", json!({"task": task, "template": f.template()})).await?;
        anyhow::ensure!(!err, "storing {} failed: {out}", f.name);
        ids.insert(out["plan_id"].as_str().unwrap_or_default().to_string(), f.name);
    }
    // Warm up: the index rebuild and the model load finish before timing.
    for _ in 0..3 {
        call("plan_lookup", json!({"task": "add a `--warm` flag to src/warm.rs"})).await?;
    }
    let mut t = Tally::default();
    for f in FAMILIES {
        for (i, p) in f.paraphrases.iter().enumerate() {
            let values = f.values(i + 1);
            let task = render(p, &values);
            let t0 = Instant::now();
            let (_, out) = call("plan_lookup", json!({"task": task})).await?;
            t.latencies.push(t0.elapsed().as_secs_f64() * 1000.0);
            t.para += 1;
            if out["status"] == "hit" {
                t.hits += 1;
                let served = ids.get(out["hit"]["plan_id"].as_str().unwrap_or_default()).copied();
                let slots_ok = values.iter().all(|(k, v)| out["hit"]["values"][k].as_str() == Some(v.as_str()));
                if served == Some(f.name) && slots_ok {
                    t.correct += 1;
                } else {
                    t.wrong_plan += usize::from(served != Some(f.name));
                    if verbose {
                        eprintln!("BAD HIT {} [{task}] -> {:?} {}", f.name, served, out["hit"]["values"]);
                    }
                }
            } else if verbose {
                eprintln!("MISS {} [{task}] {}", f.name, out["reason"]);
            }
        }
        for (i, n) in f.negatives.iter().enumerate() {
            let (text, allowed) = negative(n);
            let task = render(text, &f.values(i + 20));
            let t0 = Instant::now();
            let (_, out) = call("plan_lookup", json!({"task": task})).await?;
            t.latencies.push(t0.elapsed().as_secs_f64() * 1000.0);
            t.neg += 1;
            let served = ids.get(out["hit"]["plan_id"].as_str().unwrap_or_default()).copied();
            if out["status"] == "hit" && (served.is_none() || served != allowed) {
                t.false_hits += 1;
                if verbose {
                    eprintln!("FALSE HIT from {} [{task}] -> {:?}", f.name, served);
                }
            }
        }
    }
    drop(server);
    let _ = std::fs::remove_dir_all(&tmp);
    report(size, model_dir.is_some(), &mut t)
}

fn report(size: usize, model: bool, t: &mut Tally) -> anyhow::Result<()> {
    t.latencies.sort_by(f64::total_cmp);
    let pct = |p: f64| t.latencies.get(((t.latencies.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(0.0);
    let line = json!({
        "plans": size, "model": model, "families": FAMILIES.len(),
        "paraphrases": t.para, "hits": t.hits, "hit_rate": t.hits as f64 / t.para.max(1) as f64,
        "correct_slot_rate": t.correct as f64 / t.hits.max(1) as f64, "wrong_plan_hits": t.wrong_plan,
        "negatives": t.neg, "false_hits": t.false_hits, "false_hit_rate": t.false_hits as f64 / t.neg.max(1) as f64,
        "lookup_ms_p50": pct(0.5), "lookup_ms_p99": pct(0.99), "lookups_timed": t.latencies.len(),
    });
    writeln!(std::io::stdout().lock(), "{line}")?;
    Ok(())
}

/// Pair agreement between CLINC150 intents and normaliser keys over the test split.
fn clinc(path: &Path) -> anyhow::Result<ExitCode> {
    let data: Value = serde_json::from_slice(&std::fs::read(path)?)?;
    let rows: Vec<(String, String)> = data["test"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| Some((r[0].as_str()?.to_string(), r[1].as_str()?.to_string())))
        .collect();
    let pairs = |n: usize| (n * n.saturating_sub(1) / 2) as f64;
    let mut by_intent: HashMap<&str, usize> = HashMap::new();
    let mut by_key: HashMap<String, usize> = HashMap::new();
    let mut by_both: HashMap<(&str, String), usize> = HashMap::new();
    let mut actions: BTreeMap<String, usize> = BTreeMap::new();
    for (text, intent) in &rows {
        let n = normalise(text);
        let key = IntentKey::of(&n).bucket;
        *by_intent.entry(intent).or_default() += 1;
        *by_key.entry(key.clone()).or_default() += 1;
        *by_both.entry((intent, key)).or_default() += 1;
        *actions.entry(n.action).or_default() += 1;
    }
    let same_intent: f64 = by_intent.values().map(|&n| pairs(n)).sum();
    let same_both: f64 = by_both.values().map(|&n| pairs(n)).sum();
    let same_key: f64 = by_key.values().map(|&n| pairs(n)).sum();
    let diff_intent = pairs(rows.len()) - same_intent;
    let line = json!({
        "dataset": "CLINC150 test split (Larson et al. 2019, CC BY 3.0)", "utterances": rows.len(),
        "intents": by_intent.len(), "keys": by_key.len(),
        "same_intent_same_key_rate": same_both / same_intent.max(1.0),
        "different_intent_different_key_rate": 1.0 - (same_key - same_both) / diff_intent.max(1.0),
        "action_none_share": *actions.get("none").unwrap_or(&0) as f64 / rows.len().max(1) as f64,
        "top_actions": actions.iter().filter(|(_, n)| **n >= 50).collect::<BTreeMap<_, _>>(),
    });
    writeln!(std::io::stdout().lock(), "{line}")?;
    Ok(ExitCode::SUCCESS)
}
