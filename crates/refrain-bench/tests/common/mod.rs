//! What the bench's integration tests share: the workspace, the real embedding model and the
//! `refrain` binary of the same build.

// Test helpers may fail loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The real embedding model, provisioned once by `install.sh --model-only` (as the main test
/// suite does) when no provisioned copy exists.
pub fn model_dir() -> PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        if let Ok(d) = std::env::var("REFRAIN_TEST_MODEL_DIR") {
            return PathBuf::from(d);
        }
        let home = workspace().join("target").join("test-home");
        let dir = home.join("models");
        if !dir.join("all-MiniLM-L6-v2-int8").join("model.onnx").exists() {
            std::fs::create_dir_all(&home).expect("test home");
            let lock = std::fs::File::create(home.join("provision.lock")).expect("lock file");
            lock.lock().expect("lock");
            if !dir.join("all-MiniLM-L6-v2-int8").join("model.onnx").exists() {
                let status = std::process::Command::new("bash")
                    .arg(workspace().join("install.sh"))
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

/// The `refrain` binary of the same build as this bench (built here if `cargo test` was asked
/// for this crate alone).
pub fn refrain_bin() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        let bench = PathBuf::from(env!("CARGO_BIN_EXE_refrain-bench"));
        let dir = bench.parent().expect("bench binary directory").to_path_buf();
        let bin = dir.join(format!("refrain{}", std::env::consts::EXE_SUFFIX));
        if !bin.is_file() {
            let release = dir.file_name().is_some_and(|n| n == "release");
            let mut build = std::process::Command::new(env!("CARGO"));
            build.current_dir(workspace()).args(["build", "-p", "refrain", "--bin", "refrain"]);
            if release {
                build.arg("--release");
            }
            assert!(build.status().expect("cargo build").success(), "building refrain failed");
        }
        bin
    })
    .clone()
}
