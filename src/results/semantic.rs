//! Lookups by meaning: which stored query, if any, answers a new query of the same tool and
//! namespace.
//!
//! The same (normalised) text is found through its hash and always reaches its own entry. Anything
//! else goes through the nearest stored queries from the vector index, minus quarantined entries,
//! and the verification stage decides them in one batch; the best accepted candidate is served.
//! The nearest candidates that failed verification come back as suggestions (up to three, by
//! cosine, each with its score and any gate that refused it), which are never hits: the agent
//! judges them, and takes one by asking again with its exact text.

use super::entry::{self, Entry};
use super::{Result, feedback, texts};
use crate::app::App;
use crate::verify::{self, Assessed, Candidate, Kind, Method, text};

/// Most suggestions a miss carries.
const MAX_SUGGESTIONS: usize = 3;
/// Most candidates scored per lookup, whatever the configuration says.
const MAX_CANDIDATES: usize = 64;

/// One candidate as the verifier saw it (reported with `explain`).
#[derive(Debug, Clone)]
pub struct Scored {
    /// The entry's exact key.
    pub key: String,
    /// The stored query.
    pub query: String,
    /// Cosine similarity to the new query.
    pub cosine: f32,
    /// The verdict, gate and model score.
    pub assessed: Assessed,
}

/// A near match that failed verification: for the agent to judge, never served.
#[derive(Debug, Clone, PartialEq)]
pub struct Suggestion {
    /// The stored query's own text.
    pub query: String,
    /// Its score and the threshold it missed.
    pub score: f32,
    /// The threshold it had to reach.
    pub threshold: f32,
    /// Its cosine similarity to the new query.
    pub cosine: f32,
    /// The gate that refused it before scoring, if one did.
    pub gate: Option<&'static str>,
}

/// What a lookup by meaning found.
#[derive(Debug, Clone)]
pub enum Semantic {
    /// An entry to serve (still to be checked for freshness).
    Found {
        /// The entry.
        entry: Box<Entry>,
        /// Its score.
        score: f32,
        /// How it was accepted.
        method: Method,
        /// Every candidate considered (with `explain`).
        considered: Vec<Scored>,
    },
    /// Nothing to serve.
    NotFound {
        /// Why, in words.
        reason: String,
        /// The nearest candidates that failed verification, nearest first.
        suggestions: Vec<Suggestion>,
        /// Every candidate considered (with `explain`).
        considered: Vec<Scored>,
    },
}

/// Looks a query up by meaning within one tool and namespace. `explain` scores and reports every
/// candidate (for evaluations); the decision is the same either way.
pub async fn lookup(app: &App, namespace: &str, tool: &str, query: &str, explain: bool) -> Result<Semantic> {
    let store = &app.store;
    if let Some(key) = texts::find(store, namespace, tool, query)?
        && let Some(e) = entry::load(store, &key)?
        && e.query.as_deref().is_some_and(|q| text::same(q, query))
    {
        return Ok(Semantic::Found { entry: Box::new(e), score: 1.0, method: Method::Exact, considered: Vec::new() });
    }
    let not_found = |reason: String| Semantic::NotFound { reason, suggestions: Vec::new(), considered: Vec::new() };
    let vector = match app.embed.embed_one(query).await {
        Ok(v) => v,
        Err(e) => return Ok(not_found(format!("no lookup by meaning: {e}"))),
    };
    let index = app.index().await?;
    let k = app.config.matching.candidates.clamp(1, MAX_CANDIDATES);
    let floor = if explain { -1.0 } else { verify::gate::FLOOR };
    let mut entries = Vec::new();
    let mut quarantined = 0usize;
    for h in index.search(&entry::scope(namespace, tool), &vector, k, floor)? {
        let key = String::from_utf8_lossy(&h.target).into_owned();
        let Some(e) = entry::load(store, &key)? else { continue };
        if e.namespace != namespace || e.tool != tool || e.query.is_none() {
            continue;
        }
        let fb = feedback::load(store, &key)?;
        if fb.quarantined.is_some() {
            quarantined += 1;
            continue;
        }
        entries.push((e, h.score, fb.bias));
    }
    let cands: Vec<Candidate<'_>> = entries
        .iter()
        .map(|(e, cosine, bias)| Candidate { stored: e.query.as_deref().unwrap_or(""), cosine: *cosine, bias: *bias })
        .collect();
    let assessed = app.verify.assess(Kind::Result, query, &cands, explain).await;
    let considered: Vec<Scored> = if explain {
        entries
            .iter()
            .zip(&assessed)
            .map(|((e, cosine, _), a)| Scored {
                key: e.key.clone(),
                query: e.query.clone().unwrap_or_default(),
                cosine: *cosine,
                assessed: *a,
            })
            .collect()
    } else {
        Vec::new()
    };
    let best = (0..assessed.len()).filter(|&i| assessed[i].verdict.accepted).max_by(|&a, &b| {
        let key = |i: usize| (assessed[i].verdict.method == Method::Exact, assessed[i].verdict.score, cands[i].cosine);
        let (x, y) = (key(a), key(b));
        x.0.cmp(&y.0).then(x.1.total_cmp(&y.1)).then(x.2.total_cmp(&y.2))
    });
    if let Some(i) = best {
        let v = assessed[i].verdict;
        let (e, _, _) = entries.swap_remove(i);
        return Ok(Semantic::Found { entry: Box::new(e), score: v.score, method: v.method, considered });
    }
    Ok(Semantic::NotFound {
        reason: miss_reason(tool, &cands, &assessed, quarantined),
        suggestions: suggestions(&cands, &assessed),
        considered,
    })
}

/// The nearest rejected candidates, by cosine, down to the retrieval floor (so `explain`, which
/// retrieves below it, suggests the same): on refrain's own developer-query development split
/// the right stored query is the nearest one whenever it is among those above the floor, while
/// the verifier's score alone left it out for a third of the rephrasings.
fn suggestions(cands: &[Candidate<'_>], assessed: &[Assessed]) -> Vec<Suggestion> {
    let mut near: Vec<usize> = (0..assessed.len())
        .filter(|&i| !assessed[i].verdict.accepted && cands[i].cosine >= verify::gate::FLOOR)
        .collect();
    near.sort_by(|&a, &b| cands[b].cosine.total_cmp(&cands[a].cosine));
    near.into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|i| Suggestion {
            query: cands[i].stored.to_string(),
            score: assessed[i].verdict.score,
            threshold: assessed[i].verdict.threshold,
            cosine: cands[i].cosine,
            gate: assessed[i].gate.map(verify::Gate::reason),
        })
        .collect()
}

fn miss_reason(tool: &str, cands: &[Candidate<'_>], assessed: &[Assessed], quarantined: usize) -> String {
    let mut reason = match assessed.iter().zip(cands).max_by(|a, b| a.1.cosine.total_cmp(&b.1.cosine)) {
        None => format!("no stored {tool} query is close enough in meaning"),
        Some((a, _)) if a.gate.is_some() => format!(
            "the nearest stored {tool} query asks something different ({})",
            a.gate.map(verify::Gate::reason).unwrap_or_default()
        ),
        Some((a, _)) => format!(
            "the nearest stored {tool} query asks something different ({} score {:.2}, needs {:.2})",
            a.verdict.method.name().replace('_', "-"),
            a.verdict.score,
            a.verdict.threshold
        ),
    };
    if quarantined > 0 {
        reason.push_str(&format!("; {quarantined} quarantined by feedback"));
    }
    reason
}
