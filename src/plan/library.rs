//! The plan library in the store: plans by id (`PLANS`), bucket membership (`PLAN_BUCKETS`), task
//! vectors (index scope `plans`), counters, quarantine and eviction.
//!
//! Synchronous store calls only; callers flush before acknowledging a write.

use super::Error;
use super::template::StoredPlan;
use crate::index::VectorIndex;
use crate::store::{Key, Store, trees};
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

/// The vector index scope holding plan task embeddings.
pub const SCOPE: &str = "plans";

/// What to evict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Eviction {
    /// One plan by id.
    Plan(String),
    /// Every plan of a bucket.
    Bucket(String),
    /// Every plan whose versions match all the given ones.
    Version {
        /// Template revision.
        plan: Option<String>,
        /// Normaliser version.
        normaliser: Option<u32>,
        /// Extractor version.
        extractor: Option<u32>,
    },
}

/// A plan stored record plus the vector id of its task embedding.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    /// The plan.
    pub plan: StoredPlan,
    /// Its task vector in the index, when a model was available.
    pub vector: Option<u64>,
}

fn bucket_key(bucket: &str, id: &str) -> Vec<u8> {
    Key::new().text(bucket).text(id).into_bytes()
}

/// Reads a plan.
pub fn get(store: &Store, id: &str) -> Result<Option<Record>, Error> {
    Ok(store.get(trees::PLANS, id.as_bytes())?)
}

/// Writes a plan and its bucket entry (buffered).
pub fn put(store: &Store, rec: &Record) -> Result<(), Error> {
    store.put(trees::PLANS, rec.plan.id.as_bytes(), rec)?;
    store.put(trees::PLAN_BUCKETS, &bucket_key(&rec.plan.key.bucket, &rec.plan.id), &())?;
    Ok(())
}

/// The plans of a bucket.
pub fn bucket(store: &Store, bucket: &str) -> Result<Vec<Record>, Error> {
    let prefix = Key::new().text(bucket).into_bytes();
    let mut out = Vec::new();
    for k in store.keys(trees::PLAN_BUCKETS, &prefix)? {
        let id = String::from_utf8_lossy(&k[prefix.len()..k.len().saturating_sub(1)]).into_owned();
        if let Some(rec) = get(store, &id)? {
            out.push(rec);
        }
    }
    Ok(out)
}

/// Every plan matching `keep`, in id order, at most `limit`.
pub fn list(store: &Store, limit: usize, mut keep: impl FnMut(&StoredPlan) -> bool) -> Result<Vec<Record>, Error> {
    let mut out = Vec::new();
    store.for_each(trees::PLANS, |_, rec: Record| {
        if keep(&rec.plan) {
            out.push(rec);
        }
        out.len() < limit
    })?;
    Ok(out)
}

/// Removes one plan, its bucket entry and its vector; true when it existed.
pub fn remove(store: &Store, index: Option<&VectorIndex>, id: &str) -> Result<bool, Error> {
    let Some(rec) = get(store, id)? else {
        return Ok(false);
    };
    store.remove(trees::PLANS, id.as_bytes())?;
    store.remove(trees::PLAN_BUCKETS, &bucket_key(&rec.plan.key.bucket, id))?;
    if let (Some(index), Some(v)) = (index, rec.vector) {
        index.remove(SCOPE, v)?;
    }
    Ok(true)
}

/// Evicts plans; returns the ids removed.
pub fn evict(store: &Store, index: Option<&VectorIndex>, what: &Eviction) -> Result<Vec<String>, Error> {
    let ids: Vec<String> = match what {
        Eviction::Plan(id) => vec![id.clone()],
        Eviction::Bucket(b) => bucket(store, b)?.into_iter().map(|r| r.plan.id).collect(),
        Eviction::Version { plan, normaliser, extractor } => {
            if plan.is_none() && normaliser.is_none() && extractor.is_none() {
                return Err(Error::Invalid("name at least one of plan, normaliser or extractor version".into()));
            }
            list(store, usize::MAX, |p| {
                plan.as_ref().is_none_or(|v| *v == p.versions.plan)
                    && normaliser.is_none_or(|v| v == p.versions.normaliser)
                    && extractor.is_none_or(|v| Some(v) == p.versions.extractor)
            })?
            .into_iter()
            .map(|r| r.plan.id)
            .collect()
        }
    };
    let mut removed = Vec::new();
    for id in ids {
        if remove(store, index, &id)? {
            removed.push(id);
        }
    }
    Ok(removed)
}

/// How a reused plan went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The plan worked.
    Success,
    /// The plan failed.
    Failure,
    /// Release the plan from quarantine (it is served again).
    Release,
}

/// Records an outcome: failures demote, `quarantine_after` failures in a row quarantine.
pub fn feedback(
    store: &Store,
    id: &str,
    outcome: Outcome,
    reason: Option<&str>,
    quarantine_after: u32,
) -> Result<StoredPlan, Error> {
    let rec = update(store, id, |rec| {
        let c = &mut rec.plan.counters;
        match outcome {
            Outcome::Success => {
                c.successes += 1;
                c.failure_streak = 0;
            }
            Outcome::Failure => {
                c.failures += 1;
                c.failure_streak += 1;
                if c.failure_streak >= quarantine_after.max(1) {
                    rec.plan.quarantined = Some(format!(
                        "{} failure(s) in a row{}",
                        c.failure_streak,
                        reason.map(|r| format!("; last: {r}")).unwrap_or_default()
                    ));
                }
            }
            Outcome::Release => {
                c.failure_streak = 0;
                rec.plan.quarantined = None;
            }
        }
    })?
    .ok_or_else(|| Error::NotFound(id.to_string()))?;
    Ok(rec.plan)
}

/// Atomically changes a stored plan (counters, quarantine); concurrent changes are all kept.
/// Returns the plan as written, or None when there is no such plan.
pub fn update(store: &Store, id: &str, mut change: impl FnMut(&mut Record)) -> Result<Option<Record>, Error> {
    Ok(store.update(trees::PLANS, id.as_bytes(), |rec: Option<Record>| {
        rec.map(|mut r| {
            change(&mut r);
            r
        })
    })?)
}

/// Ranking factor for a plan's recent failures (1.0 for a plan without failures).
pub fn demotion(plan: &StoredPlan) -> f32 {
    0.85f32.powi(plan.counters.failure_streak as i32)
}
