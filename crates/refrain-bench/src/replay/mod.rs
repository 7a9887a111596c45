//! `refrain-bench replay [PATH...]`: what refrain would have removed from and added to real
//! recorded sessions, net of its own cost, read from refrain's savings ledger.
//!
//! Each session file (Claude Code transcript or Codex rollout; `.jsonl` or `.jsonl.zst`) is
//! replayed through refrain's own hook code (`refrain::hooks::respond`, the function `refrain
//! hook` runs) as the agent's hooks fired: `UserPromptSubmit` for each prompt, `PostToolUse` for
//! each finished tool call with its input and result, `Stop` at each turn's end, in file order.
//! The session file is written to a scratch directory as far as the agent had written it when
//! each hook fired, and the hooks reach a real `refrain serve` over stdio (one per source
//! directory, in a scratch project, sessions oldest first, as one user's project would). A
//! subagent's file is its own conversation. Per session, the tokens removed (notes and diffs in
//! place of re-reads), added (notes, diffs, injected plans), the fixed cost (refrain's tool list on
//! every request the hooks saw, as that agent receives it) and the net are the ledger's own
//! figures (`cache_stats` with `ledger_lines`), taken before and after the session. The whole hook
//! runs without the `hooks.timeout_ms` cut-off, so a slow machine measures what refrain would do,
//! not how fast it does it (the dedup event keeps its own bound, inside the hook).

pub mod billed;
pub mod steps;

use crate::mcp::Server;
use refrain::hooks::{self, Agent, Caller, Context};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Arguments of `refrain-bench replay`.
#[derive(Debug, Clone, clap::Args)]
pub struct Args {
    /// Session files or directories (default: the bench's committed corpus, data/sessions).
    pub paths: Vec<PathBuf>,
    /// Print the result as JSON (every session, its ledger lines, the totals).
    #[arg(long)]
    pub json: bool,
    /// Keep the scratch projects (their stores, transcripts and server logs) in this directory,
    /// to audit any line with `refrain` itself.
    #[arg(long)]
    pub keep: Option<PathBuf>,
}

/// One replayed session.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Row {
    /// The file, relative to the directory given.
    pub session: String,
    /// `claude-code` or `codex`.
    pub agent: String,
    /// A subagent's conversation.
    pub subagent: bool,
    /// Prompts replayed.
    pub prompts: u64,
    /// Tool calls replayed.
    pub tool_calls: u64,
    /// Model requests the ledger counted.
    pub requests: u64,
    /// Tokens refrain kept out of the context.
    pub removed: u64,
    /// Tokens refrain put in.
    pub added: u64,
    /// Tokens of refrain's tool list over those requests.
    pub fixed: u64,
    /// removed - added - fixed.
    pub net: i64,
    /// Re-reads answered with an "unchanged" note.
    pub notes: u64,
    /// Re-reads answered with a diff.
    pub diffs: u64,
    /// Texts a hook injected (plans).
    pub injected: u64,
    /// Hook calls not fired again: their entries were copied from a session replayed before
    /// (a resumed session's file starts with the history it resumed).
    pub copied: u64,
    /// The net had the agent received refrain's tool list in full on every request, as Codex does
    /// (removed - added - requests x the full list): the same session under Codex's fixed cost.
    pub net_if_full_list: i64,
    /// The same figures weighed by the requests that carried them, and priced as prompt caching
    /// bills them (see `billed`).
    pub billed: billed::Billed,
    /// The model the session used most (its prices are the billed dollars').
    pub model: String,
    /// The session's ledger lines (kind, subject, removed, added), oldest first.
    pub lines: Vec<Value>,
}

/// The whole replay.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The tokenizer every figure was counted with.
    pub tokenizer: String,
    /// What refrain's default tool list costs per request: deferred (Claude Code) and in full.
    pub per_request: BTreeMap<String, u64>,
    /// Every session.
    pub sessions: Vec<Row>,
    /// The sums.
    pub total: Row,
    /// Sessions where refrain cost more than it removed.
    pub net_negative: Vec<String>,
    /// Sessions where refrain cost more than it removed as billed (tokens carried by every later
    /// request, at cache prices).
    pub billed_negative: Vec<String>,
}

/// Reaches the scratch project's `refrain serve` as `refrain hook` reaches the owner.
struct ServeCaller<'a>(&'a Server);

