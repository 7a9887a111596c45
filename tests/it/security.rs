//! Security over MCP with the real binary: two projects with identical keys, plans and results
//! under one refrain home never see each other's entries; real-format fake secrets sent through
//! `response_cache_put` and `plan_store` never reach a byte on disk, and the redactions are
//! counted.

use crate::support::{Env, Server, bin, write};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `refrain serve` for another project under the same home as `env`.
async fn serve_other(env: &Env, project: &Path) -> Server {
    let mut c = tokio::process::Command::new(bin());
    c.args(["serve", "--project"])
        .arg(project)
        .env("REFRAIN_HOME", env.home.path())
        .env("REFRAIN_MODEL_DIR", &env.models)
        .env_remove("REFRAIN_PROJECT")
        .kill_on_drop(true);
    Server::spawn(c).await
}

fn template(note: impl Into<Value>) -> Value {
    let note = note.into();
    json!({
        "steps": [
            {"tool": "Read", "inputs": {"path": "{{params.path}}", "note": note}},
            {"tool": "Edit", "inputs": {"path": "{{params.path}}", "flag": "{{params.flag}}"}, "side_effect": true}
        ],
        "slots": [{"name": "flag", "type": "flag"}, {"name": "path", "type": "path"}]
    })
}

#[tokio::test]
async fn two_projects_with_identical_keys_never_see_each_other() {
    let env = Env::without_model();
    let other = tempfile::TempDir::new().unwrap();
    for root in [env.project.path(), other.path()] {
        write(root, "src/lib.rs", "pub fn a() {}\n");
    }
    let a = env.serve().await;
    let b = serve_other(&env, other.path()).await;
    let args = json!({"file_path": "src/lib.rs"});
    let task = "add a `--verbose` flag to src/main.rs";
    for (s, who) in [(&a, "A"), (&b, "B")] {
        s.ok("response_cache_put", json!({"tool": "Read", "args": args, "result": format!("seen by {who}")})).await;
    }
    a.ok("plan_store", json!({"task": task, "template": template("a")})).await;
    a.ok("response_cache_put", json!({"tool": "Grep", "args": {"pattern": "only-a"}, "result": "a"})).await;
    for (s, who) in [(&a, "A"), (&b, "B")] {
        let hit = s.ok("response_cache_get", json!({"tool": "Read", "args": args})).await;
        assert_eq!(hit["result"], format!("seen by {who}"), "{who}: {hit}");
    }
    let miss = b.ok("response_cache_get", json!({"tool": "Grep", "args": {"pattern": "only-a"}})).await;
    assert_eq!(miss["status"], "miss", "{miss}");
    let plan = b.ok("plan_lookup", json!({"task": "add a `--quiet` flag to src/cli.rs"})).await;
    assert_eq!(plan["status"], "miss", "B must not get A's plan: {plan}");
    assert_eq!(b.ok("plan_list", json!({})).await["plans"].as_array().map(Vec::len), Some(0));
    b.ok("cache_evict", json!({"what": {"target": "all"}})).await;
    let still = a.ok("response_cache_get", json!({"tool": "Grep", "args": {"pattern": "only-a"}})).await;
    assert_eq!(still["status"], "hit", "evicting B emptied A: {still}");
    let (sa, sb) = (a.ok("cache_stats", json!({})).await, b.ok("cache_stats", json!({})).await);
    assert_ne!(sa["store_path"], sb["store_path"], "{sa} {sb}");
    assert_eq!(sa["counters"]["results"]["puts"], 2, "{sa}");
}

/// One fake secret: its kind, how a tool shows it (text, or a JSON document for `"as": "json"`
/// entries), and the bytes that must never be stored.
struct Secret {
    kind: String,
    shown: String,
    json: Option<Value>,
    leak: String,
}

fn corpus() -> Vec<Secret> {
    let text = std::fs::read_to_string(crate::support::repo().join("tests/fixtures/secrets/corpus.jsonl")).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let secret: String = v["parts"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
            let leak = v.get("must_not_leak").and_then(Value::as_str).unwrap_or(&secret).to_string();
            let context = v["context"].as_str().unwrap();
            let json = (v.get("as").and_then(Value::as_str) == Some("json")).then(|| {
                let escaped = serde_json::to_string(&secret).unwrap();
                serde_json::from_str(&context.replace("{secret}", escaped.trim_matches('"'))).unwrap()
            });
            let shown = context.replace("{secret}", &secret);
            Secret { kind: v["kind"].as_str().unwrap().into(), shown, json, leak }
        })
        .collect()
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() { files_under(&p, out) } else { out.push(p) }
    }
}

