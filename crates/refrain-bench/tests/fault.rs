//! Faults and concurrency with the real binary, through `refrain-bench crash` and `refrain-bench
//! load` at CI size: the owner is SIGKILLed during bursts of writes from several processes (and
//! HTTP clients); every acknowledged write must be read back intact, no request on a surviving
//! process may fail, and the record counts show no duplicates.

// Test helpers outside #[test] functions may fail loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use tokio::process::Command;

/// The workspace root.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The real embedding model, provisioned once by `install.sh --model-only` (as the main test
/// suite does) when no provisioned copy exists.
fn model_dir() -> PathBuf {
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
fn refrain_bin() -> PathBuf {
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

/// A scratch home and project with the real model.
struct Env {
    home: tempfile::TempDir,
    project: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        Env { home: tempfile::TempDir::new().expect("home"), project: tempfile::TempDir::new().expect("project") }
    }

    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_refrain-bench"));
        c.arg("--refrain")
            .arg(refrain_bin())
            .arg("--model-dir")
            .arg(model_dir())
            .args(args)
            .current_dir(self.project.path())
            .env("REFRAIN_HOME", self.home.path())
            .env_remove("REFRAIN_PROJECT")
            .kill_on_drop(true);
        c
    }
}

/// Runs a bench scenario; returns its stdout after asserting it succeeded.
async fn bench(env: &Env, args: &[&str]) -> String {
    let scratch = tempfile::tempdir().unwrap();
    let mut cmd = env.cmd(args);
    cmd.arg("--dir").arg(scratch.path()).env("REFRAIN_LOG", "warn");
    let out = tokio::time::timeout(std::time::Duration::from_secs(120), cmd.output()).await.expect("in time").unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{args:?} failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    stdout
}

/// The number after `label: ` in a report.
fn figure(report: &str, label: &str) -> usize {
    let line = report.lines().find(|l| l.starts_with(label)).unwrap_or_else(|| panic!("no {label:?} in:\n{report}"));
    line[label.len()..].trim_start_matches(':').trim().parse().unwrap_or_else(|_| panic!("{line}"))
}

#[tokio::test]
async fn acknowledged_writes_survive_owner_kills_at_random_moments() {
    let env = Env::new();
    let report = bench(&env, &["crash", "--rounds", "3", "--processes", "3", "--writes", "12"]).await;
    assert!(figure(&report, "writes acknowledged") >= 3 * 2 * 12, "{report}");
    assert_eq!(figure(&report, "writes lost"), 0, "{report}");
    assert_eq!(figure(&report, "writes torn"), 0, "{report}");
    assert_eq!(figure(&report, "failed rounds"), 0, "{report}");
}

#[tokio::test]
async fn stdio_and_http_clients_on_one_project_ride_through_an_owner_kill() {
    let env = Env::new();
    let report = bench(&env, &["load", "--stdio", "3", "--http", "2", "--requests", "40"]).await;
    assert!(report.contains("owner killed: after"), "{report}");
    assert_eq!(figure(&report, "requests failed on surviving processes"), 0, "{report}");
    assert_eq!(figure(&report, "writes lost"), 0, "{report}");
    assert_eq!(figure(&report, "writes torn"), 0, "{report}");
    assert!(figure(&report, "writes acknowledged") >= 4 * 20, "{report}");
}
