//! `refrain dashboard`: the report's page served live on 127.0.0.1 at a random port, behind a
//! random token in the URL it prints. Requests without the token, or naming another Host or
//! Origin (DNS rebinding, other sites' pages), are refused. The history is checked every few
//! seconds; when a file grew (agents at work), only the changed files are read again and the
//! page's generation moves on, which the open page notices and reloads.
//!
//! Served with axum (already refrain's HTTP stack) over hyper's HTTP/1 connections, each closed
//! when it sends no complete request head for `IDLE_SLACK` past the page's poll interval (idle
//! keep-alive and slow or silent clients alike); no files are written.

use super::GlobalArgs;
use super::report::{HistoryArgs, Plan, build, plan};
use crate::report::{self, Report, html};
use axum::Router;
use axum::extract::{Query, Request, State};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Json, Response};
use axum::routing::get;
use clap::Args;
use http::{HeaderValue, StatusCode, header};
use serde::Deserialize;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::RwLock;

/// `refrain dashboard`.
#[derive(Debug, Args)]
pub struct DashboardArgs {
    #[command(flatten)]
    history: HistoryArgs,
    /// Port on 127.0.0.1 (default: a random free port).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Seconds between checks for new history.
    #[arg(long, default_value_t = 5)]
    refresh_secs: u64,
}

/// What the server shows now.
struct Shown {
    generation: u64,
    page: String,
    report: Report,
}

#[derive(Clone)]
struct Site {
    token: Arc<String>,
    port: u16,
    shown: Arc<RwLock<Shown>>,
}

#[derive(Deserialize)]
struct TokenQuery {
    token: Option<String>,
}

/// Runs the dashboard until interrupted.
pub fn run(global: &GlobalArgs, args: DashboardArgs) -> anyhow::Result<ExitCode> {
    let plan = plan(global, &args.history)?;
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    rt.block_on(serve(plan, args))
}

async fn serve(plan: Plan, args: DashboardArgs) -> anyhow::Result<ExitCode> {
    let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], args.port))).await?;
    let port = listener.local_addr()?.port();
    let token = uuid::Uuid::new_v4().simple().to_string();
    let poll_ms = (args.refresh_secs.max(1) * 1000).min(10_000);
    let mut cache = report::Cache::default();
    let first = build(&plan, Some(&mut cache), true).await;
    let page = html::render(&first, html::Mode::Live { generation: 1, poll_ms })?;
    let shown = Arc::new(RwLock::new(Shown { generation: 1, page, report: first }));
    let site = Site { token: Arc::new(token.clone()), port, shown: shown.clone() };
    let app = Router::new()
        .route("/", get(page_handler))
        .route("/api/generation", get(generation_handler))
        .route("/api/report", get(report_handler))
        .layer(middleware::from_fn_with_state(site.clone(), guard))
        .with_state(site);
    let url = format!("http://127.0.0.1:{port}/?token={token}");
    print_line(&format!("refrain dashboard: {url}"))?;
    eprintln!("refrain: serving the report on 127.0.0.1:{port}; it refreshes as agents work. Ctrl-C stops it.");
    let refresher = tokio::spawn(refresh(plan, cache, shown, Duration::from_secs(args.refresh_secs.max(1)), poll_ms));
    let result = accept(listener, app, Duration::from_millis(poll_ms) + IDLE_SLACK).await;
    refresher.abort();
    result?;
    Ok(ExitCode::SUCCESS)
}

/// How long past the page's poll interval a connection may wait without a complete request head:
/// the open page polls well within it, a silent or slow client is closed after it.
const IDLE_SLACK: Duration = Duration::from_secs(5);

