//! Reaching refrain's per-project stores for the report and the dashboard, without fighting a
//! running server for sled's lock: when a server owns a project, ask it over the owner socket
//! (`cache_stats`, and `plan_lookup` with `dry_run`, which writes nothing); when none does, take
//! the owner lock for the moment of the report, open the store and ask it directly. A store that
//! can be reached neither way is reported as unreadable, with why, never guessed.

use super::Plan;
use crate::app::App;
use crate::config::Config;
use crate::plan::service;
use crate::plan::validate::RuntimeCaps;
use crate::project::Project;
use crate::report::aggregate::PromptStats;
use crate::report::model::{AgentKind, StoreRow, TaskRow};
use crate::report::price::Price;
use crate::server::owner;
use crate::stats;
use crate::store::{Store, trees};
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Every call to an owner gets this long.
const DEADLINE: Duration = Duration::from_secs(15);
/// Most distinct prompts looked up per project (the costliest first).
const MAX_PROMPTS: usize = 2000;
/// Longest the report holds a store it opened itself: a server starting meanwhile waits for the
/// owner lock (it gives up after 15 s), so the report lets go well before.
const HOLD: Duration = Duration::from_secs(8);

/// Asks every store (within the project filter) what it served, and which prompts would have
/// hit a stored plan.
pub async fn gather(
    plan: &Plan,
    prompts: &BTreeMap<String, BTreeMap<String, PromptStats>>,
    models: &BTreeMap<String, (AgentKind, String)>,
) -> (Vec<TaskRow>, Vec<StoreRow>) {
    let mut tasks = Vec::new();
    let mut rows = Vec::new();
    for (root, dir) in known_projects(&plan.config.home()) {
        if plan.options.project.as_ref().is_some_and(|p| p != &root) {
            continue;
        }
        let price = match models.get(&root) {
            Some((AgentKind::Codex, m)) => Price::of(&plan.rules, crate::prompt::Provider::OpenAiResponses, m),
            Some((_, m)) => Price::of(&plan.rules, crate::prompt::Provider::Anthropic, m),
            None => Price::of(&plan.rules, crate::prompt::Provider::Anthropic, ""),
        };
        let asked = ask(plan, &root, &dir, prompts.get(&root)).await;
        let (mut row, found) = match asked {
            Ok(x) => x,
            Err(why) => {
                let row =
                    StoreRow { project: root.clone(), status: "unreadable".into(), detail: why, ..StoreRow::default() };
                (row, Vec::new())
            }
        };
        row.usd_saved = price.added(row.tokens_saved);
        tasks.extend(found);
        rows.push(row);
    }
    (tasks, rows)
}

/// Project roots with a refrain store: `<home>/projects/*/project.json`.
fn known_projects(home: &Path) -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(home.join("projects")) else { return out };
    for e in entries.filter_map(Result::ok) {
        let meta = e.path().join("project.json");
        let root = std::fs::read_to_string(&meta)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .and_then(|v| v.get("root").and_then(Value::as_str).map(str::to_string));
        if let Some(root) = root {
            out.push((root, e.path()));
        }
    }
    out.sort();
    out
}

async fn ask(
    plan: &Plan,
    root: &str,
    dir: &Path,
    prompts: Option<&BTreeMap<String, PromptStats>>,
) -> Result<(StoreRow, Vec<TaskRow>), String> {
    let project = Project::at(PathBuf::from(root), &plan.config.home());
    if project.dir != dir {
        return Err(format!("its data directory {} does not match its root", dir.display()));
    }
    let mut wanted: Vec<(&String, &PromptStats)> = prompts.map(|p| p.iter().collect()).unwrap_or_default();
    wanted.sort_by(|a, b| b.1.tokens.cmp(&a.1.tokens).then_with(|| a.0.cmp(b.0)));
    wanted.truncate(MAX_PROMPTS);
    match owner::try_lock(&project).map_err(|e| format!("cannot check its owner lock: {e}"))? {
        None => through_owner(plan, root, &project, &wanted).await,
        Some(lock) => {
            let config = Config::load(Some(&project.root), &plan.flags)
                .map(|s| s.config)
                .unwrap_or_else(|_| plan.config.clone());
            let out = directly(root, &project, config, &wanted, plan.ledger_lines).await;
            drop(lock);
            out
        }
    }
}

/// A running refrain owns the store: ask it over its socket.
async fn through_owner(
    plan: &Plan,
    root: &str,
    project: &Project,
    wanted: &[(&String, &PromptStats)],
) -> Result<(StoreRow, Vec<TaskRow>), String> {
    let socket = project.socket_path();
    let fail = |e: String| format!("a refrain server owns it but did not answer on {}: {e}", socket.display());
    let stream = tokio::time::timeout(DEADLINE, tokio::net::UnixStream::connect(&socket))
        .await
        .map_err(|_| fail("timed out".into()))?
        .map_err(|e| fail(e.to_string()))?;
    let client: RunningService<RoleClient, ()> = tokio::time::timeout(DEADLINE, ().serve(stream))
        .await
        .map_err(|_| fail("timed out".into()))?
        .map_err(|e| fail(e.to_string()))?;
    let stats = call(&client, "cache_stats", json!({"ledger_lines": plan.ledger_lines})).await.map_err(fail)?;
    let mut row = row_from_stats(root, &stats);
    row.status = "owner".into();
    row.detail = "asked the refrain server that owns it".into();
    let mut tasks = Vec::new();
    for (text, s) in wanted {
        let out = call(&client, "plan_lookup", json!({"task": text, "dry_run": true})).await;
        match out {
            Ok(v) => tasks.extend(task_row(root, text, s, &v)),
            Err(e) if e.contains("dry_run") => {
                row.detail = format!("its server predates dry lookups, repeated tasks not checked: {e}");
                break;
            }
            Err(_) => {}
        }
    }
    let _ = client.cancel().await;
    Ok((row, tasks))
}

