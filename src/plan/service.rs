//! The plan cache's operations over an `App`: store a template or a trace, look up a task, give
//! feedback, evict. Async because embeddings, the index and flushes are.
//!
//! Exact bucket paths work without an embedding model; embeddings only add neighbours and a
//! better meaning score.

use super::extract::extract;
use super::fill::SlotSource;
pub use super::intake::StoreRequest;
use super::intake::{check_sizes, check_task, redact_template};
use super::key::IntentKey;
use super::library::{self, Record, SCOPE};
use super::normalise::Normalised;
use super::rank::{Judged, judge};
use super::template::{Counters, Provenance, Step, StoredPlan, Versions, now, plan_id};
use super::validate::{RuntimeCaps, StageResult, check_template};
use super::{Error, NORMALISER_VERSION, canon};
use crate::app::App;
use crate::stats;
use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashSet};

/// The result of a store.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Stored {
    /// The plan id (derived from content: storing the same plan again returns the same id).
    pub plan_id: String,
    /// The intent key.
    pub key: IntentKey,
    /// False when the plan already existed.
    pub created: bool,
    /// True when storing it again released it from quarantine.
    pub released: bool,
    /// The template's slots.
    pub slots: Vec<String>,
    /// The extractor's confidence (traces only).
    pub confidence: Option<f32>,
    /// Whether the task embedding was indexed (false without a model).
    pub embedded: bool,
    /// Secrets redacted from the task and the plan before storing.
    pub redactions: u32,
}

/// The result of a lookup.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Lookup {
    /// The served plan, on a hit.
    pub hit: Option<Hit>,
    /// What the task normalised to.
    pub task: Normalised,
    /// Its intent key.
    pub key: IntentKey,
    /// Why nothing was served, on a miss.
    pub reason: Option<String>,
    /// The nearest candidates with their scores and the stage they failed (best first).
    pub candidates: Vec<CandidateReport>,
    /// `embeddings` or why only exact buckets were used.
    pub meaning: String,
}

/// A served plan.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Hit {
    /// Plan id (report outcomes with plan_feedback).
    pub plan_id: String,
    /// Composite score.
    pub score: f32,
    /// The steps with slots filled.
    pub steps: Vec<Step>,
    /// Slot values.
    pub values: BTreeMap<String, Value>,
    /// Where each value came from.
    pub sources: BTreeMap<String, SlotSource>,
    /// Every validation stage.
    pub stages: Vec<StageResult>,
    /// Outputs the plan produces.
    pub outputs: Vec<String>,
    /// Versions.
    pub versions: Versions,
    /// Provenance.
    pub provenance: Provenance,
    /// Counters before this hit.
    pub counters: Counters,
}

/// A candidate that was considered.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CandidateReport {
    /// Plan id.
    pub plan_id: String,
    /// The task it was stored for.
    pub task: String,
    /// Its action and kind.
    pub action: String,
    /// Its primary target kind.
    pub kind: String,
    /// Composite score.
    pub score: f32,
    /// Meaning part.
    pub meaning: f32,
    /// Structure part.
    pub structure: f32,
    /// The gate or stage it failed (`action`, `target_kind`, `quarantined`, a validation stage,
    /// `threshold`); absent for the served plan.
    pub failed: Option<String>,
    /// Why.
    pub detail: Option<String>,
}

/// Normalises a task, refined by the LLM canonicaliser when configured.
pub async fn understand(app: &App, task: &str) -> Normalised {
    canon::refine(app, task, super::normalise::normalise(task)).await
}

