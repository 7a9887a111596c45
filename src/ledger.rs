//! The savings ledger: every intervention refrain makes in an agent's context, with the tokens it
//! removed and the tokens it added, plus the fixed cost of refrain's tool definitions on every
//! request seen.
//!
//! Savings are believed only net. So each note in place of a read, diff in place of a read, plan
//! served or taken, suggestion shown, cached result served and text injected by a hook is one line
//! here, counted with `tokens` (the same tokenizer on both sides), and every model request a hook
//! saw adds what refrain's tool list costs that agent per request. `cache_stats`, `refrain report`
//! and the dashboard show the totals as removed - added - fixed, and `refrain report --ledger`
//! lists the lines behind them. Totals are counters (read in constant time); lines are kept in
//! time order in their own tree and listed newest first. A retried hook call writes the same line
//! again (the key is the event's own time, session, kind and subject), never a second one; a
//! tool reply, which names no session, is always a line of its own.

use crate::store::{self, Key, Store, trees};
use crate::{stats, tokens};
use rmcp::schemars;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// The stats area the ledger's totals live in.
const AREA: &str = "ledger";

/// What refrain did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A repeated read answered with a note: the text was unchanged and still in the context.
    ReadNote,
    /// A repeated read answered with a diff against the text still in the context.
    ReadDiff,
    /// A plan served by `plan_lookup` as a verified hit.
    PlanHit,
    /// A suggested plan taken with `plan_lookup` and `plan_id`.
    PlanTaken,
    /// A `plan_lookup` miss: its one line and any suggestions.
    PlanMiss,
    /// Text a hook added to the agent's context (a plan, a suggestion block).
    Injected,
    /// A cached result served instead of running the tool again.
    ResultServed,
    /// A `response_cache_get` miss.
    ResultMiss,
}

impl Kind {
    /// Every kind, in report order.
    pub const ALL: [Kind; 8] = [
        Kind::ReadNote,
        Kind::ReadDiff,
        Kind::PlanHit,
        Kind::PlanTaken,
        Kind::PlanMiss,
        Kind::Injected,
        Kind::ResultServed,
        Kind::ResultMiss,
    ];

    /// The name used in counters, JSON and the report.
    pub fn name(self) -> &'static str {
        match self {
            Kind::ReadNote => "read_note",
            Kind::ReadDiff => "read_diff",
            Kind::PlanHit => "plan_hit",
            Kind::PlanTaken => "plan_taken",
            Kind::PlanMiss => "plan_miss",
            Kind::Injected => "injected",
            Kind::ResultServed => "result_served",
            Kind::ResultMiss => "result_miss",
        }
    }

    /// The kind of a name, if it is one.
    pub fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == name)
    }
}

/// One intervention.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Line {
    /// When (ms since the Unix epoch).
    pub at_ms: u64,
    /// The agent (`claude-code`, `codex`, …), or `mcp` for a tool call that names none.
    pub agent: String,
    /// The agent's session, when known.
    pub session: Option<String>,
    /// What refrain did.
    pub kind: Kind,
    /// Tokens it kept out of the context.
    pub removed: u64,
    /// Tokens it put into the context.
    pub added: u64,
    /// What it was about: a path, a tool, a plan id (short, for the listing).
    pub subject: String,
}

impl Line {
    /// A line with both sides counted from the texts themselves.
    pub fn counted(agent: &str, session: Option<&str>, kind: Kind, removed: &str, added: &str, subject: &str) -> Line {
        Line {
            at_ms: crate::results::entry::now_ms(),
            agent: agent.to_string(),
            session: session.map(str::to_string),
            kind,
            removed: tokens::count(removed),
            added: tokens::count(added),
            subject: subject.chars().take(200).collect(),
        }
    }

    /// Removed minus added (negative when the intervention cost more than it saved).
    pub fn net(&self) -> i64 {
        self.removed as i64 - self.added as i64
    }
}

/// Distinguishes lines a retry cannot repeat (tool replies, which name no session): two of them in
/// one millisecond are two lines.
static SEQUENCE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn key(l: &Line) -> Vec<u8> {
    if l.session.is_none() {
        let n = SEQUENCE.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        return Key::new().u64(l.at_ms).text(l.kind.name()).u64(n).into_bytes();
    }
    let mut h = Sha256::new();
    h.update(l.agent.as_bytes());
    h.update([0]);
    h.update(l.session.as_deref().unwrap_or("").as_bytes());
    h.update([0]);
    h.update(l.subject.as_bytes());
    let digest = h.finalize();
    Key::new().u64(l.at_ms).text(l.kind.name()).raw(&digest[..8]).into_bytes()
}

