//! The team plan library: plans that worked for one member's agent, shared with every member's
//! through a PostgreSQL database the team already runs (`team.url` in the user's own config).
//!
//! `remote` says which project a checkout is (its git remote URL, normalised: never its path);
//! `db` connects (pool, TLS, migrations, LISTEN); `shared` is the SQL; `queue` keeps what waits
//! for the database in the local store; `local` stores team plans where lookups read them; `sync`
//! is the background loop of the process that owns a project's store. Lookups never touch the
//! network. Results are never shared (they depend on one checkout).

pub mod db;
pub mod local;
pub mod queue;
pub mod remote;
pub mod shared;
pub mod sync;
pub mod vectors;

use crate::app::App;
use crate::plan::library::{self, Outcome};
use crate::plan::template::StoredPlan;
use crate::store::Store;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::Notify;

/// Team library errors.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// `team.url` is not set.
    #[error("no team library is configured: set team.url in your own refrain.toml (see README, Team plan library)")]
    NotConfigured,
    /// The URL does not parse.
    #[error("team.url is not a PostgreSQL URL ({0}); write it as postgres://user@host:5432/dbname")]
    Url(String),
    /// The password's env var is unset.
    #[error(
        "team.password_env names {0}, which is not set in refrain's environment; export it or remove team.password_env"
    )]
    Password(String),
    /// TLS settings are unusable.
    #[error("team library TLS: {0}")]
    Tls(String),
    /// The checkout has no git remote.
    #[error(
        "{0} has no git remote, so it cannot be matched with the team's copies of it; add one (git remote add origin URL)"
    )]
    NoRemote(String),
    /// The server cannot be reached.
    #[error("the team database {0} cannot be reached: {1}")]
    Unreachable(String, String),
    /// A statement failed.
    #[error("team database: {0}")]
    Sql(String),
    /// The schema could not be brought up to date.
    #[error("team database schema migration failed: {0}")]
    Migration(String),
    /// The local store failed.
    #[error(transparent)]
    Store(#[from] crate::store::Error),
    /// The local plan library failed.
    #[error(transparent)]
    Plan(#[from] crate::plan::Error),
    /// The local index failed.
    #[error(transparent)]
    Index(#[from] crate::index::Error),
}

/// The wake signal of each project's running sync, by store directory.
fn running() -> &'static Mutex<HashMap<PathBuf, Arc<Notify>>> {
    static RUNNING: OnceLock<Mutex<HashMap<PathBuf, Arc<Notify>>>> = OnceLock::new();
    RUNNING.get_or_init(Default::default)
}

fn wake_of(store: &Store) -> Option<Arc<Notify>> {
    running().lock().ok()?.get(store.path()).cloned()
}

/// What is wrong with each project's team library, by store directory.
fn problems() -> &'static Mutex<HashMap<PathBuf, String>> {
    static PROBLEMS: OnceLock<Mutex<HashMap<PathBuf, String>>> = OnceLock::new();
    PROBLEMS.get_or_init(Default::default)
}

/// Notes (or with None clears) what keeps this store's plans from the team.
fn set_problem(store: &Store, problem: Option<String>) {
    if let Ok(mut map) = problems().lock() {
        match problem {
            Some(p) => map.insert(store.path().to_path_buf(), p),
            None => map.remove(store.path()),
        };
    }
}

/// What keeps this project's plans from the team library right now, in words a user can act on
/// (a broken `team.*` setting, a checkout without a git remote, a database out of reach), or None
/// when nothing does or no team library is configured. Tool answers carry it.
pub fn problem(store: &Store) -> Option<String> {
    problems().lock().ok()?.get(store.path()).cloned()
}

/// This member's name in the team library for one project: a random id kept in the project's
/// data directory (made on first use), never a path.
pub fn member(dir: &std::path::Path) -> String {
    let file = dir.join("team-member");
    if let Ok(id) = std::fs::read_to_string(&file)
        && !id.trim().is_empty()
    {
        return id.trim().to_string();
    }
    let id = uuid::Uuid::new_v4().to_string();
    let made = std::fs::OpenOptions::new().write(true).create_new(true).open(&file).and_then(|mut f| {
        use std::io::Write;
        f.write_all(id.as_bytes())
    });
    match made {
        Ok(()) => id,
        // Another process made it first (or the directory is read-only): use what is there.
        Err(_) => {
            std::fs::read_to_string(&file).map(|s| s.trim().to_string()).ok().filter(|s| !s.is_empty()).unwrap_or(id)
        }
    }
}

