//! The result cache over MCP with the real binary: the seed PR's behaviours (disabled tools, a hit,
//! argument isolation, key order, mutating tools, errors, LRU eviction and refresh, clear), plus
//! freshness, invalidation, secrets, lookups by meaning and persistence across a restart.

use crate::support::{Env, Server, write};
use rstest::rstest;
use serde_json::{Value, json};

fn get(tool: &str, args: Value) -> Value {
    json!({"tool": tool, "args": args})
}

async fn put(s: &Server, body: Value) -> Value {
    s.ok("response_cache_put", body).await
}

async fn lookup(s: &Server, tool: &str, args: Value) -> Value {
    s.ok("response_cache_get", get(tool, args)).await
}

#[tokio::test]
async fn a_read_is_served_again_exactly_and_its_file_is_checked() {
    let env = Env::without_model();
    write(&env.root(), "src/lib.rs", "pub fn a() {}\n");
    let s = env.serve().await;
    let stored = put(&s, json!({"tool": "Read", "args": {"file_path": "src/lib.rs"}, "result": "pub fn a() {}"})).await;
    assert_eq!(stored["stored"], true, "{stored}");
    assert_eq!(stored["depends_on"], json!(["src/lib.rs"]));
    let hit = lookup(&s, "Read", json!({"file_path": "src/lib.rs"})).await;
    assert_eq!(hit["status"], "hit", "{hit}");
    assert_eq!(hit["matched"], "exact");
    assert_eq!(hit["result"], "pub fn a() {}");
    assert!(hit["checked"].as_str().unwrap().starts_with("1 files statted"), "{hit}");
    let other = lookup(&s, "Read", json!({"file_path": "src/main.rs"})).await;
    assert_eq!(other["status"], "miss", "arguments must isolate entries: {other}");
}

