//! The cross-encoder: scores (stored request, new request) pairs as "same request, same answer?".
//!
//! Loaded from `<model dir>/verifier/` with fastembed's user-defined reranker (ONNX, int8; inputs
//! `input_ids`, `attention_mask`, `token_type_ids`; output `logits`), after every file was checked
//! against the sha256 in `manifest.json`. fastembed encodes one query against many documents, so
//! pairs go in as `[CLS] new [SEP] stored [SEP]`; the model is trained on both orders.

use super::Error;
use fastembed::{RerankInitOptionsUserDefined, TextRerank, TokenizerFiles, UserDefinedRerankingModel};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::path::Path;
use std::sync::Mutex;

/// The verifier's directory under the model directory.
pub const DIR: &str = "verifier";
/// The files a verifier model consists of, each checked against the manifest.
pub const FILES: [&str; 5] =
    ["model.onnx", "tokenizer.json", "config.json", "special_tokens_map.json", "tokenizer_config.json"];
/// Longest pair in tokens (truncated longest-first, as in training).
pub const MAX_TOKENS: usize = 128;

/// A loaded cross-encoder.
pub struct CrossEncoder {
    model: Mutex<TextRerank>,
    /// sha256 of its `model.onnx` (calibrations name the model they were made with).
    pub sha256: String,
    /// The version its manifest gives.
    pub version: String,
    /// How its logit and the cosine make the score.
    pub combine: Combine,
}

/// `score = sigmoid(a * logit + c * cosine + d)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Combine {
    /// Weight of the cross-encoder's logit.
    pub a: f32,
    /// Weight of the bi-encoder cosine.
    pub c: f32,
    /// Offset.
    pub d: f32,
}

impl Default for Combine {
    fn default() -> Combine {
        Combine { a: 1.0, c: 0.0, d: 0.0 }
    }
}

impl Combine {
    /// Reads `combine: {a, c, d}` from a manifest (absent: the default; present but malformed: an
    /// error saying which field).
    pub fn from_manifest(manifest: &Value) -> Result<Combine, String> {
        let v = &manifest["combine"];
        if v.is_null() {
            return Ok(Combine::default());
        }
        let field = |k: &str| -> Result<f32, String> {
            v[k].as_f64()
                .map(|x| x as f32)
                .filter(|x| x.is_finite())
                .ok_or_else(|| format!("manifest.json `combine.{k}` must be a finite number"))
        };
        Ok(Combine { a: field("a")?, c: field("c")?, d: field("d")? })
    }

    /// The score of one pair.
    pub fn score(&self, logit: f32, cosine: f32) -> f32 {
        sigmoid(self.a * logit + self.c * cosine + self.d)
    }
}

impl CrossEncoder {
    /// Checks the files against the manifest and loads the model. Blocking.
    pub fn load(dir: &Path, runtime: &Path, threads: usize) -> Result<CrossEncoder, Error> {
        let unavailable = |m: String| Error::Unavailable(m);
        let manifest_path = dir.join("manifest.json");
        let manifest: Value = std::fs::read(&manifest_path)
            .map_err(|e| {
                unavailable(format!("no verifier model at {} ({e}); run ./install.sh to provision it", dir.display()))
            })
            .and_then(|b| {
                serde_json::from_slice(&b)
                    .map_err(|e| unavailable(format!("{} is not valid JSON: {e}", manifest_path.display())))
            })?;
        let mut bytes = Vec::new();
        for name in FILES {
            let path = dir.join(name);
            let data = std::fs::read(&path).map_err(|e| {
                unavailable(format!("cannot read {} ({e}); run ./install.sh to provision the verifier", path.display()))
            })?;
            let want = listed_sha(&manifest, name)
                .ok_or_else(|| unavailable(format!("{} lists no sha256 for {name}", manifest_path.display())))?;
            let got = hex::encode(Sha256::digest(&data));
            if !got.eq_ignore_ascii_case(&want) {
                return Err(unavailable(format!(
                    "{} has sha256 {got}, its manifest says {want}; run ./install.sh to provision it again",
                    path.display()
                )));
            }
            bytes.push(data);
        }
        let environment = crate::embed::init_runtime(runtime).map_err(|e| unavailable(e.to_string()))?;
        let sha256 = hex::encode(Sha256::digest(&bytes[0]));
        let mut files = bytes.into_iter();
        let mut next = || files.next().unwrap_or_default();
        let onnx = next();
        let tokenizer = TokenizerFiles {
            tokenizer_file: next(),
            config_file: next(),
            special_tokens_map_file: next(),
            tokenizer_config_file: next(),
        };
        let options = RerankInitOptionsUserDefined::new()
            .with_max_length(MAX_TOKENS)
            .with_intra_threads(threads.max(1))
            .with_execution_providers(crate::embed::cpu_without_arena())
            .with_environment(environment);
        let model = TextRerank::try_new_from_user_defined(UserDefinedRerankingModel::new(onnx, tokenizer), options)
            .map_err(|e| unavailable(format!("cannot load the verifier from {}: {e}", dir.display())))?;
        let combine = Combine::from_manifest(&manifest)
            .map_err(|e| unavailable(format!("{e} ({}); run ./install.sh", manifest_path.display())))?;
        let version = match &manifest["version"] {
            Value::String(s) => s.clone(),
            Value::Null => "unversioned".into(),
            other => other.to_string(),
        };
        Ok(CrossEncoder { model: Mutex::new(model), sha256, version, combine })
    }

