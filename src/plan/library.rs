//! The plan library in the store: plans by id (`PLANS`), their compact heads (`PLAN_HEADS`),
//! bucket membership (`PLAN_BUCKETS`), exact-text entries (`PLAN_TEXTS`), task vectors (index
//! scope `plans`), counters, feedback bias, quarantine and eviction.
//!
//! Synchronous store calls only; callers flush before acknowledging a write.

use super::Error;
use super::head::{HEAD_VERSION, Head};
use super::mask;
use super::template::StoredPlan;
use crate::index::VectorIndex;
use crate::store::{Key, Store, trees};
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

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

/// Writes a plan, its head, its bucket entry and its exact-text entries (buffered).
pub fn put(store: &Store, rec: &Record) -> Result<(), Error> {
    store.put(trees::PLANS, rec.plan.id.as_bytes(), rec)?;
    store.put(trees::PLAN_HEADS, rec.plan.id.as_bytes(), &Head::of(&rec.plan, rec.vector))?;
    store.put(trees::PLAN_BUCKETS, &bucket_key(&rec.plan.key.bucket, &rec.plan.id), &())?;
    for h in text_hashes(&rec.plan.provenance.task) {
        store.put(trees::PLAN_TEXTS, &bucket_key(&h, &rec.plan.id), &())?;
    }
    Ok(())
}

/// The exact-text keys of a task: its text as written and its masked text, each in canonical
/// form (case, spacing and end punctuation do not matter).
pub fn text_hashes(task: &str) -> [String; 2] {
    let hash = |tag: &str, s: &str| {
        let mut h = Sha256::new();
        h.update(format!("{tag}\0{s}").as_bytes());
        hex::encode(&h.finalize()[..16])
    };
    [hash("text", &mask::canonical(task)), hash("masked", &mask::canonical(&mask::mask(task).text))]
}

/// Plans stored for a task with the same text, or the same masked text.
pub fn same_text(store: &Store, task: &str) -> Result<Vec<String>, Error> {
    let mut out = Vec::new();
    for h in text_hashes(task) {
        let prefix = Key::new().text(&h).into_bytes();
        for k in store.keys(trees::PLAN_TEXTS, &prefix)? {
            let id = String::from_utf8_lossy(&k[prefix.len()..k.len().saturating_sub(1)]).into_owned();
            if !out.contains(&id) {
                out.push(id);
            }
        }
    }
    Ok(out)
}

/// The ids of a bucket's plans (at most `limit`).
pub fn bucket_ids(store: &Store, bucket: &str, limit: usize) -> Result<Vec<String>, Error> {
    let prefix = Key::new().text(bucket).into_bytes();
    Ok(store
        .keys(trees::PLAN_BUCKETS, &prefix)?
        .into_iter()
        .take(limit)
        .map(|k| String::from_utf8_lossy(&k[prefix.len()..k.len().saturating_sub(1)]).into_owned())
        .collect())
}

/// A plan's head; rebuilt from its record (and written back when there is room) when missing or
/// built by another version.
pub fn head(store: &Store, id: &str) -> Result<Option<Head>, Error> {
    if let Some(h) = store.get::<Head>(trees::PLAN_HEADS, id.as_bytes()).ok().flatten()
        && h.version == HEAD_VERSION
    {
        return Ok(Some(h));
    }
    let Some(rec) = get(store, id)? else { return Ok(None) };
    let h = Head::of(&rec.plan, rec.vector);
    if store.check_room().is_ok() {
        store.put(trees::PLAN_HEADS, id.as_bytes(), &h)?;
    }
    Ok(Some(h))
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
    store.remove(trees::PLAN_HEADS, id.as_bytes())?;
    store.remove(trees::PLAN_BUCKETS, &bucket_key(&rec.plan.key.bucket, id))?;
    for h in text_hashes(&rec.plan.provenance.task) {
        store.remove(trees::PLAN_TEXTS, &bucket_key(&h, id))?;
    }
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

/// How feedback moves a plan: the threshold raise per failure, and the failures in a row that
/// quarantine it.
#[derive(Debug, Clone, Copy)]
pub struct FeedbackPolicy {
    /// Added to the plan's verifier threshold by each failure (halved back by a success).
    pub failure_bias: f32,
    /// Failures in a row that quarantine the plan.
    pub quarantine_after: u32,
}

/// Highest feedback bias: beyond it no cosine or score could pass anyway.
pub const MAX_BIAS: f32 = 0.5;

/// Records an outcome: a failure raises the plan's own threshold, `quarantine_after` failures in
/// a row quarantine it; a success lowers the raise; a release clears both.
pub fn feedback(
    store: &Store,
    id: &str,
    outcome: Outcome,
    reason: Option<&str>,
    policy: FeedbackPolicy,
) -> Result<StoredPlan, Error> {
    let quarantine_after = policy.quarantine_after;
    let rec = update(store, id, |rec| {
        let c = &mut rec.plan.counters;
        match outcome {
            Outcome::Success => {
                c.successes += 1;
                c.failure_streak = 0;
                c.bias = (c.bias / 2.0).max(0.0);
            }
            Outcome::Failure => {
                c.failures += 1;
                c.failure_streak += 1;
                c.bias = (c.bias + policy.failure_bias.max(0.0)).min(MAX_BIAS);
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
                c.bias = 0.0;
                rec.plan.quarantined = None;
            }
        }
    })?
    .ok_or_else(|| Error::NotFound(id.to_string()))?;
    store.put(trees::PLAN_HEADS, id.as_bytes(), &Head::of(&rec.plan, rec.vector))?;
    Ok(rec.plan)
}

/// What the team library knows of a local plan (kept in the store's `team_known` tree by the
/// team sync; read here so that storing a plan again keeps the team's quarantine).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TeamKnown {
    /// A publish is queued.
    Queued,
    /// The team library has it.
    Shared,
}

/// True when the team library has this plan (its quarantine is the team's, not this member's).
pub fn team_shared(store: &Store, id: &str) -> Result<bool, Error> {
    Ok(store.get::<TeamKnown>(trees::TEAM_KNOWN, id.as_bytes())? == Some(TeamKnown::Shared))
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
