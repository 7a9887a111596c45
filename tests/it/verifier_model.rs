//! The shipped verifier model is exactly what its training manifest describes: every file the
//! runtime loads is listed with the sha256 the training run recorded, and matches it. Training
//! itself runs outside CI (training/verifier/README.md); this is the check CI can afford.

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
