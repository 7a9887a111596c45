//! Adds the files' figures up: per day, per project, per cause, per repeated file, and the
//! totals. Then, separately, what the stores said (repeated tasks, what refrain served).

use super::breaks::label;
use super::file::FileSummary;
use super::model::{CauseRow, Day, FileRow, ProjectRow, Report, StoreRow, TaskRow, Tokens, ToolCost, Waste, WouldNet};
use crate::transcript::lines::MAX_LINE_BYTES;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// How many rows the ranked lists keep.
pub const TOP: usize = 20;

/// A prompt given in a project, with how often and the tokens spent on it.
#[derive(Debug, Clone, Default)]
pub struct PromptStats {
    /// How often it was given.
    pub times: u64,
    /// Prompt tokens of the requests that answered it.
    pub tokens: u64,
}

/// Adds up the files' figures into `report` (history part only).
pub fn history(report: &mut Report, files: &[Arc<FileSummary>]) {
    let mut days: BTreeMap<String, (Tokens, Waste)> = BTreeMap::new();
    let mut projects: BTreeMap<String, ProjectRow> = BTreeMap::new();
    let mut causes: BTreeMap<String, CauseRow> = BTreeMap::new();
    let mut reads: BTreeMap<(String, String), (u64, u64, f64)> = BTreeMap::new();
    for f in files {
        let proj = projects
            .entry(f.project.clone())
            .or_insert_with(|| ProjectRow { root: f.project.clone(), ..ProjectRow::default() });
        proj.sessions += 1;
        if let Some(a) = f.agent
            && !proj.agents.contains(&a)
        {
            proj.agents.push(a);
            proj.agents.sort();
        }
        for (date, (t, w)) in &f.days {
            let d = days.entry(date.clone()).or_default();
            d.0.add(t);
            d.1.add(w);
            proj.tokens.add(t);
            proj.waste.add(w);
        }
        for b in &f.breaks {
            let c = causes.entry(b.kind.clone()).or_insert_with(|| CauseRow {
                kind: b.kind.clone(),
                label: label(&b.kind).to_string(),
                breaks: 0,
                tokens: 0,
                usd: 0.0,
                fix: b.fix.clone(),
                example: b.summary.clone(),
            });
            c.breaks += 1;
            c.tokens += b.tokens;
            c.usd += b.usd;
        }
        for (path, (n, tokens, usd)) in &f.reads {
            let r = reads.entry((path.clone(), f.project.clone())).or_default();
            *r = (r.0 + n, r.1 + tokens, r.2 + usd);
        }
        let h = &mut report.history;
        h.files += 1;
        h.bytes += f.bytes;
        h.lines += f.lines;
        h.bad_lines += f.bad_lines;
        h.long_lines += f.long_lines;
    }
    if report.history.long_lines > 0 {
        let n = report.history.long_lines;
        report.notes.push(format!(
            "{n} history line{} over {} MB skipped unread (a tool output or image that large): what {} held is \
             not counted",
            if n == 1 { "" } else { "s" },
            MAX_LINE_BYTES >> 20,
            if n == 1 { "it" } else { "they" }
        ));
    }
    report.days = days.into_iter().map(|(date, (tokens, waste))| Day { date, tokens, waste }).collect();
    for d in &report.days {
        report.totals.tokens.add(&d.tokens);
        report.totals.waste.add(&d.waste);
    }
    let mut projects: Vec<ProjectRow> = projects.into_values().collect();
    projects.sort_by(|a, b| waste_usd(&b.waste).total_cmp(&waste_usd(&a.waste)).then_with(|| a.root.cmp(&b.root)));
    report.projects = projects;
    let mut causes: Vec<CauseRow> = causes.into_values().collect();
    causes.sort_by(|a, b| b.usd.total_cmp(&a.usd).then(b.breaks.cmp(&a.breaks)).then_with(|| a.kind.cmp(&b.kind)));
    report.causes = causes;
    let mut rows: Vec<FileRow> = reads
        .into_iter()
        .map(|((path, project), (rereads, tokens, usd))| FileRow { path, project, rereads, tokens, usd })
        .collect();
    rows.sort_by(|a, b| b.tokens.cmp(&a.tokens).then(b.rereads.cmp(&a.rereads)).then_with(|| a.path.cmp(&b.path)));
    rows.truncate(TOP);
    report.repeated_files = rows;
}

/// What refrain's default setup would net on each project's history and in all: per session, the
/// tokens of its repeated unchanged reads less the notes that would replace them, against the
/// tool list on every request that session sent.
pub fn would_net(report: &mut Report, files: &[Arc<FileSummary>], cost: ToolCost) {
    if cost == ToolCost::default() {
        return;
    }
    let mut per: BTreeMap<&str, WouldNet> = BTreeMap::new();
    for f in files {
        let (mut requests, mut reads, mut read_tokens) = (0, 0, 0);
        for (t, w) in f.days.values() {
            requests += t.requests;
            reads += w.repeated_reads;
            read_tokens += w.repeated_read_tokens;
        }
        let removed = read_tokens.saturating_sub(reads * cost.note);
        let carried = f.carried_read_tokens.saturating_sub(f.carried_reads * cost.note);
        let fixed = requests * cost.of(f.agent);
        let w = per.entry(f.project.as_str()).or_default();
        w.removed += removed;
        w.carried_removed += carried;
        w.fixed += fixed;
        w.sessions += 1;
        w.sessions_negative += u64::from(fixed > removed);
        w.sessions_negative_carried += u64::from(fixed > carried);
    }
    let total = &mut report.totals.would_net;
    for p in &mut report.projects {
        if let Some(mut w) = per.remove(p.root.as_str()) {
            w.net = w.removed as i64 - w.fixed as i64;
            w.carried_net = w.carried_removed as i64 - w.fixed as i64;
            total.removed += w.removed;
            total.carried_removed += w.carried_removed;
            total.fixed += w.fixed;
            total.sessions += w.sessions;
            total.sessions_negative += w.sessions_negative;
            total.sessions_negative_carried += w.sessions_negative_carried;
            p.would_net = w;
        }
    }
    total.net = total.removed as i64 - total.fixed as i64;
    total.carried_net = total.carried_removed as i64 - total.fixed as i64;
}

