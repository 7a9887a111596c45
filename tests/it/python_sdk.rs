//! The official MCP Python SDK (`mcp` 2.3.0 from PyPI) as an outside client of the real binary,
//! over stdio and over streamable HTTP: the `server/discover` probe it sends first, initialize,
//! tools/list (the default tools) and a `cache_stats` call (listed or not, callable by name).
//!
//! The SDK is installed with pip into a cache under the target directory when missing. Nothing is
//! skipped: without python3 or pip the tests fail and say what to install.

use crate::http::server::{Model, Server, command, model_dir};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

const SDK: &str = "mcp==2.3.0";

/// The directory holding the SDK, installing it once per cache.
fn sdk_dir() -> PathBuf {
    static INSTALL: Mutex<()> = Mutex::new(());
    let _one_at_a_time = INSTALL.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pysdk-mcp-2.3.0");
    if dir.join("mcp-2.3.0.dist-info").is_dir() {
        return dir;
    }
    let partial = dir.with_extension("partial");
    let _ = std::fs::remove_dir_all(&partial);
    let out = Command::new("python3")
        .args(["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--target"])
        .arg(&partial)
        .arg(SDK)
        .output()
        .unwrap_or_else(|e| {
            panic!("python3 is needed to run the Python SDK client tests ({e}); install Python 3.10+ with pip")
        });
    assert!(
        out.status.success(),
        "`python3 -m pip install {SDK}` failed; these tests need pip and PyPI (or a wheel cache) to get the official MCP Python SDK:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::rename(&partial, &dir).unwrap();
    dir
}

/// Runs tests/python/sdk_client.py with these arguments and returns its JSON report.
fn run_client(args: &[&str], envs: &[(&str, &Path)]) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/sdk_client.py");
    let mut cmd = Command::new("python3");
    cmd.arg(script).args(args).env("PYTHONPATH", sdk_dir()).envs(envs.iter().map(|(k, v)| (*k, *v)));
    cmd.env_remove("REFRAIN_TOKEN").env_remove("REFRAIN_PROJECT");
    let out = cmd.stdin(Stdio::null()).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "Python SDK client failed\nstdout:\n{stdout}\nstderr:\n{stderr}");
    let last = stdout.lines().last().unwrap_or_default();
    serde_json::from_str(last).unwrap_or_else(|e| panic!("no JSON report ({e}) in:\n{stdout}\nstderr:\n{stderr}"))
}

/// What every transport must show the SDK.
fn assert_session(report: &Value, project: &Path) {
    let probes = report["discover_probes"].as_array().unwrap();
    assert!(!probes.is_empty(), "the SDK sent no server/discover probe: {report}");
    // The probe must be answered (a result, or an error the SDK falls back from), never hang.
    assert!(probes.iter().all(|p| p["answer"] == "result" || p["answer"] == "error"), "{report}");
    assert_eq!(report["server_name"], "refrain", "{report}");
    assert_eq!(report["server_version"], env!("CARGO_PKG_VERSION"), "{report}");
    let tools: Vec<&str> = report["tools"].as_array().unwrap().iter().filter_map(Value::as_str).collect();
    assert!(tools.contains(&"plan_lookup") && tools.contains(&"response_cache_get"), "{report}");
    assert!(!tools.contains(&"cache_evict"), "only the default tools are listed: {report}");
    assert_eq!(report["call_is_error"], false, "{report}");
    assert_eq!(report["call_structured"]["project"], project.canonicalize().unwrap().display().to_string(), "{report}");
}

#[test]
fn python_sdk_over_stdio() {
    let (cmd, project, home, _models) = command(&Model::Real);
    let exe = cmd.get_program().to_string_lossy().into_owned();
    let project_arg = project.path().display().to_string();
    let models = model_dir();
    let report = run_client(
        &["stdio", &exe, "--project", &project_arg, "serve"],
        &[("REFRAIN_HOME", home.path()), ("REFRAIN_MODEL_DIR", &models)],
    );
    assert_session(&report, project.path());
}

#[test]
fn python_sdk_over_streamable_http() {
    let server = Server::start("127.0.0.1:0", &[], &[], Model::Real);
    let report = run_client(&["http", &server.url("/mcp")], &[]);
    assert_session(&report, server.project.path());
}
