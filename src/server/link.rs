//! The link from a transport to the project's store.
//!
//! `Link::open` makes this process the owner when the project's lock is free (open the store,
//! start the app, listen on the socket) and a follower otherwise (an MCP client on the owner's
//! socket). A follower whose owner goes away re-establishes the link — taking over ownership if it
//! can — and retries the request once, so no request fails for longer than a retry. Writes are
//! idempotent, so a retried request never stores a duplicate.

use super::{Handler, owner};
use crate::app::App;
use crate::config::Config;
use crate::project::Project;
use crate::store::{self, Store};
use crate::tools::Refrain;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::{RequestContext, RunningService, ServiceError};
use rmcp::{ErrorData, RoleClient, RoleServer, ServiceExt};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{OnceCell, RwLock};

/// How long to keep trying to reach or become the owner before giving up.
const ESTABLISH_DEADLINE: Duration = Duration::from_secs(15);

/// Errors establishing the link.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The project directory could not be prepared.
    #[error(transparent)]
    Project(#[from] crate::project::Error),
    /// The store could not be opened.
    #[error(transparent)]
    Store(#[from] store::Error),
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
    /// I/O on the lock or socket.
    #[error("owner lock or socket: {0}")]
    Io(#[from] std::io::Error),
}

struct Owned {
    refrain: Refrain,
    self_client: OnceCell<RunningService<RoleClient, ()>>,
    _guard: owner::OwnerGuard,
}

enum Conn {
    Down,
    Local(Arc<Owned>),
    Remote(Arc<RunningService<RoleClient, ()>>),
}

/// This process's way to the store: owned here, or through the owner.
pub struct Link {
    project: Project,
    config: Config,
    conn: RwLock<(u64, Conn)>,
}

impl Link {
    /// Connects to the project's store, as owner or follower.
    pub async fn open(project: Project, config: Config) -> Result<Arc<Link>, Error> {
        project.prepare()?;
        let link = Arc::new(Link { project, config, conn: RwLock::new((0, Conn::Down)) });
        link.recover(0).await?;
        Ok(link)
    }

    /// The project this link serves.
    pub fn project(&self) -> &Project {
        &self.project
    }

    /// The app when this process owns the store.
    pub async fn local_app(&self) -> Option<App> {
        match &self.conn.read().await.1 {
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
        matches!(self.conn.read().await.1, Conn::Local(_))
    }

    /// Calls a tool, locally or through the owner; on a broken link, re-establishes it and retries once.
    pub async fn call_tool(
        self: &Arc<Self>,
        request: CallToolRequestParams,
        context: Option<RequestContext<RoleServer>>,
    ) -> Result<CallToolResponse, ErrorData> {
        let mut context = context;
        for _attempt in 0..3 {
            let (generation, conn) = {
                let guard = self.conn.read().await;
                let conn = match &guard.1 {
                    Conn::Local(o) => Conn::Local(o.clone()),
                    Conn::Remote(c) => Conn::Remote(c.clone()),
                    Conn::Down => Conn::Down,
                };
                (guard.0, conn)
            };
            let outcome = match conn {
                Conn::Local(o) => match context.take() {
                    Some(ctx) => {
                        return o.refrain.tool_router.call(ToolCallContext::new(&o.refrain, request, ctx)).await;
                    }
                    None => self.call_self(&o, request.clone()).await,
                },
                Conn::Remote(c) => c.call_tool_once(request.clone()).await,
                Conn::Down => Err(ServiceError::TransportClosed),
            };
            match outcome {
                Ok(r) => return Ok(r),
                Err(ServiceError::McpError(e)) => return Err(e),
                Err(e) => {
                    tracing::info!(error = %e, "link to the owner broke; re-establishing");
                    self.recover(generation).await.map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                }
            }
        }
        Err(ErrorData::internal_error("the link to the project's owner kept breaking; try again", None))
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

    /// Re-establishes the link unless someone already did since `seen` generation.
    async fn recover(self: &Arc<Self>, seen: u64) -> Result<(), Error> {
        let mut guard = self.conn.write().await;
        if guard.0 != seen {
            return Ok(());
        }
        guard.1 = Conn::Down;
        let conn = self.establish().await?;
        *guard = (seen + 1, conn);
        Ok(())
    }

    async fn establish(self: &Arc<Self>) -> Result<Conn, Error> {
        let started = Instant::now();
        let mut wait = Duration::from_millis(5);
        let mut last = String::from("no attempt");
        while started.elapsed() < ESTABLISH_DEADLINE {
            if let Some(lock) = owner::try_lock(&self.project)? {
                match self.become_owner(lock) {
                    Ok(conn) => return Ok(conn),
                    Err(Error::Store(store::Error::Locked { .. })) => {
                        last = "store still held by the previous owner".into()
                    }
                    Err(e) => return Err(e),
                }
            } else {
                match tokio::net::UnixStream::connect(self.project.socket_path()).await {
                    Ok(stream) => match ().serve(stream).await {
                        Ok(client) => {
                            tracing::info!(project = %self.project.root.display(), "serving through the project's owner process");
                            return Ok(Conn::Remote(Arc::new(client)));
                        }
                        Err(e) => last = e.to_string(),
                    },
                    Err(e) => last = e.to_string(),
                }
            }
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(Duration::from_millis(200));
        }
        Err(Error::Unreachable {
            project: self.project.root.display().to_string(),
            secs: ESTABLISH_DEADLINE.as_secs(),
            last,
        })
    }

    fn become_owner(self: &Arc<Self>, lock: std::fs::File) -> Result<Conn, Error> {
        let store = Store::open(&self.project.db_dir())?;
        let app = App::start(self.config.clone(), self.project.clone(), store);
        let guard = owner::listen(lock, &self.project.socket_path(), Handler::new(self.clone()))?;
        tracing::info!(project = %self.project.root.display(), store = %self.project.db_dir().display(), "this process owns the project store");
        Ok(Conn::Local(Arc::new(Owned { refrain: Refrain::new(app), self_client: OnceCell::new(), _guard: guard })))
    }
}
