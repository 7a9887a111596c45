//! The background sync of one project's team plans, in the process that owns its store: send the
//! queued changes, then read every change after the last revision read into the local store, then
//! sleep until the database notifies a change (LISTEN), this process queues one, or a minute
//! passes. Lookups never wait on any of it: they read the local store only.
//!
//! A database that is down, slow or restarting makes a round fail; the queue and the revision are
//! in the store, so the next round (after a growing pause, or at once when woken) goes on where
//! this one stopped, and nothing is lost or applied twice.

use super::db::Db;
use super::queue::{self, Change, Known};
use super::{Error, local, shared, vectors};
use crate::app::App;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// Changes read per query.
pub const PAGE: i64 = 500;
/// Queued changes sent per round before reading.
const SEND_BATCH: usize = 256;
/// Longest sleep between rounds when nothing wakes the loop.
const IDLE: Duration = Duration::from_secs(60);
/// Longest pause after a failed round.
const MAX_BACKOFF: Duration = Duration::from_secs(15);
/// How often a member prunes the database's old operation ids.
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

/// One project's sync.
pub struct Sync {
    /// The project's store and index.
    pub app: App,
    /// The database.
    pub db: Db,
    /// The normalised git remote URL.
    pub project: String,
    /// This member's name in the team library (`super::member`).
    pub member: String,
    /// Woken by notifications and by local changes queued.
    pub wake: Arc<Notify>,
}

impl Sync {
    /// Where the revision read so far is kept: database and project.
    fn place(&self) -> String {
        format!("{}\0{}", self.db.label, self.project)
    }

    /// Runs until the process ends.
    pub async fn run(self) {
        let mut migrated = false;
        let mut search = false;
        let mut pruned: Option<std::time::Instant> = None;
        let mut listener: Option<(tokio_postgres::Client, tokio::task::JoinHandle<()>)> = None;
        let mut backoff = Duration::from_millis(250);
        let mut down = false;
        loop {
            let round = async {
                if !migrated {
                    self.db.migrate().await?;
                    search = vectors::enable(&**self.db.client().await?).await?;
                    tracing::info!(db = %self.db.label, server_search = search, "team library schema ready");
                    migrated = true;
                }
                if pruned.is_none_or(|t| t.elapsed() > PRUNE_EVERY) {
                    let n = shared::prune_ops(&**self.db.client().await?, queue::OPS_KEEP_DAYS).await?;
                    tracing::debug!(pruned = n, "old team operation ids pruned");
                    pruned = Some(std::time::Instant::now());
                }
                if listener.as_ref().is_none_or(|(_, h)| h.is_finished()) {
                    listener = None;
                    listener = Some(self.db.listen(self.wake.clone()).await?);
                }
                self.round().await?;
                if search {
                    let n = vectors::fill(&self.app, &**self.db.client().await?, &self.project).await?;
                    if n > 0 {
                        tracing::debug!(added = n, "team plan vectors added for server-side search");
                    }
                }
                Ok::<(), Error>(())
            };
            match round.await {
                Ok(()) => {
                    super::set_problem(&self.app.store, None);
                    if down {
                        tracing::info!(db = %self.db.label, "team library reachable again");
                    }
                    down = false;
                    backoff = Duration::from_millis(250);
                    tokio::select! {
                        _ = self.wake.notified() => {}
                        _ = tokio::time::sleep(IDLE) => {}
                    }
                }
                Err(e) => {
                    super::set_problem(
                        &self.app.store,
                        Some(format!(
                            "team library out of reach ({e}); plans are served from this machine and changes wait here"
                        )),
                    );
                    if !down {
                        tracing::warn!(error = %e, "team library sync failed; plans are served from this machine and changes wait here");
                    }
                    down = true;
                    listener = None;
                    tokio::select! {
                        _ = self.wake.notified() => {}
                        _ = tokio::time::sleep(backoff) => {}
                    }
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
        }
    }

    /// Sends what is queued, then reads every change after the last revision read.
    pub async fn round(&self) -> Result<(), Error> {
        self.send().await?;
        self.pull().await?;
        Ok(())
    }

    /// Sends queued changes, oldest first; stops at the first the database does not take.
    async fn send(&self) -> Result<(), Error> {
        let store = &self.app.store;
        loop {
            let batch = queue::peek(store, SEND_BATCH)?;
            if batch.is_empty() {
                return Ok(());
            }
            let mut client = self.db.client().await?;
            for (key, q) in batch {
                if queue::try_send(store, &q.op, crate::plan::template::now())? {
                    tracing::warn!(op = %q.op, "a team change first sent a month ago was dropped: the database may have applied it already");
                    if let Change::Publish { id } = &q.change {
                        queue::forget(store, id)?;
                    }
                    queue::sent(store, &key, &q.op)?;
                    continue;
                }
                store.flush_async().await?;
                match &q.change {
                    Change::Publish { id } => match super::publishable(store, id)? {
                        Some(plan) => {
                            let merge = shared::Merge::Counts;
                            shared::publish(&mut client, &self.project, &q.op, &self.member, &plan, merge).await?;
                            queue::set_known(store, id, Known::Shared)?;
                        }
                        None => queue::forget(store, id)?,
                    },
                    Change::Feedback { id, outcome, reason, quarantine_after } => {
                        shared::feedback(
                            &mut client,
                            &self.project,
                            &q.op,
                            id,
                            *outcome,
                            reason.as_deref(),
                            *quarantine_after,
                        )
                        .await?;
                    }
                }
                queue::sent(store, &key, &q.op)?;
                store.flush_async().await?;
            }
        }
    }

    /// Reads changes page by page into the local store; the revision moves only once a page is
    /// stored and flushed.
    async fn pull(&self) -> Result<(), Error> {
        let store = &self.app.store;
        let place = self.place();
        loop {
            let after = queue::rev(store, &place)?;
            let client = self.db.client().await?;
            let page = shared::changes(&**client, &self.project, after, PAGE).await?;
            drop(client);
            let (rows, last) = (page.rows, page.last);
            if rows == 0 {
                return Ok(());
            }
            let applied = local::apply(&self.app, page.plans).await?;
            queue::set_rev(store, &place, last)?;
            store.flush_async().await?;
            if applied.queued > 0 {
                self.wake.notify_one(); // send those publishes in the next round, at once
            }
            tracing::debug!(
                rev = last,
                added = applied.added,
                updated = applied.updated,
                refused = applied.refused,
                "team plans synced"
            );
            if rows < PAGE as usize {
                return Ok(());
            }
        }
    }
}
