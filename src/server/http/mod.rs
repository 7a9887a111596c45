//! MCP over HTTP: streamable HTTP at `/mcp` (rmcp's service) and the legacy HTTP+SSE transport at
//! `/sse` + `/message` (ours, in `sse`), behind one guard (`guard`: Host, Origin, token, size).
//!
//! Loopback is the default; a non-loopback bind without a token is refused before listening.
//! The listening URLs go to stderr, never stdout. Ctrl-C or SIGTERM stops the server gracefully.

pub mod guard;
pub mod sse;

use super::Handler;
use crate::config::Config;
use axum::Router;
use guard::{Guard, Local};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long open connections get to finish after a shutdown signal.
const GRACE: Duration = Duration::from_secs(3);

/// Why HTTP serving could not start.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A non-loopback address was asked for without a token.
    #[error(
        "refusing to serve HTTP on {addr} without a token: that address is reachable from other \
         machines; pass --token or set REFRAIN_TOKEN (clients then send `Authorization: Bearer \
         <token>`), or bind a loopback address such as 127.0.0.1"
    )]
    Unprotected {
        /// The requested address.
        addr: SocketAddr,
    },
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {error}")]
    Bind {
        /// The requested address.
        addr: SocketAddr,
        /// What the OS said.
        error: std::io::Error,
    },
}

/// Serves HTTP until Ctrl-C or SIGTERM.
pub async fn serve(addr: SocketAddr, handler: Handler, config: &Config) -> anyhow::Result<()> {
    let has_token = guard::token_of(&config.server).is_some();
    if !addr.ip().is_loopback() && !has_token {
        return Err(Error::Unprotected { addr }.into());
    }
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|error| Error::Bind { addr, error })?;
    let bound = listener.local_addr().map_err(|error| Error::Bind { addr, error })?;
    let shutdown = CancellationToken::new();
    let app = router(handler, config, bound, shutdown.clone());
    announce(bound, has_token);

    tokio::spawn(wait_for_signal(shutdown.clone()));
    let server = axum::serve(listener, app.into_make_service_with_connect_info::<Local>())
        .with_graceful_shutdown(shutdown.clone().cancelled_owned());
    tokio::select! {
        result = std::future::IntoFuture::into_future(server) => result?,
        () = async { shutdown.cancelled().await; tokio::time::sleep(GRACE).await } => {
            tracing::warn!(grace_ms = GRACE.as_millis() as u64, "connections still open after the grace period; closing them");
        }
    }
    tracing::info!("HTTP server stopped");
    Ok(())
}

/// The whole HTTP surface: `/mcp`, `/sse`, `/message`, all behind the guard.
fn router(handler: Handler, config: &Config, bound: SocketAddr, shutdown: CancellationToken) -> Router {
    let max = config.server.max_message_bytes;
    let factory_handler = handler.clone();
    // The guard checks Host and Origin for every route (including the bound address, which
    // rmcp's list cannot express), so rmcp's own checks are turned off rather than duplicated.
    let mcp_config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_max_request_body_bytes(max)
        .with_cancellation_token(shutdown.child_token());
    let mcp = StreamableHttpService::new(
        move || Ok(factory_handler.clone()),
        Arc::new(LocalSessionManager::default()),
        mcp_config,
    );
    let sse = sse::router(Arc::new(sse::SseState::new(handler, shutdown, max)));
    let guard = Arc::new(Guard::new(&config.server, bound));
    Router::new().nest_service("/mcp", mcp).merge(sse).layer(axum::middleware::from_fn_with_state(guard, guard::check))
}

/// Tells the user where to connect (stderr: stdout is never ours to print on in `serve`).
fn announce(bound: SocketAddr, has_token: bool) {
    let auth = if has_token { " (bearer token required)" } else { "" };
    eprintln!("refrain: listening on http://{bound}/mcp (streamable HTTP) and http://{bound}/sse (legacy SSE){auth}");
    tracing::info!(addr = %bound, token = has_token, "HTTP server listening");
}

/// Cancels `shutdown` on Ctrl-C or SIGTERM.
async fn wait_for_signal(shutdown: CancellationToken) {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGTERM; only Ctrl-C stops the server");
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = terminate => {}
        () = shutdown.cancelled() => {}
    }
    tracing::info!("shutting down the HTTP server");
    shutdown.cancel();
}
