//! `refrain plans list|show|feedback|evict|export|import|publish|review`: the plan library by
//! hand, JSON lines for sharing, and the review of team plans (`team.accept`). Always goes through
//! the MCP tools over `Link`, so it works whether or not a server already owns the project's store.

use super::GlobalArgs;
use crate::server::Link;
use crate::term;
use clap::{Args, Subcommand};
use rmcp::model::{CallToolRequestParams, CallToolResponse};
use serde_json::{Map, Value, json};
use std::io::{BufRead, Write};
use std::process::ExitCode;
use std::sync::Arc;

/// Arguments of `refrain plans`.
#[derive(Debug, Args)]
pub struct PlansArgs {
    #[command(subcommand)]
    command: PlansCommand,
}

#[derive(Debug, Subcommand)]
enum PlansCommand {
    /// One line per plan: id, bucket, action, kind, counters, task.
    List {
        /// Only this bucket.
        #[arg(long)]
        bucket: Option<String>,
        /// At most this many.
        #[arg(long, default_value_t = 1000)]
        limit: usize,
    },
    /// A plan in full (JSON).
    Show {
        /// The plan id.
        id: String,
    },
    /// Evict a plan, a bucket, or every plan of a version.
    Evict {
        /// One plan.
        #[arg(long)]
        id: Option<String>,
        /// Every plan of a bucket.
        #[arg(long)]
        bucket: Option<String>,
        /// Every plan with this template revision.
        #[arg(long)]
        plan_version: Option<String>,
        /// Every plan keyed by this normaliser version.
        #[arg(long)]
        normaliser: Option<u32>,
        /// Every plan made by this extractor version.
        #[arg(long)]
        extractor: Option<u32>,
    },
    /// Every plan as JSON lines (task, template, key, versions, provenance, counters).
    Export {
        /// Write to this file instead of stdout.
        #[arg(long)]
        out: Option<std::path::PathBuf>,
    },
    /// Publish plans to the team library (`team.url` in your own config) now, without waiting
    /// for `team.publish_after` successes.
    Publish {
        /// The plan ids (see `refrain plans list`).
        ids: Vec<String>,
        /// Every plan of this project.
        #[arg(long, conflicts_with = "ids")]
        all: bool,
    },
    /// Report how a plan went for you: a success lets the prompt hook offer it to your agents
    /// (a hook serves only plans you have seen work and that hold no risky step).
    Feedback {
        /// The plan id (see `refrain plans list`).
        id: String,
        /// `success`, `failure`, or `release` (serve a quarantined plan again).
        #[arg(value_parser = ["success", "failure", "release"])]
        outcome: String,
    },
    /// The team plans waiting for your review, with who published them, their counts, risk marks
    /// and steps; `--approve ID` or `--reject ID` decides one. Under `team.accept = "reviewed"`
    /// only approved team plans are served; a rejected one never is, whatever the setting.
    Review {
        /// Approve this plan (its id or first 8 characters).
        #[arg(long, conflicts_with = "reject")]
        approve: Option<String>,
        /// Reject this plan.
        #[arg(long)]
        reject: Option<String>,
        /// At most this many pending plans.
        #[arg(long, default_value_t = 100)]
        limit: usize,
        /// Print the answer as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Store plans from JSON lines (as written by export); keys are recomputed.
    Import {
        /// The file (`-` for stdin).
        file: std::path::PathBuf,
    },
}

/// Runs `refrain plans`.
pub fn run(global: &GlobalArgs, args: PlansArgs) -> anyhow::Result<ExitCode> {
    let (project, sourced) = super::resolve(global, None)?;
    super::init_logging(&sourced.config);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let code = runtime.block_on(async move {
        let (team, checkout) = (sourced.config.team.clone(), project.clone());
        let link = Link::open(project, sourced.config).await?;
        let code = command(&link, args.command, &team, &checkout).await;
        // As the owner, this process may have started loading a model: it must not exit under it.
        link.shutdown().await;
        code
    })?;
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    Ok(code)
}

async fn command(
    link: &Arc<Link>,
    cmd: PlansCommand,
    team: &crate::config::TeamConfig,
    checkout: &crate::project::Project,
) -> anyhow::Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    match cmd {
        PlansCommand::Publish { ids, all } => {
            drop(out);
            return publish(link, team, checkout, ids, all).await;
        }
        PlansCommand::List { bucket, limit } => {
            let v = call(link, "plan_list", json!({"bucket": bucket, "limit": limit})).await?;
            for p in v["plans"].as_array().into_iter().flatten() {
                let c = &p["counters"];
                writeln!(
                    out,
                    "{}  {}  {:<10} {:<12} hits={} ok={} failed={} mine={}/{} from={}{}  {}",
                    term::field(p["id"].as_str().unwrap_or_default()),
                    term::field(p["key"]["bucket"].as_str().unwrap_or_default()),
                    term::field(p["key"]["action"].as_str().unwrap_or_default()),
                    term::field(p["key"]["kind"].as_str().unwrap_or_default()),
                    c["hits"],
                    c["successes"],
                    c["failures"],
                    c["own_successes"].as_u64().unwrap_or(0),
                    c["own_failures"].as_u64().unwrap_or(0),
                    from(&p["provenance"]),
                    if p["quarantined"].is_null() { "" } else { " QUARANTINED" },
                    term::field(&crate::plan::frame::clean(p["provenance"]["task"].as_str().unwrap_or_default(), 200))
                )?;
            }
        }
        PlansCommand::Review { approve, reject, limit, json } => {
            let v = call(link, "plan_review", json!({"approve": approve, "reject": reject, "limit": limit})).await?;
            if json {
                writeln!(out, "{}", term::json(&serde_json::to_string_pretty(&v)?))?;
            } else {
                let project = crate::team::remote::project_of(&checkout.root);
                review_text(&mut out, &v, project.as_deref())?;
            }
        }
        PlansCommand::Feedback { id, outcome } => {
            let v = call(link, "plan_feedback", json!({"plan_id": id, "outcome": outcome})).await?;
            let c = &v["counters"];
            writeln!(
                out,
                "plan {}: your reports {} worked, {} failed (all reports: {} worked, {} failed)",
                crate::plan::frame::clean(&id, 64),
                c["own_successes"],
                c["own_failures"],
                c["successes"],
                c["failures"]
            )?;
        }
        PlansCommand::Show { id } => {
            let v = call(link, "plan_list", json!({"plan_id": id})).await?;
            match v["plans"].as_array().and_then(|a| a.first()) {
                Some(p) => writeln!(out, "{}", term::json(&serde_json::to_string_pretty(p)?))?,
                None => anyhow::bail!("no plan with id {id}"),
            }
        }
        PlansCommand::Evict { id, bucket, plan_version, normaliser, extractor } => {
            let what = match (id, bucket) {
                (Some(id), _) => json!({"target": "plan", "plan_id": id}),
                (None, Some(b)) => json!({"target": "plan_bucket", "bucket": b}),
                (None, None) => {
                    json!({"target": "plan_version", "plan": plan_version, "normaliser": normaliser, "extractor": extractor})
                }
            };
            let v = call(link, "cache_evict", json!({"what": what})).await?;
            writeln!(out, "evicted {} plan(s)", v["evicted"])?;
        }
        PlansCommand::Export { out: file } => {
            let v = call(link, "plan_list", json!({"limit": usize::MAX})).await?;
            let mut w: Box<dyn Write> = match file {
                Some(f) => Box::new(std::io::BufWriter::new(std::fs::File::create(f)?)),
                None => Box::new(out),
            };
            for p in v["plans"].as_array().into_iter().flatten() {
                let line = json!({
                    "task": p["provenance"]["task"], "template": p["template"], "key": p["key"],
                    "versions": p["versions"], "provenance": p["provenance"], "counters": p["counters"],
                });
                writeln!(w, "{}", term::json(&line.to_string()))?;
            }
            w.flush()?;
        }
        PlansCommand::Import { file } => {
            let reader: Box<dyn BufRead> = if file.as_os_str() == "-" {
                Box::new(std::io::stdin().lock())
            } else {
                Box::new(std::io::BufReader::new(std::fs::File::open(&file)?))
            };
            let (mut stored, mut failed) = (0, 0);
            for (n, line) in reader.lines().enumerate() {
                let line = line?;
                if line.trim().is_empty() {
                    continue;
                }
                let p: Value = serde_json::from_str(&line).map_err(|e| anyhow::anyhow!("line {}: {e}", n + 1))?;
                let args = json!({"task": p["task"], "template": p["template"], "source": "import"});
                match call(link, "plan_store", args).await {
                    Ok(_) => stored += 1,
                    Err(e) => {
                        failed += 1;
                        eprintln!("line {}: {}", n + 1, term::text(&e.to_string()));
                    }
                }
            }
            writeln!(out, "imported {stored} plan(s), {failed} refused")?;
            if failed > 0 {
                return Ok(ExitCode::from(2));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `refrain plans review` as text: the decision made, then each pending plan's provenance,
/// counts, risks and steps (already made safe by `plan::frame`, and escaped again for the
/// terminal).
fn review_text(out: &mut impl Write, v: &Value, project: Option<&str>) -> anyhow::Result<()> {
    let n = |x: &Value| x.as_u64().unwrap_or(0);
    let s = |x: &Value| x.as_str().unwrap_or_default().to_string();
    if let Some(d) = v.get("decided") {
        let state = match d["why_not"].as_str() {
            None => "your agents are handed it".to_string(),
            Some(w) => format!("it is not served: {w}"),
        };
        writeln!(
            out,
            "plan {} {}; {}",
            term::field(&s(&d["plan_id"])),
            term::field(&s(&d["decision"])),
            term::field(&state)
        )?;
    }
    let pending = v["pending"].as_array().cloned().unwrap_or_default();
    let place = project.map(|p| format!(" of {p}")).unwrap_or_default();
    writeln!(
        out,
        "{} team plan(s){} waiting for your review (team.accept = {})",
        pending.len(),
        term::field(&place),
        term::field(&s(&v["accept"]))
    )?;
    for p in &pending {
        let when = match n(&p["published_at"]) {
            0 => String::new(),
            t => format!(" on {}", crate::days::of_ms(t as i64 * 1000)),
        };
        let risks: Vec<String> = p["risks"].as_array().into_iter().flatten().map(s).collect();
        writeln!(out)?;
        writeln!(
            out,
            "{}  published by {}{when}{}",
            term::field(&s(&p["plan_id"])),
            term::field(p["publisher"].as_str().unwrap_or("an unknown team member")),
            if p["quarantined"].is_null() { "" } else { "  QUARANTINED" }
        )?;
        writeln!(out, "  task: {}", term::field(&s(&p["task"])))?;
        writeln!(
            out,
            "  team reports: {} worked, {} failed; yours: {} worked, {} failed",
            n(&p["successes"]),
            n(&p["failures"]),
            n(&p["own_successes"]),
            n(&p["own_failures"])
        )?;
        let risk = if risks.is_empty() { "none found".to_string() } else { risks.join(", ") };
        writeln!(out, "  risks: {}", term::field(&risk))?;
        for step in p["steps"].as_array().into_iter().flatten() {
            writeln!(out, "    {}", term::field(&s(step)))?;
        }
    }
    if !pending.is_empty() {
        writeln!(out, "\napprove one with `refrain plans review --approve ID`, reject it with `--reject ID`")?;
    }
    Ok(())
}

/// Who stored a plan and how, for a listing: `team:<publisher>`, else `<source>:<user@host>`.
fn from(provenance: &Value) -> String {
    match serde_json::from_value::<crate::plan::template::Provenance>(provenance.clone()) {
        Ok(p) => crate::plan::frame::clean(&format!("{}:{}", p.kind(), p.author()).replace(' ', "_"), 80),
        Err(_) => "unknown".into(),
    }
}

/// `refrain plans publish`: the plans as stored here, straight to the team database.
async fn publish(
    link: &Arc<Link>,
    team: &crate::config::TeamConfig,
    checkout: &crate::project::Project,
    ids: Vec<String>,
    all: bool,
) -> anyhow::Result<ExitCode> {
    if team.url.is_none() {
        anyhow::bail!("{}", crate::team::Error::NotConfigured);
    }
    if ids.is_empty() && !all {
        anyhow::bail!("name the plans to publish (refrain plans publish ID...) or pass --all");
    }
    let mut plans: Vec<crate::plan::template::StoredPlan> = Vec::new();
    let lists =
        if all { vec![json!({"limit": usize::MAX})] } else { ids.iter().map(|id| json!({"plan_id": id})).collect() };
    for (n, args) in lists.into_iter().enumerate() {
        let v = call(link, "plan_list", args).await?;
        let found: Vec<crate::plan::template::StoredPlan> = serde_json::from_value(v["plans"].clone())?;
        if found.is_empty() && !all {
            anyhow::bail!("no plan with id {}; list plans with `refrain plans list`", ids[n]);
        }
        plans.extend(found);
    }
    let created = crate::team::publish_now(team, checkout, &plans).await?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "published {} plan(s): {created} new to the team, {} it had", plans.len(), plans.len() - created)?;
    Ok(ExitCode::SUCCESS)
}

/// Calls a tool and returns its structured output, or its error text.
pub async fn call(link: &Arc<Link>, tool: &'static str, args: Value) -> anyhow::Result<Value> {
    let args: Map<String, Value> = match args {
        Value::Object(o) => o.into_iter().filter(|(_, v)| !v.is_null()).collect(),
        _ => Map::new(),
    };
    let response = link
        .call_tool(CallToolRequestParams::new(tool).with_arguments(args), None)
        .await
        .map_err(|e| anyhow::anyhow!("{}", e.message))?;
    let CallToolResponse::Complete(result) = response else { anyhow::bail!("{tool} did not complete") };
    if result.is_error == Some(true) {
        let v = serde_json::to_value(&result.content)?;
        let text: Vec<String> =
            v.as_array().into_iter().flatten().filter_map(|c| c["text"].as_str().map(String::from)).collect();
        anyhow::bail!("{}", text.join(" "));
    }
    Ok(result.structured_content.unwrap_or(Value::Null))
}