/// Records a line and adds it to the totals (buffered; the caller flushes). False when the line
/// was there already (a retried hook call): nothing is counted twice.
pub fn record(store: &Store, line: &Line) -> store::Result<bool> {
    let k = key(line);
    if store.get::<Line>(trees::LEDGER, &k)?.is_some() {
        return Ok(false);
    }
    store.put(trees::LEDGER, &k, line)?;
    let kind = Some(line.kind.name());
    stats::bump(store, AREA, "removed", kind, line.removed)?;
    stats::bump(store, AREA, "added", kind, line.added)?;
    stats::bump(store, AREA, "lines", kind, 1)?;
    Ok(true)
}

/// Records one model request of an agent's session: refrain's tool list, as that agent receives
/// it, is paid again. `per_request` is what the list costs that agent (see `tools::surface`).
pub fn record_request(store: &Store, agent: &str, per_request: u64) -> store::Result<()> {
    stats::bump(store, AREA, "requests", Some(agent), 1)?;
    stats::bump(store, AREA, "fixed", Some(agent), per_request)
}

/// A tool reply's line, counted and written off the request path.
type Job = Box<dyn FnOnce() + Send>;

/// Most tool-reply lines waiting for the writer; past it a reply counts its own line (so a flood
/// of calls slows down rather than queueing without bound).
const QUEUE: usize = 1024;

/// The one thread that counts and writes tool replies' lines, in the order they were handed over.
/// Counting a reply with the tokenizer took about as long as the rest of a semantic
/// `response_cache_get` beside the embedding (0.6 ms of 1.5), so it no longer sits between an
/// answer and the agent. `None` if the thread could not be started.
fn writer() -> Option<&'static std::sync::mpsc::SyncSender<Job>> {
    static WRITER: std::sync::OnceLock<Option<std::sync::mpsc::SyncSender<Job>>> = std::sync::OnceLock::new();
    WRITER
        .get_or_init(|| {
            let (tx, rx) = std::sync::mpsc::sync_channel::<Job>(QUEUE);
            let run = move || {
                for job in rx {
                    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)).is_err() {
                        tracing::error!("a savings ledger line failed to be counted; the next ones go on");
                    }
                }
            };
            std::thread::Builder::new().name("refrain-ledger".into()).spawn(run).ok().map(|_| tx)
        })
        .as_ref()
}

/// Records the line `count` makes, on the ledger's own thread (or here when its queue is full or
/// it is not running). A line that cannot be written is logged; the reply is never held up.
pub fn record_later(store: &Store, count: impl FnOnce() -> Line + Send + 'static) {
    let store = store.clone();
    let job: Job = Box::new(move || {
        if let Err(e) = record(&store, &count()) {
            tracing::warn!(error = %e, "the savings ledger could not record a tool reply");
        }
    });
    let job = match writer() {
        Some(tx) => match tx.try_send(job) {
            Ok(()) => return,
            Err(std::sync::mpsc::TrySendError::Full(job) | std::sync::mpsc::TrySendError::Disconnected(job)) => job,
        },
        None => job,
    };
    job();
}

/// Waits until every line handed to `record_later` before this call is written (at most 2 s), so
/// totals read afterwards include them.
pub async fn settle() {
    let Some(tx) = writer() else { return };
    let (done, written) = tokio::sync::oneshot::channel::<()>();
    let marker: Job = Box::new(move || {
        let _ = done.send(());
    });
    let sent = {
        let tx = tx.clone();
        tokio::task::spawn_blocking(move || tx.send(marker).is_ok()).await.unwrap_or(false)
    };
    if sent {
        let _ = tokio::time::timeout(std::time::Duration::from_secs(2), written).await;
    }
}

/// The ledger's totals.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Totals {
    /// The tokenizer every figure was counted with.
    pub tokenizer: String,
    /// Tokens refrain kept out of agents' contexts.
    pub removed: u64,
    /// Tokens refrain put into them (notes, plans, suggestions, served results, tool replies).
    pub added: u64,
    /// Tokens of refrain's tool definitions, paid on every request a hook saw.
    pub fixed: u64,
    /// Model requests the hooks saw.
    pub requests: u64,
    /// removed - added - fixed: negative when refrain cost more than it saved.
    pub net: i64,
    /// Per kind of intervention: lines, removed, added.
    pub per_kind: BTreeMap<String, KindTotals>,
    /// Per agent: requests seen and the fixed cost they paid.
    pub per_agent: BTreeMap<String, AgentTotals>,
}

