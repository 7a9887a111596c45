//! Limits over MCP with the real binary: arguments, tasks, plans and results above their
//! configured sizes, and a full store, are refused with a sentence naming the setting; nothing
//! already stored is lost.

use crate::support::{Env, Server, text};
use rstest::rstest;
use serde_json::{Value, json};

fn template(filler: usize) -> Value {
    json!({
        "steps": [
            {"tool": "Read", "inputs": {"path": "{{params.path}}", "note": "n".repeat(filler)}},
            {"tool": "Edit", "inputs": {"path": "{{params.path}}", "flag": "{{params.flag}}"}, "side_effect": true}
        ],
        "slots": [{"name": "flag", "type": "flag"}, {"name": "path", "type": "path"}]
    })
}

#[rstest]
#[case::result_args("REFRAIN__RESULTS__MAX_ARGS_BYTES", "200", "response_cache_put",
    json!({"tool": "Grep", "args": {"pattern": "p".repeat(300)}, "result": "r"}), "results.max_args_bytes")]
#[case::result_query("REFRAIN__RESULTS__MAX_ARGS_BYTES", "200", "response_cache_put",
    json!({"tool": "WebSearch", "args": {"q": "x"}, "query": "q ".repeat(200), "result": "r"}), "results.max_args_bytes")]
#[case::store_task("REFRAIN__PLANS__MAX_TASK_BYTES", "100", "plan_store",
    json!({"task": format!("add a `--verbose` flag to src/main.rs {}", "please ".repeat(20)), "template": template(0)}), "plans.max_task_bytes")]
#[case::lookup_task("REFRAIN__PLANS__MAX_TASK_BYTES", "100", "plan_lookup",
    json!({"task": "fix it ".repeat(30)}), "plans.max_task_bytes")]
#[case::plan("REFRAIN__PLANS__MAX_PLAN_BYTES", "1000", "plan_store",
    json!({"task": "add a `--verbose` flag to src/main.rs", "template": template(2000)}), "plans.max_plan_bytes")]
#[tokio::test]
async fn inputs_above_their_limit_are_refused_with_the_setting_named(
    #[case] var: &str,
    #[case] value: &str,
    #[case] tool: &str,
    #[case] args: Value,
    #[case] setting: &str,
) {
    let env = Env::without_model();
    let mut cmd = env.cmd(&["serve"]);
    cmd.env(var, value);
    let s = Server::spawn(cmd).await;
    let err = s.err(tool, args).await;
    assert!(err.contains(setting) && err.contains("bytes, above"), "{err}");
    let stats = s.ok("cache_stats", json!({})).await;
    assert_eq!(stats["counters"]["results"]["puts"].as_u64().unwrap_or(0), 0, "{stats}");
    assert_eq!(stats["counters"]["plans"]["stored"].as_u64().unwrap_or(0), 0, "{stats}");
}

#[tokio::test]
async fn a_result_above_the_entry_limit_is_not_stored_and_says_why() {
    let env = Env::without_model();
    let mut cmd = env.cmd(&["serve"]);
    cmd.env("REFRAIN__RESULTS__MAX_ENTRY_BYTES", "1000");
    let s = Server::spawn(cmd).await;
    let small =
        s.ok("response_cache_put", json!({"tool": "Grep", "args": {"pattern": "a"}, "result": "x".repeat(900)})).await;
    assert_eq!(small["stored"], true, "{small}");
    let big =
        s.ok("response_cache_put", json!({"tool": "Grep", "args": {"pattern": "b"}, "result": "x".repeat(1100)})).await;
    assert_eq!(big["stored"], false, "{big}");
    assert!(big["reason"].as_str().unwrap().contains("results.max_entry_bytes (1000)"), "{big}");
    let miss = s.ok("response_cache_get", json!({"tool": "Grep", "args": {"pattern": "b"}})).await;
    assert_eq!(miss["status"], "miss");
}

#[tokio::test]
async fn a_full_store_refuses_writes_clearly_and_keeps_what_it_has() {
    let env = Env::without_model();
    let s = env.serve().await;
    let put = json!({"tool": "Grep", "args": {"pattern": "kept"}, "result": "kept result"});
    s.ok("response_cache_put", put.clone()).await;
    s.ok("plan_store", json!({"task": "add a `--verbose` flag to src/main.rs", "template": template(0)})).await;
    drop(s);
    let mut cmd = env.cmd(&["serve"]);
    cmd.env("REFRAIN__STORE__MAX_STORE_BYTES", "1");
    let s = Server::spawn(cmd).await;
    for (tool, args) in [
        ("response_cache_put", json!({"tool": "Grep", "args": {"pattern": "new"}, "result": "r"})),
        ("response_cache_put", put),
        ("plan_store", json!({"task": "remove the `--verbose` flag from src/main.rs", "template": template(0)})),
    ] {
        let r = s.call(tool, args).await;
        let msg = text(&r);
        assert_eq!(r.is_error, Some(true), "{tool}: {msg}");
        assert!(
            msg.contains("store is full") && msg.contains("store.max_store_bytes") && msg.contains("cache_evict"),
            "{msg}"
        );
    }
    let hit = s.ok("response_cache_get", json!({"tool": "Grep", "args": {"pattern": "kept"}})).await;
    assert_eq!(hit["status"], "hit", "a refused write must not lose the entry it would replace: {hit}");
    let plan = s.ok("plan_lookup", json!({"task": "add a `--quiet` flag to src/cli.rs"})).await;
    assert_eq!(plan["status"], "hit", "{plan}");
}

#[rstest]
#[case::explain_absolute("explain_cache_break", "absolute")]
#[case::explain_dotdot("explain_cache_break", "dotdot")]
#[case::explain_symlink("explain_cache_break", "symlink")]
#[case::compact_absolute("compact_preview", "absolute")]
#[case::compact_dotdot("compact_preview", "dotdot")]
#[case::compact_symlink("compact_preview", "symlink")]
#[tokio::test]
async fn transcripts_outside_the_allowed_roots_are_refused(#[case] tool: &str, #[case] how: &str) {
    let env = Env::without_model();
    let outside = tempfile::TempDir::new().unwrap();
    let line = r#"{"type":"user","message":{"role":"user","content":"private text"},"uuid":"u1","timestamp":"2025-01-01T00:00:00Z"}"#;
    let target = outside.path().join("private.jsonl");
    std::fs::write(&target, format!("{line}\n")).unwrap();
    let path = match how {
        "absolute" => target.clone(),
        "dotdot" => env.root().join("..").join(outside.path().file_name().unwrap()).join("private.jsonl"),
        _ => {
            let link = env.root().join("link.jsonl");
            std::os::unix::fs::symlink(&target, &link).unwrap();
            link
        }
    };
    let s = env.serve().await;
    let err = s.err(tool, json!({"transcript": path})).await;
    assert!(err.contains("outside the allowed directories") && err.contains("prompt.transcript_roots"), "{err}");
    assert!(!err.contains("private text"), "{err}");
}
