//! `refrain serve`: the MCP server over stdio (default) or HTTP.

use super::GlobalArgs;
use crate::server::{Handler, Link, stdio, stdout};
use clap::Args;
use std::process::ExitCode;

/// Arguments of `refrain serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Serve streamable HTTP at /mcp and legacy SSE at /sse on this address (e.g. 127.0.0.1:8765).
    #[arg(long)]
    http: Option<std::net::SocketAddr>,
    /// Bearer token required on HTTP (mandatory for non-loopback addresses).
    #[arg(long, env = "REFRAIN_TOKEN", hide_env_values = true)]
    token: Option<String>,
}

/// Runs the server until the client goes away.
pub fn run(global: &GlobalArgs, args: ServeArgs) -> anyhow::Result<ExitCode> {
    // Claim stdout for the protocol before anything (a dependency included) can print to it.
    let protocol_out = if args.http.is_none() { Some(stdout::take_protocol_stdout()?) } else { None };
    let (project, sourced) = super::resolve(global, args.token.clone())?;
    let config = sourced.config;
    super::init_logging(&config);
    super::warn_refused(&config);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(async move {
        let max = config.server.max_message_bytes;
        let link = Link::open(project, config.clone()).await?;
        // `initialize` never waits for another process (the owner may be stopped); opening the
        // store here is waited for, so a store that cannot be opened stops the start.
        let wait = if link.owner_running() { 0 } else { 10 };
        if let Some(Err(e)) = link.establish_in_background(std::time::Duration::from_secs(wait)).await
            && e.is_fatal()
        {
            return Err(e.into());
        }
        let handler = Handler::new(link.clone());
        match (args.http, protocol_out) {
            (Some(addr), _) => crate::server::http::serve(addr, handler, &config).await?,
            (None, Some(out)) => stdio::serve(tokio::io::stdin(), out, handler, max).await?,
            (None, None) => anyhow::bail!("stdout could not be claimed for the protocol"),
        }
        link.shutdown().await;
        drop(link);
        Ok::<_, anyhow::Error>(())
    })?;
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    Ok(ExitCode::SUCCESS)
}
