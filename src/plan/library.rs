//! The plan library in the store: plans by id (`PLANS`), bucket membership with each plan's
//! compact head as the row's value (`PLAN_BUCKETS`, so a lookup reads a bucket's heads in one
//! range scan; `heads`), a copy of each head by id (`PLAN_HEADS`), exact-text entries
//! (`PLAN_TEXTS`), task vectors (index scope `plans`), counters (hit stamps batched by `hits`),
//! feedback bias, quarantine and eviction.
//!
//! Synchronous store calls only; callers flush before acknowledging a write.

use super::Error;
use super::head::Head;
use super::heads::{self, bucket_key};
use super::hits;
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

pub use super::template::Record;

/// Shortest id prefix shown to agents (and accepted back).
pub const SHORT_ID: usize = 8;

/// The full id of a plan from its id or a unique prefix of at least `SHORT_ID` characters (what
/// suggestions show, to cost fewer tokens); None when nothing, or more than one plan, matches.
pub fn resolve(store: &Store, id: &str) -> Result<Option<String>, Error> {
    if store.contains(trees::PLANS, id.as_bytes())? {
        return Ok(Some(id.to_string()));
    }
    if id.len() < SHORT_ID || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Ok(None);
    }
    let mut found = Vec::new();
    store.scan_bytes(trees::PLANS, id.as_bytes(), |k, _| {
        found.push(String::from_utf8_lossy(k).into_owned());
        found.len() < 2
    })?;
    Ok(if found.len() == 1 { found.pop() } else { None })
}

/// Reads a plan (with the hits held in memory counted).
pub fn get(store: &Store, id: &str) -> Result<Option<Record>, Error> {
    let mut rec: Option<Record> = store.get(trees::PLANS, id.as_bytes())?;
    if let Some(r) = rec.as_mut() {
        hits::overlay(store, r);
    }
    Ok(rec)
}

/// Writes a plan, its head in its bucket row, its exact-text entries (buffered). The record
/// replaces the stored one with the counters it carries: hits held in memory for it (which `get`
/// had added) are dropped, so they are not counted twice.
pub fn put(store: &Store, rec: &Record) -> Result<(), Error> {
    hits::forget(store, &rec.plan.id);
    store.put(trees::PLANS, rec.plan.id.as_bytes(), rec)?;
    heads::write(store, &Head::of(&rec.plan, rec.vector))?;
    for h in text_hashes(&rec.plan.provenance.task) {
        store.put(trees::PLAN_TEXTS, &bucket_key(&h, &rec.plan.id), &())?;
    }
    super::terms::write(store, &rec.plan.id, &rec.plan.provenance.task)?;
    Ok(())
}