impl Caller for ServeCaller<'_> {
    async fn call(&self, tool: &str, args: Value) -> Option<Value> {
        match self.0.call_raw(tool, args).await {
            Ok((false, out)) => Some(out),
            _ => None,
        }
    }
}

/// The committed corpus.
pub fn default_corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/sessions")
}

/// Runs the replay with the configuration and model directory the real binary would use, and
/// prints the table (or the JSON).
pub fn run(config: refrain::config::Config, models: PathBuf, args: &Args) -> anyhow::Result<Report> {
    let roots = if args.paths.is_empty() { vec![default_corpus()] } else { args.paths.clone() };
    let mut groups: BTreeMap<PathBuf, Vec<(String, PathBuf)>> = BTreeMap::new();
    for root in &roots {
        let mut files = Vec::new();
        collect(root, &mut files);
        let base = if root.is_file() { root.parent().unwrap_or(root).to_path_buf() } else { root.clone() };
        for f in files {
            let name = f.strip_prefix(&base).unwrap_or(&f).to_string_lossy().into_owned();
            groups.entry(f.parent().unwrap_or(&f).to_path_buf()).or_default().push((name, f));
        }
    }
    if groups.is_empty() {
        anyhow::bail!(
            "no session files (.jsonl or .jsonl.zst) under {roots:?}: give Claude Code transcripts or Codex rollouts"
        );
    }
    let per_request: BTreeMap<String, u64> = ["claude-code", "codex"]
        .iter()
        .map(|a| (a.to_string(), refrain::tools::surface::per_request_tokens(a, &config.server)))
        .collect();
    let full = per_request["codex"];
    let scratch = match &args.keep {
        Some(dir) => dir.clone(),
        None => std::env::temp_dir().join(format!("refrain-bench-replay-{}", std::process::id())),
    };
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let result = runtime.block_on(async {
        let mut rows = Vec::new();
        for (n, files) in groups.values().enumerate() {
            rows.extend(replay_group(&scratch.join(n.to_string()), &models, files, full).await?);
        }
        anyhow::Ok(rows)
    });
    if args.keep.is_none() {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    let sessions = result?;
    let report = summarize(sessions, per_request);
    print(&report, args.json)?;
    Ok(report)
}

/// Replays one directory's sessions, oldest first, against one server.
async fn replay_group(
    dir: &Path,
    models: &Path,
    files: &[(String, PathBuf)],
    full_list: u64,
) -> anyhow::Result<Vec<Row>> {
    let (home, project, transcripts) = (dir.join("home"), dir.join("project"), dir.join("sessions"));
    for d in [&home, &project, &transcripts] {
        std::fs::create_dir_all(d)?;
    }
    let mut sessions = Vec::new();
    for (name, path) in files {
        let s = steps::load(path).map_err(|e| anyhow::anyhow!("cannot read session {}: {e}", path.display()))?;
        sessions.push((name.clone(), s));
    }
    sessions.sort_by(|a, b| (a.1.started.as_str(), a.0.as_str()).cmp(&(b.1.started.as_str(), b.0.as_str())));
    let env = [("REFRAIN_LOG".to_string(), "warn".to_string())];
    let binary = crate::driver::binary();
    let server = Server::start(&binary, &project.canonicalize()?, &home, models, &env, &dir.join("serve.log")).await?;
    server.wait_model().await?;
    let ctx = Context { config: refrain::config::HooksConfig::default(), ..Context::default() };
    let mut rows = Vec::new();
    let mut fired = HashSet::new();
    for (n, (name, s)) in sessions.iter().enumerate() {
        let id = format!("replay-{n}-{}", name.replace('/', "-"));
        let transcript = transcripts.join(format!("{n}.jsonl"));
        let before = ledger(&server, 0).await?;
        let (counts, calls) = replay_session(&server, &ctx, s, &id, &transcript, &mut fired).await?;
        let after = ledger(&server, 10_000).await?;
        let mut r = row(name, s, &id, counts, &before, &after, full_list);
        let sides: Vec<billed::Sides> = r
            .lines
            .iter()
            .map(|l| billed::Sides {
                removed: l["removed"].as_u64().unwrap_or(0),
                added: l["added"].as_u64().unwrap_or(0),
            })
            .collect();
        r.model = billed::model_of(&s.raw);
        let price = billed::price_of(s.agent == Agent::Codex, &r.model);
        let per_request = r.fixed.checked_div(r.requests).unwrap_or(0);
        r.billed = billed::weigh(&calls, &sides, &billed::compactions(&s.raw), per_request, &price);
        rows.push(r);
    }
    server.stop().await;
    Ok(rows)
}

/// What one session's replay fired.
#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    prompts: u64,
    tool_calls: u64,
    copied: u64,
}

