//! The link from a transport to the project's store.
//!
//! A serving link (`Link::open`) makes this process the owner when the project's lock is free
//! (open the store, start the app, listen on the socket) and a follower otherwise (an MCP client
//! on the owner's socket). A following link (`Link::follow`, for hooks) never owns the store: with
//! no owner running it has nothing to reach. The link is established in the background, so
//! `initialize` never waits for it; a tool call waits at most `ESTABLISH_DEADLINE`.
//!
//! Every call to the owner has a deadline: the handshake `HANDSHAKE_DEADLINE`, a tool call
//! `server.request_timeout_ms` plus `GRACE` (the owner answers its own over-time calls by then). An
//! owner that misses one (stopped with Ctrl-Z, or no longer reading its socket) gets a clear error
//! naming its pid, never an endless wait. A follower whose owner goes away re-establishes the link
//! (taking over ownership if it can) and retries the request; writes are idempotent, so a retried
//! request never stores a duplicate.

use super::relay::Relay;
use super::{Handler, owner, run};
use crate::app::App;
use crate::config::Config;
use crate::project::Project;
use crate::store::{self, Store};
use crate::tools::Refrain;
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::{RequestContext, RunningService, ServiceError};
use rmcp::{ErrorData, RoleClient, RoleServer, ServiceExt};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{OnceCell, RwLock};

/// How long to keep trying to reach or become the owner before giving up.
const ESTABLISH_DEADLINE: Duration = Duration::from_secs(15);
/// How long the owner may take to accept a connection and answer `initialize`.
const HANDSHAKE_DEADLINE: Duration = Duration::from_secs(5);
/// How much longer than the request deadline a follower waits for the owner's answer.
const GRACE: Duration = Duration::from_secs(2);

/// Errors establishing the link.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The project directory could not be prepared.
    #[error(transparent)]
    Project(#[from] crate::project::Error),
    /// The store could not be opened.
    #[error(transparent)]
    Store(#[from] store::Error),
    /// The owner holds the lock but does not answer (stopped, or not reading its socket).
    #[error(
        "the refrain process that owns this project's store ({who}) is not answering: it may be stopped \\
         (Ctrl-Z in its terminal) or stuck. Resume it (`kill -CONT <pid>`) or end it, and this server takes \\
         over; until then refrain's tools cannot reach this project's store"
    )]
    NotAnswering {
        /// "pid N", or "pid unknown".
        who: String,
    },
    /// A following link found no owner to follow.
    #[error("no refrain server is running for project {project}")]
    NoOwner {
        /// Project root.
        project: String,
    },
    /// Neither owner nor follower within the deadline.
    #[error("could not reach the owner of project {project} within {secs}s: {last}")]
    Unreachable {
        /// Project root.
        project: String,
        /// Seconds waited.
        secs: u64,
        /// The last error seen.
        last: String,
    },
    /// An attempt this caller waited behind failed (its message).
    #[error("{0}")]
    Failed(String),
    /// I/O on the lock or socket.
    #[error("owner lock or socket: {0}")]
    Io(#[from] std::io::Error),
}

impl Error {
    /// Whether retrying cannot help (a store that cannot be opened, an unusable data dir), as
    /// opposed to an owner that is slow, stopped or going away.
    pub fn is_fatal(&self) -> bool {
        matches!(self, Error::Project(_) | Error::Store(_) | Error::Io(_))
    }
}

struct Owned {
    refrain: Refrain,
    self_client: OnceCell<RunningService<RoleClient, ()>>,
    _guard: owner::OwnerGuard,
}

enum Conn {
    Down,
    Local(Arc<Owned>),
    Remote(Arc<Relay>),
}

/// The link's state: a generation (bumped at every re-establishment), the connection, and the
/// last failure to establish it (so callers queued behind a failed attempt share its answer
/// instead of each waiting out a deadline of their own).
struct State {
    generation: u64,
    conn: Conn,
    failed: Option<(Instant, String)>,
}

