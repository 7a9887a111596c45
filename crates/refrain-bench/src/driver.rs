//! Drives a real `refrain serve` process over stdio with rmcp's client, as an agent would.

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use tokio::process::{Child, Command};

/// Where a benchmark server keeps its data and finds its model.
#[derive(Debug, Clone)]
pub struct Setup {
    /// refrain home for the run.
    pub home: PathBuf,
    /// The project served.
    pub project: PathBuf,
    /// The model directory (may be empty to run without a model).
    pub models: PathBuf,
}

/// A running server and its client.
pub struct Spawned {
    /// The process.
    pub child: Child,
    /// The MCP client.
    pub client: RunningService<RoleClient, ()>,
}

static BINARY: OnceLock<PathBuf> = OnceLock::new();

/// Drives this `refrain` binary instead of the one found by `binary` (the `--refrain` flag).
pub fn use_binary(path: PathBuf) {
    let _ = BINARY.set(path);
}

/// The `refrain` binary benchmarks drive: the one given with `--refrain`, else `$REFRAIN_BIN`,
/// else the `refrain` beside this binary (same build), else `refrain` on the PATH.
pub fn binary() -> PathBuf {
    if let Some(p) = BINARY.get() {
        return p.clone();
    }
    if let Some(p) = std::env::var_os("REFRAIN_BIN") {
        return PathBuf::from(p);
    }
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join(format!("refrain{}", std::env::consts::EXE_SUFFIX))));
    match beside {
        Some(p) if p.is_file() => p,
        _ => PathBuf::from("refrain"),
    }
}

/// The `serve` command for a setup, using the `refrain` binary under test.
pub fn command(setup: &Setup) -> anyhow::Result<Command> {
    let mut c = Command::new(binary());
    c.arg("serve")
        .arg("--project")
        .arg(&setup.project)
        .env("REFRAIN_HOME", &setup.home)
        .env("REFRAIN_MODEL_DIR", &setup.models)
        .env("REFRAIN_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    Ok(c)
}

/// Spawns a server and completes `initialize`.
pub async fn spawn(setup: &Setup) -> anyhow::Result<Spawned> {
    let mut child = command(setup)?.spawn()?;
    let out = child.stdout.take().ok_or_else(|| anyhow::anyhow!("no stdout"))?;
    let inp = child.stdin.take().ok_or_else(|| anyhow::anyhow!("no stdin"))?;
    let client = ().serve((out, inp)).await?;
    Ok(Spawned { child, client })
}

impl Spawned {
    /// Calls a tool with JSON arguments.
    pub async fn call(&self, tool: &str, args: Value) -> anyhow::Result<CallToolResult> {
        let mut p = CallToolRequestParams::new(tool.to_string());
        p.arguments = args.as_object().cloned();
        Ok(self.client.call_tool(p).await?)
    }

    /// Calls a tool that must succeed and returns its structured output.
    pub async fn ok(&self, tool: &str, args: Value) -> anyhow::Result<Value> {
        let r = self.call(tool, args).await?;
        if r.is_error == Some(true) {
            anyhow::bail!("{tool} failed: {:?}", r.content);
        }
        Ok(r.structured_content.unwrap_or(Value::Null))
    }

    /// Waits until the model finished loading (ready or unavailable); returns the state.
    pub async fn wait_model(&self) -> anyhow::Result<String> {
        for _ in 0..3000 {
            let s = self.ok("cache_stats", serde_json::json!({})).await?;
            let state = s["model"]["state"].as_str().unwrap_or("").to_string();
            if state != "loading" {
                return Ok(state);
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        anyhow::bail!("model still loading after 60 s")
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id().unwrap_or(0)
    }
}

/// A scratch setup under `base` with its own home and project.
pub fn scratch(base: &Path, name: &str, models: &Path) -> anyhow::Result<Setup> {
    let home = base.join(name).join("home");
    let project = base.join(name).join("project");
    std::fs::create_dir_all(&home)?;
    std::fs::create_dir_all(&project)?;
    Ok(Setup { home, project: project.canonicalize()?, models: models.to_path_buf() })
}