async fn call(client: &RunningService<RoleClient, ()>, tool: &str, args: Value) -> Result<Value, String> {
    let mut params = CallToolRequestParams::new(tool.to_string());
    params.arguments = args.as_object().cloned();
    let r = tokio::time::timeout(DEADLINE, client.call_tool(params))
        .await
        .map_err(|_| format!("{tool} timed out"))?
        .map_err(|e| format!("{tool}: {e}"))?;
    if r.is_error == Some(true) {
        let text: Vec<String> = r.content.iter().filter_map(|c| c.as_text().map(|t| t.text.clone())).collect();
        return Err(format!("{tool}: {}", text.join(" ")));
    }
    r.structured_content.ok_or_else(|| format!("{tool} returned no structured content"))
}

/// No server owns the store: open it here for the moment of the report (holding the owner lock,
/// so a server starting meanwhile waits and then takes over).
async fn directly(
    root: &str,
    project: &Project,
    config: Config,
    wanted: &[(&String, &PromptStats)],
    ledger_lines: usize,
) -> Result<(StoreRow, Vec<TaskRow>), String> {
    let store = Store::open(&project.db_dir()).map_err(|e| e.to_string())?;
    let mut counters = serde_json::Map::new();
    for area in ["plans", "results"] {
        let c = stats::read_area(&store, area).map_err(|e| e.to_string())?;
        counters.insert(area.into(), json!(c));
    }
    let plans = store.len(trees::PLANS).map_err(|e| e.to_string())?;
    let ledger = crate::tools::cache_stats::ledger_report(&store, ledger_lines).map_err(|e| e.to_string())?;
    let stats = json!({"records": {"plans": plans}, "counters": counters, "ledger": ledger});
    let mut row = row_from_stats(root, &stats);
    row.status = "read".into();
    row.detail = "opened here (no refrain server was running for it)".into();
    let mut tasks = Vec::new();
    if !wanted.is_empty() && plans > 0 {
        let until = tokio::time::Instant::now() + HOLD;
        let app = App::start(config, project.clone(), store);
        let _ = tokio::time::timeout_at(until, app.embed.ready()).await;
        let mut asked = 0;
        for (text, s) in wanted {
            if tokio::time::Instant::now() >= until {
                break;
            }
            asked += 1;
            if let Ok(l) = service::lookup_dry(&app, text, &Map::new(), &RuntimeCaps::default()).await {
                let v = serde_json::to_value(&l).unwrap_or(Value::Null);
                let v = json!({"status": if l.hit.is_some() { "hit" } else { "miss" }, "hit": v.get("hit")});
                tasks.extend(task_row(root, text, s, &v));
            }
        }
        if asked < wanted.len() {
            row.detail = format!(
                "opened here; repeated tasks checked for the {asked} costliest of {} prompts (a store opened by the report is held only {}s, so a starting server is not kept waiting); run the report while a refrain server owns it to check them all",
                wanted.len(),
                HOLD.as_secs()
            );
        }
        // Let the background index rebuild finish before the store closes.
        let _ = tokio::time::timeout(HOLD, app.index()).await;
        app.shutdown().await;
    }
    Ok((row, tasks))
}

fn row_from_stats(root: &str, stats: &Value) -> StoreRow {
    let n =
        |area: &str, key: &str| stats.pointer(&format!("/counters/{area}/{key}")).and_then(Value::as_u64).unwrap_or(0);
    let mut per_tool = BTreeMap::new();
    if let Some(results) = stats.pointer("/counters/results").and_then(Value::as_object) {
        for (k, v) in results {
            if let (Some(tool), Some(x)) = (k.strip_prefix("hits/"), v.as_u64()) {
                per_tool.insert(tool.to_string(), x);
            }
        }
    }
    let plan_hits = n("plans", "hits");
    if plan_hits > 0 {
        per_tool.insert("plan_lookup".into(), plan_hits);
    }
    StoreRow {
        project: root.to_string(),
        plans: stats.pointer("/records/plans").and_then(Value::as_u64).unwrap_or(0),
        plan_hits,
        wrong_hit_reports: n("plans", "failures"),
        result_hits_exact: n("results", "hits_exact"),
        result_hits_semantic: n("results", "hits_semantic"),
        tokens_saved: n("results", "tokens_saved"),
        hits_per_tool: per_tool,
        ledger: stats.get("ledger").and_then(|l| serde_json::from_value(l.clone()).ok()),
        usd_net: stats.pointer("/ledger/usd_net").and_then(Value::as_f64).unwrap_or(0.0),
        ledger_lines: stats
            .pointer("/ledger/lines")
            .and_then(|l| serde_json::from_value(l.clone()).ok())
            .unwrap_or_default(),
        ..StoreRow::default()
    }
}

fn task_row(root: &str, text: &str, s: &PromptStats, lookup: &Value) -> Option<TaskRow> {
    if lookup.get("status").and_then(Value::as_str) != Some("hit") {
        return None;
    }
    let hit = lookup.get("hit")?;
    Some(TaskRow {
        project: root.to_string(),
        prompt: text.to_string(),
        times: s.times,
        tokens: s.tokens,
        plan_id: hit.get("plan_id").and_then(Value::as_str).unwrap_or_default().to_string(),
        plan_task: hit.pointer("/provenance/task").and_then(Value::as_str).unwrap_or_default().to_string(),
    })
}