/// Serves connections until Ctrl-C; each is closed when no complete request head arrives within
/// `idle` (from its opening, or from its last answer on a kept-alive connection).
async fn accept(listener: tokio::net::TcpListener, app: Router, idle: Duration) -> std::io::Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(idle);
    let mut connections = tokio::task::JoinSet::new();
    let stop = tokio::signal::ctrl_c();
    tokio::pin!(stop);
    loop {
        tokio::select! {
            _ = &mut stop => return Ok(()),
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    let service = hyper_util::service::TowerToHyperService::new(app.clone());
                    let conn = http.serve_connection(TokioIo::new(stream), service);
                    connections.spawn(async move {
                        if let Err(e) = conn.await {
                            tracing::debug!(error = %e, "dashboard connection closed");
                        }
                    });
                }
                // Out of descriptors and the like: wait a little rather than spin.
                Err(e) => {
                    tracing::warn!(error = %e, "dashboard cannot accept a connection");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            },
        }
    }
}

/// Rebuilds the report when the history changed (and at least every minute, for the stores).
async fn refresh(plan: Plan, mut cache: report::Cache, shown: Arc<RwLock<Shown>>, every: Duration, poll_ms: u64) {
    let mut last = fingerprint(&plan);
    let mut built = Instant::now();
    loop {
        tokio::time::sleep(every).await;
        let now = fingerprint(&plan);
        if now == last && built.elapsed() < Duration::from_secs(60) {
            continue;
        }
        last = now;
        built = Instant::now();
        let r = build(&plan, Some(&mut cache), false).await;
        let generation = shown.read().await.generation + 1;
        match html::render(&r, html::Mode::Live { generation, poll_ms }) {
            Ok(page) => *shown.write().await = Shown { generation, page, report: r },
            Err(e) => tracing::error!(error = %e, "dashboard page not rendered"),
        }
    }
}

/// Sizes and modification times of the history files: changes when an agent writes.
fn fingerprint(plan: &Plan) -> Vec<(std::path::PathBuf, u64, i64)> {
    report::sources::discover(&plan.options.roots, plan.options.since_ms, plan.options.agent)
        .into_iter()
        .map(|f| (f.path, f.size, f.mtime_ms))
        .collect()
}

async fn page_handler(State(site): State<Site>) -> Response {
    let page = site.shown.read().await.page.clone();
    Html(page).into_response()
}

async fn generation_handler(State(site): State<Site>) -> Response {
    let g = site.shown.read().await.generation;
    Json(serde_json::json!({ "generation": g })).into_response()
}

async fn report_handler(State(site): State<Site>) -> Response {
    let r = site.shown.read().await.report.clone();
    Json(r).into_response()
}

/// Host, Origin and token checks, then headers that keep the page (and its token) to itself.
async fn guard(State(site): State<Site>, Query(q): Query<TokenQuery>, req: Request, next: Next) -> Response {
    let allowed = [format!("127.0.0.1:{}", site.port), format!("localhost:{}", site.port)];
    let host = req.headers().get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or_default();
    if !allowed.iter().any(|a| a == host) {
        return refuse(StatusCode::FORBIDDEN, format!("forbidden: Host {host:?} is not this dashboard's address"));
    }
    if let Some(origin) = req.headers().get(header::ORIGIN) {
        let o = origin.to_str().unwrap_or("<not UTF-8>");
        if !allowed.iter().any(|a| o == format!("http://{a}")) {
            return refuse(StatusCode::FORBIDDEN, format!("forbidden: Origin {o:?} may not read this dashboard"));
        }
    }
    let given = q.token.unwrap_or_default();
    if !same(given.as_bytes(), site.token.as_bytes()) {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "unauthorized: open the URL `refrain dashboard` printed, with its ?token=...".into(),
        );
    }
    let mut resp = next.run(req).await;
    let h = resp.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    resp
}

fn refuse(status: StatusCode, why: String) -> Response {
    (status, why).into_response()
}

/// Compares in time independent of where the first difference is.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn print_line(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{text}")?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::same;

    #[test]
    fn tokens_compare_whole() {
        assert!(same(b"abc", b"abc"));
        assert!(!same(b"abc", b"abd"));
        assert!(!same(b"abc", b"ab"));
    }
}