/// Every key and value of every tree of the store in `db`, end to end.
fn stored_records(db: &Path) -> Vec<u8> {
    use refrain::store::{Store, trees};
    let store = Store::open_when_free(db, Duration::from_secs(10)).expect("the store opens once the server exited");
    let mut out = Vec::new();
    for t in trees::ALL {
        store
            .for_each_bytes(t, |k, v| {
                out.extend_from_slice(k);
                out.extend_from_slice(v);
            })
            .unwrap();
    }
    out
}

#[tokio::test]
async fn secrets_never_reach_the_disk_and_are_counted() {
    let env = Env::without_model();
    let s = env.serve().await;
    let secrets = corpus();
    let (mut result_redactions, mut plan_redactions) = (0, 0);
    for (i, sec) in secrets.iter().enumerate() {
        // A JSON secret arrives as structured arguments, result and plan inputs; a text one as
        // text in the arguments, the query, the result and the task.
        let (put, task, note, least) = match &sec.json {
            Some(doc) => (
                json!({"tool": "Grep", "args": {"pattern": format!("needle{i}"), "context": doc},
                       "result": {"canary": format!("canary-result-{i}"), "body": doc}}),
                format!("add a `--flag{i}` flag to src/main.rs"),
                doc.clone(),
                (2, 1),
            ),
            None => (
                json!({"tool": "Grep", "args": {"pattern": format!("needle{i}"), "context": sec.shown},
                       "query": format!("where is {}", sec.shown),
                       "result": format!("canary-result-{i}\n{}\n", sec.shown)}),
                format!("add a `--flag{i}` flag to src/main.rs with {}", sec.shown),
                Value::String(sec.shown.clone()),
                (3, 2),
            ),
        };
        let out = s.ok("response_cache_put", put).await;
        assert_eq!(out["stored"], true, "{}: {out}", sec.kind);
        let n = out["redactions"].as_u64().unwrap();
        assert!(n >= least.0, "{}: each place holding it is redacted, {n} redacted", sec.kind);
        result_redactions += n;
        let out = s.ok("plan_store", json!({"task": task, "template": template(note)})).await;
        let n = out["redactions"].as_u64().unwrap();
        assert!(n >= least.1, "{}: each place holding it is redacted, {n} redacted: {out}", sec.kind);
        plan_redactions += n;
    }
    let hit = s
        .ok("response_cache_get", json!({"tool": "Grep", "args": {"pattern": "needle0", "context": secrets[0].shown}}))
        .await;
    assert!(secrets[0].json.is_none() && secrets.iter().filter(|s| s.json.is_some()).count() >= 7);
    assert_eq!(hit["status"], "hit", "the key is computed before redaction, so the same call still hits: {hit}");
    assert!(hit["result"].as_str().unwrap().contains("[REDACTED:"), "{hit}");
    let stats = s.ok("cache_stats", json!({})).await;
    assert_eq!(stats["counters"]["results"]["redactions"], result_redactions, "{stats}");
    assert_eq!(stats["counters"]["plans"]["redactions"], plan_redactions, "{stats}");
    let Server { mut child, client } = s;
    let _ = client.cancel().await;
    let _ = tokio::time::timeout(Duration::from_secs(10), child.wait()).await;
    let mut files = Vec::new();
    files_under(env.home.path(), &mut files);
    let mut bytes: Vec<(PathBuf, Vec<u8>)> =
        files.into_iter().map(|p| (p.clone(), std::fs::read(&p).unwrap())).collect();
    // The store compresses what it writes, so its records are read back too, decompressed: a
    // secret in any of them would be on the disk, compressed.
    let db = refrain::project::Project::at(env.project.path().to_path_buf(), env.home.path()).db_dir();
    bytes.push((db.clone(), stored_records(&db)));
    let found = |needle: &str| bytes.iter().find(|(_, b)| b.windows(needle.len()).any(|w| w == needle.as_bytes()));
    assert!(found("canary-result-0").is_some(), "the scan must see stored text in the clear ({} files)", bytes.len());
    for sec in &secrets {
        if let Some((path, _)) = found(&sec.leak) {
            panic!("{} reached {}", sec.kind, path.display());
        }
    }
}
