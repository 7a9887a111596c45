//! The shipped verifier model is exactly what its training manifest describes: every file the
//! runtime loads is listed with the sha256 the training run recorded, and matches it. Training
//! itself runs outside CI (training/verifier/README.md); this is the check CI can afford.
//!
//! And the server uses it the way a user gets it: loaded in the background beside the embedding
//! model, judging lookups by meaning when the calibration was made for it; a missing or damaged
//! model file is named, with the fix, in `cache_stats`, and the rule (cosine and the gates at its
//! own calibrated threshold) keeps serving.

use crate::support::{Env, Server};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::path::PathBuf;

const LOADED: [&str; 5] =
    ["model.onnx", "tokenizer.json", "config.json", "special_tokens_map.json", "tokenizer_config.json"];

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models/verifier")
}

#[test]
fn every_shipped_verifier_file_matches_the_manifest_hash() {
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir().join("manifest.json")).unwrap()).unwrap();
    let files = manifest["files"].as_object().expect("manifest.json has a files table");
    for name in LOADED {
        let want = files.get(name).and_then(|v| v.as_str()).unwrap_or_else(|| panic!("{name} not in the manifest"));
        let got = hex::encode(Sha256::digest(std::fs::read(dir().join(name)).unwrap()));
        assert_eq!(got, want, "models/verifier/{name} differs from the file the training run recorded");
    }
    for (name, _) in files {
        assert!(LOADED.contains(&name.as_str()), "manifest lists {name}, which the runtime does not load");
    }
}

#[test]
fn the_manifest_records_where_the_model_came_from() {
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir().join("manifest.json")).unwrap()).unwrap();
    assert!(manifest["version"].is_string(), "manifest has no version");
    assert!(manifest["base_weights"].is_object(), "manifest does not name the base weights");
    let data = manifest["data"].as_array().expect("manifest lists the training data");
    assert!(data.iter().all(|d| d["license"].is_string()), "every training source carries its license");
    assert!(manifest["figures"].is_object(), "manifest carries the evaluation figures");
}

/// A calibration made for the shipped model, with thresholds low enough that a plain paraphrase
/// passes by either method (the test is about which method decides, not where the bar is).
fn calibration_for_the_shipped_model() -> Value {
    let model = std::fs::read(dir().join("model.onnx")).unwrap();
    json!({"version": 1, "rule": "test", "embedding_model": "all-MiniLM-L6-v2-int8",
           "verifier_sha256": hex::encode(Sha256::digest(model)),
           "kinds": {"result": {"cosine": {"test": {"n": 400, "scored": 1, "top": [0.5]}},
                                "cross_encoder": {"test": {"n": 400, "scored": 1, "top": [0.05]}}}}})
}

/// Stores one answer, asks a paraphrase; returns the lookup and `cache_stats`' matching section.
async fn paraphrase_lookup(s: &Server) -> (Value, Value) {
    let stored = "How do I install Rust on Ubuntu?";
    let put = json!({"tool": "WebSearch", "args": {"q": stored}, "query": stored, "result": "use rustup"});
    assert_eq!(s.ok("response_cache_put", put).await["stored"], true);
    let query = "how can I install Rust on an Ubuntu machine";
    let out = s.ok("response_cache_get", json!({"tool": "WebSearch", "query": query})).await;
    let stats = s.ok("cache_stats", json!({})).await;
    (out, stats["matching"].clone())
}

#[tokio::test]
async fn the_server_judges_by_the_shipped_model_when_the_calibration_names_it() {
    let env = Env::with_verifier(&calibration_for_the_shipped_model());
    let s = env.serve().await;
    let (out, matching) = paraphrase_lookup(&s).await;
    assert_eq!((&out["status"], &out["method"]), (&json!("hit"), &json!("cross_encoder")), "{out}");
    assert_eq!(matching["method"], "cross_encoder", "{matching}");
    assert!(matching["detail"].as_str().unwrap().contains("verifier model v"), "{matching}");
}

#[tokio::test]
async fn a_damaged_or_missing_model_is_named_and_the_rule_keeps_serving() {
    for damage in ["truncated", "missing"] {
        let env = Env::with_verifier(&calibration_for_the_shipped_model());
        let onnx = env.models.join("verifier/model.onnx");
        match damage {
            "truncated" => {
                let bytes = std::fs::read(&onnx).unwrap();
                std::fs::write(&onnx, &bytes[..bytes.len() / 2]).unwrap();
            }
            _ => std::fs::remove_file(&onnx).unwrap(),
        }
        let s = env.serve().await;
        let (out, matching) = paraphrase_lookup(&s).await;
        assert_eq!((&out["status"], &out["method"]), (&json!("hit"), &json!("cosine")), "{damage}: {out}");
        assert_eq!(matching["method"], "cosine", "{damage}: {matching}");
        let detail = matching["detail"].as_str().unwrap();
        assert!(detail.contains("model.onnx") && detail.contains("run ./install.sh"), "{damage}: {detail}");
        if damage == "truncated" {
            assert!(detail.contains("its manifest says"), "{detail}");
        }
    }
}

#[tokio::test]
async fn a_model_the_calibration_does_not_name_is_loaded_only_when_scores_are_asked_for() {
    let mut calibration = calibration_for_the_shipped_model();
    calibration["verifier_sha256"] = Value::Null;
    let env = Env::with_verifier(&calibration);
    let s = env.serve().await;
    let (out, matching) = paraphrase_lookup(&s).await;
    assert_eq!((&out["status"], &out["method"]), (&json!("hit"), &json!("cosine")), "{out}");
    let detail = matching["detail"].as_str().unwrap();
    assert!(detail.contains("not loaded"), "the model was loaded although nothing needs it: {detail}");
    let query = "what is the way to install Rust on Ubuntu";
    let explained = s.ok("response_cache_get", json!({"tool": "WebSearch", "query": query, "explain": true})).await;
    let cands = explained["candidates"].as_array().expect("explain lists the candidates");
    assert!(cands.iter().any(|c| c["verifier"].is_number()), "explain asked for scores but got none: {explained}");
    assert_eq!(explained["method"], "cosine", "a model the calibration does not name decided: {explained}");
    let detail = s.ok("cache_stats", json!({})).await["matching"]["detail"].as_str().unwrap().to_string();
    assert!(detail.contains("scores only"), "{detail}");
}
