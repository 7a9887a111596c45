//! The real `refrain` binary over stdio MCP, as an agent runs it: one server per run, in a scratch
//! project and home (or the ones given), with the model directory given.

use anyhow::{Context, bail};
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use tokio::process::Command;

/// A connected server; a scratch directory it was started in is removed on drop.
pub struct Server {
    client: RunningService<RoleClient, ()>,
    _scratch: Option<ScratchDir>,
}

/// A scratch directory removed when the server that ran in it goes.
struct ScratchDir(PathBuf);

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Server {
    /// Starts `binary serve` for `project` with refrain's data in `home` and models in `models`;
    /// `env` adds settings (e.g. `REFRAIN__MATCHING__MAX_WRONG_RATE`). Its log goes to `log`.
    pub async fn start(
        binary: &Path,
        project: &Path,
        home: &Path,
        models: &Path,
        env: &[(String, String)],
        log: &Path,
    ) -> anyhow::Result<Server> {
        let mut cmd = Command::new(binary);
        cmd.arg("serve")
            .arg("--project")
            .arg(project)
            .env("REFRAIN_HOME", home)
            .env("REFRAIN_MODEL_DIR", models)
            .env("REFRAIN_CONFIG", home.join("refrain.toml"))
            .env_remove("REFRAIN_PROJECT");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let log = std::fs::File::create(log).with_context(|| format!("cannot create {}", log.display()))?;
        let (transport, _) = TokioChildProcess::builder(cmd).stderr(Stdio::from(log)).spawn()?;
        let client = ().serve(transport).await.context("MCP initialize with refrain failed")?;
        Ok(Server { client, _scratch: None })
    }

    /// Starts `binary serve` on a fresh scratch project and home; `models` is the model directory
    /// (none: no model). Returns once the embedding model settled (ready or unavailable).
    pub async fn scratch(binary: &Path, models: Option<&Path>) -> anyhow::Result<Server> {
        static RUN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = RUN.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let scratch = std::env::temp_dir().join(format!("refrain-bench-{}-{n}", std::process::id()));
        let (home, project) = (scratch.join("home"), scratch.join("project"));
        std::fs::create_dir_all(&project)?;
        std::fs::create_dir_all(&home)?;
        let models = models.map(Path::to_path_buf).unwrap_or_else(|| scratch.join("no-model"));
        let env = [("REFRAIN_LOG".to_string(), "warn".to_string())];
        let mut server = Server::start(binary, &project, &home, &models, &env, &scratch.join("serve.log")).await?;
        server._scratch = Some(ScratchDir(scratch));
        server.wait_model().await?;
        Ok(server)
    }

    /// Calls a tool; an `isError` result is an error carrying its text.
    pub async fn call(&self, tool: &str, args: Value) -> anyhow::Result<Value> {
        let (is_error, out) = self.call_raw(tool, args).await?;
        if is_error {
            bail!("{tool} returned an error: {}", out["text"].as_str().unwrap_or(&out.to_string()));
        }
        Ok(out)
    }

    /// Calls a tool: (is_error, structured output, or `{"text": ...}` when there is none).
    pub async fn call_raw(&self, tool: &str, args: Value) -> anyhow::Result<(bool, Value)> {
        let Value::Object(map) = args else { bail!("arguments of {tool} must be an object") };
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = Some(map);
        let r = self.client.call_tool(params).await.with_context(|| format!("{tool} failed"))?;
        let text: Vec<String> = r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
        let out = match r.structured_content {
            Some(v) if r.is_error != Some(true) => v,
            _ => json!({"text": text.join("\n")}),
        };
        Ok((r.is_error == Some(true), out))
    }

    /// Waits until the embedding model settled (ready or unavailable).
    pub async fn wait_model(&self) -> anyhow::Result<()> {
        for _ in 0..3000 {
            let s = self.call("cache_stats", json!({})).await?;
            if s["model"]["state"].as_str() != Some("loading") {
                return Ok(());
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        bail!("the embedding model did not load within a minute")
    }

    /// Closes the connection (the server exits when its stdin closes).
    pub async fn stop(self) {
        let _ = self.client.cancel().await;
    }
}
