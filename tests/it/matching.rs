//! Matching over MCP with the real binary and the real embedding model: the same text always
//! reaches its own entry, near misses are not served (and come back as suggestions, never as
//! hits), numbers must agree, feedback raises an entry's threshold and then quarantines it, the
//! optional LLM judge decides borderline candidates against a loopback mock of an
//! OpenAI-compatible API, and cache_stats says how matching is done.
//!
//! Most tests place the threshold themselves (a calibration file beside the model) so they check
//! behaviour, not the shipped operating point; the near-miss test uses what ships.

use crate::fixtures::cosine_at;
use crate::support::{Env, Server};
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const TOOL: &str = "WebSearch";

async fn store(s: &Server, query: &str, result: &str) -> String {
    let out =
        s.ok("response_cache_put", json!({"tool": TOOL, "args": {"q": query}, "query": query, "result": result})).await;
    assert_eq!(out["stored"], true, "{out}");
    out["key"].as_str().unwrap().to_string()
}

async fn ask(s: &Server, query: &str) -> Value {
    s.ok("response_cache_get", json!({"tool": TOOL, "query": query})).await
}

#[tokio::test]
async fn the_same_text_always_hits_its_own_entry_among_near_twins() {
    let env = Env::new();
    let s = env.serve().await;
    for i in 0..40 {
        store(&s, &format!("how many open issues does the repository r{i} have"), &format!("answer {i}")).await;
    }
    for i in 0..40 {
        let hit = ask(&s, &format!("how many open issues  does the repository r{i} have?")).await;
        assert_eq!(hit["status"], "hit", "{hit}");
        assert_eq!(hit["result"], format!("answer {i}"), "{hit}");
        assert_eq!(hit["method"], "exact");
    }
}

#[tokio::test]
async fn the_same_text_hits_without_any_model() {
    let env = Env::without_model();
    let s = env.serve().await;
    store(&s, "What does `cargo vendor` do?", "copies dependencies").await;
    let hit = ask(&s, "What does `cargo vendor` do").await;
    assert_eq!(hit["status"], "hit", "{hit}");
    let other = ask(&s, "What does `cargo fetch` do?").await;
    assert_eq!(other["status"], "miss");
    assert!(other["reason"].as_str().unwrap().contains("no lookup by meaning"), "{other}");
}

#[tokio::test]
async fn a_near_match_that_fails_verification_is_a_suggestion_not_a_hit() {
    let env = Env::with_calibration(&cosine_at("result", 0.99));
    let s = env.serve().await;
    store(&s, "How do I install Rust on Ubuntu?", "use rustup").await;
    let miss = ask(&s, "how can I install Rust on an Ubuntu machine").await;
    assert_eq!(miss["status"], "miss", "{miss}");
    assert!(miss.get("result").is_none(), "a suggestion never carries the result: {miss}");
    assert_eq!(miss["suggestion"]["query"], "How do I install Rust on Ubuntu?", "{miss}");
    let score = miss["suggestion"]["score"].as_f64().unwrap();
    assert!(score > 0.6 && score < 0.99, "{miss}");
    let stats = s.ok("cache_stats", json!({"area": "results"})).await;
    let counters = &stats["counters"]["results"];
    assert!(counters.get("hits").is_none(), "suggestions are not hits: {stats}");
    assert_eq!(counters["suggestions"], 1, "{stats}");
    let hit = ask(&s, miss["suggestion"]["query"].as_str().unwrap()).await;
    assert_eq!(hit["status"], "hit", "asking with the suggested text is a hit: {hit}");
    assert_eq!((hit["method"].as_str(), hit["score"].as_f64()), (Some("exact"), Some(1.0)), "the exact path: {hit}");
    assert_eq!(hit["result"], "use rustup", "{hit}");
}

