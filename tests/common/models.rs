//! The real embedding model, ONNX runtime and shipped verifier the tests run with, provisioned
//! once by `install.sh --model-only` into `target/test-home` when no provisioned copy exists (or
//! the shipped verifier changed). The main suite (`tests/it`) and the bench crate's tests both
//! include this file by path, so they provision alike and share one copy.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The model directory under the workspace root `repo` (or `REFRAIN_TEST_MODEL_DIR`).
pub fn model_dir(repo: &Path) -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        if let Ok(d) = std::env::var("REFRAIN_TEST_MODEL_DIR") {
            return PathBuf::from(d);
        }
        let home = repo.join("target").join("test-home");
        let dir = home.join("models");
        // The shipped verifier model, when there is one, must be the provisioned one.
        // (The calibration too: the one beside the model is the one the server reads.)
        let stale = |dir: &Path| {
            !dir.join("all-MiniLM-L6-v2-int8").join("model.onnx").exists()
                || ["manifest.json", "calibration.json"].iter().any(|f| {
                    let shipped = std::fs::read(repo.join("models/verifier").join(f)).ok();
                    shipped.is_some() && shipped != std::fs::read(dir.join("verifier").join(f)).ok()
                })
        };
        if stale(&dir) {
            std::fs::create_dir_all(&home).expect("test home");
            let lock = std::fs::File::create(home.join("provision.lock")).expect("lock file");
            lock.lock().expect("lock");
            if stale(&dir) {
                let status = std::process::Command::new("bash")
                    .arg(repo.join("install.sh"))
                    .arg("--model-only")
                    .env("REFRAIN_HOME", &home)
                    .status()
                    .expect("run install.sh --model-only");
                assert!(status.success(), "install.sh --model-only failed: the tests need the embedding model");
            }
        }
        dir
    })
    .clone()
}