    /// P(same request, same answer) for `query` against each (stored text, cosine), in input
    /// order. Blocking.
    pub fn score(&self, query: &str, stored: &[(&str, f32)]) -> Result<Vec<f32>, Error> {
        if stored.is_empty() {
            return Ok(Vec::new());
        }
        let mut model = self.model.lock().map_err(|_| Error::Failed("verifier lock poisoned".into()))?;
        let texts: Vec<&str> = stored.iter().map(|(t, _)| *t).collect();
        let ranked = model.rerank(query, &texts, false, Some(texts.len())).map_err(|e| Error::Failed(e.to_string()))?;
        let mut out = vec![0.0; stored.len()];
        for r in ranked {
            if let (Some(slot), Some((_, cosine))) = (out.get_mut(r.index), stored.get(r.index)) {
                *slot = self.combine.score(r.score, *cosine);
            }
        }
        Ok(out)
    }
}

/// The sha256 a manifest lists for a file: `files.<name>` as a string or `{sha256}`, or
/// `sha256.<name>`.
pub(crate) fn listed_sha(manifest: &Value, name: &str) -> Option<String> {
    let files = &manifest["files"][name];
    files
        .as_str()
        .or_else(|| files["sha256"].as_str())
        .or_else(|| manifest["sha256"][name].as_str())
        .map(str::to_string)
}

fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifests_list_hashes_in_any_of_the_accepted_shapes() {
        let a = serde_json::json!({"files": {"model.onnx": "ab"}});
        let b = serde_json::json!({"files": {"model.onnx": {"sha256": "cd", "bytes": 3}}});
        let c = serde_json::json!({"sha256": {"model.onnx": "ef"}});
        assert_eq!(listed_sha(&a, "model.onnx").as_deref(), Some("ab"));
        assert_eq!(listed_sha(&b, "model.onnx").as_deref(), Some("cd"));
        assert_eq!(listed_sha(&c, "model.onnx").as_deref(), Some("ef"));
        assert_eq!(listed_sha(&c, "tokenizer.json"), None);
    }

    #[test]
    fn the_score_combines_the_logit_and_the_cosine_as_the_manifest_says() {
        let none = Combine::from_manifest(&serde_json::json!({})).unwrap();
        assert_eq!(none, Combine::default());
        assert!((none.score(0.0, 0.9) - 0.5).abs() < 1e-6, "without combine the cosine plays no part");
        let c = Combine::from_manifest(&serde_json::json!({"combine": {"a": 0.5, "c": 10.0, "d": -8.0}})).unwrap();
        // 0.5 * 2 + 10 * 0.7 - 8 = 0: the even point.
        assert!((c.score(2.0, 0.7) - 0.5).abs() < 1e-6);
        assert!(c.score(2.0, 0.9) > c.score(2.0, 0.7) && c.score(4.0, 0.7) > c.score(2.0, 0.7));
        let bad = Combine::from_manifest(&serde_json::json!({"combine": {"a": 1, "c": "x", "d": 0}})).unwrap_err();
        assert!(bad.contains("combine.c"), "{bad}");
    }

    #[test]
    fn a_missing_model_says_how_to_fix_it() {
        let dir = tempfile::tempdir().unwrap();
        let err = CrossEncoder::load(dir.path(), Path::new("/nonexistent"), 1).err().unwrap().to_string();
        assert!(err.contains("install.sh"), "{err}");
    }

    #[test]
    fn a_file_that_does_not_match_its_manifest_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut files = serde_json::Map::new();
        for name in FILES {
            std::fs::write(dir.path().join(name), name).unwrap();
            files.insert(name.into(), hex::encode(Sha256::digest(name.as_bytes())).into());
        }
        files.insert("model.onnx".into(), "00".repeat(32).into());
        std::fs::write(dir.path().join("manifest.json"), serde_json::json!({"files": files}).to_string()).unwrap();
        let err = CrossEncoder::load(dir.path(), Path::new("/nonexistent"), 1).err().unwrap().to_string();
        assert!(err.contains("model.onnx has sha256") && err.contains("manifest says"), "{err}");
    }
}
