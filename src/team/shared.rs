//! The team library's SQL: publish a plan, count an outcome, read the changes after a revision.
//!
//! Each write is one transaction that first claims its operation id (`refrain_ops`: an operation
//! sent twice applies once) and takes the project's next revision under the project row's lock
//! (revisions commit in order). Counters move with `SET n = n + 1`, never read-modify-write, so
//! any number of members reporting at once are all counted.

use super::Error;
use crate::plan::library::Outcome;
use crate::plan::template::{StoredPlan, TeamOrigin};
use tokio_postgres::GenericClient;

/// A plan as the team library holds it, with the revision of its last change.
#[derive(Debug, Clone)]
pub struct SharedPlan {
    /// The revision of its last change.
    pub rev: i64,
    /// The plan, with the team's counters and quarantine.
    pub plan: StoredPlan,
}

/// A statement's error, with the server's code and message when it gave one.
pub(crate) fn sql(e: tokio_postgres::Error) -> Error {
    Error::Sql(match e.as_db_error() {
        Some(db) => format!("{}: {}", db.code().code(), db.message()),
        None => e.to_string(),
    })
}

/// Starts a write: false when `op` was applied already. Returns the project's next revision.
async fn begin(tx: &deadpool_postgres::Transaction<'_>, project: &str, op: &str) -> Result<Option<i64>, Error> {
    let claimed =
        tx.execute("INSERT INTO refrain_ops (op) VALUES ($1) ON CONFLICT DO NOTHING", &[&op]).await.map_err(sql)?;
    if claimed == 0 {
        return Ok(None);
    }
    let row = tx
        .query_one(
            "INSERT INTO refrain_projects (project, rev) VALUES ($1, 1) \
             ON CONFLICT (project) DO UPDATE SET rev = refrain_projects.rev + 1 RETURNING rev",
            &[&project],
        )
        .await
        .map_err(sql)?;
    Ok(Some(row.get(0)))
}

/// Whose counts a publish carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merge {
    /// This member's own counts: on the new row, or added to the team's row once per member (the
    /// sync's publish of a plan this member counted before it was shared).
    Counts,
    /// None: the plan with no counts, and a row the team has left alone (`refrain plans publish`,
    /// which cannot tell the member's own counts from the team's it synced; the member's sync
    /// adds its own when it reads the row back).
    Nothing,
}

/// Publishes a plan (already scrubbed) for `member`; true when this made the row, false when the
/// team had it already or `op` was applied before.
///
/// With `Merge::Counts`, the member's own counts go with the plan, once per member (the member's
/// row in `refrain_publishers`): a plan the team has already gets them added, so the successes and
/// failures it counted before sharing are added to everyone's, never lost and never counted twice,
/// and the row's revision moves so the member reads the team's counters back.
pub async fn publish(
    client: &mut deadpool_postgres::Object,
    project: &str,
    op: &str,
    member: &str,
    p: &StoredPlan,
    merge: Merge,
) -> Result<bool, Error> {
    let tx = client.transaction().await.map_err(sql)?;
    let Some(rev) = begin(&tx, project, op).await? else { return Ok(false) };
    let exists = tx
        .query_opt("SELECT 1 FROM refrain_plans WHERE project = $1 AND id = $2 FOR UPDATE", &[&project, &p.id])
        .await
        .map_err(sql)?
        .is_some();
    if exists && merge == Merge::Nothing {
        tx.commit().await.map_err(sql)?;
        return Ok(false);
    }
    let first = merge == Merge::Counts
        && tx
            .execute(
                "INSERT INTO refrain_publishers (project, id, member) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
                &[&project, &p.id, &member],
            )
            .await
            .map_err(sql)?
            == 1;
    let mut bare = p.clone();
    bare.counters = Default::default();
    bare.quarantined = None;
    bare.last_hit_at = None;
    let plan = serde_json::to_string(&bare).map_err(|e| Error::Sql(e.to_string()))?;
    let template = serde_json::to_string(&p.template).map_err(|e| Error::Sql(e.to_string()))?;
    let extractor = p.versions.extractor.map(|v| v as i32);
    let (successes, failures) = if first { (p.counters.successes as i64, p.counters.failures as i64) } else { (0, 0) };
    let row = tx
        .query_one(
            "INSERT INTO refrain_plans (project, id, bucket, action, kind, plan_version, normaliser, extractor, \
             task, source, template, plan, successes, failures, failure_streak, quarantined, rev) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::text::jsonb, $12, $13, $14, $15, $16, $17) \
             ON CONFLICT (project, id) DO UPDATE SET successes = refrain_plans.successes + EXCLUDED.successes, \
               failures = refrain_plans.failures + EXCLUDED.failures, rev = EXCLUDED.rev \
             RETURNING (xmax = 0)",
            &[
                &project,
                &p.id,
                &p.key.bucket,
                &p.key.action,
                &p.key.kind,
                &p.versions.plan,
                &(p.versions.normaliser as i32),
                &extractor,
                &p.provenance.task,
                &p.provenance.source,
                &template,
                &plan,
                &successes,
                &failures,
                &(p.counters.failure_streak as i32),
                &p.quarantined,
                &rev,
            ],
        )
        .await
        .map_err(sql)?;
    tx.commit().await.map_err(sql)?;
    Ok(row.get(0))
}

