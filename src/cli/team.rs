//! `refrain team status|search`: the team plan library from the command line. `status` checks
//! every setting and the database and says what is wrong and how to fix it (a broken `team.*`
//! setting is otherwise only in the log); `search` finds the team's plans of this project by
//! meaning, on the database when it has pgvector, else in this machine's copy of them.

use super::GlobalArgs;
use crate::config::{Config, TeamConfig};
use crate::project::Project;
use crate::server::Link;
use crate::team::{Error, db::Db, remote, vectors};
use crate::term;
use clap::{Args, Subcommand};
use serde_json::json;
use std::io::Write;
use std::process::ExitCode;

/// Arguments of `refrain team`.
#[derive(Debug, Args)]
pub struct TeamArgs {
    #[command(subcommand)]
    command: TeamCommand,
}

#[derive(Debug, Subcommand)]
enum TeamCommand {
    /// The team library's settings, this checkout's project, the database and its search: what is
    /// wrong and how to fix it (status 1 when something is).
    Status,
    /// The team's plans of this project nearest in meaning to a task: searched by the database
    /// when it has the pgvector extension, else in this machine's copy of them (status 0 either
    /// way; the fallback is said on stderr).
    Search {
        /// The task to search for.
        query: String,
        /// At most this many plans.
        #[arg(long, default_value_t = 10)]
        limit: usize,
    },
}

/// Runs `refrain team`.
pub fn run(global: &GlobalArgs, args: TeamArgs) -> anyhow::Result<ExitCode> {
    let (project, sourced) = super::resolve(global, None)?;
    super::init_logging(&sourced.config);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let code = runtime.block_on(async move {
        match args.command {
            TeamCommand::Status => status(&project, &sourced.config).await,
            TeamCommand::Search { query, limit } => search(project, sourced.config, &query, limit).await,
        }
    })?;
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    Ok(code)
}

/// Prints each check; status 1 at the first that fails.
async fn status(project: &Project, config: &Config) -> anyhow::Result<ExitCode> {
    let team = &config.team;
    let mut out = std::io::stdout().lock();
    let Some(url) = &team.url else {
        writeln!(out, "team library  off: {}", Error::NotConfigured)?;
        return Ok(ExitCode::SUCCESS);
    };
    writeln!(out, "team.url            {}", term::field(&crate::config::hide_password(url)))?;
    let pw = match &team.password_env {
        Some(v) if std::env::var_os(v).is_some() => format!("{v} (set)"),
        Some(v) => format!("{v} (NOT SET in this environment)"),
        None => "(not set: no password, or one in ~/.pgpass is not read)".into(),
    };
    writeln!(out, "team.password_env   {}", term::field(&pw))?;
    if let Some(ca) = &team.ca_file {
        writeln!(out, "team.ca_file        {}", term::field(&ca.display().to_string()))?;
    }
    writeln!(out, "team.publish_after  {}", team.publish_after)?;
    let fail = |out: &mut std::io::StdoutLock, e: &dyn std::fmt::Display| -> anyhow::Result<ExitCode> {
        writeln!(out, "problem             {}", term::field(&e.to_string()))?;
        Ok(ExitCode::from(1))
    };
    let Some(name) = remote::project_of(&project.root) else {
        return fail(&mut out, &Error::NoRemote(project.root.display().to_string()));
    };
    writeln!(out, "project             {} (this checkout's git remote)", term::field(&name))?;
    let db = match Db::new(team) {
        Ok(db) => db,
        Err(e) => return fail(&mut out, &format!("{e} (fix it in your own refrain.toml)")),
    };
    if let Err(e) = db.migrate().await {
        return fail(&mut out, &e);
    }
    let client = match db.client().await {
        Ok(c) => c,
        Err(e) => return fail(&mut out, &e),
    };
    let row = client
        .query_one(
            "SELECT count(*), COALESCE(sum(CASE WHEN quarantined IS NULL THEN 0 ELSE 1 END), 0)::bigint, \
             (SELECT rev FROM refrain_projects WHERE project = $1) FROM refrain_plans WHERE project = $1",
            &[&name],
        )
        .await
        .map_err(crate::team::shared::sql)?;
    let (plans, quarantined, rev): (i64, i64, Option<i64>) = (row.get(0), row.get(1), row.get(2));
    writeln!(out, "database            {} reachable, schema up to date", term::field(&db.label))?;
    writeln!(out, "team plans          {plans} ({quarantined} quarantined), revision {}", rev.unwrap_or(0))?;
    let search = match vectors::enable(&**client).await {
        Ok(true) => "on the database (pgvector)".to_string(),
        Ok(false) => "this machine's copy only: the database has no pgvector extension (install it on the \
                      server, e.g. the postgresql-NN-pgvector package; refrain adds the table at its next start)"
            .to_string(),
        Err(e) => format!("this machine's copy only ({e})"),
    };
    writeln!(out, "team search         {}", term::field(&search))?;
    Ok(ExitCode::SUCCESS)
}

