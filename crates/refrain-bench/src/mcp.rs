//! A real `refrain serve` process in a scratch project and home, driven over stdio with rmcp's
//! client, as an agent drives it.

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use tokio::process::{Child, Command};

/// A running server; its scratch directories are removed on drop.
pub struct Server {
    _child: Child,
    client: RunningService<RoleClient, ()>,
    scratch: PathBuf,
}

impl Server {
    /// Starts `bin serve` on a fresh project; `models` is the model directory (none: no model).
    pub async fn start(bin: &Path, models: Option<&Path>) -> anyhow::Result<Server> {
        static RUN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = RUN.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let scratch = std::env::temp_dir().join(format!("refrain-bench-{}-{n}", std::process::id()));
        let (home, project) = (scratch.join("home"), scratch.join("project"));
        std::fs::create_dir_all(&project)?;
        let models = models.map(Path::to_path_buf).unwrap_or_else(|| scratch.join("no-model"));
        let mut child = Command::new(bin)
            .arg("serve")
            .arg("--project")
            .arg(&project)
            .env("REFRAIN_HOME", &home)
            .env("REFRAIN_MODEL_DIR", &models)
            .env("REFRAIN_LOG", "warn")
            .env_remove("REFRAIN_PROJECT")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| anyhow::anyhow!("cannot start {}: {e}", bin.display()))?;
        let out = child.stdout.take().ok_or_else(|| anyhow::anyhow!("no stdout"))?;
        let inp = child.stdin.take().ok_or_else(|| anyhow::anyhow!("no stdin"))?;
        let client = ().serve((out, inp)).await?;
        let server = Server { _child: child, client, scratch };
        server.wait_model().await?;
        Ok(server)
    }

    /// Calls a tool: (is_error, structured output, or `{"text": ...}` when there is none).
    pub async fn call(&self, tool: &str, args: Value) -> anyhow::Result<(bool, Value)> {
        let mut p = CallToolRequestParams::new(tool.to_string());
        p.arguments = args.as_object().cloned();
        let r = self.client.call_tool(p).await?;
        let text: Vec<String> = r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
        let out = r.structured_content.unwrap_or_else(|| json!({"text": text.join("\n")}));
        Ok((r.is_error == Some(true), out))
    }

    /// Waits until the embedding model settled (ready or unavailable).
    async fn wait_model(&self) -> anyhow::Result<()> {
        for _ in 0..3000 {
            let (_, s) = self.call("cache_stats", json!({})).await?;
            if s["model"]["state"].as_str() != Some("loading") {
                return Ok(());
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        anyhow::bail!("the embedding model did not load within a minute")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.scratch);
    }
}