/// A link being established in the background (see `Link::establish_in_background`).
pub enum Establishing {
    /// Known within the wait.
    Done(Result<(), Error>),
    /// Still going on: the task ends with the outcome.
    Pending(tokio::task::JoinHandle<Result<(), Error>>),
}

impl Establishing {
    /// Waits at most `wait` for a pending outcome; still pending past it.
    async fn settle(self, wait: Duration) -> Establishing {
        let Establishing::Pending(mut task) = self else { return self };
        match tokio::time::timeout(wait, &mut task).await {
            Ok(joined) => {
                Establishing::Done(joined.unwrap_or_else(|e| {
                    Err(Error::Failed(format!("establishing the link failed inside refrain: {e}")))
                }))
            }
            Err(_) => Establishing::Pending(task),
        }
    }

    /// The outcome, waiting for it at most `wait` more (None when still not known).
    pub async fn outcome(self, wait: Duration) -> Option<Result<(), Error>> {
        match self.settle(wait).await {
            Establishing::Done(outcome) => Some(outcome),
            Establishing::Pending(_) => None,
        }
    }
}

/// Whether this process may become the owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// `refrain serve` and the CLI: own the store when nobody does.
    Serve,
    /// Hooks: only ever follow a running owner.
    Follow,
}

/// This process's way to the store: owned here, or through the owner.
pub struct Link {
    project: Project,
    config: Config,
    role: Role,
    conn: RwLock<State>,
}

impl Link {
    /// A link that owns the store when nobody does and follows the owner otherwise. Returns at
    /// once; the first tool call (or `establish_in_background`) establishes it.
    pub async fn open(project: Project, config: Config) -> Result<Arc<Link>, Error> {
        Self::start(project, config, Role::Serve)
    }

    /// A link that only ever follows a running owner (hooks): it never opens the store itself.
    pub async fn follow(project: Project, config: Config) -> Result<Arc<Link>, Error> {
        Self::start(project, config, Role::Follow)
    }

    fn start(project: Project, config: Config, role: Role) -> Result<Arc<Link>, Error> {
        project.prepare()?;
        let state = State { generation: 0, conn: Conn::Down, failed: None };
        Ok(Arc::new(Link { project, config, role, conn: RwLock::new(state) }))
    }

    /// Whether another process holds the project's owner lock right now.
    pub fn owner_running(&self) -> bool {
        owner::is_held(&self.project).unwrap_or(false)
    }

    /// Establishes the link in the background: its outcome when it is known within `wait`, else
    /// the task still establishing it (a large store still opening, an owner slow to answer).
    pub async fn establish_in_background(self: &Arc<Self>, wait: Duration) -> Establishing {
        let link = self.clone();
        Establishing::Pending(tokio::spawn(async move { link.recover(0, Instant::now()).await })).settle(wait).await
    }

    /// The configuration this link was opened with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The project this link serves.
    pub fn project(&self) -> &Project {
        &self.project
    }

    /// The app when this process owns the store.
    pub async fn local_app(&self) -> Option<App> {
        match &self.conn.read().await.conn {
            Conn::Local(o) => Some(o.refrain.app.clone()),
            _ => None,
        }
    }

    /// Flushes and saves what this process owns; call before exiting.
    pub async fn shutdown(&self) {
        if let Some(app) = self.local_app().await {
            app.shutdown().await;
        }
    }

    /// True when this process owns the store.
    pub async fn is_owner(&self) -> bool {
        matches!(self.conn.read().await.conn, Conn::Local(_))
    }