/// Fires every hook of one session in order, but those of entries `fired` already holds (copied
/// from a session replayed before); adds the entries it fired to `fired`.
async fn replay_session(
    server: &Server,
    ctx: &Context,
    s: &steps::Session,
    id: &str,
    transcript: &Path,
    fired: &mut HashSet<String>,
) -> anyhow::Result<(Counts, Vec<billed::Fired>)> {
    let mut file = std::fs::File::create(transcript)?;
    let caller = ServeCaller(server);
    let mut written = 0;
    let mut counts = Counts::default();
    let mut calls = Vec::new();
    let mut seen = totals(server).await?;
    let mine: HashSet<String> =
        s.steps.iter().filter_map(|st| st.uuid.clone()).filter(|u| !fired.contains(u)).collect();
    for step in &s.steps {
        for line in &s.raw[written..step.upto.max(written)] {
            writeln!(file, "{line}")?;
        }
        file.flush()?;
        written = written.max(step.upto);
        if step.uuid.as_ref().is_some_and(|u| !mine.contains(u)) {
            counts.copied += 1;
            continue;
        }
        let mut payload = step.payload.clone();
        payload.session_id = Some(id.to_string());
        payload.transcript_path = Some(transcript.to_string_lossy().into_owned());
        payload.hook_event_name = Some(step.event.name().to_string());
        match step.event {
            hooks::Event::UserPromptSubmit => counts.prompts += 1,
            hooks::Event::PostToolUse => counts.tool_calls += 1,
            _ => {}
        }
        hooks::respond(s.agent, step.event, &payload, ctx, &caller).await;
        let now = totals(server).await?;
        calls.push(billed::Fired { upto: step.upto, requests: now.0 - seen.0, lines: now.1 - seen.1 });
        seen = now;
    }
    fired.extend(mine);
    Ok((counts, calls))
}

/// The ledger's requests and lines so far.
async fn totals(server: &Server) -> anyhow::Result<(u64, u64)> {
    let l = ledger(server, 0).await?;
    let lines = l["per_kind"].as_object().into_iter().flatten().filter_map(|(_, k)| k["lines"].as_u64()).sum();
    Ok((l["requests"].as_u64().unwrap_or(0), lines))
}

/// The ledger part of `cache_stats`, with the newest `lines` lines.
async fn ledger(server: &Server, lines: usize) -> anyhow::Result<Value> {
    let stats = server.call("cache_stats", json!({"area": "dedup", "ledger_lines": lines})).await?;
    Ok(stats.get("ledger").cloned().unwrap_or(Value::Null))
}

fn row(name: &str, s: &steps::Session, id: &str, counts: Counts, before: &Value, after: &Value, full_list: u64) -> Row {
    let delta = |k: &str| after[k].as_u64().unwrap_or(0).saturating_sub(before[k].as_u64().unwrap_or(0));
    let kind = |k: &str| {
        let n = |v: &Value| v.pointer(&format!("/per_kind/{k}/lines")).and_then(Value::as_u64).unwrap_or(0);
        n(after).saturating_sub(n(before))
    };
    let (removed, added, fixed, requests) = (delta("removed"), delta("added"), delta("fixed"), delta("requests"));
    let mut lines: Vec<Value> = after["lines"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|l| l["session"].as_str() == Some(id))
        .map(|l| json!({"kind": l["kind"], "subject": l["subject"], "removed": l["removed"], "added": l["added"]}))
        .collect();
    lines.reverse();
    Row {
        session: name.to_string(),
        agent: if s.agent == Agent::Codex { "codex" } else { "claude-code" }.to_string(),
        subagent: s.subagent,
        prompts: counts.prompts,
        tool_calls: counts.tool_calls,
        requests,
        removed,
        added,
        fixed,
        net: removed as i64 - added as i64 - fixed as i64,
        notes: kind("read_note"),
        diffs: kind("read_diff"),
        injected: kind("injected"),
        copied: counts.copied,
        net_if_full_list: removed as i64 - added as i64 - (requests * full_list) as i64,
        billed: billed::Billed::default(),
        model: String::new(),
        lines,
    }
}