/// Starts the team sync of the project `app` serves, when the user configured a team library and
/// the project has a git remote; otherwise does nothing (and says why in the log).
pub fn start(app: &App) {
    if app.config.team.url.is_none() {
        return;
    }
    let Some(project) = remote::project_of(&app.project.root) else {
        let e = Error::NoRemote(app.project.root.display().to_string());
        tracing::info!(error = %e, "team library off for this project");
        set_problem(&app.store, Some(format!("team library off: {e}")));
        return;
    };
    let db = match db::Db::new(&app.config.team) {
        Ok(db) => db,
        Err(e) => {
            tracing::error!(error = %e, "team library off");
            set_problem(
                &app.store,
                Some(format!(
                    "team library off: {e} (fix it in your own refrain.toml; `refrain team status` checks it)"
                )),
            );
            return;
        }
    };
    let wake = Arc::new(Notify::new());
    if let Ok(mut map) = running().lock() {
        map.insert(app.store.path().to_path_buf(), wake.clone());
    }
    tracing::info!(project = %project, db = %db.label, "team library sync started");
    let member = member(&app.project.dir);
    tokio::spawn(sync::Sync { app: app.clone(), db, project, member, wake }.run());
}

/// After local feedback on a plan: a team plan's outcome is queued for the team's counters; a
/// plan of this member's that has now succeeded `team.publish_after` times is queued for
/// publishing. Does nothing when no sync runs for this store.
pub async fn after_feedback(app: &App, plan: &StoredPlan, outcome: Outcome, reason: Option<&str>) -> Result<(), Error> {
    let Some(wake) = wake_of(&app.store) else { return Ok(()) };
    let store = &app.store;
    let change = match queue::known(store, &plan.id)? {
        Some(queue::Known::Shared) => Some(queue::Change::Feedback {
            id: plan.id.clone(),
            outcome,
            reason: reason.map(str::to_string),
            quarantine_after: app.config.plans.quarantine_after,
        }),
        Some(queue::Known::Queued) => None,
        None if outcome == Outcome::Success
            && plan.counters.successes >= u64::from(app.config.team.publish_after.max(1)) =>
        {
            queue::set_known(store, &plan.id, queue::Known::Queued)?;
            Some(queue::Change::Publish { id: plan.id.clone() })
        }
        None => None,
    };
    if let Some(change) = change {
        queue::push(store, change)?;
        store.flush_async().await?;
        wake.notify_one();
    }
    Ok(())
}

/// A local plan as it may leave this machine: scrubbed of secrets once more (task and template),
/// or None when it is gone or scrubbing changed it (a plan is published as stored or not at all,
/// so its content id stays its content's).
pub fn publishable(store: &Store, id: &str) -> Result<Option<StoredPlan>, Error> {
    let Some(rec) = library::get(store, id)? else { return Ok(None) };
    if local::secrets(&rec.plan.template, &rec.plan.provenance.task) > 0 {
        tracing::warn!(plan = %id, "not published: it holds what looks like a secret");
        return Ok(None);
    }
    Ok(Some(rec.plan))
}

/// Publishes plans now, from outside the owner process (`refrain plans publish`): returns how
/// many the team did not have yet. `project` is the checkout and its data directory.
pub async fn publish_now(
    team: &crate::config::TeamConfig,
    checkout: &crate::project::Project,
    plans: &[StoredPlan],
) -> Result<usize, Error> {
    let root = &checkout.root;
    let project = remote::project_of(root).ok_or_else(|| Error::NoRemote(root.display().to_string()))?;
    let member = member(&checkout.dir);
    let db = db::Db::new(team)?;
    db.migrate().await?;
    let mut client = db.client().await?;
    let mut created = 0;
    for plan in plans {
        if local::secrets(&plan.template, &plan.provenance.task) > 0 {
            tracing::warn!(plan = %plan.id, "not published: it holds what looks like a secret");
            continue;
        }
        let op = uuid::Uuid::new_v4().to_string();
        if shared::publish(&mut client, &project, &op, &member, plan, shared::Merge::Nothing).await? {
            created += 1;
        }
    }
    Ok(created)
}
