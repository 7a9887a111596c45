//! Prompt-cache analysis over MCP: explain_cache_break and compact_preview called on the real
//! binary with captured request shapes and transcripts (tests/fixtures/transcripts).

use crate::support::{Env, repo, write};
use serde_json::{Value, json};

fn fixture(rel: &str) -> String {
    std::fs::read_to_string(repo().join("tests/fixtures/transcripts").join(rel)).expect("fixture")
}

fn captured_body() -> Value {
    let v: Value = serde_json::from_str(&fixture("captured/claude-api-request-after-hooks.json")).expect("json");
    v["body"].clone()
}

#[tokio::test]
async fn explain_names_a_system_prompt_edit_with_its_place_and_fix() {
    let env = Env::without_model();
    let s = env.serve().await;
    let a = captured_body();
    let mut b = a.clone();
    let text = b["system"][2]["text"].as_str().expect("system text").to_string();
    b["system"][2]["text"] = json!(format!("{text}\nNow: 2026-11-22 03:00"));
    let out = s.ok("explain_cache_break", json!({"before": a, "after": b})).await;
    let r = &out["report"];
    assert_eq!(r["mode"], "pair");
    assert_eq!(r["broke"], true);
    assert_eq!(r["causes"][0]["kind"], "system_edited");
    assert_eq!(r["divergence"]["path"], "system[2].text");
    assert!(r["causes"][0]["fix"].as_str().unwrap_or_default().contains("after the last cache breakpoint"));
    assert!(r["tokens"]["lost"].as_u64().unwrap_or(0) > 0);
}

#[tokio::test]
async fn transcripts_inside_the_project_are_read_and_others_refused() {
    let env = Env::without_model();
    let s = env.serve().await;
    let path =
        write(&env.root(), "sessions/s.jsonl", &fixture("captured/claude-transcript-mcp-call-then-compact.jsonl"));
    let out = s.ok("explain_cache_break", json!({"transcript": path, "last_two": true})).await;
    assert_eq!(out["report"]["mode"], "session");
    assert_eq!(out["report"]["turns"], 2);
    assert_eq!(out["report"]["compactions"], 1);
    let outside = repo().join("tests/fixtures/transcripts/captured/claude-transcript-mcp-call.jsonl");
    let err = s.err("explain_cache_break", json!({"transcript": outside})).await;
    assert!(err.contains("outside the allowed directories") && err.contains("transcript_roots"), "{err}");
    let err = s.err("explain_cache_break", json!({"before": {"model": "x"}})).await;
    assert!(err.contains("either"), "{err}");
}

#[tokio::test]
async fn compact_preview_is_deterministic_with_its_log() {
    let env = Env::without_model();
    let s = env.serve().await;
    let mut msgs = vec![json!({"role": "user", "content": [{"type": "text", "text": "go"}]})];
    for i in 0..6 {
        let id = format!("toolu_{i}");
        msgs.push(json!({"role": "assistant", "content": [{"type": "tool_use", "id": id, "name": "Read", "input": {"i": i}}]}));
        msgs.push(json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": "x".repeat(4000)}]}));
    }
    let args =
        json!({"messages": msgs, "policy": {"trigger_tokens": 0, "keep_tool_uses": 2}, "include_messages": true});
    let first = s.ok("compact_preview", args.clone()).await["plan"].clone();
    assert_eq!(first["per_tool"]["Read"]["results_cleared"], 4);
    assert!(first["tokens_after"].as_u64() < first["tokens_before"].as_u64());
    let mut again = args;
    again["replacement_log"] = first["log"].clone();
    let second = s.ok("compact_preview", again).await["plan"].clone();
    assert_eq!(first["messages"], second["messages"]);
    assert!(second["cache"]["breaks_at_message"].is_null(), "replaying the log keeps the prefix");
    let err = s.err("compact_preview", json!({"messages": [], "preset": "nope"})).await;
    assert!(err.contains("known presets"), "{err}");
}
