//! The real `refrain` binary over stdio MCP, as an agent runs it: one server per run, in a scratch
//! project and home, with the model directory given.

use anyhow::{Context, bail};
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;
use tokio::process::Command;

/// A connected server.
pub struct Server {
    client: RunningService<RoleClient, ()>,
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
        Ok(Server { client })
    }

    /// Calls a tool; an `isError` result is an error carrying its text.
    pub async fn call(&self, tool: &str, args: Value) -> anyhow::Result<Value> {
        let Value::Object(map) = args else { bail!("arguments of {tool} must be an object") };
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = Some(map);
        let r = self.client.call_tool(params).await.with_context(|| format!("{tool} failed"))?;
        if r.is_error == Some(true) {
            let text: Vec<String> = r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
            bail!("{tool} returned an error: {}", text.join(" "));
        }
        r.structured_content.with_context(|| format!("{tool} returned no structured content"))
    }

    /// Closes the connection (the server exits when its stdin closes).
    pub async fn stop(self) {
        let _ = self.client.cancel().await;
    }
}
