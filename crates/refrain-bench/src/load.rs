//! `refrain-bench load`: several `refrain serve` processes on one project over stdio (the first
//! owns the store, the others follow over the socket) plus clients of a `refrain serve --http`
//! process on the same project, all sending mixed writes and reads at once; the owner is killed
//! with SIGKILL midway. Every read of a client's own acknowledged write must find it intact, no
//! request on a surviving process may fail, and a final read-back finds every acknowledged write
//! exactly once.

use crate::driver::{self, Spawned};
use crate::measure::Samples;
use crate::work::{Acked, Check, Op, Rng, counts, ok, sigkill};
use rmcp::service::{Peer, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::json;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How long one request may take before it counts as failed.
const REQUEST_DEADLINE: Duration = Duration::from_secs(30);

/// How the load is shaped.
#[derive(Debug, Clone)]
pub struct Shape {
    /// Stdio server processes (one client each); the first owns the store.
    pub stdio: usize,
    /// Clients of the one HTTP server process.
    pub http: usize,
    /// Requests per client.
    pub requests: usize,
    /// Kill the owner midway.
    pub kill: bool,
}

/// What the load run measured.
#[derive(Debug, Default)]
pub struct Report {
    shape: Option<Shape>,
    /// Requests answered.
    pub answered: usize,
    /// Requests that failed on a process that was not killed.
    pub errors: usize,
    /// Requests cut off because their own server process was the one killed.
    pub cut_off: usize,
    /// Writes acknowledged.
    pub acked: usize,
    /// Acknowledged writes missing (on a read during the run or in the final read-back).
    pub lost: usize,
    /// Acknowledged writes read back with other content.
    pub torn: usize,
    /// Latency of every answered request.
    pub latency: Samples,
    /// Seconds from start to the kill.
    pub killed_at: Option<f64>,
    /// Wall time of the load phase.
    pub wall: f64,
    /// First problems seen.
    pub problems: Vec<String>,
}

impl Report {
    /// True when nothing was lost or torn and no surviving request failed.
    pub fn clean(&self) -> bool {
        self.errors == 0 && self.lost == 0 && self.torn == 0 && self.problems.is_empty()
    }

    /// The report lines.
    pub fn text(&self) -> String {
        let (stdio, http, requests) = self.shape.as_ref().map(|s| (s.stdio, s.http, s.requests)).unwrap_or_default();
        let mut s = format!(
            "load: {} clients ({stdio} stdio server processes + {http} clients of one HTTP server process) x {requests} requests\n\
             owner killed: {}\nrequests answered: {}\nrequests failed on surviving processes: {}\n\
             requests cut off with the killed owner's own session: {}\n\
             writes acknowledged: {}\nwrites lost: {}\nwrites torn: {}\n\
             latency ms p50 / p99 / max: {}\nthroughput: {:.0} requests/s over {:.1} s\n",
            stdio + http,
            self.killed_at.map(|t| format!("after {t:.2} s")).unwrap_or_else(|| "no".into()),
            self.answered,
            self.errors,
            self.cut_off,
            self.acked,
            self.lost,
            self.torn,
            self.latency.summary(),
            self.answered as f64 / self.wall.max(1e-9),
            self.wall
        );
        for p in self.problems.iter().take(20) {
            s.push_str(&format!("problem: {p}\n"));
        }
        s
    }
}

/// A client's session, kept alive while it is used.
enum Session {
    Stdio(Spawned),
    Http(RunningService<RoleClient, ()>),
}

impl Session {
    fn peer(&self) -> Peer<RoleClient> {
        match self {
            Session::Stdio(s) => s.client.peer().clone(),
            Session::Http(c) => c.peer().clone(),
        }
    }
}

/// What one client did.
#[derive(Default)]
struct Done {
    acked: Vec<Acked>,
    latency: Vec<Duration>,
    errors: Vec<String>,
    cut_off: usize,
    lost: usize,
    torn: usize,
}

/// Runs the load under `base` and returns the report.
pub async fn run(base: &Path, models: &Path, shape: &Shape) -> anyhow::Result<Report> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let setup = driver::scratch(base, "load", models)?;
    let semantic = models.join("all-MiniLM-L6-v2-int8").exists();
    let mut sessions = Vec::new();
    for _ in 0..shape.stdio.max(1) {
        let s = driver::spawn(&setup).await?;
        ok(s.client.peer(), "cache_stats", json!({})).await?;
        sessions.push(Session::Stdio(s));
    }
    let owner = match &sessions[0] {
        Session::Stdio(s) => s.pid(),
        Session::Http(_) => 0,
    };
    let mut http_server = None;
    if shape.http > 0 {
        let (child, url) = start_http(&setup).await?;
        http_server = Some(child);
        for _ in 0..shape.http {
            sessions.push(Session::Http(().serve(StreamableHttpClientTransport::from_uri(url.clone())).await?));
        }
    }
    let total = sessions.len() * shape.requests;
    let count = Arc::new(AtomicUsize::new(0));
    let killed = Arc::new(AtomicBool::new(false));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for (c, session) in sessions.iter().enumerate() {
        let (peer, count, killed, requests) = (session.peer(), count.clone(), killed.clone(), shape.requests);
        tasks.push(tokio::spawn(client(c, peer, requests, semantic, count, killed)));
    }
    let mut report = Report { shape: Some(shape.clone()), ..Report::default() };
    if shape.kill {
        while count.load(Ordering::SeqCst) < total / 2 && !tasks.iter().all(|t| t.is_finished()) {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        killed.store(true, Ordering::SeqCst);
        sigkill(owner);
        report.killed_at = Some(started.elapsed().as_secs_f64());
    }
    let mut acked = Vec::new();
    for t in tasks {
        let d = t.await?;
        report.errors += d.errors.len();
        report.problems.extend(d.errors);
        report.cut_off += d.cut_off;
        report.lost += d.lost;
        report.torn += d.torn;
        report.answered += d.latency.len();
        d.latency.into_iter().for_each(|l| report.latency.push(l));
        acked.extend(d.acked);
    }
    report.wall = started.elapsed().as_secs_f64();
    report.acked = acked.len();
    // The final read-back goes through a new process, as the next agent would.
    let checker = driver::spawn(&setup).await?;
    if semantic {
        checker.wait_model().await?;
    }
    let peer = checker.client.peer();
    for a in &acked {
        match a.check(peer).await? {
            Check::Intact => {}
            Check::Lost => report.lost += 1,
            Check::Torn => report.torn += 1,
        }
    }
    let sent: Vec<Op> = (0..sessions.len())
        .flat_map(|c| (0..shape.requests.div_ceil(2)).map(move |i| Op::nth(c, i, semantic)))
        .collect();
    if let Err(e) = counts(peer, &sent, &acked).await {
        report.problems.push(e.to_string());
    }
    drop(sessions);
    drop(http_server);
    Ok(report)
}

/// One client: even requests write, odd ones read back one of its own acknowledged writes.
async fn client(
    c: usize,
    peer: Peer<RoleClient>,
    requests: usize,
    semantic: bool,
    count: Arc<AtomicUsize>,
    killed: Arc<AtomicBool>,
) -> Done {
    let mut d = Done::default();
    let mut rng = Rng::new(0x5EED + c as u64);
    for j in 0..requests {
        let t = Instant::now();
        let step = async {
            if j % 2 == 0 {
                let op = Op::nth(c, j / 2, semantic);
                op.send(&peer).await.map(|a| match a {
                    Some(a) => {
                        d.acked.push(a);
                        None
                    }
                    None => Some(format!("{} was refused", op.id)),
                })
            } else if d.acked.is_empty() {
                ok(&peer, "cache_stats", json!({})).await.map(|_| None)
            } else {
                let a = &d.acked[rng.below(d.acked.len() as u64) as usize];
                a.check(&peer).await.map(|v| match v {
                    Check::Intact => None,
                    Check::Lost => {
                        d.lost += 1;
                        Some(format!("{} acknowledged, then not found", a.op.id))
                    }
                    Check::Torn => {
                        d.torn += 1;
                        Some(format!("{} acknowledged, then read back different", a.op.id))
                    }
                })
            }
        };
        // A request stuck past the deadline counts as failed (and the client goes on) instead of
        // hanging the run.
        let outcome = tokio::time::timeout(REQUEST_DEADLINE, step)
            .await
            .unwrap_or_else(|_| Err(anyhow::anyhow!("no answer within {} s", REQUEST_DEADLINE.as_secs())));
        count.fetch_add(1, Ordering::SeqCst);
        match outcome {
            Ok(None) => d.latency.push(t.elapsed()),
            Ok(Some(problem)) => {
                d.latency.push(t.elapsed());
                d.errors.push(format!("client {c}: {problem}"));
            }
            Err(_) if c == 0 && killed.load(Ordering::SeqCst) => {
                d.cut_off = requests - j;
                break;
            }
            Err(e) => d.errors.push(format!("client {c} request {j} after {:?}: {e}", t.elapsed())),
        }
    }
    d
}

/// Starts `refrain serve --http` on a free loopback port of the same project; waits until it listens.
async fn start_http(setup: &driver::Setup) -> anyhow::Result<(tokio::process::Child, String)> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
    let mut cmd = driver::command(setup)?;
    cmd.arg("--http").arg(format!("127.0.0.1:{port}")).stdin(Stdio::null()).stdout(Stdio::null());
    let child = cmd.spawn()?;
    let deadline = Instant::now() + Duration::from_secs(20);
    while tokio::net::TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        if Instant::now() > deadline {
            anyhow::bail!("refrain serve --http did not listen on port {port} within 20 s");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok((child, format!("http://127.0.0.1:{port}/mcp")))
}