/// One kind's totals.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KindTotals {
    /// Interventions.
    pub lines: u64,
    /// Tokens removed.
    pub removed: u64,
    /// Tokens added.
    pub added: u64,
}

/// One agent's fixed cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AgentTotals {
    /// Requests seen.
    pub requests: u64,
    /// Tokens of tool definitions paid over them.
    pub fixed: u64,
}

/// The totals, from the counters.
pub fn totals(store: &Store) -> store::Result<Totals> {
    let c = stats::read_area(store, AREA)?;
    let n = |k: &str| c.get(k).copied().unwrap_or(0);
    let mut t = Totals {
        tokenizer: tokens::TOKENIZER.to_string(),
        removed: n("removed"),
        added: n("added"),
        fixed: n("fixed"),
        requests: n("requests"),
        ..Totals::default()
    };
    t.net = t.removed as i64 - t.added as i64 - t.fixed as i64;
    for kind in Kind::ALL {
        let name = kind.name();
        let k = KindTotals {
            lines: n(&format!("lines/{name}")),
            removed: n(&format!("removed/{name}")),
            added: n(&format!("added/{name}")),
        };
        if k.lines > 0 {
            t.per_kind.insert(name.to_string(), k);
        }
    }
    for (k, v) in &c {
        if let Some(agent) = k.strip_prefix("requests/") {
            let fixed = n(&format!("fixed/{agent}"));
            t.per_agent.insert(agent.to_string(), AgentTotals { requests: *v, fixed });
        }
    }
    Ok(t)
}

/// The newest `limit` lines, newest first.
pub fn lines(store: &Store, limit: usize) -> store::Result<Vec<Line>> {
    let keys = store.keys(trees::LEDGER, &[])?;
    let mut out = Vec::new();
    for k in keys.iter().rev().take(limit) {
        if let Some(l) = store.get::<Line>(trees::LEDGER, k)? {
            out.push(l);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(at: u64, kind: Kind, removed: u64, added: u64) -> Line {
        Line {
            at_ms: at,
            agent: "claude-code".into(),
            session: Some("s1".into()),
            kind,
            removed,
            added,
            subject: "guide.md".into(),
        }
    }

    #[test]
    fn totals_are_net_of_what_refrain_added_and_of_the_tool_list_on_every_request() {
        let dir = tempfile::tempdir().unwrap();
        let s = Store::open(dir.path()).unwrap();
        record(&s, &line(10, Kind::ReadNote, 900, 20)).unwrap();
        record(&s, &line(20, Kind::Injected, 0, 120)).unwrap();
        // A retried hook call writes the same line again, not a second one.
        record(&s, &line(20, Kind::Injected, 0, 120)).unwrap();
        record_request(&s, "codex", 650).unwrap();
        record_request(&s, "codex", 650).unwrap();
        record_request(&s, "claude-code", 80).unwrap();
        let t = totals(&s).unwrap();
        assert_eq!((t.removed, t.added, t.fixed, t.requests), (900, 140, 1380, 3));
        assert_eq!(t.net, 900 - 140 - 1380);
        assert_eq!(t.per_kind["injected"], KindTotals { lines: 1, removed: 0, added: 120 });
        assert_eq!(t.per_agent["codex"], AgentTotals { requests: 2, fixed: 1300 });
        let listed = lines(&s, 10).unwrap();
        assert_eq!(listed.iter().map(|l| l.kind).collect::<Vec<_>>(), vec![Kind::Injected, Kind::ReadNote]);
        assert_eq!(listed[1].net(), 880);
        assert_eq!(lines(&s, 1).unwrap().len(), 1);
        // Two tool replies in the same millisecond are two lines.
        let reply = Line { session: None, agent: "mcp".into(), ..line(30, Kind::ResultServed, 0, 5) };
        record(&s, &reply).unwrap();
        record(&s, &reply).unwrap();
        assert_eq!(totals(&s).unwrap().per_kind["result_served"].lines, 2);
    }

    #[test]
    fn counted_lines_use_the_real_tokenizer_on_both_sides() {
        let l = Line::counted("codex", None, Kind::ReadNote, &"word ".repeat(100), "unchanged", "a.txt");
        assert_eq!(l.added, tokens::count("unchanged"));
        assert_eq!(l.removed, tokens::count(&"word ".repeat(100)));
        assert!(l.removed >= 100 && l.added <= 3);
        assert!(Kind::ALL.iter().all(|k| Kind::parse(k.name()) == Some(*k)));
    }
}
