//! `refrain-bench team`: the team plan library against a real PostgreSQL server (`--url`; the
//! password from the env var `--password-env` names). Two figures, at each size:
//! - sync of N plans into an empty member: N filler plans published to the database, then a fresh
//!   member (the real binary over stdio) started; the time from its start until the last plan is in its
//!   store, where lookups read it (changes are applied in revision order, so every plan is in);
//! - publish-to-served latency: member A stores a plan and reports the second success (which
//!   publishes it); the time from that answer until the plan is in member B's store and B's
//!   lookup of the task serves it.
//!
//! Each run uses a project of its own (a fresh git remote), so runs never see each other's plans.

use crate::families::filler;
use crate::mcp::Server;
use crate::measure::{Row, Samples, machine, markdown};
use anyhow::{Context, bail};
use refrain::config::TeamConfig;
use refrain::plan::key::IntentKey;
use refrain::plan::normalise::normalise;
use refrain::plan::template::{Provenance, StoredPlan, plan_id};
use refrain::team::{db::Db, local::masked_task, shared};
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Arguments of `refrain-bench team`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The team database (`postgres://user@host:port/db`).
    #[arg(long)]
    url: String,
    /// The env var holding its password.
    #[arg(long)]
    password_env: Option<String>,
    /// Plans in the library before the member starts, comma-separated sizes.
    #[arg(long, value_delimiter = ',', default_value = "1000,10000")]
    sizes: Vec<usize>,
    /// Publish-to-served samples.
    #[arg(long, default_value_t = 20)]
    samples: usize,
    /// The model directory (default: none, so lookups are exact-text only and sync embeds
    /// nothing).
    #[arg(long)]
    model_dir: Option<PathBuf>,
}

fn plan(i: usize) -> StoredPlan {
    let (task, template) = filler(i);
    let n = normalise(&task);
    let key = IntentKey::of(&n);
    let mut p = StoredPlan::fresh(String::new(), key, template, n.skeleton, Provenance::new("bench", task));
    let masked = masked_task(&p);
    p.id = plan_id(&format!("{}\0{}", p.key.bucket, refrain::plan::mask::canonical(&masked)), &p.template);
    p
}

/// A member's scratch home and checkout whose git remote is `remote`.
fn member(dir: &Path, remote: &str, args: &Args) -> anyhow::Result<(PathBuf, PathBuf)> {
    let (home, project) = (dir.join("home"), dir.join("project"));
    std::fs::create_dir_all(project.join(".git"))?;
    std::fs::create_dir_all(&home)?;
    std::fs::write(project.join(".git/config"), format!("[remote \"origin\"]\n\turl = {remote}\n"))?;
    let mut cfg = format!("[team]\nurl = \"{}\"\n", args.url);
    if let Some(v) = &args.password_env {
        cfg.push_str(&format!("password_env = \"{v}\"\n"));
    }
    std::fs::write(home.join("refrain.toml"), cfg)?;
    Ok((home, project))
}

async fn start(dir: &Path, remote: &str, args: &Args) -> anyhow::Result<Server> {
    let (home, project) = member(dir, remote, args)?;
    let models = args.model_dir.clone().unwrap_or_else(|| dir.join("no-model"));
    let env = [("REFRAIN_LOG".to_string(), "warn".to_string())];
    let server =
        Server::start(&crate::driver::binary(), &project, &home, &models, &env, &dir.join("serve.log")).await?;
    server.wait_model().await?;
    Ok(server)
}

