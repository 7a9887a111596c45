//! Feedback on results served by meaning: an agent that finds a served result wrong says so, and
//! that entry's own threshold rises (per-entry calibration, as vCache does); repeated failures
//! quarantine it from lookups by meaning. Exact-argument lookups are not a judgement call and are
//! not affected.
//!
//! Tree `response_feedback`: exact key -> `Feedback`, removed with its entry.

use super::{AREA, Result, entry};
use crate::app::App;
use crate::stats;
use crate::store::{Store, trees};
use crate::verify::{Candidate, Kind};
use serde::{Deserialize, Serialize};

/// How much one failure report raises the entry's threshold, at least.
pub const STEP: f32 = 0.05;

/// What the agent reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The result served does not answer the query.
    Wrong,
    /// The result served was right.
    Right,
    /// Serve a quarantined entry by meaning again (its raised threshold stays).
    Release,
}

/// The feedback kept for one entry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Feedback {
    /// Reports that a result served by meaning was wrong.
    pub wrong: u32,
    /// Reports that it was right.
    pub right: u32,
    /// How much this entry's threshold is raised above the calibrated one.
    pub bias: f32,
    /// Why it is no longer served by meaning, when it is quarantined.
    pub quarantined: Option<String>,
}

/// Errors the caller can fix.
#[derive(Debug, thiserror::Error)]
pub enum FeedbackError {
    /// No entry under that key.
    #[error("no stored result has key {0}; pass the `key` response_cache_get returned with the hit")]
    NoSuchKey(String),
    /// The store failed.
    #[error(transparent)]
    Results(#[from] super::Error),
}

impl From<crate::store::Error> for FeedbackError {
    fn from(e: crate::store::Error) -> Self {
        FeedbackError::Results(e.into())
    }
}

/// The feedback of an entry (default when none was given).
pub fn load(store: &Store, key: &str) -> Result<Feedback> {
    Ok(store.get(trees::RESPONSE_FEEDBACK, key.as_bytes())?.unwrap_or_default())
}

/// Records a report on the entry `key`. `query` is the query it was served for, when the agent
/// gives it: a wrong report then raises the threshold above that query's own score, so the same
/// query is not served this entry again.
pub async fn report(
    app: &App,
    key: &str,
    verdict: Verdict,
    query: Option<&str>,
    reason: Option<&str>,
) -> std::result::Result<Feedback, FeedbackError> {
    let store = &app.store;
    let e = entry::load(store, key)?.ok_or_else(|| FeedbackError::NoSuchKey(key.to_string()))?;
    let mut raise_to = 0.0f32;
    if let (Verdict::Wrong, Some(q), Some(stored)) = (verdict, query, e.query.as_deref()) {
        raise_to = score_now(app, q, stored).await.unwrap_or(0.0);
    }
    let after = app.config.matching.quarantine_after.max(1);
    let why = reason.map(str::to_string);
    let updated = store.update::<Feedback>(trees::RESPONSE_FEEDBACK, key.as_bytes(), |old| {
        let mut f = old.unwrap_or_default();
        match verdict {
            Verdict::Wrong => {
                f.wrong += 1;
                f.bias = (f.bias + STEP).max(raise_to + STEP).min(1.0);
                if f.wrong >= after && f.quarantined.is_none() {
                    let r = why.clone().unwrap_or_else(|| "reported wrong".into());
                    f.quarantined = Some(format!("{} wrong reports; last: {r}", f.wrong));
                }
            }
            Verdict::Right => f.right += 1,
            Verdict::Release => f.quarantined = None,
        }
        Some(f)
    })?;
    let counter = match verdict {
        Verdict::Wrong => "feedback_wrong",
        Verdict::Right => "feedback_right",
        Verdict::Release => "feedback_release",
    };
    stats::bump(store, AREA, counter, Some(&e.tool), 1)?;
    let f = updated.unwrap_or_default();
    if verdict == Verdict::Wrong && f.wrong == after {
        stats::bump(store, AREA, "quarantined", Some(&e.tool), 1)?;
    }
    store.flush_async().await?;
    Ok(f)
}

/// How far above the calibrated threshold this query scores against the stored one now
/// (score - threshold, >= 0), so the raised threshold lies above it.
async fn score_now(app: &App, query: &str, stored: &str) -> Option<f32> {
    let cosine = match app.embed.embed(vec![query.to_string(), stored.to_string()]).await {
        Ok(v) if v.len() == 2 => crate::embed::cosine(&v[0], &v[1]),
        _ => 0.0,
    };
    let cand = [Candidate { stored, cosine, bias: 0.0 }];
    let v = app.verify.judge(Kind::Result, query, &cand).await.pop()?;
    Some((v.score - v.threshold).max(0.0))
}