#[tokio::test]
async fn numbers_and_versions_that_differ_are_never_served() {
    let env = Env::with_calibration(&cosine_at("result", 0.5));
    let s = env.serve().await;
    store(&s, "install python 3.11 on ubuntu", "apt install python3.11").await;
    let miss = ask(&s, "install python 3.12 on ubuntu").await;
    assert_eq!(miss["status"], "miss", "{miss}");
    assert!(miss["reason"].as_str().unwrap().contains("a number or version differs"), "{miss}");
    // Gates decide hits, not what is shown: the near query comes back with the gate named.
    assert_eq!(miss["suggestions"][0]["query"], "install python 3.11 on ubuntu", "{miss}");
    assert_eq!(miss["suggestions"][0]["failed"], "a number or version differs", "{miss}");
    assert!(miss.get("result").is_none(), "{miss}");
    let hit = ask(&s, "how can I install python 3.11 on ubuntu").await;
    assert_eq!(hit["status"], "hit", "{hit}");
    assert_eq!(hit["method"], "cosine");
}

#[tokio::test]
async fn another_term_direction_or_tool_is_refused_with_its_reason() {
    let env = Env::with_calibration(&cosine_at("result", 0.5));
    let s = env.serve().await;
    store(&s, "java string to localdate", "LocalDate.parse(s)").await;
    store(&s, "python enum from string value", "Color(value)").await;
    store(&s, "golang read file to string", "os.ReadFile").await;
    for (near, reason) in [
        ("java string to localdatetime", "one names a longer, different term"),
        ("python enum member to its string value", "the direction is reversed"),
        ("rust read file to string", "another language, platform or tool"),
    ] {
        let miss = ask(&s, near).await;
        assert_eq!(miss["status"], "miss", "{near:?}: {miss}");
        assert!(miss["reason"].as_str().unwrap().contains(reason), "{near:?}: {miss}");
    }
    let hit = ask(&s, "how do I convert a string to an Enum member in python").await;
    assert_eq!(hit["status"], "hit", "a rewording is still served: {hit}");
}

#[tokio::test]
async fn wrong_reports_raise_the_entry_threshold_then_quarantine_it() {
    let env = Env::with_calibration(&cosine_at("result", 0.6));
    let s = env.serve().await;
    let key = store(&s, "how do I list docker containers", "docker ps").await;
    let q = "show me the running docker containers";
    assert_eq!(ask(&s, q).await["status"], "hit");
    let out = s.ok("response_cache_feedback", json!({"key": key, "outcome": "wrong", "query": q})).await;
    assert_eq!(out["wrong"], 1, "{out}");
    assert!(out["threshold_raise"].as_f64().unwrap() > 0.0, "{out}");
    let again = ask(&s, q).await;
    assert_eq!(again["status"], "miss", "the query reported wrong is not served this entry again: {again}");
    for _ in 0..2 {
        s.ok("response_cache_feedback", json!({"key": key, "outcome": "wrong", "reason": "lists images"})).await;
    }
    let miss = ask(&s, "list the docker containers").await;
    assert!(miss["reason"].as_str().unwrap().contains("quarantined by feedback"), "{miss}");
    let exact =
        s.ok("response_cache_get", json!({"tool": TOOL, "args": {"q": "how do I list docker containers"}})).await;
    assert_eq!(exact["status"], "hit", "exact lookups are not a judgement call: {exact}");
    let stats = s.ok("cache_stats", json!({"area": "results"})).await;
    assert_eq!(stats["counters"]["results"]["feedback_wrong"], 3, "{stats}");
    assert_eq!(stats["counters"]["results"]["quarantined"], 1, "{stats}");
    let released = s.ok("response_cache_feedback", json!({"key": key, "outcome": "release"})).await;
    assert!(released["quarantined"].is_null(), "{released}");
    let err = s.err("response_cache_feedback", json!({"key": "nope", "outcome": "wrong"})).await;
    assert!(err.contains("no stored result has key nope"), "{err}");
}