#[tokio::test]
async fn key_order_and_whitespace_do_not_matter() {
    let env = Env::without_model();
    let s = env.serve().await;
    let args: Value =
        serde_json::from_str(r#"{"repo": "a/b", "filter": {"state": "open", "labels": ["x", "y"]}}"#).unwrap();
    put(&s, json!({"tool": "mcp__github__list_issues", "args": args, "result": {"issues": [1, 2]}})).await;
    let reordered: Value =
        serde_json::from_str(r#"{"filter":{"labels":["x","y"],"state":"open"},"repo":"a/b"}"#).unwrap();
    let hit = lookup(&s, "mcp__github__list_issues", reordered).await;
    assert_eq!(hit["status"], "hit", "{hit}");
    let swapped = json!({"filter": {"labels": ["y", "x"], "state": "open"}, "repo": "a/b"});
    assert_eq!(lookup(&s, "mcp__github__list_issues", swapped).await["status"], "miss", "array order matters");
}

#[rstest]
#[case::mutating_tool(json!({"tool": "Edit", "read_only": true, "args": {"file_path": "a"}, "result": "ok"}), "changes files")]
#[case::mutating_shell(json!({"tool": "Bash", "args": {"command": "rm -rf build"}, "result": ""}), "may change things")]
#[case::error_flag(json!({"tool": "Read", "args": {"file_path": "a"}, "result": "x", "is_error": true}), "errors are never cached")]
#[case::error_text(json!({"tool": "Grep", "args": {"pattern": "a"}, "result": "Error: no such dir"}), "errors are never cached")]
#[case::unknown_tool(json!({"tool": "deploy", "args": {}, "result": "done"}), "not known to be read-only")]
#[case::disabled_tool(json!({"tool": "WebFetch", "args": {"url": "https://x"}, "result": "page"}), "disabled_tools")]
#[tokio::test]
async fn results_that_must_not_be_cached_are_refused_with_the_reason(#[case] body: Value, #[case] why: &str) {
    let env = Env::without_model();
    let mut cmd = env.cmd(&["serve"]);
    cmd.env("REFRAIN__RESULTS__DISABLED_TOOLS", r#"["WebFetch"]"#);
    let s = Server::spawn(cmd).await;
    let out = put(&s, body.clone()).await;
    assert_eq!(out["stored"], false, "{out}");
    assert!(out["reason"].as_str().unwrap().contains(why), "{out}");
    let again = lookup(&s, body["tool"].as_str().unwrap(), body["args"].clone()).await;
    assert_eq!(again["status"], "miss");
}

#[tokio::test]
async fn least_recently_used_results_go_first_and_a_hit_refreshes() {
    let env = Env::without_model();
    let mut cmd = env.cmd(&["serve"]);
    cmd.env("REFRAIN__RESULTS__MAX_TOTAL_BYTES", "250");
    let s = Server::spawn(cmd).await;
    let body = "x".repeat(100);
    for name in ["a", "b"] {
        put(&s, json!({"tool": "Glob", "args": {"pattern": name}, "trees": [], "result": body, "read_only": true}))
            .await;
    }
    // `a` is used, so `b` is now the least recently used.
    assert_eq!(lookup(&s, "Glob", json!({"pattern": "a"})).await["status"], "hit");
    let c = put(&s, json!({"tool": "Glob", "args": {"pattern": "c"}, "result": body})).await;
    assert_eq!(c["evicted"], 1, "{c}");
    assert_eq!(lookup(&s, "Glob", json!({"pattern": "b"})).await["status"], "miss");
    assert_eq!(lookup(&s, "Glob", json!({"pattern": "a"})).await["status"], "hit");
    let d = put(&s, json!({"tool": "Glob", "args": {"pattern": "d"}, "result": body})).await;
    assert_eq!(d["evicted"], 1);
    assert_eq!(lookup(&s, "Glob", json!({"pattern": "c"})).await["status"], "miss", "c was older than the refreshed a");
}

#[tokio::test]
async fn clearing_responses_empties_the_cache_and_counts() {
    let env = Env::without_model();
    let s = env.serve().await;
    for i in 0..3 {
        put(&s, json!({"tool": "WebSearch", "args": {"q": i}, "result": "r"})).await;
    }
    let out = s.ok("cache_evict", json!({"what": {"target": "responses"}})).await;
    assert_eq!(out["evicted"], 3, "{out}");
    assert_eq!(lookup(&s, "WebSearch", json!({"q": 1})).await["status"], "miss");
}

#[tokio::test]
async fn an_edited_file_makes_a_stale_miss_that_names_it() {
    let env = Env::without_model();
    let root = env.root();
    write(&root, "src/lib.rs", "pub fn a() {}\n");
    let s = env.serve().await;
    put(&s, json!({"tool": "Grep", "args": {"pattern": "fn a"}, "result": "src/lib.rs:1", "files": ["src/lib.rs"]}))
        .await;
    write(&root, "src/lib.rs", "pub fn b() {}\n");
    let miss = lookup(&s, "Grep", json!({"pattern": "fn a"})).await;
    assert_eq!(miss["status"], "miss");
    assert_eq!(miss["stale"], true);
    assert_eq!(miss["reason"], "src/lib.rs changed since this result was stored");
    let again = lookup(&s, "Grep", json!({"pattern": "fn a"})).await;
    assert_eq!(again["stale"], false, "the stale entry was evicted: {again}");
}

#[tokio::test]
async fn a_reported_write_invalidates_results_over_that_tree() {
    let env = Env::without_model();
    let root = env.root();
    write(&root, "src/a.rs", "a");
    let s = env.serve().await;
    put(&s, json!({"tool": "Glob", "args": {"pattern": "src/**/*.rs", "path": "src"}, "result": "src/a.rs"})).await;
    put(&s, json!({"tool": "WebSearch", "args": {"q": "unrelated"}, "result": "r"})).await;
    let out = s.ok("response_cache_invalidate", json!({"paths": ["src/new.rs"]})).await;
    assert_eq!(out["invalidated"].as_array().unwrap().len(), 1, "{out}");
    assert_eq!(lookup(&s, "Glob", json!({"pattern": "src/**/*.rs", "path": "src"})).await["status"], "miss");
    assert_eq!(lookup(&s, "WebSearch", json!({"q": "unrelated"})).await["status"], "hit");
}

#[tokio::test]
async fn secrets_are_redacted_before_storing_and_counted() {
    let env = Env::without_model();
    let s = env.serve().await;
    let env_file = "PORT=8080\nGITHUB_TOKEN=ghp_4fT9kQz2LmN8xWvB1cR7yH3jP0sD6aE5gU2i\nDATABASE_URL=postgres://app:S3cr3tPa55@db:5432/x\n";
    let out = put(&s, json!({"tool": "Read", "args": {"file_path": ".env"}, "result": env_file})).await;
    assert_eq!(out["redactions"], 2, "{out}");
    let hit = lookup(&s, "Read", json!({"file_path": ".env"})).await;
    let text = hit["result"].as_str().unwrap();
    assert!(text.contains("PORT=8080") && text.contains("GITHUB_TOKEN=[REDACTED:"), "{text}");
    assert!(!text.contains("ghp_4fT9") && !text.contains("S3cr3tPa55"), "{text}");
    let stats = s.ok("cache_stats", json!({"area": "results"})).await;
    assert_eq!(stats["counters"]["results"]["redactions"], 2, "{stats}");
    assert_eq!(stats["counters"]["results"]["hits"], 1);
}

#[tokio::test]
async fn results_survive_a_killed_server() {
    let env = Env::without_model();
    let s = env.serve().await;
    put(&s, json!({"tool": "WebFetch", "args": {"url": "https://example.com"}, "result": "<html>"})).await;
    crate::support::sigkill(s.pid());
    drop(s);
    let s = env.serve().await;
    let hit = lookup(&s, "WebFetch", json!({"url": "https://example.com"})).await;
    assert_eq!(hit["status"], "hit", "{hit}");
}

#[tokio::test]
async fn questions_are_found_by_meaning_within_the_same_tool_only() {
    let env = Env::new();
    let s = env.serve().await;
    let stored = put(
        &s,
        json!({"tool": "WebSearch", "args": {"query": "install rust on ubuntu"}, "query": "How do I install Rust on Ubuntu?", "result": "use rustup"}),
    )
    .await;
    assert_eq!(stored["semantic"], "indexed for lookups by meaning", "{stored}");
    let q = json!({"tool": "WebSearch", "query": "how can I install Rust on an Ubuntu machine"});
    let hit = s.ok("response_cache_get", q).await;
    assert_eq!(hit["status"], "hit", "{hit}");
    assert_eq!(hit["matched"], "semantic");
    assert!(hit["score"].as_f64().unwrap() > 0.7);
    let other_tool = s
        .ok("response_cache_get", json!({"tool": "WebFetch", "query": "how can I install Rust on an Ubuntu machine"}))
        .await;
    assert_eq!(other_tool["status"], "miss");
    let different = s
        .ok("response_cache_get", json!({"tool": "WebSearch", "query": "How do I uninstall Python on Windows?"}))
        .await;
    assert_eq!(different["status"], "miss", "{different}");
}

#[tokio::test]
async fn without_a_model_lookups_by_meaning_say_why_and_exact_still_works() {
    let env = Env::without_model();
    let s = env.serve().await;
    let out = put(&s, json!({"tool": "WebSearch", "args": {"q": "x"}, "query": "what is x", "result": "r"})).await;
    assert!(out["semantic"].as_str().unwrap().contains("exact lookups only"), "{out}");
    let miss = s.ok("response_cache_get", json!({"tool": "WebSearch", "query": "what is y"})).await;
    assert!(miss["reason"].as_str().unwrap().contains("no lookup by meaning"), "{miss}");
    assert_eq!(lookup(&s, "WebSearch", json!({"q": "x"})).await["status"], "hit");
}

#[tokio::test]
async fn index_rebuild_runs_only_without_a_server_and_keeps_lookups_by_meaning() {
    let env = Env::new();
    let mut s = env.serve().await;
    let q = "How do I install Rust on Ubuntu?";
    put(&s, json!({"tool": "WebSearch", "args": {"q": 1}, "query": q, "result": "use rustup"})).await;
    let trace = json!({"steps": [{"tool": "Bash", "inputs": {"command": "npx eslint ."}, "side_effect": false}]});
    s.ok("plan_store", json!({"task": "eslint: enable the `no-console` rule", "trace": trace})).await;
    let busy = env.cmd(&["index", "rebuild"]).output().await.unwrap();
    assert!(!busy.status.success());
    assert!(String::from_utf8_lossy(&busy.stderr).contains("server owns the store"), "{busy:?}");
    s.child.kill().await.unwrap();
    s.child.wait().await.unwrap();
    let done = env.cmd(&["index", "rebuild"]).output().await.unwrap();
    let out = String::from_utf8_lossy(&done.stdout);
    assert!(done.status.success(), "{out}\n{}", String::from_utf8_lossy(&done.stderr));
    assert!(out.contains("results/default/WebSearch: 1 vectors in the graph"), "{out}");
    assert!(out.contains("1 plan(s) filed under the words of their tasks"), "{out}");
    let s = env.serve().await;
    // Found again by its words alone, far from the task by embedding.
    let near = s.ok("plan_lookup", json!({"task": "turn on no-explicit-any in our eslint config"})).await;
    assert!(near["suggestions"].to_string().contains("no-console"), "{near}");
    let hit = s
        .ok("response_cache_get", json!({"tool": "WebSearch", "query": "how can I install Rust on an Ubuntu machine"}))
        .await;
    assert_eq!(hit["status"], "hit", "{hit}");
}

#[tokio::test]
async fn special_files_are_refused_or_stale_for_what_they_are() {
    let env = Env::without_model();
    let root = env.root();
    write(&root, "src/empty.rs", "");
    let mkfifo =
        |rel: &str| assert!(std::process::Command::new("mkfifo").arg(root.join(rel)).status().unwrap().success());
    mkfifo("run.pipe");
    let s = env.serve().await;
    let refused = put(&s, json!({"tool": "Grep", "args": {"p": 1}, "result": "r", "files": ["run.pipe"]})).await;
    assert_eq!(refused["stored"], false, "{refused}");
    assert!(refused.to_string().contains("run.pipe is a FIFO, not a regular file"), "{refused}");
    put(&s, json!({"tool": "Grep", "args": {"p": 2}, "result": "r", "files": ["src/empty.rs"]})).await;
    // The empty file becomes a FIFO (also of length 0): stale at once, never opened.
    std::fs::remove_file(root.join("src/empty.rs")).unwrap();
    mkfifo("src/empty.rs");
    let miss = tokio::time::timeout(std::time::Duration::from_secs(30), lookup(&s, "Grep", json!({"p": 2})))
        .await
        .expect("the freshness check waited on a FIFO");
    assert_eq!(miss["stale"], true, "{miss}");
    assert_eq!(miss["reason"], "src/empty.rs is now a FIFO, no longer the file this result was stored with");
}