/// Waits until the plan `id` is in `s`'s local store, where its lookups read it (a lookup by
/// text would not tell: filler plans of one shape are all hits for each other's tasks).
async fn served(s: &Server, id: &str, deadline: Duration) -> anyhow::Result<Duration> {
    let t0 = Instant::now();
    loop {
        let l = s.call("plan_list", json!({"plan_id": id})).await?;
        if l["plans"].as_array().is_some_and(|p| !p.is_empty()) {
            return Ok(t0.elapsed());
        }
        if t0.elapsed() > deadline {
            bail!("plan {id} not in the member's store within {deadline:?}");
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// Once the plan is in B's store, waits until B's lookup of its own task serves it (the plan's
/// index rows are written just after its record, so a lookup at that very moment may not see it
/// yet); returns the time from `t0`. Dry lookups: no hit is recorded.
async fn answered(s: &Server, task: &str, id: &str, t0: Instant) -> anyhow::Result<Duration> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let l = s.call("plan_lookup", json!({"task": task, "dry_run": true})).await?;
        if l["status"] == "hit" && l["hit"]["plan_id"] == id {
            return Ok(t0.elapsed());
        }
        if Instant::now() > deadline {
            bail!("B holds plan {id} but does not serve its own task: {task}");
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

/// Runs the benchmark and prints its table.
pub async fn run(args: &Args) -> anyhow::Result<()> {
    let team =
        TeamConfig { url: Some(args.url.clone()), password_env: args.password_env.clone(), ..Default::default() };
    let db = Db::new(&team)?;
    db.migrate().await.context("the team database")?;
    let scratch = std::env::temp_dir().join(format!("refrain-bench-team-{}", std::process::id()));
    let run_id = format!("{}-{}", std::process::id(), refrain::plan::template::now());
    let mut rows = Vec::new();
    for &n in &args.sizes {
        let project = format!("bench.example/team/{run_id}-{n}");
        let t0 = Instant::now();
        let mut client = db.client().await?;
        for i in 0..n {
            shared::publish(
                &mut client,
                &project,
                &format!("{run_id}-{n}-{i}"),
                "bench",
                &plan(i),
                shared::Merge::Nothing,
            )
            .await?;
        }
        let fill = t0.elapsed();
        drop(client);
        let dir = scratch.join(format!("sync-{n}"));
        let t0 = Instant::now();
        let s = start(&dir, &format!("https://{project}"), args).await?;
        let last = plan(n - 1);
        served(&s, &last.id, Duration::from_secs(3600)).await?;
        let sync = t0.elapsed();
        let listed = s.call("plan_list", json!({"limit": n + 1})).await?["plans"].as_array().map_or(0, Vec::len);
        s.stop().await;
        if listed != n {
            bail!("the member holds {listed} plans after sync, not {n}");
        }
        rows.push(Row {
            what: format!("{n} plans: publish into the database (one transaction each) / sync into an empty member, start to last plan served"),
            value: format!("{:.1} s / {:.1} s ({:.0} plans/s)", fill.as_secs_f64(), sync.as_secs_f64(), n as f64 / sync.as_secs_f64()),
            target: String::new(),
        });
    }
    // Publish-to-served: A publishes by reporting a second success; B serves it.
    let project = format!("bench.example/team/{run_id}-latency");
    let remote = format!("git@{}.git", project.replacen('/', ":", 1));
    let a = start(&scratch.join("a"), &remote, args).await?;
    let b = start(&scratch.join("b"), &remote, args).await?;
    let mut lat = Samples::default();
    for i in 0..args.samples {
        let (task, template) = filler(1_000_000 + i);
        let stored = a.call("plan_store", json!({"task": task, "template": template})).await?;
        let id = stored["plan_id"].as_str().unwrap_or_default().to_string();
        a.call("plan_feedback", json!({"plan_id": id, "outcome": "success"})).await?;
        a.call("plan_feedback", json!({"plan_id": id, "outcome": "success"})).await?;
        let t0 = Instant::now();
        served(&b, &id, Duration::from_secs(120)).await?;
        lat.push(answered(&b, &task, &id, t0).await?);
    }
    a.stop().await;
    b.stop().await;
    rows.push(Row {
        what: format!("publish-to-served: A's second success answered to B's lookup serving the plan, p50 / p99 / max ({} samples)", lat.len()),
        value: format!("{} ms", lat.summary()),
        target: String::new(),
    });
    let _ = std::fs::remove_dir_all(&scratch);
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", markdown(&format!("Team plan library ({})", machine()), &rows))?;
    Ok(())
}
