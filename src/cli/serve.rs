//! `refrain serve`: the MCP server over stdio (default) or HTTP.

use super::GlobalArgs;
use crate::server::{Establishing, Handler, Link, pipes, stdio, stdout};
use clap::Args;
use std::process::ExitCode;
use std::time::Duration;

/// How long the start waits for the store to open before answering `initialize` anyway.
const START_WAIT: Duration = Duration::from_millis(20);
/// How long an exit waits for a store still opening (to report a failure, or to flush).
const EXIT_WAIT: Duration = Duration::from_secs(5);

/// Arguments of `refrain serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Serve streamable HTTP at /mcp and legacy SSE at /sse on this address (e.g. 127.0.0.1:8765).
    #[arg(long)]
    http: Option<std::net::SocketAddr>,
    /// Bearer token required on HTTP (mandatory for non-loopback addresses).
    #[arg(long, env = "REFRAIN_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// The tools to list, comma-separated: `default`, `all`, or tool names (overrides
    /// `server.tools`). Unlisted tools stay callable by name.
    #[arg(long, value_delimiter = ',')]
    tools: Option<Vec<String>>,
}

/// Runs the server until the client goes away.
pub fn run(global: &GlobalArgs, args: ServeArgs) -> anyhow::Result<ExitCode> {
    // Claim stdout for the protocol before anything (a dependency included) can print to it.
    let protocol_out = if args.http.is_none() { Some(stdout::take_protocol_stdout()?) } else { None };
    let (project, sourced) = super::resolve(global, args.token.clone())?;
    let mut config = sourced.config;
    if let Some(tools) = args.tools {
        config.server.tools = tools;
    }
    super::init_logging(&config);
    crate::tools::surface::Selection::parse(&config.server.tools).map_err(anyhow::Error::msg)?;
    super::warn_refused(&config);
    crate::embed::heap::keep_large_buffers();
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async move {
        let max = config.server.max_message_bytes;
        let link = Link::open(project, config.clone()).await?;
        // A server's ledger counts every reply's tokens: build the tokenizer before the first one
        // (other commands that open the store count nothing, or build it when they first do).
        let _ = std::thread::Builder::new().name("refrain-tokenizer".into()).spawn(crate::tokens::warm);
        // `initialize` waits for nothing: a large store takes a while to open (sled reads its
        // log) and the owner may be stopped. Tool calls wait for the link instead. A store that
        // cannot be opened is usually known within `START_WAIT`, and the start fails with it;
        // known later, every tool call is answered with it and the exit fails with it.
        let establishing = link.establish_in_background(START_WAIT).await;
        let establishing = match establishing {
            Establishing::Done(Err(e)) if e.is_fatal() => return Err(e.into()),
            other => other,
        };
        let handler = Handler::new(link.clone());
        match (args.http, protocol_out) {
            (Some(addr), _) => crate::server::http::serve(addr, handler, &config).await?,
            (None, Some(out)) => stdio::serve(pipes::stdin(), pipes::stdout(out), handler, max).await?,
            (None, None) => anyhow::bail!("stdout could not be claimed for the protocol"),
        }
        let failed = match establishing.outcome(EXIT_WAIT).await {
            Some(Err(e)) if e.is_fatal() => Some(e),
            _ => None,
        };
        // Tool replies' ledger lines still queued are written before the final flush.
        crate::ledger::settle().await;
        link.shutdown().await;
        drop(link);
        if let Some(e) = failed {
            return Err(e.into());
        }
        Ok::<_, anyhow::Error>(())
    })?;
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    Ok(ExitCode::SUCCESS)
}
