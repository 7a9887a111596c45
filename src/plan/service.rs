//! The plan cache's operations over an `App`: store a template or a trace, give feedback, evict
//! (lookup is in `lookup`). Async because embeddings, the index and flushes are.
//!
//! Any task can be stored: the normaliser's intent key only files the plan in a bucket. The
//! embedding indexed is the masked task's, so neighbours are tasks of the same shape.

use super::extract::extract;
pub use super::intake::StoreRequest;
use super::intake::{check_sizes, redact_template};
use super::key::IntentKey;
use super::library::{self, Record, SCOPE};
use super::mask;
use super::normalise::Normalised;
use super::template::{PlanTemplate, Provenance, StoredPlan, local_author, now, plan_id};
use super::validate::check_template;
use super::{Error, canon};
use crate::app::App;
use crate::stats;
use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;
use std::collections::BTreeMap;

/// The result of a store.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Stored {
    /// The plan id (derived from content: storing the same plan again returns the same id).
    pub plan_id: String,
    /// The intent key (the bucket the plan is filed in).
    pub key: IntentKey,
    /// The task with its values masked, as lookups compare it.
    pub masked: String,
    /// False when the plan already existed.
    pub created: bool,
    /// True when storing it again released it from quarantine.
    pub released: bool,
    /// Why it is still quarantined: a plan the team library holds is quarantined for every member,
    /// and storing it again does not release it (`plan_feedback` with `release` does).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quarantined: Option<String>,
    /// The template's slots.
    pub slots: Vec<String>,
    /// The value each slot has in the stored task, as lookups will read it. A slot without an
    /// `example` takes the task's values of its type in order: when one is wrong, store the plan
    /// again with that slot's `example` (its value in this task).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub values: BTreeMap<String, String>,
    /// The extractor's confidence (traces only).
    pub confidence: Option<f32>,
    /// Whether the task embedding was indexed (false without a model).
    pub embedded: bool,
    /// Secrets redacted from the task and the plan before storing.
    pub redactions: u32,
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
    if req.task.trim().is_empty() {
        return Err(Error::Invalid("`task` is empty: pass the task the plan is for".into()));
    }
    if let Some(why) = super::standalone::refusal(&req.task) {
        return Err(Error::Invalid(why));
    }
    let n = understand(app, &req.task).await;
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
    // The same steps stored for differently worded tasks are different plans (each is found by
    // its own wording); the same task with other values is the same plan.
    let masked = mask::mask_known(&req.task, &examples(&template)).text;
    let id = plan_id(&format!("{}\0{}", key.bucket, mask::canonical(&masked)), &template);
    let slots = template.slots.iter().map(|s| s.name.clone()).collect();
    if redactions > 0 {
        stats::bump(&app.store, "plans", "redactions", None, u64::from(redactions))?;
    }
    if let Some(mut rec) = library::get(&app.store, &id)? {
        // The team's quarantine is everyone's: only an explicit release lifts it.
        let held = match &rec.plan.quarantined {
            Some(q) if library::team_shared(&app.store, &id)? => Some(q.clone()),
            _ => None,
        };
        let released = held.is_none() && rec.plan.quarantined.take().is_some();
        if released {
            rec.plan.counters.failure_streak = 0;
            rec.plan.counters.bias = 0.0;
            library::put(&app.store, &rec)?;
        }
        if released || redactions > 0 {
            app.store.flush_async().await?;
        }
        let embedded = rec.vector.is_some();
        return Ok(Stored {
            plan_id: id,
            key,
            masked,
            created: false,
            released,
            quarantined: held,
            values: slot_values(&rec.plan),
            slots,
            confidence,
            embedded,
            redactions,
        });
    }
    let vector = match app.embed.embed_one(&masked).await {
        Ok(v) => Some(app.index().await?.insert(SCOPE, id.as_bytes(), v)?),
        Err(e) => {
            tracing::debug!(error = %e, "plan stored without a task embedding");
            None
        }
    };
    let provenance = Provenance { confidence, by: local_author(), ..Provenance::new(source, req.task) };
    let mut plan = StoredPlan::fresh(id.clone(), key.clone(), template, n.skeleton, provenance);
    plan.versions.extractor = extractor;
    plan.stored_at = now();
    let values = slot_values(&plan);
    library::put(&app.store, &Record { plan, vector })?;
    stats::bump(&app.store, "plans", "stored", None, 1)?;
    app.store.flush_async().await?;
    Ok(Stored {
        plan_id: id,
        key,
        masked,
        created: true,
        released: false,
        quarantined: None,
        values,
        slots,
        confidence,
        embedded: vector.is_some(),
        redactions,
    })
}

pub use super::accept::{Accepted, Unfilled, accept};
pub use super::lookup::{lookup, lookup_dry, lookup_explained};
pub use super::report::{CandidateReport, Hit, Lookup, Suggestion, VerifierReport};

/// Records feedback and flushes.
pub async fn feedback(
    app: &App,
    id: &str,
    outcome: library::Outcome,
    reason: Option<&str>,
    accepted: bool,
) -> Result<StoredPlan, Error> {
    let cfg = &app.config.plans;
    let policy =
        library::FeedbackPolicy { failure_bias: cfg.failure_bias, quarantine_after: cfg.quarantine_after, accepted };
    let plan = library::feedback(&app.store, id, outcome, reason, policy)?;
    // A success makes a phrasing the agent took this plan for an alias (the `accepted` flag is
    // the agent's word; a fill refrain handed out for this plan within the day is the same
    // evidence when the agent forgot it). A failure takes its aliases back.
    if outcome == library::Outcome::Success && super::alias::promote(&app.store, id)?.is_some() {
        stats::bump(&app.store, "plans", "aliases", None, 1)?;
    }
    if outcome == library::Outcome::Failure {
        super::alias::forget(&app.store, id)?;
    }
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

/// The value each slot has in the stored task, as its head links it.
fn slot_values(plan: &StoredPlan) -> BTreeMap<String, String> {
    let head = super::head::Head::of(plan, None);
    head.slots.into_iter().filter_map(|s| Some((s.name, s.example?))).collect()
}

/// The slot values the stored task said (they are masked in it as values).
fn examples(t: &PlanTemplate) -> Vec<String> {
    t.slots.iter().filter_map(|s| s.example.clone()).collect()
}

/// Evicts plans and flushes; returns the ids removed.
pub async fn evict(app: &App, what: &library::Eviction) -> Result<Vec<String>, Error> {
    let index = app.index().await.ok();
    let removed = library::evict(&app.store, index.as_ref(), what)?;
    app.store.flush_async().await?;
    Ok(removed)
}