/// Embeds the query with the user's model (None, with the reason, when there is none).
async fn embed(config: &Config, query: &str) -> Result<(String, Vec<f32>), String> {
    if !config.model.enabled {
        return Err("models are disabled (model.enabled = false)".into());
    }
    let dir = config.model.dir.clone().unwrap_or_else(|| config.home().join("models"));
    let mut files = crate::embed::ModelFiles::under(&dir);
    if let Some(rt) = &config.model.runtime {
        files.runtime = rt.clone();
    }
    let handle = crate::embed::EmbedHandle::spawn(Some(files), config.model.threads, config.model.max_length);
    let model = handle.ready().await.map_err(|e| e.to_string())?;
    // As a lookup sees the task: secrets redacted, values masked (only the vector leaves).
    let (clean, _) = crate::results::redactor().redact_str(query);
    let masked = crate::plan::mask::mask(&clean).text;
    let v = handle.embed_one(&masked).await.map_err(|e| e.to_string())?;
    Ok((model.name().to_string(), v))
}

/// The database's search, or why it cannot search (then the caller searches locally).
async fn on_server(
    team: &TeamConfig,
    project: &str,
    model: &str,
    v: &[f32],
    limit: usize,
) -> Result<Vec<vectors::Found>, String> {
    let db = Db::new(team).map_err(|e| e.to_string())?;
    db.migrate().await.map_err(|e| e.to_string())?;
    let client = db.client().await.map_err(|e| e.to_string())?;
    if !vectors::enable(&**client).await.map_err(|e| e.to_string())? {
        return Err(format!(
            "the team database {} has no pgvector extension, so it cannot search by meaning (install pgvector \
             on the server, e.g. the postgresql-NN-pgvector package; refrain adds its table at its next start)",
            db.label
        ));
    }
    vectors::search(&**client, project, model, v, limit as i64).await.map_err(|e| e.to_string())
}

async fn search(project: Project, config: Config, query: &str, limit: usize) -> anyhow::Result<ExitCode> {
    if config.team.url.is_none() {
        anyhow::bail!("{}", Error::NotConfigured);
    }
    let name = remote::project_of(&project.root).ok_or_else(|| Error::NoRemote(project.root.display().to_string()))?;
    let why = match embed(&config, query).await {
        Ok((model, v)) => match on_server(&config.team, &name, &model, &v, limit).await {
            Ok(found) => {
                let mut out = std::io::stdout().lock();
                writeln!(
                    out,
                    "{} plan(s) of {}, searched on the team database (pgvector):",
                    found.len(),
                    term::field(&name)
                )?;
                for f in found {
                    let q = if f.quarantined.is_some() { " QUARANTINED" } else { "" };
                    writeln!(
                        out,
                        "{:.3}  {}  ok={} failed={}{q}  {}",
                        f.similarity,
                        term::field(&f.id),
                        f.successes,
                        f.failures,
                        term::field(&f.task)
                    )?;
                }
                return Ok(ExitCode::SUCCESS);
            }
            Err(why) => why,
        },
        Err(e) => format!("the query cannot be embedded here ({e}), so the database cannot search by meaning"),
    };
    eprintln!("refrain team search: {}; searching this machine's copy of the team's plans instead", term::field(&why));
    let link = Link::open(project, config).await?;
    let v = super::plans::call(&link, "plan_lookup", json!({"task": query, "dry_run": true, "explain": true})).await;
    // As the owner, this process may have started loading a model: it must not exit under it.
    link.shutdown().await;
    let v = v?;
    let mut out = std::io::stdout().lock();
    let cands: Vec<&serde_json::Value> =
        v["explain"]["candidates"].as_array().into_iter().flatten().take(limit).collect();
    writeln!(out, "{} plan(s) of {}, searched on this machine:", cands.len(), term::field(&name))?;
    for c in cands {
        let score = c["cosine"].as_f64().map(|c| format!("{c:.3}")).unwrap_or_else(|| "  -  ".into());
        writeln!(
            out,
            "{score}  {}  {}",
            term::field(c["plan_id"].as_str().unwrap_or_default()),
            term::field(c["task"].as_str().unwrap_or_default())
        )?;
    }
    Ok(ExitCode::SUCCESS)
}
