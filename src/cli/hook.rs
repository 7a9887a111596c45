//! `refrain hook <agent> <event>`: answer an agent hook from the payload on stdin.
//!
//! Never blocks or breaks the agent: everything runs under `hooks.timeout_ms`, and any failure
//! (malformed payload, no store, unknown tool, timeout) ends in exit 0 with no output. A hook only
//! ever follows the `refrain serve` that owns the project's store; with none running it does
//! nothing that needs the store (a file the agent wrote meanwhile is caught by the freshness check
//! on the next get). The link is made on the first tool call only, so an answer that needs no store
//! (a read dedup note) never waits for one. Stdout carries only the answer: fd 1 points at stderr
//! while refrain works.

use super::GlobalArgs;
use crate::hooks::{self, Agent, Caller, Context, Event, Payload};
use crate::server::{Link, stdout};
use clap::Args;
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use serde_json::Value;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Largest payload read from stdin.
const MAX_PAYLOAD_BYTES: u64 = 16 * 1024 * 1024;

/// Arguments of `refrain hook`.
#[derive(Debug, Args)]
pub struct HookArgs {
    /// The agent sending the hook: claude, codex, gemini, qwen, opencode or cursor.
    agent: String,
    /// The hook event, as the agent names it (UserPromptSubmit, AfterTool, postToolUse, …).
    event: String,
}

/// Reaches refrain's tools through the project's running owner, linking on first use.
struct LinkCaller {
    project: crate::project::Project,
    config: crate::config::Config,
    link: tokio::sync::OnceCell<Option<Arc<Link>>>,
}

impl LinkCaller {
    async fn link(&self) -> Option<&Arc<Link>> {
        let open = || async {
            Link::follow(self.project.clone(), self.config.clone())
                .await
                .map_err(|e| tracing::debug!(error = %e, "no store link"))
                .ok()
        };
        self.link.get_or_init(open).await.as_ref()
    }
}

impl Caller for LinkCaller {
    async fn call(&self, tool: &str, args: Value) -> Option<Value> {
        let Value::Object(args) = args else { return None };
        let request = CallToolRequestParams::new(tool.to_string()).with_arguments(args);
        match self.link().await?.call_tool(request, None).await {
            Ok(CallToolResponse::Complete(r)) if r.is_error != Some(true) => {
                tracing::debug!(tool, output = ?r.structured_content, "hook tool call answered");
                r.structured_content
            }
            Ok(CallToolResponse::Complete(r)) => {
                tracing::debug!(tool, content = ?r.content, "hook tool call was refused");
                None
            }
            Ok(_) => None,
            Err(e) => {
                tracing::debug!(tool, error = %e, "hook tool call gave nothing");
                None
            }
        }
    }
}

/// Runs the hook; always exits 0.
pub fn run(global: &GlobalArgs, args: HookArgs) -> anyhow::Result<ExitCode> {
    let Ok(out) = stdout::take_protocol_stdout() else { return Ok(ExitCode::SUCCESS) };
    init_quiet_logging();
    let Ok(agent) = Agent::parse(&args.agent) else { return Ok(ExitCode::SUCCESS) };
    let Ok(event) = Event::parse(agent, &args.event) else { return Ok(ExitCode::SUCCESS) };
    // For `refrain doctor`: this agent's hook for this event runs. The home comes from the user's
    // own settings (flags, environment, user config file), as the agent's server finds it.
    if let Ok(home) = super::home(global) {
        hooks::seen::record(&home, agent, &args.event);
    }
    let Ok(runtime) = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() else {
        return Ok(ExitCode::SUCCESS);
    };
    let global = global.clone();
    runtime.block_on(async move {
        // The timeout is only known once the config is read; bound that part by the default.
        let answer = work(global, agent, event).await;
        if let Some(value) = answer {
            let mut out = out;
            let mut line = value.to_string();
            line.push('\n');
            let _ = out.write_all(line.as_bytes()).await;
            let _ = out.flush().await;
        }
    });
    runtime.shutdown_timeout(Duration::from_millis(200));
    Ok(ExitCode::SUCCESS)
}

async fn work(global: GlobalArgs, agent: Agent, event: Event) -> Option<Value> {
    let default = Duration::from_millis(crate::config::HooksConfig::default().timeout_ms);
    let started = tokio::time::Instant::now();
    let (payload, project, config) = tokio::time::timeout(default, prepare(&global)).await.ok()??;
    let budget = Duration::from_millis(config.hooks.timeout_ms).saturating_sub(started.elapsed());
    let ctx = Context {
        config: config.hooks.clone(),
        journal_dir: Some(project.dir.join("journal")),
        home: directories::BaseDirs::new().map(|d| d.home_dir().to_path_buf()),
    };
    let caller = LinkCaller { project, config, link: tokio::sync::OnceCell::new() };
    let run = hooks::respond(agent, event, &payload, &ctx, &caller);
    match tokio::time::timeout(budget, run).await {
        Ok(answer) => answer,
        Err(_) => {
            tracing::warn!(hook = event.name(), "hook gave up after hooks.timeout_ms");
            None
        }
    }
}

async fn prepare(global: &GlobalArgs) -> Option<(Payload, crate::project::Project, crate::config::Config)> {
    let mut bytes = Vec::new();
    tokio::io::stdin().take(MAX_PAYLOAD_BYTES).read_to_end(&mut bytes).await.ok()?;
    let payload =
        Payload::parse(&bytes).map_err(|e| tracing::debug!(error = %e, "ignoring hook payload")).ok()?.normalize();
    // Serve the project the agent works in, resolved the way the agent's own server resolves it.
    if let (None, Some(cwd)) = (&global.project, payload.cwd.as_deref().filter(|c| std::path::Path::new(c).is_dir())) {
        std::env::set_current_dir(cwd).ok()?;
    }
    let (project, sourced) =
        super::resolve(global, None).map_err(|e| tracing::debug!(error = %e, "no project")).ok()?;
    Some((payload, project, sourced.config))
}

/// Hooks log errors only (to stderr) unless REFRAIN_LOG says otherwise: agents may show stderr.
fn init_quiet_logging() {
    use tracing_subscriber::{EnvFilter, fmt};
    let filter = EnvFilter::try_from_env("REFRAIN_LOG").unwrap_or_else(|_| EnvFilter::new("error"));
    let _ = fmt().with_env_filter(filter).with_ansi(false).with_writer(std::io::stderr).try_init();
}
