//! Shared test helpers: a scratch project and home, the provisioned model, and an MCP client
//! talking to the real binary over stdio.

#![allow(dead_code)]

use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use tempfile::TempDir;
use tokio::process::{Child, Command};

/// The binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_refrain")
}

/// The repository root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[path = "../common/models.rs"]
mod models;

/// The directory with the real embedding model, ONNX runtime and shipped verifier model.
pub fn model_dir() -> PathBuf {
    models::model_dir(&repo())
}

/// A scratch project directory and refrain home.
pub struct Env {
    /// refrain's data home.
    pub home: TempDir,
    /// The project root.
    pub project: TempDir,
    /// Model directory given to the server (the real model unless replaced).
    pub models: PathBuf,
}

impl Env {
    /// A fresh project and home with the real model.
    pub fn new() -> Env {
        Env { home: TempDir::new().expect("home"), project: TempDir::new().expect("project"), models: model_dir() }
    }

    /// A fresh project and home with no model available.
    pub fn without_model() -> Env {
        let mut env = Env::new();
        env.models = env.home.path().join("no-models-here");
        env
    }

    /// A fresh project and home whose model directory holds the real embedding model and runtime,
    /// no verifier model, and this calibration (so tests can put the threshold where they need it).
    pub fn with_calibration(calibration: &Value) -> Env {
        let mut env = Env::new();
        let dir = env.home.path().join("models");
        std::fs::create_dir_all(dir.join("verifier")).expect("models dir");
        for entry in std::fs::read_dir(model_dir()).expect("provisioned models") {
            let entry = entry.expect("entry");
            if entry.file_name() != "verifier" {
                std::os::unix::fs::symlink(entry.path(), dir.join(entry.file_name())).expect("link model files");
            }
        }
        std::fs::write(dir.join("verifier").join("calibration.json"), calibration.to_string()).expect("calibration");
        env.models = dir;
        env
    }

    /// A fresh project and home whose model directory holds the real embedding model, runtime
    /// and shipped verifier files (copies, so a test may damage them) and this calibration.
    pub fn with_verifier(calibration: &Value) -> Env {
        let env = Env::with_calibration(calibration);
        let shipped = model_dir().join("verifier");
        for name in [
            "model.onnx",
            "tokenizer.json",
            "config.json",
            "special_tokens_map.json",
            "tokenizer_config.json",
            "manifest.json",
        ] {
            std::fs::copy(shipped.join(name), env.models.join("verifier").join(name)).expect("copy verifier file");
        }
        env
    }

    /// The project root (canonical).
    pub fn root(&self) -> PathBuf {
        self.project.path().canonicalize().expect("canonical project")
    }

    /// A `refrain` command with this env's home, model and project.
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(bin());
        c.args(args)
            .arg("--project")
            .arg(self.project.path())
            .env("REFRAIN_HOME", self.home.path())
            .env("REFRAIN_MODEL_DIR", &self.models)
            .env_remove("REFRAIN_PROJECT")
            .env("REFRAIN_LOG", "info")
            .kill_on_drop(true);
        c
    }

    /// Spawns `refrain serve` over stdio and connects an MCP client.
    pub async fn serve(&self) -> Server {
        Server::spawn(self.cmd(&["serve"])).await
    }

    /// Spawns `refrain serve` with one setting given by its environment variable (as a user's
    /// shell would set it).
    pub async fn serve_with(&self, var: &str, value: &str) -> Server {
        let mut cmd = self.cmd(&["serve"]);
        cmd.env(var, value);
        Server::spawn(cmd).await
    }

    /// Spawns `refrain serve --tools all`: every tool listed, with its full schema.
    pub async fn serve_all(&self) -> Server {
        Server::spawn(self.cmd(&["serve", "--tools", "all"])).await
    }
}

/// A running server process and the rmcp client connected to it.
pub struct Server {
    /// The process.
    pub child: Child,
    /// The MCP client.
    pub client: RunningService<RoleClient, ()>,
}

impl Server {
    /// Spawns a configured command and initializes MCP over its stdio.
    pub async fn spawn(mut cmd: Command) -> Server {
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
        let mut child = cmd.spawn().expect("spawn refrain");
        let out = child.stdout.take().expect("stdout");
        let inp = child.stdin.take().expect("stdin");
        let client = ().serve((out, inp)).await.expect("initialize");
        Server { child, client }
    }

    /// Calls a tool and returns the raw result.
    pub async fn call(&self, tool: &str, args: Value) -> CallToolResult {
        let args = match args {
            Value::Object(m) => Some(m),
            Value::Null => None,
            other => panic!("arguments must be an object, got {other}"),
        };
        let mut params = CallToolRequestParams::new(tool.to_string());
        params.arguments = args;
        self.client.call_tool(params).await.unwrap_or_else(|e| panic!("{tool} failed at the protocol level: {e}"))
    }

    /// Calls a tool that must succeed; returns its structured output.
    pub async fn ok(&self, tool: &str, args: Value) -> Value {
        let r = self.call(tool, args).await;
        assert_ne!(r.is_error, Some(true), "{tool} returned an error: {}", text(&r));
        r.structured_content.clone().unwrap_or_else(|| panic!("{tool} returned no structured content: {}", text(&r)))
    }

    /// Calls a tool that must fail with an agent-fixable error; returns the error text.
    pub async fn err(&self, tool: &str, args: Value) -> String {
        let r = self.call(tool, args).await;
        assert_eq!(r.is_error, Some(true), "{tool} was expected to fail: {}", text(&r));
        text(&r)
    }

    /// Ends the session (closes the server's stdin) and waits, up to 60 s, until the process has
    /// exited, so a test that goes on to touch the store knows the server let go of it.
    pub async fn stop(self) {
        let Server { mut child, client } = self;
        let _ = client.cancel().await;
        match tokio::time::timeout(std::time::Duration::from_secs(60), child.wait()).await {
            Ok(status) => {
                status.expect("wait for refrain serve");
            }
            Err(_) => panic!("refrain serve did not exit within 60 s of its stdin closing"),
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id().expect("pid")
    }
}

/// The text content of a tool result.
pub fn text(r: &CallToolResult) -> String {
    r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect::<Vec<_>>().join("\n")
}

/// Kills a process with SIGKILL.
pub fn sigkill(pid: u32) {
    let _ = std::process::Command::new("kill").arg("-9").arg(pid.to_string()).status();
}

/// Writes a file under a directory, creating parents.
pub fn write(dir: &Path, rel: &str, body: &str) -> PathBuf {
    let p = dir.join(rel);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(&p, body).expect("write");
    p
}