/// Files many new plans at once (imports, benchmark preloads), each with its task vector,
/// exactly as `plan_store` files a new plan one at a time (record, head rows, exact-text rows,
/// vector, the `stored` counter), written as one store batch per call. Each plan's `vector` is
/// set here. Safe to call from several threads at once, each with its own chunk; the caller
/// flushes. Of plans sharing an id the last is kept. Returns how many plans were filed.
pub fn import(store: &Store, index: &VectorIndex, items: Vec<(StoredPlan, Option<Vec<f32>>)>) -> Result<usize, Error> {
    let mut kept = crate::store::keep_last(items, |(p, _)| p.id.clone());
    // The vectors move to the index (the plans keep their ids, set below), not copied.
    let (at, vectors): (Vec<usize>, Vec<crate::index::Targeted>) = kept
        .iter_mut()
        .enumerate()
        .filter_map(|(i, (p, v))| v.take().map(|v| (i, (p.id.as_bytes().to_vec(), v))))
        .unzip();
    let mut ids: Vec<Option<u64>> = vec![None; kept.len()];
    if !vectors.is_empty() {
        for (i, id) in at.into_iter().zip(index.insert_many(SCOPE, vectors)?) {
            ids[i] = Some(id);
        }
    }
    let mut batch = crate::store::Batch::new();
    let n = kept.len();
    let words: Vec<(String, String)> = kept.iter().map(|(p, _)| (p.id.clone(), p.provenance.task.clone())).collect();
    for ((plan, _), vector) in kept.into_iter().zip(ids) {
        hits::forget(store, &plan.id);
        let rec = Record { plan, vector };
        batch.put(trees::PLANS, rec.plan.id.as_bytes(), &rec)?;
        heads::write_into(&mut batch, &Head::of(&rec.plan, rec.vector));
        for h in text_hashes(&rec.plan.provenance.task) {
            batch.put(trees::PLAN_TEXTS, &bucket_key(&h, &rec.plan.id), &())?;
        }
    }
    store.apply(batch)?;
    let words: Vec<(&str, &str)> = words.iter().map(|(i, t)| (i.as_str(), t.as_str())).collect();
    super::terms::write_many(store, &words)?;
    crate::stats::bump(store, "plans", "stored", None, n as u64)?;
    Ok(n)
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

/// Plans stored for a task with the same text, and for the same masked text.
#[derive(Debug, Default)]
pub struct SameText {
    /// Plans stored for this very text (case, spacing and end punctuation aside).
    pub own: Vec<String>,
    /// Other plans stored for a task with the same masked text.
    pub masked: Vec<String>,
}

/// Plans stored for a task with the same text, or the same masked text: at most `limit` of each,
/// in id order (a masked text thousands of plans share must not cost every lookup thousands of
/// reads).
pub fn same_text(store: &Store, task: &str, limit: usize) -> Result<SameText, Error> {
    let [text, masked] = text_hashes(task);
    let ids = |h: &str| -> Result<Vec<String>, Error> {
        let prefix = Key::new().text(h).into_bytes();
        let mut out = Vec::new();
        store.scan_bytes(trees::PLAN_TEXTS, &prefix, |k, _| {
            out.push(String::from_utf8_lossy(&k[prefix.len()..k.len().saturating_sub(1)]).into_owned());
            out.len() < limit.max(1)
        })?;
        Ok(out)
    };
    let own = ids(&text)?;
    let masked = ids(&masked)?.into_iter().filter(|id| !own.contains(id)).collect();
    Ok(SameText { own, masked })
}

/// A plan's head (see `heads::by_id`).
pub fn head(store: &Store, id: &str) -> Result<Option<Head>, Error> {
    heads::by_id(store, id)
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
    store.for_each(trees::PLANS, |_, mut rec: Record| {
        hits::overlay(store, &mut rec);
        if keep(&rec.plan) {
            out.push(rec);
        }
        out.len() < limit
    })?;
    Ok(out)
}

/// Files every stored plan under its words again (`refrain index rebuild`): stores written before
/// the word index existed find their plans by words from then on. Returns the plans filed.
pub fn refile_terms(store: &Store) -> Result<usize, Error> {
    store.clear(trees::PLAN_TERMS)?;
    let plans: Vec<(String, String)> =
        list(store, usize::MAX, |_| true)?.into_iter().map(|r| (r.plan.id, r.plan.provenance.task)).collect();
    let words: Vec<(&str, &str)> = plans.iter().map(|(i, t)| (i.as_str(), t.as_str())).collect();
    super::terms::write_many(store, &words)?;
    Ok(plans.len())
}

/// Removes one plan, its bucket entry and its vector; true when it existed.
pub fn remove(store: &Store, index: Option<&VectorIndex>, id: &str) -> Result<bool, Error> {
    let Some(rec) = get(store, id)? else {
        return Ok(false);
    };
    hits::forget(store, id);
    store.remove(trees::PLANS, id.as_bytes())?;
    store.remove(trees::PLAN_HEADS, id.as_bytes())?;
    store.remove(trees::PLAN_BUCKETS, &bucket_key(&rec.plan.key.bucket, id))?;
    for h in text_hashes(&rec.plan.provenance.task) {
        store.remove(trees::PLAN_TEXTS, &bucket_key(&h, id))?;
    }
    super::terms::remove(store, id, &rec.plan.provenance.task)?;
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
    /// The agent accepted the plan from a suggestion (it judged the match, not refrain): the
    /// outcome is counted, but the plan's threshold (bias) and its failure streak toward
    /// quarantine are left as they are.
    pub accepted: bool,
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
            Outcome::Success => c.own_successes += 1,
            Outcome::Failure => c.own_failures += 1,
            Outcome::Release => {}
        }
        match outcome {
            Outcome::Success if policy.accepted => {
                c.successes += 1;
                c.failure_streak = 0;
            }
            Outcome::Success => {
                c.successes += 1;
                c.failure_streak = 0;
                c.bias = (c.bias / 2.0).max(0.0);
            }
            Outcome::Failure if policy.accepted => c.failures += 1,
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
    heads::write(store, &Head::of(&rec.plan, rec.vector))?;
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
    let mut rec = store.update(trees::PLANS, id.as_bytes(), |rec: Option<Record>| {
        rec.map(|mut r| {
            change(&mut r);
            r
        })
    })?;
    if let Some(r) = rec.as_mut() {
        hits::overlay(store, r);
    }
    Ok(rec)
}