#[tokio::test]
async fn cache_stats_says_how_matching_is_done() {
    let env = Env::with_calibration(&cosine_at("result", 0.9));
    let s = env.serve().await;
    ask(&s, "warm up").await;
    let stats = s.ok("cache_stats", json!({})).await;
    let m = &stats["matching"];
    assert_eq!(m["method"], "cosine", "{m}");
    assert!(m["detail"].as_str().unwrap().contains("plain cosine"), "{m}");
    assert_eq!(m["max_wrong_rate"], 0.01);
    assert!(m["thresholds"]["result/cosine"]["value"].as_f64().unwrap() > 0.9, "{m}");
    assert!(m["calibration"].as_str().unwrap().ends_with("calibration.json"), "{m}");
    let all = env.serve_all().await;
    let tools = all.client.list_all_tools().await.expect("list");
    let names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "the tool list is sorted");
    let fb = tools.iter().find(|t| t.name == "response_cache_feedback").expect("feedback tool listed");
    let a = fb.annotations.as_ref().expect("annotations");
    assert_eq!((a.read_only_hint, a.destructive_hint), (Some(false), Some(false)));
    assert!(fb.output_schema.is_some());
}

#[tokio::test]
async fn developer_near_misses_are_not_served_their_opposite() {
    let env = Env::new();
    let s = env.serve().await;
    let pairs = [
        ("how do I convert a String to an i32 in Rust", "how do I convert an i32 to a String in Rust"),
        ("undo the last git commit and discard the changes", "undo the last git commit but keep the changes"),
        ("how to enable the firewall on ubuntu", "how to disable the firewall on ubuntu"),
        // Cosine 0.95: only the term gate tells them apart.
        ("java string to localdate", "java string to localdatetime"),
        ("python enum from string value", "python enum member to its string value"),
        ("golang read file to string", "rust read file to string"),
    ];
    for (stored, _) in pairs {
        store(&s, stored, stored).await;
    }
    for (stored, near) in pairs {
        let out = ask(&s, near).await;
        assert_eq!(out["status"], "miss", "{near:?} was served {stored:?}: {out}");
    }
}

