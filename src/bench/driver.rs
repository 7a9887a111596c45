//! Drives a real `refrain serve` process over stdio with rmcp's client, as an agent would.

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
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

/// The `serve` command for a setup, using this very binary.
pub fn command(setup: &Setup) -> anyhow::Result<Command> {
    let mut c = Command::new(std::env::current_exe()?);
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
        for _ in 0..600 {
            let s = self.ok("cache_stats", serde_json::json!({})).await?;
            let state = s["model"]["state"].as_str().unwrap_or("").to_string();
            if state != "loading" {
                return Ok(state);
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        anyhow::bail!("model still loading after 12 s")
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
