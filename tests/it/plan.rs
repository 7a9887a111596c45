//! The plan cache over MCP with the real binary: a stored plan serves other values of the same
//! kind of task, never another action, kind or a task missing a required value; feedback
//! quarantines; a wrong key is refused; eviction by bucket.

use crate::support::Env;
use serde_json::json;

fn template() -> serde_json::Value {
    json!({
        "steps": [
            {"tool": "Read", "inputs": {"path": "{{params.path}}"}, "outputs": ["source"]},
            {"tool": "Edit", "inputs": {"path": "{{params.path}}", "flag": "{{params.flag}}"}, "outputs": ["diff"], "side_effect": true}
        ],
        "slots": [{"name": "flag", "type": "flag"}, {"name": "path", "type": "path"}],
        "outputs": [{"name": "diff"}]
    })
}

#[tokio::test]
async fn a_plan_serves_its_kind_of_task_and_nothing_else() {
    let env = Env::without_model();
    let s = env.serve().await;
    let stored =
        s.ok("plan_store", json!({"task": "add a `--verbose` flag to src/main.rs", "template": template()})).await;
    let id = stored["plan_id"].as_str().unwrap().to_string();
    // Without a model the same wording with other values is served (an exact match).
    let hit = s.ok("plan_lookup", json!({"task": "add a --quiet flag to src/cli.rs", "explain": true})).await;
    assert_eq!(hit["status"], "hit", "{hit}");
    assert_eq!(hit["hit"]["method"], "exact", "{hit}");
    assert_eq!(hit["hit"]["steps"][1]["inputs"], json!({"path": "src/cli.rs", "flag": "--quiet"}));
    for negative in [
        "remove the `--quiet` flag from src/cli.rs",
        "add a test for `--quiet` in src/cli.rs",
        "add a flag to src/cli.rs",
        "please add the --quiet option in src/cli.rs",
    ] {
        let miss = s.ok("plan_lookup", json!({"task": negative, "explain": true})).await;
        assert_eq!(miss["status"], "miss", "{negative}: {miss}");
    }
    let wrong =
        s.err("plan_store", json!({"task": "add a `--x` flag to src/a.rs", "template": template(), "key": "0"})).await;
    assert!(wrong.contains("disagrees"), "{wrong}");
    for _ in 0..3 {
        s.ok("plan_feedback", json!({"plan_id": id, "outcome": "failure"})).await;
    }
    let q = s.ok("plan_lookup", json!({"task": "add a `--x` flag to src/a.rs", "explain": true})).await;
    assert_eq!(q["explain"]["candidates"][0]["failed"], "quarantined", "{q}");
    let bucket = q["explain"]["key"]["bucket"].as_str().unwrap();
    let ev = s.ok("cache_evict", json!({"what": {"target": "plan_bucket", "bucket": bucket}})).await;
    assert_eq!(ev["evicted"], 1, "{ev}");
}

/// A trace whose context holds an empty string once made the extractor loop until the owner
/// aborted, and the follower that relayed it then took over and died on the same retry.
#[tokio::test]
async fn a_trace_with_an_empty_context_value_is_stored_and_both_processes_keep_answering() {
    let env = Env::without_model();
    let owner = env.serve().await;
    let follower = env.serve().await;
    let trace = json!({
        "context": {"x": "", "file": "src/main.rs"},
        "steps": [
            {"tool": "Read", "inputs": {"path": "src/main.rs"}},
            {"tool": "Edit", "inputs": {"path": "src/main.rs", "new": "x"}, "side_effect": true}
        ]
    });
    let stored = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        follower.ok("plan_store", json!({"task": "tidy up src/main.rs", "trace": trace})),
    )
    .await
    .expect("plan_store answered");
    assert_eq!(stored["slots"], json!(["file"]), "{stored}");
    for s in [&owner, &follower] {
        let stats = s.ok("cache_stats", json!({})).await;
        assert_eq!(stats["records"]["plans"], 1, "{stats}");
    }
}