    /// Calls a tool, locally or through the owner; on a broken link, re-establishes it and
    /// retries. Every wait inside has a deadline.
    pub async fn call_tool(
        self: &Arc<Self>,
        request: CallToolRequestParams,
        context: Option<RequestContext<RoleServer>>,
    ) -> Result<CallToolResponse, ErrorData> {
        let started = Instant::now();
        let limits = run::limits(&self.config);
        let mut context = context;
        for _attempt in 0..3 {
            let (generation, conn) = {
                let guard = self.conn.read().await;
                let conn = match &guard.conn {
                    Conn::Local(o) => Conn::Local(o.clone()),
                    Conn::Remote(c) => Conn::Remote(c.clone()),
                    Conn::Down => Conn::Down,
                };
                (guard.generation, conn)
            };
            let outcome = match conn {
                Conn::Local(o) => match context.take() {
                    Some(ctx) => return run::call(o.refrain.clone(), request, ctx, limits).await,
                    None => self.call_self(&o, request.clone()).await,
                },
                Conn::Remote(c) => {
                    match tokio::time::timeout(limits.timeout + GRACE, c.call_tool_once(request.clone())).await {
                        Ok(r) => r,
                        Err(_) => {
                            // A live owner answers over-time calls itself by now: it is stuck.
                            self.drop_conn(generation).await;
                            return Err(self.unavailable(Error::NotAnswering { who: self.owner_pid() }));
                        }
                    }
                }
                Conn::Down => Err(ServiceError::TransportClosed),
            };
            match outcome {
                Ok(r) => return Ok(r),
                Err(ServiceError::McpError(e)) => return Err(e),
                Err(e) => {
                    tracing::info!(error = %e, "link to the owner broke; re-establishing");
                    self.recover(generation, started).await.map_err(|e| self.unavailable(e))?;
                }
            }
        }
        Err(ErrorData::internal_error("the link to the project's owner kept breaking; try again", None))
    }

    /// The error a caller gets when the store cannot be reached.
    fn unavailable(&self, e: Error) -> ErrorData {
        tracing::warn!(error = %e, "tool call could not reach the project store");
        ErrorData::internal_error(e.to_string(), None)
    }

    fn owner_pid(&self) -> String {
        owner::owner_pid(&self.project).map(|p| format!("pid {p}")).unwrap_or_else(|| "pid unknown".into())
    }

    /// Forgets a connection that stopped answering, so the next call re-establishes the link.
    async fn drop_conn(&self, generation: u64) {
        let mut guard = self.conn.write().await;
        if guard.generation == generation && matches!(guard.conn, Conn::Remote(_)) {
            guard.conn = Conn::Down;
        }
    }

    /// A context-free call on the local tools (hooks, benchmarks) through an in-process client.
    async fn call_self(
        self: &Arc<Self>,
        o: &Owned,
        request: CallToolRequestParams,
    ) -> Result<CallToolResponse, ServiceError> {
        let client = o
            .self_client
            .get_or_try_init(|| async {
                let (a, b) = tokio::io::duplex(1 << 20);
                let handler = Handler::new(self.clone());
                tokio::spawn(async move {
                    if let Ok(running) = handler.serve(a).await {
                        let _ = running.waiting().await;
                    }
                });
                ().serve(b).await.map_err(|e| ServiceError::McpError(ErrorData::internal_error(e.to_string(), None)))
            })
            .await?;
        client.call_tool_once(request).await
    }

    /// Re-establishes the link unless someone already did since `seen` generation. A caller
    /// that waited behind an attempt which failed after it `started` gets that failure.
    async fn recover(self: &Arc<Self>, seen: u64, started: Instant) -> Result<(), Error> {
        let queue = ESTABLISH_DEADLINE + HANDSHAKE_DEADLINE + GRACE;
        let mut guard = match tokio::time::timeout(queue, self.conn.write()).await {
            Ok(g) => g,
            Err(_) => return Err(Error::NotAnswering { who: self.owner_pid() }),
        };
        if guard.generation != seen && !matches!(guard.conn, Conn::Down) {
            return Ok(());
        }
        if let Some((at, why)) = &guard.failed
            && *at >= started
        {
            return Err(Error::Failed(why.clone()));
        }
        guard.conn = Conn::Down;
        match self.establish().await {
            Ok(conn) => {
                guard.generation += 1;
                guard.conn = conn;
                guard.failed = None;
                Ok(())
            }
            Err(e) => {
                guard.failed = Some((Instant::now(), e.to_string()));
                Err(e)
            }
        }
    }

