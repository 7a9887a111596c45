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

#[path = "../../../../tests/common/models.rs"]
mod models;

/// The real embedding model, provisioned as the main test suite provisions it.
pub fn model_dir() -> PathBuf {
    models::model_dir(&workspace())
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