/// Forgets applied operation ids older than `days` days; returns how many. A member sends a change
/// again only after a crash between the database's answer and its own note of it, and gives up on
/// one first tried longer ago than this (`queue::try_send`), so none is applied twice.
pub async fn prune_ops(client: &impl GenericClient, days: i32) -> Result<u64, Error> {
    client
        .execute("DELETE FROM refrain_ops WHERE applied_at < now() - make_interval(days => $1)", &[&days])
        .await
        .map_err(sql)
}

/// Counts an outcome on the team's copy of a plan: `quarantine_after` failures in a row
/// quarantine it for every member, a release serves it again. False when `op` was applied before
/// or the team has no such plan.
pub async fn feedback(
    client: &mut deadpool_postgres::Object,
    project: &str,
    op: &str,
    id: &str,
    outcome: Outcome,
    reason: Option<&str>,
    quarantine_after: u32,
) -> Result<bool, Error> {
    let tx = client.transaction().await.map_err(sql)?;
    let Some(rev) = begin(&tx, project, op).await? else { return Ok(false) };
    let last = reason.map(|r| format!("; last: {r}")).unwrap_or_default();
    let after = quarantine_after.max(1) as i32;
    let n = match outcome {
        Outcome::Success => {
            tx.execute(
                "UPDATE refrain_plans SET successes = successes + 1, failure_streak = 0, rev = $3 \
                 WHERE project = $1 AND id = $2",
                &[&project, &id, &rev],
            )
            .await
        }
        Outcome::Failure => {
            tx.execute(
                "UPDATE refrain_plans SET failures = failures + 1, failure_streak = failure_streak + 1, \
                 quarantined = CASE WHEN failure_streak + 1 >= $4 \
                   THEN COALESCE(quarantined, (failure_streak + 1)::text || ' failure(s) in a row' || $5) \
                   ELSE quarantined END, rev = $3 \
                 WHERE project = $1 AND id = $2",
                &[&project, &id, &rev, &after, &last],
            )
            .await
        }
        Outcome::Release => {
            tx.execute(
                "UPDATE refrain_plans SET failure_streak = 0, quarantined = NULL, rev = $3 WHERE project = $1 AND id = $2",
                &[&project, &id, &rev],
            )
            .await
        }
    }
    .map_err(sql)?;
    tx.commit().await.map_err(sql)?;
    Ok(n == 1)
}

/// A page of changes.
#[derive(Debug, Default)]
pub struct Changes {
    /// The plans changed, oldest change first.
    pub plans: Vec<SharedPlan>,
    /// The last revision read (unreadable rows included), or `after` when none.
    pub last: i64,
    /// Rows read (a full page means there may be more).
    pub rows: usize,
}

/// The project's plans changed after revision `after`, oldest change first, at most `limit`.
pub async fn changes(client: &impl GenericClient, project: &str, after: i64, limit: i64) -> Result<Changes, Error> {
    let rows = client
        .query(
            "SELECT rev, plan, successes, failures, failure_streak, quarantined, published_by, \
             extract(epoch from published_at)::bigint FROM refrain_plans \
             WHERE project = $1 AND rev > $2 ORDER BY rev LIMIT $3",
            &[&project, &after, &limit],
        )
        .await
        .map_err(sql)?;
    let mut out = Changes { plans: Vec::with_capacity(rows.len()), last: after, rows: rows.len() };
    for row in rows {
        let rev: i64 = row.get(0);
        out.last = rev;
        let text: String = row.get(1);
        let mut plan: StoredPlan = match serde_json::from_str(&text) {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(rev, error = %e, "a team plan this refrain cannot read was skipped");
                continue;
            }
        };
        plan.counters.successes = row.get::<_, i64>(2).max(0) as u64;
        plan.counters.failures = row.get::<_, i64>(3).max(0) as u64;
        plan.counters.failure_streak = row.get::<_, i32>(4).max(0) as u32;
        plan.quarantined = row.get(5);
        // Who published it is the database's word (`published_by`, the role the publisher connected as), never
        // what the plan's own JSON says.
        plan.provenance.team = Some(TeamOrigin {
            publisher: row.get(6),
            published_at: row.get::<_, Option<i64>>(7).map(|t| t.max(0) as u64),
        });
        out.plans.push(SharedPlan { rev, plan });
    }
    Ok(out)
}