/// Stores a plan from a template or a trace.
pub async fn store(app: &App, mut req: StoreRequest) -> Result<Stored, Error> {
    check_sizes(app, &req)?;
    let (task, mut redactions) = crate::results::redactor().redact_str(&req.task);
    req.task = task;
    let n = understand(app, &req.task).await;
    if n.action == "none" {
        return Err(Error::Invalid(format!(
            "refrain cannot tell what the task {:?} asks to do; phrase it with a verb (fix, add, remove, rename, update...)",
            req.task
        )));
    }
    let key = IntentKey::of(&n);
    if let Some(given) = &req.key
        && *given != key.bucket
    {
        return Err(Error::KeyMismatch { given: given.clone(), computed: key.bucket.clone() });
    }
    let (template, extractor, confidence, source) = match (req.template, &req.trace) {
        (Some(t), None) => (t, None, None, req.source.unwrap_or_else(|| "template".into())),
        (None, Some(trace)) => {
            let e = extract(&req.task, trace).map_err(Error::Refused)?;
            (e.template, Some(e.version), Some(e.confidence), req.source.unwrap_or_else(|| "trace".into()))
        }
        _ => {
            return Err(Error::Invalid("give exactly one of `template` or `trace`".into()));
        }
    };
    let (template, n_template) = redact_template(template)?;
    redactions += n_template;
    check_template(&template).map_err(Error::Invalid)?;
    let id = plan_id(&key.bucket, &template);
    let slots = template.slots.iter().map(|s| s.name.clone()).collect();
    if redactions > 0 {
        stats::bump(&app.store, "plans", "redactions", None, u64::from(redactions))?;
    }
    if let Some(mut rec) = library::get(&app.store, &id)? {
        let released = rec.plan.quarantined.take().is_some();
        if released {
            rec.plan.counters.failure_streak = 0;
            library::put(&app.store, &rec)?;
        }
        if released || redactions > 0 {
            app.store.flush_async().await?;
        }
        let embedded = rec.vector.is_some();
        return Ok(Stored { plan_id: id, key, created: false, released, slots, confidence, embedded, redactions });
    }
    let vector = match app.embed.embed_one(&req.task).await {
        Ok(v) => Some(app.index().await?.insert(SCOPE, id.as_bytes(), v)?),
        Err(e) => {
            tracing::debug!(error = %e, "plan stored without a task embedding");
            None
        }
    };
    let plan = StoredPlan {
        id: id.clone(),
        key: key.clone(),
        versions: Versions { plan: template.version.clone(), normaliser: NORMALISER_VERSION, extractor },
        template,
        skeleton: n.skeleton,
        provenance: Provenance { source, task: req.task, confidence },
        stored_at: now(),
        last_hit_at: None,
        counters: Counters::default(),
        quarantined: None,
    };
    library::put(&app.store, &Record { plan, vector })?;
    stats::bump(&app.store, "plans", "stored", None, 1)?;
    app.store.flush_async().await?;
    Ok(Stored {
        plan_id: id,
        key,
        created: true,
        released: false,
        slots,
        confidence,
        embedded: vector.is_some(),
        redactions,
    })
}

/// Looks up a plan for a task.
pub async fn lookup(app: &App, task: &str, context: &Map<String, Value>, caps: &RuntimeCaps) -> Result<Lookup, Error> {
    lookup_with(app, task, context, caps, false).await
}

/// Looks up like `lookup` but writes nothing: no hit/miss counters, no hit recorded on the plan,
/// and the local normaliser only (no canonicaliser call, whose answers are cached). For reports
/// that ask what past prompts would have hit.
pub async fn lookup_dry(
    app: &App,
    task: &str,
    context: &Map<String, Value>,
    caps: &RuntimeCaps,
) -> Result<Lookup, Error> {
    lookup_with(app, task, context, caps, true).await
}

async fn lookup_with(
    app: &App,
    task: &str,
    context: &Map<String, Value>,
    caps: &RuntimeCaps,
    dry: bool,
) -> Result<Lookup, Error> {
    check_task(app, task)?;
    let cfg = &app.config.plans;
    // Redacted as `store` does, so both see the same text (and no secret reaches a canonicaliser).
    let (clean, _) = crate::results::redactor().redact_str(task);
    let task = clean.as_str();
    let n = if dry { super::normalise::normalise(task) } else { understand(app, task).await };
    let key = IntentKey::of(&n);
    let mut records: Vec<Record> = Vec::new();
    let mut seen = HashSet::new();
    for b in key.lookup_buckets() {
        for rec in library::bucket(&app.store, &b)? {
            if seen.insert(rec.plan.id.clone()) {
                records.push(rec);
            }
        }
    }
    let mut cosines: BTreeMap<String, f32> = BTreeMap::new();
    // Exactly one plan of the bucket passes every gate: it is the hit whatever the embeddings
    // say, so skip the embedding (the fast path). Otherwise rank with meaning and neighbours.
    let single = records.len() == 1
        && records
            .iter()
            .all(|r| judge(r.plan.clone(), &n, &key, context, caps, None, cfg.hit_threshold).failed.is_none());
    let meaning = match if single {
        Err("one plan of the bucket passes, no ranking needed".to_string())
    } else {
        neighbours(app, task, cfg.neighbours + records.len()).await
    } {
        Ok(hits) => {
            let mut extra = 0;
            for (id, score) in hits {
                if !seen.contains(&id)
                    && extra < cfg.neighbours
                    && let Some(rec) = library::get(&app.store, &id)?
                {
                    seen.insert(id.clone());
                    records.push(rec);
                    extra += 1;
                }
                cosines.entry(id).or_insert(score);
            }
            "embeddings".to_string()
        }
        Err(why) => format!("wording only ({why})"),
    };
    let mut judged: Vec<Judged> = records
        .into_iter()
        .map(|r| {
            let cos = cosines.get(&r.plan.id).copied();
            judge(r.plan, &n, &key, context, caps, cos, cfg.hit_threshold)
        })
        .collect();
    judged.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.plan.id.cmp(&b.plan.id)));
    let winner = judged.iter().position(|j| j.failed.is_none());
    let candidates: Vec<CandidateReport> = judged.iter().take(cfg.report_candidates.max(1)).map(report).collect();
    let Some(i) = winner.filter(|_| n.action != "none") else {
        if !dry {
            stats::bump(&app.store, "plans", "misses", None, 1)?;
        }
        let reason = miss_reason(&n, &key, &judged);
        return Ok(Lookup { hit: None, task: n, key, reason: Some(reason), candidates, meaning });
    };
    let j = judged.swap_remove(i);
    let hit = served(app, j, dry)?;
    if !dry {
        stats::bump(&app.store, "plans", "hits", None, 1)?;
    }
    Ok(Lookup { hit: Some(hit), task: n, key, reason: None, candidates, meaning })
}

