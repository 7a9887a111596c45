//! Server-side search of the team's plans by meaning (`refrain team search`), where the team
//! database has the pgvector extension: the schema's `refrain_enable_vectors()` makes the
//! `refrain_vectors` table (an HNSW index over cosine distance) when `CREATE EXTENSION vector`
//! succeeds and answers false otherwise, so a server without pgvector loses nothing but this.
//!
//! The vectors are the members' own embeddings of each plan's masked task (as the local index has
//! them): every member with the model fills in the vectors the table lacks after each sync round,
//! so plans published from the command line or before the extension was installed get theirs too.

use super::shared::sql;
use super::{Error, local};
use crate::app::App;
use crate::plan::template::StoredPlan;
use tokio_postgres::GenericClient;

/// The dimension of `refrain_vectors.embedding` (the shipped model's).
pub const DIM: usize = 384;
/// Plans embedded per query and model call.
const BATCH: i64 = 64;

/// Creates the extension and table when the server can (idempotent); true when server-side
/// search is available.
pub async fn enable(client: &impl GenericClient) -> Result<bool, Error> {
    Ok(client.query_one("SELECT refrain_enable_vectors()", &[]).await.map_err(sql)?.get(0))
}

/// True when the table of vectors exists (pgvector is installed and enabled).
pub async fn available(client: &impl GenericClient) -> Result<bool, Error> {
    Ok(client.query_one("SELECT to_regclass('refrain_vectors') IS NOT NULL", &[]).await.map_err(sql)?.get(0))
}

/// A vector as pgvector's text form, `[0.1,0.2,...]`.
fn literal(v: &[f32]) -> String {
    let parts: Vec<String> = v.iter().map(|x| if x.is_finite() { x.to_string() } else { "0".into() }).collect();
    format!("[{}]", parts.join(","))
}

/// Embeds and stores the vectors the project's plans lack for this member's model; returns how
/// many it added. Does nothing (Ok(0)) without a model or with one of another dimension.
pub async fn fill(app: &App, client: &impl GenericClient, project: &str) -> Result<usize, Error> {
    let Ok(model) = app.embed.ready().await else { return Ok(0) };
    if model.dim() != DIM {
        return Ok(0);
    }
    let name = model.name().to_string();
    let mut added = 0;
    loop {
        let rows = client
            .query(
                "SELECT p.id, p.plan FROM refrain_plans p WHERE p.project = $1 AND NOT EXISTS \
                 (SELECT 1 FROM refrain_vectors v WHERE v.project = p.project AND v.id = p.id AND v.model = $2) \
                 ORDER BY p.rev LIMIT $3",
                &[&project, &name, &BATCH],
            )
            .await
            .map_err(sql)?;
        let mut todo = Vec::new();
        for row in &rows {
            let id: String = row.get(0);
            let text: String = row.get(1);
            if let Ok(plan) = serde_json::from_str::<StoredPlan>(&text) {
                todo.push((id, local::masked_task(&plan)));
            }
        }
        if todo.is_empty() {
            return Ok(added);
        }
        let texts = todo.iter().map(|(_, t)| t.clone()).collect();
        let Ok(vectors) = app.embed.embed(texts).await else { return Ok(added) };
        for ((id, _), v) in todo.iter().zip(vectors) {
            added += client
                .execute(
                    "INSERT INTO refrain_vectors (project, id, model, embedding) VALUES ($1, $2, $3, $4::text::vector) \
                     ON CONFLICT DO NOTHING",
                    &[&project, id, &name, &literal(&v)],
                )
                .await
                .map_err(sql)? as usize;
        }
        if rows.len() < BATCH as usize {
            return Ok(added);
        }
    }
}

/// A plan the server found.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Found {
    /// The plan id.
    pub id: String,
    /// The task it was stored for.
    pub task: String,
    /// Cosine similarity of the masked tasks.
    pub similarity: f64,
    /// The team's counters.
    pub successes: i64,
    /// Failures.
    pub failures: i64,
    /// Why it is quarantined for the team, if it is.
    pub quarantined: Option<String>,
}

/// The project's plans nearest to `query` (an embedding by `model`), nearest first. The HNSW
/// index is walked wider than pgvector's default (`hnsw.ef_search`), since rows of other projects
/// and models are filtered out after it.
pub async fn search(
    client: &impl GenericClient,
    project: &str,
    model: &str,
    query: &[f32],
    limit: i64,
) -> Result<Vec<Found>, Error> {
    client.batch_execute("SET hnsw.ef_search = 400").await.map_err(sql)?;
    let rows = client
        .query(
            "SELECT p.id, p.task, 1 - (v.embedding <=> $3::text::vector), p.successes, p.failures, p.quarantined \
             FROM refrain_vectors v JOIN refrain_plans p ON p.project = v.project AND p.id = v.id \
             WHERE v.project = $1 AND v.model = $2 ORDER BY v.embedding <=> $3::text::vector LIMIT $4",
            &[&project, &model, &literal(query), &limit],
        )
        .await
        .map_err(sql)?;
    Ok(rows
        .iter()
        .map(|r| Found {
            id: r.get(0),
            task: r.get(1),
            similarity: r.get(2),
            successes: r.get(3),
            failures: r.get(4),
            quarantined: r.get(5),
        })
        .collect())
}
