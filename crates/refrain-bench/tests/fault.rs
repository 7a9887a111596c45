//! Faults and concurrency with the real binary, through `refrain-bench crash` and `refrain-bench
//! load` at CI size: the owner is SIGKILLed during bursts of writes from several processes (and
//! HTTP clients); every acknowledged write must be read back intact, no request on a surviving
//! process may fail, and the record counts show no duplicates.

// Test helpers outside #[test] functions may fail loudly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use common::{model_dir, refrain_bin};
use tokio::process::Command;

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
