//! The models refrain runs: the embedding model and ONNX Runtime (their sha256 pinned here as in
//! install.sh, which provisions them) and the verifier model (checked against its manifest.json).

use super::Check;
use crate::config::Config;
use crate::embed::{MODEL_NAME, ModelFiles};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The embedding model's files under the model directory and their sha256, as install.sh pins
/// them (a test keeps the two lists equal).
const MODEL_FILES: [(&str, &str); 5] = [
    ("8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6", "model.onnx"),
    ("be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037", "tokenizer.json"),
    ("953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41", "config.json"),
    ("303df45a03609e4ead04bc3dc1536d0ab19b5358db685b6f3da123d05ec200e3", "special_tokens_map.json"),
    ("acb92769e8195aabd29b7b2137a9e6d6e25c476a4f15aa4355c233426c61576b", "tokenizer_config.json"),
];

/// The sha256 of the ONNX Runtime library install.sh installs on this platform (None elsewhere).
const RUNTIME_SHA256: Option<&str> = if cfg!(all(target_os = "linux", target_arch = "x86_64")) {
    Some("fc44112fbe06d7d689c57e11d3862031f64711007e4ee020f8eed5185fd2c1d3")
} else if cfg!(all(target_os = "linux", target_arch = "aarch64")) {
    Some("8aa3b76b28c778a2b1dd660d34161adb1d508c9ccd04ff9dc80e26eca5df8467")
} else if cfg!(all(target_os = "macos", target_arch = "aarch64")) {
    Some("f8b06155feece624e55e49124340eea279da812529ae6fbc46a9f2be9c9cad2e")
} else {
    None
};

/// The embedding model with its runtime, and the verifier.
pub fn checks(config: &Config) -> Vec<Check> {
    if !config.model.enabled {
        let what = "models are off (model.enabled = false): plans are matched without them";
        return vec![Check::warn("model", what, None)];
    }
    let dir = config.model.dir.clone().unwrap_or_else(|| config.home().join("models"));
    let fix = format!("REFRAIN_MODEL_DIR={} ./install.sh --model-only (in refrain's source checkout)", dir.display());
    let mut files = ModelFiles::under(&dir);
    let custom_runtime = config.model.runtime.clone();
    if let Some(rt) = &custom_runtime {
        files.runtime = rt.clone();
    }
    let mut bad: Vec<String> = MODEL_FILES
        .iter()
        .filter_map(|(sha, name)| wrong(&files.model_dir.join(name), Some(sha), &format!("{MODEL_NAME}/{name}")))
        .collect();
    let pinned = if custom_runtime.is_some() { None } else { RUNTIME_SHA256 };
    bad.extend(wrong(&files.runtime, pinned, &files.runtime.display().to_string()));
    let mut out = vec![if bad.is_empty() {
        Check::ok("model", format!("embedding model and ONNX Runtime present and sha256-verified in {}", dir.display()))
    } else {
        Check::problem("model", format!("in {}: {}", dir.display(), bad.join("; ")), fix.clone())
    }];
    out.push(verifier(&dir.join(crate::verify::model::DIR), &fix));
    out
}

/// The verifier's files against its manifest.
fn verifier(dir: &Path, fix: &str) -> Check {
    let manifest_path = dir.join("manifest.json");
    let Ok(text) = std::fs::read_to_string(&manifest_path) else {
        let what = format!("no verifier model in {} (matching uses plain cosine)", dir.display());
        return Check::warn("model", what, Some(fix.to_string()));
    };
    let Ok(manifest) = serde_json::from_str::<serde_json::Value>(&text) else {
        return Check::problem("model", format!("{} is not valid JSON", manifest_path.display()), fix);
    };
    let bad: Vec<String> = crate::verify::model::FILES
        .iter()
        .filter_map(|name| {
            let want = crate::verify::model::listed_sha(&manifest, name);
            match want {
                None => Some(format!("verifier/{name} (not in its manifest)")),
                Some(sha) => wrong(&dir.join(name), Some(&sha.to_lowercase()), &format!("verifier/{name}")),
            }
        })
        .collect();
    if bad.is_empty() {
        Check::ok("model", format!("verifier model present and sha256-verified in {}", dir.display()))
    } else {
        Check::problem("model", bad.join("; "), fix)
    }
}

/// What is wrong with a file that should have `sha256` (or merely exist): None when nothing.
fn wrong(path: &Path, sha256: Option<&str>, name: &str) -> Option<String> {
    let path: PathBuf = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let Ok(bytes) = std::fs::read(&path) else { return Some(format!("{name} missing")) };
    let got = hex::encode(Sha256::digest(&bytes));
    match sha256 {
        Some(want) if want != got => Some(format!("{name} has sha256 {got}, expected {want}")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pinned_hashes_are_install_shs() {
        let script = include_str!("../../../install.sh");
        for (sha, name) in MODEL_FILES {
            assert!(script.contains(&format!("{sha} {MODEL_NAME}/{name}")), "install.sh pins another {name}");
        }
        assert!(script.contains(&format!("ORT_LIB_SHA256={}", RUNTIME_SHA256.unwrap_or("none"))));
    }

    #[test]
    fn a_missing_or_changed_file_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a");
        assert_eq!(wrong(&f, None, "a").unwrap(), "a missing");
        std::fs::write(&f, "x").unwrap();
        assert!(wrong(&f, None, "a").is_none());
        assert!(wrong(&f, Some("00"), "a").unwrap().contains("has sha256 2d711642"));
    }
}
