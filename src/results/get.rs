//! Looking a result up: exact key first, then (for a natural-language query) the same query text,
//! then the nearest stored queries of the same tool and namespace, verified (see `semantic`);
//! expiry and freshness are checked before anything is returned, and a stale entry is evicted and
//! reported as the miss reason. Suggestions are never hits and never counted as hits.

use super::entry::{self, Entry, now_ms};
use super::fresh::{self, Checked};
use super::semantic::{self, Scored, Semantic, Suggestion};
use super::{AREA, Result, estimate_tokens, key};
use crate::app::App;
use crate::stats;
use serde_json::Value;

/// A lookup.
#[derive(Debug, Clone, Default)]
pub struct GetRequest {
    /// Namespace; `default` when empty.
    pub namespace: String,
    /// The tool whose result is wanted.
    pub tool: String,
    /// The tool's arguments (exact lookup).
    pub args: Option<Value>,
    /// A natural-language query (semantic lookup within the same tool and namespace).
    pub query: Option<String>,
    /// Score and report every candidate considered (for evaluations).
    pub explain: bool,
}

/// How a hit matched.
#[derive(Debug, Clone, PartialEq)]
pub enum MatchKind {
    /// Same namespace, tool and canonical arguments.
    Exact,
    /// The same query text, or a stored query close in meaning that passed verification.
    Semantic {
        /// The verification score (1 for the same text).
        score: f32,
        /// The stored query that matched.
        matched_query: String,
        /// How it was verified.
        method: crate::verify::Method,
    },
}

/// A hit.
#[derive(Debug, Clone)]
pub struct Hit {
    /// The entry served.
    pub entry: Entry,
    /// How it matched.
    pub matched: MatchKind,
    /// Seconds since it was stored.
    pub age_secs: u64,
    /// Seconds until it expires.
    pub expires_in_secs: u64,
    /// The freshness checks that ran.
    pub checked: Checked,
    /// Hits this entry has served, this one included.
    pub hits: u64,
    /// Candidates considered by meaning (with `explain`).
    pub considered: Vec<Scored>,
}

/// What a lookup found.
#[derive(Debug, Clone)]
pub enum GetOutcome {
    /// A fresh result.
    Hit(Box<Hit>),
    /// Nothing to serve.
    Miss {
        /// Why, in words (e.g. "src/lib.rs changed since this result was stored").
        reason: String,
        /// Whether an entry existed but was stale or expired (and was evicted).
        stale: bool,
        /// The exact key looked up, when arguments were given.
        key: Option<String>,
        /// The nearest matches that failed verification, for the caller to judge (never hits).
        suggestions: Vec<Suggestion>,
        /// Candidates considered by meaning (with `explain`).
        considered: Vec<Scored>,
    },
}

enum Found {
    Fresh(Box<Hit>),
    Stale(String),
}

/// Looks up a result.
pub async fn get(app: &App, mut req: GetRequest) -> Result<GetOutcome> {
    if req.namespace.is_empty() {
        req.namespace = super::DEFAULT_NAMESPACE.into();
    }
    let exact_key = req.args.as_ref().map(|a| key::exact_key(&req.namespace, &req.tool, a));
    let mut reasons = Vec::new();
    let mut stale = false;
    let (mut suggestions, mut considered) = (Vec::new(), Vec::new());
    if let Some(k) = &exact_key {
        match entry::load(&app.store, k)? {
            Some(e) => match check(app, e, MatchKind::Exact).await? {
                Found::Fresh(hit) => return served(app, hit),
                Found::Stale(r) => {
                    stale = true;
                    reasons.push(r);
                }
            },
            None => reasons.push(format!("no result stored for {} with these arguments", req.tool)),
        }
    }
    if let Some(q) = req.query.as_deref().filter(|q| !q.trim().is_empty()) {
        match semantic::lookup(app, &req.namespace, &req.tool, q, req.explain).await? {
            Semantic::Found { entry, score, method, considered: seen } => {
                let matched_query = entry.query.clone().unwrap_or_default();
                match check(app, *entry, MatchKind::Semantic { score, matched_query, method }).await? {
                    Found::Fresh(mut hit) => {
                        hit.considered = seen;
                        return served(app, hit);
                    }
                    Found::Stale(r) => {
                        stale = true;
                        reasons.push(r);
                        considered = seen;
                    }
                }
            }
            Semantic::NotFound { reason, suggestions: s, considered: seen } => {
                reasons.push(reason);
                suggestions = s;
                considered = seen;
            }
        }
    }
    if reasons.is_empty() {
        reasons.push("give args (exact lookup) or query (lookup by meaning)".into());
    }
    stats::bump(&app.store, AREA, "misses", Some(&req.tool), 1)?;
    if stale {
        stats::bump(&app.store, AREA, "misses_stale", Some(&req.tool), 1)?;
    }
    if !suggestions.is_empty() {
        stats::bump(&app.store, AREA, "suggestions", Some(&req.tool), 1)?;
    }
    Ok(GetOutcome::Miss { reason: reasons.join("; "), stale, key: exact_key, suggestions, considered })
}

/// Checks expiry and freshness; a stale entry is evicted.
async fn check(app: &App, e: Entry, matched: MatchKind) -> Result<Found> {
    let now = now_ms();
    let mut checked = Checked::default();
    let verdict = if now >= e.expires_ms {
        Err(format!("the stored result expired {}s ago (ttl)", (now - e.expires_ms) / 1000))
    } else {
        fresh::check(&e.deps, &app.project.root, &mut checked)
    };
    match verdict {
        Ok(()) => {
            let age_secs = now.saturating_sub(e.created_ms) / 1000;
            let expires_in_secs = e.expires_ms.saturating_sub(now) / 1000;
            Ok(Found::Fresh(Box::new(Hit {
                entry: e,
                matched,
                age_secs,
                expires_in_secs,
                checked,
                hits: 0,
                considered: Vec::new(),
            })))
        }
        Err(reason) => {
            if let Some(old) = entry::remove(&app.store, &e.key)? {
                super::evict::drop_vector(app, &old).await?;
            }
            Ok(Found::Stale(reason))
        }
    }
}

/// Counts the hit, refreshes the entry's LRU position and returns it.
fn served(app: &App, mut hit: Box<Hit>) -> Result<GetOutcome> {
    let store = &app.store;
    let tool = hit.entry.tool.clone();
    entry::touch(store, &hit.entry.key, true)?;
    hit.hits = entry::usage(store, &hit.entry.key)?.map(|u| u.hits).unwrap_or(1);
    let kind = if matches!(hit.matched, MatchKind::Exact) { "hits_exact" } else { "hits_semantic" };
    stats::bump(store, AREA, "hits", Some(&tool), 1)?;
    stats::bump(store, AREA, kind, Some(&tool), 1)?;
    stats::bump(store, AREA, "tokens_saved", Some(&tool), estimate_tokens(hit.entry.bytes))?;
    Ok(GetOutcome::Hit(hit))
}
