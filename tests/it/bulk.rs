//! Bulk imports (`results::bulk::import`, `plan::library::import`, what `refrain-bench` preloads
//! 1M entries with) file exactly what the one-at-a-time path files: a real `refrain serve` answers
//! from a store filled in bulk as it answers from one filled entry by entry, exactly, by meaning
//! and by plan, and every tree holds the same number of rows.

use crate::support::Env;
use refrain::embed::{Embedder, FastEmbedder, ModelFiles};
use refrain::index::VectorIndex;
use refrain::plan::library::{self, Record};
use refrain::plan::template::{PlanTemplate, StoredPlan};
use refrain::project::Project;
use refrain::results::entry::{self, Entry, now_ms};
use refrain::results::key;
use refrain::store::{Store, trees};
use serde_json::{Value, json};

const TOOL: &str = "WebSearch";
const N: usize = 48;

fn question(i: usize) -> String {
    let verbs = ["configure", "debug", "profile", "upgrade", "secure", "monitor"];
    let objects = [
        "connection pool",
        "retry policy",
        "log rotation",
        "rate limiter",
        "cron scheduler",
        "thread pool",
        "feature flags",
        "message queue",
    ];
    format!("how do I {} the {} of our web service", verbs[i % verbs.len()], objects[(i / verbs.len()) % objects.len()])
}

fn result_entry(i: usize, now: u64) -> Entry {
    let args = json!({"q": i});
    let result = json!(format!("answer {i}"));
    Entry {
        key: key::exact_key("default", TOOL, &args),
        namespace: "default".into(),
        tool: TOOL.into(),
        args,
        query: Some(question(i)),
        bytes: result.to_string().len() as u64,
        result,
        created_ms: now,
        expires_ms: now + 86_400_000,
        deps: Vec::new(),
        vector: None,
    }
}

fn plan(i: usize) -> StoredPlan {
    let task = format!("add a `--flag{i}` flag to src/mod{i}.rs");
    let template: PlanTemplate = serde_json::from_value(json!({
        "steps": [
            {"tool": "Read", "inputs": {"path": "{{params.path}}"}, "outputs": ["source"]},
            {"tool": "Edit", "inputs": {"path": "{{params.path}}", "flag": "{{params.flag}}", "n": i}, "outputs": ["diff"], "side_effect": true}
        ],
        "slots": [{"name": "flag", "type": "flag"}, {"name": "path", "type": "path"}],
        "outputs": [{"name": "diff"}]
    }))
    .unwrap();
    StoredPlan::for_task(task, "template", template)
}

/// Fills the env's store with N results and N plans, in bulk or one at a time.
fn fill(env: &Env, bulk: bool, vectors: &[Vec<f32>]) {
    let project = Project::at(env.root(), env.home.path());
    project.prepare().unwrap();
    let store = Store::open(&project.db_dir()).unwrap();
    let index = VectorIndex::open(&store, Some(&project.index_dir())).unwrap();
    let now = now_ms();
    let scope = entry::scope("default", TOOL);
    if bulk {
        let items = (0..N).map(|i| (result_entry(i, now), Some(vectors[i].clone()))).collect();
        assert_eq!(refrain::results::bulk::import(&store, &index, items).unwrap(), N);
        let plans = (0..N).map(|i| (plan(i), Some(vectors[N + i].clone()))).collect();
        assert_eq!(library::import(&store, &index, plans).unwrap(), N);
    } else {
        // What response_cache_put and plan_store do for a new key, one at a time.
        for (i, v) in vectors.iter().enumerate().take(N) {
            let mut e = result_entry(i, now);
            e.vector = Some(index.insert(&scope, e.key.as_bytes(), v.clone()).unwrap());
            entry::write(&store, &e).unwrap();
            refrain::stats::bump(&store, "results", "puts", Some(TOOL), 1).unwrap();
        }
        for i in 0..N {
            let p = plan(i);
            let vector = Some(index.insert(library::SCOPE, p.id.as_bytes(), vectors[N + i].clone()).unwrap());
            library::put(&store, &Record { plan: p, vector }).unwrap();
            refrain::stats::bump(&store, "plans", "stored", None, 1).unwrap();
        }
    }
    store.flush().unwrap();
}

/// The answer without what differs from call to call (timings, ages).
fn steady(mut v: Value) -> Value {
    fn strip(v: &mut Value) {
        match v {
            Value::Object(m) => {
                m.retain(|k, _| !(k.ends_with("_ms") || k.ends_with("_secs") || k.contains("age") || k == "elapsed"));
                m.values_mut().for_each(strip);
            }
            Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut v);
    v
}

async fn answers(env: &Env) -> Vec<Value> {
    let s = env.serve().await;
    let mut out = Vec::new();
    for i in 0..N {
        out.push(steady(s.ok("response_cache_get", json!({"tool": TOOL, "args": {"q": i}})).await));
    }
    for i in (0..N).step_by(5) {
        let paraphrase = question(i).replace("how do I", "how can I").replace("our web service", "the web service");
        out.push(steady(s.ok("response_cache_get", json!({"tool": TOOL, "query": paraphrase})).await));
    }
    for i in (0..N).step_by(4) {
        out.push(steady(s.ok("plan_lookup", json!({"task": format!("add a `--other` flag to src/mod{i}.rs")})).await));
    }
    let mut stats = s.ok("cache_stats", json!({})).await;
    for own in ["store_bytes", "project", "store_path"] {
        stats.as_object_mut().unwrap().remove(own);
    }
    out.push(steady(stats));
    s.stop().await;
    out
}

fn tree_rows(env: &Env) -> Vec<(&'static str, usize)> {
    let project = Project::at(env.root(), env.home.path());
    let store = Store::open(&project.db_dir()).unwrap();
    trees::ALL.iter().map(|t| (t.0, store.len(*t).unwrap())).collect()
}

#[tokio::test]
async fn a_store_filled_in_bulk_is_served_exactly_like_one_filled_entry_by_entry() {
    let (one, bulk) = (Env::new(), Env::new());
    let model =
        FastEmbedder::load(&ModelFiles::under(&one.models), 2, refrain::config::Config::default().model.max_length)
            .unwrap();
    let texts: Vec<String> = (0..N).map(question).chain((0..N).map(|i| plan(i).provenance.task)).collect();
    let vectors = model.embed(&texts.iter().map(String::as_str).collect::<Vec<_>>()).unwrap();
    drop(model);
    fill(&one, false, &vectors);
    fill(&bulk, true, &vectors);
    let (a, b) = (answers(&one).await, answers(&bulk).await);
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x, y, "one by one:\n{x}\nin bulk:\n{y}");
    }
    let hits = a.iter().filter(|v| v["status"] == "hit").count();
    assert!(hits >= N + N / 5, "the fill was found: {hits} hits of {}", a.len());
    assert_eq!(tree_rows(&one), tree_rows(&bulk));
}