fn waste_usd(w: &Waste) -> f64 {
    w.break_usd + w.repeated_read_usd
}

/// The prompts of each project, the same text counted together.
pub fn prompts(files: &[Arc<FileSummary>]) -> BTreeMap<String, BTreeMap<String, PromptStats>> {
    let mut out: BTreeMap<String, BTreeMap<String, PromptStats>> = BTreeMap::new();
    for f in files {
        for p in &f.prompts {
            let s = out.entry(f.project.clone()).or_default().entry(p.text.clone()).or_default();
            s.times += 1;
            s.tokens += p.tokens;
        }
    }
    out
}

/// The models each project's sessions used most (for pricing what refrain saved).
pub fn models(files: &[Arc<FileSummary>]) -> BTreeMap<String, (crate::report::model::AgentKind, String)> {
    let mut out = BTreeMap::new();
    for f in files {
        if let Some(a) = f.agent
            && !f.model.is_empty()
        {
            out.entry(f.project.clone()).or_insert((a, f.model.clone()));
        }
    }
    out
}

/// Adds what the stores said: the repeated tasks found and each store's own figures.
pub fn stores(report: &mut Report, tasks: Vec<TaskRow>, stores: Vec<StoreRow>) {
    let mut tasks = tasks;
    for t in &tasks {
        report.totals.repeated_tasks += t.times;
        report.totals.repeated_task_tokens += t.tokens;
        if let Some(p) = report.projects.iter_mut().find(|p| p.root == t.project) {
            p.repeated_tasks += t.times;
            p.repeated_task_tokens += t.tokens;
        }
    }
    tasks.sort_by(|a, b| b.tokens.cmp(&a.tokens).then(b.times.cmp(&a.times)).then_with(|| a.prompt.cmp(&b.prompt)));
    tasks.truncate(TOP);
    report.repeated_tasks = tasks;
    let unreadable: BTreeSet<String> =
        stores.iter().filter(|s| s.status == "unreadable").map(|s| format!("{}: {}", s.project, s.detail)).collect();
    for s in &stores {
        report.totals.plan_hits += s.plan_hits;
        report.totals.result_hits += s.result_hits_exact + s.result_hits_semantic;
        report.totals.tokens_saved += s.tokens_saved;
        report.totals.usd_saved += s.usd_saved;
        report.totals.wrong_hit_reports += s.wrong_hit_reports;
        if let Some(l) = &s.ledger {
            report.totals.tokens_removed += l.removed;
            report.totals.tokens_added += l.added;
            report.totals.tokens_fixed += l.fixed;
            report.totals.requests_seen += l.requests;
            report.totals.tokens_net += l.net;
        }
        report.totals.usd_net += s.usd_net;
    }
    for u in unreadable {
        report.notes.push(format!("refrain store not read, its figures are missing: {u}"));
    }
    report.refrain = stores;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::model::{AgentKind, WouldNet};

    fn file(project: &str, agent: AgentKind, requests: u64, reads: u64, read_tokens: u64) -> Arc<FileSummary> {
        let mut f = FileSummary { agent: Some(agent), project: project.into(), ..FileSummary::default() };
        let t = Tokens { requests, ..Tokens::default() };
        let w = Waste { repeated_reads: reads, repeated_read_tokens: read_tokens, ..Waste::default() };
        f.days.insert("2026-11-28".into(), (t, w));
        // Each repeated read is sent again by the 6 requests after it.
        f.carried_reads = reads * 6;
        f.carried_read_tokens = read_tokens * 6;
        Arc::new(f)
    }

    #[test]
    fn would_net_weighs_removed_reads_against_the_tool_list_on_every_request_per_session() {
        let files = vec![
            file("/p", AgentKind::Codex, 10, 2, 5_000),
            file("/p", AgentKind::ClaudeCode, 100, 0, 0),
            file("/q", AgentKind::Codex, 1, 0, 0),
        ];
        let mut r = Report::default();
        history(&mut r, &files);
        would_net(&mut r, &files, ToolCost { claude_code: 80, codex: 600, note: 40 });
        let p = r.projects.iter().find(|p| p.root == "/p").unwrap();
        assert_eq!(
            p.would_net,
            WouldNet {
                removed: 5_000 - 80,
                fixed: 10 * 600 + 100 * 80,
                net: 4_920 - 14_000,
                sessions_negative: 2,
                sessions: 2,
                carried_removed: 6 * (5_000 - 80),
                carried_net: 29_520 - 14_000,
                sessions_negative_carried: 1,
            }
        );
        let t = &r.totals.would_net;
        assert_eq!((t.removed, t.fixed, t.sessions, t.sessions_negative), (4_920, 14_600, 3, 3));
        assert_eq!(t.net, 4_920 - 14_600);
        let mut none = Report::default();
        history(&mut none, &files);
        would_net(&mut none, &files, ToolCost::default());
        assert_eq!(none.totals.would_net, WouldNet::default(), "no cost given: no estimate");
    }
}