fn summarize(sessions: Vec<Row>, per_request: BTreeMap<String, u64>) -> Report {
    let mut total = Row { session: format!("total ({} sessions)", sessions.len()), ..Row::default() };
    for r in &sessions {
        total.prompts += r.prompts;
        total.tool_calls += r.tool_calls;
        total.requests += r.requests;
        total.removed += r.removed;
        total.added += r.added;
        total.fixed += r.fixed;
        total.net += r.net;
        total.notes += r.notes;
        total.diffs += r.diffs;
        total.injected += r.injected;
        total.copied += r.copied;
        total.net_if_full_list += r.net_if_full_list;
        total.billed.add(&r.billed);
    }
    let net_negative = sessions.iter().filter(|r| r.net < 0).map(|r| r.session.clone()).collect();
    let billed_negative = sessions.iter().filter(|r| r.billed.usd_net < 0.0).map(|r| r.session.clone()).collect();
    Report {
        tokenizer: refrain::tokens::TOKENIZER.to_string(),
        per_request,
        sessions,
        total,
        net_negative,
        billed_negative,
    }
}

fn print(r: &Report, json: bool) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if json {
        writeln!(out, "{}", serde_json::to_string_pretty(r)?)?;
        return Ok(());
    }
    let name = |row: &Row| format!("{}{}", row.session, if row.subagent { " (sub)" } else { "" });
    let w = r.sessions.iter().chain([&r.total]).map(|row| name(row).chars().count()).max().unwrap_or(7);
    writeln!(
        out,
        "{:<w$} {:>5} {:>5} {:>5} {:>8} {:>7} {:>8} {:>8} {:>5} {:>5} {:>10} {:>11} {:>9}",
        "session",
        "calls",
        "reqs",
        "notes",
        "removed",
        "added",
        "fixed",
        "net",
        "diffs",
        "plans",
        "net(full)",
        "net(carried)",
        "$net(billed)"
    )?;
    for row in r.sessions.iter().chain([&r.total]) {
        writeln!(
            out,
            "{:<w$} {:>5} {:>5} {:>5} {:>8} {:>7} {:>8} {:>8} {:>5} {:>5} {:>10} {:>11} {:>9.4}",
            name(row),
            row.tool_calls,
            row.requests,
            row.notes,
            row.removed,
            row.added,
            row.fixed,
            row.net,
            row.diffs,
            row.injected,
            row.net_if_full_list,
            row.billed.net,
            row.billed.usd_net
        )?;
    }
    let per: Vec<String> = r.per_request.iter().map(|(a, t)| format!("{a} {t}")).collect();
    writeln!(
        out,
        "tokens by {}; refrain's tool list per request: {} (net(full): every request paying the full list, as Codex does)",
        r.tokenizer,
        per.join(", ")
    )?;
    if r.total.copied > 0 {
        writeln!(
            out,
            "{} hook calls not fired again: their entries were copied from a session replayed before (a resumed session)",
            r.total.copied
        )?;
    }
    let b = &r.total.billed;
    writeln!(
        out,
        "carried (every token weighed by the requests that sent it): removed {} added {} tool list {} net {}",
        b.removed, b.added, b.fixed, b.net
    )?;
    writeln!(
        out,
        "billed at cache prices (written once, read by later requests): removed ${:.4} added ${:.4} tool list ${:.4} net ${:.4}",
        b.usd_removed, b.usd_added, b.usd_fixed, b.usd_net
    )?;
    writeln!(out, "net negative: {} of {} sessions", r.net_negative.len(), r.sessions.len())?;
    for s in &r.net_negative {
        writeln!(out, "  {s}")?;
    }
    writeln!(out, "net negative as billed: {} of {} sessions", r.billed_negative.len(), r.sessions.len())?;
    Ok(())
}

fn collect(p: &Path, out: &mut Vec<PathBuf>) {
    let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    if p.is_file() && (name.ends_with(".jsonl") || name.ends_with(".jsonl.zst")) {
        out.push(p.to_path_buf());
    } else if let Ok(list) = std::fs::read_dir(p) {
        let mut entries: Vec<PathBuf> = list.flatten().map(|e| e.path()).collect();
        entries.sort();
        for e in entries {
            collect(&e, out);
        }
    }
}
