//! `refrain report`: what the agents on this machine wasted and why, read offline from their own
//! history (Claude Code transcripts, Codex rollouts) and refrain's stores.
//!
//! Files are streamed line by line, several at a time, each into a small `FileSummary`; the
//! summaries add up into a `Report` (`--json`), rendered as a one-screen terminal summary
//! (`text`) or one self-contained HTML page with SVG charts (`html`, `svg`). A `Cache` keeps the
//! summaries of unchanged files so the live dashboard re-reads only what agents appended.
//! Plain Rust: no rmcp types; reaching the stores is the command's job (`cli::report`).

pub mod aggregate;
pub mod breaks;
pub mod file;
pub mod html;
pub mod model;
pub mod observe;
pub mod price;
pub mod reads;
pub mod sources;
pub mod svg;
pub mod text;

pub use file::{Ctx, FileSummary};
pub use model::{AgentKind, Report};
pub use sources::{HistoryFile, Roots};

use crate::prompt::rules::Rules;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// Errors of the report.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A filter value is malformed.
    #[error("{0}")]
    Input(String),
    /// The page template failed to render (a bug in refrain).
    #[error("cannot render the report page: {0}")]
    Render(String),
}

/// What to read and how to filter it.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The history roots.
    pub roots: Roots,
    /// Only this project root.
    pub project: Option<String>,
    /// Only activity from this time on (ms since the epoch).
    pub since_ms: Option<i64>,
    /// Only this agent.
    pub agent: Option<AgentKind>,
    /// Files read in parallel.
    pub threads: usize,
    /// What refrain's default tool list costs each request of each agent, for the estimate of
    /// what refrain would net on this history (0: no estimate).
    pub tool_cost: model::ToolCost,
}

/// Summaries of files already read, by path, valid while size and modification time hold.
#[derive(Default)]
pub struct Cache {
    map: HashMap<PathBuf, (u64, i64, Arc<FileSummary>)>,
}

/// Reads the history files (reusing `cache` for unchanged ones) and adds up the figures.
/// `progress` is told about bytes as they are read. Returns the report (history part) and the
/// files' summaries (for the store part: prompts, models).
pub fn analyze(
    opts: &Options,
    files: &[HistoryFile],
    rules: &Rules,
    cache: Option<&mut Cache>,
    progress: &(dyn Fn(u64) + Sync),
) -> (Report, Vec<Arc<FileSummary>>) {
    let ctx = Ctx { rules, since_ms: opts.since_ms };
    let mut todo = Vec::new();
    let mut summaries: Vec<Option<Arc<FileSummary>>> = vec![None; files.len()];
    for (i, f) in files.iter().enumerate() {
        match cache.as_ref().and_then(|c| c.map.get(&f.path)) {
            Some((size, mtime, s)) if *size == f.size && *mtime == f.mtime_ms => {
                progress(f.size);
                summaries[i] = Some(s.clone());
            }
            _ => todo.push(i),
        }
    }
    let unreadable = Mutex::new(Vec::new());
    let results = Mutex::new(Vec::new());
    let next = AtomicUsize::new(0);
    let workers = opts.threads.clamp(1, 16).min(todo.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let k = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&i) = todo.get(k) else { break };
                    match file::analyze(&files[i], ctx, progress) {
                        Ok(s) => results.lock().unwrap_or_else(|e| e.into_inner()).push((i, Arc::new(s))),
                        Err(e) => unreadable
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(format!("{}: {e}", files[i].path.display())),
                    }
                }
            });
        }
    });
    for (i, s) in results.into_inner().unwrap_or_else(|e| e.into_inner()) {
        summaries[i] = Some(s);
    }
    if let Some(c) = cache {
        c.map.clear();
        for (f, s) in files.iter().zip(&summaries) {
            if let Some(s) = s {
                c.map.insert(f.path.clone(), (f.size, f.mtime_ms, s.clone()));
            }
        }
    }
    let kept: Vec<Arc<FileSummary>> = summaries
        .into_iter()
        .flatten()
        .filter(|s| opts.project.as_ref().is_none_or(|p| &s.project == p))
        .filter(|s| !s.days.is_empty() || !s.prompts.is_empty())
        .collect();
    let mut report = Report {
        generated_at: file::timestamp_of(now_ms()),
        prices: price::note(rules),
        rules_as_of: rules.as_of.clone(),
        ..Report::default()
    };
    report.history.unreadable = unreadable.into_inner().unwrap_or_else(|e| e.into_inner());
    report.history.claude_dir = opts.roots.claude.as_ref().filter(|d| d.is_dir()).map(|d| d.display().to_string());
    report.history.codex_dir = opts.roots.codex.as_ref().filter(|d| d.is_dir()).map(|d| d.display().to_string());
    aggregate::history(&mut report, &kept);
    aggregate::would_net(&mut report, &kept, opts.tool_cost);
    (report, kept)
}

/// Milliseconds since the epoch, now.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// Parses `--since`: a date (`2026-01-31`) or an age (`30d`, `12h`), relative to `now_ms`.
pub fn parse_since(s: &str, now_ms: i64) -> Result<i64, Error> {
    let t = s.trim();
    let bad = || {
        Error::Input(format!("--since {t:?} is neither a date (2026-01-31) nor an age (30d, 12h); give one of those"))
    };
    if let Some(n) = t.strip_suffix('d').and_then(|n| n.parse::<i64>().ok()) {
        return Ok(now_ms - n * 86_400_000);
    }
    if let Some(n) = t.strip_suffix('h').and_then(|n| n.parse::<i64>().ok()) {
        return Ok(now_ms - n * 3_600_000);
    }
    crate::prompt::time::parse_rfc3339_ms(&format!("{t}T00:00:00Z")).ok_or_else(bad)
}

#[cfg(test)]
mod tests;