/// A loopback server speaking the OpenAI chat-completions API: answers `content` after `delay`.
async fn mock_llm(content: &'static str, delay: Duration) -> (String, Arc<AtomicUsize>) {
    use axum::{Json, Router, routing::post};
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    let app = Router::new().route(
        "/v1/chat/completions",
        post(move |Json(body): Json<Value>| {
            let counter = counter.clone();
            async move {
                counter.fetch_add(1, Ordering::SeqCst);
                assert!(body["messages"][1]["content"].as_str().unwrap_or_default().contains("Second request"));
                tokio::time::sleep(delay).await;
                Json(json!({"id": "x", "object": "chat.completion", "created": 1, "model": "m",
                    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}]}))
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move { axum::serve(listener, app).await.expect("mock serves") });
    (format!("http://{addr}/v1"), calls)
}

/// The cosine of a pair as the server sees it.
async fn cosine_of(stored: &str, query: &str) -> f32 {
    let env = Env::with_calibration(&cosine_at("result", 1.5));
    let s = env.serve().await;
    store(&s, stored, "r").await;
    let out = s.ok("response_cache_get", json!({"tool": TOOL, "query": query, "explain": true})).await;
    out["candidates"][0]["cosine"].as_f64().unwrap_or_else(|| panic!("no candidate: {out}")) as f32
}

/// A server whose cosine threshold sits at `threshold`, with the LLM judge pointed at `base`
/// through the user's own config file.
async fn judged(threshold: f32, base: &str, budget_ms: u64) -> (Env, Server) {
    let env = Env::with_calibration(&cosine_at("result", threshold));
    let config = env.home.path().join("refrain.toml");
    let body = format!(
        "[llm]\nenabled = true\nbase_url = \"{base}\"\nmodel = \"m\"\ntimeout_ms = 5000\n[matching]\nllm_budget_ms = {budget_ms}\n"
    );
    std::fs::write(&config, body).expect("user config");
    let mut cmd = env.cmd(&["serve"]);
    cmd.env("REFRAIN_CONFIG", &config);
    let s = Server::spawn(cmd).await;
    (env, s)
}

#[tokio::test]
async fn the_llm_judge_decides_borderline_candidates_and_is_asked_once_per_pair() {
    let (stored, query) = ("How do I install Rust on Ubuntu?", "how can I install Rust on an Ubuntu machine");
    let c = cosine_of(stored, query).await;
    // Just below the threshold: only the judge can let it through.
    let (base, calls) = mock_llm("{\"same\": true}", Duration::ZERO).await;
    let (_env, s) = judged(c + 0.01, &base, 2000).await;
    store(&s, stored, "use rustup").await;
    let hit = ask(&s, query).await;
    assert_eq!((&hit["status"], &hit["method"]), (&json!("hit"), &json!("llm")), "{hit}");
    assert_eq!(ask(&s, query).await["status"], "hit");
    assert_eq!(calls.load(Ordering::SeqCst), 1, "the judge's answer is cached per pair");
    // Just above the threshold: the judge can refuse it.
    let (base, _) = mock_llm("{\"same\": false}", Duration::ZERO).await;
    let (_env, s) = judged(c - 0.01, &base, 2000).await;
    store(&s, stored, "use rustup").await;
    assert_eq!(ask(&s, query).await["status"], "miss");
}

#[tokio::test]
async fn a_slow_or_broken_llm_judge_leaves_the_verdict_as_it_was() {
    let (stored, query) = ("How do I install Rust on Ubuntu?", "how can I install Rust on an Ubuntu machine");
    let c = cosine_of(stored, query).await;
    let (slow, calls) = mock_llm("{\"same\": false}", Duration::from_secs(5)).await;
    let (_env, s) = judged(c - 0.01, &slow, 300).await;
    store(&s, stored, "use rustup").await;
    let started = Instant::now();
    let hit = ask(&s, query).await;
    assert_eq!((&hit["status"], &hit["method"]), (&json!("hit"), &json!("cosine")), "{hit}");
    assert!(started.elapsed() < Duration::from_secs(3), "the budget bounds the wait: {:?}", started.elapsed());
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let (junk, _) = mock_llm("I am not sure", Duration::ZERO).await;
    let (_env, s) = judged(c + 0.01, &junk, 2000).await;
    store(&s, stored, "use rustup").await;
    let miss = ask(&s, query).await;
    assert_eq!(miss["status"], "miss", "an unclear answer leaves the miss: {miss}");
}

#[tokio::test]
async fn a_config_that_still_sets_a_removed_threshold_fails_with_what_to_do_instead() {
    let env = Env::new();
    let config = env.home.path().join("refrain.toml");
    std::fs::write(&config, "[results]\nsemantic_threshold = 0.85\n").expect("user config");
    let out = env.cmd(&["config"]).env("REFRAIN_CONFIG", &config).output().await.expect("refrain config");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("results.semantic_threshold") && err.contains(&config.display().to_string()), "{err}");
    assert!(err.contains("matching.max_wrong_rate"), "the error says what replaces it: {err}");
    // A project's file is named the same way; the server does not start on a config it misreads.
    std::fs::write(env.project.path().join("refrain.toml"), "[results]\nsemantic_verify = false\n").unwrap();
    let out = env.cmd(&["serve"]).stdin(std::process::Stdio::null()).output().await.expect("refrain serve");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && out.stdout.is_empty(), "{err}");
    assert!(err.contains("results.semantic_verify") && err.contains("refrain.toml"), "{err}");
    // Without the old line, the same files load.
    std::fs::write(env.project.path().join("refrain.toml"), "[results]\ndefault_ttl_secs = 600\n").unwrap();
    std::fs::write(&config, "[matching]\nmax_wrong_rate = 0.005\n").unwrap();
    let out = env.cmd(&["config"]).env("REFRAIN_CONFIG", &config).output().await.expect("refrain config");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("max_wrong_rate"));
}
