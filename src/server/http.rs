//! MCP over HTTP: streamable HTTP at `/mcp` and the legacy HTTP+SSE transport at `/sse`.

use super::Handler;
use crate::config::Config;

/// Serves HTTP until interrupted.
pub async fn serve(addr: std::net::SocketAddr, handler: Handler, config: &Config) -> anyhow::Result<()> {
    let _ = (addr, handler, config);
    anyhow::bail!("HTTP transport is not built yet")
}
