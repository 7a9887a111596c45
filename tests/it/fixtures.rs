//! What the plan and matching tests share: a calibration that puts a plain-cosine threshold where
//! a test needs it, a one-step shell trace as the Stop hook stores it, and the stored
//! "old logs" task most plan tests rephrase.

use crate::support::Server;
use serde_json::{Value, json};

/// A calibration whose plain-cosine threshold for `kind` (`plan` or `result`) sits just above `t`
/// (the tests place the threshold themselves, so they check behaviour, not the shipped point).
pub fn cosine_at(kind: &str, t: f32) -> Value {
    json!({"version": 1, "rule": "test", "embedding_model": "all-MiniLM-L6-v2-int8", "verifier_sha256": null,
           "kinds": {kind: {"cosine": {"test": {"n": 400, "scored": 1, "top": [t]}}}}})
}

/// A one-step shell plan, as a trace (the way the Stop hook stores what the agent ran).
pub fn one_step(command: &str) -> Value {
    json!({"steps": [{"tool": "Bash", "inputs": {"command": command}, "side_effect": true, "family": "shell"}]})
}

/// The task of the plan most plan tests store and then ask for in other words.
pub const OLD_LOGS: &str = "find files modified more than 30 days ago in /var/log";

/// Stores `OLD_LOGS` with its command as a trace; returns the plan id.
pub async fn store_old_logs(s: &Server) -> String {
    let stored = s.ok("plan_store", json!({"task": OLD_LOGS, "trace": one_step("find /var/log -mtime +30")})).await;
    stored["plan_id"].as_str().unwrap().to_string()
}