async fn neighbours(app: &App, task: &str, k: usize) -> Result<Vec<(String, f32)>, String> {
    if !matches!(app.embed.state(), crate::embed::ModelState::Ready(_)) {
        // Do not hold a lookup hostage to a model still loading: exact buckets answer now.
        return Err(match app.embed.state() {
            crate::embed::ModelState::Unavailable(r) => format!("no embedding model: {r}"),
            _ => "the embedding model is still loading".to_string(),
        });
    }
    let v = app.embed.embed_one(task).await.map_err(|e| e.to_string())?;
    let index = app.index().await.map_err(|e| e.to_string())?;
    let hits = crate::budget::spawn_blocking(move || index.search(SCOPE, &v, k, 0.0))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())?;
    Ok(hits.into_iter().map(|h| (String::from_utf8_lossy(&h.target).into_owned(), h.score)).collect())
}

fn served(app: &App, j: Judged, dry: bool) -> Result<Hit, Error> {
    let filled = j.filled.ok_or_else(|| Error::Invalid("served plan was not filled".into()))?;
    let counters = j.plan.counters.clone();
    // A full store still serves plans; their hit counters wait until there is room again.
    if !dry && app.store.check_room().is_ok() {
        let at = now();
        library::update(&app.store, &j.plan.id, |rec| {
            rec.plan.counters.hits += 1;
            rec.plan.last_hit_at = Some(at);
        })?;
    }
    Ok(Hit {
        plan_id: j.plan.id,
        score: j.score,
        steps: filled.steps,
        values: filled.values,
        sources: filled.sources,
        stages: j.stages,
        outputs: j.plan.template.outputs.iter().map(|o| o.name.clone()).collect(),
        versions: j.plan.versions,
        provenance: j.plan.provenance,
        counters,
    })
}

fn report(j: &Judged) -> CandidateReport {
    CandidateReport {
        plan_id: j.plan.id.clone(),
        task: j.plan.provenance.task.clone(),
        action: j.plan.key.action.clone(),
        kind: j.plan.key.kind.clone(),
        score: j.score,
        meaning: j.meaning,
        structure: j.structure,
        failed: j.failed.as_ref().map(|f| f.0.clone()),
        detail: j.failed.as_ref().map(|f| f.1.clone()),
    }
}

fn miss_reason(n: &Normalised, key: &IntentKey, judged: &[Judged]) -> String {
    if n.action == "none" {
        return "refrain cannot tell what this task asks to do (no known action verb), so no plan is served".into();
    }
    match judged.first() {
        None => format!("no plan is stored for tasks that {} a {}", key.action, key.kind),
        Some(best) => {
            let (stage, detail) = best.failed.clone().unwrap_or_default();
            format!(
                "{} candidate(s), none passed; the best ({}) failed `{stage}`: {detail}",
                judged.len(),
                best.plan.id
            )
        }
    }
}

/// Records feedback and flushes.
pub async fn feedback(
    app: &App,
    id: &str,
    outcome: library::Outcome,
    reason: Option<&str>,
) -> Result<StoredPlan, Error> {
    let plan = library::feedback(&app.store, id, outcome, reason, app.config.plans.quarantine_after)?;
    let counter = match outcome {
        library::Outcome::Success => "successes",
        library::Outcome::Failure => "failures",
        library::Outcome::Release => "releases",
    };
    stats::bump(&app.store, "plans", counter, None, 1)?;
    if plan.quarantined.is_some() && outcome == library::Outcome::Failure {
        stats::bump(&app.store, "plans", "quarantined", None, 1)?;
    }
    app.store.flush_async().await?;
    Ok(plan)
}

/// Evicts plans and flushes; returns the ids removed.
pub async fn evict(app: &App, what: &library::Eviction) -> Result<Vec<String>, Error> {
    let index = app.index().await.ok();
    let removed = library::evict(&app.store, index.as_ref(), what)?;
    app.store.flush_async().await?;
    Ok(removed)
}