    async fn establish(self: &Arc<Self>) -> Result<Conn, Error> {
        let started = Instant::now();
        let mut wait = Duration::from_millis(5);
        let mut last = String::from("no attempt");
        let mut silent_owner = false;
        while started.elapsed() < ESTABLISH_DEADLINE {
            let lock = if self.role == Role::Serve { owner::try_lock(&self.project)? } else { None };
            if let Some(lock) = lock {
                match self.open_store().await.and_then(|store| self.become_owner(lock, store)) {
                    Ok(conn) => return Ok(conn),
                    Err(Error::Store(store::Error::Locked { .. })) => {
                        last = "store still held by the previous owner".into()
                    }
                    Err(e) => return Err(e),
                }
            } else {
                match self.connect().await {
                    Ok(conn) => return Ok(conn),
                    Err(Connect::Silent) => silent_owner = true,
                    Err(Connect::Failed(e)) => {
                        if self.role == Role::Follow && !owner::is_held(&self.project)? {
                            return Err(Error::NoOwner { project: self.project.root.display().to_string() });
                        }
                        last = e;
                    }
                }
            }
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(Duration::from_millis(200));
        }
        if silent_owner {
            return Err(Error::NotAnswering { who: self.owner_pid() });
        }
        Err(Error::Unreachable {
            project: self.project.root.display().to_string(),
            secs: ESTABLISH_DEADLINE.as_secs(),
            last,
        })
    }

    /// Connects to the owner's socket and initializes, within `HANDSHAKE_DEADLINE`.
    async fn connect(&self) -> Result<Conn, Connect> {
        let attempt = async {
            let stream = tokio::net::UnixStream::connect(self.project.socket_path())
                .await
                .map_err(|e| Connect::Failed(e.to_string()))?;
            Relay::connect(stream).await.map_err(Connect::Failed)
        };
        match tokio::time::timeout(HANDSHAKE_DEADLINE, attempt).await {
            Ok(Ok(client)) => {
                tracing::info!(project = %self.project.root.display(), "serving through the project's owner process");
                Ok(Conn::Remote(Arc::new(client)))
            }
            Ok(Err(e)) => Err(e),
            Err(_) => {
                tracing::warn!(owner = %self.owner_pid(), "the project's owner accepted but did not answer initialize");
                Err(Connect::Silent)
            }
        }
    }

    /// Opens the project's store off the async workers (a large store takes a while: sled reads
    /// its log), so the protocol keeps answering meanwhile.
    async fn open_store(&self) -> Result<Store, Error> {
        let dir = self.project.db_dir();
        match tokio::task::spawn_blocking(move || Store::open(&dir)).await {
            Ok(opened) => Ok(opened?),
            Err(e) => Err(Error::Failed(format!("opening the store failed inside refrain: {e}"))),
        }
    }

    fn become_owner(self: &Arc<Self>, lock: std::fs::File, store: Store) -> Result<Conn, Error> {
        let app = App::start(self.config.clone(), self.project.clone(), store);
        crate::team::start(&app);
        let guard = owner::listen(lock, &self.project.socket_path(), Handler::new(self.clone()))?;
        tracing::info!(project = %self.project.root.display(), store = %self.project.db_dir().display(), "this process owns the project store");
        Ok(Conn::Local(Arc::new(Owned { refrain: Refrain::new(app), self_client: OnceCell::new(), _guard: guard })))
    }
}

/// Why one connection attempt to the owner failed.
enum Connect {
    /// Connected, but the owner did not answer `initialize` in time.
    Silent,
    /// No connection (no socket, refused, closed during initialize).
    Failed(String),
}
